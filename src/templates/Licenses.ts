// License templates: the exact SPDX texts shipped by the `spdx-license-list` package (never typed
// by hand), for a curated list of common licenses keyed by SPDX id as Forgejo keys them. Texts are
// read from the package on first use and kept; only the curated ones are ever loaded.
import { packageRequire as require } from "../lib/PackageRoot.ts"

/** Forgejo's default `[repository] PREFERRED_LICENSES` come first; the rest alphabetically. */
export const licenseKeys: ReadonlyArray<string> = [
  "Apache-2.0",
  "MIT",
  "0BSD",
  "AGPL-3.0-only",
  "AGPL-3.0-or-later",
  "BSD-2-Clause",
  "BSD-3-Clause",
  "BSL-1.0",
  "CC0-1.0",
  "EUPL-1.2",
  "GPL-2.0-only",
  "GPL-2.0-or-later",
  "GPL-3.0-only",
  "GPL-3.0-or-later",
  "ISC",
  "LGPL-2.1-only",
  "LGPL-2.1-or-later",
  "LGPL-3.0-only",
  "LGPL-3.0-or-later",
  "MPL-2.0",
  "Unlicense",
  "Zlib"
]

export interface License {
  /** SPDX id, e.g. "MIT". */
  readonly key: string
  /** SPDX full name, e.g. "MIT License". */
  readonly name: string
  /** The license's own home page. */
  readonly homepage: string
  /** The SPDX text, ending with a newline. */
  readonly text: string
}

interface SpdxEntry {
  readonly name: string
  readonly url: string
  readonly licenseText: string
}

const cache = new Map<string, License>()

/** The license with this exact SPDX key (one of `licenseKeys`). */
export const loadLicense = (key: string): License => {
  const hit = cache.get(key)
  if (hit !== undefined) return hit
  if (!licenseKeys.includes(key)) throw new Error(`not a curated license: ${key}`)
  const entry = require(`spdx-license-list/licenses/${key}.json`) as SpdxEntry
  const text = entry.licenseText.endsWith("\n") ? entry.licenseText : `${entry.licenseText}\n`
  const license: License = { key, name: entry.name, homepage: entry.url, text }
  cache.set(key, license)
  return license
}

export interface LicenseValues {
  readonly year: number
  readonly owner: string
  readonly repoName: string
}

// Placeholders of the curated texts (checked against each text), replaced when a repository is
// initialised, as Forgejo fills them. Year, owner and program name only: Hearth has no e-mail
// address to put in a license, so e-mail placeholders are dropped rather than invented.
const commonPlaceholders = (v: LicenseValues): ReadonlyArray<readonly [string, string]> => [
  ["<year>", String(v.year)],
  ["[yyyy]", String(v.year)],
  ["<copyright holders>", v.owner],
  ["<owner>", v.owner],
  ["[name of copyright owner]", v.owner],
  ["<name of author>", v.owner],
  ["<one line to give the program's name and a brief idea of what it does.>", v.repoName],
  ["<program>", v.repoName]
]

// Texts whose copyright line is an example rather than a bracketed placeholder. The whole line
// is replaced, so words like "AUTHOR" elsewhere in the text are left alone.
const copyrightLines: Readonly<Record<string, (v: LicenseValues) => ReadonlyArray<readonly [string, string]>>> = {
  "0BSD": (v) => [["Copyright (C) YEAR by AUTHOR EMAIL", `Copyright (C) ${v.year} by ${v.owner}`]],
  ISC: (v) => [
    [
      'Copyright (c) 2004-2010 by Internet Systems Consortium, Inc. ("ISC")\n' +
        "Copyright (c) 1995-2003 by Internet Software Consortium",
      `Copyright (c) ${v.year} ${v.owner}`
    ]
  ]
}

/** The license text with its year, owner and program-name placeholders filled in. */
export const fillLicense = (license: License, values: LicenseValues): string => {
  const rules = [...(copyrightLines[license.key]?.(values) ?? []), ...commonPlaceholders(values)]
  // A replacer function, so "$" in a value is never read as a replacement pattern.
  return rules.reduce((text, [placeholder, value]) => text.replaceAll(placeholder, () => value), license.text)
}

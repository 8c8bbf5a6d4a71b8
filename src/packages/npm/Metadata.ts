// The documents npm reads (npm's registry API, docs/responses/package-metadata.md; Forgejo's
// routers/api/packages/npm/api.go): a package's "packument" in full (`npm view`, `npm unpublish`)
// and abbreviated (`Accept: application/vnd.npm.install-v1+json`, what `npm install` asks for),
// and the objects of a search. Versions are stored with their manifest as published (without the
// registry's own fields); `dist` is written here from the stored tarball's digests.
import { compareSemver, parseSemver } from "../../lib/Semver.ts"

export const ABBREVIATED_TYPE = "application/vnd.npm.install-v1+json"

/** A stored version with its tarball. */
export interface VersionEntry {
  readonly version: string
  readonly createdAt: Date
  readonly metadataJson: string
  readonly fileName: string
  readonly sha1: string
  readonly sha512: string
  readonly tags: ReadonlyArray<string>
}

/** What a version's `metadata_json` holds. */
export interface StoredMetadata {
  readonly manifest: Record<string, unknown>
  readonly readme?: string | undefined
}

// The fields of an abbreviated version (npm's "abbreviated version object").
const ABBREVIATED_FIELDS = [
  "name",
  "version",
  "deprecated",
  "dependencies",
  "optionalDependencies",
  "devDependencies",
  "bundleDependencies",
  "bundledDependencies",
  "peerDependencies",
  "peerDependenciesMeta",
  "bin",
  "directories",
  "engines",
  "cpu",
  "os",
  "libc",
  "funding",
  "license",
  "_hasShrinkwrap"
] as const

const INSTALL_SCRIPTS = ["preinstall", "install", "postinstall"]

const parseStored = (json: string): StoredMetadata => {
  try {
    const parsed = JSON.parse(json) as StoredMetadata
    return typeof parsed === "object" && parsed !== null && typeof parsed.manifest === "object"
      ? parsed
      : { manifest: {} }
  } catch {
    return { manifest: {} }
  }
}

const hasInstallScript = (manifest: Record<string, unknown>): boolean => {
  const scripts = manifest.scripts
  return typeof scripts === "object" && scripts !== null && INSTALL_SCRIPTS.some((s) => s in (scripts as object))
}

/** `dist` of a version: the tarball's URL and digests (sha512 as SRI, sha1 as hex). */
const distOf = (registry: string, name: string, entry: VersionEntry) => ({
  integrity: `sha512-${Buffer.from(entry.sha512, "hex").toString("base64")}`,
  shasum: entry.sha1,
  tarball: tarballUrl(registry, name, entry.fileName)
})

/** A path segment, escaped as npm escapes it (`@` of a scope kept). */
const segment = (text: string) => encodeURIComponent(text).replace(/^%40/, "@")

/** `<registry>/<name>/-/<file>`, npm's own layout (a scope's `/` stays a path separator). */
export const tarballUrl = (registry: string, name: string, fileName: string): string =>
  `${registry}/${name.split("/").map(segment).join("/")}/-/${segment(fileName)}`

export interface Packument {
  readonly full: Uint8Array
  readonly abbreviated: Uint8Array
  readonly distTags: Readonly<Record<string, string>>
  /** The versions, lowest first. */
  readonly versions: ReadonlyArray<string>
  /** The version `latest` names, with its manifest (for a search result). */
  readonly latest: { readonly version: string; readonly manifest: Record<string, unknown>; readonly date: Date }
}

/**
 * Builds both documents of a package with at least one version. `latest` is the tagged version,
 * or when no version carries the tag (it was removed, or its version deleted) the highest release
 * (else the highest pre-release): yarn and pnpm fail without one (Forgejo does the same).
 */
export const buildPackument = (
  registry: string,
  ownerName: string,
  name: string,
  rev: string,
  entries: ReadonlyArray<VersionEntry>
): Packument => {
  const sorted = entries
    .map((entry) => ({ entry, semver: parseSemver(entry.version), stored: parseStored(entry.metadataJson) }))
    .sort((a, b) =>
      a.semver !== undefined && b.semver !== undefined
        ? compareSemver(a.semver, b.semver)
        : a.entry.createdAt.getTime() - b.entry.createdAt.getTime()
    )
  const distTags: Record<string, string> = {}
  for (const { entry } of sorted) for (const tag of entry.tags) distTags[tag] = entry.version
  let latest = sorted.find((v) => v.entry.version === distTags.latest)
  if (latest === undefined) {
    latest = [...sorted].reverse().find((v) => v.semver?.prerelease.length === 0) ?? sorted[sorted.length - 1]!
    distTags.latest = latest.entry.version
  }
  const maintainers = [{ name: ownerName }]
  const fullVersions: Record<string, unknown> = {}
  const shortVersions: Record<string, unknown> = {}
  const time: Record<string, string> = {}
  let created = sorted[0]!.entry.createdAt
  let modified = created
  for (const { entry, stored } of sorted) {
    const manifest = stored.manifest
    const dist = distOf(registry, name, entry)
    const install = hasInstallScript(manifest)
    fullVersions[entry.version] = {
      ...manifest,
      name,
      version: entry.version,
      _id: `${name}@${entry.version}`,
      maintainers,
      ...(install ? { hasInstallScript: true } : {}),
      dist
    }
    const short: Record<string, unknown> = {}
    for (const field of ABBREVIATED_FIELDS) if (manifest[field] !== undefined) short[field] = manifest[field]
    short.name = name
    short.version = entry.version
    if (install) short.hasInstallScript = true
    short.dist = dist
    shortVersions[entry.version] = short
    time[entry.version] = entry.createdAt.toISOString()
    if (entry.createdAt < created) created = entry.createdAt
    if (entry.createdAt > modified) modified = entry.createdAt
  }
  const head = latest.stored.manifest
  const pick = (field: string) => (head[field] === undefined ? {} : { [field]: head[field] })
  const full = {
    _id: name,
    _rev: rev,
    name,
    ...pick("description"),
    "dist-tags": distTags,
    versions: fullVersions,
    time: { created: created.toISOString(), modified: modified.toISOString(), ...time },
    maintainers,
    ...pick("author"),
    ...pick("license"),
    ...pick("homepage"),
    ...pick("keywords"),
    ...pick("repository"),
    ...pick("bugs"),
    ...(latest.stored.readme === undefined ? {} : { readme: latest.stored.readme })
  }
  const abbreviated = { name, modified: modified.toISOString(), "dist-tags": distTags, versions: shortVersions }
  const encoder = new TextEncoder()
  return {
    full: encoder.encode(JSON.stringify(full)),
    abbreviated: encoder.encode(JSON.stringify(abbreviated)),
    distTags,
    versions: sorted.map((v) => v.entry.version),
    latest: { version: latest.entry.version, manifest: head, date: latest.entry.createdAt }
  }
}

/** One object of `/-/v1/search` (npm's search result: `package`, `score`, `searchScore`). */
export const searchObject = (registryPage: string, ownerName: string, name: string, packument: Packument) => {
  const manifest = packument.latest.manifest
  const author = manifest.author
  return {
    package: {
      name,
      scope: name.startsWith("@") ? name.slice(1, name.indexOf("/")) : "unscoped",
      version: packument.latest.version,
      description: typeof manifest.description === "string" ? manifest.description : "",
      keywords: Array.isArray(manifest.keywords) ? manifest.keywords : [],
      date: packument.latest.date.toISOString(),
      links: {
        npm: registryPage,
        ...(typeof manifest.homepage === "string" ? { homepage: manifest.homepage } : {})
      },
      author:
        typeof author === "string" ? { name: author } : typeof author === "object" && author !== null ? author : {},
      publisher: { username: ownerName },
      maintainers: [{ username: ownerName }]
    },
    score: { final: 1, detail: { quality: 1, popularity: 1, maintenance: 1 } },
    searchScore: 1
  }
}

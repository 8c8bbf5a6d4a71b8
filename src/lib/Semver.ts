// Semantic versions (semver.org 2.0.0): the strict grammar (MAJOR.MINOR.PATCH, an optional
// `-pre.release` and `+build`, no leading zeros, no `v`) and the precedence order. Used where a
// registry's client requires semver (Pub's pub_semver) and ranks versions (Pub's `latest`).

export interface Semver {
  readonly major: number
  readonly minor: number
  readonly patch: number
  /** Dot-separated identifiers after `-` (empty: a release). */
  readonly prerelease: ReadonlyArray<string>
  /** Dot-separated identifiers after `+` (ignored by precedence, used only to break ties). */
  readonly build: ReadonlyArray<string>
}

const NUMBER = "0|[1-9]\\d*"
const PRE_ID = `(?:${NUMBER}|\\d*[A-Za-z-][0-9A-Za-z-]*)`
const BUILD_ID = "[0-9A-Za-z-]+"
const GRAMMAR = new RegExp(
  `^(${NUMBER})\\.(${NUMBER})\\.(${NUMBER})(?:-(${PRE_ID}(?:\\.${PRE_ID})*))?(?:\\+(${BUILD_ID}(?:\\.${BUILD_ID})*))?$`
)

/** The version, or undefined when `text` is not a strict semantic version. */
export const parseSemver = (text: string): Semver | undefined => {
  const m = GRAMMAR.exec(text)
  if (m === null) return undefined
  const parts = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (!parts.every(Number.isSafeInteger)) return undefined
  return {
    major: parts[0]!,
    minor: parts[1]!,
    patch: parts[2]!,
    prerelease: m[4] === undefined ? [] : m[4].split("."),
    build: m[5] === undefined ? [] : m[5].split(".")
  }
}

const compareIdentifiers = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): number => {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const x = a[i]!
    const y = b[i]!
    const xNumeric = /^\d+$/.test(x)
    const yNumeric = /^\d+$/.test(y)
    // Numeric identifiers compare as numbers and rank below alphanumeric ones.
    if (xNumeric && yNumeric) {
      const diff = Number(x) - Number(y)
      if (diff !== 0) return Math.sign(diff)
    } else if (xNumeric !== yNumeric) return xNumeric ? -1 : 1
    else if (x !== y) return x < y ? -1 : 1
  }
  return Math.sign(a.length - b.length)
}

/**
 * Semver precedence (negative: `a` first): numbers, then a pre-release below its release, then
 * pre-release identifiers. Versions of equal precedence are ordered by their build identifiers,
 * so that a sort is stable and total (as Dart's pub_semver does).
 */
export const compareSemver = (a: Semver, b: Semver): number => {
  const core = Math.sign(a.major - b.major) || Math.sign(a.minor - b.minor) || Math.sign(a.patch - b.patch)
  if (core !== 0) return core
  if (a.prerelease.length === 0 || b.prerelease.length === 0) {
    const pre = Math.sign(b.prerelease.length - a.prerelease.length)
    if (pre !== 0) return pre
  } else {
    const pre = compareIdentifiers(a.prerelease, b.prerelease)
    if (pre !== 0) return pre
  }
  if (a.build.length === 0 || b.build.length === 0) return Math.sign(a.build.length - b.build.length)
  return compareIdentifiers(a.build, b.build)
}

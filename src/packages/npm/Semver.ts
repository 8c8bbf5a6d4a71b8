// Semantic versions as npm reads them (semver.org 2.0.0, which the `semver` package follows in its
// strict mode): MAJOR.MINOR.PATCH, an optional pre-release, optional build metadata. npm's
// registry refuses anything else, and so does Hearth (Forgejo's go-version is laxer: "1.0", "v1").

const NUMERIC = "0|[1-9]\\d*"
const IDENT = `(?:${NUMERIC}|\\d*[A-Za-z-][0-9A-Za-z-]*)`
const SEMVER = new RegExp(
  `^(${NUMERIC})\\.(${NUMERIC})\\.(${NUMERIC})(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+([0-9A-Za-z-]+(?:\\.[0-9A-Za-z-]+)*))?$`
)

export interface Semver {
  readonly major: number
  readonly minor: number
  readonly patch: number
  readonly prerelease: ReadonlyArray<string | number>
}

/** The version, or undefined when `text` is not a strict semantic version. */
export const parseSemver = (text: string): Semver | undefined => {
  if (text.length > 256) return undefined
  const m = SEMVER.exec(text)
  if (m === null) return undefined
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])]
  if (![major, minor, patch].every(Number.isSafeInteger)) return undefined
  const prerelease = m[4] === undefined ? [] : m[4].split(".").map((p) => (/^\d+$/.test(p) ? Number(p) : p))
  return { major, minor, patch, prerelease }
}

/** semver's precedence (build metadata ignored): negative, 0 or positive. */
export const compareSemver = (a: Semver, b: Semver): number => {
  if (a.major !== b.major) return a.major - b.major
  if (a.minor !== b.minor) return a.minor - b.minor
  if (a.patch !== b.patch) return a.patch - b.patch
  // A pre-release sorts before its release.
  if (a.prerelease.length === 0 || b.prerelease.length === 0) return b.prerelease.length - a.prerelease.length
  for (let i = 0; i < Math.max(a.prerelease.length, b.prerelease.length); i++) {
    const x = a.prerelease[i]
    const y = b.prerelease[i]
    if (x === undefined) return -1
    if (y === undefined) return 1
    if (x === y) continue
    if (typeof x === "number" && typeof y === "number") return x - y
    if (typeof x === "number") return -1
    if (typeof y === "number") return 1
    return x < y ? -1 : 1
  }
  return 0
}

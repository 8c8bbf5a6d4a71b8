// A Pub package archive's metadata (Forgejo's modules/packages/pub/metadata.go; CONTRACT-PACKAGES
// §4.2): `pubspec.yaml` at the top of the `.tar.gz` (at most 128 KiB), its name and version checked
// as Dart checks them, and the README kept for display. Where Forgejo answers 500 (not gzip/tar, a
// YAML syntax error) or accepts what Dart refuses (upper-case names, `v1.0`), Hearth answers 400
// with the reason.
import type * as Yaml from "yaml"
import { lazyRequire } from "../../lib/LazyRequire.ts"
import { parseSemver } from "../../lib/Semver.ts"
import type { TarScanResult } from "../TarGz.ts"

// yaml is 72 modules: loaded when the first Pub package is published, not at start-up.
const loadYaml = lazyRequire<typeof Yaml>("yaml")

/** Forgejo's bound on `pubspec.yaml`. */
export const MAX_PUBSPEC = 128 * 1024
/** A README beyond this is not kept (it is shown, not served). */
export const MAX_README = 1024 * 1024
/** Unpacked bytes past which an archive is refused (pub.dev refuses far smaller ones). */
export const MAX_UNPACKED = 512 * 1024 * 1024

/** Dart's reserved words (the language specification): no package may be named one. */
const RESERVED = new Set(
  (
    "assert break case catch class const continue default do else enum extends false final finally for if in is " +
    "new null rethrow return super switch this throw true try var void while with"
  ).split(" ")
)

/** The files of the archive that are read: the pubspec, and a top-level README (any case). */
export const wanted = (path: string): number | undefined =>
  path === "pubspec.yaml" ? MAX_PUBSPEC : path.toLowerCase() === "readme.md" ? MAX_README : undefined

export interface PubMetadata {
  readonly name: string
  readonly version: string
  readonly pubspec: Record<string, unknown>
  /** Forgejo's metadata JSON (pub.Metadata): what the package page shows, and the pubspec. */
  readonly metadataJson: string
}

/** Why `name` is no Pub package name (pub's name validator, pub.dev's rules), if it is not. */
export const invalidName = (name: unknown): string | undefined => {
  if (typeof name !== "string" || name === "") return "pubspec.yaml has no name"
  if (!/^[a-z_][a-z0-9_]*$/.test(name))
    return `package name "${name}" is invalid: use lower-case letters, digits and underscores, not starting with a digit`
  if (RESERVED.has(name)) return `package name "${name}" is invalid: it is a reserved word of Dart`
  return undefined
}

const httpUrl = (value: unknown): string | undefined => {
  if (typeof value !== "string") return undefined
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? value : undefined
  } catch {
    return undefined
  }
}

/** The metadata of a scanned archive, or the message of the 400 that refuses it. */
export const readPubMetadata = (scan: TarScanResult): PubMetadata | { readonly refused: string } => {
  if (!scan.ok) return { refused: `the package archive cannot be read: ${scan.reason}` }
  if (scan.tooLarge.has("pubspec.yaml"))
    return { refused: `pubspec.yaml is larger than ${MAX_PUBSPEC / 1024} KiB (Pubspec file is too large)` }
  const source = scan.files.get("pubspec.yaml")
  if (source === undefined)
    return { refused: "the package archive has no pubspec.yaml at its top (Pubspec file is missing)" }
  let document: unknown
  try {
    document = loadYaml().parse(source.toString("utf8"), { maxAliasCount: 100 })
  } catch (e) {
    return { refused: `pubspec.yaml is not valid YAML: ${(e as Error).message.split("\n")[0]}` }
  }
  if (typeof document !== "object" || document === null || Array.isArray(document))
    return { refused: "pubspec.yaml is not a YAML mapping (name: …, version: …)" }
  const pubspec = document as Record<string, unknown>
  const badName = invalidName(pubspec.name)
  if (badName !== undefined) return { refused: badName }
  const version = pubspec.version
  if (typeof version !== "string" || parseSemver(version) === undefined)
    return {
      refused: `package version ${JSON.stringify(version ?? null)} is invalid: a semantic version such as 1.2.3 or 1.2.3-beta.1 is required`
    }
  // README: the last top-level one, whatever its case (Forgejo's choice).
  let readme: string | undefined
  for (const [path, bytes] of scan.files) if (path !== "pubspec.yaml") readme = bytes.toString("utf8")
  const metadata = {
    ...(typeof pubspec.description === "string" && pubspec.description !== ""
      ? { description: pubspec.description }
      : {}),
    ...(httpUrl(pubspec.homepage) !== undefined ? { project_url: pubspec.homepage } : {}),
    ...(httpUrl(pubspec.repository) !== undefined ? { repository_url: pubspec.repository } : {}),
    ...(typeof pubspec.documentation === "string" && pubspec.documentation !== ""
      ? { documentation_url: pubspec.documentation }
      : {}),
    ...(readme !== undefined && readme !== "" ? { readme } : {}),
    pubspec
  }
  return { name: pubspec.name as string, version, pubspec, metadataJson: JSON.stringify(metadata) }
}

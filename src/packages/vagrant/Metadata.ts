// What the Vagrant registry reads and checks (Forgejo's modules/packages/vagrant/metadata.go;
// CONTRACT-PACKAGES §3.4): box versions, provider names, and the box's `info.json`, read by
// streaming through the gzip and the tar (../TarGz.ts; never the whole box in memory).
//
// Versions: Forgejo takes hashicorp/go-version's semver (an optional `v`, `+build`), but Vagrant
// reads every version of a box's metadata with Ruby's Gem::Version, which refuses both, and one
// unreadable version makes `vagrant box add` fail for every version of the box. So only what both
// read is taken: `1.2.3`, `1.2.3-beta.1` (any number of numeric segments, as both allow).
import { scanTarGz } from "../TarGz.ts"

const VERSION = /^[0-9]+(\.[0-9]+)*(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/

/** Why `version` is refused as a box version, if it is. */
export const invalidVersion = (version: string): string | undefined =>
  version.length <= 255 && VERSION.test(version)
    ? undefined
    : `Malformed version: ${version} (a box version is numbers separated by dots, with an optional ` +
      `"-prerelease": 1.0.0, 2.1, 1.0.0-beta.1; Vagrant cannot read a leading "v" or a "+build")`

const PROVIDER = /^[A-Za-z0-9][-_.A-Za-z0-9]*\.box$/

/** Why the path's `{provider}.box` is refused, if it is. */
export const invalidProvider = (file: string): string | undefined =>
  file.length <= 255 && PROVIDER.test(file) && file !== ".box"
    ? undefined
    : `invalid provider file name: ${file} (expected the provider's name followed by ".box", such as virtualbox.box)`

/** The box's name: one path segment of Forgejo's package-name characters. */
const NAME = /^[A-Za-z0-9][-_+.A-Za-z0-9]*$/

/** Why `name` is refused as a box name, if it is. */
export const invalidName = (name: string): string | undefined => {
  if (name === "authenticate") return `the box name "authenticate" is reserved (it is the registry's sign-in check)`
  return name.length <= 255 && NAME.test(name) && !name.includes("..")
    ? undefined
    : `invalid box name: ${name} (letters, digits, "-", "_", "+" and ".", starting with a letter or digit)`
}

interface Parsed {
  readonly numbers: ReadonlyArray<number>
  readonly pre: ReadonlyArray<string>
}

const parse = (version: string): Parsed => {
  const dash = version.indexOf("-")
  const core = dash < 0 ? version : version.slice(0, dash)
  return {
    numbers: core.split(".").map(Number),
    pre: dash < 0 ? [] : version.slice(dash + 1).split(".")
  }
}

/** Semver order (missing segments are 0; a prerelease sorts before its release), as go-version and Vagrant. */
export const compareVersions = (a: string, b: string): number => {
  const x = parse(a)
  const y = parse(b)
  for (let i = 0; i < Math.max(x.numbers.length, y.numbers.length); i++) {
    const d = (x.numbers[i] ?? 0) - (y.numbers[i] ?? 0)
    if (d !== 0) return Math.sign(d)
  }
  if (x.pre.length === 0 && y.pre.length === 0) return 0
  if (x.pre.length === 0) return 1
  if (y.pre.length === 0) return -1
  for (let i = 0; i < Math.max(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i]
    const q = y.pre[i]
    if (p === undefined) return -1
    if (q === undefined) return 1
    const pn = /^[0-9]+$/.test(p)
    const qn = /^[0-9]+$/.test(q)
    if (pn && qn) {
      const d = Number(p) - Number(q)
      if (d !== 0) return Math.sign(d)
    } else if (pn !== qn) {
      return pn ? -1 : 1
    } else if (p !== q) {
      return p < q ? -1 : 1
    }
  }
  return 0
}

/** What a box tells about itself (stored as the version's metadata JSON, empty members left out). */
export interface BoxMetadata {
  readonly author?: string
  readonly description?: string
  readonly project_url?: string
  readonly repository_url?: string
}

/** A box that cannot be read: a 400 with this message. */
export class UnreadableBox extends Error {}

/** An http(s) URL, else nothing (Forgejo's validation.IsValidURL). */
const validUrl = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? value : undefined
  } catch {
    return undefined
  }
}

/**
 * `info.json`: an object of strings, keys case-insensitive (Forgejo's ParseInfoFile). Where Forgejo
 * picks `description` or `short_description` at random when both are there, `description` wins.
 */
export const parseInfoFile = (text: string): BoxMetadata => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    throw new UnreadableBox(`the box's info.json is not valid JSON: ${(error as Error).message}`)
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    throw new UnreadableBox("the box's info.json must be a JSON object")
  const fields = new Map<string, string>()
  for (const [key, member] of Object.entries(value)) {
    if (typeof member !== "string")
      throw new UnreadableBox(`the box's info.json must hold only strings (member "${key}" is not one)`)
    const lower = key.toLowerCase()
    if (!fields.has(lower)) fields.set(lower, member)
  }
  const pick = (...keys: Array<string>) => {
    for (const key of keys) {
      const found = fields.get(key)
      if (found !== undefined && found !== "") return found
    }
    return undefined
  }
  const url = (...keys: Array<string>) => {
    const found = pick(...keys)
    return found === undefined ? undefined : validUrl(found)
  }
  const metadata: Record<string, string | undefined> = {
    author: pick("author", "authors"),
    description: pick("description", "short_description"),
    project_url: url("website", "homepage", "url"),
    repository_url: url("repository", "source")
  }
  return Object.fromEntries(Object.entries(metadata).filter(([, v]) => v !== undefined)) as BoxMetadata
}

/** How many times its size a box may unpack to. */
const UNPACK_RATIO = 200
/** The largest `info.json` read (a description, a few URLs). */
const MAX_INFO_BYTES = 1 << 20

/** The most a box of `size` bytes may unpack to (a decompression bomb past it). */
export const unpackBound = (size: number): number => Math.max(2 ** 30, size * UNPACK_RATIO)

/** A box read as its bytes arrive (on their way to storage): `end` says what `readBoxInfo` says. */
export const scanBox = (maxUnpacked: () => number) => {
  const scan = scanTarGz({
    want: (path) => (path === "info.json" ? MAX_INFO_BYTES : undefined),
    // Read at each check: a box whose size is not known up front is bounded by what has come so far.
    get maxUnpacked() {
      return maxUnpacked()
    },
    plain: true,
    whole: true
  })
  let magic: Array<number> | undefined
  return {
    write: (chunk: Uint8Array): Promise<void> => {
      if (chunk.length === 0) return Promise.resolve()
      magic ??= [chunk[0]!, chunk[1] ?? -1]
      return scan.write(chunk)
    },
    /** The contents of `info.json`, or undefined without one; UnreadableBox for anything but a box. */
    end: async (): Promise<Buffer | undefined> => {
      const result = await scan.end()
      if (magic === undefined) throw new UnreadableBox("the box is empty")
      if (!result.ok)
        throw new UnreadableBox(
          magic[0] === 0x1f && magic[1] === 0x8b
            ? `the box is not a readable gzip-compressed tar archive: ${result.reason}`
            : `the box is not a tar archive nor a gzip-compressed one: ${result.reason}`
        )
      if (result.tooLarge.has("info.json")) throw new UnreadableBox("the box's info.json is larger than 1 MiB")
      return result.files.get("info.json")
    }
  }
}

/**
 * The contents of the box's `info.json` (or `./info.json`; the last one, as tar extracts), or
 * undefined when it has none. The box is a gzip-compressed tar, as Forgejo takes, or a plain tar,
 * as Vagrant unpacks both. The whole archive is read (Forgejo stops at info.json): a box whose tar
 * is damaged or cut short, or whose compressed stream is (its checksum is at the end), is an
 * UnreadableBox, as Vagrant could not unpack it. At most `maxUnpacked` bytes are unpacked.
 */
export const readBoxInfo = async (
  source: AsyncIterable<Uint8Array>,
  maxUnpacked: number
): Promise<Buffer | undefined> => {
  const scan = scanBox(() => maxUnpacked)
  for await (const chunk of source) await scan.write(chunk)
  return scan.end()
}

/** The metadata of a box's `info.json` contents (none: no metadata); throws UnreadableBox. */
export const boxMetadataOf = (info: Buffer | undefined): BoxMetadata =>
  info === undefined ? {} : parseInfoFile(info.toString("utf8"))

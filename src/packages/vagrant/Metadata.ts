// What the Vagrant registry reads and checks (Forgejo's modules/packages/vagrant/metadata.go;
// CONTRACT-PACKAGES §3.4): box versions, provider names, and the box's `info.json`, read by
// streaming through the gzip and the tar (never the whole box in memory).
//
// Versions: Forgejo takes hashicorp/go-version's semver (an optional `v`, `+build`), but Vagrant
// reads every version of a box's metadata with Ruby's Gem::Version, which refuses both, and one
// unreadable version makes `vagrant box add` fail for every version of the box. So only what both
// read is taken: `1.2.3`, `1.2.3-beta.1` (any number of numeric segments, as both allow).
import { pipeline, Readable } from "node:stream"
import { createGunzip } from "node:zlib"

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
const BLOCK = 512

const octal = (field: Buffer): number => {
  // GNU base-256 for large sizes: the high bit of the first byte set.
  if ((field[0]! & 0x80) !== 0) {
    let n = field[0]! & 0x7f
    for (let i = 1; i < field.length; i++) n = n * 256 + field[i]!
    return n
  }
  const text = field.toString("latin1").replace(/\0.*$/s, "").trim()
  if (!/^[0-7]*$/.test(text)) return Number.NaN
  return text === "" ? 0 : Number.parseInt(text, 8)
}

const checksumOk = (header: Buffer): boolean => {
  const stored = octal(header.subarray(148, 156))
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : header[i]!
  return stored === sum
}

const cString = (field: Buffer): string => {
  const end = field.indexOf(0)
  return field.subarray(0, end < 0 ? field.length : end).toString("utf8")
}

/** A pax extended header's `path`, if it sets one. */
const paxPath = (data: Buffer): string | undefined => {
  let path: string | undefined
  let offset = 0
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset)
    if (space < 0) break
    const length = Number(data.subarray(offset, space).toString("latin1"))
    if (!Number.isInteger(length) || length <= 0) break
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8")
    const eq = record.indexOf("=")
    if (eq > 0 && record.slice(0, eq) === "path") path = record.slice(eq + 1)
    offset += length
  }
  return path
}

/** Reads exactly what it is asked for from a stream of chunks; undefined at a clean end. */
class ChunkReader {
  private readonly iterator: AsyncIterator<Buffer>
  private pending: Buffer = Buffer.alloc(0)
  private done = false
  private total = 0
  private readonly limit: number
  constructor(source: AsyncIterable<Buffer>, limit: number) {
    this.iterator = source[Symbol.asyncIterator]()
    this.limit = limit
  }
  private async pull(): Promise<boolean> {
    const step = await this.iterator.next()
    if (step.done === true) {
      this.done = true
      return false
    }
    this.total += step.value.length
    if (this.total > this.limit)
      throw new UnreadableBox(
        `the box unpacks to more than ${Math.round(this.limit / 2 ** 20)} MiB, far more than a disk image does: ` +
          "it is refused as a decompression bomb"
      )
    this.pending = step.value
    return true
  }
  /** Reads (and drops) whatever is left: a compressed stream checks its own end. */
  async drain(): Promise<void> {
    this.pending = Buffer.alloc(0)
    while (!this.done && (await this.pull())) this.pending = Buffer.alloc(0)
  }
  /** `n` bytes, or fewer only when the stream ends first. */
  async read(n: number): Promise<Buffer> {
    const parts: Array<Buffer> = []
    let have = 0
    while (have < n) {
      if (this.pending.length === 0) {
        if (this.done || !(await this.pull())) break
        continue
      }
      const take = this.pending.subarray(0, n - have)
      this.pending = this.pending.subarray(take.length)
      parts.push(take)
      have += take.length
    }
    return parts.length === 1 ? parts[0]! : Buffer.concat(parts, have)
  }
  /** Skips `n` bytes; whether they were all there. */
  async skip(n: number): Promise<boolean> {
    let left = n
    while (left > 0) {
      if (this.pending.length === 0) {
        if (this.done || !(await this.pull())) return false
        continue
      }
      const take = Math.min(left, this.pending.length)
      this.pending = this.pending.subarray(take)
      left -= take
    }
    return true
  }
  close(): void {
    void this.iterator.return?.()
  }
}

const padded = (size: number) => Math.ceil(size / BLOCK) * BLOCK

/**
 * The contents of the tar's first regular file named `info.json` (or `./info.json`), or undefined
 * when the archive has none. The whole archive is read (Forgejo stops at info.json): a box whose
 * tar is damaged or cut short, or whose compressed stream is (its checksum is at the end), is an
 * UnreadableBox, as Vagrant could not unpack it. At most `limit` bytes are unpacked.
 */
export const findInTar = async (source: AsyncIterable<Buffer>, limit: number): Promise<Buffer | undefined> => {
  const reader = new ChunkReader(source, limit)
  let info: Buffer | undefined
  try {
    let longName: string | undefined
    for (let first = true; ; first = false) {
      const header = await reader.read(BLOCK)
      // The end: two zero blocks (or, leniently, the end of the stream between entries).
      if (header.length === 0 && !first) break
      if (header.length === BLOCK && header.every((byte) => byte === 0)) break
      if (header.length < BLOCK || !checksumOk(header))
        throw new UnreadableBox(
          first
            ? "the box is not a tar archive"
            : header.length < BLOCK
              ? "the box's tar archive ends in the middle of a header"
              : "the box's tar archive is damaged (a header's checksum is wrong)"
        )
      const size = octal(header.subarray(124, 136))
      if (!Number.isSafeInteger(size) || size < 0)
        throw new UnreadableBox("the box's tar archive has an entry of unreadable size")
      const type = String.fromCharCode(header[156]!)
      const ustar = header.subarray(257, 262).toString("latin1") === "ustar"
      const prefix = ustar ? cString(header.subarray(345, 500)) : ""
      const plain = cString(header.subarray(0, 100))
      const name = longName ?? (prefix === "" ? plain : `${prefix}/${plain}`)
      if (type === "L" || type === "x") {
        // A GNU long name or a pax header: for the entry that follows.
        if (size > MAX_INFO_BYTES) throw new UnreadableBox("the box's tar archive has an oversized extended header")
        const data = await reader.read(padded(size))
        if (data.length < padded(size)) throw new UnreadableBox("the box's tar archive ends in the middle of an entry")
        longName = type === "L" ? cString(data.subarray(0, size)) : (paxPath(data.subarray(0, size)) ?? longName)
        continue
      }
      longName = undefined
      const regular = type === "0" || type === "\0" || type === "7"
      if (info === undefined && regular && (name === "info.json" || name === "./info.json")) {
        if (size > MAX_INFO_BYTES) throw new UnreadableBox("the box's info.json is larger than 1 MiB")
        const data = await reader.read(padded(size))
        if (data.length < padded(size)) throw new UnreadableBox("the box's tar archive ends in the middle of info.json")
        info = Buffer.from(data.subarray(0, size))
        continue
      }
      if (!(await reader.skip(padded(size))))
        throw new UnreadableBox("the box's tar archive ends in the middle of an entry")
    }
    await reader.drain()
    return info
  } finally {
    reader.close()
  }
}

/**
 * The metadata of a box read from `bytes` (a gzip-compressed tar, as Forgejo takes; a plain tar
 * is taken too, as Vagrant unpacks both). Throws UnreadableBox for anything else.
 */
export const readBoxMetadata = async (bytes: Readable, size: number): Promise<BoxMetadata> => {
  const iterator = bytes[Symbol.asyncIterator]() as AsyncIterator<Buffer>
  const first = await iterator.next()
  if (first.done === true) throw new UnreadableBox("the box is empty")
  const head = first.value
  const rest = (async function* () {
    yield head
    for (;;) {
      const step = await iterator.next()
      if (step.done === true) return
      yield step.value
    }
  })()
  const gzipped = head[0] === 0x1f && head[1] === 0x8b
  let unpacked: AsyncIterable<Buffer> = rest
  let gunzip: ReturnType<typeof createGunzip> | undefined
  if (gzipped) {
    gunzip = createGunzip()
    // pipeline: a failing read of the box fails the gunzip too (pipe would not pass it on).
    unpacked = gunzip
    pipeline(Readable.from(rest), gunzip, () => {})
  }
  try {
    // Disk images compress a few times over; hundreds of times is a bomb (a GiB at least is read).
    const info = await findInTar(unpacked, Math.max(2 ** 30, size * UNPACK_RATIO))
    return info === undefined ? {} : parseInfoFile(info.toString("utf8"))
  } catch (error) {
    if (error instanceof UnreadableBox) throw error
    throw new UnreadableBox(
      gzipped
        ? `the box is not a readable gzip-compressed tar archive (${(error as Error).message})`
        : `the box is not a gzip-compressed tar archive (${(error as Error).message})`
    )
  } finally {
    gunzip?.destroy()
    bytes.destroy()
  }
}

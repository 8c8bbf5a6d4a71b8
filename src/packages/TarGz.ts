// The one tar reader of the package registries: a few files out of a `.tar.gz` package as it
// streams (a Pub archive's `pubspec.yaml` and README, a Vagrant box's `info.json`): the bytes are
// fed as they arrive, gunzipped and walked entry by entry; only the files asked for are kept (each
// up to its own bound), the rest is skipped, and nothing is held whole. Understands ustar/GNU/PAX
// headers (long names), checks each header's checksum, and refuses what is not gzip (unless a
// plain tar is allowed), not tar, cut short, or unpacks past a bound.
import { createGunzip } from "node:zlib"

const BLOCK = 512

export interface TarScanOptions {
  /** For an entry's path (without a leading `./`): the largest size to keep it at, or undefined to skip it. */
  readonly want: (path: string) => number | undefined
  /** Unpacked bytes past which the archive is refused (a gzip bomb). */
  readonly maxUnpacked: number
  /** Take an uncompressed tar too (Vagrant unpacks both); else what is not gzip is refused. */
  readonly plain?: boolean
  /**
   * Read to the end of the compressed stream, past the end-of-archive marker, so that a stream cut
   * short or damaged there (its CRC is last) is refused, as the client unpacking it would.
   */
  readonly whole?: boolean
}

export type TarScanResult =
  | {
      readonly ok: true
      /** The regular files asked for, by path (the last entry of a path wins, as tar extracts). */
      readonly files: ReadonlyMap<string, Buffer>
      /** Paths asked for whose entry was larger than its bound (not kept). */
      readonly tooLarge: ReadonlySet<string>
    }
  | { readonly ok: false; readonly reason: string }

export interface TarScan {
  /** Feeds the next compressed bytes; resolves when they are taken (backpressure). */
  readonly write: (chunk: Uint8Array) => Promise<void>
  /** No more bytes: what the archive held, or why it is not a readable archive. */
  readonly end: () => Promise<TarScanResult>
}

const text = (block: Buffer, start: number, length: number): string => {
  const field = block.subarray(start, start + length)
  const nul = field.indexOf(0)
  return field.subarray(0, nul === -1 ? length : nul).toString("utf8")
}

/** A numeric header field: octal ASCII, or base-256 when the high bit of its first byte is set. */
const number = (block: Buffer, start: number, length: number): number => {
  const field = block.subarray(start, start + length)
  if ((field[0]! & 0x80) !== 0) {
    let value = field[0]! & 0x7f
    for (let i = 1; i < length; i++) value = value * 256 + field[i]!
    return value
  }
  const digits = text(block, start, length).trim()
  return digits === "" ? 0 : /^[0-7]+$/.test(digits) ? Number.parseInt(digits, 8) : Number.NaN
}

const checksumOk = (block: Buffer): boolean => {
  const stored = number(block, 148, 8)
  let sum = 0
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 32 : block[i]!
  return stored === sum
}

/** The `path` record of a PAX extended header, if it has one. */
const paxPath = (body: Buffer): string | undefined => {
  let path: string | undefined
  let at = 0
  while (at < body.length) {
    const space = body.indexOf(0x20, at)
    if (space === -1) break
    const length = Number(body.subarray(at, space).toString("ascii"))
    if (!Number.isSafeInteger(length) || length <= 0 || at + length > body.length) break
    const record = body.subarray(space + 1, at + length - 1).toString("utf8")
    const eq = record.indexOf("=")
    if (eq !== -1 && record.slice(0, eq) === "path") path = record.slice(eq + 1)
    at += length
  }
  return path
}

const normalise = (path: string) => path.replace(/^(\.\/)+/, "")

export const scanTarGz = (options: TarScanOptions): TarScan => {
  const files = new Map<string, Buffer>()
  const tooLarge = new Set<string>()
  let failure: string | undefined
  let unpacked = 0
  let done = false
  const whole = options.whole === true
  /** Whether the bytes are gzip: undefined until the first two have come. */
  let gzipped: boolean | undefined
  let head = Buffer.alloc(0)

  // The entry being read: its bytes left, its padding, and what to do with them.
  let pending = Buffer.alloc(0)
  let entry:
    | {
        remaining: number
        padding: number
        keep: "file" | "pax" | "longname" | "skip"
        path: string
        chunks: Array<Buffer>
      }
    | undefined
  // A name given by a PAX or GNU header for the next entry.
  let nextPath: string | undefined

  const fail = (reason: string) => {
    failure ??= reason
  }

  const header = (block: Buffer) => {
    if (block.every((b) => b === 0)) {
      done = true // the end-of-archive marker; what follows is padding
      return
    }
    if (!checksumOk(block)) return fail("it is not a tar archive (a header's checksum does not match)")
    const size = number(block, 124, 12)
    if (!Number.isSafeInteger(size) || size < 0) return fail("it is not a tar archive (a header's size is unreadable)")
    const type = String.fromCharCode(block[156]!)
    const name = text(block, 0, 100)
    // POSIX ustar ("ustar\0") has a name prefix; old GNU ("ustar  ") keeps times there instead.
    const prefix = text(block, 257, 6) === "ustar" && block[262] === 0 ? text(block, 345, 155) : ""
    const path = normalise(nextPath ?? (prefix === "" ? name : `${prefix}/${name}`))
    const regular = type === "0" || type === "\0" || type === "7"
    if (type !== "x" && type !== "L") nextPath = undefined
    let keep: "file" | "pax" | "longname" | "skip" = "skip"
    if (type === "x") keep = "pax"
    else if (type === "L") keep = "longname"
    else if (regular) {
      const bound = options.want(path)
      if (bound !== undefined) {
        if (size > bound) tooLarge.add(path)
        else keep = "file"
      }
    }
    if ((keep === "pax" || keep === "longname") && size > 1024 * 1024) keep = "skip"
    entry = { remaining: size, padding: (BLOCK - (size % BLOCK)) % BLOCK, keep, path, chunks: [] }
    if (size === 0) finishEntry()
  }

  const finishEntry = () => {
    const current = entry!
    const body = Buffer.concat(current.chunks)
    if (current.keep === "file") {
      files.set(current.path, body)
      tooLarge.delete(current.path)
    } else if (current.keep === "pax") nextPath = paxPath(body) ?? nextPath
    else if (current.keep === "longname") nextPath = text(body, 0, body.length)
    current.chunks = []
  }

  /** Walks unpacked bytes: headers, then each entry's body and padding. */
  const consume = (chunk: Buffer) => {
    unpacked += chunk.length
    if (unpacked > options.maxUnpacked)
      return fail(
        `it unpacks to more than ${Math.round(options.maxUnpacked / (1024 * 1024))} MiB (refused as a decompression bomb)`
      )
    if (done) return // past the end-of-archive marker (read only with `whole`): counted, not parsed
    let data = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    pending = Buffer.alloc(0)
    while (data.length > 0 && failure === undefined && !done) {
      if (entry !== undefined && entry.remaining > 0) {
        const take = Math.min(entry.remaining, data.length)
        if (entry.keep !== "skip") entry.chunks.push(Buffer.from(data.subarray(0, take)))
        entry.remaining -= take
        data = data.subarray(take)
        if (entry.remaining === 0) finishEntry()
        continue
      }
      if (entry !== undefined && entry.padding > 0) {
        const take = Math.min(entry.padding, data.length)
        entry.padding -= take
        data = data.subarray(take)
        continue
      }
      entry = undefined
      if (data.length < BLOCK) {
        pending = Buffer.from(data)
        return
      }
      header(data.subarray(0, BLOCK))
      data = data.subarray(BLOCK)
    }
  }

  const gunzip = createGunzip()
  const finished = new Promise<void>((resolve) => {
    gunzip.on("data", (chunk: Buffer) => {
      if (failure === undefined && (whole || !done)) consume(chunk)
    })
    gunzip.on("error", () => {
      fail("it is not a gzip-compressed file (or it is damaged)")
      resolve()
    })
    gunzip.on("end", () => resolve())
  })

  /** The first bytes decide between gzip and a plain tar; a plain tar is walked as it comes. */
  const feed = (chunk: Uint8Array): Uint8Array | undefined => {
    if (gzipped === undefined) {
      head = Buffer.concat([head, chunk])
      if (head.length < 2) return undefined
      gzipped = head[0] === 0x1f && head[1] === 0x8b
      if (!gzipped && options.plain !== true) fail("it is not a gzip-compressed file (or it is damaged)")
      chunk = head
      head = Buffer.alloc(0)
    }
    if (gzipped) return chunk
    if (failure === undefined && (whole || !done)) consume(Buffer.from(chunk))
    return undefined
  }

  return {
    write: (chunk) =>
      new Promise<void>((resolve) => {
        if (failure !== undefined || (done && !whole) || gunzip.destroyed) return resolve()
        const gz = feed(chunk)
        if (gz === undefined || failure !== undefined) return resolve()
        if (gunzip.write(gz)) return resolve()
        // Wait for the gunzip to take it, or to fail.
        const settle = () => {
          gunzip.off("drain", settle)
          gunzip.off("error", settle)
          resolve()
        }
        gunzip.once("drain", settle)
        gunzip.once("error", settle)
      }),
    end: async () => {
      if (gzipped === undefined && head.length > 0) {
        // One byte in all: not gzip; as a plain tar, an archive cut short.
        gzipped = false
        if (options.plain !== true) fail("it is not a gzip-compressed file (or it is damaged)")
        else consume(head)
      } else if (gzipped === undefined && options.plain !== true)
        fail("it is not a gzip-compressed file (or it is damaged)")
      if (gzipped === true && failure === undefined && (whole || !done)) {
        gunzip.end()
        await finished
      } else gunzip.destroy() // refused, plain, or past the end-of-archive marker: the rest is not read
      if (failure !== undefined) return { ok: false, reason: failure }
      const cut = entry !== undefined && (entry.remaining > 0 || entry.padding > 0)
      if (!done && (cut || pending.length > 0 || unpacked === 0))
        return { ok: false, reason: "it is not a complete tar archive (it ends in the middle of an entry)" }
      return { ok: true, files, tooLarge }
    }
  }
}

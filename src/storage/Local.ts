// The `local` blob store ([storage] STORAGE_TYPE = local): files in [storage] PATH, named by their
// sha256 with two levels of fan-out, `<PATH>/ab/cd/abcd…` (Forgejo's content store key), beside
// `<PATH>/tmp` (uploads being received) and `<PATH>/trash` (files being removed).
//
// A put streams the body into a new temp file in `tmp` (the same filesystem, so the final rename
// is atomic), computing the size and the sha256 on the way and stopping at the size limit; fsyncs
// it once; then, in one short transaction holding the blob's row lock, records the row (or finds
// it), adds the put's hold and — when the file is not there yet — renames the temp file into place
// and fsyncs its directory. A removal takes the row lock the same way (deleting the row) and moves
// the file to `trash` before its commit, deleting it after; if the commit fails the file is put
// back. So a put and a removal of the same content never interleave, on one node or many, and a
// crash at any point leaves the row and the file consistent or leaves garbage the sweep knows:
// temp files not written to for 30 minutes, holds past their hour and the blobs nothing refers
// to or holds any more, and trash files (put back if their row still exists).
//
// The sweep runs once the server answers and then every 10 minutes (`sweepPeriodically`, started
// by the server, not by the one-off commands), in every server that runs the store: each step
// locks what it changes, so sweeps on several nodes sharing the directory and the
// database do not collide, and a temp file is only swept once it has not been written to for 30
// minutes (an upload in progress, here or on another node, writes at least every megabyte).
//
// md5, sha1, sha512 and blake2b are computed after the put has returned, from the stored file on
// the background digest worker thread (src/storage/Digests.ts, at a low priority), and recorded
// in the row; `digests` returns them, having that computation hurried (or running it) if it has
// not finished. A process that stops before leaves the row without them: the sweep computes them.
//
// Not swept: a file whose row was never committed (the process died between the rename and the
// commit of a new blob's first put). It is harmless, and the next put of the same bytes keeps it.

import { createHash, randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from "node:fs/promises"
import { IncomingMessage } from "node:http"
import { dirname, join } from "node:path"
import { finished, Readable } from "node:stream"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Exit, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { SettingsError } from "../config/Settings.ts"
import { transaction as sqlTransaction } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import {
  type DigestPriority,
  type Digests,
  FileDigester,
  Hasher,
  isSha256,
  LATER,
  type LaterDigest
} from "./Digests.ts"
import { BlobsRepo, type StoredRow } from "./Repo.ts"
import { type ChunkPool, fileChunks } from "./Send.ts"
import {
  type BlobBody,
  BlobNotFound,
  BlobStorage,
  type BlobStorageShape,
  BlobUnreadable,
  type OpenedBlob,
  type PutOptions,
  RangeNotSatisfiable,
  type StoredBlob,
  type SweepReport
} from "./Service.ts"

export interface LocalOptions {
  /** How long a put holds its blob for the caller's acquire, in seconds. */
  readonly holdSeconds?: number
  /** A temp file not written to for this long (ms) belongs to an upload that is gone. */
  readonly tempIdleMs?: number
}

const HOLD_SECONDS = 60 * 60
const TEMP_IDLE_MS = 30 * 60 * 1000
/** Blobs whose digests one sweep computes, at most (each is a read of the whole file). */
const SWEEP_DIGESTS = 100
/**
 * Chunk size of read streams. Each chunk is a new buffer that lives until the next garbage
 * collection; small ones keep that garbage (what reading adds to the process's memory) small.
 */
const READ_CHUNK = 64 * 1024

// ---------------------------------------------------------------------------------------------
// Receiving a body into a temp file (plain Node, awaited by the effect below)

interface Received {
  readonly size: number
  readonly sha256: string
  /** The digests asked for in `PutOptions.digests`. */
  readonly also: Partial<Omit<Digests, "sha256">>
}

/** The body is larger than the limit. */
class TooLarge {
  readonly _tag = "TooLarge"
}
/** The body is not as long as its sender announced. */
class WrongLength {
  readonly _tag = "WrongLength"
}
/** Reading the body failed (the client went away). */
class SourceFailed {
  readonly _tag = "SourceFailed"
  readonly cause: unknown
  constructor(cause: unknown) {
    this.cause = cause
  }
}

const noop = () => {}

/** Bytes gathered before one write: few, large writes (the chunks themselves, not a copy). */
export const WRITE_BYTES = 1 << 20

/** Writes `buffers` in order at the file's position, however many calls that takes. */
const writeAll = async (file: FileHandle, buffers: Array<Uint8Array>): Promise<void> => {
  let pending = buffers
  while (pending.length > 0) {
    let { bytesWritten } = await file.writev(pending)
    let i = 0
    while (i < pending.length && bytesWritten >= pending[i]!.byteLength) bytesWritten -= pending[i++]!.byteLength
    pending = pending.slice(i)
    if (bytesWritten > 0) pending[0] = pending[0]!.subarray(bytesWritten)
  }
}

/**
 * Frees a chunk's memory now rather than at the next garbage collection: Node's HTTP parser
 * copies every piece of a request body into a buffer of its own (outside V8's heap), and V8 runs
 * a full mark-compact of the whole heap each time some 64 MB of them are waiting to be collected
 * (7 of them for 512 MiB, 0.1–0.4 s each on a loaded machine: most of an upload's CPU beyond the
 * socket and sha256). Detaching the buffer (`transfer(0)`) frees it at once. Only for a chunk that
 * is all of its buffer, from a source whose chunks nobody else holds.
 */
const free = (chunk: Uint8Array) => {
  const buffer = chunk.buffer
  if (buffer instanceof ArrayBuffer && chunk.byteOffset === 0 && chunk.byteLength === buffer.byteLength)
    buffer.transfer(0)
}

/**
 * What a body becomes: sized, checked against the limits, hashed, and written to `file` in
 * gathered `writev`s with one write in flight while the next chunks arrive (at most about
 * 2 × WRITE_BYTES held).
 */
class Sink {
  size = 0
  private readonly sha256 = createHash("sha256")
  private readonly also: Hasher<LaterDigest> | undefined
  private gathered: Array<Uint8Array> = []
  private gatheredBytes = 0
  private writing: Promise<void> | undefined
  private readonly file: FileHandle
  private readonly options: PutOptions
  /** The chunks are the source's own copies: freed once written. */
  private readonly owned: boolean

  constructor(file: FileHandle, options: PutOptions, owned: boolean) {
    this.file = file
    this.options = options
    this.owned = owned
    this.also = options.digests === undefined || options.digests.length === 0 ? undefined : new Hasher(options.digests)
  }

  /** Takes a chunk (throws TooLarge or WrongLength); a promise when the next must wait for a write. */
  add(chunk: Uint8Array): Promise<void> | undefined {
    if (chunk.byteLength === 0) return undefined
    this.size += chunk.byteLength
    if (this.size > this.options.maxSize) throw new TooLarge()
    if (this.options.length !== undefined && this.size > this.options.length) throw new WrongLength()
    this.sha256.update(chunk)
    this.also?.update(chunk)
    this.gathered.push(chunk)
    this.gatheredBytes += chunk.byteLength
    return this.gatheredBytes >= WRITE_BYTES ? this.flush() : undefined
  }

  /** Starts writing what is gathered; a promise when a write was in flight (this one starts after it). */
  private flush(): Promise<void> | undefined {
    const buffers = this.gathered
    this.gathered = []
    this.gatheredBytes = 0
    const write = () => {
      const next = writeAll(this.file, buffers).then(() => {
        if (this.owned) for (const buffer of buffers) free(buffer)
      })
      next.catch(noop) // awaited later; never an unhandled rejection meanwhile
      this.writing = next
    }
    if (this.writing === undefined) {
      write()
      return undefined
    }
    return this.writing.then(write)
  }

  /** Writes what is left, waits for the writes and fsyncs the file once; the size and digests. */
  async end(): Promise<Received> {
    if (this.options.length !== undefined && this.size !== this.options.length) throw new WrongLength()
    if (this.gatheredBytes > 0) await this.flush()
    await this.writing
    await this.file.datasync()
    return { size: this.size, sha256: this.sha256.digest("hex"), also: this.also?.digest() ?? {} }
  }

  /** Waits for a write in flight (after a failure, before the file is closed and removed). */
  settled(): Promise<void> {
    return (this.writing ?? Promise.resolve()).catch(noop)
  }
}

/**
 * A Node stream into `sink`, by its 'data' events (each chunk as the source made it: no async
 * iteration per chunk, no concatenation of buffered chunks), paused while a write holds it back.
 * Once refused or failed the stream is left paused, not destroyed: an HTTP request must stay open
 * for its 413 or 400.
 */
const drain = (readable: Readable, sink: Sink): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    let done = false
    const stop = (error?: unknown) => {
      if (done) return
      done = true
      readable.off("data", onData)
      stopWatching()
      if (error === undefined) resolve()
      else {
        readable.pause()
        reject(error)
      }
    }
    const onData = (data: Uint8Array | string) => {
      if (done) return
      let wait: Promise<void> | undefined
      try {
        wait = sink.add(typeof data === "string" ? Buffer.from(data) : data)
      } catch (error) {
        return stop(error)
      }
      if (wait === undefined) return
      readable.pause()
      wait.then(() => {
        if (!done) readable.resume()
      }, stop)
    }
    const stopWatching = finished(readable, { writable: false }, (error) =>
      error === undefined || error === null ? stop() : stop(new SourceFailed(error))
    )
    readable.on("data", onData)
    readable.resume()
  })

/**
 * Streams `body` into a new file at `temp` and fsyncs it once, at the end (the bytes are on disk
 * before any name or row points at them; one fsync per blob, not per write). Each chunk is hashed
 * (sha256, and the digests `options.digests` asks for) as it arrives (Sink). On any failure (and
 * when `signal` aborts) the file is removed before the promise settles.
 */
const receive = async (body: BlobBody, temp: string, options: PutOptions, signal: AbortSignal): Promise<Received> => {
  const readable = body instanceof Readable ? body : undefined
  // Without an error: an 'error' event nobody listens to yet would be an uncaught exception.
  const onAbort = () => readable?.destroy()
  signal.addEventListener("abort", onAbort, { once: true })
  let file: FileHandle | undefined
  let sink: Sink | undefined
  const iterator: AsyncIterator<Uint8Array | string> | undefined =
    readable === undefined ? body[Symbol.asyncIterator]() : undefined
  // Any other source may never answer a pending `next`: an abort must not wait for it.
  const aborted =
    readable !== undefined
      ? undefined
      : new Promise<never>((_, reject) => {
          if (signal.aborted) reject(new SourceFailed(signal.reason))
          signal.addEventListener("abort", () => reject(new SourceFailed(signal.reason)), { once: true })
        })
  aborted?.catch(noop)
  try {
    file = await open(temp, "wx", 0o644)
    if (signal.aborted) throw new SourceFailed(signal.reason)
    // A request's chunks are the HTTP parser's copies, read by nothing else.
    sink = new Sink(file, options, body instanceof IncomingMessage)
    if (readable !== undefined) await drain(readable, sink)
    else {
      for (;;) {
        let step: IteratorResult<Uint8Array | string>
        try {
          step = await Promise.race([iterator!.next(), aborted!])
        } catch (cause) {
          throw cause instanceof SourceFailed ? cause : new SourceFailed(cause)
        }
        if (step.done === true) break
        const wait = sink.add(typeof step.value === "string" ? Buffer.from(step.value) : step.value)
        if (wait !== undefined) await wait
      }
    }
    if (signal.aborted) throw new SourceFailed(signal.reason)
    const received = await sink.end()
    const done = file
    file = undefined
    await done.close()
    return received
  } catch (error) {
    // Not awaited: it may wait behind a `next` the source never answers.
    if (iterator !== undefined) Promise.resolve(iterator.return?.()).catch(noop)
    await sink?.settled()
    await file?.close().catch(noop)
    await rm(temp, { force: true })
    throw error
  } finally {
    signal.removeEventListener("abort", onAbort)
  }
}

// ---------------------------------------------------------------------------------------------
// Files

const isMissing = (error: unknown) => (error as NodeJS.ErrnoException)?.code === "ENOENT"

/** fsync of a directory: a rename or a new entry in it survives a power cut. */
const syncDir = async (dir: string) => {
  const handle = await open(dir, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

const removeQuietly = (path: string) => Effect.promise(() => rm(path, { force: true }).catch(noop))

const humanSize = (bytes: number): string => {
  const units = [
    ["GiB", 2 ** 30],
    ["MiB", 2 ** 20],
    ["KiB", 2 ** 10]
  ] as const
  for (const [unit, size] of units) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit} (${bytes} bytes)`
  }
  return `${bytes} bytes`
}

/** The store in `root` (`[storage] PATH`). */
export const make = (root: string, options: LocalOptions = {}) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    const transaction = sqlTransaction(sql)
    const repo = yield* BlobsRepo
    const holdSeconds = options.holdSeconds ?? HOLD_SECONDS
    const tempIdleMs = options.tempIdleMs ?? TEMP_IDLE_MS
    const digester = yield* Effect.acquireRelease(
      Effect.sync(() => new FileDigester()),
      (d) => Effect.promise(() => d.close())
    )
    const context = yield* Effect.context<never>()
    const tmpDir = join(root, "tmp")
    const trashDir = join(root, "trash")
    const pathOf = (sha256: string) => join(root, sha256.slice(0, 2), sha256.slice(2, 4), sha256)

    yield* Effect.tryPromise({
      try: async () => {
        for (const dir of [root, tmpDir, trashDir]) await mkdir(dir, { recursive: true })
        // Fails now, with the reason, rather than at the first upload.
        const probe = join(tmpDir, `probe-${randomUUID()}`)
        await (await open(probe, "wx")).close()
        await unlink(probe)
      },
      catch: (error) =>
        new SettingsError({ message: `cannot use [storage] PATH = ${root}: ${(error as Error).message}` })
    })

    /** Puts the received file in place unless an intact copy is there already (under the row lock). */
    const place = async (temp: string, sha256: string, size: number) => {
      const final = pathOf(sha256)
      const existing = await stat(final).catch((error) => (isMissing(error) ? undefined : Promise.reject(error)))
      if (existing?.isFile() === true && existing.size === size) return
      const dir = dirname(final)
      const created = await mkdir(dir, { recursive: true })
      await rename(temp, final)
      // The new entries (the name, and the fan-out directories made for it) are synced together
      // before the row commits: concurrent fsyncs share one journal commit (one after the other,
      // each waited for its own: about 10 ms against 1 ms for a new blob on this ext4).
      // The file's bytes were synced before the rename, so no name points at unwritten data.
      await Promise.all([syncDir(dir), ...(created !== undefined ? [syncDir(dirname(dir)), syncDir(root)] : [])])
    }

    const receiveEffect = (body: BlobBody, temp: string, limits: PutOptions) =>
      Effect.callback<Received, unknown>((resume, signal) => {
        const receiving = receive(body, temp, limits, signal)
        receiving.then(
          (received) => resume(Effect.succeed(received)),
          (error) => resume(Effect.fail(error))
        )
        // Interrupted: the promise settles once the temp file is gone.
        return Effect.promise(() => receiving.then(noop, noop))
      })

    const put: BlobStorageShape["put"] = (body, limits) => {
      const refused = (error: unknown) => {
        if (error instanceof TooLarge) {
          return Effect.fail(
            Errors.payloadTooLarge(`the upload is larger than the limit of ${humanSize(limits.maxSize)}`)
          )
        }
        if (error instanceof WrongLength) {
          return Effect.fail(
            Errors.badRequest(`the upload's size is not the ${limits.length} bytes its Content-Length announced`)
          )
        }
        if (error instanceof SourceFailed) {
          return Effect.fail(Errors.badRequest("the upload was cut off before its end"))
        }
        return Effect.die(
          new Error(`blob storage: cannot write in ${tmpDir}: ${(error as Error)?.message ?? String(error)}`, {
            cause: error
          })
        )
      }
      if (limits.length !== undefined && limits.length > limits.maxSize) return refused(new TooLarge())
      const temp = join(tmpDir, randomUUID())
      return Effect.gen(function* () {
        const { size, sha256, also } = yield* receiveEffect(body, temp, limits).pipe(Effect.catch(refused))
        const stored = yield* transaction(
          Effect.gen(function* () {
            const { created, hold, row } = yield* repo.upsert({ sha256, size, ...also }, holdSeconds)
            // The same sha256 is the same content (and so the same size; Forgejo's GetOrInsertBlob).
            if (row.size !== size) {
              return yield* Effect.die(new Error(`blob storage: the row of ${sha256} does not match its content`))
            }
            // Digests this put computed on the way that the row lacks: recorded before the answer.
            if (!created && (Object.keys(also) as Array<LaterDigest>).some((name) => row[name] === null))
              yield* repo.fill(sha256, also)
            yield* Effect.promise(() => place(temp, sha256, size))
            return { created, hold, row }
          })
        ).pipe(Effect.uninterruptible)
        // The other digests: after the answer, from the file (a row from before 0034 gets its blake2b).
        const missing = (Object.keys(LATER) as Array<LaterDigest>).filter(
          (name) => stored.row[name] === null && also[name] === undefined
        )
        if (missing.length > 0 || Object.keys(also).length > 0)
          void complete(sha256, "background", also, stored.row).catch(noop)
        const known: Partial<Record<LaterDigest, string>> = {}
        for (const name of Object.keys(LATER) as Array<LaterDigest>) {
          const value = also[name] ?? stored.row[name]
          if (value !== null && value !== undefined) known[name] = value
        }
        return { ...known, sha256, size, created: stored.created, hold: stored.hold } satisfies StoredBlob
      }).pipe(Effect.ensuring(removeQuietly(temp)))
    }

    // ---------------------------------------------------------------------------------------------
    // The digests after the put: one computation per blob at a time (a reader asking for a blob
    // being computed waits for that one), on a digest worker, recorded where the row has none.
    // After a put and in the sweep nobody waits for them: they run on the background worker,
    // at a low priority; a reader waiting for them has them computed at once (`hurry`).

    const completing = new Map<string, { readonly promise: Promise<Digests | undefined>; priority: DigestPriority }>()
    const runPromise = <A>(effect: Effect.Effect<A>) => Effect.runPromiseWith(context)(effect)

    /** Computes and records what the row lacks; the five digests, or undefined when there is no such blob. */
    const complete = (
      sha256: string,
      priority: DigestPriority,
      known: Partial<Omit<Digests, "sha256">> = {},
      /** The row as the put just read it (under its lock): not read again. */
      read?: StoredRow
    ): Promise<Digests | undefined> => {
      const running = completing.get(sha256)
      if (running !== undefined) {
        if (priority === "now" && running.priority === "background") {
          running.priority = "now"
          digester.hurry(pathOf(sha256))
        }
        return running.promise
      }
      const entry: { promise: Promise<Digests | undefined>; priority: DigestPriority } = {
        promise: Promise.resolve(undefined),
        priority
      }
      const work = (async () => {
        if (Object.keys(known).length > 0) await runPromise(repo.fill(sha256, known))
        const found = read !== undefined ? Option.some(read) : await runPromise(repo.find(sha256))
        if (Option.isNone(found)) return undefined
        // What the fill above recorded where the row had nothing (as a read after it would show).
        const row = { ...found.value }
        for (const name of Object.keys(LATER) as Array<LaterDigest>) row[name] ??= known[name] ?? null
        const missing = (Object.keys(LATER) as Array<LaterDigest>).filter((name) => row[name] === null)
        // The priority as it is now: a reader may have come meanwhile.
        const computed = missing.length === 0 ? {} : await digester.digest(pathOf(sha256), missing, entry.priority)
        if (missing.length > 0) await runPromise(repo.fill(sha256, computed))
        const value = (name: LaterDigest) => row[name] ?? (computed as Partial<Record<LaterDigest, string>>)[name]!
        return {
          sha256,
          md5: value("md5"),
          sha1: value("sha1"),
          sha512: value("sha512"),
          blake2b: value("blake2b")
        }
      })()
      const settled = work.finally(() => completing.delete(sha256))
      entry.promise = settled
      completing.set(sha256, entry)
      settled.catch((error) =>
        // A blob removed meanwhile (a refused upload given back) needs no digests.
        String(error).includes("ENOENT")
          ? undefined
          : runPromise(
              Effect.logWarning(`blob storage: could not compute the digests of blob ${sha256}`, String(error))
            )
      )
      return settled
    }

    const digests: BlobStorageShape["digests"] = (sha256) =>
      Effect.gen(function* () {
        if (!isSha256(sha256)) return yield* new BlobNotFound({ sha256 })
        const found = yield* repo.find(sha256)
        if (Option.isNone(found)) return yield* new BlobNotFound({ sha256 })
        const { md5, sha1, sha512, blake2b } = found.value
        if (md5 !== null && sha1 !== null && sha512 !== null && blake2b !== null)
          return { sha256, md5, sha1, sha512, blake2b }
        const computed = yield* Effect.promise(() =>
          complete(sha256, "now").catch((error) =>
            Promise.reject(new Error(`cannot compute the digests of blob ${sha256}`, { cause: error }))
          )
        )
        if (computed === undefined) return yield* new BlobNotFound({ sha256 })
        return computed
      })

    /**
     * Removes the blob if nothing refers to or holds it; whether it did. The row is deleted and the
     * file moved aside in one transaction (so no put can store it meanwhile), the file deleted after
     * the commit, or put back if the commit failed.
     */
    const removeIfUnused = (sha256: string): Effect.Effect<boolean> =>
      Effect.suspend(() => {
        let trashed: string | undefined
        let removed = false
        return transaction(
          Effect.gen(function* () {
            removed = yield* repo.deleteUnused(sha256)
            if (!removed) return
            const aside = join(trashDir, `${sha256}.${randomUUID()}`)
            trashed = yield* Effect.promise(() =>
              rename(pathOf(sha256), aside).then(
                () => aside,
                (error) => (isMissing(error) ? undefined : Promise.reject(error))
              )
            )
            yield* Effect.promise(() => syncDir(trashDir))
          })
        ).pipe(
          Effect.onExit((exit) => {
            if (trashed === undefined) return Effect.void
            const file = trashed
            return Exit.isSuccess(exit)
              ? removeQuietly(file)
              : Effect.promise(() => rename(file, pathOf(sha256)).catch(noop))
          }),
          Effect.uninterruptible,
          Effect.map(() => removed)
        )
      }).pipe(
        Effect.catchCause((cause) =>
          Effect.as(Effect.logWarning(`blob storage: could not remove blob ${sha256}`, cause), false)
        )
      )

    /** A trash file left by a removal that did not finish: deleted, or put back if its row exists. */
    const settleTrash = (name: string): Effect.Effect<boolean> => {
      const file = join(trashDir, name)
      const sha256 = name.slice(0, 64)
      if (!isSha256(sha256)) return Effect.as(removeQuietly(file), false)
      return transaction(
        Effect.gen(function* () {
          if (!(yield* repo.lock(sha256))) {
            yield* removeQuietly(file)
            return false
          }
          return yield* Effect.promise(async () => {
            const final = pathOf(sha256)
            const present = await stat(final).then(
              () => true,
              () => false
            )
            if (present) {
              await rm(file, { force: true })
              return false
            }
            await mkdir(dirname(final), { recursive: true })
            return rename(file, final).then(
              () => true,
              (error) => (isMissing(error) ? false : Promise.reject(error))
            )
          })
        })
      ).pipe(Effect.uninterruptible)
    }

    const sweepTemp = Effect.promise(async () => {
      const cutoff = Date.now() - tempIdleMs
      let removed = 0
      for (const name of await readdir(tmpDir).catch(() => [] as Array<string>)) {
        const file = join(tmpDir, name)
        const info = await stat(file).catch(() => undefined)
        if (info === undefined || info.mtimeMs > cutoff) continue
        await rm(file, { force: true, recursive: true })
        removed++
      }
      return removed
    })

    const sweep: Effect.Effect<SweepReport> = Effect.gen(function* () {
      const tempFiles = yield* sweepTemp
      const expiredHolds = yield* repo.deleteExpiredHolds
      let blobs = 0
      for (const sha256 of yield* repo.unused) {
        if (yield* removeIfUnused(sha256)) blobs++
      }
      let restored = 0
      const names = yield* Effect.promise(() => readdir(trashDir).catch(() => [] as Array<string>))
      for (const name of names) {
        if (yield* settleTrash(name)) restored++
      }
      // Digests a stopped process never computed after its puts (a few per sweep).
      let digested = 0
      for (const sha256 of yield* repo.incomplete(SWEEP_DIGESTS)) {
        if (completing.has(sha256)) continue
        const done = yield* Effect.promise(() =>
          complete(sha256, "background").then(
            (found) => found !== undefined,
            () => false
          )
        )
        if (done) digested++
      }
      return { tempFiles, expiredHolds, blobs, restored, digested }
    }).pipe(
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning("blob storage: the sweep failed (it runs again later)", cause), {
          tempFiles: 0,
          expiredHolds: 0,
          blobs: 0,
          restored: 0,
          digested: 0
        })
      )
    )

    const open_: BlobStorageShape["open"] = (sha256, range) =>
      Effect.gen(function* () {
        if (!isSha256(sha256)) return yield* new BlobNotFound({ sha256 })
        const path = pathOf(sha256)
        const info = yield* Effect.promise(() =>
          stat(path).catch((error) => (isMissing(error) ? undefined : Promise.reject(error)))
        )
        if (info === undefined) return yield* new BlobNotFound({ sha256 })
        const size = info.size
        let start = 0
        let end = size - 1
        if (range !== undefined) {
          if (range.start < 0 || range.start >= size || range.end < range.start) {
            return yield* new RangeNotSatisfiable({ size })
          }
          start = range.start
          end = Math.min(range.end, size - 1)
        }
        const length = end - start + 1
        const readable = (pool?: ChunkPool) =>
          length === 0
            ? Readable.from([])
            : pool !== undefined
              ? fileChunks(path, start, end, pool)
              : createReadStream(path, { start, end, highWaterMark: READ_CHUNK })
        return {
          size,
          range: { start, end },
          length,
          readable,
          stream: NodeStream.fromReadable<Uint8Array, BlobUnreadable>({
            evaluate: readable,
            onError: (error) =>
              new BlobUnreadable({
                message: isMissing(error)
                  ? `blob ${sha256} was removed`
                  : `cannot read blob ${sha256}: ${(error as Error)?.message}`
              })
          })
        } satisfies OpenedBlob
      })

    const acquire: BlobStorageShape["acquire"] = (blob) => {
      const sha256 = typeof blob === "string" ? blob : blob.sha256
      const hold = typeof blob === "string" ? undefined : blob.hold
      if (!isSha256(sha256)) return Effect.fail(new BlobNotFound({ sha256 }))
      return Effect.flatMap(repo.acquire(sha256, hold), (found) =>
        found ? Effect.void : Effect.fail(new BlobNotFound({ sha256 }))
      )
    }

    const acquireAll: BlobStorageShape["acquireAll"] = (names) =>
      Effect.gen(function* () {
        const distinct = [...new Set(names)]
        const invalid = distinct.find((sha256) => !isSha256(sha256))
        if (invalid !== undefined) return yield* new BlobNotFound({ sha256: invalid })
        const found = new Set(yield* repo.acquireAll(distinct))
        const missing = distinct.find((sha256) => !found.has(sha256))
        // In the caller's transaction, the failure undoes the references counted for the others.
        if (missing !== undefined) return yield* new BlobNotFound({ sha256: missing })
      })

    const release: BlobStorageShape["release"] = (sha256) =>
      Effect.gen(function* () {
        if (!isSha256(sha256)) return yield* new BlobNotFound({ sha256 })
        const left = yield* repo.release(sha256)
        if (Option.isNone(left)) return yield* new BlobNotFound({ sha256 })
        // Inside a transaction, once it has committed: a rollback keeps the reference, and the file.
        if (left.value === 0) yield* sql.afterCommit(Effect.asVoid(removeIfUnused(sha256)))
      })

    const find = (sha256: string) => (isSha256(sha256) ? repo.find(sha256) : Effect.succeed(Option.none()))

    const service = BlobStorage.of({
      put,
      open: open_,
      digests,
      acquire,
      acquireAll,
      release,
      exists: (sha256) => Effect.map(find(sha256), Option.isSome),
      stat: find,
      sweep
    })
    return service
  })

/** The local store as the `BlobStorage` service. */
export const layer = (root: string, options: LocalOptions = {}): Layer.Layer<BlobStorage, SettingsError, SqlClient> =>
  Layer.effect(BlobStorage, make(root, options)).pipe(Layer.provide(BlobsRepo.layer))

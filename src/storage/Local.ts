// The `local` blob store ([storage] STORAGE_TYPE = local): files in [storage] PATH, named by their
// sha256 with two levels of fan-out, `<PATH>/ab/cd/abcd…` (Forgejo's content store key), beside
// `<PATH>/tmp` (uploads being received) and `<PATH>/trash` (files being removed).
//
// A put streams the body into a new temp file in `tmp` (the same filesystem, so the final rename
// is atomic), computing the size and the five digests on the way (on two threads for large
// bodies: src/storage/Digests.ts) and stopping at the size limit; fsyncs it; then, in one short transaction holding the blob's row lock, records the row (or finds
// it), adds the put's hold and — when the file is not there yet — renames the temp file into place
// and fsyncs its directory. A removal takes the row lock the same way (deleting the row) and moves
// the file to `trash` before its commit, deleting it after; if the commit fails the file is put
// back. So a put and a removal of the same content never interleave, on one node or many, and a
// crash at any point leaves the row and the file consistent or leaves garbage the sweep knows:
// temp files not written to for 30 minutes, holds past their hour and the blobs nothing refers
// to or holds any more, and trash files (put back if their row still exists).
//
// The sweep runs at start-up and then every 10 minutes, in every process that runs the store:
// each step locks what it changes, so sweeps on several nodes sharing the directory and the
// database do not collide, and a temp file is only swept once it has not been written to for 30
// minutes (an upload in progress, here or on another node, writes at least every megabyte).
//
// Not swept: a file whose row was never committed (the process died between the rename and the
// commit of a new blob's first put). It is harmless, and the next put of the same bytes keeps it.

import { randomUUID } from "node:crypto"
import { createReadStream } from "node:fs"
import { type FileHandle, mkdir, open, readdir, rename, rm, stat, unlink } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Readable } from "node:stream"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Effect, Exit, Layer, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { SettingsError } from "../config/Settings.ts"
import { transaction as sqlTransaction } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import { BLOCK_BYTES, type Digests, DigestThreads, Hasher, isSha256, type SplitHasher } from "./Digests.ts"
import { BlobsRepo } from "./Repo.ts"
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
  /** Time between two sweeps (the first runs at start-up); 0: no periodic sweep. */
  readonly sweepEveryMs?: number
}

const HOLD_SECONDS = 60 * 60
const TEMP_IDLE_MS = 30 * 60 * 1000
const SWEEP_EVERY_MS = 10 * 60 * 1000
/**
 * Chunk size of read streams. Each chunk is a new buffer that lives until the next garbage
 * collection; small ones keep that garbage (what reading adds to the process's memory) small.
 */
const READ_CHUNK = 64 * 1024

// ---------------------------------------------------------------------------------------------
// Receiving a body into a temp file (plain Node, awaited by the effect below)

interface Received {
  readonly size: number
  readonly digests: Digests
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
 * Streams `body` into a new file at `temp` and fsyncs it. The body is copied into blocks of
 * BLOCK_BYTES (reused from one body to the next), each hashed and written while the next fills (one
 * write in flight); past the first block, md5 and sha512 are computed by the digest worker. On any
 * failure (and when `signal` aborts) the file is removed before the promise settles. A Node
 * stream is not destroyed when the body is refused (too large, wrong length): an HTTP request
 * must stay open for its 413 or 400.
 */
const receive = async (
  body: BlobBody,
  temp: string,
  options: PutOptions,
  threads: DigestThreads,
  signal: AbortSignal
): Promise<Received> => {
  const readable = body instanceof Readable ? body : undefined
  // Without an error: an 'error' event nobody listens to yet would be an uncaught exception.
  const onAbort = () => readable?.destroy()
  signal.addEventListener("abort", onAbort, { once: true })
  let file: FileHandle | undefined
  let writing: Promise<void> | undefined
  let split: SplitHasher | undefined
  let block: Buffer | undefined
  const iterator: AsyncIterator<Uint8Array | string> =
    readable !== undefined ? readable.iterator({ destroyOnReturn: false }) : body[Symbol.asyncIterator]()
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
    let size = 0
    let filled = 0
    block = threads.takeBlock()
    /** The current block (`filled` bytes of it): hashed, then written, then handed to the worker. */
    const flush = async () => {
      const full = block!
      const length = filled
      block = undefined
      filled = 0
      const hasher = (split ??= threads.begin())
      hasher.update(full, length)
      if (writing !== undefined) await writing
      const next = writeAll(file!, [full.subarray(0, length)]).then(() => hasher.send(full, length))
      next.catch(noop) // awaited later; never an unhandled rejection meanwhile
      writing = next
      block = threads.takeBlock()
    }
    for (;;) {
      let step: IteratorResult<Uint8Array | string>
      try {
        step = await (aborted === undefined ? iterator.next() : Promise.race([iterator.next(), aborted]))
      } catch (cause) {
        throw cause instanceof SourceFailed ? cause : new SourceFailed(cause)
      }
      if (signal.aborted) throw new SourceFailed(signal.reason)
      if (step.done === true) break
      const chunk = typeof step.value === "string" ? Buffer.from(step.value) : step.value
      size += chunk.byteLength
      if (size > options.maxSize) throw new TooLarge()
      if (options.length !== undefined && size > options.length) throw new WrongLength()
      let offset = 0
      while (offset < chunk.byteLength) {
        const n = Math.min(chunk.byteLength - offset, BLOCK_BYTES - filled)
        block!.set(chunk.subarray(offset, offset + n), filled)
        filled += n
        offset += n
        if (filled === BLOCK_BYTES) await flush()
      }
    }
    if (options.length !== undefined && size !== options.length) throw new WrongLength()
    let digests: Digests
    if (split === undefined) {
      // Under one block: all five digests here.
      const hasher = new Hasher()
      const bytes = block.subarray(0, filled)
      hasher.update(bytes)
      await writeAll(file, [bytes])
      digests = hasher.digest()
    } else {
      if (filled > 0) await flush()
      await writing
      digests = await split.digest()
    }
    // The bytes are on disk before any name or row points at them.
    await file.datasync()
    const done = file
    file = undefined
    await done.close()
    return { size, digests }
  } catch (error) {
    split?.drop()
    // Not awaited: it may wait behind a `next` the source never answers.
    if (readable === undefined) Promise.resolve(iterator.return?.()).catch(noop)
    await writing?.catch(noop)
    await file?.close().catch(noop)
    await rm(temp, { force: true })
    throw error
  } finally {
    if (block !== undefined) threads.giveBlock(block)
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
    const threads = yield* Effect.acquireRelease(
      Effect.sync(() => new DigestThreads()),
      (t) => Effect.promise(() => t.close())
    )
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
      if (created !== undefined) {
        await syncDir(root)
        await syncDir(dirname(dir))
      }
      await rename(temp, final)
      await syncDir(dir)
    }

    const receiveEffect = (body: BlobBody, temp: string, limits: PutOptions) =>
      Effect.callback<Received, unknown>((resume, signal) => {
        const receiving = receive(body, temp, limits, threads, signal)
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
        const received = yield* receiveEffect(body, temp, limits).pipe(Effect.catch(refused))
        const { size, digests } = received
        const stored = yield* transaction(
          Effect.gen(function* () {
            const { created, hold, row } = yield* repo.upsert({ ...digests, size }, holdSeconds)
            // The same content is the same size and every digest (Forgejo's GetOrInsertBlob);
            // a row from before blake2b was recorded has none to compare (it gets this one).
            if (
              row.size !== size ||
              row.md5 !== digests.md5 ||
              row.sha1 !== digests.sha1 ||
              row.sha512 !== digests.sha512 ||
              (row.blake2b !== null && row.blake2b !== digests.blake2b)
            ) {
              return yield* Effect.die(
                new Error(`blob storage: the row of ${digests.sha256} does not match its content`)
              )
            }
            yield* Effect.promise(() => place(temp, digests.sha256, size))
            return { created, hold }
          })
        ).pipe(Effect.uninterruptible)
        return { ...digests, size, ...stored } satisfies StoredBlob
      }).pipe(Effect.ensuring(removeQuietly(temp)))
    }

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
      return { tempFiles, expiredHolds, blobs, restored }
    }).pipe(
      Effect.catchCause((cause) =>
        Effect.as(Effect.logWarning("blob storage: the sweep failed (it runs again later)", cause), {
          tempFiles: 0,
          expiredHolds: 0,
          blobs: 0,
          restored: 0
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
        const readable = () =>
          length === 0 ? Readable.from([]) : createReadStream(path, { start, end, highWaterMark: READ_CHUNK })
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
      acquire,
      release,
      exists: (sha256) => Effect.map(find(sha256), Option.isSome),
      stat: find,
      sweep
    })

    // At start-up, then periodically, for as long as the store is in use.
    const every = options.sweepEveryMs ?? SWEEP_EVERY_MS
    yield* Effect.forkScoped(every > 0 ? Effect.repeat(sweep, Schedule.spaced(every)) : sweep)
    return service
  })

/** The local store as the `BlobStorage` service. */
export const layer = (root: string, options: LocalOptions = {}): Layer.Layer<BlobStorage, SettingsError, SqlClient> =>
  Layer.effect(BlobStorage, make(root, options)).pipe(Layer.provide(BlobsRepo.layer))

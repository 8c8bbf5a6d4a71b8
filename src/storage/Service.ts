// Blob storage: content-addressed (sha256), streamed, reference-counted files for attachments,
// release assets, packages and avatars. Nothing here holds a whole upload or download in memory.
//
// How a consumer uses it (say, an attachment):
//   const blob = yield* storage.put(body, { maxSize, length })          // stored, held for a while
//   yield* sql.withTransaction(insertAttachmentRow(blob).pipe(Effect.andThen(storage.acquire(blob))))
//   … later, deleting it:
//   yield* sql.withTransaction(deleteAttachmentRow.pipe(Effect.andThen(storage.release(blob.sha256))))
// `acquire` and `release` join the caller's transaction, so a reference is counted exactly when the
// row that holds it exists. A put holds its blob until the caller's `acquire(blob)` (or for an
// hour, if the caller never gets there): without that, the last reference of an existing blob
// could be released between a put that found it and that put's acquire, and the file would go.
// The last release removes the blob once the transaction it ran in has committed.
//
// The interface is the back-end's: `local` (a directory, src/storage/Local.ts) is the only one
// today; an S3-compatible one implements the same.

import type { Readable } from "node:stream"
import { Context, Data, Effect, Layer, type Option, Schedule, type Scope, type Stream } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { Settings, SettingsError } from "../config/Settings.ts"
import type { BadRequest, PayloadTooLarge } from "../http/Errors.ts"
import type { Digests, LaterDigest } from "./Digests.ts"
import type { ChunkPool } from "./Send.ts"

/** The bytes to store: a Node stream (an upload's request) or any async iterable of chunks. */
export type BlobBody = Readable | AsyncIterable<Uint8Array | string>

export interface PutOptions {
  /** The largest body accepted, in bytes: a larger one fails with 413 and nothing is kept. */
  readonly maxSize: number
  /**
   * The size the sender announced (Content-Length), when it did: over `maxSize` fails with 413
   * before anything is read; a body of another length fails with 400.
   */
  readonly length?: number | undefined
  /**
   * Digests computed while the body streams in as well as sha256, for a caller that checks them
   * before it answers (npm's declared integrity); the others are computed after the answer.
   */
  readonly digests?: ReadonlyArray<LaterDigest> | undefined
}

export interface StoredBlob extends Partial<Omit<Digests, "sha256">> {
  readonly sha256: string
  readonly size: number
  /** The content was new (false: the same bytes were already stored, and were not stored again). */
  readonly created: boolean
  /** This put's hold on the blob, ended by `acquire(blob)`. */
  readonly hold: number
}

export interface BlobInfo {
  readonly sha256: string
  /** Null until computed (just after the upload; see `digests`). */
  readonly md5: string | null
  readonly sha1: string | null
  readonly sha512: string | null
  /** Null until computed, and for a blob stored before Hearth recorded it until it is put again. */
  readonly blake2b: string | null
  readonly size: number
  /** References held (rows that use the blob). */
  readonly refcount: number
  readonly createdAt: Date
}

/** Inclusive byte offsets, as an HTTP Range and Node's read streams count them. */
export interface ByteRange {
  readonly start: number
  readonly end: number
}

export interface OpenedBlob {
  /** The whole blob's size. */
  readonly size: number
  /** What is read: the whole blob, or the range asked for. */
  readonly range: ByteRange
  /** Bytes in `range` (0 for an empty blob). */
  readonly length: number
  /**
   * The bytes as a Node stream (for a raw HTTP response, or `pipeline`). Each call opens anew.
   * With a pool, read into its buffers (a download: src/storage/Send.ts, through Serve.ts's `blobBody`).
   */
  readonly readable: (pool?: ChunkPool) => Readable
  /** The bytes as an effect stream (for `HttpServerResponse.stream`). */
  readonly stream: Stream.Stream<Uint8Array, BlobUnreadable>
}

/** No blob by that name (or the name is no sha256 at all). */
export class BlobNotFound extends Data.TaggedError("BlobNotFound")<{ readonly sha256: string }> {}

/** The range starts past the end of the blob (HTTP 416, with `Content-Range: bytes *\/size`). */
export class RangeNotSatisfiable extends Data.TaggedError("RangeNotSatisfiable")<{ readonly size: number }> {}

/** Reading a blob failed part-way (it was removed, or the disk failed). */
export class BlobUnreadable extends Data.TaggedError("BlobUnreadable")<{ readonly message: string }> {}

/** What one sweep removed (garbage a crash or an abandoned put left behind). */
export interface SweepReport {
  /** Temp files of uploads that stopped being written long ago. */
  readonly tempFiles: number
  /** Holds whose put never reached its acquire. */
  readonly expiredHolds: number
  /** Blobs with no reference and no live hold, removed with their file. */
  readonly blobs: number
  /** Files a removal had set aside and whose blob still exists, put back. */
  readonly restored: number
  /** Blobs whose digests were computed (their put's process stopped before it did). */
  readonly digested: number
}

export interface BlobStorageShape {
  /**
   * Streams `body` into the store, computing its size and sha256 on the way; deduplicated by
   * sha256. md5, sha1, sha512 and blake2b are computed from the stored file after the put (read
   * them with `digests`). The blob is held (not removable) until `acquire(blob)` or the hold expires. Not to be
   * called inside a transaction: an upload can take long, and would hold a connection meanwhile
   * (on the embedded database, every other query would wait).
   */
  readonly put: (body: BlobBody, options: PutOptions) => Effect.Effect<StoredBlob, PayloadTooLarge | BadRequest>
  /** Reads a blob back, whole or a byte range. */
  readonly open: (sha256: string, range?: ByteRange) => Effect.Effect<OpenedBlob, BlobNotFound | RangeNotSatisfiable>
  /**
   * Counts one more reference. Given a put's result, also ends that put's hold. By name alone,
   * only for a blob the caller already holds a reference to (copying an attachment, say): nothing
   * else keeps the blob from being removed meanwhile. Joins the caller's transaction, if any.
   */
  readonly acquire: (blob: string | StoredBlob) => Effect.Effect<void, BlobNotFound>
  /**
   * One more reference to each blob named (by name only, as `acquire`), in one statement: the
   * blobs a new row refers to (a container manifest's layers). A name given twice counts once.
   */
  readonly acquireAll: (sha256s: ReadonlyArray<string>) => Effect.Effect<void, BlobNotFound>
  /**
   * Gives one reference back; the last one removes the blob (after the caller's transaction, if
   * any, has committed). Fails when the blob has no reference to give back.
   */
  readonly release: (sha256: string) => Effect.Effect<void, BlobNotFound>
  /**
   * All five digests of a blob: as recorded, or computed now (and recorded) when the put's
   * computation after the upload has not finished yet — never an empty or a wrong value.
   */
  readonly digests: (sha256: string) => Effect.Effect<Digests, BlobNotFound>
  readonly exists: (sha256: string) => Effect.Effect<boolean>
  readonly stat: (sha256: string) => Effect.Effect<Option.Option<BlobInfo>>
  /** Removes what crashes and abandoned puts left behind (also run at start-up and periodically). */
  readonly sweep: Effect.Effect<SweepReport>
}

export class BlobStorage extends Context.Service<BlobStorage, BlobStorageShape>()("hearth/storage/BlobStorage") {
  /** The back-end `[storage] STORAGE_TYPE` names. */
  static readonly layer: Layer.Layer<BlobStorage, SettingsError, Settings | SqlClient> = Layer.unwrap(
    Effect.gen(function* () {
      const settings = yield* Settings
      const type = settings.storage.STORAGE_TYPE
      if (type !== "local") {
        return yield* new SettingsError({
          message:
            `[storage] STORAGE_TYPE = ${type} is not supported by Hearth yet: only local is ` +
            `(blobs in [storage] PATH, default <APP_DATA_PATH>/storage)`
        })
      }
      const Local = yield* Effect.promise(() => import("./Local.ts"))
      return Local.layer(settings.storage.PATH)
    })
  )
}

/**
 * The store's sweep now and then every 10 minutes, for the scope's lifetime: the server starts it
 * once it answers (src/main.ts), so that the first requests do not wait behind it.
 */
export const sweepPeriodically: Effect.Effect<void, never, BlobStorage | Scope.Scope> = BlobStorage.use((storage) =>
  Effect.asVoid(Effect.forkScoped(Effect.repeat(storage.sweep, Schedule.spaced("10 minutes"))))
)

// SQL for blob storage (tables in migration 0011_storage). Every step that changes a blob's file
// runs while its row is locked (`upsert`, `deleteUnused`, `lock` take the row lock; a row being
// inserted by another transaction blocks an upsert of the same sha256 until that one ends), so a
// put that stores a file and a removal that takes it away never interleave.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Digests } from "./Digests.ts"
import type { BlobInfo } from "./Service.ts"

export interface BlobRow extends Digests {
  readonly size: number
}

/** A row as stored: `blake2b` is null for blobs stored before migration 0034 until they are put again. */
export interface StoredRow extends Omit<BlobRow, "blake2b"> {
  readonly blake2b: string | null
}

const toInfo = (row: Record<string, unknown>): BlobInfo => ({
  sha256: row.sha256 as string,
  size: Number(row.size),
  md5: row.md5 as string,
  sha1: row.sha1 as string,
  sha512: row.sha512 as string,
  blake2b: (row.blake2b as string | null) ?? null,
  refcount: Number(row.refcount),
  createdAt: row.created_at as Date
})

export class BlobsRepo extends Context.Service<
  BlobsRepo,
  {
    /**
     * Records the blob (a new row with no reference) or locks the existing one, and adds a hold on it
     * for `holdSeconds`. Returns whether the row is new, what the row says, and the hold's id.
     */
    readonly upsert: (
      blob: BlobRow,
      holdSeconds: number
    ) => Effect.Effect<{ created: boolean; row: StoredRow; hold: number }>
    /** +1 reference, and the put's hold ended; false when there is no such blob. */
    readonly acquire: (sha256: string, hold: number | undefined) => Effect.Effect<boolean>
    /** -1 reference; the count left, or none when the blob has no reference to give back. */
    readonly release: (sha256: string) => Effect.Effect<Option.Option<number>>
    /** Deletes the row if nothing refers to or holds it; whether it did. In a transaction. */
    readonly deleteUnused: (sha256: string) => Effect.Effect<boolean>
    /** Locks the row (waiting for a transaction changing it); whether it exists. */
    readonly lock: (sha256: string) => Effect.Effect<boolean>
    readonly find: (sha256: string) => Effect.Effect<Option.Option<BlobInfo>>
    /** Deletes holds that expired; how many. */
    readonly deleteExpiredHolds: Effect.Effect<number>
    /** Blobs with no reference and no live hold. */
    readonly unused: Effect.Effect<ReadonlyArray<string>>
  }
>()("hearth/storage/BlobsRepo") {
  static readonly layer = Layer.effect(
    BlobsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const noLiveHold = (sha256: string) =>
        sql`NOT EXISTS (SELECT 1 FROM blob_holds h WHERE h.sha256 = ${sha256} AND h.expires_at > now())`

      return BlobsRepo.of(
        sqlBoundary({
          upsert: (blob, holdSeconds) =>
            Effect.gen(function* () {
              // The no-op update takes the row lock; xmax = 0 only on a row this statement inserted.
              // The row's blake2b as it was (null before 0034), then filled in from this put.
              const [row] = yield* sql`INSERT INTO blobs (sha256, size, md5, sha1, sha512, blake2b)
              VALUES (${blob.sha256}, ${blob.size}, ${blob.md5}, ${blob.sha1}, ${blob.sha512}, ${blob.blake2b})
              ON CONFLICT (sha256) DO UPDATE SET refcount = blobs.refcount
              RETURNING (xmax = 0) AS created, sha256, size, md5, sha1, sha512, blake2b`
              if (row!.blake2b === null)
                yield* sql`UPDATE blobs SET blake2b = ${blob.blake2b} WHERE sha256 = ${blob.sha256}`
              const [hold] = yield* sql`INSERT INTO blob_holds (sha256, expires_at)
              VALUES (${blob.sha256}, now() + make_interval(secs => ${holdSeconds})) RETURNING id`
              return {
                created: row!.created as boolean,
                row: {
                  sha256: row!.sha256 as string,
                  size: Number(row!.size),
                  md5: row!.md5 as string,
                  sha1: row!.sha1 as string,
                  sha512: row!.sha512 as string,
                  blake2b: (row!.blake2b as string | null) ?? null
                },
                hold: Number(hold!.id)
              }
            }),
          acquire: (sha256, hold) =>
            Effect.gen(function* () {
              const rows =
                yield* sql`UPDATE blobs SET refcount = refcount + 1 WHERE sha256 = ${sha256} RETURNING sha256`
              if (rows.length === 0) return false
              if (hold !== undefined) yield* sql`DELETE FROM blob_holds WHERE id = ${hold} AND sha256 = ${sha256}`
              return true
            }),
          release: (sha256) =>
            Effect.map(
              sql`UPDATE blobs SET refcount = refcount - 1 WHERE sha256 = ${sha256} AND refcount > 0 RETURNING refcount`,
              (rows) => (rows.length === 0 ? Option.none() : Option.some(Number(rows[0]!.refcount)))
            ),
          deleteUnused: (sha256) =>
            Effect.gen(function* () {
              // Two statements: the lock waits for a put or an acquire in progress, and the DELETE,
              // with a snapshot taken after it, sees their holds and references. (A single DELETE
              // would re-check a concurrently updated row, but its NOT EXISTS would still read the
              // snapshot from before that put's hold, and remove a blob just put.) While the row is
              // locked, no hold or reference can be added.
              const locked = yield* sql`SELECT sha256 FROM blobs WHERE sha256 = ${sha256} FOR UPDATE`
              if (locked.length === 0) return false
              const rows = yield* sql`DELETE FROM blobs
              WHERE sha256 = ${sha256} AND refcount = 0 AND ${noLiveHold(sha256)} RETURNING sha256`
              return rows.length > 0
            }),
          lock: (sha256) =>
            Effect.map(sql`SELECT sha256 FROM blobs WHERE sha256 = ${sha256} FOR UPDATE`, (rows) => rows.length > 0),
          find: (sha256) =>
            Effect.map(
              sql`SELECT sha256, size, md5, sha1, sha512, blake2b, refcount, created_at FROM blobs WHERE sha256 = ${sha256}`,
              (rows) => (rows.length === 0 ? Option.none() : Option.some(toInfo(rows[0]!)))
            ),
          deleteExpiredHolds: Effect.map(
            sql`DELETE FROM blob_holds WHERE expires_at <= now() RETURNING id`,
            (rows) => rows.length
          ),
          unused: Effect.map(
            sql`SELECT b.sha256 FROM blobs b WHERE b.refcount = 0
            AND NOT EXISTS (SELECT 1 FROM blob_holds h WHERE h.sha256 = b.sha256 AND h.expires_at > now())`,
            (rows) => rows.map((row) => row.sha256 as string)
          )
        })
      )
    })
  )
}

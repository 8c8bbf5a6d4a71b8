// SQL for blob storage (tables in migration 0011_storage). Every step that changes a blob's file
// runs while its row is locked (`upsert`, `deleteUnused`, `lock` take the row lock; a row being
// inserted by another transaction blocks an upsert of the same sha256 until that one ends), so a
// put that stores a file and a removal that takes it away never interleave.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Digests } from "./Digests.ts"
import type { BlobInfo } from "./Service.ts"

/** What a put records: its name and size, and the digests it computed on the way (if any). */
export interface BlobRow extends Partial<Omit<Digests, "sha256">> {
  readonly sha256: string
  readonly size: number
}

/** The row as stored: a digest not computed yet is null (blake2b too for blobs from before 0034). */
export type StoredRow = Omit<BlobInfo, "refcount" | "createdAt">

const toInfo = (row: Record<string, unknown>): BlobInfo => ({
  sha256: row.sha256 as string,
  size: Number(row.size),
  md5: (row.md5 as string | null) ?? null,
  sha1: (row.sha1 as string | null) ?? null,
  sha512: (row.sha512 as string | null) ?? null,
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
    /** Records digests computed after the put (each only where the row has none yet). */
    readonly fill: (sha256: string, digests: Partial<Omit<Digests, "sha256">>) => Effect.Effect<void>
    /** Blobs whose md5, sha1 or sha512 was never computed (the process stopped before): up to `limit`. */
    readonly incomplete: (limit: number) => Effect.Effect<ReadonlyArray<string>>
    /** +1 reference, and the put's hold ended; false when there is no such blob. */
    readonly acquire: (sha256: string, hold: number | undefined) => Effect.Effect<boolean>
    /** +1 reference to each (distinct) blob; the names found. */
    readonly acquireAll: (sha256s: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
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
              // One statement (a put is a short transaction of its own: each statement is a round
              // trip). The no-op update takes the row lock; xmax = 0 only on a row this statement
              // inserted; the hold's foreign key sees the row inserted by the same statement.
              const [row] = yield* sql`WITH b AS (
                INSERT INTO blobs (sha256, size, md5, sha1, sha512, blake2b)
                VALUES (${blob.sha256}, ${blob.size}, ${blob.md5 ?? null}, ${blob.sha1 ?? null}, ${blob.sha512 ?? null},
                  ${blob.blake2b ?? null})
                ON CONFLICT (sha256) DO UPDATE SET refcount = blobs.refcount
                RETURNING (xmax = 0) AS created, sha256, size, md5, sha1, sha512, blake2b
              ), h AS (
                INSERT INTO blob_holds (sha256, expires_at)
                SELECT sha256, now() + make_interval(secs => ${holdSeconds}) FROM b RETURNING id
              )
              SELECT b.*, h.id AS hold FROM b, h`
              const info = toInfo({ ...row!, refcount: 0, created_at: null })
              return {
                created: row!.created as boolean,
                row: {
                  sha256: info.sha256,
                  size: info.size,
                  md5: info.md5,
                  sha1: info.sha1,
                  sha512: info.sha512,
                  blake2b: info.blake2b
                },
                hold: Number(row!.hold)
              }
            }),
          fill: (sha256, d) =>
            Effect.asVoid(sql`UPDATE blobs SET md5 = COALESCE(md5, ${d.md5 ?? null}),
              sha1 = COALESCE(sha1, ${d.sha1 ?? null}), sha512 = COALESCE(sha512, ${d.sha512 ?? null}),
              blake2b = COALESCE(blake2b, ${d.blake2b ?? null})
            WHERE sha256 = ${sha256}`),
          incomplete: (limit) =>
            Effect.map(
              sql`SELECT sha256 FROM blobs WHERE md5 IS NULL OR sha1 IS NULL OR sha512 IS NULL LIMIT ${limit}`,
              (rows) => rows.map((row) => row.sha256 as string)
            ),
          acquire: (sha256, hold) =>
            Effect.map(
              hold === undefined
                ? sql`UPDATE blobs SET refcount = refcount + 1 WHERE sha256 = ${sha256} RETURNING sha256`
                : // The hold ends in the same statement (a hold whose blob has no row is gone already: ON DELETE CASCADE).
                  sql`WITH h AS (DELETE FROM blob_holds WHERE id = ${hold} AND sha256 = ${sha256})
                  UPDATE blobs SET refcount = refcount + 1 WHERE sha256 = ${sha256} RETURNING sha256`,
              (rows) => rows.length > 0
            ),
          acquireAll: (sha256s) =>
            sha256s.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`UPDATE blobs SET refcount = refcount + 1 WHERE sha256 IN ${sql.in(sha256s)} RETURNING sha256`,
                  (rows) => rows.map((row) => row.sha256 as string)
                ),
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

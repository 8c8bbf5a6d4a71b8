// SQL for blocked users (table in migration 0012_blocking), and the look-ups blocking needs in
// other slices' tables: which of the blocker's repositories the blocked user watches or
// collaborates on, and the transfers the blocked user offered the blocker.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Page } from "../http/Pagination.ts"

export interface BlockRow {
  /** The blocked account. */
  readonly blockId: number
  readonly createdAt: Date
}

export class BlocksRepo extends Context.Service<
  BlocksRepo,
  {
    /** Records that `userId` blocks `blockId`; false when it already did. */
    readonly insert: (userId: number, blockId: number) => Effect.Effect<boolean, SqlError>
    /** false when there was nothing to remove. */
    readonly remove: (userId: number, blockId: number) => Effect.Effect<boolean, SqlError>
    /** Whether one of `userIds` has blocked `blockId` (Forgejo's `IsBlockedMultiple`). */
    readonly isBlocked: (userIds: ReadonlyArray<number>, blockId: number) => Effect.Effect<boolean, SqlError>
    /** The accounts `userId` has blocked, newest first, one page, and how many there are. */
    readonly list: (
      userId: number,
      page: Page
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<BlockRow>; readonly total: number }, SqlError>
    /** Repositories owned by `ownerId` that `userId` watches. */
    readonly watchedIn: (ownerId: number, userId: number) => Effect.Effect<ReadonlyArray<number>, SqlError>
    /** Repositories owned by `ownerId` where `userId` is a collaborator. */
    readonly collaborationsIn: (ownerId: number, userId: number) => Effect.Effect<ReadonlyArray<number>, SqlError>
    /** Repositories `doerId` offered to `recipientId` (pending transfers). */
    readonly transfersOffered: (recipientId: number, doerId: number) => Effect.Effect<ReadonlyArray<number>, SqlError>
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
  }
>()("hearth/blocks/BlocksRepo") {
  static readonly layer = Layer.effect(
    BlocksRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const ids = (rows: ReadonlyArray<Record<string, unknown>>) => rows.map((r) => Number(r.id))
      return BlocksRepo.of({
        insert: (userId, blockId) =>
          Effect.map(
            sql`INSERT INTO blocked_users (user_id, block_id) VALUES (${userId}, ${blockId})
              ON CONFLICT DO NOTHING RETURNING id`,
            (rows) => rows.length > 0
          ),
        remove: (userId, blockId) =>
          Effect.map(
            sql`DELETE FROM blocked_users WHERE user_id = ${userId} AND block_id = ${blockId} RETURNING id`,
            (rows) => rows.length > 0
          ),
        isBlocked: (userIds, blockId) =>
          userIds.length === 0
            ? Effect.succeed(false)
            : Effect.map(
                sql`SELECT 1 FROM blocked_users WHERE block_id = ${blockId} AND user_id IN ${sql.in(userIds)} LIMIT 1`,
                (rows) => rows.length > 0
              ),
        list: (userId, page) =>
          Effect.gen(function* () {
            const [count] = yield* sql`SELECT count(*) AS n FROM blocked_users WHERE user_id = ${userId}`
            const rows = yield* sql`SELECT block_id, created_at FROM blocked_users WHERE user_id = ${userId}
              ORDER BY id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
            return {
              rows: rows.map((r) => ({ blockId: Number(r.block_id), createdAt: r.created_at as Date })),
              total: Number(count!.n)
            }
          }),
        watchedIn: (ownerId, userId) =>
          Effect.map(
            sql`SELECT r.id FROM watches w JOIN repositories r ON r.id = w.repo_id
              WHERE w.user_id = ${userId} AND r.owner_id = ${ownerId} AND w.mode <> 'dont'`,
            ids
          ),
        collaborationsIn: (ownerId, userId) =>
          Effect.map(
            sql`SELECT r.id FROM collaborations c JOIN repositories r ON r.id = c.repo_id
              WHERE c.user_id = ${userId} AND r.owner_id = ${ownerId}`,
            ids
          ),
        transfersOffered: (recipientId, doerId) =>
          Effect.map(
            sql`SELECT repo_id AS id FROM repo_transfers WHERE recipient_id = ${recipientId} AND doer_id = ${doerId}`,
            ids
          ),
        transaction: (effect) => sql.withTransaction(effect)
      })
    })
  )
}

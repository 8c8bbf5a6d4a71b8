// SQL for follows. A follow row and both counters change together, and only when a row was
// really inserted or deleted, so repeated and concurrent calls keep the counters exact.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Window } from "../social/Repo.ts"
import { toUserRow, type UserRow, UsersRepo } from "../users/Repo.ts"

/** Whose accounts a list may show: what AccountPolicy.canSee allows, written as SQL. */
export interface ListViewer {
  readonly id: number
  readonly isAdmin: boolean
  readonly restricted: boolean
  readonly publicOnly: boolean
}

export class FollowsRepo extends Context.Service<
  FollowsRepo,
  {
    /** Follows and raises both counters; false when the follow already existed. */
    readonly follow: (userId: number, followId: number) => Effect.Effect<boolean>
    /** Unfollows and lowers both counters; false when there was nothing to remove. */
    readonly unfollow: (userId: number, followId: number) => Effect.Effect<boolean>
    readonly isFollowing: (userId: number, followId: number) => Effect.Effect<boolean>
    /** Individual users following `userId`, newest first, that the viewer may see. */
    readonly followers: (
      userId: number,
      viewer: ListViewer,
      window: Window | undefined
    ) => Effect.Effect<{ rows: Array<UserRow>; total: number }>
    /** Users and organizations `userId` follows, newest first, that the viewer may see. */
    readonly following: (
      userId: number,
      viewer: ListViewer,
      window: Window | undefined
    ) => Effect.Effect<{ rows: Array<UserRow>; total: number }>
  }
>()("hearth/follows/FollowsRepo") {
  static readonly layer = Layer.effect(
    FollowsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const users = yield* UsersRepo

      const visibleTo = (viewer: ListViewer) => {
        if (viewer.publicOnly) return sql`u.visibility = 'public'`
        if (viewer.isAdmin) return sql`true`
        const limited = viewer.restricted ? sql`false` : sql`u.visibility = 'limited'`
        return sql`(u.visibility = 'public' OR u.id = ${viewer.id} OR ${limited}
          OR (u.type = 1 AND EXISTS (SELECT 1 FROM org_users m WHERE m.org_id = u.id AND m.user_id = ${viewer.id})))`
      }
      const paged = (window: Window | undefined) =>
        window === undefined ? sql`` : sql`LIMIT ${window.limit} OFFSET ${window.offset}`

      const list = (join: "followers" | "following", userId: number, viewer: ListViewer, window: Window | undefined) =>
        Effect.gen(function* () {
          const where =
            join === "followers"
              ? sql`f.follow_id = ${userId} AND u.id = f.user_id AND u.type = 0`
              : sql`f.user_id = ${userId} AND u.id = f.follow_id`
          const visible = visibleTo(viewer)
          const [count] = yield* sql`SELECT count(*) AS n FROM follows f, users u WHERE ${where} AND ${visible}`
          const rows = yield* sql`SELECT u.* FROM follows f, users u WHERE ${where} AND ${visible}
            ORDER BY f.id DESC ${paged(window)}`
          return { rows: rows.map(toUserRow), total: Number(count!.n) }
        })

      return FollowsRepo.of(
        sqlBoundary({
          follow: (userId, followId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`INSERT INTO follows (user_id, follow_id) VALUES (${userId}, ${followId})
              ON CONFLICT DO NOTHING RETURNING id`
                if (rows.length === 0) return false
                yield* users.adjustFollowCounts(userId, followId, 1)
                return true
              })
            ),
          unfollow: (userId, followId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows =
                  yield* sql`DELETE FROM follows WHERE user_id = ${userId} AND follow_id = ${followId} RETURNING id`
                if (rows.length === 0) return false
                yield* users.adjustFollowCounts(userId, followId, -1)
                return true
              })
            ),
          isFollowing: (userId, followId) =>
            Effect.map(
              sql`SELECT 1 FROM follows WHERE user_id = ${userId} AND follow_id = ${followId}`,
              (rows) => rows.length > 0
            ),
          followers: (userId, viewer, window) => list("followers", userId, viewer, window),
          following: (userId, viewer, window) => list("following", userId, viewer, window)
        })
      )
    })
  )
}

// SQL for stars and watches. Each write changes the row and the counters together, and only
// when a row was really inserted or deleted, so repeated and concurrent calls keep them exact.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import { type RepoRow, toRepoRow } from "../repos/Repo.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"

/** A page of rows; `undefined` lists everything (Forgejo's lists without `page`, models/repo/user_repo.go). */
export interface Window {
  readonly limit: number
  readonly offset: number
}

export class SocialRepo extends Context.Service<
  SocialRepo,
  {
    /**
     * Inserts the star and raises the repository's count; true when it was not there before. Run
     * inside the transaction that also adjusts the user's count (SocialService).
     */
    readonly star: (userId: number, repoId: number) => Effect.Effect<boolean>
    /** Deletes the star and lowers the repository's count; true when it was there. */
    readonly unstar: (userId: number, repoId: number) => Effect.Effect<boolean>
    readonly isStarred: (userId: number, repoId: number) => Effect.Effect<boolean>
    /** Watches in "normal" mode; true when the user was not watching before. */
    readonly watch: (userId: number, repoId: number) => Effect.Effect<boolean>
    /** Stops watching; true when the user was watching. */
    readonly unwatch: (userId: number, repoId: number) => Effect.Effect<boolean>
    readonly isWatching: (userId: number, repoId: number) => Effect.Effect<boolean>
    /** Repositories the user starred, with their owners, newest star first. */
    readonly starredBy: (userId: number) => Effect.Effect<Array<{ repo: RepoRow; owner: UserRow }>>
    /** Repositories the user watches (any mode but "dont"), with their owners. */
    readonly watchedBy: (userId: number) => Effect.Effect<Array<{ repo: RepoRow; owner: UserRow }>>
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly stargazers: (repoId: number, window: Window | undefined) => Effect.Effect<Array<UserRow>>
    readonly watchers: (repoId: number, window: Window | undefined) => Effect.Effect<Array<UserRow>>
  }
>()("hearth/social/SocialRepo") {
  static readonly layer = Layer.effect(
    SocialRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient

      const bump = (column: "num_stars" | "num_watches", repoId: number, delta: number) =>
        column === "num_stars"
          ? sql`UPDATE repositories SET num_stars = GREATEST(num_stars + ${delta}, 0) WHERE id = ${repoId}`
          : sql`UPDATE repositories SET num_watches = GREATEST(num_watches + ${delta}, 0) WHERE id = ${repoId}`

      // Rows of `r.*` followed by the owner's columns, prefixed `o_`.
      const withOwners = (rows: ReadonlyArray<Record<string, any>>) =>
        rows.map((row) => {
          const owner: Record<string, any> = {}
          const repo: Record<string, any> = {}
          for (const [key, value] of Object.entries(row)) {
            if (key.startsWith("o__")) owner[key.slice(3)] = value
            else repo[key] = value
          }
          return { repo: toRepoRow(repo), owner: toUserRow(owner) }
        })
      const ownerColumns = sql.literal(
        [
          "id",
          "type",
          "name",
          "lower_name",
          "full_name",
          "email",
          "keep_email_private",
          "passwd_hash",
          "must_change_password",
          "login_name",
          "source_id",
          "visibility",
          "is_admin",
          "is_active",
          "prohibit_login",
          "restricted",
          "allow_create_organization",
          "max_repo_creation",
          "repo_admin_change_team_access",
          "location",
          "website",
          "description",
          "pronouns",
          "language",
          "avatar",
          "num_followers",
          "num_following",
          "num_stars",
          "num_repos",
          "created_at",
          "updated_at",
          "last_login"
        ]
          .map((c) => `o.${c} AS o__${c}`)
          .join(", ")
      )
      const paged = (window: Window | undefined) =>
        window === undefined ? sql`` : sql`LIMIT ${window.limit} OFFSET ${window.offset}`

      return SocialRepo.of(
        sqlBoundary({
          star: (userId, repoId) =>
            Effect.gen(function* () {
              const rows = yield* sql`INSERT INTO stars (user_id, repo_id) VALUES (${userId}, ${repoId})
              ON CONFLICT DO NOTHING RETURNING repo_id`
              if (rows.length === 0) return false
              yield* bump("num_stars", repoId, 1)
              return true
            }),
          unstar: (userId, repoId) =>
            Effect.gen(function* () {
              const rows =
                yield* sql`DELETE FROM stars WHERE user_id = ${userId} AND repo_id = ${repoId} RETURNING repo_id`
              if (rows.length === 0) return false
              yield* bump("num_stars", repoId, -1)
              return true
            }),
          isStarred: (userId, repoId) =>
            Effect.map(sql`SELECT 1 FROM stars WHERE user_id = ${userId} AND repo_id = ${repoId}`, (r) => r.length > 0),
          watch: (userId, repoId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const inserted =
                  yield* sql`INSERT INTO watches (user_id, repo_id, mode) VALUES (${userId}, ${repoId}, 'normal')
              ON CONFLICT DO NOTHING RETURNING repo_id`
                // An explicit "don't watch" turned into a watch counts; an automatic one just becomes explicit.
                const revived =
                  inserted.length > 0
                    ? inserted
                    : yield* sql`UPDATE watches SET mode = 'normal'
              WHERE user_id = ${userId} AND repo_id = ${repoId} AND mode = 'dont' RETURNING repo_id`
                if (revived.length === 0) {
                  yield* sql`UPDATE watches SET mode = 'normal' WHERE user_id = ${userId} AND repo_id = ${repoId} AND mode = 'auto'`
                  return false
                }
                yield* bump("num_watches", repoId, 1)
                return true
              })
            ),
          unwatch: (userId, repoId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`DELETE FROM watches WHERE user_id = ${userId} AND repo_id = ${repoId}
              AND mode <> 'dont' RETURNING repo_id`
                if (rows.length === 0) return false
                yield* bump("num_watches", repoId, -1)
                return true
              })
            ),
          isWatching: (userId, repoId) =>
            Effect.map(
              sql`SELECT 1 FROM watches WHERE user_id = ${userId} AND repo_id = ${repoId} AND mode <> 'dont'`,
              (r) => r.length > 0
            ),
          starredBy: (userId) =>
            Effect.map(
              sql`SELECT r.*, ${ownerColumns} FROM stars s JOIN repositories r ON r.id = s.repo_id
              JOIN users o ON o.id = r.owner_id WHERE s.user_id = ${userId} ORDER BY s.created_at DESC, r.id DESC`,
              withOwners
            ),
          watchedBy: (userId) =>
            Effect.map(
              sql`SELECT r.*, ${ownerColumns} FROM watches w JOIN repositories r ON r.id = w.repo_id
              JOIN users o ON o.id = r.owner_id WHERE w.user_id = ${userId} AND w.mode <> 'dont'
              ORDER BY r.id`,
              withOwners
            ),
          transaction: (effect) => sql.withTransaction(effect),
          stargazers: (repoId, window) =>
            Effect.map(
              sql`SELECT u.* FROM stars s JOIN users u ON u.id = s.user_id WHERE s.repo_id = ${repoId}
              ORDER BY s.created_at, u.id ${paged(window)}`,
              (rows) => rows.map(toUserRow)
            ),
          watchers: (repoId, window) =>
            Effect.map(
              sql`SELECT u.* FROM watches w JOIN users u ON u.id = w.user_id WHERE w.repo_id = ${repoId}
              AND w.mode <> 'dont' ORDER BY w.created_at, u.id ${paged(window)}`,
              (rows) => rows.map(toUserRow)
            )
        })
      )
    })
  )
}

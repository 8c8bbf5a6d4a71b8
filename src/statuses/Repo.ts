// SQL for commit statuses (migration 0024_protection_statuses). Rules live in Service.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export interface StatusRow {
  readonly index: number
  readonly sha: string
  readonly state: string
  readonly targetUrl: string
  readonly description: string
  readonly context: string
  readonly creatorId: number | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface NewStatus {
  readonly state: string
  readonly targetUrl: string
  readonly description: string
  readonly context: string
  readonly creatorId: number
}

/** Forgejo's `sort` values of the status lists (routers/api/v1/repo/status.go, models/git/commit_status.go). */
export type StatusSort = "oldest" | "recentupdate" | "leastupdate" | "leastindex" | "highestindex" | "newest"

const toRow = (r: Record<string, any>): StatusRow => ({
  index: Number(r.idx),
  sha: r.sha,
  state: r.state,
  targetUrl: r.target_url,
  description: r.description,
  context: r.context,
  creatorId: r.creator_id === null ? null : Number(r.creator_id),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

export class StatusesRepo extends Context.Service<
  StatusesRepo,
  {
    /** Adds a status with the next index of (repository, commit). */
    readonly insert: (repoId: number, sha: string, status: NewStatus) => Effect.Effect<StatusRow>
    /** Every status of the commit (optionally of one state), sorted, one page. */
    readonly list: (
      repoId: number,
      sha: string,
      options: { readonly sort: StatusSort; readonly state: string | undefined },
      page: Page
    ) => Effect.Effect<{ readonly rows: Array<StatusRow>; readonly total: number }>
    /** One status of a commit by its index (the webhook `status` payload reads it). */
    readonly find: (repoId: number, sha: string, index: number) => Effect.Effect<Option.Option<StatusRow>>
    /** The latest status per context (newest first); every context when `page` is undefined. */
    readonly latest: (
      repoId: number,
      sha: string,
      page: Page | undefined
    ) => Effect.Effect<{ readonly rows: Array<StatusRow>; readonly total: number }>
    /** The contexts of the repository's statuses updated since `since`, sorted. */
    readonly recentContexts: (repoId: number, since: Date) => Effect.Effect<Array<string>>
  }
>()("hearth/statuses/StatusesRepo") {
  static readonly layer = Layer.effect(
    StatusesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const orderOf = (sort: StatusSort) => {
        switch (sort) {
          case "oldest":
            return sql`created_at ASC, idx ASC`
          case "recentupdate":
            return sql`updated_at DESC, idx DESC`
          case "leastupdate":
            return sql`updated_at ASC, idx ASC`
          // Forgejo's quirk: "leastindex" sorts by index descending and "highestindex" ascending.
          case "leastindex":
            return sql`idx DESC`
          case "highestindex":
            return sql`idx ASC`
          default:
            return sql`created_at DESC, idx DESC`
        }
      }
      return StatusesRepo.of(
        sqlBoundary({
          insert: (repoId, sha, status) =>
            sql.withTransaction(
              Effect.gen(function* () {
                // One index sequence per commit: concurrent posts for one commit take turns here.
                yield* sql`SELECT pg_advisory_xact_lock(hashtext(${`commit-status:${repoId}:${sha}`}))`
                const [row] = yield* sql`INSERT INTO commit_statuses
                  (repo_id, sha, idx, state, target_url, description, context, creator_id)
                  SELECT ${repoId}, ${sha}, COALESCE(max(idx), 0) + 1, ${status.state}, ${status.targetUrl},
                    ${status.description}, ${status.context}, ${status.creatorId}
                  FROM commit_statuses WHERE repo_id = ${repoId} AND sha = ${sha}
                  RETURNING *`
                return toRow(row!)
              })
            ),
          list: (repoId, sha, options, page) =>
            Effect.gen(function* () {
              const where = sql`repo_id = ${repoId} AND sha = ${sha} ${
                options.state === undefined ? sql`` : sql`AND state = ${options.state}`
              }`
              const [count] = yield* sql`SELECT count(*) AS n FROM commit_statuses WHERE ${where}`
              const rows = yield* sql`SELECT * FROM commit_statuses WHERE ${where}
                ORDER BY ${orderOf(options.sort)} LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toRow), total: Number(count!.n) }
            }),
          find: (repoId, sha, index) =>
            Effect.map(
              sql`SELECT * FROM commit_statuses WHERE repo_id = ${repoId} AND sha = ${sha} AND idx = ${index}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toRow)
            ),
          latest: (repoId, sha, page) =>
            Effect.gen(function* () {
              const window = page === undefined ? sql`` : sql`LIMIT ${page.limit} OFFSET ${page.offset}`
              const [count] = yield* sql`SELECT count(DISTINCT context) AS n FROM commit_statuses
                WHERE repo_id = ${repoId} AND sha = ${sha}`
              const rows = yield* sql`SELECT * FROM (
                  SELECT DISTINCT ON (context) * FROM commit_statuses
                  WHERE repo_id = ${repoId} AND sha = ${sha} ORDER BY context, idx DESC
                ) latest ORDER BY idx DESC ${window}`
              return { rows: rows.map(toRow), total: Number(count!.n) }
            }),
          recentContexts: (repoId, since) =>
            Effect.map(
              sql<{ context: string }>`SELECT DISTINCT context FROM commit_statuses
                WHERE repo_id = ${repoId} AND updated_at > ${since} ORDER BY context`,
              (rows) => rows.map((r) => r.context)
            )
        })
      )
    })
  )
}

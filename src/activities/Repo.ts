// SQL for activity feeds (Forgejo's models/activities/action.go: NotifyWatchers, GetFeeds,
// GetUserHeatmapDataByUser).
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"
import { type RepoFilter, visibleRepoCondition } from "../repos/Repo.ts"

export interface NewAction {
  readonly actUserId: number
  readonly opType: number
  readonly repoId: number
  readonly commentId?: number | undefined
  readonly isPrivate: boolean
  readonly refName?: string | undefined
  readonly content?: string | undefined
  readonly created: Date
}

export interface ActionRow {
  readonly id: number
  readonly userId: number
  readonly actUserId: number
  readonly opType: number
  readonly repoId: number
  readonly commentId: number
  readonly isPrivate: boolean
  readonly refName: string
  readonly content: string
  readonly created: Date
}

/** Which rows a feed reads, and what its reader may see of them. */
export interface FeedQuery {
  /** A user's or an organization's feed (`user_id`). */
  readonly userId?: number | undefined
  /** A repository's feed: its originals (`user_id = act_user_id`). */
  readonly repoId?: number | undefined
  /** A team's: the organization's rows in the team's repositories. */
  readonly team?: { readonly id: number; readonly orgId: number; readonly includesAll: boolean } | undefined
  /** `only-performed-by`, and the heatmap of a user: what the user did. */
  readonly actUserId?: number | undefined
  /** Forgejo's `IncludePrivate`: false keeps rows of private repositories out. */
  readonly includePrivate: boolean
  /** The repositories the reader may see; undefined when the caller checked it already. */
  readonly visible?: RepoFilter | undefined
  /** A day: [from, to). */
  readonly between?: readonly [Date, Date] | undefined
}

const toRow = (r: Record<string, unknown>): ActionRow => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  actUserId: Number(r.act_user_id),
  opType: Number(r.op_type),
  repoId: Number(r.repo_id),
  commentId: r.comment_id === null || r.comment_id === undefined ? 0 : Number(r.comment_id),
  isPrivate: Boolean(r.is_private),
  refName: String(r.ref_name ?? ""),
  content: String(r.content ?? ""),
  created: new Date(r.created as string | Date)
})

export class ActivitiesRepo extends Context.Service<
  ActivitiesRepo,
  {
    /**
     * Forgejo's `NotifyWatchers`: the action in the doer's feed, the owning organization's (unless
     * the doer is it) and each watcher's (who explicitly unwatched is not one). What each reader
     * may see is decided when the feed is read.
     */
    readonly record: (action: NewAction) => Effect.Effect<void>
    readonly feed: (query: FeedQuery, page: Page) => Effect.Effect<{ rows: Array<ActionRow>; total: number }>
    /** Actions per 15 minutes since `since` (Forgejo's `created_unix / 900 * 900`). */
    readonly heatmap: (
      query: FeedQuery,
      since: Date
    ) => Effect.Effect<Array<{ readonly timestamp: number; readonly contributions: number }>>
  }
>()("hearth/activities/ActivitiesRepo") {
  static readonly layer = Layer.effect(
    ActivitiesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient

      const where = (query: FeedQuery) => {
        const parts = [sql`TRUE`]
        if (query.userId !== undefined) parts.push(sql`a.user_id = ${query.userId}`)
        if (query.repoId !== undefined) parts.push(sql`a.repo_id = ${query.repoId} AND a.user_id = a.act_user_id`)
        if (query.team !== undefined) {
          const team = query.team
          parts.push(sql`a.user_id = ${team.orgId}`)
          parts.push(
            team.includesAll
              ? sql`a.repo_id IN (SELECT id FROM repositories WHERE owner_id = ${team.orgId})`
              : sql`a.repo_id IN (SELECT repo_id FROM team_repos WHERE team_id = ${team.id})`
          )
        }
        if (query.actUserId !== undefined) parts.push(sql`a.act_user_id = ${query.actUserId}`)
        if (!query.includePrivate) parts.push(sql`NOT a.is_private`)
        if (query.visible !== undefined && query.visible.all !== true)
          parts.push(sql`a.repo_id IN (SELECT r.id FROM repositories r JOIN users o ON o.id = r.owner_id
            WHERE ${visibleRepoCondition(sql, query.visible)})`)
        if (query.between !== undefined)
          parts.push(sql`a.created >= ${query.between[0]} AND a.created < ${query.between[1]}`)
        return sql.and(parts)
      }

      return ActivitiesRepo.of(
        sqlBoundary({
          record: (action) =>
            Effect.asVoid(sql`INSERT INTO actions
              (user_id, act_user_id, op_type, repo_id, comment_id, is_private, ref_name, content, created)
              SELECT feed.user_id, ${action.actUserId}, ${action.opType}, ${action.repoId}, ${action.commentId ?? null},
                ${action.isPrivate}, ${action.refName ?? ""}, ${action.content ?? ""}, ${action.created}
              FROM (
                SELECT ${action.actUserId}::bigint AS user_id
                UNION SELECT r.owner_id FROM repositories r JOIN users o ON o.id = r.owner_id
                  WHERE r.id = ${action.repoId} AND o.type = 1
                UNION SELECT w.user_id FROM watches w WHERE w.repo_id = ${action.repoId} AND w.mode <> 'dont'
              ) feed
              WHERE EXISTS (SELECT 1 FROM repositories WHERE id = ${action.repoId})
                AND EXISTS (SELECT 1 FROM users WHERE id = feed.user_id)`),
          feed: (query, page) =>
            Effect.gen(function* () {
              const condition = where(query)
              const [count] = yield* sql`SELECT count(*) AS n FROM actions a WHERE ${condition}`
              const rows = yield* sql`SELECT a.* FROM actions a WHERE ${condition}
                ORDER BY a.created DESC, a.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toRow), total: Number(count!.n) }
            }),
          heatmap: (query, since) =>
            Effect.map(
              sql`SELECT (floor(extract(epoch FROM a.created) / 900) * 900)::bigint AS ts, count(*) AS n
                FROM actions a WHERE ${where(query)} AND a.created > ${since}
                GROUP BY ts ORDER BY ts`,
              (rows) => rows.map((r) => ({ timestamp: Number(r.ts), contributions: Number(r.n) }))
            )
        })
      )
    })
  )
}

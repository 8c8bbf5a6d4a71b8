// SQL for notifications (migration 0020_notifications) and the receivers of an issue's activity
// (Forgejo's models/activities/notification.go). Rules live in Service.ts.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"

/** Forgejo's NotificationStatus. */
export const Status = { unread: 1, read: 2, pinned: 3 } as const
/** Forgejo's NotificationSource. */
export const Source = { issue: 1, pull: 2, commit: 3, repository: 4 } as const

export interface NotificationRow {
  readonly id: number
  readonly userId: number
  readonly repoId: number
  readonly status: number
  readonly source: number
  readonly issueId: number | null
  readonly commentId: number | null
  readonly updatedBy: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface NotificationFilter {
  readonly userId: number
  readonly repoId?: number | undefined
  /** Empty or undefined: every status. */
  readonly statuses?: ReadonlyArray<number> | undefined
  readonly sources?: ReadonlyArray<number> | undefined
  /** Updated at or after. */
  readonly since?: Date | undefined
  /** Updated at or before. */
  readonly before?: Date | undefined
}

const toRow = (r: Record<string, any>): NotificationRow => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  repoId: Number(r.repo_id),
  status: Number(r.status),
  source: Number(r.source),
  issueId: r.issue_id === null ? null : Number(r.issue_id),
  commentId: r.comment_id === null ? null : Number(r.comment_id),
  updatedBy: Number(r.updated_by),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

/** Comment types that make their poster a participant (Forgejo's `GetParticipantIDsByIssue`: comment, code, review). */
const PARTICIPATING_TYPES = [0, 21, 22]

export class NotificationsRepo extends Context.Service<
  NotificationsRepo,
  {
    readonly list: (filter: NotificationFilter, window: Page | undefined) => Effect.Effect<Array<NotificationRow>>
    readonly count: (filter: NotificationFilter) => Effect.Effect<number>
    readonly byId: (id: number) => Effect.Effect<NotificationRow | undefined>
    readonly setStatus: (id: number, status: number) => Effect.Effect<NotificationRow | undefined>
    /**
     * Forgejo's create-or-update: a new unread thread, or the existing one moved to the top with
     * `updated_by`; a read one becomes unread again (and points at `commentId`), a pinned one stays pinned.
     */
    readonly upsertIssue: (input: {
      readonly userIds: ReadonlyArray<number>
      readonly repoId: number
      readonly issueId: number
      readonly isPull: boolean
      readonly commentId: number | null
      readonly doerId: number
    }) => Effect.Effect<void>
    /**
     * The accounts one event may notify, in one statement: with `watchers`, who subscribed to the
     * issue, the repository's watchers (Forgejo's `GetRepoWatchersIDs`: normal and auto watches)
     * and the participants (the poster, who commented), minus who unsubscribed from the issue;
     * then `userIds`, and those named in `mentionedNames` (lower-case) whom the issues core
     * recorded as mentioned in the issue (already limited to readers not blocking the author);
     * never the doer (unless `toDoer`), never whoever blocked the doer.
     */
    readonly receivers: (input: {
      readonly issueId: number
      readonly repoId: number
      readonly posterId: number
      readonly doerId: number
      readonly watchers: boolean
      readonly userIds: ReadonlyArray<number>
      readonly mentionedNames: ReadonlyArray<string>
      readonly toDoer: boolean
    }) => Effect.Effect<Array<UserRow>>
    /** The issue's last plain comment, for `latest_comment_url`. */
    readonly lastCommentIds: (issueIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, number>>
  }
>()("hearth/notifications/NotificationsRepo") {
  static readonly layer = Layer.effect(
    NotificationsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const where = (f: NotificationFilter) => {
        const parts = [sql`user_id = ${f.userId}`]
        if (f.repoId !== undefined) parts.push(sql`repo_id = ${f.repoId}`)
        if (f.statuses !== undefined && f.statuses.length > 0) parts.push(sql`status IN ${sql.in(f.statuses)}`)
        if (f.sources !== undefined && f.sources.length > 0) parts.push(sql`source IN ${sql.in(f.sources)}`)
        if (f.since !== undefined) parts.push(sql`updated_at >= ${f.since}`)
        if (f.before !== undefined) parts.push(sql`updated_at <= ${f.before}`)
        return sql.and(parts)
      }

      return NotificationsRepo.of(
        sqlBoundary({
          list: (filter, window) =>
            Effect.map(
              sql`SELECT * FROM notifications WHERE ${where(filter)} ORDER BY updated_at DESC, id DESC
                ${window === undefined ? sql`` : sql`LIMIT ${window.limit} OFFSET ${window.offset}`}`,
              (rows) => rows.map(toRow)
            ),
          count: (filter) =>
            Effect.map(sql`SELECT count(*) AS n FROM notifications WHERE ${where(filter)}`, (rows) =>
              Number(rows[0]!.n)
            ),
          byId: (id) =>
            Effect.map(sql`SELECT * FROM notifications WHERE id = ${id}`, (rows) =>
              rows[0] === undefined ? undefined : toRow(rows[0])
            ),
          setStatus: (id, status) =>
            Effect.map(sql`UPDATE notifications SET status = ${status} WHERE id = ${id} RETURNING *`, (rows) =>
              rows[0] === undefined ? undefined : toRow(rows[0])
            ),
          upsertIssue: ({ userIds, repoId, issueId, isPull, commentId, doerId }) =>
            userIds.length === 0
              ? Effect.void
              : Effect.asVoid(
                  sql`INSERT INTO notifications (user_id, repo_id, status, source, issue_id, comment_id, updated_by)
                  SELECT u, ${repoId}, ${Status.unread}, ${isPull ? Source.pull : Source.issue}, ${issueId}, ${commentId}, ${doerId}
                  FROM unnest(${sql.unsafe(`ARRAY[${userIds.map((id) => Math.trunc(id)).join(",")}]::bigint[]`)}) AS u
                  ON CONFLICT (user_id, issue_id) DO UPDATE SET
                    updated_by = excluded.updated_by,
                    updated_at = now(),
                    comment_id = CASE WHEN notifications.status = ${Status.read} THEN excluded.comment_id ELSE notifications.comment_id END,
                    status = CASE WHEN notifications.status = ${Status.read} THEN ${Status.unread} ELSE notifications.status END`
                ),
          receivers: ({ issueId, repoId, posterId, doerId, watchers, userIds, mentionedNames, toDoer }) => {
            const parts = []
            if (watchers) {
              // Who unsubscribed from the issue hears nothing of it but what names them.
              parts.push(sql`(SELECT user_id AS id FROM issue_watches WHERE issue_id = ${issueId} AND is_watching
                UNION SELECT user_id FROM watches WHERE repo_id = ${repoId} AND mode IN ('normal', 'auto')
                UNION SELECT poster_id FROM comments WHERE issue_id = ${issueId} AND type IN ${sql.in(PARTICIPATING_TYPES)}
                UNION SELECT ${posterId}::bigint
                EXCEPT SELECT user_id FROM issue_watches WHERE issue_id = ${issueId} AND NOT is_watching)`)
            }
            if (userIds.length > 0) parts.push(sql`(SELECT id FROM users WHERE id IN ${sql.in(userIds)})`)
            if (mentionedNames.length > 0) {
              parts.push(sql`(SELECT m.user_id FROM issue_mentions m JOIN users mu ON mu.id = m.user_id
                WHERE m.issue_id = ${issueId} AND mu.lower_name IN ${sql.in(mentionedNames)})`)
            }
            if (parts.length === 0) return Effect.succeed([])
            return Effect.map(
              sql`SELECT u.* FROM users u WHERE u.id IN (${sql.join(" UNION ", false)(parts)})
                ${toDoer ? sql`` : sql`AND u.id <> ${doerId}`}
                AND NOT EXISTS (SELECT 1 FROM blocked_users b WHERE b.user_id = u.id AND b.block_id = ${doerId})
                ORDER BY u.id`,
              (rows) => rows.map(toUserRow)
            )
          },
          lastCommentIds: (issueIds) =>
            issueIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT issue_id, max(id) AS id FROM comments WHERE type = 0 AND issue_id = ANY(${issueIds}::int8[]) GROUP BY issue_id`,
                  (rows) => new Map(rows.map((r) => [Number(r.issue_id), Number(r.id)]))
                )
        })
      )
    })
  )
}

// SQL for reactions, issue subscriptions and pins (tables and the `pin_order` column of migration
// 0019_issue_extras). Rules live in Extras.ts.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export interface ReactionRow {
  readonly id: number
  readonly type: string
  readonly userId: number
  readonly createdAt: Date
  /** null: a reaction to the issue itself. */
  readonly commentId: number | null
}

type Row = Record<string, any>
const num = (v: unknown) => Number(v)
const toReaction = (r: Row): ReactionRow => ({
  id: num(r.id),
  type: r.type,
  userId: num(r.user_id),
  createdAt: r.created_at,
  commentId: r.comment_id === null || r.comment_id === undefined ? null : num(r.comment_id)
})

/** A reaction's target: an issue, or one of its comments. */
export interface ReactionTarget {
  readonly issueId: number
  readonly commentId: number | null
}

export class IssueExtrasRepo extends Context.Service<
  IssueExtrasRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** The target's reactions of the `types` given, oldest first (issue lists exclude comment reactions). */
    readonly reactions: (
      target: ReactionTarget,
      types: ReadonlyArray<string>,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<ReactionRow>; readonly total: number }>
    /**
     * Every reaction of the `types` given on the issue and on all its comments, oldest first, in one
     * query (the issue page: one read, not one per comment).
     */
    readonly allReactions: (issueId: number, types: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReactionRow>>
    /** Adds the reaction; `created: false` with the existing one when the user had already given it. */
    readonly addReaction: (
      target: ReactionTarget,
      userId: number,
      type: string
    ) => Effect.Effect<{ readonly row: ReactionRow; readonly created: boolean }>
    readonly removeReaction: (target: ReactionTarget, userId: number, type: string) => Effect.Effect<void>

    /** The explicit subscription row of `userId` on the issue, if any. */
    readonly explicitWatch: (issueId: number, userId: number) => Effect.Effect<boolean | undefined>
    /** Whether the user takes part automatically: poster, assignee, commenter or repository watcher. */
    readonly participates: (issueId: number, repoId: number, userId: number) => Effect.Effect<boolean>
    readonly setWatch: (issueId: number, userId: number, watching: boolean) => Effect.Effect<void>
    /**
     * Who explicitly subscribed to (`watching`) or unsubscribed from the issue (Forgejo's
     * `GetIssueWatchersIDs`): what notifications add to, or take from, an issue's receivers.
     */
    readonly explicitWatchers: (issueId: number, watching: boolean) => Effect.Effect<ReadonlyArray<number>>
    /**
     * Ids of the issue's subscribers: explicit subscriptions, plus the poster, assignees and
     * commenters who did not unsubscribe; active accounts allowed to sign in only; by id.
     */
    readonly subscribers: (
      issueId: number,
      window: Page | undefined
    ) => Effect.Effect<{ readonly ids: ReadonlyArray<number>; readonly total: number }>

    readonly pinnedCount: (repoId: number, isPull: boolean) => Effect.Effect<number>
    /** Pins at the end of its kind's list, unless already pinned or `max` are; the new order, or undefined. */
    readonly pin: (issueId: number, max: number) => Effect.Effect<"pinned" | "already" | "full">
    /** Unpins and closes the gap; false when it was not pinned. */
    readonly unpin: (issueId: number) => Effect.Effect<boolean>
    /** Moves a pinned issue to `position` (clamped to the last); false when it is not pinned. */
    readonly movePin: (issueId: number, position: number) => Effect.Effect<boolean>
    readonly pinnedIssueIds: (repoId: number, isPull: boolean) => Effect.Effect<ReadonlyArray<number>>
  }
>()("hearth/issues/IssueExtrasRepo") {
  static readonly layer = Layer.effect(
    IssueExtrasRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const targetWhere = (t: ReactionTarget) =>
        t.commentId === null
          ? sql`issue_id = ${t.issueId} AND comment_id IS NULL`
          : sql`issue_id = ${t.issueId} AND comment_id = ${t.commentId}`
      const kindOf = (issueId: number) =>
        Effect.map(
          sql`SELECT repo_id, is_pull, pin_order FROM issues WHERE id = ${issueId} FOR UPDATE`,
          (rows) => rows[0] as Row | undefined
        )
      // Pins of one kind in one repository change one at a time (the repository row is the lock).
      const lockRepo = (repoId: number) => sql`SELECT id FROM repositories WHERE id = ${repoId} FOR UPDATE`
      const tx = transaction(sql)
      return IssueExtrasRepo.of(
        sqlBoundary({
          transaction: tx,
          reactions: (target, types, window) =>
            Effect.gen(function* () {
              if (types.length === 0) return { rows: [], total: 0 }
              const where = sql`${targetWhere(target)} AND type IN ${sql.in(types)}`
              const [count] = yield* sql`SELECT count(*) AS n FROM reactions WHERE ${where}`
              const rows =
                window === undefined
                  ? yield* sql`SELECT * FROM reactions WHERE ${where} ORDER BY created_at, id`
                  : yield* sql`SELECT * FROM reactions WHERE ${where} ORDER BY created_at, id
                      LIMIT ${window.limit} OFFSET ${window.offset}`
              return { rows: rows.map(toReaction), total: num(count!.n) }
            }),
          allReactions: (issueId, types) =>
            types.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`SELECT * FROM reactions WHERE issue_id = ${issueId} AND type IN ${sql.in(types)}
                    ORDER BY created_at, id`,
                  (rows) => rows.map(toReaction)
                ),
          addReaction: (target, userId, type) =>
            Effect.gen(function* () {
              const inserted = yield* sql`INSERT INTO reactions (type, issue_id, comment_id, user_id)
                VALUES (${type}, ${target.issueId}, ${target.commentId}, ${userId})
                ON CONFLICT DO NOTHING RETURNING *`
              if (inserted.length > 0) return { row: toReaction(inserted[0]!), created: true }
              const existing = yield* sql`SELECT * FROM reactions
                WHERE ${targetWhere(target)} AND user_id = ${userId} AND type = ${type}`
              return { row: toReaction(existing[0]!), created: false }
            }),
          removeReaction: (target, userId, type) =>
            Effect.asVoid(
              sql`DELETE FROM reactions WHERE ${targetWhere(target)} AND user_id = ${userId} AND type = ${type}`
            ),

          explicitWatch: (issueId, userId) =>
            Effect.map(
              sql`SELECT is_watching FROM issue_watches WHERE issue_id = ${issueId} AND user_id = ${userId}`,
              (rows) => (rows.length === 0 ? undefined : Boolean(rows[0]!.is_watching))
            ),
          participates: (issueId, repoId, userId) =>
            Effect.map(
              sql`SELECT
                EXISTS (SELECT 1 FROM issues WHERE id = ${issueId} AND poster_id = ${userId})
                OR EXISTS (SELECT 1 FROM issue_assignees WHERE issue_id = ${issueId} AND assignee_id = ${userId})
                OR EXISTS (SELECT 1 FROM comments WHERE issue_id = ${issueId} AND poster_id = ${userId} AND type = 0)
                OR EXISTS (SELECT 1 FROM watches WHERE repo_id = ${repoId} AND user_id = ${userId}
                  AND mode IN ('normal', 'auto')) AS yes`,
              (rows) => Boolean(rows[0]!.yes)
            ),
          setWatch: (issueId, userId, watching) =>
            Effect.asVoid(sql`INSERT INTO issue_watches (issue_id, user_id, is_watching)
              VALUES (${issueId}, ${userId}, ${watching})
              ON CONFLICT (issue_id, user_id) DO UPDATE SET is_watching = EXCLUDED.is_watching, updated_at = now()`),
          explicitWatchers: (issueId, watching) =>
            Effect.map(
              sql`SELECT user_id FROM issue_watches WHERE issue_id = ${issueId} AND is_watching = ${watching}`,
              (rows) => rows.map((r) => Number(r.user_id))
            ),
          subscribers: (issueId, window) =>
            Effect.gen(function* () {
              const candidates = sql`(
                SELECT user_id AS id FROM issue_watches WHERE issue_id = ${issueId} AND is_watching
                UNION SELECT poster_id FROM issues WHERE id = ${issueId}
                UNION SELECT assignee_id FROM issue_assignees WHERE issue_id = ${issueId}
                UNION SELECT poster_id FROM comments WHERE issue_id = ${issueId} AND type = 0
              ) c`
              const where = sql`c.id IN (SELECT u.id FROM users u WHERE u.is_active AND NOT u.prohibit_login)
                AND c.id NOT IN (SELECT w.user_id FROM issue_watches w WHERE w.issue_id = ${issueId} AND NOT w.is_watching)`
              const [count] = yield* sql`SELECT count(*) AS n FROM ${candidates} WHERE ${where}`
              const rows =
                window === undefined
                  ? yield* sql`SELECT c.id FROM ${candidates} WHERE ${where} ORDER BY c.id`
                  : yield* sql`SELECT c.id FROM ${candidates} WHERE ${where} ORDER BY c.id
                      LIMIT ${window.limit} OFFSET ${window.offset}`
              return { ids: rows.map((r) => num(r.id)), total: num(count!.n) }
            }),

          pinnedCount: (repoId, isPull) =>
            Effect.map(
              sql`SELECT count(*) AS n FROM issues WHERE repo_id = ${repoId} AND is_pull = ${isPull} AND pin_order > 0`,
              (rows) => num(rows[0]!.n)
            ),
          pin: (issueId, max) =>
            tx(
              Effect.gen(function* () {
                const issue = yield* kindOf(issueId)
                if (issue === undefined || num(issue.pin_order) > 0) return "already" as const
                yield* lockRepo(num(issue.repo_id))
                const [top] = yield* sql`SELECT count(*) AS n, COALESCE(max(pin_order), 0) AS m FROM issues
                  WHERE repo_id = ${issue.repo_id} AND is_pull = ${issue.is_pull} AND pin_order > 0`
                if (num(top!.n) >= max) return "full" as const
                yield* sql`UPDATE issues SET pin_order = ${num(top!.m) + 1} WHERE id = ${issueId}`
                return "pinned" as const
              })
            ),
          unpin: (issueId) =>
            tx(
              Effect.gen(function* () {
                const issue = yield* kindOf(issueId)
                if (issue === undefined || num(issue.pin_order) === 0) return false
                yield* lockRepo(num(issue.repo_id))
                yield* sql`UPDATE issues SET pin_order = 0 WHERE id = ${issueId}`
                yield* sql`UPDATE issues SET pin_order = pin_order - 1 WHERE repo_id = ${issue.repo_id}
                  AND is_pull = ${issue.is_pull} AND pin_order > ${issue.pin_order}`
                return true
              })
            ),
          movePin: (issueId, position) =>
            tx(
              Effect.gen(function* () {
                const issue = yield* kindOf(issueId)
                if (issue === undefined || num(issue.pin_order) === 0) return false
                yield* lockRepo(num(issue.repo_id))
                const [top] = yield* sql`SELECT COALESCE(max(pin_order), 0) AS m FROM issues
                  WHERE repo_id = ${issue.repo_id} AND is_pull = ${issue.is_pull} AND pin_order > 0`
                const from = num(issue.pin_order)
                const to = Math.min(position, num(top!.m))
                if (to === from) return true
                // Forgejo's MovePin: close the gap, open one at the new place.
                yield* sql`UPDATE issues SET pin_order = pin_order - 1 WHERE repo_id = ${issue.repo_id}
                  AND is_pull = ${issue.is_pull} AND pin_order > ${from}`
                yield* sql`UPDATE issues SET pin_order = pin_order + 1 WHERE repo_id = ${issue.repo_id}
                  AND is_pull = ${issue.is_pull} AND pin_order >= ${to} AND id <> ${issueId}`
                yield* sql`UPDATE issues SET pin_order = ${to} WHERE id = ${issueId}`
                return true
              })
            ),
          pinnedIssueIds: (repoId, isPull) =>
            Effect.map(
              sql`SELECT id FROM issues WHERE repo_id = ${repoId} AND is_pull = ${isPull} AND pin_order > 0
                ORDER BY pin_order`,
              (rows) => rows.map((r) => num(r.id))
            )
        })
      )
    })
  )
}

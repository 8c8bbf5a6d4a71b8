// SQL for time tracking (tables `tracked_times` and `stopwatches` of migration
// 0022_issue_deps_times; Forgejo's models/issues tracked_time.go, stopwatch.go). Every change writes
// its timeline comment in the same transaction, with Forgejo's content `|<seconds>` and, where a
// time was made, its id. Rules live in Times.ts.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"
import { commentType } from "./Present.ts"

export interface TrackedTimeRow {
  readonly id: number
  readonly issueId: number
  readonly userId: number
  /** Seconds. */
  readonly time: number
  readonly createdAt: Date
  readonly deleted: boolean
}

export interface StopwatchRow {
  readonly issueId: number
  readonly userId: number
  readonly createdAt: Date
}

/** Which times a list shows; absent members do not filter. `since`/`before` bound the creation time. */
export interface TimesFilter {
  readonly issueId?: number | undefined
  readonly repoId?: number | undefined
  readonly userId?: number | undefined
  readonly since?: Date | undefined
  readonly before?: Date | undefined
}

type Row = Record<string, any>
const num = (v: unknown) => Number(v)
const toTime = (r: Row): TrackedTimeRow => ({
  id: num(r.id),
  issueId: num(r.issue_id),
  userId: num(r.user_id),
  time: num(r.time),
  createdAt: r.created_at,
  deleted: Boolean(r.deleted)
})
const toStopwatch = (r: Row): StopwatchRow => ({
  issueId: num(r.issue_id),
  userId: num(r.user_id),
  createdAt: r.created_at
})

export class IssueTimesRepo extends Context.Service<
  IssueTimesRepo,
  {
    /** Live (not deleted) times, oldest first. */
    readonly list: (
      filter: TimesFilter,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<TrackedTimeRow>; readonly total: number }>
    readonly byId: (id: number) => Effect.Effect<TrackedTimeRow | undefined>
    readonly byIds: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<TrackedTimeRow>>
    /** Adds `seconds` for `userId` (the `add_time_manual` comment is theirs). */
    readonly add: (issueId: number, userId: number, seconds: number, created: Date) => Effect.Effect<TrackedTimeRow>
    /** Deletes the user's times on the issue; the seconds removed (undefined: there were none, nothing written). */
    readonly resetUser: (issueId: number, userId: number, at: Date) => Effect.Effect<number | undefined>
    /** Deletes one time (the `delete_time_manual` comment is its user's); false when already deleted. */
    readonly deleteOne: (time: TrackedTimeRow, at: Date) => Effect.Effect<boolean>

    readonly stopwatch: (userId: number, issueId: number) => Effect.Effect<StopwatchRow | undefined>
    /**
     * Starts the user's stopwatch on the issue, first stopping one running on another issue (as
     * Forgejo's `CreateIssueStopwatch`); false when one already runs on this issue.
     */
    readonly start: (userId: number, issueId: number, at: Date) => Effect.Effect<boolean>
    /** Stops it into a tracked time (`stop_tracking`); undefined when none runs. */
    readonly finish: (userId: number, issueId: number, at: Date) => Effect.Effect<TrackedTimeRow | undefined>
    /** Throws it away (`cancel_tracking`); false when none runs. */
    readonly cancel: (userId: number, issueId: number, at: Date) => Effect.Effect<boolean>
    /** The user's running stopwatches, oldest first, with their issues' number, title and repository. */
    readonly stopwatchesOf: (
      userId: number,
      window: Page | undefined
    ) => Effect.Effect<{
      readonly rows: ReadonlyArray<
        StopwatchRow & { readonly index: number; readonly title: string; readonly repoId: number }
      >
      readonly total: number
    }>
  }
>()("hearth/issues/IssueTimesRepo") {
  static readonly layer = Layer.effect(
    IssueTimesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const tx = transaction(sql)
      const comment = (issueId: number, userId: number, type: string, at: Date, seconds?: number, timeId?: number) =>
        sql`INSERT INTO comments (issue_id, type, poster_id, body, time_id, created_at, updated_at)
          VALUES (${issueId}, ${commentType(type as "comment")}, ${userId},
            ${seconds === undefined ? "" : `|${seconds}`}, ${timeId ?? null}, ${at}, ${at})`
      const where = (f: TimesFilter) => {
        const parts = [sql`NOT t.deleted`]
        if (f.issueId !== undefined) parts.push(sql`t.issue_id = ${f.issueId}`)
        if (f.userId !== undefined) parts.push(sql`t.user_id = ${f.userId}`)
        if (f.repoId !== undefined) parts.push(sql`t.issue_id IN (SELECT id FROM issues WHERE repo_id = ${f.repoId})`)
        if (f.since !== undefined) parts.push(sql`t.created_at >= ${f.since}`)
        if (f.before !== undefined) parts.push(sql`t.created_at <= ${f.before}`)
        return sql.and(parts)
      }
      const insertTime = (issueId: number, userId: number, seconds: number, created: Date) =>
        Effect.map(
          sql`INSERT INTO tracked_times (issue_id, user_id, time, created_at)
            VALUES (${issueId}, ${userId}, ${seconds}, ${created}) RETURNING *`,
          (rows) => toTime(rows[0]!)
        )
      const finish = (userId: number, issueId: number, at: Date) =>
        Effect.gen(function* () {
          const [sw] = yield* sql`DELETE FROM stopwatches WHERE user_id = ${userId} AND issue_id = ${issueId}
            RETURNING created_at`
          if (sw === undefined) return undefined
          const seconds = Math.max(0, Math.floor((at.getTime() - (sw.created_at as Date).getTime()) / 1000))
          const time = yield* insertTime(issueId, userId, seconds, at)
          yield* comment(issueId, userId, "stop_tracking", at, seconds, time.id)
          return time
        })
      return IssueTimesRepo.of(
        sqlBoundary({
          list: (filter, window) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM tracked_times t WHERE ${where(filter)}`
              const rows =
                window === undefined
                  ? yield* sql`SELECT t.* FROM tracked_times t WHERE ${where(filter)} ORDER BY t.id`
                  : yield* sql`SELECT t.* FROM tracked_times t WHERE ${where(filter)} ORDER BY t.id
                      LIMIT ${window.limit} OFFSET ${window.offset}`
              return { rows: rows.map(toTime), total: num(count!.n) }
            }),
          byId: (id) =>
            Effect.map(sql`SELECT * FROM tracked_times WHERE id = ${id}`, (rows) =>
              rows.length === 0 ? undefined : toTime(rows[0]!)
            ),
          byIds: (ids) =>
            ids.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT * FROM tracked_times WHERE id IN ${sql.in(ids)}`, (rows) => rows.map(toTime)),
          add: (issueId, userId, seconds, created) =>
            tx(
              Effect.gen(function* () {
                const time = yield* insertTime(issueId, userId, seconds, created)
                yield* comment(issueId, userId, "add_time_manual", new Date(), seconds, time.id)
                return time
              })
            ),
          resetUser: (issueId, userId, at) =>
            tx(
              Effect.gen(function* () {
                const removed = yield* sql`UPDATE tracked_times SET deleted = true
                  WHERE issue_id = ${issueId} AND user_id = ${userId} AND NOT deleted RETURNING time`
                const seconds = removed.reduce((sum, r) => sum + num(r.time), 0)
                if (removed.length === 0) return undefined
                yield* comment(issueId, userId, "delete_time_manual", at, seconds)
                return seconds
              })
            ),
          deleteOne: (time, at) =>
            tx(
              Effect.gen(function* () {
                const done = yield* sql`UPDATE tracked_times SET deleted = true WHERE id = ${time.id} AND NOT deleted
                  RETURNING id`
                if (done.length === 0) return false
                yield* comment(time.issueId, time.userId, "delete_time_manual", at, time.time)
                return true
              })
            ),

          stopwatch: (userId, issueId) =>
            Effect.map(sql`SELECT * FROM stopwatches WHERE user_id = ${userId} AND issue_id = ${issueId}`, (rows) =>
              rows.length === 0 ? undefined : toStopwatch(rows[0]!)
            ),
          start: (userId, issueId, at) =>
            tx(
              Effect.gen(function* () {
                // One start at a time per user (the user row is the lock).
                yield* sql`SELECT id FROM users WHERE id = ${userId} FOR UPDATE`
                const running = yield* sql`SELECT issue_id FROM stopwatches WHERE user_id = ${userId}`
                if (running.some((r) => num(r.issue_id) === issueId)) return false
                for (const r of running) yield* finish(userId, num(r.issue_id), at)
                yield* sql`INSERT INTO stopwatches (issue_id, user_id, created_at) VALUES (${issueId}, ${userId}, ${at})`
                yield* comment(issueId, userId, "start_tracking", at)
                return true
              })
            ),
          finish: (userId, issueId, at) => tx(finish(userId, issueId, at)),
          cancel: (userId, issueId, at) =>
            tx(
              Effect.gen(function* () {
                const gone = yield* sql`DELETE FROM stopwatches WHERE user_id = ${userId} AND issue_id = ${issueId}
                  RETURNING id`
                if (gone.length === 0) return false
                yield* comment(issueId, userId, "cancel_tracking", at)
                return true
              })
            ),
          stopwatchesOf: (userId, window) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM stopwatches WHERE user_id = ${userId}`
              const query = sql`SELECT s.*, i.index, i.title, i.repo_id FROM stopwatches s
                JOIN issues i ON i.id = s.issue_id WHERE s.user_id = ${userId} ORDER BY s.created_at, s.id`
              const rows =
                window === undefined ? yield* query : yield* sql`${query} LIMIT ${window.limit} OFFSET ${window.offset}`
              return {
                rows: rows.map((r) => ({
                  ...toStopwatch(r),
                  index: num(r.index),
                  title: r.title as string,
                  repoId: num(r.repo_id)
                })),
                total: num(count!.n)
              }
            })
        })
      )
    })
  )
}

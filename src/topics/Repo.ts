// SQL for repository topics (tables in migration 0013_topics). Rules live in Service.ts.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export interface TopicRow {
  readonly id: number
  readonly name: string
  readonly repoCount: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface Listed<A> {
  readonly rows: Array<A>
  readonly total: number
}

const toTopicRow = (r: Record<string, any>): TopicRow => ({
  id: Number(r.id),
  name: r.name,
  repoCount: Number(r.repo_count),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

/** `%term%` for LIKE, with LIKE's own characters taken literally. */
const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export class TopicsRepo extends Context.Service<
  TopicsRepo,
  {
    /** The repository's topic names by name; every one when `window` is undefined. */
    readonly listForRepo: (repoId: number, window: Page | undefined) => Effect.Effect<Listed<string>>
    /** Topics whose name contains `keyword`, most used first; every one when `window` is undefined. */
    readonly search: (keyword: string, window: Page | undefined) => Effect.Effect<Listed<TopicRow>>
    readonly countForRepo: (repoId: number) => Effect.Effect<number>
    /** Gives the repository exactly these topics (valid, lower-case, distinct names). */
    readonly replace: (repoId: number, names: ReadonlyArray<string>) => Effect.Effect<void>
    /** Adds one topic (nothing when the repository has it already). */
    readonly add: (repoId: number, name: string) => Effect.Effect<void>
    /** Removes one topic; false when the repository did not have it. */
    readonly remove: (repoId: number, name: string) => Effect.Effect<boolean>
  }
>()("hearth/topics/TopicsRepo") {
  static readonly layer = Layer.effect(
    TopicsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const windowOf = (window: Page | undefined) =>
        window === undefined ? sql`` : sql`LIMIT ${window.limit} OFFSET ${window.offset}`
      const withCount = sql`t.*, (SELECT count(*) FROM repo_topics c WHERE c.topic_id = t.id) AS repo_count`

      /** Rewrites `repositories.topics` (most used first, then by name), as Forgejo after each change. */
      const refreshColumn = (repoId: number) =>
        sql`UPDATE repositories SET topics = COALESCE((
            SELECT json_agg(s.name ORDER BY s.repo_count DESC, s.name)::text FROM (
              SELECT ${withCount} FROM topics t JOIN repo_topics rt ON rt.topic_id = t.id WHERE rt.repo_id = ${repoId}
            ) s), '[]') WHERE id = ${repoId}`

      /** The topic's id, created when new; its `updated_at` moves (its repository count changes). */
      const topicId = (name: string) =>
        Effect.map(
          sql`INSERT INTO topics (name) VALUES (${name})
            ON CONFLICT (name) DO UPDATE SET updated_at = now() RETURNING id`,
          (rows) => Number(rows[0]!.id)
        )

      const link = (repoId: number, name: string) =>
        Effect.flatMap(
          topicId(name),
          (id) => sql`INSERT INTO repo_topics (repo_id, topic_id) VALUES (${repoId}, ${id}) ON CONFLICT DO NOTHING`
        )

      return TopicsRepo.of(
        sqlBoundary({
          listForRepo: (repoId, window) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM repo_topics WHERE repo_id = ${repoId}`
              const rows = yield* sql`SELECT t.name FROM topics t JOIN repo_topics rt ON rt.topic_id = t.id
              WHERE rt.repo_id = ${repoId} ORDER BY t.name ${windowOf(window)}`
              return { rows: rows.map((r) => r.name as string), total: Number(count!.n) }
            }),
          search: (keyword, window) =>
            Effect.gen(function* () {
              const where = keyword === "" ? sql`TRUE` : sql`t.name LIKE ${likePattern(keyword.toLowerCase())}`
              const [count] = yield* sql`SELECT count(*) AS n FROM topics t WHERE ${where}`
              const rows = yield* sql`SELECT ${withCount} FROM topics t WHERE ${where}
              ORDER BY repo_count DESC, t.id ${windowOf(window)}`
              return { rows: rows.map(toTopicRow), total: Number(count!.n) }
            }),
          countForRepo: (repoId) =>
            Effect.map(sql`SELECT count(*) AS n FROM repo_topics WHERE repo_id = ${repoId}`, (rows) =>
              Number(rows[0]!.n)
            ),
          replace: (repoId, names) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const current = (yield* sql`SELECT t.id, t.name FROM topics t JOIN repo_topics rt ON rt.topic_id = t.id
                WHERE rt.repo_id = ${repoId}`) as ReadonlyArray<{ id: unknown; name: string }>
                const removed = current.filter((t) => !names.includes(t.name)).map((t) => Number(t.id))
                if (removed.length > 0) {
                  yield* sql`DELETE FROM repo_topics WHERE repo_id = ${repoId} AND topic_id IN ${sql.in(removed)}`
                  yield* sql`UPDATE topics SET updated_at = now() WHERE id IN ${sql.in(removed)}`
                }
                const have = new Set(current.map((t) => t.name))
                for (const name of names) if (!have.has(name)) yield* link(repoId, name)
                yield* refreshColumn(repoId)
              })
            ),
          add: (repoId, name) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const [has] = yield* sql`SELECT 1 AS one FROM topics t JOIN repo_topics rt ON rt.topic_id = t.id
                WHERE rt.repo_id = ${repoId} AND t.name = ${name}`
                if (has !== undefined) return
                yield* link(repoId, name)
                yield* refreshColumn(repoId)
              })
            ),
          remove: (repoId, name) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`DELETE FROM repo_topics rt USING topics t
                WHERE rt.topic_id = t.id AND rt.repo_id = ${repoId} AND t.name = ${name} RETURNING t.id`
                if (rows.length === 0) return false
                yield* sql`UPDATE topics SET updated_at = now() WHERE id = ${Number(rows[0]!.id)}`
                yield* refreshColumn(repoId)
                return true
              })
            )
        })
      )
    })
  )
}

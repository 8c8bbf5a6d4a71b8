// SQL for the readable account of background jobs (migration 0004): one row per job, keyed by
// the job's idempotency key, updated as its attempts run.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export type JobState = "queued" | "running" | "retrying" | "succeeded" | "failed"

export interface JobRow {
  readonly id: number
  readonly kind: string
  readonly key: string
  readonly repoId: number | null
  readonly doerId: number | null
  readonly state: JobState
  readonly attempts: number
  readonly lastError: string
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly finishedAt: Date | null
}

const toJobRow = (r: Record<string, any>): JobRow => ({
  id: Number(r.id),
  kind: r.kind,
  key: r.idempotency_key,
  repoId: r.repo_id === null ? null : Number(r.repo_id),
  doerId: r.doer_id === null ? null : Number(r.doer_id),
  state: r.state,
  attempts: Number(r.attempts),
  lastError: r.last_error,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  finishedAt: r.finished_at ?? null
})

export class JobsRepo extends Context.Service<
  JobsRepo,
  {
    /** The job with this key, created as `queued` unless it exists already (then returned as it is). */
    readonly enqueue: (job: {
      readonly kind: string
      readonly key: string
      readonly repoId?: number
      readonly doerId?: number
    }) => Effect.Effect<JobRow>
    readonly find: (key: string) => Effect.Effect<Option.Option<JobRow>>
    /** Attempt `attempt` of a step starts: `running`; `attempts` is the highest attempt any step needed. */
    readonly started: (key: string, attempt: number) => Effect.Effect<void>
    /** An attempt failed: `retrying` (another comes) or `failed` (the last one), with the reason. */
    readonly attemptFailed: (key: string, error: string, final: boolean) => Effect.Effect<void>
    readonly succeeded: (key: string) => Effect.Effect<void>
    /** Jobs about one repository (newest first), or all of them (`repoId` undefined). */
    readonly list: (
      repoId: number | undefined,
      page: Page
    ) => Effect.Effect<{ readonly rows: Array<JobRow>; readonly total: number }>
  }
>()("hearth/jobs/JobsRepo") {
  static readonly layer = Layer.effect(
    JobsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const byKey = (key: string) =>
        Effect.map(sql`SELECT * FROM jobs WHERE idempotency_key = ${key}`, (rows) =>
          Option.map(Option.fromNullishOr(rows[0]), toJobRow)
        )
      return JobsRepo.of(
        sqlBoundary({
          enqueue: (job) =>
            Effect.gen(function* () {
              yield* sql`INSERT INTO jobs (kind, idempotency_key, repo_id, doer_id)
              VALUES (${job.kind}, ${job.key}, ${job.repoId ?? null}, ${job.doerId ?? null})
              ON CONFLICT (idempotency_key) DO NOTHING`
              return Option.getOrThrow(yield* byKey(job.key))
            }),
          find: byKey,
          started: (key, attempt) =>
            Effect.asVoid(sql`UPDATE jobs SET state = 'running', attempts = GREATEST(attempts, ${attempt}), updated_at = now()
            WHERE idempotency_key = ${key}`),
          attemptFailed: (key, error, final) =>
            Effect.asVoid(sql`UPDATE jobs SET state = ${final ? "failed" : "retrying"}, last_error = ${error.slice(0, 2000)},
            updated_at = now(), finished_at = ${final ? sql`now()` : null} WHERE idempotency_key = ${key}`),
          succeeded: (key) =>
            Effect.asVoid(sql`UPDATE jobs SET state = 'succeeded', updated_at = now(), finished_at = now()
            WHERE idempotency_key = ${key}`),
          list: (repoId, page) =>
            Effect.gen(function* () {
              const where = repoId === undefined ? sql`TRUE` : sql`repo_id = ${repoId}`
              const rows =
                yield* sql`SELECT * FROM jobs WHERE ${where} ORDER BY id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
              const [count] = yield* sql`SELECT count(*) AS n FROM jobs WHERE ${where}`
              return { rows: rows.map(toJobRow), total: Number(count!.n) }
            })
        })
      )
    })
  )
}

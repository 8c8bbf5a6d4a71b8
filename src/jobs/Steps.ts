// A durable step of a workflow: an `Activity` (its result journaled, so a finished step is never
// run again after a restart; an interrupted one runs again — write steps to be idempotent),
// retried with doubling back-off on durable timers, every attempt recorded on the job's row.
import { Duration, Effect, Schema } from "effect"
import { Activity, DurableClock } from "effect/workflow"
import { JobsRepo } from "./Repo.ts"

export interface StepOptions<A, R> {
  /** The job's idempotency key (its row in `jobs`). */
  readonly job: string
  /** Unique within the workflow. */
  readonly name: string
  readonly success: Schema.Codec<A, any>
  /** Fails with a message a person can read; defects count as failures too. */
  readonly work: Effect.Effect<A, string, R>
  readonly attempts?: number
  /** The first back-off; each further one doubles. */
  readonly backoff?: Duration.Input
}

/** Why a step gave up: its last attempt's message. */
export class StepFailed extends Schema.TaggedError<StepFailed>()("StepFailed", {
  step: Schema.String,
  message: Schema.String
}) {}

export const step = <A, R>(options: StepOptions<A, R>) =>
  Effect.gen(function* () {
    const attempts = options.attempts ?? 5
    const backoff = Duration.toMillis(Duration.fromInputUnsafe(options.backoff ?? "2 seconds"))
    for (let attempt = 1; ; attempt++) {
      const result = yield* Activity.make({
        name: `${options.name}#${attempt}`,
        success: options.success,
        error: Schema.String,
        execute: Effect.gen(function* () {
          const jobs = yield* JobsRepo
          yield* jobs.started(options.job, attempt)
          const outcome = yield* options.work.pipe(
            Effect.catchDefect((defect) => Effect.fail(defect instanceof Error ? defect.message : String(defect)))
          )
          return outcome
        })
      }).pipe(Effect.result)
      if (result._tag === "Success") return result.success
      const last = attempt >= attempts
      yield* Activity.make({
        name: `${options.name}#${attempt}-failed`,
        execute: Effect.flatMap(JobsRepo, (jobs) => jobs.attemptFailed(options.job, result.failure, last))
      })
      if (last) return yield* new StepFailed({ step: options.name, message: result.failure })
      yield* DurableClock.sleep({
        name: `${options.name}#${attempt}-backoff`,
        duration: Duration.millis(backoff * 2 ** (attempt - 1)),
        inMemoryThreshold: Duration.zero
      })
    }
  })

/** The job's last step: mark it done (journaled like any step). */
export const finished = (job: string) =>
  Activity.make({ name: "finished", execute: Effect.flatMap(JobsRepo, (jobs) => jobs.succeeded(job)) })

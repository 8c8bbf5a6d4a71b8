// The one place where SQL failures stop being errors. A repository (`Repo.ts`, or any module that
// owns SQL) wraps its methods with `sqlBoundary`: an `SqlError` becomes a defect there, so services
// see only their domain errors, and the HTTP renderer still recognises a database outage among the
// defects (src/health/Database.ts `answerOutage`, 503) and answers any other as a logged 500.
// A failure a caller must react to (a unique violation meaning "already exists") is decided inside
// the repository and returned as a typed error (`uniqueViolation`).
import { Data, Effect, Exit } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"

/** `effect` with its `SqlError`s turned into defects. */
export const dieOnSqlError = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
  // A result already there (a repository's cache hit) has no SqlError to turn: no step added to it.
  Exit.isExit(effect) && Exit.isSuccess(effect)
    ? (effect as Exit.Exit<A, never>)
    : Effect.catch(effect, (error) =>
        isSqlError(error) ? Effect.die(error) : Effect.fail(error as Exclude<E, SqlError>)
      )

/** A method of the service `S` as its repository implements it: it may also fail with `SqlError`. */
type WithSqlError<F> =
  F extends Effect.Effect<infer A, infer E, infer R>
    ? Effect.Effect<A, E | SqlError, R>
    : F extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
      ? (...args: P) => Effect.Effect<A, E | SqlError, R>
      : F

/**
 * A repository's service `S` from its implementation: each method that returns an effect gets its
 * `SqlError`s turned into defects. `S` comes from where the result goes (`XRepo.of(sqlBoundary({…}))`),
 * so the methods are typed by the service's declaration, which names no `SqlError`. (A generic
 * method, such as `transaction`, is checked against its declaration with `unknown` type arguments.)
 */
export const sqlBoundary = <S>(methods: NoInfer<{ readonly [K in keyof S]: WithSqlError<S[K]> }>): S => {
  const bounded: Record<string, unknown> = {}
  for (const [name, method] of Object.entries(methods as Record<string, unknown>)) {
    bounded[name] =
      typeof method === "function"
        ? (...args: Array<unknown>) => {
            const result = method(...args)
            return Effect.isEffect(result) ? dieOnSqlError(result) : result
          }
        : Effect.isEffect(method)
          ? dieOnSqlError(method)
          : method
  }
  return bounded as S
}

/** `effect` in one transaction of `sql`; a failure to begin or commit is a defect like any SQL failure. */
export const transaction =
  (sql: SqlClient) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, SqlError>, R> =>
    dieOnSqlError(sql.withTransaction(effect))

/**
 * A row would duplicate one that exists (PostgreSQL's unique_violation, SQLSTATE 23505):
 * `constraint` names the unique index or constraint when the driver reports it.
 */
export class AlreadyExists extends Data.TaggedError("AlreadyExists")<{ readonly constraint: string | undefined }> {}

/** `effect` with a unique violation returned as `AlreadyExists`; any other `SqlError` is left as it is. */
export const uniqueViolation = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | AlreadyExists, R> =>
  Effect.catch(
    effect,
    (error): Effect.Effect<never, E | AlreadyExists> =>
      isSqlError(error) && error.reason._tag === "UniqueViolation"
        ? Effect.fail(new AlreadyExists({ constraint: error.reason.constraint || undefined }))
        : Effect.fail(error)
  )

/** `effect` failing with `orElse(error)` where it failed with `AlreadyExists` (for `pipe`). */
export const onAlreadyExists =
  <E2>(orElse: (error: AlreadyExists) => E2) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, Exclude<E, AlreadyExists> | E2, R> =>
    Effect.catch(
      effect,
      (error): Effect.Effect<never, Exclude<E, AlreadyExists> | E2> =>
        Effect.fail(error instanceof AlreadyExists ? orElse(error) : (error as Exclude<E, AlreadyExists>))
    )

// The database as the HTTP side sees it: whether a failure means "the database is not there"
// (an outage, answered 503 with Retry-After instead of 500), one log line per outage instead of a
// stack per request, and a ping with a short deadline for the health check.
import { Cause, Effect, Layer, Logger } from "effect"
import { HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"

/** What a client should wait before trying again, in seconds (the `Retry-After` of a 503). */
export const RETRY_AFTER_SECONDS = 10

/** How long the health check waits for the database to answer before it reports a failure. */
export const PING_TIMEOUT = "2 seconds"

// SQLSTATE class 57P: the server is shutting down (admin_shutdown, crash_shutdown) or not accepting
// connections yet (cannot_connect_now). sql-pg classifies these as UnknownError, but they mean the
// same as a refused connection: the database is not there right now.
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03"])

const sqlErrorIn = (value: unknown): SqlError | undefined => {
  // A few levels of `cause`: a service may wrap the SqlError it got (e.g. a defect with a cause).
  let current = value
  for (let depth = 0; depth < 4 && current !== null && typeof current === "object"; depth++) {
    if (isSqlError(current)) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

/**
 * The SqlError when `value` says the database cannot be reached: a connection failure of
 * `effect/sql` (ConnectionError, on PostgreSQL and on the embedded database alike), or PostgreSQL
 * refusing work because it is shutting down or starting up. `undefined` for anything else (a bad
 * query, a constraint) — those are bugs or bad input, not an outage.
 */
export const databaseUnavailable = (value: unknown): SqlError | undefined => {
  const error = sqlErrorIn(value)
  if (error === undefined) return undefined
  if (error.reason._tag === "ConnectionError") return error
  const code = (error.reason.cause as { code?: unknown } | undefined)?.code
  return typeof code === "string" && UNAVAILABLE_STATES.has(code) ? error : undefined
}

/** The first failure or defect of `cause` that is a database outage, if any. */
export const databaseUnavailableIn = (cause: Cause.Cause<unknown>): SqlError | undefined => {
  for (const reason of cause.reasons) {
    const value = Cause.isFailReason(reason) ? reason.error : Cause.isDieReason(reason) ? reason.defect : undefined
    const found = databaseUnavailable(value)
    if (found !== undefined) return found
  }
  return undefined
}

// One line when an outage starts, then at most one a minute while it lasts (with how many failures
// were seen meanwhile): a client retrying in a loop must not flood the log.
const REPEAT_AFTER_MS = 60_000

/** The error's reason and its driver's message, without the connection URL (it may hold a password). */
const describe = (error: SqlError): string => {
  const detail = (error.reason.cause as { message?: unknown } | undefined)?.message
  const reason = error.reason.message ?? error.reason._tag
  return typeof detail === "string" && detail !== "" && !reason.includes(detail) ? `${reason}: ${detail}` : reason
}

/** The outage's line (OutageLogsLayer knows an entry by it). */
const LINE_START = "the database is unavailable ("
const lineOf = (problem: SqlError | string) =>
  `${LINE_START}${typeof problem === "string" ? problem : describe(problem)}): requests that need it are answered 503 until it is back`

/** Logs the outage: once when it starts, then at most once a minute (OutageLogsLayer). */
export const reportUnavailable = (problem: SqlError | string): Effect.Effect<void> => Effect.logWarning(lineOf(problem))

/** The outage's line when the entry is a report of one, whoever wrote it. */
const outageInLog = (options: Logger.Options<unknown>): string | undefined => {
  for (const part of Array.isArray(options.message) ? options.message : [options.message]) {
    if (typeof part === "string" && part.startsWith(LINE_START)) return part
    const found = databaseUnavailable(part)
    if (found !== undefined) return lineOf(found)
  }
  const found = databaseUnavailableIn(options.cause)
  return found === undefined ? undefined : lineOf(found)
}

/**
 * The loggers in use, with every report of an outage — `reportUnavailable`'s, and effect's cluster
 * polling its storage every few seconds, with a stack each time — reduced to the outage's one line
 * and its once-a-minute repeat, counted per server (not per process: a process may run several, as
 * the tests do). Everything else is logged as it was.
 */
export const OutageLogsLayer = Layer.effect(
  Logger.CurrentLoggers,
  Effect.map(Logger.CurrentLoggers, (loggers: ReadonlySet<Logger.Logger<unknown, unknown>>) => {
    let lastLine = 0
    let turnedAway = 0
    // One logger in front of the others, so that each entry is judged (and counted) once.
    return new Set([
      Logger.make((options: Logger.Options<unknown>) => {
        const outage = outageInLog(options)
        let entry = options
        if (outage !== undefined) {
          turnedAway++
          const now = Date.now()
          if (now - lastLine < REPEAT_AFTER_MS) return
          const since = lastLine === 0 ? "" : ` (${turnedAway - 1} more failures since the last report)`
          lastLine = now
          turnedAway = 0
          entry = { ...options, message: `${outage}${since}`, cause: Cause.empty }
        }
        for (const logger of loggers) logger.log(entry)
      })
    ])
  })
)

/** The answer to a request the database could not serve: 503, `Retry-After`, `{message, url}`. */
export const unavailableResponse = (url: string) =>
  HttpServerResponse.jsonUnsafe(
    { message: "the database is unavailable; try again in a moment", url },
    { status: 503, headers: { "retry-after": String(RETRY_AFTER_SECONDS) } }
  )

/** Logs (once) and answers 503 when `cause` is a database outage; `undefined` otherwise. */
export const answerOutage = (cause: Cause.Cause<unknown>, url: string) => {
  const error = databaseUnavailableIn(cause)
  return error === undefined ? undefined : Effect.as(reportUnavailable(error), unavailableResponse(url))
}

/**
 * `SELECT 1` within PING_TIMEOUT: `true` when the database answered. A database that hangs (a
 * network partition, a full connection pool) fails as quickly as one that refuses. A failure is
 * logged as an outage (once, see above).
 */
export const pingDatabase: Effect.Effect<boolean, never, SqlClient> = Effect.gen(function* () {
  const sql = yield* SqlClient
  return yield* sql`SELECT 1`.pipe(
    Effect.as(true),
    Effect.timeoutOrElse({
      duration: PING_TIMEOUT,
      orElse: () => Effect.as(reportUnavailable(`no answer to a ping within ${PING_TIMEOUT}`), false)
    }),
    Effect.catchCause((cause) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.interrupt
      const error = databaseUnavailableIn(cause)
      return error === undefined
        ? Effect.as(Effect.logError("the health check's database ping failed", cause), false)
        : Effect.as(reportUnavailable(error), false)
    })
  )
})

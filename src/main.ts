// `hearth serve`: settings → database (migrated) → services → HTTP server, until SIGTERM/SIGINT.
import { Cause, Console, Data, Effect, Layer, Logger, References, Runtime } from "effect"
import { HttpServer } from "effect/http"
import { isSqlError } from "effect/sql/SqlError"
import { Federation } from "../federation/Service.ts"
import { AppLayer } from "./App.ts"
import { Settings } from "./config/Settings.ts"
import { isMissingDatabase } from "./db/Database.ts"
import { startEmbeddedMaintenance } from "./db/Maintenance.ts"
import { EventHub, publishLeftoverPushes } from "./events/Hub.ts"
import * as Git from "./git/Git.ts"
import { removeLeftoverQuarantines } from "./git/Quarantine.ts"
import { OutageLogsLayer } from "./health/Database.ts"
import { PackageCleanup } from "./packages/Cleanup.ts"
import { AutoMerge } from "./pulls/AutoMerge.ts"
import { PullsService } from "./pulls/Service.ts"
import { serverLayer } from "./Server.ts"
import { sweepPeriodically } from "./storage/Service.ts"
import { WebhooksService } from "./webhooks/Service.ts"

const announce = Effect.gen(function* () {
  const settings = yield* Settings
  const server = yield* HttpServer.HttpServer
  const address = HttpServer.formatAddress(server.address)
  const db =
    settings.database.DB_TYPE === "postgres"
      ? "PostgreSQL"
      : `the embedded database in ${settings.server.APP_DATA_PATH}`
  yield* Effect.logInfo(`Hearth is listening on ${address} (${settings.server.ROOT_URL}), using ${db}`)
  // The process that starts git (src/git/Spawner.ts) now, not in the first request that runs git.
  yield* Effect.sync(Git.spawnerPid)
  // The embedded database's autovacuum (PostgreSQL's own does it elsewhere).
  yield* startEmbeddedMaintenance
  // Only now: a remote inbox fetches the sender's key from this server to verify a delivery.
  yield* (yield* Federation).resumeDeliveries
  // The event hub's durable consumers too, after the pushes an earlier run left unpublished.
  yield* publishLeftoverPushes(settings.server.APP_DATA_PATH, performance.timeOrigin)
  yield* (yield* EventHub).start
  // Pull requests' mergeability checks (a queue of their own), likewise.
  yield* (yield* PullsService).start
  // Scheduled merges' evaluations (a queue of their own), likewise.
  yield* (yield* AutoMerge).start
  // Webhook deliveries (a queue of their own).
  yield* (yield* WebhooksService).start
  // Housekeeping, now and then periodically: the blob store's sweep (what crashes left) and the
  // package cleanup rules. Here, once the server answers, so that the first requests do not wait
  // behind them (≈ 3 % of a start, infra/bench/README.md "Start-up and the tests' processes").
  yield* sweepPeriodically
  yield* (yield* PackageCleanup).start
})

const logLevels = {
  Trace: "Trace",
  Debug: "Debug",
  Info: "Info",
  Warning: "Warn",
  Error: "Error",
  None: "None"
} as const

/** `[log] LEVEL` (Forgejo's names) as the minimum level of everything Hearth logs. */
export const LogLevelLayer = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    return Layer.succeed(References.MinimumLogLevel, logLevels[settings.log.LEVEL])
  })
)

/** The running server as a layer (what `serve` launches and tests start). */
export const ServeLayer = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    const listen = { host: settings.server.HTTP_ADDR, port: settings.server.HTTP_PORT }
    // The SSH server (only when [server] START_SSH_SERVER) runs beside HTTP on the same services;
    // its module (ssh2, ~20 MB) is loaded only then.
    const ssh = settings.server.START_SSH_SERVER
      ? (yield* Effect.promise(() => import("./ssh/Server.ts"))).SshServerLive
      : Layer.empty
    // What interrupted pushes left in the repositories, cleared beside the server (nothing this
    // process writes can be taken for it: see src/git/Quarantine.ts).
    const sweep = Layer.effectDiscard(
      Effect.forkScoped(removeLeftoverQuarantines(settings.repository.ROOT, performance.timeOrigin))
    )
    return Layer.mergeAll(Layer.effectDiscard(announce).pipe(Layer.provideMerge(serverLayer(listen))), ssh, sweep)
  })
).pipe(
  Layer.provideMerge(AppLayer),
  Layer.provideMerge(LogLevelLayer),
  // A database outage is logged as one line, whoever reports it (see src/health/Database.ts).
  Layer.provideMerge(OutageLogsLayer)
)

/** A failure already printed as one line; `runMain` then only sets the exit code (1). */
// biome-ignore lint/complexity/noBannedTypes: an Effect tagged error without fields takes `{}`
class CommandFailed extends Data.TaggedError("CommandFailed")<{}> {
  override readonly [Runtime.errorReported] = false
}

const causeText = (cause: unknown): string =>
  cause instanceof Error ? cause.message : typeof cause === "string" ? cause : ""

/**
 * One line for the failures an operator can fix (settings, a locked data dir, the database, the
 * port); `undefined` for anything else, which is then reported in full (a bug wants its trace).
 * Never prints a connection URL: it may hold a password.
 */
export const describeStartupFailure = (error: unknown): string | undefined => {
  const tag = typeof error === "object" && error !== null ? (error as { _tag?: unknown })._tag : undefined
  const message = typeof (error as { message?: unknown })?.message === "string" ? (error as Error).message : ""
  if (tag === "SettingsError" || tag === "DataDirLocked") return message
  if (tag === "ServeError") {
    const detail = causeText((error as { cause?: unknown }).cause)
    return `cannot listen for HTTP: ${detail} (see [server] HTTP_ADDR and HTTP_PORT)`
  }
  if (tag === "MigrationError") {
    const detail = causeText((error as { cause?: unknown }).cause)
    return `database migration failed: ${message}${detail === "" ? "" : `: ${detail}`}`
  }
  if (isMissingDatabase(error)) {
    return `cannot use the database: ${causeText((error as { reason: { cause?: unknown } }).reason.cause)}; create it (for example \`createdb -O hearth hearth\` as the postgres user) or run \`npx hearth migrate\`, which creates it when the role may create databases`
  }
  if (isSqlError(error)) {
    const detail = causeText(error.reason.cause)
    return `cannot use the database: ${error.reason.message}${detail === "" || detail === error.reason.message ? "" : ` (${detail})`}`
  }
  return undefined
}

/**
 * For commands: a failure `describe` knows (one an operator can act on) is printed as
 * `hearth: <line>` on stderr, without a stack trace, and the process exits 1; anything else (a
 * bug) is reported in full.
 */
export const reportInOneLine =
  (describe: (error: unknown) => string | undefined) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | CommandFailed, R> =>
    Effect.catchCause(effect, (cause): Effect.Effect<never, E | CommandFailed> => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
      const line = describe(Cause.squash(cause))
      return line === undefined
        ? Effect.failCause(cause)
        : Effect.andThen(Console.error(`hearth: ${line.replace(/\s*\n\s*/g, " ")}`), Effect.fail(new CommandFailed()))
    })

/**
 * For commands whose standard output is their answer (`admin …`, `migrate`): whatever the services
 * log meanwhile (a warning of the job runner, say) goes to stderr, so that stdout stays the answer.
 */
export const logToStderr = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.provideService(effect, Logger.LogToStderr, true)

/**
 * Runs the server until SIGTERM/SIGINT, for the `serve` command.
 * - A start-up failure an operator can fix prints one line on stderr (no stack trace) and exits 1.
 * - After a signal, open requests finish (up to 10 s), the database closes, the data-dir lock is
 *   removed, and the process exits 0: the shutdown was asked for and completed, and service
 *   managers count runMain's default (130) as a failure.
 */
export const serve = <E>(settings: Layer.Layer<Settings, E>): Effect.Effect<never, unknown> =>
  Layer.launch(ServeLayer.pipe(Layer.provide(settings))).pipe(
    reportInOneLine(describeStartupFailure),
    // Runs once the launch's scope has closed, i.e. after the graceful shutdown.
    Effect.onInterrupt(() => Effect.sync(() => process.exit(0)))
  )

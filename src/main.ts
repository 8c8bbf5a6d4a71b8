// `hearth serve`: settings → database (migrated) → services → HTTP server, until SIGTERM/SIGINT.
import { Effect, Layer, References } from "effect"
import { HttpServer } from "effect/http"
import { AppLayer } from "./App.ts"
import { Settings } from "./config/Settings.ts"
import { serverLayer } from "./http/Server.ts"

const announce = Effect.gen(function*() {
  const settings = yield* Settings
  const server = yield* HttpServer.HttpServer
  const address = HttpServer.formatAddress(server.address)
  const db = settings.database.DB_TYPE === "postgres"
    ? "PostgreSQL"
    : `the embedded database in ${settings.server.APP_DATA_PATH}`
  yield* Effect.logInfo(`Hearth is listening on ${address} (${settings.server.ROOT_URL}), using ${db}`)
})

const logLevels = { Trace: "Trace", Debug: "Debug", Info: "Info", Warning: "Warn", Error: "Error", None: "None" } as const

/** `[log] LEVEL` (Forgejo's names) as the minimum level of everything Hearth logs. */
export const LogLevelLayer = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* Settings
  return Layer.succeed(References.MinimumLogLevel, logLevels[settings.log.LEVEL])
}))

/** The running server as a layer (what `serve` launches and tests start). */
export const ServeLayer = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* Settings
  const listen = { host: settings.server.HTTP_ADDR, port: settings.server.HTTP_PORT }
  return Layer.effectDiscard(announce).pipe(Layer.provideMerge(serverLayer(listen)))
})).pipe(Layer.provideMerge(AppLayer), Layer.provideMerge(LogLevelLayer))

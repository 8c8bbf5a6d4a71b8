// The `hearth` command's commands: `serve`, `migrate`, `admin …` (run through src/cli.ts). Every command
// reads the same settings (`--config app.ini`, then HEARTH__<section>__<KEY> environment variables).
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import * as NodeServices from "@effect/platform-node/NodeServices"
import { Console, Effect, Layer, Option } from "effect"
import { CliOutput, Command, Flag } from "effect/cli"
import { adminCommand } from "./admin/Cli.ts"
import * as Settings from "./config/Settings.ts"
import * as Database from "./db/Database.ts"
import { describeStartupFailure, logToStderr, reportInOneLine, serve as runServer } from "./main.ts"
import { VERSION } from "./version.ts"

const configFlag = Flag.String("config").pipe(
  Flag.withAlias("c"),
  Flag.withDescription(
    "Path of an app.ini file (Forgejo's setting names); environment variables HEARTH__<section>__<KEY> override it"
  ),
  Flag.optional
)

export const hearth = Command.make("hearth").pipe(
  Command.withSharedFlags({ config: configFlag }),
  Command.withDescription("Hearth: a self-hostable, federated git forge with a Forgejo-compatible API")
)

/** The settings layer for the `--config` given to the root command. */
export const settingsLayer = Effect.map(hearth, ({ config }) =>
  Settings.layer({ configFile: Option.getOrUndefined(config) })
)

const serve = Command.make("serve", {}, () =>
  Effect.gen(function* () {
    const settings = yield* settingsLayer
    return yield* runServer(settings) // one clear line on a start-up failure; exit 0 after SIGTERM
  })
).pipe(Command.withDescription("Run the web server (what `npm start` runs); stops cleanly on Ctrl-C or SIGTERM"))

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    const settings = yield* settingsLayer
    const created = yield* Database.createMissingDatabase.pipe(
      Effect.provide(settings),
      reportInOneLine(describeStartupFailure),
      logToStderr
    )
    if (Option.isSome(created)) yield* Console.log(`Created the database ${created.value}.`)
    const applied = yield* Database.migrate.pipe(
      Effect.provide(Database.clientLayer.pipe(Layer.provide(settings))),
      reportInOneLine(describeStartupFailure),
      logToStderr
    )
    yield* Console.log(
      applied.length === 0
        ? "The database schema is up to date."
        : `Applied ${applied.length} migration(s): ${applied.map(([id, name]) => `${id} ${name}`).join(", ")}`
    )
  })
).pipe(
  Command.withDescription(
    "Create or upgrade the database schema, then exit (on PostgreSQL it creates the database first if it is missing and the role may)"
  )
)

export const commands = [serve, migrate, adminCommand(settingsLayer)]

/**
 * A command line that does not parse (missing or unknown flag, bad value) is answered with one line
 * per problem on stderr and exit code 1, rather than the whole help text; `--help` shows that.
 */
const presenter: CliOutput.Presenter = {
  present: (event) => {
    if (event._tag !== "InvalidInvocation") return CliOutput.defaultPresenter.present(event)
    const command = event.commandPath.join(" ")
    return Effect.forEach(
      event.errors,
      (error) => Console.error(`${command}: ${error.message} (see: ${command} --help)`),
      { discard: true }
    )
  }
}

const main = hearth.pipe(Command.withSubcommands(commands), Command.run({ version: VERSION }))

main.pipe(
  Effect.provideService(CliOutput.Presenter, presenter),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)

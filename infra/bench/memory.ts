// The server's memory, and what it costs in speed (`npm run bench:memory`; settings in
// infra/bench/README.md, "Memory"). For each database (PostgreSQL, embedded) and each server
// compared (BENCH_SERVERS: this checkout, or several side by side, e.g. the commit before and this
// one, each its own checkout with its node_modules, or this one with other Node flags), per round:
//   1. a fresh data dir (a new database on PostgreSQL): `hearth serve`, first 200, then RSS and its
//      peak (VmHWM) once settled, then stopped;
//   2. the account made, the server started again on that data dir: RSS once settled, with a
//      breakdown of the mappings (/proc/PID/smaps: the WASM memory, the C heap, code, files, the
//      rest), then 10,000 requests (the three cases below, in turn) and RSS again;
//   3. with the servers of step 2 all running, each case driven with autocannon on each server in
//      turn (the order rotating between rounds): requests/s and the server's CPU time per request.
//      `GET /api/v1/version` and the authenticated `GET /api/v1/users/{u}` are `npm run bench`'s
//      rows (Hearth answers the second from its caches: the database is read every few seconds);
//      `GET /api/v1/users/search?q=…` reads the database on every request.
// Medians over the rounds; with more than one server, the ratios to the first one. Only what it
// started is stopped; PostgreSQL comes from infra/pg/start.sh unless BENCH_DATABASE_URL is given.

import { readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import autocannon from "autocannon"
import {
  type Backend,
  type BackendName,
  type BenchServer,
  cpuSeconds,
  createAccount,
  createToken,
  execFileP,
  fmt,
  load as loadFor,
  log,
  machineLine,
  median,
  nodeBin,
  parseServers,
  positive,
  preparePostgres,
  type Running,
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

type Server = BenchServer

const describeServer = (s: Server) => [...s.nodeArgs, ...Object.entries(s.env).map(([k, v]) => `${k}=${v}`)].join(" ")

const config = {
  servers: parseServers(process.env.BENCH_SERVERS ?? "this=."),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 3))),
  duration: positive("BENCH_DURATION", 8),
  settle: positive("BENCH_SETTLE", 5),
  connections: positive("BENCH_CONNECTIONS", 4),
  rssRequests: positive("BENCH_RSS_REQUESTS", 10_000),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown back-end "${b}"`)
    return b as BackendName
  }),
  output: process.env.BENCH_OUTPUT
}

const TARGETS = { embeddedIdleMb: 300, slowdown: 0.05 } as const
const ACCOUNT = { username: "bench", password: "bench-password-123" }

// ---------------------------------------------------------------- /proc

const status = (pid: number) => {
  const text = readFileSync(`/proc/${pid}/status`, "utf8")
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? NaN)
  return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 }
}

const PARTS = ["WASM memory", "C heap", "code", "files", "other anonymous"] as const
type Part = (typeof PARTS)[number]

/**
 * Resident MB per kind of mapping (/proc/PID/smaps): the WASM memory (read-write, right below the
 * address space V8 reserves for it to grow into), the C heap (`[heap]` and glibc's 64 MB-aligned
 * thread arenas), code (anonymous executable: V8's JIT and WASM code), files (Node's binary,
 * libraries), and the rest (V8's JavaScript heap, buffers, stacks…).
 */
const breakdown = (pid: number): Record<Part, number> => {
  interface Mapping {
    start: number
    end: number
    perm: string
    name: string
    rssKb: number
  }
  const maps: Array<Mapping> = []
  for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
    const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
    if (m !== null) {
      maps.push({ start: parseInt(m[1]!, 16), end: parseInt(m[2]!, 16), perm: m[3]!, name: m[4]!, rssKb: 0 })
      continue
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line)
    if (rss !== null && maps.length > 0) maps[maps.length - 1]!.rssKb = Number(rss[1])
  }
  const out = Object.fromEntries(PARTS.map((p) => [p, 0])) as Record<Part, number>
  maps.forEach((m, i) => {
    const next = maps[i + 1]
    const anon = m.name === ""
    let part: Part
    if (
      anon &&
      m.perm === "rw-p" &&
      next !== undefined &&
      next.name === "" &&
      next.perm === "---p" &&
      next.start === m.end &&
      next.end - next.start >= 2 ** 30
    ) {
      part = "WASM memory"
    } else if (
      m.name === "[heap]" ||
      (anon && m.perm === "rw-p" && m.start % 2 ** 26 === 0 && m.end - m.start <= 2 ** 26)
    ) {
      part = "C heap"
    } else if (anon && m.perm.includes("x")) part = "code"
    else if (m.name.startsWith("/")) part = "files"
    else part = "other anonymous"
    out[part] += m.rssKb / 1024
  })
  return out
}

// ---------------------------------------------------------------- load

interface Case {
  readonly name: "version" | "user" | "search"
  readonly label: string
  readonly path: string
}
const CASES: ReadonlyArray<Case> = [
  { name: "version", label: "GET /api/v1/version", path: "/api/v1/version" },
  {
    name: "user",
    label: `GET /api/v1/users/${ACCOUNT.username} (token; cached)`,
    path: `/api/v1/users/${ACCOUNT.username}`
  },
  {
    name: "search",
    label: "GET /api/v1/users/search?q=ben (token; reads the database)",
    path: "/api/v1/users/search?q=ben"
  }
]

/** A fixed number of requests, the cases in turn; the number that failed. */
const loadAmount = (base: string, headers: Record<string, string>, amount: number) =>
  new Promise<number>((done, fail) => {
    autocannon(
      {
        url: base,
        amount,
        connections: config.connections,
        requests: CASES.map((c) => ({ method: "GET", path: c.path, headers }))
      },
      (error, result) => (error !== null ? fail(error) : done(result.errors + result.timeouts + result.non2xx))
    )
  })

// ---------------------------------------------------------------- the run

interface MemorySample {
  readonly freshStartMs: number
  readonly freshRssMb: number
  readonly freshPeakMb: number
  readonly startMs: number
  readonly idleRssMb: number
  readonly idlePeakMb: number
  readonly parts: Record<Part, number>
  readonly afterRssMb: number
  readonly afterPeakMb: number
  readonly bad: number
}
interface SpeedSample {
  readonly rps: number
  readonly cpuUsPerRequest: number
  readonly p50: number
  readonly bad: number
}

const main = async () => {
  const tmp = tempDir("hearth-bench-memory-")
  const nodeVersion = (await execFileP(nodeBin, ["--version"])).stdout.trim()
  const load0 = os.loadavg()
  const commits: Record<string, string> = {}
  for (const server of config.servers) {
    commits[server.label] = await execFileP("git", ["-C", server.tree, "log", "-1", "--format=%h %s"]).then(
      (r) => r.stdout.trim(),
      () => "?"
    )
    log(
      `${server.label}: ${server.tree} (${commits[server.label]})${describeServer(server) !== "" ? ` with ${describeServer(server)}` : ""}`
    )
  }
  const memory = new Map<string, Array<MemorySample>>()
  const speed = new Map<string, Array<SpeedSample>>()
  const loads: Array<number> = []
  const add = <A>(map: Map<string, Array<A>>, key: string, value: A) => map.set(key, [...(map.get(key) ?? []), value])
  let pgVersion: string | undefined
  let made = 0

  for (let round = 1; round <= config.rounds; round++) {
    loads.push(os.loadavg()[0]!)
    // The first server of the list goes first in round 1, the second in round 2, …
    const order = config.servers.map((_, i) => config.servers[(i + round - 1) % config.servers.length]!)
    for (const name of config.backends) {
      const running: Array<{ server: Server; hearth: Running; token: string }> = []
      for (const server of order) {
        const dataDir = join(tmp, `data-${made++}`)
        const pg = name === "postgres" ? await preparePostgres() : undefined
        if (pg !== undefined) pgVersion = pg.server
        const backend: Backend = {
          name,
          dataDir,
          ...(pg !== undefined ? { databaseUrl: pg.url } : {}),
          logFile: join(tmp, `${name}-${made}.log`),
          tree: server.tree,
          nodeArgs: server.nodeArgs,
          env: server.env
        }
        const key = `${name}/${server.label}`
        // 1. Fresh data dir.
        const fresh = await startHearth(backend)
        await sleep(config.settle * 1000)
        const freshMem = status(fresh.child.pid!)
        await stopChild(fresh.child)
        // 2. Existing data dir, account made.
        await createAccount(backend, ACCOUNT)
        const hearth = await startHearth(backend)
        await sleep(config.settle * 1000)
        const idle = status(hearth.child.pid!)
        const parts = breakdown(hearth.child.pid!)
        const token = await createToken(hearth.base, ACCOUNT, ["read:user"])
        const bad = await loadAmount(hearth.base, { authorization: `token ${token}` }, config.rssRequests)
        await sleep(1000)
        const after = status(hearth.child.pid!)
        const sample: MemorySample = {
          freshStartMs: fresh.startMs,
          freshRssMb: freshMem.rssMb,
          freshPeakMb: freshMem.peakMb,
          startMs: hearth.startMs,
          idleRssMb: idle.rssMb,
          idlePeakMb: idle.peakMb,
          parts,
          afterRssMb: after.rssMb,
          afterPeakMb: after.peakMb,
          bad
        }
        add(memory, key, sample)
        log(
          `round ${round} ${key}: fresh ${fmt(fresh.startMs)} ms, RSS ${fmt(freshMem.rssMb)} MB (peak ${fmt(freshMem.peakMb)}); ` +
            `existing ${fmt(hearth.startMs)} ms, idle ${fmt(idle.rssMb)} MB (peak ${fmt(idle.peakMb)}), after ${fmt(config.rssRequests)} requests ` +
            `${fmt(after.rssMb)} MB (peak ${fmt(after.peakMb)})${bad > 0 ? `, ${bad} FAILED` : ""}; ` +
            PARTS.map((p) => `${p} ${fmt(parts[p])}`).join(", ")
        )
        running.push({ server, hearth, token })
      }
      // 3. Speed, each case on each server in turn.
      for (const c of CASES) {
        for (const { server, hearth, token } of running) {
          const pid = hearth.child.pid!
          const cpu0 = cpuSeconds(pid).self
          const sample = await loadFor(
            `${hearth.base}${c.path}`,
            { authorization: `token ${token}` },
            config.duration,
            config.connections
          )
          const cpuUs = ((cpuSeconds(pid).self - cpu0) * 1e6) / Math.max(1, sample.requests)
          add(speed, `${name}/${c.name}/${server.label}`, {
            rps: sample.rps,
            cpuUsPerRequest: cpuUs,
            p50: sample.p50,
            bad: sample.bad
          })
          log(
            `round ${round} ${name} ${c.name} ${server.label}: ${fmt(sample.rps)} req/s, ${fmt(cpuUs, 1)} µs CPU/request, p50 ${fmt(sample.p50, 2)} ms${sample.bad > 0 ? `, ${sample.bad} FAILED` : ""}`
          )
        }
      }
      for (const { hearth } of running) await stopChild(hearth.child)
    }
  }

  // ---------------------------------------------------------------- report
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  const base = config.servers[0]!
  const compared = config.servers.length > 1
  const ratio = (value: number, baseline: number) => (compared ? ` (${fmt(value / baseline, 3)})` : "")
  out(machineLine(load0))
  out(
    `Date: ${new Date().toISOString()}; Node ${nodeVersion}${pgVersion !== undefined ? `; PostgreSQL ${pgVersion}` : ""}; 1-minute load average at each round's start: ${loads.map((l) => fmt(l, 2)).join(", ")}`
  )
  out(
    `Servers: ${config.servers.map((s) => `**${s.label}** = ${commits[s.label]}${describeServer(s) !== "" ? ` with \`${describeServer(s)}\`` : ""}`).join("; ")}`
  )
  out(
    `${config.rounds} rounds, servers in turn (order rotating); medians${compared ? `; in parentheses the ratio to **${base.label}**` : ""}; RSS ${config.settle} s after the first 200`
  )
  out()
  let missed = 0
  const results: Record<string, unknown> = {}
  out(
    `| database | server | fresh data dir: start / RSS / peak | existing: start / RSS idle / peak | RSS after ${fmt(config.rssRequests)} requests / peak | target (embedded: idle ≤ ${TARGETS.embeddedIdleMb} MB) |`
  )
  out("|---|---|---:|---:|---:|---|")
  for (const name of config.backends) {
    const baseSamples = memory.get(`${name}/${base.label}`) ?? []
    const m = (samples: ReadonlyArray<MemorySample>, f: (s: MemorySample) => number) => median(samples.map(f))
    for (const server of config.servers) {
      const samples = memory.get(`${name}/${server.label}`) ?? []
      const cell = (f: (s: MemorySample) => number, unit: string) =>
        `${fmt(m(samples, f))} ${unit}${ratio(m(samples, f), m(baseSamples, f))}`
      const idle = m(samples, (s) => s.idleRssMb)
      // The target is the embedded database's, for every server but the one compared against.
      const applies = name === "embedded"
      const met = idle <= TARGETS.embeddedIdleMb && samples.every((s) => s.bad === 0)
      if (applies && (!compared || server !== base) && !met) missed++
      out(
        `| ${name} | ${server.label} | ${cell((s) => s.freshStartMs, "ms")} / ${cell((s) => s.freshRssMb, "MB")} / ${cell((s) => s.freshPeakMb, "MB")} | ` +
          `${cell((s) => s.startMs, "ms")} / **${cell((s) => s.idleRssMb, "MB")}** / ${cell((s) => s.idlePeakMb, "MB")} | ` +
          `${cell((s) => s.afterRssMb, "MB")} / ${cell((s) => s.afterPeakMb, "MB")} | ${applies ? (met ? "yes" : "NO") : "–"} |`
      )
      results[`${name}/${server.label}/memory`] = samples
    }
  }
  out()
  out(`| database | server | ${PARTS.join(" | ")} | (idle, MB, from /proc/PID/smaps) |`)
  out(`|---|---|${PARTS.map(() => "---:").join("|")}|---|`)
  for (const name of config.backends) {
    for (const server of config.servers) {
      const samples = memory.get(`${name}/${server.label}`) ?? []
      out(
        `| ${name} | ${server.label} | ${PARTS.map((p) => fmt(median(samples.map((s) => s.parts[p])))).join(" | ")} | |`
      )
    }
  }
  out()
  out(
    `| database | request | server | req/s | CPU µs / request | p50 ms |${compared ? ` within ${fmt(TARGETS.slowdown * 100)} % of **${base.label}** |` : ""}`
  )
  out(`|---|---|---|---:|---:|---:|${compared ? "---|" : ""}`)
  for (const name of config.backends) {
    for (const c of CASES) {
      const baseSamples = speed.get(`${name}/${c.name}/${base.label}`) ?? []
      for (const server of config.servers) {
        const samples = speed.get(`${name}/${c.name}/${server.label}`) ?? []
        const rps = median(samples.map((s) => s.rps))
        const cpu = median(samples.map((s) => s.cpuUsPerRequest))
        const baseRps = median(baseSamples.map((s) => s.rps))
        const baseCpu = median(baseSamples.map((s) => s.cpuUsPerRequest))
        const failed = samples.some((s) => s.bad > 0)
        // Throughput within the margin, or CPU per request within it (the machine may be shared).
        const met = !failed && (rps >= baseRps * (1 - TARGETS.slowdown) || cpu <= baseCpu * (1 + TARGETS.slowdown))
        const verdict = server === base ? "–" : failed ? "NO (failed requests)" : met ? "yes" : "NO"
        out(
          `| ${name} | ${c.label} | ${server.label} | ${fmt(rps)}${ratio(rps, baseRps)} | ${fmt(cpu, 1)}${ratio(cpu, baseCpu)} | ${fmt(median(samples.map((s) => s.p50)), 2)} |${compared ? ` ${verdict} |` : ""}`
        )
        results[`${name}/${c.name}/${server.label}`] = samples
      }
    }
  }
  out()
  out(missed === 0 ? "Embedded idle RSS target met." : `Embedded idle RSS target missed by ${missed} server(s).`)
  process.stdout.write(`\n${lines.join("\n")}\n`)
  if (config.output !== undefined && config.output !== "") {
    writeFileSync(
      config.output,
      JSON.stringify({ config, nodeVersion, pgVersion, commits, loads, results, table: lines }, null, 2)
    )
  }
  return missed
}

await runMain(main)

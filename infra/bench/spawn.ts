// What a git process costs the server's event loop (`npm run bench:spawn`): a process of the
// server's size (BENCH_SPAWN_MB of memory in use, default 300) runs BENCH_SPAWN_RUNS git
// processes through `Git.run` (`git rev-parse HEAD` in a fresh repository), BENCH_SPAWN_CONCURRENCY at
// a time, while a timer measures how late the event loop answers (perf_hooks'
// monitorEventLoopDelay): "here" starts git from that process (HEARTH_GIT_SPAWNER=0), "spawner"
// through src/git/Spawner.ts. Both side by side, BENCH_SPAWN_ROUNDS rounds alternating; medians.
// Progress on stderr, the table on stdout.
import { execFileSync, fork } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import os, { tmpdir } from "node:os"
import { join } from "node:path"
import { monitorEventLoopDelay } from "node:perf_hooks"
import { fileURLToPath } from "node:url"
import { fmt, log, median, positive } from "./support.ts"

const settings = {
  mb: Math.round(positive("BENCH_SPAWN_MB", 300)),
  runs: Math.round(positive("BENCH_SPAWN_RUNS", 200)),
  concurrency: Math.round(positive("BENCH_SPAWN_CONCURRENCY", 4)),
  rounds: Math.round(positive("BENCH_SPAWN_ROUNDS", 3))
}

interface Measured {
  readonly seconds: number
  readonly delayP50: number
  readonly delayP99: number
  readonly delayMax: number
  readonly rssMb: number
}

/** One measurement, in a child process of its own (so that HEARTH_GIT_SPAWNER is read fresh). */
const child = async () => {
  const { Effect } = await import("effect")
  const Git = await import("../../src/git/Git.ts")
  const ballast: Array<Buffer> = []
  for (let i = 0; i < settings.mb; i++) ballast.push(Buffer.alloc(1024 * 1024, i))
  const repo = mkdtempSync(join(tmpdir(), "hearth-bench-spawn-"))
  execFileSync("git", ["init", "-q", repo])
  execFileSync("git", [
    "-C",
    repo,
    "-c",
    "user.name=b",
    "-c",
    "user.email=b@b",
    "commit",
    "-q",
    "--allow-empty",
    "-m",
    "x"
  ])
  const run = () => Effect.runPromise(Git.run(["rev-parse", "HEAD"], { cwd: repo }))
  await run() // the spawner started, git's files in the page cache
  const delay = monitorEventLoopDelay({ resolution: 1 })
  delay.enable()
  const started = performance.now()
  let next = 0
  await Promise.all(
    Array.from({ length: settings.concurrency }, async () => {
      while (next++ < settings.runs) await run()
    })
  )
  const seconds = (performance.now() - started) / 1000
  delay.disable()
  rmSync(repo, { recursive: true, force: true })
  const measured: Measured = {
    seconds,
    delayP50: delay.percentile(50) / 1e6,
    delayP99: delay.percentile(99) / 1e6,
    delayMax: delay.max / 1e6,
    rssMb: process.memoryUsage().rss / 1e6
  }
  process.send?.(measured)
  ballast.length = 0
}

const measure = (spawner: boolean) =>
  new Promise<Measured>((resolve, reject) => {
    const proc = fork(fileURLToPath(import.meta.url), ["--child"], {
      env: { ...process.env, HEARTH_GIT_SPAWNER: spawner ? "1" : "0" }
    })
    proc.once("message", (m) => resolve(m as Measured))
    proc.once("exit", (code) => (code === 0 ? undefined : reject(new Error(`the measuring process exited ${code}`))))
  })

const main = async () => {
  const results = { here: [] as Array<Measured>, spawner: [] as Array<Measured> }
  for (let round = 1; round <= settings.rounds; round++) {
    const order = round % 2 === 1 ? (["here", "spawner"] as const) : (["spawner", "here"] as const)
    for (const which of order) {
      const m = await measure(which === "spawner")
      results[which].push(m)
      log(
        `round ${round}/${settings.rounds} ${which}: ${fmt(m.seconds, 2)} s, event loop late p50 ${fmt(m.delayP50, 2)} ms, p99 ${fmt(m.delayP99, 2)} ms, max ${fmt(m.delayMax, 1)} ms (RSS ${fmt(m.rssMb)} MB)`
      )
    }
  }
  const load = os.loadavg().map((l) => l.toFixed(2))
  console.log(
    `${settings.runs} \`git rev-parse HEAD\` through Git.run, ${settings.concurrency} at a time, from a process with ${settings.mb} MB in use; ${settings.rounds} rounds (medians); load average at the end ${load.join(" ")}\n`
  )
  console.log("| git started from | all runs | event loop late p50 | p99 | max |")
  console.log("|---|---:|---:|---:|---:|")
  for (const which of ["here", "spawner"] as const) {
    const r = results[which]
    const m = (f: (x: Measured) => number) => median(r.map(f))
    console.log(
      `| ${which === "here" ? "the process itself" : "the spawner"} | ${fmt(
        m((x) => x.seconds),
        2
      )} s | ${fmt(
        m((x) => x.delayP50),
        2
      )} ms | ${fmt(
        m((x) => x.delayP99),
        2
      )} ms | ${fmt(
        m((x) => x.delayMax),
        1
      )} ms |`
    )
  }
}

if (process.argv.includes("--child")) await child()
else await main()

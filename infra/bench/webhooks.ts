// Hearth's webhook benchmark (`npm run bench:webhooks`; issue 20, speed section): N git pushes
// (BENCH_PUSHES, default 1,000) to one repository with H active hooks (BENCH_HOOKS, default 10) on
// a loopback receiver in this process, which counts every delivery by its delivery id. The pushes
// come from P concurrent pushers (BENCH_PUSHERS, default 8), each with its own clones and its own
// branch, so that the deliveries offered outrun one `git push` at a time and deliveries/s measures
// the delivery pipeline, not the speed of one pusher. Reported:
// deliveries/s from the first delivery to the last (and the drain after the last push), the time
// from a push's `git push` returning to its delivery arriving (p50/p99 over every delivery),
// deliveries lost or duplicated, and git push p50 with the hooks on against the same pushes to a
// second repository without hooks, the two alternated push by push (side by side).
// Targets: ≥ 500 deliveries/s, push-to-delivery p50 ≤ 50 ms, none lost or duplicated, push p50
// with hooks ≤ 1.1× without.
// BENCH_SCENARIO=backlog measures the delivery pipeline's own rate instead (pushes arrive at a few
// per second on 2 cores, so the live scenario never has a backlog): the receiver holds its answer
// to the first delivery of each hook (DELIVER_TIMEOUT raised so that it does not time out), so that
// the deliveries of all the pushes queue up behind them in the queue — real hook tasks of real push
// events, one order per hook — and once every task exists (the hooks' delivery histories count
// BENCH_PUSHES each) it answers and times the drain (BENCH_PUSHES counts ref updates here: each
// `git push` updates BENCH_REFS_PER_PUSH new branches, default 25, each its own push payload): deliveries/s over the whole drain and the
// median (and slowest) of its 1-second windows, none lost or duplicated; and the event hop's rate,
// hook tasks queued per second from the first push to the last task queued (polled every ~2 s).
// Pushes go to `hooked` only.
// Side by side: BENCH_SERVERS (`label=dir[:flags]`, comma-separated, as bench:pulls) names the
// checkouts compared; each round (BENCH_ROUNDS, default 1) runs the whole scenario once per server,
// one after the other in an order that rotates from round to round, each with a fresh data dir and
// database, and the medians per server and their ratios close the report.
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"
import os from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import {
  type Account,
  type Backend,
  type BenchServer,
  basic,
  createAccount,
  fmt,
  http,
  log,
  machineLine,
  median,
  parseServers,
  positive,
  preparePostgres,
  quantile,
  runMain,
  startHearth,
  stopChild,
  tempDir,
  transactions
} from "./support.ts"

const execFileP = promisify(execFile)
const config = {
  pushes: Math.round(positive("BENCH_PUSHES", 1000)),
  hooks: Math.round(positive("BENCH_HOOKS", 10)),
  pushers: Math.round(positive("BENCH_PUSHERS", 8)),
  backend: (process.env.BENCH_BACKEND ?? "embedded") as "embedded" | "postgres",
  servers: parseServers(process.env.BENCH_SERVERS ?? "this=."),
  rounds: Math.round(positive("BENCH_ROUNDS", 1)),
  scenario: (process.env.BENCH_SCENARIO ?? "live") as "live" | "backlog",
  refsPerPush: Math.round(positive("BENCH_REFS_PER_PUSH", 25)),
  output: process.env.BENCH_OUTPUT
}
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }
const GIT_ENV = {
  ...process.env,
  GIT_AUTHOR_NAME: "Bench",
  GIT_AUTHOR_EMAIL: "bench@example.com",
  GIT_COMMITTER_NAME: "Bench",
  GIT_COMMITTER_EMAIL: "bench@example.com",
  GIT_TERMINAL_PROMPT: "0"
}
const git = (cwd: string, args: ReadonlyArray<string>) => execFileP("git", args, { cwd, env: GIT_ENV })

interface Result {
  readonly server: string
  readonly load: number
  readonly rate: number
  readonly windowRate: number
  readonly p50: number
  readonly p99: number
  readonly lost: number
  readonly duplicated: number
  readonly hookedP50: number
  readonly plainP50: number
  /** The backlog scenario's drain: deliveries/s over all of it, the median and slowest 1 s window. */
  readonly drain?: {
    readonly ms: number
    readonly count: number
    readonly rate: number
    readonly p50: number
    readonly min: number
    /** PostgreSQL's transactions committed during the drain, per delivery. */
    readonly perDelivery: number
    /** Hook tasks queued per second, from the first push to the last task queued (the event hop). */
    readonly queuedRate: number
  }
}

/** Whole 1-second windows from `from` (the last, partial one left out): deliveries in each. */
const perSecond = (times: ReadonlyArray<number>, from: number) => {
  const counts: Array<number> = []
  for (const t of times) {
    const w = Math.floor((t - from) / 1000)
    while (counts.length <= w) counts.push(0)
    counts[w]!++
  }
  return counts.slice(0, -1)
}

const runOnce = async (server: BenchServer): Promise<Result> => {
  const backlog = config.scenario === "backlog"
  const load0 = os.loadavg()
  const databaseUrl = config.backend === "postgres" ? (await preparePostgres()).url : undefined
  const dir = tempDir("hearth-bench-webhooks-")
  const backend: Backend = {
    name: config.backend,
    dataDir: join(dir, "data"),
    logFile: join(dir, "hearth.log"),
    tree: server.tree,
    nodeArgs: server.nodeArgs,
    ...(databaseUrl === undefined ? {} : { databaseUrl }),
    env: {
      HEARTH__webhook__ALLOWED_HOST_LIST: "loopback",
      HEARTH__log__LEVEL: "Warn",
      // The held first deliveries must not time out while the backlog builds up.
      ...(backlog ? { HEARTH__webhook__DELIVER_TIMEOUT: "3600" } : {}),
      ...server.env
    }
  }
  await createAccount(backend, ACCOUNT)
  const running = await startHearth(backend)
  const auth = { authorization: basic(ACCOUNT.username, ACCOUNT.password), "content-type": "application/json" }

  // The receiver: each delivery id once; the arrival time of each push's deliveries.
  const seen = new Map<string, number>()
  const arrivals: Array<{ after: string; at: number }> = []
  // Backlog: answers held until every task is queued.
  let holding = backlog
  const held: Array<() => void> = []
  const receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const at = performance.now()
      const id = String(req.headers["x-forgejo-delivery"])
      seen.set(id, (seen.get(id) ?? 0) + 1)
      if (req.headers["x-forgejo-event"] === "push")
        arrivals.push({ after: JSON.parse(Buffer.concat(chunks).toString("utf8")).after, at })
      if (holding) held.push(() => res.writeHead(200).end())
      else res.writeHead(200).end()
    })
  })
  // Held answers may wait longer than Node's default request time-out (5 min) would allow.
  receiver.requestTimeout = 0
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  const port = (receiver.address() as { port: number }).port

  const names = backlog ? ["hooked"] : ["hooked", "plain"]
  for (const name of names) {
    const res = await http(`${running.base}/api/v1/user/repos`, {
      method: "POST",
      headers: auth,
      timeoutMs: 60_000,
      body: JSON.stringify({ name, auto_init: true })
    })
    if (res.status !== 201) throw new Error(`repository ${name}: ${res.status}`)
  }
  const hookIds: Array<number> = []
  for (let i = 0; i < config.hooks; i++) {
    const res = await http(`${running.base}/api/v1/repos/bench/hooked/hooks`, {
      method: "POST",
      headers: auth,
      timeoutMs: 60_000,
      body: JSON.stringify({
        type: "forgejo",
        config: { url: `http://127.0.0.1:${port}/hook/${i}`, content_type: "json" },
        events: ["push"],
        active: true
      })
    })
    if (res.status !== 201) throw new Error(`hook ${i}: ${res.status} ${res.body}`)
    hookIds.push(JSON.parse(res.body.toString("utf8")).id)
  }
  const remote = (name: string) =>
    `${running.base.replace("http://", `http://${ACCOUNT.username}:${ACCOUNT.password}@`)}/bench/${name}.git`
  // Each pusher: its own clone of each repository, pushing to its own branch (no push is rejected
  // as a non-fast-forward, none waits for another's ref lock beyond the server's own).
  const pushers = Array.from({ length: config.pushers }, (_, j) => j)
  for (const j of pushers) for (const name of names) await git(dir, ["clone", "-q", remote(name), `${name}-${j}`])

  const pushed = new Map<string, number>()
  const pushMs: Record<string, Array<number>> = { hooked: [], plain: [] }
  const pushOnce = async (name: string, j: number, i: number) => {
    const cwd = join(dir, `${name}-${j}`)
    writeFileSync(join(cwd, "file.txt"), `change ${j} ${i}\n`)
    await git(cwd, ["add", "file.txt"])
    await git(cwd, ["commit", "-q", "-m", `change ${j} ${i}`])
    const sha = (await git(cwd, ["rev-parse", "HEAD"])).stdout.trim()
    const start = performance.now()
    await git(cwd, ["push", "-q", "origin", `HEAD:refs/heads/pusher-${j}`])
    const end = performance.now()
    pushMs[name]!.push(end - start)
    if (name === "hooked") pushed.set(sha, end)
  }
  // Backlog: one `git push` updates BENCH_REFS_PER_PUSH new branches, each a push event's ref update
  // of its own (one push payload per hook each, as Forgejo sends), so the backlog builds up in
  // minutes on a loaded machine rather than in an hour of one-ref pushes.
  // Their commits are made before the clock starts (a `git commit` and a `git rev-parse` per ref
  // update took most of the pushers' time, and bounded the hop's rate measured below by theirs).
  const specsOf = new Map<number, Array<string>>()
  if (backlog) {
    await Promise.all(
      pushers.map(async (j) => {
        const cwd = join(dir, `hooked-${j}`)
        for (let i = j; i < config.pushes; i += config.pushers) {
          await git(cwd, ["commit", "-q", "--allow-empty", "-m", `change ${j} ${i}`])
          specsOf.set(i, [`${(await git(cwd, ["rev-parse", "HEAD"])).stdout.trim()}:refs/heads/p${j}-${i}`])
        }
      })
    )
  }
  const pushRefs = async (j: number, ids: ReadonlyArray<number>) => {
    const cwd = join(dir, `hooked-${j}`)
    await git(cwd, ["push", "-q", "origin", ...ids.flatMap((i) => specsOf.get(i)!)])
  }
  log(
    backlog
      ? `${server.label}: ${config.pushes} pushes from ${config.pushers} concurrent pushers to a repository with ${config.hooks} hooks, their deliveries held back`
      : `${server.label}: ${config.pushes} pushes to each repository from ${config.pushers} concurrent pushers, alternated; ${config.hooks} hooks on one of them`
  )
  const started = performance.now()
  let done = 0
  await Promise.all(
    pushers.map(async (j) => {
      // Pusher j makes pushes j, j + P, j + 2P…: BENCH_PUSHES in all.
      if (backlog) {
        const mine = Array.from({ length: config.pushes }, (_, i) => i).filter((i) => i % config.pushers === j)
        for (let k = 0; k < mine.length; k += config.refsPerPush) {
          await pushRefs(j, mine.slice(k, k + config.refsPerPush))
          log(`pusher ${j}: ${Math.min(k + config.refsPerPush, mine.length)} of ${mine.length} ref updates pushed`)
        }
        return
      }
      for (let i = j; i < config.pushes; i += config.pushers) {
        // Alternate which goes first, so neither always follows the other's deliveries.
        const order = backlog ? names : i % 2 === 0 ? ["hooked", "plain"] : ["plain", "hooked"]
        for (const name of order) await pushOnce(name, j, i)
        if (++done % 100 === 0) log(`${done} pushes; ${arrivals.length} deliveries so far`)
      }
    })
  )
  const pushesDone = performance.now()
  const expected = config.pushes * config.hooks
  let released = pushesDone
  let queuedAt = pushesDone
  let xacts0 = Number.NaN
  if (backlog) {
    // Every push's tasks queued (the event hub's hop may still be at work): the histories count them.
    const queued = async () => {
      let sum = 0
      for (const id of hookIds) {
        const res = await http(`${running.base}/api/v1/repos/bench/hooked/hooks/${id}/deliveries?limit=1`, {
          headers: auth,
          timeoutMs: 60_000
        })
        sum += Number(res.headers["x-total-count"] ?? 0)
      }
      return sum
    }
    for (let n = await queued(), until = Date.now() + 600_000; n < expected && Date.now() < until; n = await queued()) {
      log(`${n} of ${expected} deliveries queued`)
      await new Promise((r) => setTimeout(r, 2000))
    }
    log(`all queued, ${held.length} held at the receiver; answering them and timing the drain`)
    if (databaseUrl !== undefined) xacts0 = await transactions(databaseUrl)
    released = performance.now()
    queuedAt = released
    holding = false
    for (const answer of held.splice(0)) answer()
  }
  const deadline = Date.now() + 600_000
  while (arrivals.length < expected && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  // A little longer, for a duplicate to show itself.
  await new Promise((r) => setTimeout(r, 2000))
  // Statistics reach pg_stat_database within a second or so: read after the wait above.
  const xacts = databaseUrl !== undefined && backlog ? (await transactions(databaseUrl)) - xacts0 : Number.NaN
  const lastArrival = Math.max(...arrivals.map((a) => a.at))
  const firstArrival = Math.min(...arrivals.map((a) => a.at))
  const latencies = arrivals
    .map((a) => a.at - (pushed.get(a.after) ?? a.at))
    .map((ms) => Math.max(0, ms))
    .sort((a, b) => a - b)
  const duplicated = [...seen.values()].filter((n) => n > 1).length
  const lost = expected - seen.size
  const rate = arrivals.length / ((lastArrival - firstArrival) / 1000)
  // Sustained: the busiest 10-second window of deliveries (or the whole span if shorter).
  const times = arrivals.map((a) => a.at).sort((a, b) => a - b)
  let windowMax = 0
  for (let a = 0, b = 0; b < times.length; b++) {
    while (times[b]! - times[a]! > 10_000) a++
    windowMax = Math.max(windowMax, b - a + 1)
  }
  const windowRate = lastArrival - firstArrival > 10_000 ? windowMax / 10 : rate
  const drain = arrivals.filter((a) => a.at > pushesDone).length
  const drained = times.filter((t) => t > released)
  const windows = perSecond(drained, released)
  const backlogDrain = backlog
    ? {
        ms: lastArrival - released,
        count: drained.length,
        rate: drained.length / ((lastArrival - released) / 1000),
        p50: median(windows),
        min: windows.length === 0 ? NaN : Math.min(...windows),
        perDelivery: xacts / drained.length,
        queuedRate: expected / ((queuedAt - started) / 1000)
      }
    : undefined
  const hookedP50 = median(pushMs.hooked!)
  const plainP50 = median(pushMs.plain!)
  receiver.close()
  await stopChild(running.child)

  const lines =
    backlogDrain !== undefined
      ? [
          machineLine(load0),
          `Server ${server.label} (${server.tree}); date: ${new Date().toISOString()}; ${config.backend} database; backlog: ${config.pushes} pushes × ${config.hooks} hooks (forgejo, json) queued behind ${config.hooks} held deliveries, then drained to a loopback receiver; ${config.pushers} concurrent pushers`,
          "",
          "| measure | result | target |",
          "|---|---:|---:|",
          `| drain: deliveries / time | ${backlogDrain.count} in ${fmt(backlogDrain.ms)} ms | |`,
          `| deliveries/s, whole drain | ${fmt(backlogDrain.rate)} | ≥ 500 |`,
          `| deliveries/s, 1 s windows: median / slowest | ${fmt(backlogDrain.p50)} / ${fmt(backlogDrain.min)} | ≥ 500 |`,
          `| deliveries lost / duplicated | ${lost} / ${duplicated} | 0 / 0 |`,
          `| PostgreSQL transactions per delivery during the drain | ${fmt(backlogDrain.perDelivery, 2)} | |`,
          `| hook tasks queued/s, first push to last task queued (within ~2 s) | ${fmt(backlogDrain.queuedRate)} | |`,
          `| pushes/s (queueing) | ${fmt(config.pushes / ((pushesDone - started) / 1000), 1)} | |`
        ]
      : [
          machineLine(load0),
          `Server ${server.label} (${server.tree}); date: ${new Date().toISOString()}; ${config.backend} database; ${config.pushes} pushes × ${config.hooks} hooks (forgejo, json) to a loopback receiver; ${config.pushers} concurrent pushers, each on its own branch; pushes alternated with a repository without hooks`,
          "",
          "| measure | result | target |",
          "|---|---:|---:|",
          `| deliveries/s, first to last delivery | ${fmt(rate)} | ≥ 500 |`,
          `| deliveries/s, busiest 10 s | ${fmt(windowRate)} | |`,
          `| pushes/s offered (both repositories) | ${fmt((2 * config.pushes) / ((pushesDone - started) / 1000), 1)} | |`,
          `| deliveries after the last push (drain) | ${drain} in ${fmt(lastArrival - pushesDone)} ms | |`,
          `| push (git push returned) → delivery, p50 / p99 ms | ${fmt(quantile(latencies, 0.5), 1)} / ${fmt(quantile(latencies, 0.99), 1)} | p50 ≤ 50 |`,
          `| deliveries lost / duplicated | ${lost} / ${duplicated} | 0 / 0 |`,
          `| git push p50 ms, hooks on / off | ${fmt(hookedP50, 1)} / ${fmt(plainP50, 1)} (${fmt(hookedP50 / plainP50, 2)}×) | ≤ 1.1× |`
        ]
  process.stdout.write(`${lines.join("\n")}\n\n`)
  return {
    server: server.label,
    load: load0[0]!,
    rate,
    windowRate,
    p50: quantile(latencies, 0.5),
    p99: quantile(latencies, 0.99),
    lost,
    duplicated,
    hookedP50,
    plainP50,
    ...(backlogDrain === undefined ? {} : { drain: backlogDrain })
  }
}

const main = async () => {
  const results: Array<Result> = []
  for (let round = 0; round < config.rounds; round++) {
    const n = config.servers.length
    for (let k = 0; k < n; k++) results.push(await runOnce(config.servers[(round + k) % n]!))
  }
  const rows = results.map(
    (r) =>
      `| ${r.server} | ${fmt(r.load, 1)} | ${fmt(r.p50, 1)} / ${fmt(r.p99, 1)} | ${fmt(r.rate)} / ${fmt(r.windowRate)} | ${r.lost} / ${r.duplicated} | ${fmt(r.hookedP50, 1)} / ${fmt(r.plainP50, 1)} |`
  )
  const byServer = config.servers.map((server) => {
    const mine = results.filter((r) => r.server === server.label)
    return {
      label: server.label,
      p50: median(mine.map((r) => r.p50)),
      rate: median(mine.map((r) => r.windowRate)),
      push: median(mine.map((r) => r.hookedP50 / r.plainP50))
    }
  })
  const first = byServer[0]!
  if (config.scenario === "backlog") {
    const drains = config.servers.map((server) => {
      const mine = results.filter((r) => r.server === server.label).map((r) => r.drain!)
      return {
        label: server.label,
        rate: median(mine.map((d) => d.rate)),
        p50: median(mine.map((d) => d.p50)),
        queued: median(mine.map((d) => d.queuedRate))
      }
    })
    process.stdout.write(
      `${[
        "| server | load at start | drain | deliveries/s whole drain | 1 s windows median / slowest | lost / duplicated | tasks queued/s |",
        "|---|---:|---:|---:|---:|---:|---:|",
        ...results.map(
          (r) =>
            `| ${r.server} | ${fmt(r.load, 1)} | ${r.drain!.count} in ${fmt(r.drain!.ms)} ms | ${fmt(r.drain!.rate)} | ${fmt(r.drain!.p50)} / ${fmt(r.drain!.min)} | ${r.lost} / ${r.duplicated} | ${fmt(r.drain!.queuedRate)} |`
        ),
        "",
        `| server (medians of its runs) | deliveries/s whole drain | 1 s windows median | whole drain vs ${drains[0]!.label} | tasks queued/s | queued/s vs ${drains[0]!.label} |`,
        "|---|---:|---:|---:|---:|---:|",
        ...drains.map(
          (d) =>
            `| ${d.label} | ${fmt(d.rate)} | ${fmt(d.p50)} | ${fmt(d.rate / drains[0]!.rate, 2)}× | ${fmt(d.queued)} | ${fmt(d.queued / drains[0]!.queued, 2)}× |`
        )
      ].join("\n")}\n`
    )
    if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results))
    return results.filter((r) => r.drain!.rate < 500 || r.lost !== 0 || r.duplicated !== 0).length
  }
  const lines = [
    "| server | load at start | push → delivery p50 / p99 ms | deliveries/s first–last / busiest 10 s | lost / duplicated | push p50 on / off ms |",
    "|---|---:|---:|---:|---:|---:|",
    ...rows,
    "",
    "| server (medians of its runs) | push → delivery p50 ms | deliveries/s, busiest 10 s | push on/off | p50 vs " +
      first.label +
      " |",
    "|---|---:|---:|---:|---:|",
    ...byServer.map(
      (b) => `| ${b.label} | ${fmt(b.p50, 1)} | ${fmt(b.rate)} | ${fmt(b.push, 2)}× | ${fmt(b.p50 / first.p50, 2)}× |`
    )
  ]
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results))
  let missed = 0
  for (const r of results) {
    if (r.rate < 500) missed++
    if (r.p50 > 50) missed++
    if (r.lost !== 0 || r.duplicated !== 0) missed++
    if (r.hookedP50 > 1.1 * r.plainP50) missed++
  }
  return missed
}

void runMain(main)

// What the quota check costs on the hot write paths (`npm run bench:quota`; issue 7): two Hearth
// servers run side by side, each on its own database and data dir, one with `[quota] ENABLED =
// true` and one with quotas off (no check at all); the writing account is in 2 groups with finite
// limits and owns BENCH_QUOTA_REPOS repositories on both, so that each check evaluates 2 groups
// over a real usage sum (its groups come from memory after the first look-up; the sum is read
// every time). The same writes go to both in pairs, one request at a time, alternating which server gets
// the pair's first request, after a random pause of 0–5 ms (so that neither falls into step with
// a periodic pause of the other): BENCH_QUOTA_REQUESTS `POST /contents/{path}` commits, then as
// many `POST /branches`, into a fresh repository per round and server. Each round restarts both
// servers and swaps which one has quotas on, so that whatever differs between the two (process,
// data, database) cancels out over the rounds. p50 per request per mode are medians over the
// rounds; the ratio is the geometric mean of the per-round on/off p50 ratios (over an even number
// of rounds, a steady difference between the two servers cancels out of it). Target: ≤ 1.05 (the
// check adds at most 5 %). Also shown: GET /user/quota/check (the evaluation alone) beside GET /user (the
// same authentication) on the server with quotas on.
// Hearth runs on PostgreSQL (infra/pg/start.sh, or BENCH_DATABASE_URL) and/or the embedded database.
import { writeFileSync } from "node:fs"
import { Agent } from "node:http"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  type BackendName,
  createAccount,
  createToken,
  fmt,
  http,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  quantile,
  type Running,
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  // Even, so that each server has quotas on as often as off.
  rounds: 2 * Math.max(1, Math.round(positive("BENCH_ROUNDS", 6) / 2)),
  requests: Math.round(positive("BENCH_QUOTA_REQUESTS", 150)),
  warmup: Math.round(positive("BENCH_QUOTA_WARMUP", 30)),
  repos: Math.round(positive("BENCH_QUOTA_REPOS", 50)),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown database "${b}"`)
    return b as BackendName
  }),
  output: process.env.BENCH_OUTPUT
}
const TARGET_RATIO = 1.05
const ACCOUNT: Account = { username: "bench", password: "bench-password-123", admin: true }
const MODES = ["off", "on"] as const
type Mode = (typeof MODES)[number]
const CASES = ["POST /contents/{path} (commit)", "POST /branches"] as const
type Case = (typeof CASES)[number]

const p50 = (values: ReadonlyArray<number>) =>
  quantile(
    [...values].sort((a, b) => a - b),
    0.5
  )
const geometricMean = (values: ReadonlyArray<number>) =>
  Math.exp(values.reduce((sum, v) => sum + Math.log(v), 0) / values.length)

interface Server {
  readonly mode: Mode
  readonly running: Running
  readonly token: string
  readonly agent: Agent
}

/** One request, checked; its time in ms (not counting a random pause of 0–5 ms before it). */
const call = async (server: Server, method: string, path: string, body: unknown, status: number) => {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 5))
  const started = performance.now()
  const res = await http(`${server.running.base}/api/v1${path}`, {
    method,
    agent: server.agent,
    timeoutMs: 30_000,
    headers: { authorization: `token ${server.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const ms = performance.now() - started
  if (res.status !== status)
    throw new Error(`${server.mode}: ${method} ${path} answered ${res.status}: ${res.body.toString().slice(0, 300)}`)
  return ms
}

/** One of the two servers' database and data dir, its account's token. */
interface Slot {
  readonly backend: Backend
  readonly token: string
}

const serve = async (slot: Slot, mode: Mode): Promise<Server> => {
  const running = await startHearth({
    ...slot.backend,
    env: { HEARTH__quota__ENABLED: mode === "on" ? "true" : "false" }
  })
  return { mode, running, token: slot.token, agent: new Agent({ keepAlive: true }) }
}

const stop = async (server: Server) => {
  server.agent.destroy()
  await stopChild(server.running.child)
}

/**
 * A database and data dir with the account in 2 groups and its repositories. Both groups have
 * finite limits, so every check reads the usage (an unlimited group would decide without it).
 */
const prepareSlot = async (name: BackendName, index: number): Promise<Slot> => {
  const dataDir = tempDir(`hearth-bench-quota-${name}-${index}-`)
  let backend: Backend = { name, dataDir, logFile: join(dataDir, "hearth.log") }
  if (name === "postgres") backend = { ...backend, databaseUrl: (await preparePostgres()).url }
  await createAccount(backend, ACCOUNT)
  const running = await startHearth({ ...backend, env: { HEARTH__quota__ENABLED: "true" } })
  const server: Server = {
    mode: "on",
    running,
    token: await createToken(running.base, ACCOUNT, ["all"]),
    agent: new Agent({ keepAlive: true })
  }
  const groups = [
    { name: "repos-10g", rules: [{ name: "repos-10g", limit: 10 * 2 ** 30, subjects: ["size:repos:all"] }] },
    { name: "everything", rules: [{ name: "all-20g", limit: 20 * 2 ** 30, subjects: ["size:all"] }] }
  ]
  for (const group of groups) await call(server, "POST", "/admin/quota/groups", group, 201)
  await call(
    server,
    "POST",
    `/admin/users/${ACCOUNT.username}/quota/groups`,
    { groups: groups.map((g) => g.name) },
    204
  )
  log(`${name} (database ${index + 1}): creating ${config.repos} repositories`)
  for (let i = 0; i < config.repos; i++)
    await call(server, "POST", "/user/repos", { name: `filler-${i}`, auto_init: true, private: i % 2 === 0 }, 201)
  await stop(server)
  return { backend, token: server.token }
}

/** The same request to both servers, in the order given; the time of each. */
const pair = async (servers: ReadonlyArray<Server>, first: number, request: (s: Server) => Promise<number>) => {
  const times = {} as Record<Mode, number>
  for (const s of [servers[first]!, servers[1 - first]!]) times[s.mode] = await request(s)
  return times
}

/** One round: both servers started (the n-th swaps which has quotas on), a fresh repository on each, warm-up, the paired timed writes. */
const round = async (slots: ReadonlyArray<Slot>, n: number) => {
  const servers = [
    await serve(slots[0]!, n % 2 === 1 ? "on" : "off"),
    await serve(slots[1]!, n % 2 === 1 ? "off" : "on")
  ]
  try {
    return await measure(servers, n)
  } finally {
    for (const s of servers) await stop(s)
  }
}

const measure = async (servers: ReadonlyArray<Server>, n: number) => {
  const repo = `round-${n}`
  for (const s of servers) await call(s, "POST", "/user/repos", { name: repo, auto_init: true }, 201)
  const path = `/repos/${ACCOUNT.username}/${repo}`
  const file = (i: number) => ({
    content: Buffer.from(`line ${i} of ${repo}\n`).toString("base64"),
    message: `file ${i}`
  })
  const commit = (dir: string, i: number) => (s: Server) =>
    call(s, "POST", `${path}/contents/${dir}/${i}.txt`, file(i), 201)
  const branch = (prefix: string, i: number) => (s: Server) =>
    call(s, "POST", `${path}/branches`, { new_branch_name: `${prefix}-${i}` }, 201)
  for (let i = 0; i < config.warmup; i++) {
    await pair(servers, i % 2, commit("warm", i))
    await pair(servers, i % 2, branch("warm", i))
  }
  const times: Record<Mode, Record<Case, Array<number>>> = {
    off: { [CASES[0]]: [], [CASES[1]]: [] },
    on: { [CASES[0]]: [], [CASES[1]]: [] }
  }
  const record = (c: Case, t: Record<Mode, number>) => {
    for (const m of MODES) times[m][c].push(t[m])
  }
  for (let i = 0; i < config.requests; i++) record(CASES[0], await pair(servers, (i + n) % 2, commit("f", i)))
  for (let i = 0; i < config.requests; i++) record(CASES[1], await pair(servers, (i + n) % 2, branch("b", i)))
  const on = servers.find((s) => s.mode === "on")!
  const reads = { check: [] as Array<number>, user: [] as Array<number> }
  for (let i = 0; i < config.requests; i++) {
    reads.check.push(await call(on, "GET", "/user/quota/check?subject=size:repos:all", undefined, 200))
    reads.user.push(await call(on, "GET", "/user", undefined, 200))
  }
  return {
    off: { [CASES[0]]: p50(times.off[CASES[0]]), [CASES[1]]: p50(times.off[CASES[1]]) } as Record<Case, number>,
    on: { [CASES[0]]: p50(times.on[CASES[0]]), [CASES[1]]: p50(times.on[CASES[1]]) } as Record<Case, number>,
    check: p50(reads.check),
    user: p50(reads.user)
  }
}

const main = async () => {
  const load0 = os.loadavg()
  const results: Array<{ backend: BackendName; rounds: Array<Awaited<ReturnType<typeof round>>> }> = []
  for (const name of config.backends) {
    const slots = [await prepareSlot(name, 0), await prepareSlot(name, 1)]
    const rounds: Array<Awaited<ReturnType<typeof round>>> = []
    for (let n = 1; n <= config.rounds; n++) {
      const row = await round(slots, n)
      rounds.push(row)
      log(
        `${name} round ${n}: ` +
          CASES.map((c) => `${c} p50 off ${fmt(row.off[c], 2)} ms, on ${fmt(row.on[c], 2)} ms`).join("; ")
      )
    }
    results.push({ backend: name, rounds })
  }

  let missed = 0
  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; Node ${process.version}`,
    `Writes: ${config.requests} per case and round to each server, in pairs, one request at a time after a 0–5 ms pause (after ` +
      `${config.warmup} pairs of each as warm-up), ${config.rounds} rounds swapping which server has quotas on; the account owns ` +
      `${config.repos}–${config.repos + config.rounds} repositories and is in 2 groups`,
    "",
    "| database | request | p50 quota off | p50 quota on | ratio on/off: geometric mean (per round) | target | met |",
    "|---|---|---:|---:|---|---:|---|"
  ]
  for (const { backend, rounds } of results) {
    for (const c of CASES) {
      const ratios = rounds.map((r) => r.on[c] / r.off[c])
      const ratio = geometricMean(ratios)
      const met = ratio <= TARGET_RATIO
      if (!met) missed++
      lines.push(
        `| ${backend} | ${c} | ${fmt(median(rounds.map((r) => r.off[c])), 2)} ms | ${fmt(median(rounds.map((r) => r.on[c])), 2)} ms | ` +
          `**${fmt(ratio, 3)}** (${ratios.map((r) => fmt(r, 3)).join(", ")}) | ≤ ${TARGET_RATIO} | ${met ? "yes" : "NO"} |`
      )
    }
  }
  lines.push(
    "",
    "| database | GET /user/quota/check p50 | GET /user p50 | difference (the evaluation) |",
    "|---|---:|---:|---:|"
  )
  for (const { backend, rounds } of results) {
    const check = median(rounds.map((r) => r.check))
    const user = median(rounds.map((r) => r.user))
    lines.push(`| ${backend} | ${fmt(check, 3)} ms | ${fmt(user, 3)} ms | ${fmt(check - user, 3)} ms |`)
  }
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results, null, 2))
  return missed
}

await runMain(main)

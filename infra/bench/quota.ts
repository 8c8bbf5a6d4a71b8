// What the quota check costs on the hot write paths (`npm run bench:quota`; issue 7): the same
// writes timed with `[quota] ENABLED = true` (the writing account in 2 groups, owning
// BENCH_QUOTA_REPOS repositories, so the check evaluates 2 groups over a real usage sum) and with
// quotas off (no check at all), side by side in one run: each round starts the server once per
// mode on the same data, alternating which mode goes first, and times, one request at a time,
// BENCH_QUOTA_REQUESTS `POST /contents/{path}` commits and as many `POST /branches` in a fresh
// repository of its own. p50 per request per mode are medians over the rounds; the ratio is the
// median of the per-round enabled/disabled p50 ratios. Target: the check adds at most 5 % (≤ 1.05).
// Also shown: GET /user/quota/check (the evaluation alone) beside GET /user (same authentication).
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
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"

const config = {
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 5))),
  requests: Math.round(positive("BENCH_QUOTA_REQUESTS", 150)),
  warmup: Math.round(positive("BENCH_QUOTA_WARMUP", 20)),
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

/** One request, checked; its time in ms. */
const timed = async (base: string, agent: Agent, token: string, method: string, path: string, body: unknown, status: number) => {
  const started = performance.now()
  const res = await http(`${base}/api/v1${path}`, {
    method,
    agent,
    timeoutMs: 30_000,
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const ms = performance.now() - started
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${res.body.toString().slice(0, 300)}`)
  return { ms, body: res.body }
}

const p50 = (values: ReadonlyArray<number>) => quantile([...values].sort((a, b) => a - b), 0.5)

/** The account in two groups that both allow (one by a byte limit, one unlimited), and its repositories. */
const setUp = async (backend: Backend) => {
  const hearth = await startHearth({ ...backend, env: { HEARTH__quota__ENABLED: "true" } })
  const agent = new Agent({ keepAlive: true })
  try {
    const token = await createToken(hearth.base, ACCOUNT, ["all"])
    const call = (method: string, path: string, body: unknown, status: number) => timed(hearth.base, agent, token, method, path, body, status)
    await call("POST", "/admin/quota/groups", { name: "repos-10g", rules: [{ name: "repos-10g", limit: 10 * 2 ** 30, subjects: ["size:repos:all"] }] }, 201)
    await call("POST", "/admin/quota/groups", { name: "everything", rules: [{ name: "all-unlimited", limit: -1, subjects: ["size:all"] }] }, 201)
    await call("POST", `/admin/users/${ACCOUNT.username}/quota/groups`, { groups: ["repos-10g", "everything"] }, 204)
    log(`${backend.name}: creating ${config.repos} repositories for the usage sum`)
    for (let i = 0; i < config.repos; i++) await call("POST", "/user/repos", { name: `filler-${i}`, auto_init: true, private: i % 2 === 0 }, 201)
    return token
  } finally {
    agent.destroy()
    await stopChild(hearth.child)
  }
}

/** One mode in one round: a fresh repository, warm-up, then the timed writes. */
const measure = async (backend: Backend, token: string, mode: Mode, round: number) => {
  const hearth = await startHearth({ ...backend, env: { HEARTH__quota__ENABLED: mode === "on" ? "true" : "false" } })
  const agent = new Agent({ keepAlive: true })
  try {
    const call = (method: string, path: string, body: unknown, status: number) => timed(hearth.base, agent, token, method, path, body, status)
    const repo = `r${round}-${mode}`
    await call("POST", "/user/repos", { name: repo, auto_init: true }, 201)
    const file = (i: number) => ({ content: Buffer.from(`line ${i} of ${repo}\n`).toString("base64"), message: `file ${i}` })
    for (let i = 0; i < config.warmup; i++) {
      await call("POST", `/repos/${ACCOUNT.username}/${repo}/contents/warm/${i}.txt`, file(i), 201)
      await call("POST", `/repos/${ACCOUNT.username}/${repo}/branches`, { new_branch_name: `warm-${i}` }, 201)
    }
    const times: Record<Case, Array<number>> = { [CASES[0]]: [], [CASES[1]]: [] }
    for (let i = 0; i < config.requests; i++) {
      times[CASES[0]].push((await call("POST", `/repos/${ACCOUNT.username}/${repo}/contents/f/${i}.txt`, file(i), 201)).ms)
    }
    for (let i = 0; i < config.requests; i++) {
      times[CASES[1]].push((await call("POST", `/repos/${ACCOUNT.username}/${repo}/branches`, { new_branch_name: `b-${i}` }, 201)).ms)
    }
    // The evaluation alone (enabled only: the route does not exist otherwise), beside a GET with the same authentication.
    const reads = { check: [] as Array<number>, user: [] as Array<number> }
    if (mode === "on") {
      for (let i = 0; i < config.requests; i++) {
        reads.check.push((await call("GET", "/user/quota/check?subject=size:repos:all", undefined, 200)).ms)
        reads.user.push((await call("GET", "/user", undefined, 200)).ms)
      }
    }
    return { times, reads }
  } finally {
    agent.destroy()
    await stopChild(hearth.child)
  }
}

const main = async () => {
  const load0 = os.loadavg()
  const results: Array<{
    backend: BackendName
    rounds: Array<Record<Mode, Record<Case, number>> & { check: number; user: number }>
  }> = []
  let pgServer = ""
  for (const name of config.backends) {
    const dataDir = tempDir(`hearth-bench-quota-${name}-`)
    let backend: Backend = { name, dataDir, logFile: join(dataDir, "hearth.log") }
    if (name === "postgres") {
      const pg = await preparePostgres()
      pgServer = pg.server
      backend = { ...backend, databaseUrl: pg.url }
    }
    await createAccount(backend, ACCOUNT)
    const token = await setUp(backend)
    const rounds: (typeof results)[number]["rounds"] = []
    for (let round = 1; round <= config.rounds; round++) {
      const order: ReadonlyArray<Mode> = round % 2 === 1 ? ["off", "on"] : ["on", "off"]
      const row = { check: 0, user: 0 } as (typeof rounds)[number]
      for (const mode of order) {
        const { times, reads } = await measure(backend, token, mode, round)
        row[mode] = { [CASES[0]]: p50(times[CASES[0]]), [CASES[1]]: p50(times[CASES[1]]) } as Record<Case, number>
        if (mode === "on") Object.assign(row, { check: p50(reads.check), user: p50(reads.user) })
      }
      rounds.push(row)
      log(`${name} round ${round}: ` + CASES.map((c) => `${c} p50 off ${fmt(row.off[c], 2)} ms, on ${fmt(row.on[c], 2)} ms`).join("; "))
    }
    results.push({ backend: name, rounds })
  }

  let missed = 0
  const lines = [
    machineLine(load0),
    `Date: ${new Date().toISOString()}; Node ${process.version}${pgServer === "" ? "" : `; PostgreSQL ${pgServer}`}`,
    `Writes: ${config.requests} per case, mode and round, one at a time (after ${config.warmup} of each as warm-up), ` +
    `${config.rounds} rounds alternating which mode goes first; the account owns ${config.repos + 1} repositories and is in 2 groups`,
    "",
    "| database | request | p50 quota off | p50 quota on | ratio on/off (per round) | target | met |",
    "|---|---|---:|---:|---|---:|---|"
  ]
  for (const { backend, rounds } of results) {
    for (const c of CASES) {
      const ratios = rounds.map((r) => r.on[c] / r.off[c])
      const ratio = median(ratios)
      const met = ratio <= TARGET_RATIO
      if (!met) missed++
      lines.push(
        `| ${backend} | ${c} | ${fmt(median(rounds.map((r) => r.off[c])), 2)} ms | ${fmt(median(rounds.map((r) => r.on[c])), 2)} ms | ` +
          `**${fmt(ratio, 3)}** (${ratios.map((r) => fmt(r, 3)).join(", ")}) | ≤ ${TARGET_RATIO} | ${met ? "yes" : "NO"} |`
      )
    }
  }
  lines.push("", "| database | GET /user/quota/check p50 | GET /user p50 | difference (the evaluation) |", "|---|---:|---:|---:|")
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

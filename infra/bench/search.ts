// Hearth's repository search benchmark (`npm run bench:search`; settings in infra/bench/README.md,
// issue 3): GET /api/v1/repos/search over 10,000 repositories on PostgreSQL, several query shapes,
// anonymous and with a token, sequential requests on one keep-alive connection; p50/p99 per shape.
// Target: p50 ≤ 10 ms for every shape.
// The repositories are created through the API (POST /user/repos and /orgs/{org}/repos, 8 at a
// time) by four users and two organizations, one in five private, and a few hundred are starred.

import { readFileSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  analyze,
  type Backend,
  cpuSeconds,
  createAccount,
  createToken,
  execFileP,
  fmt,
  type HttpOptions,
  http,
  log,
  machineLine,
  median,
  nodeBin,
  positive,
  postgresCpuSeconds,
  preparePostgres,
  quantile,
  root,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const config = {
  repos: Math.round(positive("BENCH_SEARCH_REPOS", 10_000)),
  requests: Math.round(positive("BENCH_SEARCH_REQUESTS", 200)),
  rounds: Math.max(1, Math.round(positive("BENCH_SEARCH_ROUNDS", 2))),
  warmup: Math.round(positive("BENCH_SEARCH_WARMUP", 20)),
  concurrency: Math.round(positive("BENCH_SEARCH_CONCURRENCY", 8)),
  stars: Math.round(positive("BENCH_SEARCH_STARS", 400)),
  // `0`: measure right after the bulk creation, before PostgreSQL has statistics for the new rows.
  analyze: process.env.BENCH_SEARCH_ANALYZE !== "0",
  output: process.env.BENCH_OUTPUT
}

const TARGET_P50_MS = 10
const PASSWORD = "bench-password-123"
const ADMIN: Account = { username: "bench", password: PASSWORD, admin: true }
const USERS = ["ada", "brook", "cedar", "dune"]
const ORGS = [
  { name: "acme", owner: "ada" },
  { name: "lumen", owner: "brook" }
]

const WORDS = (
  "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone ember hearth forge anvil copper " +
  "timber cedar maple willow harbor beacon lantern signal packet branch commit merge rebase object index cache buffer " +
  "stream socket kernel thread module export import yield async await parser lexer router widget gadget engine"
).split(" ")

/** Deterministic names: two words and the zero-padded index, e.g. `river-cache-04242`. */
const repoName = (i: number) =>
  `${WORDS[(i * 7) % WORDS.length]}-${WORDS[(i * 13 + 5) % WORDS.length]}-${String(i).padStart(5, "0")}`

/** Runs `f` over 0..count-1 with at most `width` calls in flight; reports progress every `every`. */
const pool = async (
  count: number,
  width: number,
  f: (i: number) => Promise<void>,
  progress?: (done: number) => void,
  every = 1000
) => {
  let next = 0
  let done = 0
  const worker = async () => {
    while (next < count) {
      const i = next++
      await f(i)
      done++
      if (progress !== undefined && done % every === 0) progress(done)
    }
  }
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker))
}

const timedSeconds = async (f: () => Promise<unknown>) => {
  const started = performance.now()
  await f()
  return (performance.now() - started) / 1000
}

const ok = async (url: string, options: HttpOptions, expected: number, what: string) => {
  const res = await http(url, { timeoutMs: 60_000, ...options })
  if (res.status !== expected) throw new Error(`${what} failed: ${res.status} ${res.body.toString().slice(0, 300)}`)
  return res
}

const jsonBody = (token: string, body: unknown): HttpOptions => ({
  method: "POST",
  headers: { authorization: `token ${token}`, "content-type": "application/json" },
  body: JSON.stringify(body)
})

interface Shape {
  readonly label: string
  readonly query: string
  readonly token?: string
}

interface ShapeResult {
  readonly label: string
  readonly query: string
  readonly auth: string
  readonly total: number
  readonly p50: number
  readonly p99: number
  readonly roundP50: ReadonlyArray<number>
  readonly nodeMsPerRequest: number
  readonly pgMsPerRequest: number
}

const main = async () => {
  const tmp = tempDir("hearth-bench-search-")
  const nodeVersion = (await execFileP(nodeBin, ["--version"])).stdout.trim()
  const load0 = os.loadavg()
  log(`node ${nodeVersion}; ${fmt(config.repos)} repositories, ${config.requests} sequential requests per shape`)

  const pg = await preparePostgres()
  const backend: Backend = {
    name: "postgres",
    dataDir: join(tmp, "data"),
    databaseUrl: pg.url,
    logFile: join(tmp, "hearth.log")
  }
  log("creating the administrator account")
  await createAccount(backend, ADMIN)
  const hearth = await startHearth(backend)
  const api = `${hearth.base}/api/v1`
  const adminToken = await createToken(hearth.base, ADMIN, ["all"])

  // Users (through the admin API), their tokens, the organizations.
  const tokens = new Map<string, string>()
  const ids = new Map<string, number>()
  for (const username of USERS) {
    const res = await ok(
      `${api}/admin/users`,
      jsonBody(adminToken, {
        username,
        email: `${username}@example.com`,
        password: PASSWORD,
        must_change_password: false
      }),
      201,
      `creating the user ${username}`
    )
    ids.set(username, (JSON.parse(res.body.toString()) as { id: number }).id)
    tokens.set(username, await createToken(hearth.base, { username, password: PASSWORD }, ["all"]))
  }
  for (const org of ORGS) {
    const res = await ok(
      `${api}/orgs`,
      jsonBody(tokens.get(org.owner)!, { username: org.name }),
      201,
      `creating the organization ${org.name}`
    )
    ids.set(org.name, (JSON.parse(res.body.toString()) as { id: number }).id)
  }
  const owners = [
    ...USERS.map((u) => ({ name: u, creator: u, org: false })),
    ...ORGS.map((o) => ({ name: o.name, creator: o.owner, org: true }))
  ]
  const ownerOf = (i: number) => owners[i % owners.length]!
  const isPrivate = (i: number) => i % 5 === 0

  // The repositories, through the API, `concurrency` at a time.
  log(`creating ${fmt(config.repos)} repositories through the API, ${config.concurrency} at a time`)
  const createStarted = performance.now()
  await pool(
    config.repos,
    config.concurrency,
    async (i) => {
      const owner = ownerOf(i)
      const url = owner.org ? `${api}/orgs/${owner.name}/repos` : `${api}/user/repos`
      const name = repoName(i)
      await ok(
        url,
        jsonBody(tokens.get(owner.creator)!, {
          name,
          private: isPrivate(i),
          description: `The ${name.split("-").slice(0, 2).join(" ")} project`
        }),
        201,
        `creating ${owner.name}/${name}`
      )
    },
    (done) => {
      const seconds = (performance.now() - createStarted) / 1000
      log(`  ${fmt(done)} repositories in ${fmt(seconds, 1)} s (${fmt(done / seconds)} per second)`)
    }
  )
  const createSeconds = (performance.now() - createStarted) / 1000
  log(`created ${fmt(config.repos)} repositories in ${fmt(createSeconds, 1)} s`)

  // Stars, so that sorting by stars has something to sort: every user stars public repositories
  // picked by a fixed stride.
  const starsStarted = performance.now()
  const stars = Math.min(config.stars, config.repos)
  await pool(stars, config.concurrency, async (k) => {
    const username = USERS[k % USERS.length]!
    let i = (k * 37 + 11) % config.repos
    if (isPrivate(i)) i = (i + 1) % config.repos
    await ok(
      `${api}/user/starred/${ownerOf(i).name}/${repoName(i)}`,
      { method: "PUT", headers: { authorization: `token ${tokens.get(username)!}` } },
      204,
      "starring"
    )
  })
  log(`${fmt(stars)} stars in ${fmt((performance.now() - starsStarted) / 1000, 1)} s`)

  // Autovacuum analyzes a table only about a minute after it changed, and the bulk creation is
  // faster than that: without this, the first shapes measured run on plans for the empty tables.
  if (config.analyze) {
    const seconds = await timedSeconds(() => analyze(pg.url))
    log(`ANALYZE in ${fmt(seconds, 1)} s`)
  }

  // A search-only token as a client would have it.
  // A word of the first organization's first repository's name, so that `q` with its `uid` matches some.
  const orgWord = repoName(USERS.length).split("-")[0]!
  const reader = await createToken(hearth.base, { username: USERS[0]!, password: PASSWORD }, ["read:repository"])
  const shapes: Array<Shape> = [
    { label: "no q, default order", query: "" },
    { label: "q matching many", query: "q=er" },
    { label: "q matching few", query: "q=04242" },
    { label: "q and uid (an organization)", query: `q=${orgWord}&uid=${ids.get(ORGS[0]!.name)}` },
    { label: "sort by updated", query: "sort=updated&order=desc" },
    { label: "q matching many, sort by stars", query: "q=er&sort=stars&order=desc" },
    { label: "no q, default order", query: "", token: reader },
    { label: "q matching many", query: "q=er", token: reader },
    { label: "q matching few", query: "q=04242", token: reader },
    { label: "private only (is_private)", query: "is_private=true", token: reader },
    { label: "public only (private=false)", query: "q=er&private=false", token: reader },
    { label: "uid (own), sort by updated", query: `uid=${ids.get(USERS[0]!)}&sort=updated&order=desc`, token: reader },
    { label: "q matching many, sort by stars", query: "q=er&sort=stars&order=desc", token: reader },
    { label: "q matching many (administrator: sees all)", query: "q=er", token: adminToken }
  ]

  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const measured = shapes.map((shape) => ({
    shape,
    url: `${api}/repos/search${shape.query === "" ? "" : `?${shape.query}`}`,
    headers: shape.token === undefined ? {} : ({ authorization: `token ${shape.token}` } as Record<string, string>),
    auth: shape.token === undefined ? "anonymous" : shape.token === adminToken ? "token (admin)" : "token",
    total: NaN,
    times: [] as Array<number>,
    roundP50: [] as Array<number>,
    nodeSeconds: 0,
    pgSeconds: 0
  }))
  // Rounds in alternating order (forward, backward…), so that no shape always runs first, right
  // after the bulk creation (while autovacuum is still catching up) or always last.
  for (let round = 1; round <= config.rounds; round++) {
    const order = round % 2 === 1 ? measured : [...measured].reverse()
    for (const m of order) {
      for (let i = 0; i < config.warmup; i++) {
        const res = await ok(m.url, { headers: m.headers, agent }, 200, `GET ${m.url}`)
        m.total = Number(res.headers["x-total-count"] ?? NaN)
        const body = JSON.parse(res.body.toString()) as { ok?: boolean; data?: Array<unknown> }
        if (body.ok !== true || !Array.isArray(body.data))
          throw new Error(`GET ${m.url}: unexpected body ${res.body.toString().slice(0, 200)}`)
      }
      const times: Array<number> = []
      const cpu0 = cpuSeconds(hearth.child.pid!).self
      const pg0 = postgresCpuSeconds()
      for (let i = 0; i < config.requests; i++) {
        const started = performance.now()
        await ok(m.url, { headers: m.headers, agent }, 200, `GET ${m.url}`)
        times.push(performance.now() - started)
      }
      m.nodeSeconds += cpuSeconds(hearth.child.pid!).self - cpu0
      const pg1 = postgresCpuSeconds()
      if (pg0 !== undefined && pg1 !== undefined) m.pgSeconds += pg1 - pg0
      m.times.push(...times)
      m.roundP50.push(median(times))
      log(
        `round ${round} ${m.auth} ${m.shape.query || "(no query)"}: ${fmt(m.total)} matches, p50 ${fmt(median(times), 2)} ms, p99 ${fmt(
          quantile(
            times.sort((a, b) => a - b),
            0.99
          ),
          2
        )} ms`
      )
    }
  }
  agent.destroy()
  const pgMeasured = postgresCpuSeconds() !== undefined
  const results: Array<ShapeResult> = measured.map((m) => {
    const sorted = [...m.times].sort((a, b) => a - b)
    return {
      label: m.shape.label,
      query: m.shape.query,
      auth: m.auth,
      total: m.total,
      p50: quantile(sorted, 0.5),
      p99: quantile(sorted, 0.99),
      roundP50: m.roundP50,
      nodeMsPerRequest: (m.nodeSeconds * 1000) / m.times.length,
      pgMsPerRequest: pgMeasured ? (m.pgSeconds * 1000) / m.times.length : NaN
    }
  })

  // ---------------------------------------------------------------- report
  let missed = 0
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  out(machineLine(load0))
  out(
    `Date: ${new Date().toISOString()}; Hearth ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version} on Node ${nodeVersion}; PostgreSQL ${pg.server}`
  )
  out(
    `Data: ${fmt(config.repos)} repositories (${USERS.length} users, ${ORGS.length} organizations, one in five private), created through the API ${config.concurrency} at a time in ${fmt(createSeconds, 1)} s (${fmt(config.repos / createSeconds)} per second); ${fmt(stars)} stars; ${config.analyze ? "then ANALYZE" : "no ANALYZE (BENCH_SEARCH_ANALYZE=0): measured before PostgreSQL has statistics for the new rows"}`
  )
  out(
    `Load: ${config.rounds} rounds (shapes forward, then backward) of ${config.requests} sequential requests per shape on one keep-alive connection, each after ${config.warmup} unmeasured ones; default page size. p50/p99 over all rounds' requests; CPU per request from /proc (Hearth's process; PostgreSQL's server processes)`
  )
  out()
  out(
    "| caller | shape | query | matches | p50 ms (per round) | p99 ms | CPU ms/request: Hearth / PostgreSQL | target p50 | met |"
  )
  out("|---|---|---|---:|---:|---:|---:|---:|---|")
  for (const r of results) {
    const met = r.p50 <= TARGET_P50_MS
    if (!met) missed++
    out(
      `| ${r.auth} | ${r.label} | \`${r.query === "" ? "(none)" : r.query}\` | ${fmt(r.total)} | **${fmt(r.p50, 2)}** (${r.roundP50.map((p) => fmt(p, 2)).join(", ")}) | ${fmt(r.p99, 2)} | ${fmt(r.nodeMsPerRequest, 2)} / ${fmt(r.pgMsPerRequest, 2)} | ≤ ${TARGET_P50_MS} | ${met ? "yes" : `NO (+${fmt(r.p50 - TARGET_P50_MS, 1)} ms)`} |`
    )
  }
  out()
  out(missed === 0 ? "All targets met." : `${missed} target(s) missed.`)
  process.stdout.write(`\n${lines.join("\n")}\n`)
  if (config.output !== undefined && config.output !== "") {
    writeFileSync(
      config.output,
      JSON.stringify({ config, nodeVersion, pgVersion: pg.server, createSeconds, results, table: lines }, null, 2)
    )
  }
  return missed
}

await runMain(main)

// Issue 22's issue page (`npm run bench:web`, or alone: `node infra/bench/web/issue-page.ts`): an
// issue with 3 labels, a milestone, an assignee and 200 markdown comments (a third of them with
// reactions, from several people), on a freshly started Hearth per database; then, as an anonymous
// visitor on one keep-alive connection, one request after another, the two alternating:
// - the issue page (`/{o}/{r}/issues/1`);
// - the API calls a client makes for the same: GET the issue, its timeline paged as a client pages
//   it (`limit=50` until the last page), its reactions — one after another, their sum.
// Target: page p50 ≤ 40 ms and ≤ 2× the API's sum. Settings: BENCH_WEB_ISSUE_REQUESTS (100),
// BENCH_WEB_WARMUP (20), BENCH_BACKENDS, BENCH_WEB_PROFILE (a directory for a V8 CPU profile).
import { Agent } from "node:http"
import os from "node:os"
import { fileURLToPath } from "node:url"
import {
  type Account,
  type BackendName,
  basic,
  fmt,
  http,
  log,
  machineLine,
  positive,
  quantile,
  runMain,
  stopChild
} from "../support.ts"
import { apiCaller, startBenchServer } from "./Setup.ts"

const config = {
  requests: Math.round(positive("BENCH_WEB_ISSUE_REQUESTS", 100)),
  warmup: Math.round(positive("BENCH_WEB_WARMUP", 20)),
  comments: 200,
  profile: process.env.BENCH_WEB_PROFILE
}
const TARGETS = { pageMs: 40, ratio: 2 } as const
const ACCOUNT: Account = { username: "bench", password: "bench-password-123", admin: true }
const PEOPLE = ["ann", "ben", "cas", "dot"]

const stats = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: values.length }
}

interface Result {
  readonly backend: BackendName
  readonly page: ReturnType<typeof stats>
  readonly api: ReturnType<typeof stats>
  readonly apiCalls: number
}

const measure = async (name: BackendName): Promise<Result> => {
  const { hearth, auth } = await startBenchServer(
    name,
    "issue",
    ACCOUNT,
    config.profile === undefined
      ? {}
      : { nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${config.profile}`, `--cpu-prof-name=issue-${name}.cpuprofile`] }
  )
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  const api = (path: string) => `${hearth.base}/api/v1${path}`
  const asAccount = apiCaller(hearth.base, auth, agent)
  const call = (method: string, path: string, body: unknown, who = ACCOUNT.username) =>
    asAccount(method, path, body, who === ACCOUNT.username ? auth : basic(who, "bench-password-123"))
  log(`${name}: an issue with ${config.comments} comments`)
  for (const login of PEOPLE) {
    await call("POST", "/admin/users", {
      username: login,
      email: `${login}@example.com`,
      password: "bench-password-123",
      must_change_password: false
    })
  }
  await call("POST", "/user/repos", { name: "tracker", auto_init: true, readme: "Default" })
  await call("PUT", "/repos/bench/tracker/collaborators/ann", { permission: "write" })
  const labels: Array<number> = []
  for (const [label, color] of [
    ["bug", "#d73a4a"],
    ["ui", "#0075ca"],
    ["priority/high", "#b60205"]
  ] as const) {
    labels.push((await call("POST", "/repos/bench/tracker/labels", { name: label, color })).id)
  }
  const milestone = (await call("POST", "/repos/bench/tracker/milestones", { title: "v1.0" })).id
  await call("POST", "/repos/bench/tracker/issues", {
    title: "The page is slow with many comments",
    body: "Steps:\n\n1. Open an issue\n2. Wait\n\n```ts\nconst slow = true\n```\n\ncc @ann",
    labels,
    milestone,
    assignees: ["ann"]
  })
  for (let i = 0; i < config.comments; i++) {
    const who = PEOPLE[i % PEOPLE.length]!
    const comment = await call(
      "POST",
      "/repos/bench/tracker/issues/1/comments",
      {
        body: `Comment ${i}: **seen** it too, see #1 and \`render()\`.\n\n- a point\n- [link](https://example.com/${i})\n\n> quoted ${i}`
      },
      who
    )
    if (i % 3 === 0) {
      for (const [j, content] of ["+1", "heart", "rocket"].entries()) {
        if ((i + j) % 2 === 0) {
          await call("POST", `/repos/bench/tracker/issues/comments/${comment.id}/reactions`, { content }, PEOPLE[j]!)
        }
      }
    }
  }
  for (const content of ["+1", "eyes"]) {
    await call("POST", "/repos/bench/tracker/issues/1/reactions", { content }, "ben")
  }

  const timed = async (url: string) => {
    const started = performance.now()
    const reply = await http(url, { agent, headers: { "accept-encoding": "br, gzip" }, timeoutMs: 30_000 })
    const ms = performance.now() - started
    if (reply.status !== 200) throw new Error(`${url}: ${reply.status}`)
    return { ms, reply }
  }
  const page = `${hearth.base}/bench/tracker/issues/1`
  let apiCalls = 0
  const runApi = async () => {
    let total = 0
    let calls = 0
    total += (await timed(api("/repos/bench/tracker/issues/1"))).ms
    calls++
    for (let n = 1; ; n++) {
      const { ms, reply } = await timed(api(`/repos/bench/tracker/issues/1/timeline?limit=50&page=${n}`))
      total += ms
      calls++
      if ((JSON.parse(reply.body.toString()) as Array<unknown>).length < 50) break
    }
    total += (await timed(api("/repos/bench/tracker/issues/1/reactions"))).ms
    apiCalls = calls + 1
    return total
  }
  log(`${name}: the issue page and the API, ${config.warmup} warm-up + ${config.requests} each`)
  for (let i = 0; i < config.warmup; i++) {
    await timed(page)
    await runApi()
  }
  const pageTimes: Array<number> = []
  const apiTimes: Array<number> = []
  for (let i = 0; i < config.requests; i++) {
    if (i % 2 === 0) {
      pageTimes.push((await timed(page)).ms)
      apiTimes.push(await runApi())
    } else {
      apiTimes.push(await runApi())
      pageTimes.push((await timed(page)).ms)
    }
  }
  agent.destroy()
  await stopChild(hearth.child)
  return { backend: name, page: stats(pageTimes), api: stats(apiTimes), apiCalls }
}

/**
 * Measures on each database and writes the report's lines with `out`; returns the missed targets
 * (bench:web calls it with its own back-ends and report).
 */
export const issuePageBench = async (
  backends: ReadonlyArray<BackendName>,
  out: (line?: string) => void
): Promise<Array<string>> => {
  const results: Array<Result> = []
  for (const name of backends) results.push(await measure(name))
  const missed: Array<string> = []
  out()
  out(`Issue page: one issue, ${config.comments} comments, ${config.requests} requests per case`)
  out()
  out("| database | case | p50 | p99 | target | met |")
  out("|---|---|---:|---:|---|---|")
  for (const r of results) {
    const ok = r.page.p50 <= TARGETS.pageMs && r.page.p50 <= TARGETS.ratio * r.api.p50
    if (!ok) missed.push(`${r.backend}: issue page p50 ${fmt(r.page.p50, 1)} ms (API ${fmt(r.api.p50, 1)} ms)`)
    out(
      `| ${r.backend} | issue page, ${config.comments} comments | ${fmt(r.page.p50, 1)} ms | ${fmt(r.page.p99, 1)} ms | ≤ ${TARGETS.pageMs} ms and ≤ ${TARGETS.ratio}× the API | ${ok ? "yes" : "**no**"} |`
    )
    out(
      `| ${r.backend} | the API's ${r.apiCalls} calls (issue, timeline by 50, reactions), one after another | ${fmt(r.api.p50, 1)} ms | ${fmt(r.api.p99, 1)} ms | | ratio ${fmt(r.page.p50 / r.api.p50, 2)} |`
    )
  }
  return missed
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runMain(async () => {
    const load0 = os.loadavg()
    const lines: Array<string> = []
    const backends = (process.env.BENCH_BACKENDS ?? "postgres,embedded")
      .split(",")
      .filter((b) => b !== "") as Array<BackendName>
    const missed = await issuePageBench(backends, (line = "") => lines.push(line))
    process.stdout.write(`${machineLine(load0)}\n${lines.join("\n")}\n\n`)
    process.stdout.write(missed.length === 0 ? "All targets met.\n" : `Missed: ${missed.join("; ")}\n`)
    return missed.length
  })
}

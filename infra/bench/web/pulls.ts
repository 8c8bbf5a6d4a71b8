// The pull request pages' cases of `npm run bench:web` (issue 22 item 2), run by infra/bench/web.ts
// on its repository (a `topic` branch changing one file of main): a pull request of `topic` with
// BENCH_WEB_PULL_COMMENTS comments and two reviews (one with an inline comment), then, one request
// after another on the same keep-alive connection, the conversation page (with its merge box, as
// its writer sees it) against the API calls that fetch the same data — the pull request, its
// timeline and its reviews —, the two alternating, and the commits tab. No target of its own in
// the issue; the ratio to the API is reported beside the issue page's (≤ 2×).
import { fmt, positive } from "../support.ts"
import { apiCaller } from "./Setup.ts"

type Timed = (url: string, headers?: Record<string, string>) => Promise<{ readonly ms: number }>
type Stats = (values: ReadonlyArray<number>) => { readonly p50: number; readonly p99: number; readonly n: number }

export interface PullBench {
  readonly backend: string
  readonly base: string
  /** The bench account's Authorization header (the owner: the page shows the merge form). */
  readonly auth: string
  readonly timed: Timed
  readonly stats: Stats
  readonly requests: number
  readonly warmup: number
}

const COMMENTS = Math.round(positive("BENCH_WEB_PULL_COMMENTS", 100))
const rows: Array<string> = []

export const benchPulls = async (b: PullBench) => {
  const api = (path: string) => `${b.base}/api/v1/repos/bench/widgets${path}`
  const call = apiCaller(b.base, b.auth)
  const repo = "/repos/bench/widgets"
  const pull = await call("POST", `${repo}/pulls`, { head: "topic", base: "main", title: "Change the big file" })
  const n = Number(pull.number)
  for (let i = 0; i < COMMENTS; i++) {
    await call("POST", `${repo}/issues/${n}/comments`, { body: `Comment ${i} with **markdown** and #${n}` })
  }
  await call("POST", `${repo}/pulls/${n}/reviews`, {
    event: "COMMENT",
    body: "Notes",
    comments: [{ path: "big/file-0.ts", body: "Why?", new_position: 1 }]
  })
  await call("POST", `${repo}/pulls/${n}/reviews`, { event: "COMMENT", body: "More notes" })
  const headers = { authorization: b.auth, "accept-encoding": "br, gzip" }
  const page = `${b.base}/bench/widgets/pulls/${n}`
  const calls = [api(`/pulls/${n}`), api(`/issues/${n}/timeline`), api(`/pulls/${n}/reviews`)]
  const runApi = async () => {
    let total = 0
    for (const url of calls) total += (await b.timed(url, { authorization: b.auth })).ms
    return total
  }
  for (let i = 0; i < b.warmup; i++) {
    await b.timed(page, headers)
    await runApi()
  }
  const pageTimes: Array<number> = []
  const apiTimes: Array<number> = []
  for (let i = 0; i < b.requests; i++) {
    if (i % 2 === 0) {
      pageTimes.push((await b.timed(page, headers)).ms)
      apiTimes.push(await runApi())
    } else {
      apiTimes.push(await runApi())
      pageTimes.push((await b.timed(page, headers)).ms)
    }
  }
  const commits: Array<number> = []
  for (let i = 0; i < b.requests; i++) commits.push((await b.timed(`${page}/commits`, headers)).ms)
  const [p, a, c] = [b.stats(pageTimes), b.stats(apiTimes), b.stats(commits)]
  rows.push(
    `| ${b.backend} | pull request conversation (${COMMENTS} comments, 2 reviews, the merge box) | ${fmt(p.p50, 1)} ms | ${fmt(p.p99, 1)} ms | ratio ${fmt(p.p50 / a.p50, 2)} to the API |`,
    `| ${b.backend} | the API's 3 calls (pull, timeline, reviews), one after another | ${fmt(a.p50, 1)} ms | ${fmt(a.p99, 1)} ms | |`,
    `| ${b.backend} | pull request commits | ${fmt(c.p50, 1)} ms | ${fmt(c.p99, 1)} ms | |`
  )
}

/** The cases' table for the report (empty when none ran). */
export const pullsReport = (): ReadonlyArray<string> =>
  rows.length === 0 ? [] : ["| database | pull request case | p50 | p99 | |", "|---|---|---:|---:|---|", ...rows, ""]

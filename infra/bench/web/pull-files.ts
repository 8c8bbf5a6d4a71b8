// Issue 22, "Speed": a pull request's files changed with 300 files (`npm run bench:web` runs it
// after its own cases; `node infra/bench/web/pull-files.ts` runs it alone). A fresh Hearth per
// database; a repository of 300 TypeScript files of 60 lines pushed with git, a branch changing
// 6 lines in each (one commit), a pull request of it; then on one keep-alive connection, one
// request after another and asking for br/gzip as browsers do, `/pulls/1/files` (the first
// MAX_GIT_DIFF_FILES = 100 files, as Forgejo shows them) as an anonymous visitor and signed in as a reviewer (whose page has a comment link
// on every line): the time to the first byte of the body and to its last, and the server's RSS
// (VmRSS) before and after the signed-in requests. Target: first byte p50 ≤ 100 ms, and the page
// streams (its first bytes come before the diff is read: first byte well under the total).

import { mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import os from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import {
  type Account,
  type BackendName,
  basic,
  execFileP,
  fmt,
  http,
  log,
  machineLine,
  positive,
  quantile,
  runMain,
  stopChild,
  tempDir
} from "../support.ts"
import { apiCaller, startBenchServer } from "./Setup.ts"

const config = {
  files: Math.round(positive("BENCH_PULL_FILES", 300)),
  requests: Math.round(positive("BENCH_PULL_FILES_REQUESTS", 30)),
  warmup: Math.round(positive("BENCH_PULL_FILES_WARMUP", 3))
}
const TARGET_FIRST_BYTE_MS = 100
const ACCOUNT: Account = { username: "bench", password: "bench-password-123", admin: true }
const LINES = 60

const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

const fileText = (n: number, changed: boolean) =>
  `${Array.from({ length: LINES }, (_, i) =>
    changed && i % 10 === 3
      ? `export const value${n}_${i} = compute("changed", ${i}) // a new line of file ${n}`
      : `export const value${n}_${i} = compute("${n}", ${i}) // line ${i} of file ${n}`
  ).join("\n")}\n`

const buildRepository = async (dir: string, remote: string) => {
  const git = (args: ReadonlyArray<string>) =>
    execFileP("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: dir,
      maxBuffer: 1 << 26
    })
  await execFileP("git", ["init", "-q", "-b", "main", dir])
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  const path = (n: number) => `src/mod-${String(n % 10).padStart(2, "0")}/file-${String(n).padStart(3, "0")}.ts`
  for (let n = 0; n < config.files; n++) write(path(n), fileText(n, false))
  await git(["add", "-A"])
  await git(["commit", "-q", "-m", "The files"])
  await git(["push", "-q", remote, "main"])
  await git(["checkout", "-q", "-b", "topic"])
  for (let n = 0; n < config.files; n++) write(path(n), fileText(n, true))
  await git(["commit", "-q", "-am", "Change every file"])
  await git(["push", "-q", remote, "topic"])
}

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

/** One GET: ms to the response's head, to the body's first byte and to its end; the body's size. */
const timedGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ head: number; first: number; total: number; bytes: number; status: number }>((done, fail) => {
    const started = performance.now()
    const req = request(url, { agent, headers }, (res) => {
      const head = performance.now() - started
      let first = -1
      let bytes = 0
      res.on("data", (chunk: Buffer) => {
        if (first < 0) first = performance.now() - started
        bytes += chunk.length
      })
      res.on("end", () => done({ head, first, total: performance.now() - started, bytes, status: res.statusCode ?? 0 }))
      res.on("error", fail)
    })
    req.setTimeout(60_000, () => req.destroy(new Error(`${url}: no answer in 60 s`)))
    req.on("error", fail)
    req.end()
  })

/** A session cookie of the web's sign-in form. */
const signIn = async (base: string) => {
  const form = await http(`${base}/user/login`, { timeoutMs: 60_000 })
  const csrf = /name="_csrf" value="([^"]+)"/.exec(form.body.toString())![1]!
  // support.ts `http` joins the `set-cookie` headers with ", ".
  const cookiesOf = (header: string | undefined) =>
    (header ?? "")
      .split(/,\s*(?=hearth_)/)
      .filter((c) => c !== "")
      .map((c) => c.split(";")[0]!)
  const cookie = cookiesOf(form.headers["set-cookie"]).join("; ")
  const signed = await http(`${base}/user/login`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", cookie },
    body: new URLSearchParams({ _csrf: csrf, user_name: ACCOUNT.username, password: ACCOUNT.password }).toString(),
    timeoutMs: 60_000
  })
  const session = cookiesOf(signed.headers["set-cookie"]).filter((c) => c.startsWith("hearth_session="))
  if (signed.status !== 303 || session.length === 0) throw new Error(`signing in: ${signed.status}`)
  return session.join("; ")
}

const stats = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99) }
}

interface Case {
  readonly name: string
  readonly first: ReturnType<typeof stats>
  readonly total: ReturnType<typeof stats>
  readonly bytes: number
}

interface Result {
  readonly backend: BackendName
  readonly cases: ReadonlyArray<Case>
  readonly rssBefore: number
  readonly rssAfter: number
}

const measure = async (name: BackendName): Promise<Result> => {
  const { hearth } = await startBenchServer(name, "pull-files", ACCOUNT)
  const base = hearth.base
  const call = apiCaller(base, basic(ACCOUNT.username, ACCOUNT.password))
  await call("POST", "/user/repos", { name: "widgets" })
  const remote = new URL(`${base}/bench/widgets.git`)
  remote.username = ACCOUNT.username
  remote.password = ACCOUNT.password
  log(`${name}: pushing ${config.files} files and a branch changing each`)
  await buildRepository(tempDir("hearth-bench-pull-files-src-"), remote.toString())
  const pull = await call("POST", "/repos/bench/widgets/pulls", {
    head: "topic",
    base: "main",
    title: "Change every file"
  })
  const index = pull.number as number
  const files = `${base}/bench/widgets/pulls/${index}/files`
  const cookie = await signIn(base)
  const pid = hearth.child.pid!

  const run = async (label: string, extra: Record<string, string>, url = files) => {
    // As a browser asks: the page comes gzipped, flushed file by file.
    const headers = { "accept-encoding": "br, gzip", ...extra }
    for (let i = 0; i < config.warmup; i++) await timedGet(url, headers)
    const first: Array<number> = []
    const total: Array<number> = []
    let bytes = 0
    for (let i = 0; i < config.requests; i++) {
      const r = await timedGet(url, headers)
      if (r.status !== 200) throw new Error(`${url}: ${r.status}`)
      first.push(r.first)
      total.push(r.total)
      bytes = r.bytes
    }
    return { name: label, first: stats(first), total: stats(total), bytes }
  }
  log(`${name}: ${config.warmup} warm-up + ${config.requests} requests per case`)
  // The frame's own cost at this load: a small page of the same repository, not streamed.
  const frame = await run("reference: the branches page (small, not streamed)", {}, `${base}/bench/widgets/branches`)
  const anonymous = await run("anonymous", {})
  const rssBefore = rssMb(pid)
  const reviewer = await run("signed in (comment links on every line)", { cookie })
  const rssAfter = rssMb(pid)
  await stopChild(hearth.child)
  return { backend: name, cases: [frame, anonymous, reviewer], rssBefore, rssAfter }
}

/**
 * The 300-file pull request's cases, written with `out` (markdown); a missed target is added to
 * `missed`. `bench:web` calls it after its own cases.
 */
export const benchPullFiles = async (
  backends: ReadonlyArray<BackendName>,
  out: (line?: string) => void,
  missed: Array<string>
) => {
  const load0 = os.loadavg()
  const results: Array<Result> = []
  for (const name of backends) results.push(await measure(name))
  out(
    `Issue 22, files changed of a ${config.files}-file pull request (${LINES}-line files, 6 lines changed in each; 100 files on the page); ${config.requests} requests per case on one keep-alive connection, asking for br, gzip (the page comes gzipped as it streams)`
  )
  out(machineLine(load0))
  out()
  out("| database | case | first byte p50 | p99 | whole page p50 | p99 | on the wire | target | met |")
  out("|---|---|---:|---:|---:|---:|---:|---|---|")
  for (const r of results) {
    for (const c of r.cases) {
      const reference = c.name.startsWith("reference")
      const ok = reference || (c.first.p50 <= TARGET_FIRST_BYTE_MS && c.first.p50 < c.total.p50)
      if (!ok) missed.push(`${r.backend}: files changed (${c.name}) first byte p50 ${fmt(c.first.p50, 1)} ms`)
      out(
        `| ${r.backend} | ${c.name} | ${fmt(c.first.p50, 1)} ms | ${fmt(c.first.p99, 1)} ms | ${fmt(c.total.p50, 1)} ms | ${fmt(c.total.p99, 1)} ms | ${fmt(c.bytes / 1024, 0)} KB | ${reference ? "" : `first byte ≤ ${TARGET_FIRST_BYTE_MS} ms`} | ${reference ? "" : ok ? "yes" : "**no**"} |`
      )
    }
  }
  out()
  out("| database | server RSS before the signed-in requests | after | growth |")
  out("|---|---:|---:|---:|")
  for (const r of results)
    out(
      `| ${r.backend} | ${fmt(r.rssBefore, 1)} MB | ${fmt(r.rssAfter, 1)} MB | ${fmt(r.rssAfter - r.rssBefore, 1)} MB |`
    )
  out()
  agent.destroy()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  await runMain(async () => {
    const missed: Array<string> = []
    const lines: Array<string> = []
    const backends = (process.env.BENCH_BACKENDS ?? "postgres,embedded")
      .split(",")
      .filter((b) => b !== "") as Array<BackendName>
    await benchPullFiles(backends, (line = "") => lines.push(line), missed)
    lines.push(missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
    process.stdout.write(`${lines.join("\n")}\n`)
    return missed.length
  })
}

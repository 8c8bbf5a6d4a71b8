// Hearth's pull request benchmark (`npm run bench:pulls`; issue 19, "Speed"; settings in
// infra/bench/README.md), on each database, every server of BENCH_SERVERS side by side (all of them
// running at once, each with its own data dir and database, measured in an order that rotates):
//   merge   POST /pulls/{i}/merge of one-commit pull requests into a 5,000-commit, 2,000-file
//           repository, end to end; baseline: `git merge-tree --write-tree` + `git commit-tree` +
//           `git update-ref` by hand on a copy of the same repository, in the same rounds
//           target: p50 ≤ 150 ms and ≤ 1.5× the baseline
//   checks  200 open pull requests, then a push to their base branch: time from the push until all
//           200 mergeability results are current, and GET /pulls/{i} and GET /pulls (50 a page)
//           meanwhile, one after the other                     target: ≤ 10 s; reads p99 < 20 ms
//   diff    GET /pulls/{i}.diff of a pull request touching all 2,000 files: time to first byte and
//           the server's RSS growth (VmRSS read every 2 ms)     target: ≤ 100 ms; < 30 MB
//   list    GET /pulls?limit=50 (and GET /pulls/{i}) of the 200 idle: p50 (no target; the cost of
//           the list, before/after)
// A mergeability result is "current" when the pull request shows `mergeable: true`: the push makes
// the base conflict-free again after a base commit that conflicted with every pull request, so a
// true can only come from a check against the pushed commit (the API shows no other sign of it).
// Progress on stderr, the tables on stdout; only what it started is stopped, also on Ctrl-C.
import { spawn } from "node:child_process"
import { appendFileSync, cpSync, readFileSync, writeFileSync } from "node:fs"
import { Agent, request } from "node:http"
import os from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import {
  type Account,
  type Backend,
  type BackendName,
  type BenchServer,
  cpuSeconds,
  createAccount,
  createToken,
  execFileP,
  fmt,
  http,
  log,
  machineLine,
  median,
  parseServers,
  positive,
  preparePostgres,
  quantile,
  type Running,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const PARTS = ["merge", "checks", "diff", "list"] as const
type Part = (typeof PARTS)[number]

const config = {
  commits: Math.round(positive("BENCH_GIT_COMMITS", 5_000)),
  files: Math.round(positive("BENCH_GIT_FILES", 2_000)),
  pulls: Math.round(positive("BENCH_PULLS", 200)),
  merges: Math.round(positive("BENCH_PULLS_MERGES", 9)),
  rounds: Math.round(positive("BENCH_PULLS_ROUNDS", 3)),
  diffs: Math.round(positive("BENCH_PULLS_DIFFS", 5)),
  lists: Math.round(positive("BENCH_PULLS_LISTS", 20)),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded").split(",").map((b) => {
    if (b !== "postgres" && b !== "embedded") throw new Error(`BENCH_BACKENDS: unknown database "${b}"`)
    return b as BackendName
  }),
  servers: parseServers(process.env.BENCH_SERVERS ?? "this=."),
  parts: (process.env.BENCH_PARTS ?? PARTS.join(",")).split(",").map((p) => {
    if (!(PARTS as ReadonlyArray<string>).includes(p))
      throw new Error(`BENCH_PARTS: unknown part "${p}" (known: ${PARTS.join(", ")})`)
    return p as Part
  }),
  output: process.env.BENCH_OUTPUT,
  /**
   * A file to append each merge's, and each read's, start and end to (microseconds
   * of the monotonic clock, as V8's profiles), for a CPU profile of the server (`--cpu-prof`).
   */
  marks: process.env.BENCH_PULLS_MARKS
}
if (config.files < config.pulls + config.merges + 1)
  throw new Error("BENCH_GIT_FILES must exceed BENCH_PULLS + BENCH_PULLS_MERGES")

const TARGETS = { mergeP50: 150, mergeRatio: 1.5, checksSeconds: 10, readsP99: 20, ttfb: 100, rssMB: 30 } as const
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }
const REPO = `${ACCOUNT.username}/big`
const PER_PAGE = 50

// ---------------------------------------------------------------- git on the client side

let clientEnv: NodeJS.ProcessEnv = {}
const git = async (args: ReadonlyArray<string>, cwd?: string) => {
  try {
    return await execFileP("git", args as Array<string>, {
      cwd,
      env: clientEnv,
      maxBuffer: 64 * 1024 * 1024,
      timeout: 600_000
    })
  } catch (error) {
    const e = error as { stderr?: string; message: string }
    throw new Error(`git ${args.join(" ")} failed: ${e.stderr?.trim() || e.message}`)
  }
}

/** mulberry32, as in git.ts: every run generates the very same repository. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const WORDS = (
  "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega " +
  "river stone ember hearth forge anvil copper iron timber cedar maple willow harbor beacon lantern signal packet branch commit"
).split(" ")

/**
 * A bare repository: `main` with `commits` commits (the first adds `files` files of 40 lines, each
 * later one changes a line in two files), and, from main's tip (M0):
 * - `base200` and `wide-base` at M0 (the bases of the checks' and the diff's pull requests);
 * - `p-{i}` (i < pulls): one commit changing line 1 of file i;
 * - `mg-{j}` (j < merges): one commit changing line 1 of file pulls + j;
 * - `wide`: one commit changing line 1 of every file;
 * - `c-{k}` (k = 1 … 2 × rounds, a chain from M0, not pushed at set-up): odd k changes line 1 of
 *   files 0 … pulls − 1 (every `p-*` conflicts with it), even k puts them back as M0 has them.
 */
const generate = async (dir: string) => {
  await git(["init", "--bare", "--quiet", "--initial-branch=main", dir])
  const random = prng(20261126)
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!
  const line = () => Array.from({ length: 8 }, word).join(" ")
  const paths = Array.from(
    { length: config.files },
    (_, i) =>
      `src/m${String(i % 40).padStart(2, "0")}/${String(Math.floor(i / 40)).padStart(3, "0")}-${WORDS[i % WORDS.length]}.txt`
  )
  const contents = paths.map(() => Array.from({ length: 40 }, line))
  const child = spawn("git", ["fast-import", "--quiet", "--done"], {
    env: { ...clientEnv, GIT_DIR: dir },
    stdio: ["pipe", "ignore", "pipe"]
  })
  const stderr: Array<Buffer> = []
  child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
  const closed = new Promise<number | null>((done) => child.on("close", done))
  child.stdin.on("error", () => {})
  let buffered: Array<string> = []
  let size = 0
  const flush = async () => {
    const text = buffered.join("")
    buffered = []
    size = 0
    if (!child.stdin.write(text)) await new Promise<void>((done) => child.stdin.once("drain", () => done()))
  }
  const emit = async (text: string) => {
    buffered.push(text)
    size += text.length
    if (size > 1 << 20) await flush()
  }
  const data = (text: string) => `data ${Buffer.byteLength(text)}\n${text}\n`
  const file = (f: number, first?: string) =>
    `M 100644 inline ${paths[f]}\n${data(`${[first ?? contents[f]![0], ...contents[f]!.slice(1)].join("\n")}\n`)}`
  let when = 1_700_000_000
  const commit = async (ref: string, mark: number, from: string, message: string, changes: string) => {
    when += 600
    await emit(
      `commit ${ref}\nmark :${mark}\nauthor Bench <bench@example.com> ${when} +0000\ncommitter Bench <bench@example.com> ${when} +0000\n` +
        `${data(message)}${from === "" ? "" : `from ${from}\n`}${changes}\n`
    )
  }
  for (let i = 1; i <= config.commits; i++) {
    let changes = ""
    if (i === 1) for (let f = 0; f < paths.length; f++) changes += file(f)
    else
      for (let k = 0; k < 2; k++) {
        const f = Math.floor(random() * paths.length)
        contents[f]![1 + Math.floor(random() * 39)] = line()
        changes += file(f)
      }
    await commit(
      "refs/heads/main",
      i,
      i === 1 ? "" : `:${i - 1}`,
      i === 1 ? `Add ${config.files} files` : `Change ${i}`,
      changes
    )
  }
  const m0 = `:${config.commits}`
  let mark = config.commits
  for (const ref of ["base200", "wide-base"]) await emit(`reset refs/heads/${ref}\nfrom ${m0}\n\n`)
  for (let i = 0; i < config.pulls; i++)
    await commit(`refs/heads/p-${i}`, ++mark, m0, `Pull ${i}`, file(i, `pull ${i}`))
  for (let j = 0; j < config.merges; j++)
    await commit(`refs/heads/mg-${j}`, ++mark, m0, `Merge candidate ${j}`, file(config.pulls + j, `merge ${j}`))
  let wide = ""
  for (let f = 0; f < paths.length; f++) wide += file(f, `wide ${f}`)
  await commit("refs/heads/wide", ++mark, m0, "Touch every file", wide)
  let from = m0
  for (let k = 1; k <= 2 * config.rounds; k++) {
    let changes = ""
    for (let i = 0; i < config.pulls; i++) changes += file(i, k % 2 === 1 ? `base ${k}` : undefined)
    await commit(`refs/heads/c-${k}`, ++mark, from, k % 2 === 1 ? `Conflict ${k}` : `Resolve ${k}`, changes)
    from = `:${mark}`
  }
  await emit("done\n")
  await flush()
  child.stdin.end()
  const code = await closed
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${Buffer.concat(stderr).toString().trim()}`)
  await git(["repack", "-a", "-d", "-f", "-q", "--window=10", "--depth=50"], dir)
}

// ---------------------------------------------------------------- one server

interface Server {
  readonly spec: BenchServer
  readonly backend: Backend
  running: Running
  token: string
  agent: Agent
  /** Pull request numbers by branch. */
  readonly numbers: Map<string, number>
  readonly gitUrl: string
}

const api = async (
  server: Server,
  method: string,
  path: string,
  body?: unknown
): Promise<{ status: number; json: any; ms: number }> => {
  const started = performance.now()
  const res = await http(`${server.running.base}/api/v1/repos/${REPO}${path}`, {
    method,
    agent: server.agent,
    timeoutMs: 120_000,
    headers: { authorization: `token ${server.token}`, "content-type": "application/json" },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  const ms = performance.now() - started
  const text = res.body.toString("utf8")
  return { status: res.status, json: text === "" ? undefined : JSON.parse(text), ms }
}

const must = async (server: Server, method: string, path: string, expect: number, body?: unknown) => {
  const res = await api(server, method, path, body)
  if (res.status !== expect)
    throw new Error(`${server.spec.label}: ${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`)
  return res
}

/** A read whose start and end go to `BENCH_PULLS_MARKS` (when set) as `label read kind from to ms`. */
const marked = async (
  server: Server,
  kind: string,
  read: () => Promise<{ readonly ms: number; readonly json: any }>
) => {
  const from = process.hrtime.bigint() / 1000n
  const res = await read()
  if (config.marks !== undefined)
    appendFileSync(
      config.marks,
      `${server.spec.label} read ${kind} ${from} ${process.hrtime.bigint() / 1000n} ${res.ms.toFixed(2)}\n`
    )
  return res
}

/** Waits until the server (and the git commands it ran) used < 5 % of a core over two 0.5 s windows. */
const waitIdle = async (server: Server, limitMs = 300_000) => {
  const pid = server.running.child.pid!
  const cpu = () => {
    const c = cpuSeconds(pid)
    return c.self + c.children
  }
  const deadline = performance.now() + limitMs
  let quiet = 0
  let last = cpu()
  while (quiet < 2) {
    if (performance.now() > deadline) throw new Error(`${server.spec.label} never went idle`)
    await sleep(500)
    const now = cpu()
    quiet = now - last < 0.025 ? quiet + 1 : 0
    last = now
  }
}

/** Creates pull requests, four at a time. */
const openPulls = async (server: Server, items: ReadonlyArray<{ head: string; base: string }>) => {
  let next = 0
  const worker = async () => {
    while (next < items.length) {
      const { head, base } = items[next++]!
      const res = await must(server, "POST", "/pulls", 201, { head, base, title: `Pull request from ${head}` })
      server.numbers.set(head, res.json.number)
    }
  }
  await Promise.all([worker(), worker(), worker(), worker()])
}

/** Every open pull request of the repository, page by page; each GET's time in `times`. */
const listAll = async (server: Server, times?: Array<number>) => {
  const out: Array<any> = []
  for (let page = 1; ; page++) {
    const res = await must(server, "GET", `/pulls?state=open&limit=${PER_PAGE}&page=${page}`, 200)
    times?.push(res.ms)
    out.push(...res.json)
    if (res.json.length < PER_PAGE) return out
  }
}

const waitMergeable = async (server: Server, heads: ReadonlyArray<string>) => {
  const wanted = new Set(heads.map((h) => server.numbers.get(h)!))
  const deadline = performance.now() + 600_000
  while (performance.now() < deadline) {
    const open = await listAll(server)
    if (open.filter((p) => wanted.has(p.number) && p.mergeable === true).length === wanted.size) return
    await sleep(500)
  }
  throw new Error(`${server.spec.label}: the pull requests never became mergeable`)
}

const vmRss = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? NaN) * 1024

/** GET of a .diff: time to the first body byte, to the end, bytes, and the server's RSS growth. */
const getDiff = (server: Server, index: number) =>
  new Promise<{ ttfb: number; total: number; bytes: number; rssGrowth: number }>((done, fail) => {
    const pid = server.running.child.pid!
    const before = vmRss(pid)
    let peak = before
    const sampler = setInterval(() => {
      peak = Math.max(peak, vmRss(pid))
    }, 2)
    const started = performance.now()
    let ttfb = NaN
    let bytes = 0
    const req = request(
      `${server.running.base}/api/v1/repos/${REPO}/pulls/${index}.diff`,
      { headers: { authorization: `token ${server.token}` }, agent: server.agent },
      (res) => {
        if (res.statusCode !== 200) {
          clearInterval(sampler)
          res.resume()
          return fail(new Error(`${server.spec.label}: .diff answered ${res.statusCode}`))
        }
        res.on("data", (chunk: Buffer) => {
          if (bytes === 0) ttfb = performance.now() - started
          bytes += chunk.length
        })
        res.on("end", () => {
          clearInterval(sampler)
          peak = Math.max(peak, vmRss(pid))
          done({ ttfb, total: performance.now() - started, bytes, rssGrowth: peak - before })
        })
        res.on("error", fail)
      }
    )
    req.on("error", (e) => {
      clearInterval(sampler)
      fail(e)
    })
    req.end()
  })

/** `order` rotated by `round`: who goes first changes every round. */
const rotate = <A>(items: ReadonlyArray<A>, round: number) => items.map((_, i) => items[(i + round) % items.length]!)

// ---------------------------------------------------------------- the run

interface Results {
  merge: Record<string, Array<number>>
  checks: Record<
    string,
    Array<{ seconds: number; pushMs: number; reads: Array<number>; list: Array<number>; get: Array<number> }>
  >
  diff: Record<string, Array<{ ttfb: number; total: number; bytes: number; rssGrowth: number }>>
  list: Record<string, { list: Array<number>; get: Array<number> }>
}

const runBackend = async (name: BackendName, tmp: string, generated: string, out: (line?: string) => void) => {
  const load0 = os.loadavg()
  log(`${name}: load average ${load0.map((l) => fmt(l, 2)).join(" ")}`)
  const servers: Array<Server> = []
  for (const spec of config.servers) {
    const dir = join(tmp, `${name}-${spec.label}`)
    const backend: Backend = {
      name,
      dataDir: join(dir, "data"),
      logFile: join(tmp, `${name}-${spec.label}.log`),
      tree: spec.tree,
      nodeArgs: spec.nodeArgs,
      env: { HEARTH__log__LEVEL: "Warn", ...spec.env },
      ...(name === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {})
    }
    await createAccount(backend, ACCOUNT)
    const running = await startHearth(backend)
    const token = await createToken(running.base, ACCOUNT, ["write:repository", "write:user"])
    const url = new URL(running.base)
    url.username = ACCOUNT.username
    url.password = token
    servers.push({
      spec,
      backend,
      running,
      token,
      agent: new Agent({ keepAlive: true, maxSockets: 8 }),
      numbers: new Map(),
      gitUrl: `${url.toString().replace(/\/$/, "")}/${REPO}.git`
    })
  }
  const results: Results = { merge: {}, checks: {}, diff: {}, list: {} }
  try {
    for (const s of servers) {
      log(`${name} ${s.spec.label}: pushing the repository and its branches`)
      const res = await http(`${s.running.base}/api/v1/user/repos`, {
        method: "POST",
        headers: { authorization: `token ${s.token}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "big" })
      })
      if (res.status !== 201) throw new Error(`creating the repository: ${res.status} ${res.body.toString()}`)
      await git(
        [
          "push",
          "--quiet",
          s.gitUrl,
          "refs/heads/main:refs/heads/main",
          "refs/heads/base200:refs/heads/base200",
          "refs/heads/wide-base:refs/heads/wide-base",
          "refs/heads/wide:refs/heads/wide",
          "refs/heads/p-*:refs/heads/p-*",
          "refs/heads/mg-*:refs/heads/mg-*"
        ],
        generated
      )
    }

    // ------------------------------------------------ merge
    if (config.parts.includes("merge")) {
      const heads = Array.from({ length: config.merges }, (_, j) => `mg-${j}`)
      for (const s of servers) {
        await openPulls(
          s,
          heads.map((head) => ({ head, base: "main" }))
        )
        await waitMergeable(s, heads)
        results.merge[s.spec.label] = []
      }
      // The baseline works on a copy of the first server's repository as Hearth stores it.
      const copy = join(tmp, `${name}-baseline.git`)
      cpSync(join(servers[0]!.backend.dataDir, "repositories", ACCOUNT.username, "big.git"), copy, { recursive: true })
      let mainSha = (await git(["rev-parse", "refs/heads/main"], copy)).stdout.trim()
      results.merge.baseline = []
      const byHand = async (j: number) => {
        const started = performance.now()
        const tree = (await git(["merge-tree", "--write-tree", mainSha, `refs/heads/mg-${j}`], copy)).stdout.split(
          "\n"
        )[0]!
        const commit = (
          await git(["commit-tree", tree, "-p", mainSha, "-p", `refs/heads/mg-${j}`, "-m", `Merge mg-${j}`], copy)
        ).stdout.trim()
        await git(["update-ref", "refs/heads/main", commit, mainSha], copy)
        mainSha = commit
        return performance.now() - started
      }
      const who: Array<Server | "baseline"> = [...servers, "baseline"]
      for (let j = 0; j < config.merges; j++) {
        for (const w of rotate(who, j)) {
          // Every server idle: a merge queues the checks of the other pull requests into main, which
          // must not run beside the next server's merge.
          for (const s of servers) await waitIdle(s)
          if (w === "baseline") {
            results.merge.baseline.push(await byHand(j))
            continue
          }
          const from = process.hrtime.bigint() / 1000n
          const res = await must(w, "POST", `/pulls/${w.numbers.get(`mg-${j}`)}/merge`, 200, { Do: "merge" })
          // For a CPU profile of the server (`--cpu-prof`): its samples within each merge.
          if (config.marks !== undefined)
            appendFileSync(config.marks, `${w.spec.label} merge ${from} ${process.hrtime.bigint() / 1000n}\n`)
          results.merge[w.spec.label]!.push(res.ms)
        }
        log(
          `merge ${j + 1}/${config.merges}: ${Object.entries(results.merge)
            .map(([k, v]) => `${k} ${fmt(v.at(-1)!, 1)} ms`)
            .join(", ")}`
        )
      }
    }

    // ------------------------------------------------ diff
    if (config.parts.includes("diff")) {
      for (const s of servers) {
        await openPulls(s, [{ head: "wide", base: "wide-base" }])
        await waitMergeable(s, ["wide"])
        results.diff[s.spec.label] = []
        // One unmeasured: the page cache holds the objects from here on.
        await getDiff(s, s.numbers.get("wide")!)
      }
      for (let r = 0; r < config.diffs; r++) {
        for (const s of rotate(servers, r)) {
          for (const o of servers) await waitIdle(o)
          const d = await getDiff(s, s.numbers.get("wide")!)
          results.diff[s.spec.label]!.push(d)
          log(
            `diff ${r + 1}/${config.diffs} ${s.spec.label}: first byte ${fmt(d.ttfb, 1)} ms, all ${fmt(d.total)} ms, ${fmt(d.bytes / 2 ** 20, 1)} MiB, RSS +${fmt(d.rssGrowth / 2 ** 20, 1)} MB`
          )
        }
      }
      // Closed, so that the lists below hold exactly the checks' pull requests.
      for (const s of servers) await must(s, "PATCH", `/pulls/${s.numbers.get("wide")}`, 201, { state: "closed" })
    }

    // ------------------------------------------------ checks and list
    if (config.parts.includes("checks") || config.parts.includes("list")) {
      const heads = Array.from({ length: config.pulls }, (_, i) => `p-${i}`)
      for (const s of servers) {
        log(`${name} ${s.spec.label}: opening ${config.pulls} pull requests`)
        await openPulls(
          s,
          heads.map((head) => ({ head, base: "base200" }))
        )
        await waitMergeable(s, heads)
        results.checks[s.spec.label] = []
      }
      const numbers = (s: Server) => heads.map((h) => s.numbers.get(h)!)
      if (config.parts.includes("checks")) {
        for (let r = 0; r < config.rounds; r++) {
          for (const s of rotate(servers, r)) {
            // The base conflicts with every pull request; then the measured push resolves it.
            await git(["push", "--quiet", s.gitUrl, `refs/heads/c-${2 * r + 1}:refs/heads/base200`], generated)
            await waitIdle(s)
            for (const o of servers) await waitIdle(o)
            const reads: Array<number> = []
            const list: Array<number> = []
            const get: Array<number> = []
            const current = new Set<number>()
            const started = performance.now()
            let pushMs = NaN
            const push = git(
              ["push", "--quiet", s.gitUrl, `refs/heads/c-${2 * r + 2}:refs/heads/base200`],
              generated
            ).then(() => {
              pushMs = performance.now() - started
            })
            let i = 0
            let seconds = NaN
            while (performance.now() - started < 600_000) {
              const page = 1 + (i % Math.ceil(config.pulls / PER_PAGE))
              const res = await marked(s, "list", () =>
                must(s, "GET", `/pulls?state=open&limit=${PER_PAGE}&page=${page}`, 200)
              )
              list.push(res.ms)
              reads.push(res.ms)
              // Before the push every one conflicts: a true is a check against the pushed commit.
              for (const p of res.json) if (p.mergeable === true) current.add(p.number)
              const one = await marked(s, "get", () =>
                must(s, "GET", `/pulls/${numbers(s)[(i * 37) % config.pulls]}`, 200)
              )
              get.push(one.ms)
              reads.push(one.ms)
              i++
              if (current.size === config.pulls) {
                seconds = (performance.now() - started) / 1000
                break
              }
            }
            await push
            if (Number.isNaN(seconds)) throw new Error(`${s.spec.label}: the checks did not finish within 600 s`)
            results.checks[s.spec.label]!.push({ seconds, pushMs, reads, list, get })
            const sorted = [...reads].sort((a, b) => a - b)
            log(
              `checks ${r + 1}/${config.rounds} ${s.spec.label}: all current after ${fmt(seconds, 2)} s (push ${fmt(pushMs)} ms); ${reads.length} reads, p50 ${fmt(quantile(sorted, 0.5), 1)} ms, p99 ${fmt(quantile(sorted, 0.99), 1)} ms`
            )
          }
        }
      }
      if (config.parts.includes("list")) {
        for (const s of servers) results.list[s.spec.label] = { list: [], get: [] }
        for (const s of servers) await waitIdle(s)
        for (let r = 0; r < config.lists; r++) {
          for (const s of rotate(servers, r)) {
            const page = 1 + (r % Math.ceil(config.pulls / PER_PAGE))
            results.list[s.spec.label]!.list.push(
              (await marked(s, "list", () => must(s, "GET", `/pulls?state=open&limit=${PER_PAGE}&page=${page}`, 200)))
                .ms
            )
            results.list[s.spec.label]!.get.push(
              (await marked(s, "get", () => must(s, "GET", `/pulls/${numbers(s)[r % config.pulls]}`, 200))).ms
            )
          }
        }
      }
    }
  } finally {
    for (const s of servers) s.agent.destroy()
  }

  // ------------------------------------------------ tables
  let missed = 0
  const yes = (ok: boolean) => {
    if (!ok) missed++
    return ok ? "yes" : "NO"
  }
  out(`### ${name}`)
  out()
  out(`Load average at the start of this database's run: ${load0.map((l) => fmt(l, 2)).join(" ")}.`)
  out()
  if (config.parts.includes("merge")) {
    const base = median(results.merge.baseline!)
    out(
      `Merge (${config.merges} one-commit pull requests, each server and the baseline in rotating order, idle before each):`
    )
    out()
    out("| server | p50 | min | max | baseline p50 (git by hand) | ratio | target | met |")
    out("|---|---:|---:|---:|---:|---:|---|---|")
    for (const s of servers) {
      const v = results.merge[s.spec.label]!
      const p50 = median(v)
      out(
        `| ${s.spec.label} | ${fmt(p50, 1)} ms | ${fmt(Math.min(...v), 1)} ms | ${fmt(Math.max(...v), 1)} ms | ${fmt(base, 1)} ms | ${fmt(p50 / base, 2)}× | ≤ ${TARGETS.mergeP50} ms, ≤ ${TARGETS.mergeRatio}× | ${yes(p50 <= TARGETS.mergeP50 && p50 / base <= TARGETS.mergeRatio)} |`
      )
    }
    out()
  }
  if (config.parts.includes("diff")) {
    out(
      `\`.diff\` of a pull request touching ${fmt(config.files)} files (${config.diffs} rounds, medians; RSS growth: the largest):`
    )
    out()
    out("| server | first byte | whole answer | size | RSS growth | target | met |")
    out("|---|---:|---:|---:|---:|---|---|")
    for (const s of servers) {
      const v = results.diff[s.spec.label]!
      const ttfb = median(v.map((d) => d.ttfb))
      const growth = Math.max(...v.map((d) => d.rssGrowth)) / 2 ** 20
      out(
        `| ${s.spec.label} | ${fmt(ttfb, 1)} ms | ${fmt(median(v.map((d) => d.total)))} ms | ${fmt(v[0]!.bytes / 2 ** 20, 1)} MiB | ${fmt(growth, 1)} MB | ≤ ${TARGETS.ttfb} ms, < ${TARGETS.rssMB} MB | ${yes(ttfb <= TARGETS.ttfb && growth < TARGETS.rssMB)} |`
      )
    }
    out()
  }
  if (config.parts.includes("checks")) {
    out(
      `Mergeability after a push to the base of ${config.pulls} open pull requests (${config.rounds} rounds; reads: GET a page of ${PER_PAGE} and GET one, alternately, one at a time, from the push until all are current):`
    )
    out()
    out(
      "| server | all current (median) | rounds | reads | reads p50 | reads p99 | list p99 | GET one p99 | target | met |"
    )
    out("|---|---:|---|---:|---:|---:|---:|---:|---|---|")
    for (const s of servers) {
      const v = results.checks[s.spec.label]!
      const all = v.flatMap((c) => c.reads).sort((a, b) => a - b)
      const l = v.flatMap((c) => c.list).sort((a, b) => a - b)
      const g = v.flatMap((c) => c.get).sort((a, b) => a - b)
      const sec = median(v.map((c) => c.seconds))
      out(
        `| ${s.spec.label} | ${fmt(sec, 2)} s | ${v.map((c) => fmt(c.seconds, 1)).join(", ")} s | ${all.length} | ${fmt(quantile(all, 0.5), 1)} ms | ${fmt(quantile(all, 0.99), 1)} ms | ${fmt(quantile(l, 0.99), 1)} ms | ${fmt(quantile(g, 0.99), 1)} ms | ≤ ${TARGETS.checksSeconds} s, p99 < ${TARGETS.readsP99} ms | ${yes(sec <= TARGETS.checksSeconds && quantile(all, 0.99) < TARGETS.readsP99)} |`
      )
    }
    out()
  }
  if (config.parts.includes("list")) {
    out(`Reads of the ${config.pulls} pull requests at rest (${config.lists} each, servers alternating):`)
    out()
    out(`| server | GET /pulls?limit=${PER_PAGE} p50 | p90 | GET /pulls/{i} p50 | p90 |`)
    out("|---|---:|---:|---:|---:|")
    for (const s of servers) {
      const v = results.list[s.spec.label]!
      const l = [...v.list].sort((a, b) => a - b)
      const g = [...v.get].sort((a, b) => a - b)
      out(
        `| ${s.spec.label} | ${fmt(quantile(l, 0.5), 1)} ms | ${fmt(quantile(l, 0.9), 1)} ms | ${fmt(quantile(g, 0.5), 1)} ms | ${fmt(quantile(g, 0.9), 1)} ms |`
      )
    }
    out()
  }
  return { missed, results }
}

const main = async () => {
  const load0 = os.loadavg()
  const tmp = tempDir("hearth-bench-pulls-")
  clientEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: tmp,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_AUTHOR_NAME: "Bench",
    GIT_AUTHOR_EMAIL: "bench@example.com",
    GIT_COMMITTER_NAME: "Bench",
    GIT_COMMITTER_EMAIL: "bench@example.com",
    LANG: "C"
  }
  log(
    `generating the repository: ${fmt(config.commits)} commits, ${fmt(config.files)} files, ${config.pulls + config.merges + 1} pull request branches`
  )
  const generated = join(tmp, "big.git")
  const started = performance.now()
  await generate(generated)
  log(`generated in ${fmt((performance.now() - started) / 1000, 1)} s`)
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  let missed = 0
  const all: Record<string, Results> = {}
  for (const name of config.backends) {
    const r = await runBackend(name, tmp, generated, out)
    missed += r.missed
    all[name] = r.results
  }
  const gitVersion = (await git(["--version"])).stdout.trim()
  process.stdout.write(
    `${[
      machineLine(load0),
      `Date: ${new Date().toISOString()}; ${gitVersion}; servers: ${config.servers.map((s) => `${s.label}=${s.tree}`).join(", ")}`,
      "",
      ...lines
    ].join("\n")}\n`
  )
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(all))
  return missed
}

await runMain(main)

// Hearth's git benchmarks (`npm run bench:git`; settings in infra/bench/README.md, issue 3):
//   (a) `git clone --bare` of a generated repository (5,000 commits, 2,000 files) from Hearth and
//       from `git http-backend` behind a minimal node:http wrapper (http-backend.ts), the same
//       repository bytes behind both, alternating rounds     target: Hearth/http-backend ≤ 1.15
//   (b) `git push` of the same history into a fresh empty repository on each (no target)
//   (c) GET /api/v1/repos/{o}/{r}/contents/{file} (with last_commit_sha) of a file last changed in
//       the first commit, autocannon with 8 connections                     target: ≥ 300 req/s
// Hearth runs on PostgreSQL (infra/pg/start.sh, or a fresh database on BENCH_DATABASE_URL).
// Progress on stderr, the tables on stdout; only what it started is stopped, also on Ctrl-C.
import { spawn } from "node:child_process"
import { cpSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import {
  type Account,
  type Backend,
  cpuSeconds,
  createAccount,
  createToken,
  execFileP,
  fmt,
  http,
  load,
  log,
  machineLine,
  median,
  nodeBin,
  positive,
  preparePostgres,
  type Running,
  root,
  runMain,
  type Sample,
  spawnListening,
  startHearth,
  tempDir
} from "./support.ts"

const PARTS = ["clone", "push", "contents"] as const
type Part = (typeof PARTS)[number]

const config = {
  commits: Math.round(positive("BENCH_GIT_COMMITS", 5_000)),
  files: Math.round(positive("BENCH_GIT_FILES", 2_000)),
  rounds: Math.max(1, Math.round(positive("BENCH_GIT_ROUNDS", 7))),
  duration: positive("BENCH_DURATION", 10),
  warmup: positive("BENCH_WARMUP", 2),
  contentsRounds: Math.max(1, Math.round(positive("BENCH_CONTENTS_ROUNDS", 2))),
  connections: Math.round(positive("BENCH_CONNECTIONS", 8)),
  parts: (process.env.BENCH_PARTS ?? PARTS.join(",")).split(",").map((p) => {
    if (!(PARTS as ReadonlyArray<string>).includes(p))
      throw new Error(`BENCH_PARTS: unknown part "${p}" (known: ${PARTS.join(", ")})`)
    return p as Part
  }),
  output: process.env.BENCH_OUTPUT
}
if (config.files < 2) throw new Error("BENCH_GIT_FILES must be at least 2")

const TARGETS = { cloneRatio: 1.15, contentsRps: 300 } as const
const ACCOUNT: Account = { username: "bench", password: "bench-password-123" }

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

/** Wall time of `f`, in seconds. */
const timed = async (f: () => Promise<unknown>) => {
  const started = performance.now()
  await f()
  return (performance.now() - started) / 1000
}

// ---------------------------------------------------------------- the generated repository

/** mulberry32: a small deterministic PRNG, so every run generates the very same repository. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const WORDS = (
  "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma tau upsilon phi chi psi omega " +
  "river stone ember hearth forge anvil copper iron timber cedar maple willow harbor beacon lantern signal packet branch commit " +
  "merge rebase object index cache buffer stream socket kernel thread module export import return const yield async await"
).split(" ")

interface Generated {
  readonly dir: string
  /** Changed only by the first commit. */
  readonly deepPath: string
  readonly deepCommit: string
  /** Changed by the last commit. */
  readonly recentPath: string
  readonly head: string
  readonly packBytes: number
}

/**
 * A bare repository with `commits` commits on `main`: the first adds `files` files of 40 lines
 * (≈ 2 KB of words each) in 40 directories, every later one changes one line in each of two files
 * picked at random among all but the first, which stays as the first commit wrote it.
 */
const generate = async (dir: string): Promise<Generated> => {
  await git(["init", "--bare", "--quiet", "--initial-branch=main", dir])
  const random = prng(20261122)
  const word = () => WORDS[Math.floor(random() * WORDS.length)]!
  const line = () => Array.from({ length: 8 }, word).join(" ")
  const dirs = 40
  const paths = Array.from(
    { length: config.files },
    (_, i) =>
      `src/${`m${String(i % dirs).padStart(2, "0")}`}/${String(Math.floor(i / dirs)).padStart(3, "0")}-${WORDS[i % WORDS.length]}.txt`
  )
  const contents = paths.map(() => Array.from({ length: 40 }, line))

  const child = spawn("git", ["fast-import", "--quiet", "--done"], {
    cwd: dir,
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
  let recentPath = paths[1]!
  for (let i = 1; i <= config.commits; i++) {
    const when = 1_700_000_000 + i * 600
    let changes = ""
    let message: string
    if (i === 1) {
      message = `Add ${config.files} files`
      for (let f = 0; f < paths.length; f++)
        changes += `M 100644 inline ${paths[f]}\n${data(`${contents[f]!.join("\n")}\n`)}`
    } else {
      const touched: Array<string> = []
      for (let k = 0; k < 2; k++) {
        const f = 1 + Math.floor(random() * (paths.length - 1))
        contents[f]![Math.floor(random() * 40)] = line()
        changes += `M 100644 inline ${paths[f]}\n${data(`${contents[f]!.join("\n")}\n`)}`
        touched.push(paths[f]!)
      }
      recentPath = touched[0]!
      message = `Change ${touched.join(" and ")} (${i})`
    }
    await emit(
      `commit refs/heads/main\nmark :${i}\nauthor Bench <bench@example.com> ${when} +0000\ncommitter Bench <bench@example.com> ${when} +0000\n` +
        `${data(message)}${i > 1 ? `from :${i - 1}\n` : ""}${changes}\n`
    )
  }
  await emit("done\n")
  await flush()
  child.stdin.end()
  const code = await closed
  if (code !== 0) throw new Error(`git fast-import failed (${code}): ${Buffer.concat(stderr).toString().trim()}`)
  // fast-import's pack is loosely deltified; one full repack gives a pack like a real server's.
  await git(["repack", "-a", "-d", "-f", "-q", "--window=10", "--depth=50"], dir)
  const head = (await git(["rev-parse", "refs/heads/main"], dir)).stdout.trim()
  const deepCommit = (await git(["rev-list", "--max-parents=0", "refs/heads/main"], dir)).stdout.trim()
  return { dir, deepPath: paths[0]!, deepCommit, recentPath, head, packBytes: await packBytes(dir) }
}

/** The files of a split commit-graph, if git wrote one. */
const listGraphChain = (dir: string) => {
  try {
    return readdirSync(join(dir, "objects/info/commit-graphs"))
      .filter((f) => f.endsWith(".graph"))
      .map((f) => join(dir, "objects/info/commit-graphs", f))
  } catch {
    return []
  }
}

const packBytes = async (dir: string) => {
  const out = (await git(["count-objects", "-v"], dir)).stdout
  return Number(/^size-pack: (\d+)/m.exec(out)?.[1] ?? NaN) * 1024
}

// ---------------------------------------------------------------- Hearth and http-backend

const createRepo = async (hearth: Running, token: string, name: string) => {
  const res = await http(`${hearth.base}/api/v1/user/repos`, {
    method: "POST",
    headers: { authorization: `token ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ name })
  })
  if (res.status !== 201)
    throw new Error(`creating the repository ${name} failed: ${res.status} ${res.body.toString()}`)
}

const withCredentials = (base: string, token: string) => {
  const url = new URL(base)
  url.username = ACCOUNT.username
  url.password = token
  return url.toString().replace(/\/$/, "")
}

interface CloneSample {
  readonly round: number
  readonly hearth: number
  readonly backend: number
  /** CPU seconds of the Hearth process itself (not its git children) during its clone. */
  readonly hearthCpu: number
  readonly backendCpu: number
}

// ---------------------------------------------------------------- the run

const main = async () => {
  const tmp = tempDir("hearth-bench-git-")
  const home = join(tmp, "home")
  mkdirSync(home)
  // The client's git: no user or system configuration, never a password prompt.
  clientEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    LANG: "C"
  }
  const nodeVersion = (await execFileP(nodeBin, ["--version"])).stdout.trim()
  const gitVersion = (await git(["--version"])).stdout.trim()
  const load0 = os.loadavg()
  log(`node ${nodeVersion}, ${gitVersion}; parts: ${config.parts.join(", ")}; ${config.rounds} rounds`)

  const pg = await preparePostgres()
  const backend: Backend = {
    name: "postgres",
    dataDir: join(tmp, "data"),
    databaseUrl: pg.url,
    logFile: join(tmp, "hearth.log")
  }
  log("creating the account")
  await createAccount(backend, ACCOUNT)
  const hearth = await startHearth(backend)
  const token = await createToken(hearth.base, ACCOUNT, ["write:repository", "write:user"])
  const hearthGit = withCredentials(hearth.base, token)

  log(
    `generating the repository: ${fmt(config.commits)} commits, ${fmt(config.files)} files (git fast-import, then repack)`
  )
  let generated!: Generated
  const generateSeconds = await timed(async () => {
    generated = await generate(join(tmp, "big.git"))
  })
  log(
    `generated in ${fmt(generateSeconds, 1)} s: pack ${fmt(generated.packBytes / 2 ** 20, 1)} MiB, head ${generated.head.slice(0, 12)}`
  )

  // Hearth gets it by a push; http-backend gets a copy of Hearth's repository directory, so both
  // serve the very same pack files.
  await createRepo(hearth, token, "big")
  const firstPush = await timed(() =>
    git(
      ["push", "--quiet", `${hearthGit}/${ACCOUNT.username}/big.git`, "refs/heads/main:refs/heads/main"],
      generated.dir
    )
  )
  log(`pushed into Hearth in ${fmt(firstPush, 1)} s`)
  const hearthRepoDir = join(backend.dataDir, "repositories", ACCOUNT.username, "big.git")
  const backendRoot = join(tmp, "http-backend")
  cpSync(hearthRepoDir, join(backendRoot, ACCOUNT.username, "big.git"), { recursive: true })
  const wrapper = await spawnListening(
    [join(root, "infra/bench/http-backend.ts")],
    { ...process.env, BACKEND_ROOT: backendRoot },
    "the http-backend wrapper"
  )
  const servedBytes = await packBytes(hearthRepoDir)

  const results: Record<string, unknown> = {}
  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  let missed = 0

  // (a) clone: alternating which server goes first; every clone into a fresh directory.
  const clones: Array<CloneSample> = []
  if (config.parts.includes("clone")) {
    const cloneOnce = async (base: string, pid: number, label: string, round: number) => {
      const dest = join(tmp, `clone-${label}-${round}`)
      const cpu0 = cpuSeconds(pid).self
      const seconds = await timed(() =>
        git(["clone", "--bare", "--quiet", `${base}/${ACCOUNT.username}/big.git`, dest])
      )
      const cpu = cpuSeconds(pid).self - cpu0
      const head = (await git(["rev-parse", "refs/heads/main"], dest)).stdout.trim()
      if (head !== generated.head)
        throw new Error(`the clone from ${label} has main at ${head}, expected ${generated.head}`)
      rmSync(dest, { recursive: true, force: true })
      log(`clone round ${round} ${label}: ${fmt(seconds, 2)} s (server process CPU ${fmt(cpu, 2)} s)`)
      return { seconds, cpu }
    }
    // One unmeasured clone each: the page cache holds the pack for both from here on.
    await cloneOnce(hearth.base, hearth.child.pid!, "hearth (warm-up)", 0)
    await cloneOnce(wrapper.base, wrapper.child.pid!, "http-backend (warm-up)", 0)
    for (let round = 1; round <= config.rounds; round++) {
      const h = () => cloneOnce(hearth.base, hearth.child.pid!, "hearth", round)
      const b = () => cloneOnce(wrapper.base, wrapper.child.pid!, "http-backend", round)
      let hs: { seconds: number; cpu: number }, bs: { seconds: number; cpu: number }
      if (round % 2 === 1) {
        hs = await h()
        bs = await b()
      } else {
        bs = await b()
        hs = await h()
      }
      clones.push({ round, hearth: hs.seconds, backend: bs.seconds, hearthCpu: hs.cpu, backendCpu: bs.cpu })
    }
    results.clone = clones
  }

  // (b) push into a fresh empty repository on each, alternating.
  const pushes: Array<{ round: number; hearth: number; backend: number }> = []
  let commitGraphSeconds: number | undefined
  if (config.parts.includes("push")) {
    const pushHearth = async (round: number) => {
      const name = `push-${round}`
      await createRepo(hearth, token, name)
      const seconds = await timed(() =>
        git(
          ["push", "--quiet", `${hearthGit}/${ACCOUNT.username}/${name}.git`, "refs/heads/main:refs/heads/main"],
          generated.dir
        )
      )
      log(`push round ${round} hearth: ${fmt(seconds, 2)} s`)
      return seconds
    }
    const pushBackend = async (round: number) => {
      const dir = join(backendRoot, ACCOUNT.username, `push-${round}.git`)
      await git(["init", "--bare", "--quiet", dir])
      await git(["config", "http.receivepack", "true"], dir)
      const seconds = await timed(() =>
        git(
          [
            "push",
            "--quiet",
            `${wrapper.base}/${ACCOUNT.username}/push-${round}.git`,
            "refs/heads/main:refs/heads/main"
          ],
          generated.dir
        )
      )
      const head = (await git(["rev-parse", "refs/heads/main"], dir)).stdout.trim()
      if (head !== generated.head)
        throw new Error(`the push to http-backend left main at ${head}, expected ${generated.head}`)
      log(`push round ${round} http-backend: ${fmt(seconds, 2)} s`)
      return seconds
    }
    for (let round = 1; round <= config.rounds; round++) {
      let hs: number, bs: number
      if (round % 2 === 1) {
        hs = await pushHearth(round)
        bs = await pushBackend(round)
      } else {
        bs = await pushBackend(round)
        hs = await pushHearth(round)
      }
      pushes.push({ round, hearth: hs, backend: bs })
    }
    // Hearth writes the commit-graph (with changed-path filters) before it answers a push; the
    // same command on one of http-backend's pushed copies shows how much of the difference it is.
    const copy = join(backendRoot, ACCOUNT.username, "push-1.git")
    commitGraphSeconds = await timed(() => git(["commit-graph", "write", "--reachable", "--changed-paths"], copy))
    log(`git commit-graph write --reachable --changed-paths on the pushed repository: ${fmt(commitGraphSeconds, 2)} s`)
    results.push = { rounds: pushes, commitGraphSeconds }
  }

  // (c) the contents endpoint, file last changed in the first commit (and, for comparison, one
  // changed by the last commit).
  interface ContentsCase {
    readonly label: string
    readonly path: string
    /** The last_commit_sha the answer must carry; none for the comparison without git. */
    readonly expect: string | undefined
    readonly target: number | undefined
    readonly samples: Array<Sample>
    requests: number
    nodeSeconds: number
    gitSeconds: number
  }
  const contents: Array<ContentsCase> = []
  const gitSteps: Array<{ label: string; ms: number }> = []
  let bloom = false
  if (config.parts.includes("contents")) {
    contents.push(
      {
        label: "file last changed in the first commit",
        path: generated.deepPath,
        expect: generated.deepCommit,
        target: TARGETS.contentsRps,
        samples: [],
        requests: 0,
        nodeSeconds: 0,
        gitSeconds: 0
      },
      {
        label: "file changed by the last commit",
        path: generated.recentPath,
        expect: generated.head,
        target: undefined,
        samples: [],
        requests: 0,
        nodeSeconds: 0,
        gitSeconds: 0
      },
      // The same repository look-up and JSON answer without any git: what the git part costs.
      {
        label: "for comparison: GET /api/v1/repos/bench/big (no git)",
        path: "",
        expect: undefined,
        target: undefined,
        samples: [],
        requests: 0,
        nodeSeconds: 0,
        gitSeconds: 0
      }
    )
    const urlOf = (c: ContentsCase) =>
      `${hearth.base}/api/v1/repos/${ACCOUNT.username}/big${c.path === "" ? "" : `/contents/${c.path}`}`
    for (const c of contents) {
      const res = await http(urlOf(c))
      if (res.status !== 200) throw new Error(`GET ${urlOf(c)} answered ${res.status}: ${res.body.toString()}`)
      const body = JSON.parse(res.body.toString()) as { last_commit_sha?: string }
      if (c.expect !== undefined && body.last_commit_sha !== c.expect)
        throw new Error(`GET ${urlOf(c)}: last_commit_sha ${body.last_commit_sha}, expected ${c.expect}`)
      await load(urlOf(c), {}, config.warmup, config.connections)
    }
    // Rounds alternate which file goes first.
    for (let round = 1; round <= config.contentsRounds; round++) {
      for (const c of round % 2 === 1 ? contents : [...contents].reverse()) {
        const cpu0 = cpuSeconds(hearth.child.pid!)
        const sample = await load(urlOf(c), {}, config.duration, config.connections)
        const cpu1 = cpuSeconds(hearth.child.pid!)
        c.samples.push(sample)
        c.requests += sample.requests
        c.nodeSeconds += cpu1.self - cpu0.self
        c.gitSeconds += cpu1.children - cpu0.children
        log(
          `contents round ${round}, ${c.label}: ${fmt(sample.rps)} req/s, p50 ${fmt(sample.p50, 2)} ms, p99 ${fmt(sample.p99, 2)} ms; CPU per request: Hearth ${fmt(((cpu1.self - cpu0.self) * 1000) / sample.requests, 2)} ms, git children ${fmt(((cpu1.children - cpu0.children) * 1000) / sample.requests, 2)} ms${sample.bad > 0 ? `, ${sample.bad} FAILED` : ""}`
        )
      }
    }
    // Whether Hearth's copy has the commit-graph with changed-path (Bloom) filters `git log -- path` uses.
    for (const file of [join(hearthRepoDir, "objects/info/commit-graph"), ...listGraphChain(hearthRepoDir)]) {
      try {
        if (readFileSync(file).includes("BIDX")) bloom = true
      } catch {
        // absent
      }
    }
    // Where the time goes: the git commands Hearth runs for one such request (src/contents,
    // src/git/Readers.ts), each spawned alone, sequentially, on Hearth's copy of the repository.
    const steps = [
      {
        label: "rev-parse (the branch)",
        args: ["rev-parse", "--verify", "--quiet", "--end-of-options", "refs/heads/main^{commit}"]
      },
      {
        label: "ls-tree (the entry)",
        args: ["ls-tree", "-z", "--long", "--full-tree", generated.head, "--", generated.deepPath]
      },
      {
        label: "log -1 (last commit, first-commit file)",
        args: ["log", "-1", "--format=%H %cI", generated.head, "--", generated.deepPath]
      },
      {
        label: "log -1 (last commit, last-commit file)",
        args: ["log", "-1", "--format=%H %cI", generated.head, "--", generated.recentPath]
      }
    ]
    for (const step of steps) {
      const times: Array<number> = []
      for (let i = 0; i < 30; i++) times.push((await timed(() => git(step.args, hearthRepoDir))) * 1000)
      gitSteps.push({ label: `git ${step.label}`, ms: median(times) })
    }
    log(
      `git commands of one contents request, median wall time each: ${gitSteps.map((s) => `${s.label} ${fmt(s.ms, 1)} ms`).join(", ")}`
    )
    results.contents = { cases: contents, gitSteps, bloom }
  }

  // ---------------------------------------------------------------- report
  out(machineLine(load0))
  out(
    `Date: ${new Date().toISOString()}; Hearth ${JSON.parse(readFileSync(join(root, "package.json"), "utf8")).version} on Node ${nodeVersion}; ${gitVersion}; PostgreSQL ${pg.server}`
  )
  out(
    `Repository: ${fmt(config.commits)} commits, ${fmt(config.files)} files, generated in ${fmt(generateSeconds, 1)} s; pack served by both ${fmt(servedBytes / 2 ** 20, 1)} MiB`
  )
  out()
  if (clones.length > 0) {
    const ratios = clones.map((c) => c.hearth / c.backend)
    const ratio = median(ratios)
    const met = ratio <= TARGETS.cloneRatio
    if (!met) missed++
    out(
      `Clone (\`git clone --bare\`, ${clones.length} alternating rounds after one warm-up clone each; medians; ratio = median of the per-round ratios)`
    )
    out()
    out("| | Hearth | http-backend | ratio Hearth/http-backend (per round) | target | met |")
    out("|---|---:|---:|---|---:|---|")
    out(
      `| wall time | ${fmt(median(clones.map((c) => c.hearth)), 2)} s | ${fmt(median(clones.map((c) => c.backend)), 2)} s | **${fmt(ratio, 3)}** (${ratios.map((r) => fmt(r, 3)).join(", ")}) | ≤ ${fmt(TARGETS.cloneRatio, 2)} | ${met ? "yes" : `NO (+${fmt((ratio - TARGETS.cloneRatio) * 100, 1)} points)`} |`
    )
    out(
      `| server process CPU (node, without git) | ${fmt(median(clones.map((c) => c.hearthCpu)), 2)} s | ${fmt(median(clones.map((c) => c.backendCpu)), 2)} s | | | |`
    )
    out()
  }
  if (pushes.length > 0) {
    const ratios = pushes.map((p) => p.hearth / p.backend)
    out(`Push into a fresh empty repository (${pushes.length} alternating rounds; medians)`)
    out()
    out("| | Hearth | http-backend | ratio (per round) |")
    out("|---|---:|---:|---|")
    out(
      `| wall time | ${fmt(median(pushes.map((p) => p.hearth)), 2)} s | ${fmt(median(pushes.map((p) => p.backend)), 2)} s | **${fmt(median(ratios), 3)}** (${ratios.map((r) => fmt(r, 3)).join(", ")}) |`
    )
    if (commitGraphSeconds !== undefined) {
      out()
      out(
        `Hearth writes the commit-graph with changed-path filters before answering a push; the same \`git commit-graph write --reachable --changed-paths\` on a pushed copy took ${fmt(commitGraphSeconds, 2)} s.`
      )
    }
    out()
  }
  if (contents.length > 0) {
    out(
      `GET /api/v1/repos/${ACCOUNT.username}/big/contents/{file} (anonymous, autocannon, ${config.connections} connections, ${config.contentsRounds} rounds of ${config.duration} s alternating the files, after ${config.warmup} s warm-up each; medians; CPU per request over all rounds, from /proc: Hearth's process, and the git processes it spawned and reaped)`
    )
    out()
    out("| file | req/s (per round) | p50 / p99 ms | CPU per request: Hearth / git children | target | met |")
    out("|---|---:|---:|---:|---:|---|")
    for (const c of contents) {
      const failed = c.samples.some((x) => x.bad > 0)
      const rps = median(c.samples.map((x) => x.rps))
      const met = c.target === undefined ? undefined : rps >= c.target && !failed
      if (met === false) missed++
      out(
        `| ${c.path === "" ? c.label : `${c.label} (\`${c.path}\`)`} | **${fmt(rps)}** (${c.samples.map((x) => fmt(x.rps)).join(", ")}) | ${fmt(median(c.samples.map((x) => x.p50)), 2)} / ${fmt(median(c.samples.map((x) => x.p99)), 2)} | ${fmt((c.nodeSeconds * 1000) / c.requests, 2)} / ${fmt((c.gitSeconds * 1000) / c.requests, 2)} ms | ${c.target === undefined ? "(none)" : `≥ ${c.target}`} | ${met === undefined ? "–" : met ? "yes" : failed ? "NO (failed requests)" : `NO (${fmt((1 - rps / c.target!) * 100, 0)} % short)`} |`
      )
    }
    out()
    out(`Hearth's repository ${bloom ? "has" : "has NO"} commit-graph with changed-path filters.`)
    out(
      `The git commands behind one request, each spawned alone from Node (median wall time): ${gitSteps.map((s) => `${s.label} ${fmt(s.ms, 1)} ms`).join("; ")}.`
    )
    out()
  }
  out(missed === 0 ? "All targets met." : `${missed} target(s) missed.`)
  process.stdout.write(`\n${lines.join("\n")}\n`)
  if (config.output !== undefined && config.output !== "") {
    writeFileSync(
      config.output,
      JSON.stringify({ config, nodeVersion, gitVersion, pgVersion: pg.server, results, table: lines }, null, 2)
    )
  }
  return missed
}

await runMain(main)

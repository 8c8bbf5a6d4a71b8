// The web pages' benchmark (`npm run bench:web`; issue 17, "Speed"; settings in infra/bench/README.md):
// a repository of 2,000 files with a ~100 KB README, pushed with git to a freshly started Hearth,
// then, on one keep-alive connection and as an anonymous visitor, requests one after another (so that the time measured is the
// server's, plus a loopback round trip):
// - the repository home, against the API calls that fetch the same data — GET /repos/{o}/{r}, the
//   root listing (/contents), the README (/contents/README.md), /languages and the latest commit
//   (/commits?limit=1, without stat, files and verification) — one after another, their sum, in
//   the same run, the two alternating;
// - a 2,000-line TypeScript file's view: cold (the first view of each of BENCH_WEB_COLD distinct
//   blobs, after the highlighter's warm-up, which the first web page starts) and cached (the same blob again);
// - the bytes each page takes on the wire (brotli, as browsers ask) and the stylesheet's;
// - start to first 200 of GET /api/v1/version with an existing data dir, BENCH_WEB_STARTS times,
//   and the same for the checkout in BENCH_WEB_BASE_TREE (e.g. the commit before a change) when set.
// Targets: home p50 ≤ 30 ms and ≤ 2× the API; file cold ≤ 80 ms, cached ≤ 10 ms; every page but the
// file and diff views ≤ 100 KB with the stylesheet.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { Agent } from "node:http"
import os from "node:os"
import { dirname, join } from "node:path"
import { brotliDecompressSync } from "node:zlib"
import {
  type Account,
  type Backend,
  type BackendName,
  basic,
  createAccount,
  execFileP,
  fmt,
  http,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  quantile,
  root,
  runMain,
  startHearth,
  stopChild,
  tempDir
} from "./support.ts"
import { issuePageBench } from "./web/issue-page.ts"
import { benchPulls, pullsReport } from "./web/pulls.ts"

const config = {
  requests: Math.round(positive("BENCH_WEB_REQUESTS", 200)),
  warmup: Math.round(positive("BENCH_WEB_WARMUP", 20)),
  cold: Math.round(positive("BENCH_WEB_COLD", 10)),
  starts: Math.round(positive("BENCH_WEB_STARTS", 5)),
  files: Math.round(positive("BENCH_WEB_FILES", 2000)),
  backends: (process.env.BENCH_BACKENDS ?? "postgres,embedded")
    .split(",")
    .filter((b) => b !== "") as Array<BackendName>,
  baseTree: process.env.BENCH_WEB_BASE_TREE,
  /** A directory: the measured server writes a V8 CPU profile there (`--cpu-prof`) when it stops. */
  profile: process.env.BENCH_WEB_PROFILE,
  output: process.env.BENCH_OUTPUT
}

const TARGETS = { homeMs: 30, homeRatio: 2, coldMs: 80, cachedMs: 10, pageKb: 100 } as const
const ACCOUNT: Account = { username: "bench", password: "bench-password-123", admin: true }
const auth = basic(ACCOUNT.username, ACCOUNT.password)
const LINES = 2000

// ------------------------------------------------------------------ the repository (deterministic)

const WORDS = (
  "the quick forge renders markdown safely with tables lists links code and references to issues " +
  "commits users while keeping hostile input harmless fast and predictable for every repository page"
).split(" ")
let seed = 17
const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const word = () => WORDS[Math.floor(next() * WORDS.length)]!
const sentence = (n: number) => {
  const parts = Array.from({ length: n }, () => {
    const r = next()
    const w = word()
    if (r < 0.05) return `**${w}**`
    if (r < 0.08) return `\`${w}()\``
    if (r < 0.1) return `[${w}](docs/${w}.md)`
    if (r < 0.11) return `@bench`
    return w
  })
  return `${parts.join(" ").replace(/^./, (c) => c.toUpperCase())}.`
}

/** A README of about `bytes` bytes: sections of prose, task lists, code, tables, quotes, images. */
const readmeOf = (bytes: number) => {
  let text = "# Widgets\n\n> [!NOTE]\n> Read the docs first.\n\n"
  for (let i = 1; Buffer.byteLength(text) < bytes; i++) {
    text += [
      `## Section ${i}: ${word()} ${word()}`,
      "",
      `${sentence(40)} ${sentence(30)}`,
      "",
      ...Array.from({ length: 5 }, (_, j) => `- [${j % 2 ? "x" : " "}] ${sentence(8)}`),
      "",
      "```ts",
      ...Array.from({ length: 6 }, (_, j) => `const value${j} = compute("${word()}", ${j}) // ${word()}`),
      "```",
      "",
      "| name | kind | notes |",
      "|------|:----:|-------|",
      ...Array.from({ length: 4 }, () => `| ${word()} | ${word()} | ${sentence(5)} |`),
      "",
      `> ${sentence(20)}`,
      "",
      `![diagram](img/${word()}.png) ${sentence(15)}`,
      "",
      ""
    ].join("\n")
  }
  return text
}

/** The 2,000-line TypeScript file: a real one from node_modules (read here, never committed). */
const CANDIDATES = ["node_modules/@effect/sql-pg/src/PgConnection.ts", "node_modules/effect/src/Schedule.ts"]
const bigFile = () => {
  const source = CANDIDATES.find((c) => existsSync(join(root, c)))
  if (source === undefined) throw new Error(`none of ${CANDIDATES.join(", ")} exists: run npm ci`)
  let lines = readFileSync(join(root, source), "utf8").split("\n")
  while (lines.length < LINES) lines = [...lines, ...lines]
  return { source, text: `${lines.slice(0, LINES).join("\n")}\n` }
}

/** Writes the working tree: 2,000 files in all, over a few commits so that last commits differ. */
const buildRepository = async (dir: string, big: string) => {
  const git = (args: ReadonlyArray<string>) =>
    execFileP("git", ["-c", "user.name=Bench", "-c", "user.email=bench@example.com", ...args], {
      cwd: dir,
      maxBuffer: 1 << 26
    })
  await execFileP("git", ["init", "-q", "-b", "main", dir])
  const write = (path: string, content: string) => {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), content)
  }
  const fixed = ["README.md", "package.json", "LICENSE", ".gitignore"]
  write("README.md", readmeOf(100 * 1024))
  write("package.json", JSON.stringify({ name: "widgets", version: "1.0.0", type: "module" }, null, 2))
  write("LICENSE", "MIT License\n\nCopyright (c) Bench\n")
  write(".gitignore", "node_modules/\n")
  // The big file in BENCH_WEB_COLD + 1 variants (distinct blobs: the first line differs).
  for (let k = 0; k <= config.cold; k++)
    write(`big/file-${k}.ts`, `// variant ${k}\n${big.split("\n").slice(1).join("\n")}`)
  const rest = config.files - fixed.length - (config.cold + 1)
  const dirs = ["src", "test", "docs", "lib", "scripts"]
  let made = 0
  let round = 0
  // Five commits, each adding part of the files, then one touching a few of each directory.
  while (made < rest) {
    const chunk = Math.min(Math.ceil(rest / 5), rest - made)
    for (let i = 0; i < chunk; i++) {
      const n = made + i
      const top = dirs[n % dirs.length]!
      const ext = top === "docs" ? "md" : "ts"
      write(
        `${top}/mod-${String(Math.floor(n / 50) % 20).padStart(2, "0")}/file-${String(n).padStart(4, "0")}.${ext}`,
        ext === "md" ? `# File ${n}\n\n${sentence(20)}\n` : `export const value${n} = ${n} // ${sentence(6)}\n`
      )
    }
    made += chunk
    await git(["add", "-A"])
    await git(["commit", "-q", "-m", `Add part ${++round} of the files\n\n${sentence(12)}`])
  }
  for (const top of dirs) write(`${top}/CHANGES.md`, `Changed in the last commit: ${sentence(8)}\n`)
  await git(["add", "-A"])
  await git(["commit", "-q", "-m", "Touch every directory"])
}

// ------------------------------------------------------------------ measuring

const agent = new Agent({ keepAlive: true, maxSockets: 1 })

const timed = async (url: string, headers: Record<string, string> = {}) => {
  const started = performance.now()
  const reply = await http(url, { agent, headers, timeoutMs: 30_000 })
  const ms = performance.now() - started
  if (reply.status !== 200) throw new Error(`${url}: ${reply.status} ${reply.body.toString().slice(0, 200)}`)
  return { ms, reply }
}

const stats = (values: ReadonlyArray<number>) => {
  const sorted = Float64Array.from(values).sort()
  return { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), n: values.length }
}

const BROWSER = { "accept-encoding": "br, gzip" }

interface Result {
  readonly backend: BackendName
  readonly home: ReturnType<typeof stats>
  readonly api: ReturnType<typeof stats>
  readonly apiCalls: Record<string, number>
  readonly cold: ReturnType<typeof stats>
  readonly cached: ReturnType<typeof stats>
  readonly pages: Array<{ readonly name: string; readonly path: string; readonly html: number; readonly wire: number }>
  readonly css: number
  readonly startup: Array<number>
  readonly baseStartup: Array<number> | undefined
}

const measure = async (name: BackendName, big: string): Promise<Result> => {
  const dataDir = tempDir(`hearth-bench-web-${name}-`)
  const backend: Backend = {
    name,
    dataDir,
    logFile: join(dataDir, "hearth.log"),
    ...(name === "postgres" ? { databaseUrl: (await preparePostgres()).url } : {})
  }
  const profiled: Backend =
    config.profile === undefined
      ? backend
      : {
          ...backend,
          nodeArgs: ["--cpu-prof", `--cpu-prof-dir=${config.profile}`, `--cpu-prof-name=web-${name}.cpuprofile`]
        }
  await createAccount(backend, ACCOUNT)
  let hearth = await startHearth(profiled)
  const startedAt = performance.now()
  const base = hearth.base
  const api = (path: string) => `${base}/api/v1${path}`
  const created = await http(api("/user/repos"), {
    method: "POST",
    headers: { authorization: auth, "content-type": "application/json" },
    body: JSON.stringify({ name: "widgets", description: "A repository of 2,000 files" })
  })
  if (created.status !== 201) throw new Error(`could not create the repository: ${created.body.toString()}`)
  const work = tempDir("hearth-bench-web-src-")
  log(`${name}: writing and pushing ${config.files} files`)
  await buildRepository(work, big)
  const remote = new URL(`${base}/bench/widgets.git`)
  remote.username = ACCOUNT.username
  remote.password = ACCOUNT.password
  await execFileP("git", ["push", "-q", remote.toString(), "main"], { cwd: work, maxBuffer: 1 << 26 })
  // Pages of a diff and of a compare need a second branch.
  await execFileP("git", ["-c", "user.name=B", "-c", "user.email=b@example.com", "checkout", "-q", "-b", "topic"], {
    cwd: work
  })
  writeFileSync(join(work, "big/file-0.ts"), `${big.replace("export", "export /* changed */")}// more\n`)
  await execFileP(
    "git",
    ["-c", "user.name=B", "-c", "user.email=b@example.com", "commit", "-q", "-am", "Change the big file"],
    { cwd: work }
  )
  await execFileP("git", ["push", "-q", remote.toString(), "topic"], { cwd: work })
  const head = (await execFileP("git", ["rev-parse", "HEAD"], { cwd: work })).stdout.trim()

  // The languages are counted after the push (in the background): wait for them, and for the
  // highlighter's warm-up, which starts a second after the first web page and takes a second or two.
  for (let i = 0; i < 100; i++) {
    const langs = await http(api("/repos/bench/widgets/languages"))
    if (langs.status === 200 && langs.body.toString() !== "{}") break
    await new Promise((r) => setTimeout(r, 100))
  }
  await http(`${base}/bench/widgets`)
  await new Promise((r) => setTimeout(r, Math.max(4000, 10_000 - (performance.now() - startedAt))))

  const home = `${base}/bench/widgets`
  const calls = {
    repo: api("/repos/bench/widgets"),
    listing: api("/repos/bench/widgets/contents"),
    readme: api("/repos/bench/widgets/contents/README.md"),
    languages: api("/repos/bench/widgets/languages"),
    latest: api("/repos/bench/widgets/commits?limit=1&stat=false&files=false&verification=false")
  }
  // Both anonymous, as a visitor of a public repository.
  const apiHeaders = {}
  const perCall: Record<string, Array<number>> = {}
  const runApi = async () => {
    let total = 0
    for (const [key, url] of Object.entries(calls)) {
      const { ms } = await timed(url, apiHeaders)
      ;(perCall[key] ??= []).push(ms)
      total += ms
    }
    return total
  }
  log(`${name}: home and API, ${config.warmup} warm-up + ${config.requests} each`)
  for (let i = 0; i < config.warmup; i++) {
    await timed(home, BROWSER)
    await runApi()
  }
  for (const key of Object.keys(perCall)) perCall[key] = []
  const homeTimes: Array<number> = []
  const apiTimes: Array<number> = []
  for (let i = 0; i < config.requests; i++) {
    if (i % 2 === 0) {
      homeTimes.push((await timed(home, BROWSER)).ms)
      apiTimes.push(await runApi())
    } else {
      apiTimes.push(await runApi())
      homeTimes.push((await timed(home, BROWSER)).ms)
    }
  }

  log(`${name}: the ${LINES}-line file, ${config.cold} cold views and ${config.requests} cached`)
  const file = (k: number) => `${base}/bench/widgets/src/branch/main/big/file-${k}.ts`
  const cold: Array<number> = []
  for (let k = 1; k <= config.cold; k++) cold.push((await timed(file(k), BROWSER)).ms)
  for (let i = 0; i < config.warmup; i++) await timed(file(0), BROWSER)
  const cached: Array<number> = []
  for (let i = 0; i < config.requests; i++) cached.push((await timed(file(0), BROWSER)).ms)

  await benchPulls({ backend: name, base, auth, timed, stats, requests: config.requests, warmup: config.warmup })
  log(`${name}: page sizes`)
  const pagesToWeigh: ReadonlyArray<readonly [string, string]> = [
    ["home", "/bench/widgets"],
    ["directory (src/mod-00)", "/bench/widgets/src/branch/main/src/mod-00"],
    ["history", "/bench/widgets/commits/branch/main"],
    ["branches", "/bench/widgets/branches"],
    ["tags", "/bench/widgets/tags"],
    ["explore", "/explore/repos"],
    [`file view (${LINES} lines)`, "/bench/widgets/src/branch/main/big/file-0.ts"],
    [`blame (${LINES} lines)`, "/bench/widgets/blame/branch/main/big/file-0.ts"],
    ["commit (diff)", `/bench/widgets/commit/${head}`],
    ["compare (diff)", "/bench/widgets/compare/main...topic"]
  ]
  const pages: Result["pages"] = []
  let css = 0
  for (const [label, path] of pagesToWeigh) {
    const { reply } = await timed(`${base}${path}`, BROWSER)
    const html = reply.headers["content-encoding"] === "br" ? brotliDecompressSync(reply.body) : reply.body
    pages.push({ name: label, path, html: html.length, wire: reply.body.length })
    const sheet = /href="(\/assets\/hearth\.[0-9a-f]+\.css)"/.exec(html.toString())?.[1]
    if (sheet !== undefined && css === 0) css = (await timed(`${base}${sheet}`, BROWSER)).reply.body.length
  }
  await stopChild(hearth.child)

  log(
    `${name}: start to first 200, ${config.starts} times${config.baseTree === undefined ? "" : ", and the base tree's"}`
  )
  const startup: Array<number> = []
  const baseStartup: Array<number> | undefined = config.baseTree === undefined ? undefined : []
  for (let i = 0; i < config.starts; i++) {
    hearth = await startHearth(backend)
    startup.push(hearth.startMs)
    await stopChild(hearth.child)
    if (baseStartup !== undefined) {
      const other = await startHearth({ ...backend, tree: config.baseTree! })
      baseStartup.push(other.startMs)
      await stopChild(other.child)
    }
  }
  const apiCalls: Record<string, number> = {}
  for (const [key, times] of Object.entries(perCall)) apiCalls[key] = median(times)
  return {
    backend: name,
    home: stats(homeTimes),
    api: stats(apiTimes),
    apiCalls,
    cold: stats(cold),
    cached: stats(cached),
    pages,
    css,
    startup,
    baseStartup
  }
}

const kb = (bytes: number) => `${fmt(bytes / 1024, 1)} KB`

const main = async () => {
  const load0 = os.loadavg()
  const big = bigFile()
  log(`the ${LINES}-line file: the first lines of ${big.source}, ${kb(Buffer.byteLength(big.text))}`)
  const results: Array<Result> = []
  for (const name of config.backends) results.push(await measure(name, big.text))

  const lines: Array<string> = []
  const out = (line = "") => lines.push(line)
  const missed: Array<string> = []
  out(machineLine(load0))
  out(
    `Date: ${new Date().toISOString()}; ${config.files} files, a ${kb(Buffer.byteLength(readmeOf(100 * 1024)))} README; ${config.requests} requests per case on one keep-alive connection`
  )
  out()
  out("| database | case | p50 | p99 | target | met |")
  out("|---|---|---:|---:|---|---|")
  for (const r of results) {
    const homeOk = r.home.p50 <= TARGETS.homeMs && r.home.p50 <= TARGETS.homeRatio * r.api.p50
    if (!homeOk) missed.push(`${r.backend}: home p50 ${fmt(r.home.p50, 1)} ms (API ${fmt(r.api.p50, 1)} ms)`)
    out(
      `| ${r.backend} | repository home | ${fmt(r.home.p50, 1)} ms | ${fmt(r.home.p99, 1)} ms | ≤ ${TARGETS.homeMs} ms and ≤ ${TARGETS.homeRatio}× the API | ${homeOk ? "yes" : "**no**"} |`
    )
    out(
      `| ${r.backend} | the API's 5 calls, one after another (${Object.entries(r.apiCalls)
        .map(([k, v]) => `${k} ${fmt(v, 1)}`)
        .join(
          ", "
        )} ms) | ${fmt(r.api.p50, 1)} ms | ${fmt(r.api.p99, 1)} ms | | ratio ${fmt(r.home.p50 / r.api.p50, 2)} |`
    )
    const coldOk = r.cold.p50 <= TARGETS.coldMs
    const cachedOk = r.cached.p50 <= TARGETS.cachedMs
    if (!coldOk) missed.push(`${r.backend}: file cold p50 ${fmt(r.cold.p50, 1)} ms`)
    if (!cachedOk) missed.push(`${r.backend}: file cached p50 ${fmt(r.cached.p50, 1)} ms`)
    out(
      `| ${r.backend} | ${LINES}-line file, cold (${r.cold.n} blobs) | ${fmt(r.cold.p50, 1)} ms | ${fmt(r.cold.p99, 1)} ms | ≤ ${TARGETS.coldMs} ms | ${coldOk ? "yes" : "**no**"} |`
    )
    out(
      `| ${r.backend} | ${LINES}-line file, cached | ${fmt(r.cached.p50, 1)} ms | ${fmt(r.cached.p99, 1)} ms | ≤ ${TARGETS.cachedMs} ms | ${cachedOk ? "yes" : "**no**"} |`
    )
  }
  out()
  const first = results[0]
  if (first !== undefined) {
    out(
      `Bytes on the wire (brotli), ${first.backend}; the stylesheet is ${kb(first.css)} (cached for a year after the first page):`
    )
    out()
    out("| page | HTML | on the wire | with the stylesheet | target | met |")
    out("|---|---:|---:|---:|---|---|")
    for (const p of first.pages) {
      const exempt = /file view|blame|diff/.test(p.name)
      const total = p.wire + first.css
      const ok = exempt || total <= TARGETS.pageKb * 1024
      if (!ok) missed.push(`${p.name}: ${kb(total)} with the stylesheet`)
      out(
        `| ${p.name} | ${kb(p.html)} | ${kb(p.wire)} | ${kb(total)} | ${exempt ? "exempt" : `≤ ${TARGETS.pageKb} KB`} | ${exempt ? "" : ok ? "yes" : "**no**"} |`
      )
    }
    out()
  }
  for (const line of pullsReport()) out(line)
  out("| database | start to first 200, median | min – max | base tree, median | min – max |")
  out("|---|---:|---|---:|---|")
  for (const r of results) {
    const range = (t: ReadonlyArray<number>) => `${fmt(Math.min(...t))} – ${fmt(Math.max(...t))} ms`
    out(
      `| ${r.backend} | ${fmt(median(r.startup))} ms | ${range(r.startup)} | ${r.baseStartup === undefined ? "" : `${fmt(median(r.baseStartup))} ms`} | ${r.baseStartup === undefined ? "" : range(r.baseStartup)} |`
    )
  }
  missed.push(...(await issuePageBench(config.backends, out)))
  out()
  await (await import("./web/pull-files.ts")).benchPullFiles(config.backends, out, missed)
  out(missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
  process.stdout.write(`${lines.join("\n")}\n`)
  if (config.output !== undefined) writeFileSync(config.output, JSON.stringify(results, null, 2))
  agent.destroy()
  return missed.length
}

await runMain(main)

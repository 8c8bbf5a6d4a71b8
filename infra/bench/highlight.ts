// Syntax highlighting and diff parsing benchmark (`npm run bench:highlight`; issue 17): shiki and
// highlight.js side by side on the same 2,000-line TypeScript file, each measured cold in fresh
// processes (highlight-child.ts: import and set-up, then the first call) and warm (the median of
// the next calls), with the memory each adds; Hearth's own highlighter (src/web/code/Highlight.ts:
// highlight.js, lines, language by linguist) and its cache likewise. Then the diff parser
// (src/web/code/Diff.ts) on the diff of a generated commit touching 500 files in a temp repo.
// Targets (issue 17, the whole file view): cold ≤ 80 ms, cached ≤ 10 ms.

import { execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import os from "node:os"
import { join } from "node:path"
import { gitEnv } from "../../src/git/Git.ts"
import { DIFF_ARGS, parseDiff, splitView } from "../../src/web/code/Diff.ts"
import { fmt, log, machineLine, median, nodeBin, positive, root, runMain, tempDir } from "./support.ts"

const config = {
  rounds: Math.round(positive("BENCH_HL_ROUNDS", 5)),
  calls: Math.round(positive("BENCH_HL_CALLS", 20)),
  diffRuns: Math.round(positive("BENCH_HL_DIFF_RUNS", 20)),
  output: process.env.BENCH_OUTPUT
}

const TARGET_COLD_MS = 80
const TARGET_CACHED_MS = 10
const LINES = 2000

// A real, code-heavy TypeScript file from node_modules (read at run time, never committed): its
// first 2,000 lines. BENCH_HL_FILE picks another.
const CANDIDATES = [
  "node_modules/@effect/sql-pg/src/PgConnection.ts",
  "node_modules/@js-temporal/polyfill/lib/calendar.ts",
  "node_modules/effect/src/Schedule.ts"
]

const LIBRARIES = [
  { id: "highlight.js", label: "highlight.js (core + typescript grammar)" },
  { id: "shiki-js", label: "shiki (JavaScript regex engine, css-variables theme)" },
  { id: "shiki-oniguruma", label: "shiki (Oniguruma WASM engine, css-variables theme)" },
  { id: "hearth", label: "Hearth: src/web/code/Highlight.ts (highlight.js), nothing loaded" },
  { id: "hearth-warmed", label: "Hearth: the same after `warmUp()` (a started server's first view)" },
  { id: "hearth-cached", label: "Hearth: src/web/code/Highlight.ts, cached by blob sha" }
] as const

interface ChildResult {
  readonly library: string
  readonly loadMs: number
  readonly firstMs: number
  readonly coldCpuMs: number
  readonly firstCpuMs: number
  readonly warmMs: number
  readonly heapKeptMb: number
  readonly rssBeforeMb: number
  readonly rssAfterMb: number
  readonly rssPeakMb: number
}

const version = (pkg: string) => {
  try {
    return JSON.parse(readFileSync(join(root, "node_modules", pkg, "package.json"), "utf8")).version as string
  } catch {
    return "?"
  }
}

const runChild = (library: string, file: string) =>
  new Promise<ChildResult>((done, fail) => {
    const child = spawn(
      nodeBin,
      ["--expose-gc", join(root, "infra/bench/highlight-child.ts"), library, file, String(config.calls)],
      {
        cwd: root,
        stdio: ["ignore", "pipe", "inherit"]
      }
    )
    let out = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.on("error", fail)
    child.on("close", (code) =>
      code === 0 ? done(JSON.parse(out.trim()) as ChildResult) : fail(new Error(`${library}: exit ${code}`))
    )
  })

// ------------------------------------------------------------------ the diff

const git = (cwd: string, args: ReadonlyArray<string>) =>
  execFileSync("git", args as Array<string>, {
    cwd,
    env: gitEnv({
      GIT_AUTHOR_NAME: "Bench",
      GIT_AUTHOR_EMAIL: "bench@example.com",
      GIT_COMMITTER_NAME: "Bench",
      GIT_COMMITTER_EMAIL: "bench@example.com"
    }),
    maxBuffer: 1 << 28
  })

/** A repository whose last commit touches 500 files: 400 edited, 40 renamed and edited, 30 deleted, 30 added. */
const buildDiff = (): Buffer => {
  const dir = tempDir("hearth-bench-diff-")
  git(dir, ["init", "-q", "-b", "main"])
  let seed = 17
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  const body = (n: number, variant: number) =>
    Array.from(
      { length: 60 },
      (_, j) =>
        `export const value${n}_${j} = compute(${j}, "${variant % 7 === 0 || j % 9 !== 0 ? "same" : `changed ${variant}`}") // line ${j}`
    ).join("\n") + "\n"
  for (let n = 0; n < 470; n++) {
    const d = join(dir, `pkg${n % 20}`)
    mkdirSync(d, { recursive: true })
    writeFileSync(join(d, `file${n}.ts`), body(n, 0))
  }
  git(dir, ["add", "-A"])
  git(dir, ["commit", "-q", "-m", "base"])
  for (let n = 0; n < 470; n++) {
    const path = join(dir, `pkg${n % 20}`, `file${n}.ts`)
    if (n < 400) writeFileSync(path, body(n, 1 + Math.floor(rand() * 6)))
    else if (n < 440) {
      git(dir, ["mv", `pkg${n % 20}/file${n}.ts`, `pkg${n % 20}/renamed ${n}.ts`])
      writeFileSync(join(dir, `pkg${n % 20}`, `renamed ${n}.ts`), body(n, 0) + "// one more line\n")
    } else rmSync(path)
  }
  for (let n = 0; n < 30; n++) writeFileSync(join(dir, `added${n}.ts`), body(1000 + n, 0))
  git(dir, ["add", "-A"])
  git(dir, ["commit", "-q", "-m", "touch 500 files"])
  return git(dir, ["diff", ...DIFF_ARGS, "HEAD~1", "HEAD"])
}

const timeRuns = (n: number, f: () => unknown) => {
  f()
  const times: Array<number> = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    f()
    times.push(performance.now() - t)
  }
  return median(times)
}

// ------------------------------------------------------------------ main

const main = async () => {
  const load0 = os.loadavg()
  const source = process.env.BENCH_HL_FILE ?? CANDIDATES.find((c) => existsSync(join(root, c)))
  if (source === undefined) throw new Error(`none of ${CANDIDATES.join(", ")} exists: run npm ci, or set BENCH_HL_FILE`)
  const sample = readFileSync(join(root, source), "utf8").split("\n").slice(0, LINES).join("\n") + "\n"
  const file = join(tempDir("hearth-bench-hl-"), "sample.ts")
  writeFileSync(file, sample)
  log(`sample: first ${LINES} lines of ${source} (${fmt(Buffer.byteLength(sample))} bytes)`)

  const results = new Map<string, Array<ChildResult>>(LIBRARIES.map((l) => [l.id, []]))
  for (let round = 0; round < config.rounds; round++) {
    // Alternate the order, so that no library always runs on a warmer (or busier) machine.
    const order = round % 2 === 0 ? LIBRARIES : [...LIBRARIES].reverse()
    for (const { id } of order) {
      const r = await runChild(id, file)
      results.get(id)!.push(r)
      log(
        `round ${round + 1} ${id}: load ${fmt(r.loadMs, 1)} ms, first ${fmt(r.firstMs, 1)} ms, warm ${fmt(r.warmMs, 2)} ms`
      )
    }
  }

  const rows = LIBRARIES.map(({ id, label }) => {
    const rs = results.get(id)!
    return {
      id,
      label,
      loadMs: median(rs.map((r) => r.loadMs)),
      firstMs: median(rs.map((r) => r.firstMs)),
      coldMs: median(rs.map((r) => r.loadMs + r.firstMs)),
      coldCpuMs: median(rs.map((r) => r.coldCpuMs)),
      firstCpuMs: median(rs.map((r) => r.firstCpuMs)),
      warmMs: median(rs.map((r) => r.warmMs)),
      heapKeptMb: median(rs.map((r) => r.heapKeptMb)),
      rssPeakMb: median(rs.map((r) => r.rssPeakMb))
    }
  })

  log("building the 500-file diff")
  const diffBytes = buildDiff()
  const parsed = parseDiff(diffBytes)
  const unlimited = { maxFiles: Number.POSITIVE_INFINITY, maxLines: Number.POSITIVE_INFINITY }
  const all = parseDiff(diffBytes, unlimited)
  const lineCount = all.files.reduce((n, f) => n + f.hunks.reduce((m, h) => m + h.lines.length, 0), 0)
  // Both parses once first, so that neither is measured on colder code than the other.
  timeRuns(config.diffRuns, () => parseDiff(diffBytes, unlimited))
  const diffRows = [
    {
      what: "parseDiff, Forgejo's limits (100 files with content)",
      ms: timeRuns(config.diffRuns, () => parseDiff(diffBytes))
    },
    {
      what: "parseDiff, no limits (all 500 files)",
      ms: timeRuns(config.diffRuns, () => parseDiff(diffBytes, unlimited))
    },
    {
      what: "split view of all 500 files (splitView)",
      ms: timeRuns(config.diffRuns, () => {
        for (const f of all.files) splitView(f)
      })
    }
  ]

  const warmed = rows.find((r) => r.id === "hearth-warmed")!
  const cached = rows.find((r) => r.id === "hearth-cached")!
  // The target is the file view's: a running server (warmed up once when it started) showing a
  // blob for the first time, then again.
  const missed: Array<string> = []
  if (warmed.firstMs > TARGET_COLD_MS)
    missed.push(`first view after warm-up ${fmt(warmed.firstMs, 1)} ms > ${TARGET_COLD_MS} ms`)
  if (cached.warmMs > TARGET_CACHED_MS) missed.push(`cached view ${fmt(cached.warmMs, 2)} ms > ${TARGET_CACHED_MS} ms`)

  const out: Array<string> = []
  out.push(
    `Syntax highlighting of the first ${LINES} lines of ${source} (${fmt(Buffer.byteLength(sample))} bytes), ` +
      `${config.rounds} fresh processes per library, ${config.calls} warm calls each; highlight.js ${version("highlight.js")}, shiki ${version("shiki")}`
  )
  out.push(machineLine(load0))
  out.push("")
  out.push(
    "| library | load (import, engine, grammar, theme) | first call | cold = load + first | cold, CPU | first call, CPU | warm, per call | heap kept | peak RSS |"
  )
  out.push("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    out.push(
      `| ${r.label} | ${fmt(r.loadMs, 1)} ms | ${fmt(r.firstMs, 1)} ms | ${fmt(r.coldMs, 1)} ms | ${fmt(r.coldCpuMs, 1)} ms | ${fmt(r.firstCpuMs, 1)} ms | ${fmt(r.warmMs, 2)} ms | ${fmt(r.heapKeptMb, 1)} MB | ${fmt(r.rssPeakMb)} MB |`
    )
  }
  out.push("")
  out.push(
    `Targets (issue 17): a blob's first view on a started server (the warmed row's first call) ≤ ${TARGET_COLD_MS} ms: ` +
      `${fmt(warmed.firstMs, 1)} ms; a second view (the cached row's warm call, a cache hit) ≤ ${TARGET_CACHED_MS} ms: ${fmt(cached.warmMs, 3)} ms.`
  )
  out.push("")
  out.push(
    `Diff: ${fmt(diffBytes.length)} bytes of \`git diff\`, ${parsed.fileCount} files, ${fmt(lineCount)} hunk lines ` +
      `(+${fmt(all.additions)} −${fmt(all.deletions)}); medians of ${config.diffRuns} runs`
  )
  out.push("")
  out.push("| step | time |")
  out.push("|---|---:|")
  for (const d of diffRows) out.push(`| ${d.what} | ${fmt(d.ms, 2)} ms |`)
  out.push("")
  out.push(missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
  process.stdout.write(out.join("\n") + "\n")
  if (config.output) writeFileSync(config.output, JSON.stringify({ rows, diff: diffRows, missed }, null, 2))
  return missed.length
}

void runMain(main)

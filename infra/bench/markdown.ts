// Markdown rendering benchmark (`npm run bench:markdown`; issue 6 item 5): Hearth's full pipeline
// (marked + forge extensions + sanitizer, `src/markdown/Render.ts`) side by side with its ceiling,
// plain `marked` with GFM and nothing else, in one process and one run, on a generated ~100 KB
// README and a ~2 KB comment. Rounds alternate which goes first; p50 per render and renders/s are
// medians over the rounds, the ratio is the median of the per-round renders/s ratios. Then the
// pathological inputs of the unit tests, timed once each, and the process's peak RSS.
// Targets: full pipeline ≥ 40 % of the ceiling's renders/s; the 100 KB README < 20 ms p50;
// every pathological input < 1 s.

import { readFileSync, writeFileSync } from "node:fs"
import os from "node:os"
import { makeRenderer, type RenderOptions } from "../../src/markdown/Render.ts"
import { fmt, log, machineLine, median, pct, positive, quantile } from "./support.ts"

const config = {
  rounds: Math.max(1, Math.round(positive("BENCH_MD_ROUNDS", 5))),
  // Renders per document, per side, per round (the README; the comment gets 20× as many).
  renders: Math.round(positive("BENCH_MD_RENDERS", 40)),
  output: process.env.BENCH_OUTPUT
}

const TARGET_RATIO = 0.4
const TARGET_README_P50_MS = 20
const TARGET_PATHOLOGICAL_MS = 1000

const APP = "http://localhost:3000/"
const options: RenderOptions = {
  mode: "gfm",
  base: `${APP}acme/widgets`,
  wiki: false,
  appUrl: APP,
  mentionable: new Set(["alice", "bob", "carol"]),
  issues: new Set(["#1", "#2", "#3", "#12"])
}

// ------------------------------------------------------------------ documents (deterministic)

const WORDS = (
  "the quick forge renders markdown safely with tables lists links code and references to issues " +
  "commits users while keeping hostile input harmless fast and predictable for every repository page"
).split(" ")
let seed = 42
const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const word = () => WORDS[Math.floor(next() * WORDS.length)]!
const sentence = (n: number) => {
  const parts = Array.from({ length: n }, () => {
    const r = next()
    const w = word()
    if (r < 0.04) return `**${w}**`
    if (r < 0.07) return `*${w}*`
    if (r < 0.09) return `\`${w}()\``
    if (r < 0.11) return `[${w}](docs/${w}.md)`
    if (r < 0.12) return `https://example.com/${w}`
    if (r < 0.13) return `@${["alice", "bob", "nobody"][Math.floor(next() * 3)]}`
    if (r < 0.14) return `#${Math.floor(next() * 500) + 1}`
    if (r < 0.145) return `:${["tada", "rocket", "bug", "sparkles"][Math.floor(next() * 4)]}:`
    return w
  })
  return parts.join(" ").replace(/^./, (c) => c.toUpperCase()) + "."
}
const section = (i: number) =>
  [
    `## Section ${i}: ${word()} ${word()}`,
    "",
    sentence(40) + " " + sentence(30),
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
    `![diagram](img/${word()}.png) ${sentence(15)}[^${i}]`,
    "",
    `[^${i}]: ${sentence(6)}`,
    ""
  ].join("\n")

const build = (bytes: number, intro: string) => {
  let text = intro
  for (let i = 1; Buffer.byteLength(text) < bytes; i++) text += section(i)
  return text
}
const readme = build(100 * 1024, "# Widgets\n\n> [!NOTE]\n> Read the docs first.\n\n")
// The same README opening with the raw HTML many READMEs have (a centred logo and badges): the
// whole document then goes through the sanitizer.
const readmeHtml =
  `<p align="center"><img src="docs/logo.png" width="120" alt="logo"></p>\n\n` +
  `<a href="https://ci.example.com/acme/widgets"><img src="https://ci.example.com/badge.svg" alt="build"></a>\n\n` +
  readme
seed = 7
const comment = (() => {
  let text = ""
  while (Buffer.byteLength(text) < 2 * 1024) text += sentence(25) + "\n\n"
  return text + "- [ ] follow up\n- [x] done\n"
})()

// ------------------------------------------------------------------ measuring

const renderer = makeRenderer(APP)
const full = (text: string) => renderer.render(text, options)
const plain = (text: string) => renderer.plain(text)

interface Timing {
  readonly p50: number
  readonly p99: number
  readonly perSecond: number
}

const timeEach = (fn: (text: string) => string, text: string, n: number): Timing => {
  const times: Array<number> = []
  for (let i = 0; i < n; i++) {
    const t = performance.now()
    fn(text)
    times.push(performance.now() - t)
  }
  times.sort((a, b) => a - b)
  const total = times.reduce((a, b) => a + b, 0)
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), perSecond: (n * 1000) / total }
}

interface Row {
  readonly doc: string
  readonly bytes: number
  readonly full: Timing
  readonly plain: Timing
  readonly ratio: number
}

const compare = (name: string, text: string, n: number): Row => {
  // Warm-up: both paths compiled and their caches filled.
  for (let i = 0; i < Math.max(5, n / 4); i++) {
    full(text)
    plain(text)
  }
  const fulls: Array<Timing> = []
  const plains: Array<Timing> = []
  const ratios: Array<number> = []
  for (let round = 0; round < config.rounds; round++) {
    // Alternate which side goes first, so that neither always runs on a warmer (or busier) machine.
    let f: Timing
    let p: Timing
    if (round % 2 === 0) {
      f = timeEach(full, text, n)
      p = timeEach(plain, text, n)
    } else {
      p = timeEach(plain, text, n)
      f = timeEach(full, text, n)
    }
    fulls.push(f)
    plains.push(p)
    ratios.push(f.perSecond / p.perSecond)
    log(`${name} round ${round + 1}: full ${fmt(f.p50, 2)} ms, plain ${fmt(p.p50, 2)} ms p50`)
  }
  const med = (xs: ReadonlyArray<Timing>): Timing => ({
    p50: median(xs.map((x) => x.p50)),
    p99: median(xs.map((x) => x.p99)),
    perSecond: median(xs.map((x) => x.perSecond))
  })
  return { doc: name, bytes: Buffer.byteLength(text), full: med(fulls), plain: med(plains), ratio: median(ratios) }
}

const pathological: Record<string, string> = {
  "10,000 backticks": "`".repeat(10_000),
  "10,000 spaced backticks": "` ".repeat(10_000),
  "10,000 nested quotes": ">".repeat(10_000) + " deep",
  "10,000 nested list markers": "- ".repeat(10_000) + "deep",
  "500-level list by indentation": Array.from({ length: 500 }, (_, i) => " ".repeat(i * 2) + "- x").join("\n"),
  "30,000 intraword underscores": "_a".repeat(30_000),
  "50,000 brackets": "[".repeat(50_000),
  "20,000 unclosed links": "[a](".repeat(20_000),
  "10,000 emphasis openers": "**_".repeat(10_000),
  "50,000 stars and words": "*a ".repeat(50_000),
  // One-character cells: the most output per input byte; 1,300 rows fill MAX_RENDER_SIZE's 512 KiB.
  "table at the size limit (200 × 1,300, 512 KiB)":
    "|" + "h|".repeat(200) + "\n|" + "-|".repeat(200) + "\n" + ("|" + "x|".repeat(200) + "\n").repeat(1_300),
  "20,000 links": "[x](y) ".repeat(20_000),
  "20,000 references": "@alice #1 ".repeat(20_000),
  "512 KiB of one paragraph": sentence(10).repeat(Math.floor((512 * 1024) / 80))
}

const main = () => {
  const load0 = os.loadavg()
  const rows = [
    compare("README (~100 KB)", readme, config.renders),
    compare("README with raw HTML (sanitized)", readmeHtml, config.renders),
    compare("comment (~2 KB)", comment, config.renders * 20)
  ]
  const patho = Object.entries(pathological).map(([name, text]) => {
    const t = performance.now()
    const html = full(text)
    return { name, bytes: Buffer.byteLength(text), ms: performance.now() - t, out: html.length }
  })
  const rssPeak = Number(/VmHWM:\s+(\d+)/.exec(procStatus())?.[1] ?? 0) / 1024

  const missed: Array<string> = []
  for (const row of rows)
    if (row.ratio < TARGET_RATIO) missed.push(`${row.doc}: ratio ${pct(row.ratio)} < ${pct(TARGET_RATIO)}`)
  for (const row of rows.slice(0, 2)) {
    if (row.full.p50 >= TARGET_README_P50_MS)
      missed.push(`${row.doc} p50 ${fmt(row.full.p50, 2)} ms ≥ ${TARGET_README_P50_MS} ms`)
  }
  for (const p of patho) if (p.ms >= TARGET_PATHOLOGICAL_MS) missed.push(`${p.name}: ${fmt(p.ms)} ms ≥ 1 s`)

  const out: Array<string> = []
  out.push(
    `Markdown rendering, ${config.rounds} rounds × ${config.renders} (README) / ${config.renders * 20} (comment) renders per side`
  )
  out.push(machineLine(load0))
  out.push("")
  out.push(
    "| document | bytes | full p50 | full p99 | full renders/s | plain marked p50 | plain renders/s | ratio (target ≥ 40 %) |"
  )
  out.push("|---|---:|---:|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    out.push(
      `| ${r.doc} | ${fmt(r.bytes)} | ${fmt(r.full.p50, 2)} ms | ${fmt(r.full.p99, 2)} ms | ${fmt(r.full.perSecond)} | ${fmt(r.plain.p50, 2)} ms | ${fmt(r.plain.perSecond)} | ${pct(r.ratio)} |`
    )
  }
  out.push("")
  out.push("| pathological input (full pipeline, once) | bytes | time | output bytes |")
  out.push("|---|---:|---:|---:|")
  for (const p of patho) out.push(`| ${p.name} | ${fmt(p.bytes)} | ${fmt(p.ms)} ms | ${fmt(p.out)} |`)
  out.push("")
  out.push(`Peak RSS of the benchmark process: ${fmt(rssPeak)} MB`)
  out.push(missed.length === 0 ? "All targets met." : `Missed: ${missed.join("; ")}`)
  process.stdout.write(out.join("\n") + "\n")
  if (config.output)
    writeFileSync(config.output, JSON.stringify({ rows, pathological: patho, rssPeakMb: rssPeak, missed }, null, 2))
  process.exit(missed.length > 0 && process.env.BENCH_STRICT === "1" ? 1 : 0)
}

const procStatus = () => {
  try {
    return readFileSync("/proc/self/status", "utf8")
  } catch {
    return ""
  }
}

main()

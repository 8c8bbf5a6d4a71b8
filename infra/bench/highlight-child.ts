// One cold measurement of `npm run bench:highlight` (highlight.ts), in a fresh process so that the
// first call really is the first: `node infra/bench/highlight-child.ts <library> <file> <calls>`.
// Prints one JSON line: load (import and set-up: engine, grammar, theme), first call (wall and
// CPU time), the median of the next calls, the heap still held after a GC (run with --expose-gc:
// the library, its grammars and the last result), and the process's RSS. Nothing but node: modules
// is imported before the clock starts.
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"

const [library, file, callsArg] = process.argv.slice(2)
const text = readFileSync(file!, "utf8")
const calls = Number(callsArg ?? 20)

const status = () => readFileSync("/proc/self/status", "utf8")
const kb = (field: string, s = status()) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(s)?.[1] ?? 0)

/** Per-line HTML from shiki's tokens, with a class per token colour (what Hearth would render). */
const shikiLines = (tokens: ReadonlyArray<ReadonlyArray<{ content: string; color?: string | undefined }>>) => {
  const escapeText = (s: string) =>
    s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" })[c]!)
  return tokens.map((line) =>
    line
      .map((t) => {
        const name = /var\(--hl-([\w-]+)\)/.exec(t.color ?? "")?.[1]
        return name === undefined ? escapeText(t.content) : `<span class="hl-${name}">${escapeText(t.content)}</span>`
      })
      .join("")
  )
}

const setUp = async (): Promise<(text: string) => unknown> => {
  switch (library) {
    case "highlight.js": {
      // Required, not imported: highlight.js's types pull in the DOM's, which clash with Node's.
      const require = createRequire(import.meta.url)
      const hljs = require("highlight.js/lib/core") as {
        registerLanguage(name: string, grammar: unknown): void
        highlight(code: string, options: { language: string; ignoreIllegals: boolean }): { value: string }
      }
      hljs.registerLanguage("typescript", require("highlight.js/lib/languages/typescript"))
      return (t) => hljs.highlight(t, { language: "typescript", ignoreIllegals: true }).value
    }
    case "shiki-js":
    case "shiki-oniguruma": {
      const { createHighlighterCore, createCssVariablesTheme } = await import("shiki/core")
      const engine =
        library === "shiki-js"
          ? (await import("shiki/engine/javascript")).createJavaScriptRegexEngine()
          : await (await import("shiki/engine/oniguruma")).createOnigurumaEngine(import("shiki/wasm"))
      const theme = createCssVariablesTheme({ name: "css-variables", variablePrefix: "--hl-", fontStyle: true })
      const shiki = await createHighlighterCore({
        themes: [theme],
        langs: [import("@shikijs/langs/typescript")],
        engine
      })
      return (t) => shikiLines(shiki.codeToTokensBase(t, { lang: "typescript", theme: "css-variables" }))
    }
    case "hearth": {
      const { makeHighlighter } = await import("../../src/web/code/Highlight.ts")
      const highlighter = makeHighlighter()
      return (t) => highlighter.highlight({ name: "sample.ts", text: t })
    }
    case "hearth-warmed": {
      // What a server that called warmUp() after it started has loaded before the first view.
      const { makeHighlighter } = await import("../../src/web/code/Highlight.ts")
      const highlighter = makeHighlighter()
      await highlighter.warmUp()
      return (t) => highlighter.highlight({ name: "sample.ts", text: t })
    }
    case "hearth-cached": {
      const { makeHighlighter } = await import("../../src/web/code/Highlight.ts")
      const highlighter = makeHighlighter()
      return (t) =>
        highlighter.highlight({ name: "sample.ts", text: t, sha: "0123456789abcdef0123456789abcdef01234567" })
    }
    default:
      throw new Error(`unknown library ${library}`)
  }
}

const gc = (globalThis as { gc?: () => void }).gc ?? (() => {})
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
gc()
const heapBefore = process.memoryUsage().heapUsed
const rssBefore = kb("VmRSS")
const c0 = cpuMs()
const t0 = performance.now()
const highlight = await setUp()
const t1 = performance.now()
const c1 = cpuMs()
let kept = highlight(text)
const t2 = performance.now()
const c2 = cpuMs()
const times: Array<number> = []
for (let i = 0; i < calls; i++) {
  const t = performance.now()
  kept = highlight(text)
  times.push(performance.now() - t)
}
times.sort((a, b) => a - b)
gc()
const heapAfter = process.memoryUsage().heapUsed
const s = status()
process.stdout.write(
  JSON.stringify({
    library,
    loadMs: t1 - t0,
    firstMs: t2 - t1,
    coldCpuMs: c2 - c0,
    firstCpuMs: c2 - c1,
    warmMs: times[times.length >> 1] ?? Number.NaN,
    heapKeptMb: (heapAfter - heapBefore) / 2 ** 20,
    rssBeforeMb: rssBefore / 1024,
    rssAfterMb: kb("VmRSS", s) / 1024,
    rssPeakMb: kb("VmHWM", s) / 1024,
    output: typeof kept === "string" ? kept.length : Array.isArray(kept) ? kept.length : 0
  }) + "\n"
)

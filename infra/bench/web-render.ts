// Web rendering benchmark (`npm run bench:web-render`; issue 17 "Choices"): the JSX runtimes that
// escape by default, side by side in one process and one run, rendering a repository-home-like
// page (the layout, a 2,000-row file table, a ~100 KB README given as trusted HTML):
// - preact + preact-render-to-string, through `preact/jsx-runtime`'s `jsx()` (what compiled JSX calls);
// - preact + `htm` (tagged templates that build the same preact nodes, no build step);
// - hono/jsx, through `hono/jsx/jsx-runtime`'s `jsx()` (what compiled JSX calls);
// - hono's `html` tagged template (`hono/html`; strings escaped as they are interpolated, no build step).
// Each round renders the page N times per candidate, the order rotating between rounds; p50 per
// render and renders/s are medians over the rounds, the ratio is each candidate's renders/s over
// the fastest's (median of the per-round ratios). Every candidate's output is checked first: the
// same rows, hostile text escaped, the README unescaped.

import { writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import os from "node:os"
import { html as honoHtml, raw as honoRaw } from "hono/html"
import { jsx as honoJsx } from "hono/jsx/jsx-runtime"
import { fmt, log, machineLine, median, pct, positive, quantile } from "./support.ts"

// preact's type declarations bring the DOM's into the whole project's type check (its jsx.d.ts
// references lib "dom", whose fetch and crypto types clash with Node's): loaded untyped here.
const require = createRequire(import.meta.url)
const { h } = require("preact") as { h: (...args: Array<any>) => any }
const { jsx: preactJsx } = require("preact/jsx-runtime") as { jsx: (type: any, props: any) => any }
const { render: preactRender } = require("preact-render-to-string") as { render: (node: any) => string }
const htm = require("htm") as { bind: (h: any) => (strings: TemplateStringsArray, ...values: Array<any>) => any }

const config = {
  rounds: Math.max(1, Math.round(positive("BENCH_WEB_ROUNDS", 5))),
  renders: Math.round(positive("BENCH_WEB_RENDERS", 40)),
  rows: Math.round(positive("BENCH_WEB_ROWS", 2000)),
  output: process.env.BENCH_OUTPUT
}

// ------------------------------------------------------------------ data (deterministic)

interface Entry {
  readonly name: string
  readonly dir: boolean
  readonly message: string
  readonly sha: string
  readonly when: string
}
const entries: ReadonlyArray<Entry> = Array.from({ length: config.rows }, (_, i) => ({
  name: i % 7 === 0 ? `dir-${i}` : `file-${i}${i === 3 ? "<script>alert(1)</script>" : ""}.ts`,
  dir: i % 7 === 0,
  message: i === 5 ? `fix "quotes" & <b>tags</b> in ${i}` : `Update module ${i} for the new release`,
  sha: (i * 2654435761).toString(16).padStart(40, "0").slice(0, 40),
  when: new Date(Date.UTC(2026, 0, 1 + (i % 300))).toISOString()
}))
const README = Array.from(
  { length: 900 },
  (_, i) =>
    `<h2 id="s${i}">Section ${i}</h2><p>The <strong>quick</strong> forge renders <a href="docs/${i}.md">docs ${i}</a> and <code>code()</code> safely.</p>`
).join("\n")
const page = {
  title: "acme/widgets: a <widget> forge",
  owner: "acme",
  repo: "widgets",
  description: "Widgets & gadgets, <em>escaped</em>",
  user: "alice"
}

// ------------------------------------------------------------------ candidates

type Render = () => string

// preact, as compiled JSX calls it (automatic runtime).
const preactPage: Render = () => {
  const j = preactJsx
  const row = (e: Entry) =>
    j("tr", {
      children: [
        j("td", {
          children: j("a", { href: `/${page.owner}/${page.repo}/src/branch/main/${e.name}`, children: e.name })
        }),
        j("td", { children: j("a", { href: `/${page.owner}/${page.repo}/commit/${e.sha}`, children: e.message }) }),
        j("td", { children: j("relative-time", { datetime: e.when, children: e.when }) })
      ]
    })
  const tree = j("html", {
    lang: "en",
    children: [
      j("head", {
        children: [
          j("meta", { charset: "utf-8" }),
          j("title", { children: page.title }),
          j("link", { rel: "stylesheet", href: "/assets/primer.css" })
        ]
      }),
      j("body", {
        children: [
          j("header", {
            class: "Header",
            children: [j("a", { href: "/", children: "Hearth" }), j("span", { children: page.user })]
          }),
          j("main", {
            children: [
              j("h1", { children: [page.owner, " / ", page.repo] }),
              j("p", { children: page.description }),
              j("table", { class: "files", children: j("tbody", { children: entries.map(row) }) }),
              j("article", { class: "markdown-body", dangerouslySetInnerHTML: { __html: README } })
            ]
          }),
          j("footer", { children: "Powered by Hearth" })
        ]
      })
    ]
  })
  return `<!DOCTYPE html>${preactRender(tree)}`
}

const preactHtm = htm.bind(h)
const preactHtmPage: Render = () => {
  const row = (e: Entry) =>
    preactHtm`<tr><td><a href=${`/${page.owner}/${page.repo}/src/branch/main/${e.name}`}>${e.name}</a></td><td><a href=${`/${page.owner}/${page.repo}/commit/${e.sha}`}>${e.message}</a></td><td><relative-time datetime=${e.when}>${e.when}</relative-time></td></tr>`
  const tree = preactHtm`<html lang="en"><head><meta charset="utf-8" /><title>${page.title}</title><link rel="stylesheet" href="/assets/primer.css" /></head><body><header class="Header"><a href="/">Hearth</a><span>${page.user}</span></header><main><h1>${page.owner} / ${page.repo}</h1><p>${page.description}</p><table class="files"><tbody>${entries.map(row)}</tbody></table><article class="markdown-body" dangerouslySetInnerHTML=${{ __html: README }}></article></main><footer>Powered by Hearth</footer></body></html>`
  return `<!DOCTYPE html>${preactRender(tree)}`
}

// hono/jsx, as compiled JSX calls it (automatic runtime).
const honoJsxPage: Render = () => {
  const j = honoJsx as (type: any, props: any) => any
  const row = (e: Entry) =>
    j("tr", {
      children: [
        j("td", {
          children: j("a", { href: `/${page.owner}/${page.repo}/src/branch/main/${e.name}`, children: e.name })
        }),
        j("td", { children: j("a", { href: `/${page.owner}/${page.repo}/commit/${e.sha}`, children: e.message }) }),
        j("td", { children: j("relative-time", { datetime: e.when, children: e.when }) })
      ]
    })
  const tree = j("html", {
    lang: "en",
    children: [
      j("head", {
        children: [
          j("meta", { charset: "utf-8" }),
          j("title", { children: page.title }),
          j("link", { rel: "stylesheet", href: "/assets/primer.css" })
        ]
      }),
      j("body", {
        children: [
          j("header", {
            class: "Header",
            children: [j("a", { href: "/", children: "Hearth" }), j("span", { children: page.user })]
          }),
          j("main", {
            children: [
              j("h1", { children: [page.owner, " / ", page.repo] }),
              j("p", { children: page.description }),
              j("table", { class: "files", children: j("tbody", { children: entries.map(row) }) }),
              j("article", { class: "markdown-body", dangerouslySetInnerHTML: { __html: README } })
            ]
          }),
          j("footer", { children: "Powered by Hearth" })
        ]
      })
    ]
  })
  return `<!DOCTYPE html>${String(tree.toString())}`
}

const honoHtmlPage: Render = () => {
  const row = (e: Entry) =>
    honoHtml`<tr><td><a href="/${page.owner}/${page.repo}/src/branch/main/${e.name}">${e.name}</a></td><td><a href="/${page.owner}/${page.repo}/commit/${e.sha}">${e.message}</a></td><td><relative-time datetime="${e.when}">${e.when}</relative-time></td></tr>`
  const out = honoHtml`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>${page.title}</title><link rel="stylesheet" href="/assets/primer.css"></head><body><header class="Header"><a href="/">Hearth</a><span>${page.user}</span></header><main><h1>${page.owner} / ${page.repo}</h1><p>${page.description}</p><table class="files"><tbody>${entries.map(row)}</tbody></table><article class="markdown-body">${honoRaw(README)}</article></main><footer>Powered by Hearth</footer></body></html>`
  return String(out)
}

const candidates: ReadonlyArray<{ name: string; render: Render }> = [
  { name: "preact-render-to-string (jsx())", render: preactPage },
  { name: "preact-render-to-string + htm", render: preactHtmPage },
  { name: "hono/jsx (jsx())", render: honoJsxPage },
  { name: "hono/html html``", render: honoHtmlPage }
]

// ------------------------------------------------------------------ checks

for (const { name, render } of candidates) {
  const out = render()
  const problems: Array<string> = []
  if (out.includes("<script>alert(1)</script>")) problems.push("a file name was not escaped")
  if (!out.includes("&lt;script")) problems.push("escaped file name missing")
  if (out.includes("<b>tags</b>")) problems.push("a commit message was not escaped")
  if (!out.includes("&lt;widget") || !out.includes("&lt;em")) problems.push("title/description not escaped")
  if (!out.includes('<h2 id="s899">Section 899</h2>')) problems.push("README missing or escaped")
  const rows = out.split("<tr>").length - 1
  if (rows !== config.rows) problems.push(`${rows} rows instead of ${config.rows}`)
  if (problems.length > 0) throw new Error(`${name}: ${problems.join("; ")}`)
}

// ------------------------------------------------------------------ timing

interface Round {
  p50: number
  p99: number
  perSecond: number
  bytes: number
}
const results = new Map<string, Array<Round>>(candidates.map((c) => [c.name, []]))

const time = (render: Render): Round => {
  const times = new Float64Array(config.renders)
  let bytes = 0
  for (let i = 0; i < config.renders; i++) {
    const start = performance.now()
    bytes = render().length
    times[i] = performance.now() - start
  }
  const total = times.reduce((a, b) => a + b, 0)
  times.sort()
  return { p50: quantile(times, 0.5), p99: quantile(times, 0.99), perSecond: (config.renders / total) * 1000, bytes }
}

const load0 = os.loadavg()
log(`warming up (${config.rows} rows, ${config.renders} renders per candidate and round, ${config.rounds} rounds)`)
for (const c of candidates) for (let i = 0; i < 10; i++) c.render()
for (let round = 0; round < config.rounds; round++) {
  const order = candidates.map((_, i) => candidates[(i + round) % candidates.length]!)
  for (const c of order) results.get(c.name)!.push(time(c.render))
  log(`round ${round + 1}/${config.rounds} done`)
}

const summary = candidates.map((c) => {
  const rounds = results.get(c.name)!
  return {
    name: c.name,
    bytes: rounds[0]!.bytes,
    p50: median(rounds.map((r) => r.p50)),
    p99: median(rounds.map((r) => r.p99)),
    perSecond: median(rounds.map((r) => r.perSecond))
  }
})
const fastest = summary.reduce((a, b) => (b.perSecond > a.perSecond ? b : a))
const ratio = (name: string) =>
  median(
    results
      .get(name)!
      .map((r, i) => r.perSecond / Math.max(...candidates.map((c) => results.get(c.name)![i]!.perSecond)))
  )

console.log(machineLine(load0))
console.log("")
console.log("| runtime | HTML bytes | p50 | p99 | renders/s | of the fastest |")
console.log("|---|---:|---:|---:|---:|---:|")
for (const s of summary) {
  console.log(
    `| ${s.name} | ${fmt(s.bytes)} | ${fmt(s.p50, 2)} ms | ${fmt(s.p99, 2)} ms | ${fmt(s.perSecond)} | ${pct(ratio(s.name))} |`
  )
}
console.log("")
console.log(`fastest: ${fastest.name}`)
if (config.output !== undefined) writeFileSync(config.output, JSON.stringify({ config, summary }, null, 2))

// Server-side syntax highlighting for file and diff views (issue 17): highlight.js, chosen over
// shiki by `npm run bench:highlight` (infra/bench/README.md, "Issue 17: syntax highlighting, shiki
// vs highlight.js"): on a 2,000-line TypeScript file it is 4–7× faster per call and 8–10× faster
// cold, and holds a third of the memory.
//
// The output is one safe HTML string per line (spans closed at the end of a line and re-opened on
// the next), so that a page puts each line in its own table row with its own anchor. Colours come
// from CSS classes (`hljs-*`) and HIGHLIGHT_CSS below, never from style attributes: the pages' CSP
// forbids inline styles. The language is linguist's for the file name (src/languages/Detect.ts);
// highlight.js's grammars are loaded one by one on first use (importing all 190 took 120–290 ms).
// Results are cached by blob sha and language in a byte-bounded LRU, so a second view of a blob
// costs a map lookup.
import { createHash } from "node:crypto"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { type LinguistLanguage, linguistLanguage } from "../../languages/Detect.ts"
import { lazyRequire } from "../../lib/LazyRequire.ts"
import { packageRequire as require } from "../../lib/PackageRoot.ts"

/** Forgejo highlights nothing above 1 MiB (`modules/highlight`, `sizeLimit`); the plain text is shown. */
export const MAX_HIGHLIGHT_BYTES = 1024 * 1024
/** Nor more lines than this: a page of 20,000 table rows is as far as a browser stays usable. */
export const MAX_HIGHLIGHT_LINES = 20_000
/** Default size of the cache of highlighted blobs (its HTML, counted as two bytes per character). */
export const DEFAULT_CACHE_BYTES = 16 * 1024 * 1024
/** git's `buffer_is_binary`: a NUL in the first 8,000 bytes. */
const BINARY_PROBE = 8000

/** Why a file came out as plain escaped lines rather than highlighted. */
export type PlainReason = "unknown-language" | "binary" | "too-large"

export interface HighlightedFile {
  /** Linguist's name of the file's language ("TypeScript"), or undefined when it has none. */
  readonly language: string | undefined
  /** One safe HTML string per line of the text, without the line break; no lines for an empty text. */
  readonly lines: ReadonlyArray<string>
  /** Set when the lines are plain escaped text, and why. */
  readonly plain?: PlainReason
}

export interface HighlightInput {
  /** The file's name or path: its language comes from linguist's file names and extensions. */
  readonly name: string
  /** The file's content; bytes are decoded as UTF-8 (invalid sequences become U+FFFD). */
  readonly text: string | Uint8Array
  /** The blob's object id: the result is cached under it. Without one nothing is cached. */
  readonly sha?: string | undefined
}

// ------------------------------------------------------------------ escaping and lines

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#x27;" }

/** Text as HTML, the same five escapes highlight.js uses, so that the two can be compared. */
export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!)

/** The lines of a text: split at LF (CRLF counts as one break); no empty last line after a final break. */
export const splitLines = (text: string): Array<string> => {
  if (text === "") return []
  const lines = text.replace(/\r\n/g, "\n").split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/** How many lines splitLines finds, without splitting. */
const lineCount = (text: string) => {
  if (text === "") return 0
  let count = text.endsWith("\n") ? 0 : 1
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++
  return count
}

/** Escaped plain lines: unknown languages, binary and oversized files. */
export const plainLines = (text: string): Array<string> => splitLines(text).map(escapeHtml)

const decoder = new TextDecoder("utf-8")
const isBinary = (text: string | Uint8Array) =>
  typeof text === "string" ? text.slice(0, BINARY_PROBE).includes("\0") : text.subarray(0, BINARY_PROBE).includes(0)

// highlight.js's HTML holds only its spans (`<span class="hljs-…">`), their ends, and escaped text.
// Reading it back token by token, anything else (which would be a bug in a grammar or in
// highlight.js) makes the whole file fall back to escaped plain lines: escaping stays total.
const TOKEN = /<span class="([\w -]+)">|<\/span>|\n|[^<>"'\n]+/y

/** highlight.js's HTML cut at its line breaks, open spans closed and re-opened; undefined if unexpected. */
export const htmlLines = (html: string): Array<string> | undefined => {
  const lines: Array<string> = []
  const open: Array<string> = []
  let line = ""
  TOKEN.lastIndex = 0
  while (TOKEN.lastIndex < html.length) {
    const match = TOKEN.exec(html)
    if (match === null) return undefined
    const token = match[0]
    if (match[1] !== undefined) {
      open.push(token)
      line += token
    } else if (token === "</span>") {
      if (open.pop() === undefined) return undefined
      line += token
    } else if (token === "\n") {
      lines.push(line + "</span>".repeat(open.length))
      line = open.join("")
    } else line += token
  }
  if (open.length !== 0) return undefined
  lines.push(line)
  return lines
}

// ------------------------------------------------------------------ languages

// The few calls made of highlight.js, typed here: its own types pull in the DOM's (`lib="dom"`),
// whose globals clash with Node's.
interface Hljs {
  registerLanguage(name: string, grammar: unknown): void
  highlight(code: string, options: { readonly language: string; readonly ignoreIllegals: boolean }): { value: string }
}

const loadCore = lazyRequire<{ newInstance(): Hljs }>("highlight.js/lib/core")

let modules: ReadonlySet<string> | undefined
/** The grammars highlight.js ships (`lib/languages/<name>.js`): the only names ever required. */
const grammarModules = (): ReadonlySet<string> => {
  if (modules !== undefined) return modules
  const dir = join(dirname(require.resolve("highlight.js/package.json")), "lib", "languages")
  modules = new Set(
    readdirSync(dir)
      .filter((f) => f.endsWith(".js") && !f.endsWith(".js.js"))
      .map((f) => f.slice(0, -3))
  )
  return modules
}

/** Linguist names whose highlight.js grammar has another name (the rest match by name or alias). */
const GRAMMAR_OF: Record<string, string | null> = {
  Shell: "bash",
  "Shell Session": "shell",
  HTML: "xml",
  XML: "xml",
  SVG: "xml",
  Vue: "xml",
  TSX: "typescript",
  JSX: "javascript",
  TOML: "ini",
  "Git Config": "ini",
  EditorConfig: "ini",
  "JSON with Comments": "json",
  JSON5: "json",
  Batchfile: "dos",
  "Emacs Lisp": "lisp",
  "Common Lisp": "lisp",
  "Objective-C++": "objectivec",
  Assembly: "x86asm",
  "Unix Assembly": "x86asm",
  PLpgSQL: "pgsql",
  PLSQL: "sql",
  TSQL: "sql",
  "HTML+ERB": "erb",
  Jinja: "django",
  TeX: "latex",
  "Protocol Buffer": "protobuf",
  WebAssembly: "wasm",
  "Visual Basic .NET": "vbnet",
  "Java Properties": "properties",
  ApacheConf: "apache",
  // linguist's plain text: nothing to highlight
  Text: null
}

/** Grammars another grammar embeds (highlight.js's `subLanguage`), registered with it. */
const EMBEDS: Record<string, ReadonlyArray<string>> = {
  xml: ["css", "javascript"],
  erb: ["ruby", "xml", "css", "javascript"],
  django: ["xml", "css", "javascript"],
  handlebars: ["xml", "css", "javascript"],
  twig: ["xml", "css", "javascript"],
  "php-template": ["php", "xml", "css", "javascript"],
  haml: ["ruby"],
  markdown: ["xml"]
}

/** A linguist name as highlight.js would spell it: `C++` → `cpp`, `C#` → `csharp`, `Objective-C` → `objectivec`. */
const normalise = (name: string) =>
  name
    .toLowerCase()
    .replace(/\+/g, "p")
    .replace(/#/g, "sharp")
    .replace(/[^a-z0-9]/g, "")

/** The highlight.js grammar for a linguist language, or undefined. */
export const grammarFor = (language: LinguistLanguage): string | undefined => {
  const known = grammarModules()
  const explicit = GRAMMAR_OF[language.name]
  if (explicit !== undefined) return explicit ?? undefined
  const candidates = [
    normalise(language.name),
    ...(language.aliases ?? []).map((a) => a.toLowerCase()),
    ...(language.group === undefined ? [] : [GRAMMAR_OF[language.group] ?? normalise(language.group)])
  ]
  return candidates.find((c) => known.has(c) && c !== "plaintext")
}

// ------------------------------------------------------------------ the cache

/** A least-recently-used map bounded by the bytes of its values (as the caller counts them). */
export class ByteLru<V> {
  private readonly entries = new Map<string, { readonly value: V; readonly bytes: number }>()
  private total = 0
  readonly maxBytes: number

  constructor(maxBytes: number) {
    this.maxBytes = maxBytes
  }

  get bytes() {
    return this.total
  }

  get size() {
    return this.entries.size
  }

  get(key: string): V | undefined {
    const entry = this.entries.get(key)
    if (entry === undefined) return undefined
    this.entries.delete(key)
    this.entries.set(key, entry)
    return entry.value
  }

  set(key: string, value: V, bytes: number) {
    const old = this.entries.get(key)
    if (old !== undefined) {
      this.entries.delete(key)
      this.total -= old.bytes
    }
    // One value larger than the whole cache is not kept (it would evict everything for itself).
    if (bytes > this.maxBytes) return
    this.entries.set(key, { value, bytes })
    this.total += bytes
    for (const [k, e] of this.entries) {
      if (this.total <= this.maxBytes) break
      this.entries.delete(k)
      this.total -= e.bytes
    }
  }
}

// ------------------------------------------------------------------ the highlighter

export interface HighlighterOptions {
  /** Bound of the cache (DEFAULT_CACHE_BYTES). */
  readonly cacheBytes?: number
  /** Texts larger than this many UTF-8 bytes are not highlighted (MAX_HIGHLIGHT_BYTES). */
  readonly maxBytes?: number
  /** Texts of more lines than this are not highlighted (MAX_HIGHLIGHT_LINES). */
  readonly maxLines?: number
}

export interface Highlighter {
  /** The file as lines of HTML: highlighted, or escaped plain text (and `plain` says why). */
  highlight(input: HighlightInput): HighlightedFile
  /**
   * The cached result for a blob under this name, if any, so that a view of a blob seen before
   * need not read it again.
   */
  cached(sha: string, name: string): HighlightedFile | undefined
  /**
   * Loads what a first file view would otherwise load (linguist's tables, highlight.js, the
   * grammars of the commonest files) and compiles those grammars, one language at a time with the
   * event loop free in between: call it once, in the background (the web interface's first page
   * does, src/web/Web.ts), not inside a request.
   */
  warmUp(): Promise<void>
  /** Whether a warmUp has completed. */
  readonly warm: boolean
  /** Entries and bytes (as counted) in the cache. */
  readonly cache: { readonly size: number; readonly bytes: number }
}

/** What warmUp highlights: a few lines in the commonest languages of repositories. */
const WARM_UP_NAMES = [
  "a.ts",
  "a.js",
  "a.json",
  "a.md",
  "a.py",
  "a.go",
  "a.rs",
  "a.c",
  "a.sh",
  "a.yml",
  "a.html",
  "a.css"
]
const WARM_UP_TEXT = [
  "// a comment",
  'import { x } from "y"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source as text, a template literal in it
  "export const f = async (a: number, b = 'c') => { return `${a}` + /re/g.test(b) }",
  "class A<T> extends B { #p = 1; static m() {} }",
  '/** doc @param x */ function g(x: string): void { if (x) console.log(x); else throw new Error("e") }',
  "type U = { readonly a?: Array<number>; b: Map<string, boolean> }",
  "# heading",
  "- item: [1, 2.5, true, null]",
  '<div class="x">text</div>',
  "def g(x): return x * 2  # comment",
  ""
].join("\n")
/**
 * Then highlight.js's own code, until V8 has optimized it: after the grammars alone, the first
 * 2,000-line file took 110–120 ms of CPU, against 45–55 ms once optimized; these 8 passes over 330
 * lines (~0.3 s of CPU, in steps) bring that first view to 65–85 ms (infra/bench/README.md).
 */
const JIT_PASSES = 8
const JIT_TEXT = Array.from({ length: 30 }, () => WARM_UP_TEXT).join("\n")

interface Entry {
  readonly result: HighlightedFile
  /** Length of the text it came from: a sanity check against a caller passing the wrong sha. */
  readonly length: number
}

const sizeOf = (result: HighlightedFile) => {
  let chars = 0
  for (const line of result.lines) chars += line.length + 16
  return chars * 2 + 256
}

export const makeHighlighter = (options: HighlighterOptions = {}): Highlighter => {
  const maxBytes = options.maxBytes ?? MAX_HIGHLIGHT_BYTES
  const maxLines = options.maxLines ?? MAX_HIGHLIGHT_LINES
  const cache = new ByteLru<Entry>(options.cacheBytes ?? DEFAULT_CACHE_BYTES)
  let hljs: Hljs | undefined
  const registered = new Set<string>()

  // Our own instance, so that nothing else in the process that uses highlight.js shares its state.
  const engine = (): Hljs => (hljs ??= loadCore().newInstance())

  const register = (grammar: string) => {
    if (registered.has(grammar) || !grammarModules().has(grammar)) return
    registered.add(grammar)
    for (const embedded of EMBEDS[grammar] ?? []) register(embedded)
    engine().registerLanguage(grammar, require(`highlight.js/lib/languages/${grammar}`))
  }

  const languageOf = (name: string) => {
    const language = linguistLanguage(name)
    return { language, grammar: language === undefined ? undefined : grammarFor(language) }
  }

  const keyOf = (sha: string, grammar: string | undefined) => `${sha}\0${grammar ?? ""}`

  const compute = (name: string, raw: string | Uint8Array): HighlightedFile => {
    const { language, grammar } = languageOf(name)
    const decoded = typeof raw === "string" ? raw : decoder.decode(raw)
    const plain = (reason: PlainReason): HighlightedFile => ({
      language: language?.name,
      lines: plainLines(decoded),
      plain: reason
    })
    if (isBinary(raw)) return plain("binary")
    const bytes = typeof raw === "string" ? Buffer.byteLength(raw) : raw.length
    if (bytes > maxBytes) return plain("too-large")
    const text = decoded.includes("\r\n") ? decoded.replace(/\r\n/g, "\n") : decoded
    const count = lineCount(text)
    if (count > maxLines) return plain("too-large")
    if (grammar === undefined) return plain("unknown-language")
    if (count === 0) return { language: language?.name, lines: [] }
    register(grammar)
    let html: string
    try {
      const body = text.endsWith("\n") ? text.slice(0, -1) : text
      html = engine().highlight(body, { language: grammar, ignoreIllegals: true }).value
    } catch {
      // highlight.js's safe mode already falls back on a grammar's error; this is the last resort.
      return plain("unknown-language")
    }
    const lines = htmlLines(html)
    if (lines === undefined || lines.length !== count) return plain("unknown-language")
    return { language: language?.name, lines }
  }

  let warm = false
  return {
    highlight: ({ name, text, sha }) => {
      if (sha === undefined) return compute(name, text)
      const key = keyOf(sha, languageOf(name).grammar)
      const hit = cache.get(key)
      if (hit !== undefined && hit.length === text.length) return hit.result
      const result = compute(name, text)
      cache.set(key, { result, length: text.length }, sizeOf(result))
      return result
    },
    cached: (sha, name) => cache.get(keyOf(sha, languageOf(name).grammar))?.result,
    warmUp: async () => {
      const step = () => new Promise((resolve) => setImmediate(resolve))
      for (const name of WARM_UP_NAMES) {
        compute(name, WARM_UP_TEXT)
        await step()
      }
      for (let pass = 0; pass < JIT_PASSES; pass++) {
        compute("warm-up.ts", JIT_TEXT)
        await step()
      }
      warm = true
    },
    get warm() {
      return warm
    },
    get cache() {
      return { size: cache.size, bytes: cache.bytes }
    }
  }
}

/** The process's highlighter (and its cache), shared by every page. */
export const highlighter: Highlighter = makeHighlighter()

// ------------------------------------------------------------------ the stylesheet

// GitHub's own syntax colours (Primer's `prettylights` tokens), light by default, dark when the
// browser prefers it (unless the page forces light with Primer's `data-color-mode="light"`) or when
// the page asks for dark (`data-color-mode="dark"`).
const LIGHT = {
  comment: "#59636e",
  constant: "#0550ae",
  entity: "#6639ba",
  tag: "#116329",
  keyword: "#cf222e",
  string: "#0a3069",
  variable: "#953800",
  regexp: "#116329",
  subst: "#1f2328",
  heading: "#0550ae",
  list: "#3b2300",
  "inserted-fg": "#116329",
  "inserted-bg": "#dafbe1",
  "deleted-fg": "#82071e",
  "deleted-bg": "#ffebe9"
}
const DARK: typeof LIGHT = {
  comment: "#9198a1",
  constant: "#79c0ff",
  entity: "#d2a8ff",
  tag: "#7ee787",
  keyword: "#ff7b72",
  string: "#a5d6ff",
  variable: "#ffa657",
  regexp: "#7ee787",
  subst: "#f0f6fc",
  heading: "#1f6feb",
  list: "#f2cc60",
  "inserted-fg": "#aff5b4",
  "inserted-bg": "#033a16",
  "deleted-fg": "#ffdcd7",
  "deleted-bg": "#67060c"
}
const vars = (palette: typeof LIGHT) =>
  Object.entries(palette)
    .map(([k, v]) => `--hl-${k}:${v};`)
    .join("")
const color = (selectors: ReadonlyArray<string>, token: keyof typeof LIGHT, extra = "") =>
  `${selectors.map((s) => `.hljs-${s}`).join(",")}{color:var(--hl-${token});${extra}}`

/** The stylesheet for the `hljs-*` classes of highlighted lines (serve it, or inline it with HIGHLIGHT_CSS_SHA256). */
export const HIGHLIGHT_CSS = [
  `:root{${vars(LIGHT)}}`,
  `@media (prefers-color-scheme: dark){:root:not([data-color-mode="light"]){${vars(DARK)}}}`,
  `[data-color-mode="dark"]{${vars(DARK)}}`,
  color(
    ["doctag", "keyword", "meta .hljs-keyword", "template-tag", "template-variable", "type", "variable.language_"],
    "keyword"
  ),
  color(["title", "title.class_", "title.class_.inherited__", "title.function_"], "entity"),
  color(
    [
      "attr",
      "attribute",
      "literal",
      "meta",
      "number",
      "operator",
      "variable",
      "selector-attr",
      "selector-class",
      "selector-id"
    ],
    "constant"
  ),
  color(["string", "meta .hljs-string"], "string"),
  color(["regexp"], "regexp"),
  color(["built_in", "symbol"], "variable"),
  color(["comment", "code", "formula"], "comment"),
  color(["name", "quote", "selector-tag", "selector-pseudo"], "tag"),
  color(["subst"], "subst"),
  color(["section"], "heading", "font-weight:bold;"),
  color(["bullet"], "list"),
  ".hljs-emphasis{font-style:italic}",
  ".hljs-strong{font-weight:bold}",
  ".hljs-addition{color:var(--hl-inserted-fg);background-color:var(--hl-inserted-bg)}",
  ".hljs-deletion{color:var(--hl-deleted-fg);background-color:var(--hl-deleted-bg)}"
].join("\n")

/** `sha256-…` of HIGHLIGHT_CSS, for a CSP `style-src` that allows it inline in a `<style>` element. */
export const HIGHLIGHT_CSS_SHA256 = `sha256-${createHash("sha256").update(HIGHLIGHT_CSS).digest("base64")}`

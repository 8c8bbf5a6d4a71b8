// Issue 17: the syntax highlighter of file and diff views (src/web/code/Highlight.ts): lines of
// safe HTML with spans closed and re-opened across line breaks, the language from the file name,
// escaped plain lines for unknown languages, binary and oversized files, a cache by blob sha
// bounded by bytes, and escaping that holds for the whole XSS corpus in every grammar.
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { linguistLanguage } from "../src/languages/Detect.ts"
import {
  escapeHtml,
  grammarFor,
  HIGHLIGHT_CSS,
  HIGHLIGHT_CSS_SHA256,
  highlighter,
  htmlLines,
  MAX_HIGHLIGHT_BYTES,
  makeHighlighter,
  plainLines,
  splitLines
} from "../src/web/code/Highlight.ts"
import { corpus as XSS_CORPUS } from "./support/xss.ts"

const TS = [
  "/**",
  " * A comment over",
  " * three lines",
  " */",
  'import { x } from "y"',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: TypeScript source as text, a template literal in it
  "export const greet = (name: string): string => `hello ${name}`",
  ""
].join("\n")

/** Every tag is one of highlight.js's spans, and text between tags holds no markup character. */
const assertSafe = (line: string) => {
  const parts = line.split(/(<[^>]*>)/)
  for (let k = 0; k < parts.length; k++) {
    const part = parts[k]!
    if (k % 2 === 1) expect(part).toMatch(/^(<span class="[\w -]+">|<\/span>)$/)
    else expect(part).not.toMatch(/[<>"']/)
  }
  const opened = (line.match(/<span /g) ?? []).length
  const closed = (line.match(/<\/span>/g) ?? []).length
  expect(opened).toBe(closed)
}

/** A line's text: tags dropped, the five escapes undone. */
const textOf = (html: string) =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&#x27;/g, "'")
    .replace(/&amp;/g, "&")

describe("highlighting by line", () => {
  it("highlights TypeScript by its extension, one balanced line of HTML per line of text", () => {
    const result = makeHighlighter().highlight({ name: "src/greet.ts", text: TS })
    expect(result.language).toBe("TypeScript")
    expect(result.plain).toBeUndefined()
    expect(result.lines).toHaveLength(6)
    for (const line of result.lines) assertSafe(line)
    expect(result.lines.map(textOf)).toEqual(TS.split("\n").slice(0, 6))
    expect(result.lines[4]).toContain('<span class="hljs-keyword">import</span>')
    // The comment spans four lines: closed at each line's end and re-opened on the next.
    for (const k of [0, 1, 2, 3]) expect(result.lines[k]).toMatch(/^<span class="hljs-comment">.*<\/span>$/)
  })

  it("a template string or comment re-opens nested spans in order", () => {
    const lines = htmlLines('<span class="a"><span class="b">x\ny</span>z\n</span>w')
    expect(lines).toEqual([
      '<span class="a"><span class="b">x</span></span>',
      '<span class="a"><span class="b">y</span>z</span>',
      '<span class="a"></span>w'
    ])
  })

  it("refuses HTML that is not highlight.js's spans and escaped text (so the file falls back to plain)", () => {
    expect(htmlLines("<img src=x onerror=alert(1)>")).toBeUndefined()
    expect(htmlLines('<span class="a" onclick="x">y</span>')).toBeUndefined()
    expect(htmlLines("a</span>")).toBeUndefined()
    expect(htmlLines('<span class="a">open')).toBeUndefined()
    expect(htmlLines('a"b')).toBeUndefined()
    expect(htmlLines("a>b")).toBeUndefined()
    expect(htmlLines("a &amp; b")).toEqual(["a &amp; b"])
  })

  it("lines: LF or CRLF, a final line break or none, an empty text has no lines", () => {
    const h = makeHighlighter()
    const lf = h.highlight({ name: "a.ts", text: "let a = 1\nlet b = 2\n" }).lines
    expect(h.highlight({ name: "a.ts", text: "let a = 1\r\nlet b = 2\r\n" }).lines).toEqual(lf)
    expect(h.highlight({ name: "a.ts", text: "let a = 1\nlet b = 2" }).lines).toEqual(lf)
    expect(lf).toHaveLength(2)
    expect(h.highlight({ name: "a.ts", text: "" }).lines).toEqual([])
    expect(h.highlight({ name: "a.ts", text: "\n\n" }).lines).toEqual(["", ""])
    expect(splitLines("a\r\nb\rc\n")).toEqual(["a", "b\rc"])
    expect(plainLines("<a>\n&")).toEqual(["&lt;a&gt;", "&amp;"])
  })

  it("picks the language by file name, then by the longest extension linguist knows", () => {
    const h = makeHighlighter()
    const cases: Array<[string, string]> = [
      ["Dockerfile", "Dockerfile"],
      ["Makefile", "Makefile"],
      ["web/App.tsx", "TSX"],
      ["types.d.ts", "TypeScript"],
      ["run.sh", "Shell"],
      ["lib.h", "C"],
      ["main.cpp", "C++"],
      ["Program.cs", "C#"],
      ["main.go", "Go"],
      ["README.md", "Markdown"],
      ["index.html", "HTML"]
    ]
    for (const [name, language] of cases) {
      const result = h.highlight({ name, text: "a\n" })
      expect([name, result.language, result.plain]).toEqual([name, language, undefined])
    }
  })

  it("maps linguist's names to highlight.js's grammars: C++ and C# are not C, Shell is bash", () => {
    const grammar = (path: string) => grammarFor(linguistLanguage(path)!)
    expect(grammar("a.cpp")).toBe("cpp")
    expect(grammar("a.cs")).toBe("csharp")
    expect(grammar("a.fs")).toBe("fsharp")
    expect(grammar("a.sh")).toBe("bash")
    expect(grammar("a.fish")).toBe("bash")
    expect(grammar("a.m")).toBe("objectivec")
    expect(grammar("a.txt")).toBeUndefined()
  })

  it("C#: keywords of C# (not of C) are highlighted", () => {
    const [line] = makeHighlighter().highlight({ name: "P.cs", text: "namespace Demo { }\n" }).lines
    expect(line).toContain('<span class="hljs-keyword">namespace</span>')
  })
})

describe("plain lines", () => {
  it("a language linguist does not know, or plain text: escaped lines", () => {
    const h = makeHighlighter()
    const unknown = h.highlight({ name: "data.zzqq", text: "<b>x</b>\n" })
    expect(unknown).toEqual({ language: undefined, lines: ["&lt;b&gt;x&lt;/b&gt;"], plain: "unknown-language" })
    const text = h.highlight({ name: "notes.txt", text: "a & b\n" })
    expect(text).toEqual({ language: "Text", lines: ["a &amp; b"], plain: "unknown-language" })
  })

  it("binary content (a NUL in the first 8,000 bytes): escaped plain lines", () => {
    const bytes = new Uint8Array([0x3c, 0x73, 0x3e, 0x00, 0x0a, 0x41])
    const result = makeHighlighter().highlight({ name: "a.ts", text: bytes })
    expect(result.plain).toBe("binary")
    expect(result.lines).toEqual(["&lt;s&gt;\u0000", "A"])
    expect(makeHighlighter().highlight({ name: "a.ts", text: "x\u0000y" }).plain).toBe("binary")
  })

  it("invalid UTF-8 is decoded with replacement characters, then highlighted", () => {
    const result = makeHighlighter().highlight({ name: "a.ts", text: new Uint8Array([0x61, 0xff, 0x0a]) })
    expect(result.plain).toBeUndefined()
    expect(result.lines.map(textOf)).toEqual(["a\uFFFD"])
  })

  it("over 1 MiB, or over the line cap: escaped plain lines", () => {
    const big = makeHighlighter().highlight({ name: "a.ts", text: `const a = "${"x".repeat(MAX_HIGHLIGHT_BYTES)}"` })
    expect(big.plain).toBe("too-large")
    expect(big.lines).toHaveLength(1)
    expect(big.lines[0]).toMatch(/^const a = &quot;x+&quot;$/)
    const h = makeHighlighter({ maxLines: 3, maxBytes: 100 })
    expect(h.highlight({ name: "a.ts", text: "a\nb\nc\n" }).plain).toBeUndefined()
    expect(h.highlight({ name: "a.ts", text: "a\nb\nc\nd\n" }).plain).toBe("too-large")
    expect(h.highlight({ name: "a.ts", text: "x".repeat(101) }).plain).toBe("too-large")
    // Bytes, not characters: 51 two-byte characters are 102 bytes.
    expect(h.highlight({ name: "a.ts", text: "é".repeat(51) }).plain).toBe("too-large")
  })
})

describe("the cache", () => {
  const SHA = "a".repeat(40)

  it("a second view of a blob is the cached result; another grammar for the same blob is not", () => {
    const h = makeHighlighter()
    const first = h.highlight({ name: "a.ts", text: TS, sha: SHA })
    expect(h.highlight({ name: "b/c.ts", text: TS, sha: SHA })).toBe(first)
    expect(h.cached(SHA, "a.ts")).toBe(first)
    expect(h.cached(SHA, "a.py")).toBeUndefined()
    const python = h.highlight({ name: "a.py", text: TS, sha: SHA })
    expect(python).not.toBe(first)
    expect(python.language).toBe("Python")
    expect(h.cache.size).toBe(2)
    // Without a sha nothing is cached.
    h.highlight({ name: "x.ts", text: "let y = 2\n" })
    expect(h.cache.size).toBe(2)
  })

  it("a text of another length under the same sha is highlighted again, not served from the cache", () => {
    const h = makeHighlighter()
    const first = h.highlight({ name: "a.ts", text: "let a = 1\n", sha: SHA })
    const other = h.highlight({ name: "a.ts", text: "let abc = 1\n", sha: SHA })
    expect(other).not.toBe(first)
    expect(other.lines.map(textOf)).toEqual(["let abc = 1"])
  })

  it("is bounded by bytes, least recently used out first", () => {
    const h = makeHighlighter({ cacheBytes: 30_000 })
    const text = (n: number) => `export const value${n} = ${n}\n`.repeat(20)
    const sha = (n: number) => n.toString(16).padStart(40, "0")
    h.highlight({ name: "a.ts", text: text(0), sha: sha(0) })
    for (let n = 1; n < 30; n++) {
      // Keep blob 0 in use: it stays while the others come and go.
      expect(h.cached(sha(0), "a.ts")).toBeDefined()
      h.highlight({ name: "a.ts", text: text(n), sha: sha(n) })
      expect(h.cache.bytes).toBeLessThanOrEqual(30_000)
    }
    expect(h.cached(sha(0), "a.ts")).toBeDefined()
    expect(h.cached(sha(29), "a.ts")).toBeDefined()
    expect(h.cached(sha(1), "a.ts")).toBeUndefined()
    expect(h.cache.size).toBeLessThan(30)
    // A result larger than the whole cache is not kept.
    h.highlight({ name: "a.ts", text: text(99).repeat(20), sha: sha(99) })
    expect(h.cached(sha(99), "a.ts")).toBeUndefined()
    expect(h.cached(sha(0), "a.ts")).toBeDefined()
  })

  it("the process-wide highlighter warms up without error and still highlights", async () => {
    await highlighter.warmUp()
    expect(highlighter.highlight({ name: "w.ts", text: "let w = 1\n" }).plain).toBeUndefined()
  })
})

describe("escaping with the XSS corpus as file contents", () => {
  // Grammars that treat markup specially (HTML, SVG, Markdown, PHP templates), code grammars, and
  // the plain paths (unknown language, binary).
  const NAMES = ["x.html", "x.svg", "x.md", "x.php", "x.vue", "x.ts", "x.js", "x.css", "x.py", "x.zzqq"]

  it(`every payload (${XSS_CORPUS.length}), alone and all in one file, in ${NAMES.length} languages`, () => {
    const h = makeHighlighter()
    const texts = [...XSS_CORPUS, XSS_CORPUS.join("\n"), `${XSS_CORPUS.join("\n")}\u0000`]
    for (const name of NAMES) {
      for (const text of texts) {
        const result = h.highlight({ name, text })
        for (const line of result.lines) {
          assertSafe(line)
          expect(line.toLowerCase()).not.toContain("<script")
          expect(line.toLowerCase()).not.toMatch(/<[^>]*onerror=/)
        }
        // Highlighted indeed (not a quiet fallback), but for the unknown language and the NUL.
        const expected = text.includes("\u0000") ? "binary" : name === "x.zzqq" ? "unknown-language" : undefined
        expect([name, text, result.plain]).toEqual([name, text, expected])
        // Nothing lost either: the lines read back as the text.
        expect(result.lines.map(textOf)).toEqual(splitLines(text))
      }
    }
  })

  it("escapeHtml escapes the five characters highlight.js escapes", () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      "&lt;a href=&quot;x&quot; title=&#x27;y&#x27;&gt;&amp;&lt;/a&gt;"
    )
  })
})

describe("the stylesheet", () => {
  it("classes, light and dark (prefers-color-scheme and Primer's data-color-mode), no inline style needed", () => {
    expect(HIGHLIGHT_CSS).toContain("@media (prefers-color-scheme: dark)")
    expect(HIGHLIGHT_CSS).toContain('[data-color-mode="dark"]')
    expect(HIGHLIGHT_CSS).toContain('[data-color-mode="light"]')
    expect(HIGHLIGHT_CSS).not.toMatch(/[<>]/)
    expect(HIGHLIGHT_CSS_SHA256).toBe(`sha256-${createHash("sha256").update(HIGHLIGHT_CSS).digest("base64")}`)
  })

  it("styles the classes highlight.js gives TypeScript (but its uncoloured containers)", () => {
    const code = `${TS}class A extends B { m(p: number) { return this.p + 1 } }\n`
    const lines = makeHighlighter().highlight({ name: "a.ts", text: code }).lines.join("\n")
    const scopes = new Set([...lines.matchAll(/class="([\w -]+)"/g)].map((m) => m[1]!))
    const CONTAINERS = new Set(["hljs-function", "hljs-params", "hljs-property"])
    expect(scopes.size).toBeGreaterThan(8)
    for (const scope of scopes) {
      // `hljs-title class_` is styled by `.hljs-title.class_`.
      if (!CONTAINERS.has(scope)) expect(HIGHLIGHT_CSS).toContain(`.${scope.split(" ").join(".")}`)
    }
  })
})

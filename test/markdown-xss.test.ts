// Issue 6 item 4: a corpus of hostile inputs (raw HTML, markdown link and image forms,
// entity-encoded and mixed-case variants, SVG/MathML, forge syntax) rendered in every mode over
// the API; no output may hold an executable construct. The check is an allow-list of its own,
// independent of the sanitizer's configuration: only known tags and attributes, and every URL
// attribute, once entities are decoded, is http(s), mailto, relative, or a raster data: image.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { corpus } from "./support/xss.ts"

// What the output may contain (the alert icons are the only SVG, and carry no URLs).
const TAGS = new Set([
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "p",
  "br",
  "hr",
  "blockquote",
  "pre",
  "code",
  "kbd",
  "samp",
  "var",
  "em",
  "strong",
  "b",
  "i",
  "u",
  "s",
  "del",
  "ins",
  "strike",
  "sub",
  "sup",
  "small",
  "mark",
  "abbr",
  "q",
  "cite",
  "ul",
  "ol",
  "li",
  "dl",
  "dt",
  "dd",
  "table",
  "thead",
  "tbody",
  "tfoot",
  "tr",
  "th",
  "td",
  "caption",
  "a",
  "img",
  "input",
  "details",
  "summary",
  "span",
  "div",
  "section",
  "picture",
  "source",
  "ruby",
  "rt",
  "rp",
  "svg",
  "path"
])
const ATTRIBUTES = new Set([
  "href",
  "src",
  "srcset",
  "alt",
  "title",
  "id",
  "class",
  "rel",
  "type",
  "checked",
  "disabled",
  "width",
  "height",
  "align",
  "start",
  "value",
  "colspan",
  "rowspan",
  "aria-label",
  "aria-hidden",
  "open",
  "media",
  "d"
])
const URL_ATTRIBUTES = new Set(["href", "src", "srcset"])

const decode = (value: string) =>
  value
    .replace(/&#x([0-9a-f]+);?/gi, (_m, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);?/g, (_m, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&colon;/gi, ":")
    .replace(/&tab;/gi, "\t")
    .replace(/&newline;/gi, "\n")
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** Why `html` could run script, or [] when it cannot. */
const problems = (html: string): Array<string> => {
  const found: Array<string> = []
  for (const m of html.matchAll(/<\/?([a-zA-Z][^\s/>]*)([^>]*)>/g)) {
    const tag = m[1]!.toLowerCase()
    if (!TAGS.has(tag)) found.push(`tag <${tag}>`)
    for (const a of m[2]!.matchAll(/([^\s=/]+)(?:="([^"]*)")?/g)) {
      const name = a[1]!.toLowerCase()
      if (!ATTRIBUTES.has(name)) found.push(`attribute ${name} on <${tag}>`)
      if (tag === "input" && name === "type" && a[2] !== "checkbox") found.push(`input of type ${a[2]}`)
      if (!URL_ATTRIBUTES.has(name) || a[2] === undefined) continue
      const urls = name === "srcset" ? a[2].split(",").map((c) => c.trim().split(/\s+/)[0]!) : [a[2]]
      for (const raw of urls) {
        const url = decode(raw)
          .replace(/[\u0000-\u0020\u007f-\u009f]/g, "")
          .toLowerCase()
        const scheme = /^([a-z][a-z0-9+.-]*):/.exec(url)?.[1]
        if (scheme === undefined || scheme === "http" || scheme === "https" || scheme === "mailto") continue
        if (
          scheme === "data" &&
          tag === "img" &&
          name === "src" &&
          /^data:image\/(?:png|gif|jpe?g|webp|avif);/.test(url)
        )
          continue
        found.push(`${name}="${raw}" on <${tag}>`)
      }
    }
  }
  // Anything that looks like a tag but was not matched above (e.g. broken up by quotes).
  if (/<(?:script|style|iframe|object|embed|form|meta|link|base|math|textarea|template)\b/i.test(html))
    found.push("raw tag")
  return found
}

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "writer" })
})
afterAll(() => hearth?.close())

const render = async (text: string, mode: string, wiki = false) => {
  const res = await request(hearth, "POST", "/markdown", basic("writer"), {
    Text: text,
    Mode: mode,
    Context: "/writer/repo",
    Wiki: wiki
  })
  expect(res.status).toBe(200)
  return res.text()
}

describe("XSS corpus", () => {
  it(`has at least 60 payloads (${corpus.length})`, () => {
    expect(corpus.length).toBeGreaterThanOrEqual(60)
    expect(new Set(corpus).size).toBe(corpus.length)
  })

  it("the checker itself catches executable constructs", () => {
    expect(problems(`<img src="x" onerror="alert(1)">`)).not.toEqual([])
    expect(problems(`<a href="jav&#x09;ascript:alert(1)">x</a>`)).not.toEqual([])
    expect(problems(`<a href="data:text/html,x">x</a>`)).not.toEqual([])
    expect(problems(`<p style="x">x</p>`)).not.toEqual([])
    expect(problems(`<svg><script>x</script></svg>`)).not.toEqual([])
    expect(problems(`<input type="text">`)).not.toEqual([])
    expect(
      problems(
        `<p><a href="https://x.example/" rel="nofollow noopener">x</a><img src="data:image/png;base64,AA==" alt="" /></p>`
      )
    ).toEqual([])
  })

  for (const [mode, wiki] of [
    ["markdown", false],
    ["gfm", false],
    ["comment", false],
    ["gfm", true]
  ] as const) {
    it(`no payload yields an executable construct (${mode}${wiki ? ", wiki" : ""})`, async () => {
      const failures: Array<string> = []
      for (const payload of corpus) {
        const html = await render(payload, mode, wiki)
        const found = problems(html)
        if (found.length > 0) failures.push(`${JSON.stringify(payload)} → ${found.join("; ")}\n  ${html}`)
      }
      expect(failures).toEqual([])
    })
  }

  it("raw HTML around markdown keeps its structure, with the markdown rendered inside", async () => {
    const html = await render(
      '<details><summary>More</summary>\n\n**bold** and [a](https://example.com)\n\n</details>\n\n<p align="center">x</p>',
      "gfm"
    )
    expect(html).toBe(
      `<details><summary>More</summary><p><strong>bold</strong> and <a href="https://example.com" rel="nofollow noopener">a</a></p>\n` +
        `</details><p align="center">x</p>`
    )
  })

  it('links to other hosts get rel="nofollow noopener" and no target', async () => {
    const html = await render(
      `<a href="https://evil.example/" target="_blank">tab</a> [y](https://evil.example/y)`,
      "gfm"
    )
    expect(html).toBe(
      `<p><a href="https://evil.example/" rel="nofollow noopener">tab</a> <a href="https://evil.example/y" rel="nofollow noopener">y</a></p>\n`
    )
  })

  it("a raster data: image survives; data: anywhere else does not", async () => {
    const html = await render(
      `![ok](data:image/png;base64,iVBORw0KGgo=) ![svg](data:image/svg+xml;base64,PHN2Zz4=) [l](data:image/png;base64,AA==)`,
      "gfm"
    )
    expect(html).toContain(`<img src="data:image/png;base64,iVBORw0KGgo=" alt="ok" />`)
    expect(html).toContain(`<img alt="svg" />`)
    expect(html).toMatch(/<a(?: rel="[^"]*")?>l<\/a>/)
  })
})

// Issue 6 item 4: a corpus of hostile inputs (raw HTML, markdown link and image forms,
// entity-encoded and mixed-case variants, SVG/MathML, forge syntax) rendered in every mode over
// the API; no output may hold an executable construct. The check is an allow-list of its own,
// independent of the sanitizer's configuration: only known tags and attributes, and every URL
// attribute, once entities are decoded, is http(s), mailto, relative, or a raster data: image.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

const JS = "alert(1)"
const corpus: ReadonlyArray<string> = [
  // raw HTML
  `<script>${JS}</script>`,
  `<SCRIPT SRC=http://evil.example/x.js></SCRIPT>`,
  `<img src=x onerror=${JS}>`,
  `<IMG SRC="javascript:${JS};">`,
  `<img src=JaVaScRiPt:${JS}>`,
  `<img src="jav&#x09;ascript:${JS}">`,
  `<img src="&#106;&#97;&#118;&#97;&#115;&#99;&#114;&#105;&#112;&#116;&#58;${JS}">`,
  `<img src="&#x6A&#x61&#x76&#x61&#x73&#x63&#x72&#x69&#x70&#x74&#x3A;${JS}">`,
  `<IMG SRC=javascript:alert(String.fromCharCode(88,83,83))>`,
  "<img src=`x` onerror=" + JS + ">",
  `<img src=x:alert(alt) onerror=eval(src) alt=0>`,
  `<img srcset="javascript:${JS} 1x">`,
  `<picture><source srcset="javascript:${JS}"><img src=x></picture>`,
  `<a href="javascript:${JS}">x</a>`,
  `<a href="JAVASCRIPT:${JS}">x</a>`,
  `<a href=" javascript:${JS}">x</a>`,
  `<a href="java\nscript:${JS}">x</a>`,
  `<a href="jav&#x0A;ascript:${JS}">x</a>`,
  `<a href="&#14;javascript:${JS}">x</a>`,
  `<a href="javascript&colon;${JS}">x</a>`,
  `<a href="&#0000106&#0000097&#0000118&#0000097&#0000115&#0000099&#0000114&#0000105&#0000112&#0000116&#0000058${JS}">x</a>`,
  `<a href="vbscript:msgbox(1)">x</a>`,
  `<a href="VbScRiPt:msgbox(1)">x</a>`,
  `<a href="data:text/html,<script>${JS}</script>">x</a>`,
  `<a href="data:image/png;base64,iVBORw0KGgo=">x</a>`,
  `<a href="#" onclick="${JS}">x</a>`,
  `<a href="x" onmouseover=${JS}>x</a>`,
  `<a href="https://evil.example/" target="_blank">tab</a>`,
  `<div style="background:url(javascript:${JS})">x</div>`,
  `<p style="x:expression(${JS})">x</p>`,
  `<style>body{background:url("javascript:${JS}")}</style>`,
  `<link rel=stylesheet href="http://evil.example/x.css">`,
  `<meta http-equiv="refresh" content="0;url=javascript:${JS}">`,
  `<base href="javascript:${JS}//">`,
  `<form action="javascript:${JS}"><button>x</button></form>`,
  `<button formaction="javascript:${JS}">x</button>`,
  `<input onfocus=${JS} autofocus>`,
  `<input type="checkbox" onclick="${JS}" checked>`,
  `<details open ontoggle=${JS}><summary>s</summary></details>`,
  `<body onload=${JS}>`,
  `<video><source onerror="${JS}"></video>`,
  `<audio src=x onerror=${JS}>`,
  `<marquee onstart=${JS}>x</marquee>`,
  `<iframe src="javascript:${JS}"></iframe>`,
  `<iframe srcdoc="<script>${JS}</script>"></iframe>`,
  `<object data="javascript:${JS}"></object>`,
  `<embed src="data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==">`,
  `<table background="javascript:${JS}"><tr><td>x</td></tr></table>`,
  `<scr<script>ipt>${JS}</scr</script>ipt>`,
  `<<script>${JS}//<</script>`,
  `<!--<img src="--><img src=x onerror=${JS}//">`,
  `<noscript><p title="</noscript><img src=x onerror=${JS}>">`,
  `<template><script>${JS}</script></template>`,
  `<xmp><img src=x onerror=${JS}></xmp>`,
  `<textarea><img src=x onerror=${JS}></textarea>`,
  `<div onmouseover="${JS}" <b>x</b>`,
  // SVG and MathML
  `<svg onload=${JS}>`,
  `<svg><script>${JS}</script></svg>`,
  `<svg><a xlink:href="javascript:${JS}"><text x="20" y="20">X</text></a></svg>`,
  `<svg><animate attributeName="href" values="javascript:${JS}"/></svg>`,
  `<svg><foreignObject><iframe srcdoc="<script>${JS}</script>"></iframe></foreignObject></svg>`,
  `<svg><use href="data:image/svg+xml;base64,PHN2ZyBpZD0neCcgeG1sbnM9J2h0dHA6Ly93d3cudzMub3JnLzIwMDAvc3ZnJz48L3N2Zz4=#x"/></svg>`,
  `<math><mtext><table><mglyph><style><img src=x onerror=${JS}>`,
  `<math href="javascript:${JS}">X</math>`,
  `<math><maction actiontype="statusline" xlink:href="javascript:${JS}">x</maction></math>`,
  // markdown links and images
  `[x](javascript:${JS})`,
  `[x](JaVaScRiPt:${JS})`,
  `[x](javascript&#58;${JS})`,
  `[x](javascript&colon;${JS})`,
  `[x](&#x6A;avascript:${JS})`,
  `[x](<javascript:${JS}>)`,
  `[x](vbscript:msgbox(1))`,
  `[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `[x][ref]\n\n[ref]: javascript:${JS}`,
  `<javascript:${JS}>`,
  `![x](javascript:${JS})`,
  `![x](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9YWxlcnQoMSk+)`,
  `![x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)`,
  `![x"onerror="${JS}](x.png)`,
  `[x](x.png "title\\" onmouseover=\\"${JS}")`,
  `![x](x.png "t' onerror='${JS}")`,
  // forge syntax carrying payloads
  `[[x|javascript:${JS}]]`,
  `[[x|javascript:${JS}.png]]`,
  `[[<img src=x onerror=${JS}>]]`,
  `@"><script>${JS}</script>`,
  `#1"><img src=x onerror=${JS}>`,
  `o/r#1"onmouseover="${JS}`,
  `:"><img src=x onerror=${JS}>:`,
  `> [!NOTE]\n> <img src=x onerror=${JS}>`,
  `> **Warning**\n> <a href="javascript:${JS}">x</a>`,
  `See[^1]\n\n[^1]: <script>${JS}</script><a href="javascript:${JS}">x</a>`,
  `# <img src=x onerror=${JS}>`,
  `| <script>${JS}</script> | x |\n|-|-|\n| <img src=x onerror=${JS}> | y |`,
  `- [ ] <a href="javascript:${JS}">x</a>`,
  // raw HTML around markdown: only the raw parts are sanitized, so these try to carry Hearth's own
  // HTML into an attribute, or into an element whose content is dropped
  `<a title="\n\n[x](https://evil.example/" onmouseover="${JS}) **b**\n\n"> end`,
  `<div title="\n\n# heading <img src=x onerror=${JS}>\n\n">x</div>`,
  `<img alt='\n\n*x* [y](https://e.example/'onerror='${JS})\n\n'>`,
  `<textarea>\n\n**x** <img src=x onerror=${JS}>\n\n</textarea>`,
  `<script>\n\n[a](b)\n\n</script> after`,
  `<kbd><svg/onload=${JS}></kbd>`,
  `<pre><svg/onload=${JS}></pre>`,
  `<code><img/src=x/onerror=${JS}></code>`,
  `<style>\n\n* { x: y }\n\n</style><p>x</p>`,
  `\uE000<img src=x onerror=${JS}>\uE000 and \uE001<script>${JS}</script>\uE001`,
  "`<script>" + JS + "</script>`",
  "```html\n<script>" + JS + "</script>\n```"
]

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

// Markdown rendering (issue 6; Forgejo's routers/api/v1/misc/markup.go and TestAPI_RenderGFM,
// TestAPI_RenderSimple, TestAPI_RenderRaw, TestRenderAlertBlocks): the three routes, the GFM and
// forge features, bounded pathological input, and the renderer service used directly.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MarkdownRenderer } from "../src/markdown/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let app: string
let readToken: string
beforeAll(async () => {
  hearth = await startHearth({ markdown: { MAX_RENDER_SIZE: "65536" } })
  app = `${hearth.base}/`
  for (const username of ["alice", "r-lyeh", "Bob.Smith"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "secretive", visibility: "private" })
  await createUser(hearth, { username: "members", visibility: "limited" })
  // A token with an unrelated scope: /markdown needs a signed-in caller, not a scope.
  readToken = await createToken(hearth, "alice", ["read:issue"])
  // Issue references link only to issues that exist and the reader may see (issue 18 item 9):
  // gogits/gogs #1–#12, other/thing #1–#7, o/r #1–#3, and a private one alice cannot see.
  for (const [owner, repo, count, priv] of [
    ["gogits", "gogs", 12, false],
    ["other", "thing", 7, false],
    ["o", "r", 3, false],
    ["other", "hidden", 1, true]
  ] as const) {
    if ((await request(hearth, "GET", `/users/${owner}`)).status === 404) await createUser(hearth, { username: owner })
    const made = await request(hearth, "POST", "/user/repos", basic(owner), { name: repo, private: priv })
    expect(made.status).toBe(201)
    for (let i = 0; i < count; i++) {
      const issue = await request(hearth, "POST", `/repos/${owner}/${repo}/issues`, basic(owner), { title: `i${i}` })
      expect(issue.status).toBe(201)
    }
  }
}, 120_000)
afterAll(() => hearth?.close())

const alice = () => basic("alice")
const post = (path: string, body: unknown, auth: string | undefined = alice()) =>
  request(hearth, "POST", path, auth, body)
const md = async (body: Record<string, unknown>, auth?: string) => {
  const res = await post("/markdown", body, auth)
  expect(res.status).toBe(200)
  return res.text()
}
const gfm = (text: string, extra: Record<string, unknown> = {}) =>
  md({ Text: text, Mode: "gfm", Context: "/gogits/gogs", ...extra })

describe("routes", () => {
  it("POST /markdown answers text/html; an empty text gives an empty body", async () => {
    const res = await post("/markdown", { Text: "*hi*", Mode: "markdown" })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await res.text()).toBe("<p><em>hi</em></p>\n")
    expect(await md({ Text: "", Mode: "gfm" })).toBe("")
    expect(await md({})).toBe("")
  })

  it("needs a signed-in caller (401 token is required), but no token scope", async () => {
    for (const path of ["/markdown", "/markup"]) {
      const res = await request(hearth, "POST", path, undefined, { Text: "x" })
      expect(res.status).toBe(401)
      const body = await json(res)
      expect(body.message).toBe("token is required")
      expectSwagger(body, "APIUnauthorizedError")
    }
    const raw = await fetch(hearth.api("/markdown/raw"), {
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "x"
    })
    expect(raw.status).toBe(401)
    expect(await md({ Text: "x" }, `token ${readToken}`)).toBe("<p>x</p>\n")
  })

  it("TestAPI_RenderSimple: markdown mode leaves [[…]] as text; unknown modes render as markdown", async () => {
    expect(await md({ Text: "[[Name|Link]]", Mode: "markdown", Context: "/gogits/gogs" })).toBe(
      "<p>[[Name|Link]]</p>\n"
    )
    expect(await md({ Text: "[[Name|Link]]", Mode: "nonsense", Context: "/gogits/gogs", Wiki: true })).toBe(
      "<p>[[Name|Link]]</p>\n"
    )
  })

  it("the wiki mode renders as gfm on a wiki page", async () => {
    expect(await md({ Text: "[[P]] ![i](x.png)", Mode: "wiki", Context: "/o/r" })).toBe(
      `<p><a href="${app}o/r/wiki/P" rel="nofollow">P</a> <img src="${app}o/r/wiki/raw/x.png" alt="i" /></p>\n`
    )
  })

  it("member names are case-insensitive, as Go decodes them", async () => {
    expect(await md({ text: "[[Page]]", mode: "gfm", context: "/o/r", wiki: true })).toBe(
      `<p><a href="${app}o/r/wiki/Page" rel="nofollow">Page</a></p>\n`
    )
  })

  it("TestAPI_RenderRaw: /markdown/raw renders a text/plain body as plain markdown", async () => {
    const res = await fetch(hearth.api("/markdown/raw"), {
      method: "POST",
      headers: { authorization: alice(), "content-type": "text/plain" },
      body: "[[Name|Link]] @alice #1"
    })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(await res.text()).toBe("<p>[[Name|Link]] @alice #1</p>\n")
    // Whatever the body's Content-Type says, as Forgejo (`curl -d` sends a form type).
    for (const contentType of ["application/x-www-form-urlencoded", undefined]) {
      const other = await fetch(hearth.api("/markdown/raw"), {
        method: "POST",
        headers: { authorization: alice(), ...(contentType === undefined ? {} : { "content-type": contentType }) },
        body: new TextEncoder().encode("*x*")
      })
      expect(other.status).toBe(200)
      expect(await other.text()).toBe("<p><em>x</em></p>\n")
    }
  })

  it("/markup: modes, file mode with the extension check, 422 {message,url} otherwise", async () => {
    const ok = await post("/markup", { Text: "# T", Mode: "file", FilePath: "docs/README.md" })
    expect(ok.status).toBe(200)
    expect(await ok.text()).toBe(`<h1 id="user-content-t">T</h1>\n`)
    const unknown = await post("/markup", { Text: "x", Mode: "unknown" })
    expect(unknown.status).toBe(422)
    const body = await json(unknown)
    expect(body.message).toBe("Unknown mode: unknown")
    expect(body.url).toBe(`${app}api/swagger`)
    expectSwagger(body, "APIValidationError")
    const ext = await post("/markup", { Text: "x", Mode: "file", FilePath: "a/b.unknown" })
    expect(ext.status).toBe(422)
    expect((await json(ext)).message).toBe("Unsupported render extension: .unknown")
    const gfmMode = await post("/markup", { Text: "[[P]]", Mode: "gfm", Context: "/o/r", Wiki: true })
    expect(await gfmMode.text()).toBe(`<p><a href="${app}o/r/wiki/P" rel="nofollow">P</a></p>\n`)
  })

  it("a wrongly typed member is 422 naming it, and a text over MAX_RENDER_SIZE is 413", async () => {
    const bad = await post("/markdown", { Text: 5 })
    expect(bad.status).toBe(422)
    expect((await json(bad)).message).toContain("Text")
    const big = await post("/markdown", { Text: "a".repeat(65537), Mode: "gfm" })
    expect(big.status).toBe(413)
    expect((await json(big)).message).toContain("MAX_RENDER_SIZE")
    const raw = await fetch(hearth.api("/markdown/raw"), {
      method: "POST",
      headers: { authorization: alice(), "content-type": "text/plain" },
      body: "é".repeat(40000) // 80,000 bytes
    })
    expect(raw.status).toBe(413)
  })
})

describe("TestAPI_RenderGFM", () => {
  it("wiki links, mentions of existing users, auto-links, heading ids, wiki images", async () => {
    expect(await gfm("[[Guardfile-DSL / Configuring-Guard|Guardfile-DSL---Configuring-Guard]]", { Wiki: true })).toBe(
      `<p><a href="${app}gogits/gogs/wiki/Guardfile-DSL---Configuring-Guard" rel="nofollow">Guardfile-DSL / Configuring-Guard</a></p>\n`
    )
    const list = await gfm(
      "Wiki! Enjoy :)\n- [[Links, Language bindings, Engine bindings|Links]]\n- [[Tips]]\n- Bezier widget (by @r-lyeh) https://example.com/x",
      { Wiki: true }
    )
    expect(list).toBe(
      `<p>Wiki! Enjoy :)</p>\n<ul>\n` +
        `<li><a href="${app}gogits/gogs/wiki/Links" rel="nofollow">Links, Language bindings, Engine bindings</a></li>\n` +
        `<li><a href="${app}gogits/gogs/wiki/Tips" rel="nofollow">Tips</a></li>\n` +
        `<li>Bezier widget (by <a href="${app}r-lyeh" class="mention" rel="nofollow">@r-lyeh</a>) ` +
        `<a href="https://example.com/x" rel="nofollow noopener">https://example.com/x</a></li>\n</ul>\n`
    )
    const page = await gfm(
      "## What is Wine Staging?\n**Wine Staging** on website [wine-staging.com](http://wine-staging.com).\n\n[[Configuration]]\n[[images/icon-bug.png]]\n",
      { Wiki: true }
    )
    expect(page).toBe(
      `<h2 id="user-content-what-is-wine-staging">What is Wine Staging?</h2>\n` +
        `<p><strong>Wine Staging</strong> on website <a href="http://wine-staging.com" rel="nofollow noopener">wine-staging.com</a>.</p>\n` +
        `<p><a href="${app}gogits/gogs/wiki/Configuration" rel="nofollow">Configuration</a>\n` +
        `<a href="${app}gogits/gogs/wiki/raw/images/icon-bug.png" rel="nofollow"><img src="${app}gogits/gogs/wiki/raw/images/icon-bug.png" title="icon-bug.png" alt="images/icon-bug.png" /></a></p>\n`
    )
  })

  it("the comment mode links the same references", async () => {
    expect(await md({ Text: "@alice see #3", Mode: "comment", Context: "/o/r" })).toBe(
      `<p><a href="${app}alice" class="mention" rel="nofollow">@alice</a> see ` +
        `<a href="${app}o/r/issues/3" class="ref-issue" rel="nofollow">#3</a></p>\n`
    )
  })
})

describe("features", () => {
  it("tables, task lists with disabled checkboxes, strikethrough, fenced code with a language class", async () => {
    const html = await gfm("|a|b|\n|-|:-:|\n|1|2|\n\n- [ ] todo\n- [x] done\n\n~~gone~~\n\n```ts\nlet a = 1 < 2\n```\n")
    expect(html).toContain('<table>\n<thead>\n<tr>\n<th>a</th>\n<th align="center">b</th>')
    expect(html).toContain("<td>1</td>")
    expect(html).toContain(`<li><input type="checkbox" disabled /> todo</li>`)
    expect(html).toContain(`<li><input type="checkbox" disabled checked /> done</li>`)
    expect(html).toContain("<del>gone</del>")
    expect(html).toContain(`<pre><code class="language-ts">let a = 1 &lt; 2\n</code></pre>`)
  })

  it("a hand-written checkbox is disabled too, and other inputs do not survive", async () => {
    const html = await gfm(
      `<input type="checkbox" checked onclick="x()"> <input type="text" value="v"> <input type="submit">`
    )
    expect(html).toContain(`<input type="checkbox" disabled checked />`)
    expect(html).not.toMatch(/type="(?:text|submit)"|value=|onclick/)
  })

  it("headings get user-content- ids, unique within a document", async () => {
    expect(await gfm("# Hello, World!\n# Hello, World!\n## `code` & *more*")).toBe(
      `<h1 id="user-content-hello-world">Hello, World!</h1>\n` +
        `<h1 id="user-content-hello-world-1">Hello, World!</h1>\n` +
        `<h2 id="user-content-code--more"><code>code</code> &amp; <em>more</em></h2>\n`
    )
    // An id written in raw HTML is prefixed too, so it cannot take over the page's own ids.
    expect(await gfm(`<h3 id="top">x</h3>`)).toBe(`<h3 id="user-content-top">x</h3>`)
  })

  it("footnotes: numbered references, the notes at the end, undefined labels stay text", async () => {
    const html = await gfm("One[^a] two[^b] again[^a] none[^zz].\n\n[^b]: Second note.\n[^a]: First *note*.\n")
    expect(html).toBe(
      `<p>One<sup id="user-content-fnref-a"><a href="#user-content-fn-a" rel="nofollow">1</a></sup> ` +
        `two<sup id="user-content-fnref-b"><a href="#user-content-fn-b" rel="nofollow">2</a></sup> ` +
        `again<sup id="user-content-fnref-a"><a href="#user-content-fn-a" rel="nofollow">1</a></sup> none[^zz].</p>\n` +
        `<section class="footnotes">\n<ol>\n` +
        `<li id="user-content-fn-a"><p>First <em>note</em>. <a href="#user-content-fnref-a" rel="nofollow">↩</a></p></li>\n` +
        `<li id="user-content-fn-b"><p>Second note. <a href="#user-content-fnref-b" rel="nofollow">↩</a></p></li>\n` +
        `</ol>\n</section>\n`
    )
  })

  it("a reference at the start of a line stays in its paragraph", async () => {
    expect(await gfm("One\n[^a] two\n\n[^a]: Note.")).toBe(
      `<p>One\n<sup id="user-content-fnref-a"><a href="#user-content-fn-a" rel="nofollow">1</a></sup> two</p>\n` +
        `<section class="footnotes">\n<ol>\n<li id="user-content-fn-a"><p>Note. <a href="#user-content-fnref-a" rel="nofollow">↩</a></p></li>\n</ol>\n</section>\n`
    )
  })

  it("emoji shortcodes become the character; unknown ones stay text; not inside code", async () => {
    expect(await md({ Text: ":tada: :+1: :not_an_emoji: `:tada:`", Mode: "markdown" })).toBe(
      `<p><span class="emoji" aria-label="tada">🎉</span> <span class="emoji" aria-label="+1">👍</span> :not_an_emoji: <code>:tada:</code></p>\n`
    )
  })

  it("TestRenderAlertBlocks: modern and legacy alert blocks with icons", async () => {
    const kinds = { note: "info", tip: "light-bulb", important: "report", warning: "alert", caution: "stop" }
    for (const [kind, icon] of Object.entries(kinds)) {
      const title = kind[0]!.toUpperCase() + kind.slice(1)
      const opening = `<blockquote class="attention-header attention-${kind}"><p><svg class="svg octicon-${icon}" width="16" height="16" aria-hidden="true">`
      const modern = await md({ Text: `> [!${kind.toUpperCase()}]\n> This is a ${kind}.`, Mode: "gfm" })
      expect(modern).toContain(opening)
      expect(modern).toContain(
        `</svg><strong class="attention-${kind}">${title}</strong></p>\n<p>This is a ${kind}.</p>\n</blockquote>`
      )
      const legacy = await md({ Text: `> **${title}**\n> This is a ${kind}.`, Mode: "gfm" })
      expect(legacy).toContain(opening)
      expect(legacy).toContain(`<strong class="attention-${kind}">${title}</strong></p>\n<p>This is a ${kind}.</p>`)
    }
    // An ordinary quote, and a marker that is not on its own line, stay quotes.
    expect(await md({ Text: "> just a quote", Mode: "gfm" })).toBe("<blockquote>\n<p>just a quote</p>\n</blockquote>\n")
    expect(await md({ Text: "> [!NOTE] inline", Mode: "gfm" })).not.toContain("attention")
  })

  it("mentions link only users that exist and the reader may see", async () => {
    const text = "@alice @Bob.Smith @nobody @secretive @members email a@alice.com `@alice`"
    const asAlice = await gfm(text)
    expect(asAlice).toContain(`<a href="${app}alice" class="mention" rel="nofollow">@alice</a>`)
    expect(asAlice).toContain(`<a href="${app}Bob.Smith" class="mention" rel="nofollow">@Bob.Smith</a>`)
    expect(asAlice).toContain(`<a href="${app}members" class="mention" rel="nofollow">@members</a>`)
    expect(asAlice).toContain("@nobody @secretive")
    expect(asAlice).toContain("<code>@alice</code>")
    expect(asAlice.match(/class="mention"/g)).toHaveLength(3)
    // The private account itself sees its own mention linked.
    await createUser(hearth, { username: "secret2", visibility: "private" })
    expect(await gfm("@secret2", {}).then(() => md({ Text: "@secret2", Mode: "gfm" }, basic("secret2")))).toContain(
      `class="mention"`
    )
    expect(await md({ Text: "@secret2", Mode: "gfm" })).toBe("<p>@secret2</p>\n")
    // The plain markdown mode has no mentions.
    expect(await md({ Text: "@alice", Mode: "markdown" })).toBe("<p>@alice</p>\n")
  })

  it("issue references link to issues that exist and the reader may see; commits link", async () => {
    const html = await gfm(
      "Fixes #12 and other/thing#7 (#3), not x#4 nor a#5; commit 1a2b3c4d5e6f7 but not deadbee or 1234567"
    )
    expect(html).toContain(`<a href="${app}gogits/gogs/issues/12" class="ref-issue" rel="nofollow">#12</a>`)
    expect(html).toContain(`<a href="${app}other/thing/issues/7" class="ref-issue" rel="nofollow">other/thing#7</a>`)
    expect(html).toContain(`(<a href="${app}gogits/gogs/issues/3" class="ref-issue" rel="nofollow">#3</a>)`)
    expect(html).toContain("not x#4 nor a#5;")
    expect(html).toContain(
      `<a href="${app}gogits/gogs/commit/1a2b3c4d5e6f7" class="commit" rel="nofollow"><code>1a2b3c4d5e</code></a>`
    )
    expect(html).toContain("not deadbee or 1234567")
    expect(html.match(/<a /g)).toHaveLength(4)
    // Inside a link's text or code, nothing is linked again.
    expect(await gfm("[see #1 and @alice](https://example.com) `#2`")).toBe(
      `<p><a href="https://example.com" rel="nofollow noopener">see #1 and @alice</a> <code>#2</code></p>\n`
    )
    // Without a context there is no repository for #1 to point into.
    expect(await md({ Text: "#1 o/r#2", Mode: "gfm" })).toBe(
      `<p>#1 <a href="${app}o/r/issues/2" class="ref-issue" rel="nofollow">o/r#2</a></p>\n`
    )
    // An issue or a repository that does not exist, or one the reader may not see, is left as text.
    expect(await gfm("#13 other/thing#8 nobody/none#1 other/hidden#1")).toBe(
      "<p>#13 other/thing#8 nobody/none#1 other/hidden#1</p>\n"
    )
    expect(await md({ Text: "other/hidden#1", Mode: "gfm", Context: "/gogits/gogs" }, basic("other"))).toBe(
      `<p><a href="${app}other/hidden/issues/1" class="ref-issue" rel="nofollow">other/hidden#1</a></p>\n`
    )
  })

  it("relative links and images resolve against the context (the wiki's raw path for images in wiki mode)", async () => {
    expect(await gfm("[doc](docs/a.md) ![i](img/x.png) [abs](/explore) [frag](#top) [mail](mailto:a@b.c)")).toBe(
      `<p><a href="${app}gogits/gogs/docs/a.md" rel="nofollow">doc</a> <img src="${app}gogits/gogs/img/x.png" alt="i" /> ` +
        `<a href="/explore" rel="nofollow">abs</a> <a href="#top" rel="nofollow">frag</a> ` +
        `<a href="mailto:a@b.c" rel="nofollow noopener">mail</a></p>\n`
    )
    expect(await gfm("[p](Other-Page) ![i](x.png)", { Wiki: true })).toBe(
      `<p><a href="${app}gogits/gogs/wiki/Other-Page" rel="nofollow">p</a> <img src="${app}gogits/gogs/wiki/raw/x.png" alt="i" /></p>\n`
    )
    // In raw HTML too.
    expect(await gfm(`<p align="center"><img src="docs/logo.png" alt="logo"> <a href="LICENSE">license</a></p>`)).toBe(
      `<p align="center"><img src="${app}gogits/gogs/docs/logo.png" alt="logo" /> <a href="${app}gogits/gogs/LICENSE" rel="nofollow">license</a></p>`
    )
    expect(await md({ Text: "[a](b)", Mode: "markdown", Context: "https://other.example/o/r" })).toBe(
      `<p><a href="https://other.example/o/r/b" rel="nofollow noopener">a</a></p>\n`
    )
  })

  it("links to this server get rel=nofollow, links to other hosts nofollow noopener", async () => {
    const html = await gfm(`${app}o/r and https://evil.example/ and www.example.org`)
    expect(html).toContain(`<a href="${app}o/r" rel="nofollow">`)
    expect(html).toContain(`<a href="https://evil.example/" rel="nofollow noopener">`)
    expect(html).toContain(`<a href="http://www.example.org" rel="nofollow noopener">`)
  })
})

describe("pathological input finishes with sane output", () => {
  const cases: Record<string, string> = {
    "10,000 backticks": "`".repeat(10_000),
    "10,000 spaced backticks": "` ".repeat(10_000),
    "10,000 nested quotes": ">".repeat(10_000) + " deep",
    "5,000 nested list markers": "- ".repeat(5_000) + "deep",
    "list nested by indentation": Array.from({ length: 150 }, (_, i) => " ".repeat(i * 2) + "- x").join("\n"),
    "30,000 intraword underscores": "_a".repeat(30_000),
    "30,000 stars between letters": "*a".repeat(30_000),
    "20,000 strong openers": "**a".repeat(20_000),
    "20,000 brackets": "[".repeat(20_000),
    "10,000 unclosed links": "[a](".repeat(10_000),
    "10,000 emphasis openers": "**_".repeat(10_000),
    "a 100×250 table":
      "|" + "h|".repeat(100) + "\n|" + "-|".repeat(100) + "\n" + ("|" + "x|".repeat(100) + "\n").repeat(250)
  }
  for (const [name, text] of Object.entries(cases)) {
    it(name, async () => {
      const html = await hearth.run(
        Effect.flatMap(MarkdownRenderer, (r) => r.render({ text, mode: "gfm", context: "/o/r" }))
      )
      expect(html.length).toBeGreaterThan(0)
      expect(html.length).toBeLessThan(text.length * 40)
      expect(html).not.toMatch(/<script|onerror|javascript:/i)
      // Balanced: every opened blockquote and list is closed.
      for (const tag of ["blockquote", "ul", "p"]) {
        expect((html.match(new RegExp(`<${tag}[ >]`, "g")) ?? []).length).toBe(
          (html.match(new RegExp(`</${tag}>`, "g")) ?? []).length
        )
      }
    })
  }

  it("the bounds leave ordinary documents alone: a long list keeps its emphasis, code keeps its stars", async () => {
    const list = Array.from({ length: 400 }, (_, i) => `- **item_${i}** with *some* text`).join("\n")
    const code = "```\n" + "*a".repeat(1000) + "\n```"
    const html = await hearth.run(
      Effect.flatMap(MarkdownRenderer, (r) => r.render({ text: `${list}\n\n${code}`, mode: "gfm" }))
    )
    expect((html.match(/<strong>item_\d+<\/strong>/g) ?? []).length).toBe(400)
    expect((html.match(/<em>some<\/em>/g) ?? []).length).toBe(400)
    expect(html).toContain("*a".repeat(1000))
  })

  it("quotes deeper than 32 levels are kept as text at that depth", async () => {
    const html = await hearth.run(
      Effect.flatMap(MarkdownRenderer, (r) => r.render({ text: ">".repeat(100) + " x", mode: "gfm" }))
    )
    expect((html.match(/<blockquote>/g) ?? []).length).toBe(32)
    expect(html).toContain("&gt;")
  })
})

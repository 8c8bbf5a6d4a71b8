// Issue 17 item 2, the wiki in the browser over plain HTTP (no browser; the browser test is
// web-releases-wiki-browser.test.ts): the Home page at `/wiki` rendered with `[[Page]]` links that
// land on their pages, the sidebar and footer, every `html_url` the API returns (names with `/`,
// `-` and spaces), the pages list (`?action=_pages`, `/wiki/_pages`), a page's history, the start
// page of an empty wiki, the wiki's clone URL; a private repository's wiki for a stranger (404), a
// reader (403 on the forms) and a writer; the unit switched off (404); the forms with CSRF —
// create, edit (and rename), delete — through WikiService (read back through the API), refusals
// next to their field with the input kept; the XSS corpus in page names and contents.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus, JS } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)

const as = (username: string) => signedIn(hearth.base, username)

const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const b64 = (text: string) => Buffer.from(text).toString("base64")
const newPage = (repo: string, title: string, content: string) =>
  api("POST", `/repos/${repo}/wiki/new`, "alice", { title, content_base64: b64(content) })
const pagesOf = async (repo: string) =>
  (await api("GET", `/repos/${repo}/wiki/pages?limit=100`, "alice")) as Array<Record<string, any>>
const pageOf = (repo: string, webPath: string) =>
  request(hearth, "GET", `/repos/${repo}/wiki/page/${webPath}`, basic("alice"))

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/vault/collaborators/bob", "alice", { permission: "write" })
  await api("PUT", "/repos/alice/vault/collaborators/carol", "alice", { permission: "read" })

  await newPage("alice/garden", "Home", "# Welcome\n\nSee [[Other Page]] and **more**.\n")
  await newPage("alice/garden", "Other Page", "The other page.\n")
  await newPage("alice/garden", "_Sidebar", "Sidebar: [[Home]]\n")
  await newPage("alice/garden", "_Footer", "Footer text\n")
  await newPage("alice/garden", "a/b", "A page whose name has a slash.\n")
  await newPage("alice/garden", "wiki-name", "A page whose name has a dash.\n")
  await api("PATCH", "/repos/alice/garden/wiki/page/Other-Page", "alice", {
    content_base64: b64("The other page, again.\n"),
    message: "Second thoughts"
  })
  await newPage("alice/vault", "Home", "Secret home.\n")
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex"
)

describe("reading the wiki", () => {
  it("shows the Home page at /wiki, rendered, with its sidebar and footer, and [[links]] that land on their page", async () => {
    const page = await web().get("/alice/garden/wiki")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="wiki-title">Home</h1>')
    const content = /data-testid="wiki-content">([\s\S]*?)<\/div>\n/.exec(page.text)![1]!
    expect(content).toContain("<strong>more</strong>")
    const link = /<a href="([^"]+)"[^>]*>Other Page<\/a>/.exec(content)![1]!
    expect(link).toBe(`${hearth.base}/alice/garden/wiki/Other-Page`)
    const other = await web().get(new URL(link).pathname)
    expect(other.status).toBe(200)
    expect(other.text).toContain("The other page, again.")
    expect(other.text).toContain("2 revisions")
    expect(page.text).toMatch(/data-testid="wiki-sidebar"[^>]*>[\s\S]*Sidebar:/)
    expect(page.text).toMatch(/data-testid="wiki-footer">[\s\S]*Footer text/)
    // The tab, the wiki's clone URL; no writer's buttons for a visitor.
    expect(page.text).toMatch(/href="\/alice\/garden\/wiki" aria-current="page"/)
    expect(page.text).toContain(`value="${hearth.base}/alice/garden.wiki.git"`)
    expect(page.text).not.toContain('data-testid="wiki-edit"')
    expect(page.text).not.toContain('data-testid="wiki-delete"')
    expect((await web().get("/alice/garden/wiki/Home")).text).toContain('data-testid="wiki-title">Home</h1>')
  })

  it("answers at every html_url the API returns", async () => {
    const pages = await pagesOf("alice/garden")
    expect(pages.map((p) => p.sub_url).sort()).toEqual(
      ["Home", "Other-Page", "_Sidebar", "_Footer", "a%2Fb", "wiki-name.-"].sort()
    )
    for (const p of pages) {
      const path = new URL(p.html_url).pathname
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(page.text, path).toContain(`data-testid="wiki-title">${p.title}</h1>`)
    }
    expect((await web().get("/alice/garden/wiki/No-Such-Page")).status).toBe(404)
  })

  it("lists the pages at ?action=_pages and /wiki/_pages", async () => {
    for (const path of ["/alice/garden/wiki/?action=_pages", "/alice/garden/wiki/_pages"]) {
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      const list = /data-testid="wiki-page-list">([\s\S]*?)<\/ul>/.exec(page.text)![1]!
      expect(list).toContain('href="/alice/garden/wiki/Other-Page">Other Page</a>')
      expect(list).toContain('href="/alice/garden/wiki/a%2Fb">a/b</a>')
      expect(list).toContain('href="/alice/garden/wiki/wiki-name.-">wiki-name</a>')
    }
  })

  it("shows a page's history", async () => {
    const page = await web().get("/alice/garden/wiki/Other-Page?action=_revision")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="wiki-revision-count">2 revisions')
    const subjects = [...page.text.matchAll(/<span class="text-bold wb-break-word">([^<]*)<\/span>/g)].map((m) => m[1])
    expect(subjects).toEqual(["Second thoughts", "Add &quot;Other Page&quot;"])
    expect((await web().get("/alice/garden/wiki/Nope?action=_revision")).status).toBe(404)
  })

  it("serves the wiki's files at /wiki/raw: the images its pages show, and the pages' text", async () => {
    await api("POST", "/user/repos", "alice", { name: "pictures", auto_init: true, readme: "Default" })
    await newPage("alice/pictures", "Home", "Our logo: ![logo](images/logo.png)\n")
    // The image is pushed to the wiki with git.
    const work = mkdtempSync(join(tmpdir(), "hearth-web-wiki-"))
    try {
      const remote = new URL(`${hearth.base}/alice/pictures.wiki.git`)
      remote.username = "alice"
      remote.password = "password123"
      const local = join(work, "wiki")
      await gitIn(work, ["clone", "--quiet", remote.toString(), local])
      mkdirSync(join(local, "images"))
      writeFileSync(join(local, "images", "logo.png"), PNG)
      writeFileSync(
        join(local, "images", "evil.svg"),
        '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
      )
      await gitIn(local, ["add", "--all"])
      await gitIn(local, ["commit", "--quiet", "-m", "Add the logo"])
      await gitIn(local, ["push", "--quiet", "origin", "HEAD"])
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
    const page = await web().get("/alice/pictures/wiki")
    const src = /<img src="([^"]+)"/.exec(page.text)![1]!
    expect(src).toBe(`${hearth.base}/alice/pictures/wiki/raw/images/logo.png`)
    const image = await fetch(src)
    expect(image.status).toBe(200)
    expect(image.headers.get("content-type")).toBe("image/png")
    expect(image.headers.get("x-content-type-options")).toBe("nosniff")
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true)
    // A page's text by its name; an SVG under the sandbox; nothing else.
    const text = await fetch(`${hearth.base}/alice/pictures/wiki/raw/Home`)
    expect(text.status).toBe(200)
    expect(await text.text()).toBe("Our logo: ![logo](images/logo.png)\n")
    const svg = await fetch(`${hearth.base}/alice/pictures/wiki/raw/images/evil.svg`)
    expect(svg.headers.get("content-security-policy")).toContain("sandbox")
    expect((await web().get("/alice/pictures/wiki/raw/images/nope.png")).status).toBe(404)
    expect((await web().get("/alice/vault/wiki/raw/Home")).status).toBe(404)
  })

  it("an empty wiki shows its start page, with the first page's button for writers only", async () => {
    await api("POST", "/user/repos", "alice", { name: "blank", auto_init: true, readme: "Default" })
    const visitor = await web().get("/alice/blank/wiki")
    expect(visitor.status).toBe(200)
    expect(visitor.text).toContain('data-testid="wiki-start"')
    expect(visitor.text).not.toContain('data-testid="wiki-create-first"')
    expect((await web().get("/alice/blank/wiki/?action=_pages")).text).toContain('data-testid="wiki-start"')
    const alice = await as("alice")
    const own = await alice.get("/alice/blank/wiki")
    expect(own.text).toContain('href="/alice/blank/wiki?action=_new" data-testid="wiki-create-first"')
  })
})

describe("who may see and change the wiki", () => {
  it("a private repository's wiki is a 404 page for strangers, readable by readers, changeable by writers", async () => {
    const dave = await as("dave")
    for (const path of [
      "/alice/vault/wiki",
      "/alice/vault/wiki/Home",
      "/alice/vault/wiki/_pages",
      "/alice/vault/wiki/Home?action=_revision",
      "/alice/vault/wiki/Home?action=_edit",
      "/alice/vault/wiki?action=_new"
    ]) {
      expect((await dave.get(path)).status, path).toBe(404)
      expect((await web().get(path)).status, path).toBe(404)
    }
    const carol = await as("carol")
    expect((await carol.get("/alice/vault/wiki")).text).toContain("Secret home.")
    expect((await carol.get("/alice/vault/wiki?action=_new")).status).toBe(403)
    expect((await carol.get("/alice/vault/wiki/Home?action=_edit")).status).toBe(403)
    const csrf = csrfOf((await carol.get("/alice/vault/wiki")).text)
    const forged = await carol.post("/alice/vault/wiki?action=_new", { title: "Carol", content: "x" }, csrf)
    expect(forged.status).toBe(403)
    expect((await carol.post("/alice/vault/wiki/Home?action=_delete", {}, csrf)).status).toBe(403)
    expect((await pagesOf("alice/vault")).map((p) => p.title)).toEqual(["Home"])
    const bob = await as("bob")
    expect((await bob.get("/alice/vault/wiki?action=_new")).status).toBe(200)
    expect((await bob.get("/alice/vault/wiki/Home?action=_edit")).status).toBe(200)
  })

  it("the wiki unit switched off: no tab, every page a 404", async () => {
    await api("POST", "/user/repos", "alice", { name: "nowiki", auto_init: true, readme: "Default" })
    await newPage("alice/nowiki", "Home", "x\n")
    expect((await web().get("/alice/nowiki")).text).toContain('href="/alice/nowiki/wiki"')
    await api("PATCH", "/repos/alice/nowiki", "alice", { has_wiki: false })
    const alice = await as("alice")
    expect((await alice.get("/alice/nowiki")).text).not.toContain('href="/alice/nowiki/wiki"')
    for (const path of ["/alice/nowiki/wiki", "/alice/nowiki/wiki/Home", "/alice/nowiki/wiki?action=_new"])
      expect((await alice.get(path)).status, path).toBe(404)
  })
})

describe("the forms", () => {
  it("create a page, refusing a form without its CSRF token", async () => {
    const alice = await as("alice")
    const form = await alice.get("/alice/garden/wiki?action=_new")
    expect(form.status).toBe(200)
    expect((await alice.get("/alice/garden/wiki/_new")).status).toBe(200)
    const fields = { title: "Planting Guide", content: "Dig, *then* plant. See [[Home]].", message: "" }
    expect((await alice.post("/alice/garden/wiki?action=_new", fields, undefined)).status).toBe(400)
    expect((await pageOf("alice/garden", "Planting-Guide")).status).toBe(404)
    const made = await alice.post("/alice/garden/wiki?action=_new", fields, csrfOf(form.text))
    expect(made.status).toBe(303)
    expect(made.location).toBe("/alice/garden/wiki/Planting-Guide")
    const saved = await json(await pageOf("alice/garden", "Planting-Guide"))
    expect(Buffer.from(saved.content_base64, "base64").toString()).toBe(fields.content)
    expect(saved.last_commit.message).toBe('Add "Planting Guide"\n')
    expect(saved.last_commit.author.name).toBe("alice")
    const page = await alice.get(made.location!)
    expect(page.text).toContain("<em>then</em>")
  })

  it("show refusals next to their field and keep what was typed", async () => {
    const alice = await as("alice")
    const csrf = csrfOf((await alice.get("/alice/garden/wiki?action=_new")).text)
    const empty = await alice.post("/alice/garden/wiki?action=_new", { title: " ", content: "Kept content" }, csrf)
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-title">Give the page a title.')
    expect(empty.text).toContain(">Kept content</textarea>")
    const noContent = await alice.post("/alice/garden/wiki?action=_new", { title: "Kept title", content: "" }, csrf)
    expect(noContent.status).toBe(422)
    expect(noContent.text).toContain('data-testid="error-content">')
    expect(noContent.text).toContain('value="Kept title"')
    const reserved = await alice.post("/alice/garden/wiki?action=_new", { title: "_pages", content: "x" }, csrf)
    expect(reserved.status).toBe(422)
    expect(reserved.text).toContain('data-testid="error-title">wiki title is reserved: _pages')
    const taken = await alice.post("/alice/garden/wiki?action=_new", { title: "Other Page", content: "dup" }, csrf)
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('data-testid="error-title">A page with this title exists already.')
    expect(taken.text).toContain(">dup</textarea>")
    const other = await json(await pageOf("alice/garden", "Other-Page"))
    expect(Buffer.from(other.content_base64, "base64").toString()).toBe("The other page, again.\n")
  })

  it("edit and rename a page, then delete it (confirmed)", async () => {
    const alice = await as("alice")
    await newPage("alice/garden", "Draft Notes", "first\n")
    const edit = await alice.get("/alice/garden/wiki/Draft-Notes?action=_edit")
    expect(edit.status).toBe(200)
    expect(edit.text).toContain('name="title" type="text" value="Draft Notes"')
    expect(edit.text).toContain(">first\n</textarea>")
    const saved = await alice.post(
      "/alice/garden/wiki/Draft-Notes?action=_edit",
      { title: "Final Notes", content: "second\n", message: "Rename it" },
      csrfOf(edit.text)
    )
    expect(saved.status).toBe(303)
    expect(saved.location).toBe("/alice/garden/wiki/Final-Notes")
    expect((await pageOf("alice/garden", "Draft-Notes")).status).toBe(404)
    const renamed = await json(await pageOf("alice/garden", "Final-Notes"))
    expect(Buffer.from(renamed.content_base64, "base64").toString()).toBe("second\n")
    expect(renamed.last_commit.message).toBe("Rename it\n")

    const shown = await alice.get("/alice/garden/wiki/Final-Notes")
    expect(shown.text).toMatch(/<details[^>]*data-testid="wiki-delete">[\s\S]*Yes, delete this page/)
    expect((await alice.post("/alice/garden/wiki/Final-Notes?action=_delete", {}, undefined)).status).toBe(400)
    expect((await pageOf("alice/garden", "Final-Notes")).status).toBe(200)
    const gone = await alice.post("/alice/garden/wiki/Final-Notes?action=_delete", {}, csrfOf(shown.text))
    expect(gone.status).toBe(303)
    expect(gone.location).toBe("/alice/garden/wiki/?action=_pages")
    expect((await pageOf("alice/garden", "Final-Notes")).status).toBe(404)
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("page names and contents are text or sanitized markdown on every wiki page", async () => {
    await api("POST", "/user/repos", "alice", { name: "hostile", auto_init: true, readme: "Default" })
    const titles: Array<string> = []
    for (let i = 0; i < corpus.length; i += 9) {
      const title = `${i} ${corpus[i]!.replace(/[\n\r]/g, " ").slice(0, 100)}`
      titles.push(title)
      await newPage("alice/hostile", title, corpus.slice(i, i + 9).join("\n\n"))
    }
    await newPage("alice/hostile", "Home", corpus.join("\n\n"))
    await newPage("alice/hostile", "_Sidebar", corpus.slice(0, 20).join("\n\n"))
    const alice = await as("alice")
    const pages = await pagesOf("alice/hostile")
    const paths = [
      "/alice/hostile/wiki",
      "/alice/hostile/wiki/?action=_pages",
      ...pages.map((p) => new URL(p.html_url).pathname),
      ...pages.slice(0, 4).map((p) => `${new URL(p.html_url).pathname}?action=_revision`)
    ]
    for (const path of paths) {
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(executableInRendered(page.text), path).toEqual([])
    }
    for (const p of pages.slice(0, 4)) {
      const path = `${new URL(p.html_url).pathname}?action=_edit`
      const page = await alice.get(path)
      expect(page.status, path).toBe(200)
      expect(executableInRendered(page.text), path).toEqual([])
    }
    const list = await web().get("/alice/hostile/wiki/?action=_pages")
    expect(list.text).toContain(`&lt;script&gt;${JS}&lt;/script&gt;</a>`)
  }, 120_000)
})

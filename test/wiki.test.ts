// The wiki's API (issue 20 item 6; Forgejo's routers/api/v1/repo/wiki.go): page names mapped as
// Forgejo's wiki_path.go maps them, pages written as commits of the wiki repository beside the code
// repository (checked with the real git client), Forgejo's shapes, paging and status codes, and the
// repository's rules on the wiki unit: anonymous, reader, writer, admin, private, unit off, scopes.
import { execFileSync } from "node:child_process"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { gitEnv } from "../src/git/Git.ts"
import * as Paths from "../src/wiki/Paths.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const seen: Array<Event> = []

const b64 = (text: string) => Buffer.from(text).toString("base64")
const alice = basic("alice")
const wikiDir = (owner: string, repo: string) => join(hearth.settings.repository.ROOT, owner, `${repo}.wiki.git`)
/** git on the bare wiki repository. */
const wikiGit = (owner: string, repo: string, args: ReadonlyArray<string>) =>
  execFileSync("git", ["--git-dir", wikiDir(owner, repo), ...args], { env: gitEnv() })
    .toString("utf8")
    .trim()

const newRepo = async (name: string, extra: Record<string, unknown> = {}, auth = alice, path = "/user/repos") =>
  expect((await request(hearth, "POST", path, auth, { name, ...extra })).status).toBe(201)

const create = (repo: string, title: string, content: string, auth: string | undefined = alice, owner = "alice") =>
  request(hearth, "POST", `/repos/${owner}/${repo}/wiki/new`, auth, { title, content_base64: b64(content) })

const wikiEvents = () => seen.filter((e): e is Extract<Event, { _tag: "Wiki" }> => e._tag === "Wiki")

beforeAll(async () => {
  hearth = await startHearth({ quota: { ENABLED: "true" } })
  const events = await hearth.run(Effect.service(EventHub))
  await hearth.run(events.subscribe({ name: "wiki-test", handle: (event) => Effect.sync(() => void seen.push(event)) }))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["alice", "reader", "writer", "stranger"]) await createUser(hearth, { username })
  await newRepo("docs")
  await newRepo("secret", { private: true })
  for (const [user, permission] of [
    ["reader", "read"],
    ["writer", "write"]
  ] as const) {
    for (const repo of ["docs", "secret"]) {
      const res = await request(hearth, "PUT", `/repos/alice/${repo}/collaborators/${user}`, alice, { permission })
      expect(res.status).toBe(204)
    }
  }
}, 60_000)
afterAll(async () => {
  await hearth?.close()
})

describe("page names (Forgejo's wiki_path.go)", () => {
  it("maps a title to its web path (UserTitleToWebPath)", () => {
    for (const [title, web] of [
      ["wiki name", "wiki-name"],
      ["wiki-name", "wiki-name.-"],
      ["the wiki-name", "the+wiki-name.-"],
      ["title.md", "title.md.-"],
      ["a/b", "a%2Fb"],
      ["a%b", "a%25b"],
      ["", "unnamed"],
      ["..", "unnamed"],
      ["  Home  ", "Home"]
    ]) {
      expect(Paths.userTitleToWebPath(title!), title).toBe(web)
    }
  })

  it("maps a web path to its file (WebPathToGitPath) and back (GitPathToWebPath)", () => {
    for (const [web, file] of [
      ["wiki%20name", "wiki-name.md"],
      ["wiki+name", "wiki-name.md"],
      ["wiki%20name.md", "wiki name.md"],
      ["2000-01-02+meeting", "2000-01-02-meeting.md"],
      ["2000-01-02%20meeting.-", "2000-01-02 meeting.-.md"],
      ["..%2F..%2Fx.md", "x.md"]
    ]) {
      expect(Paths.webPathToGitPath(web!), web).toBe(file)
    }
    expect(Paths.webPathToGitPath(Paths.userTitleToWebPath("home of and & or wiki page!"))).toBe(
      "home-of-and-%26-or-wiki-page%21.md"
    )
    for (const [file, web] of [
      ["hello world.md", "hello-world"],
      ["hello world.-.md", "hello+world.-"],
      ["symbols %2F.md", "symbols-%2F"]
    ]) {
      expect(Paths.gitPathToWebPath(file!), file).toBe(web)
    }
    expect(Paths.gitPathToWebPath("image.png")).toBeUndefined()
  })

  it("shows the title of a web path (WebPathToUserTitle) and cleans a requested name (WebPathFromRequest)", () => {
    expect(Paths.webPathToUserTitle("wiki-name")).toBe("wiki name")
    expect(Paths.webPathToUserTitle("wiki-name.-")).toBe("wiki-name")
    expect(Paths.webPathToUserTitle("2000-01-02+meeting.-.md")).toBe("2000-01-02 meeting")
    expect(Paths.webPathFromRequest("a/../b")).toBe("b")
    expect(Paths.webPathFromRequest("a/b")).toBe("a%2Fb")
    expect(Paths.webPathFromRequest("../../etc/passwd")).toBe("etc%2Fpasswd")
  })

  it("round-trips every printable ASCII title through web path, file and back", () => {
    let title = ""
    for (let c = 0x20; c < 0x7f; c++) title += String.fromCharCode(c)
    for (let i = 0; i < title.length; i++) {
      const t = title.slice(i, i + 7).trim()
      if (t === "" || t === "." || t === ".." || t.includes("/")) continue
      const web = Paths.userTitleToWebPath(t)
      const back = Paths.gitPathToWebPath(Paths.webPathToGitPath(web))
      expect(back, t).toBe(web)
      expect(Paths.webPathToUserTitle(web), t).toBe(t)
    }
  })
})

describe("POST /repos/{o}/{r}/wiki/new and GET /wiki/page/{pageName}", () => {
  it("creates the wiki repository with the first page, as a commit by the caller (201 WikiPage)", async () => {
    expect(existsSync(wikiDir("alice", "docs"))).toBe(false)
    expect((await json(await request(hearth, "GET", "/repos/alice/docs", alice))).has_wiki_contents).toBe(false)
    const res = await create("docs", "Home", "# Welcome\n")
    expect(res.status).toBe(201)
    const page = await json(res)
    expect(page).toMatchObject({
      title: "Home",
      sub_url: "Home",
      html_url: `${hearth.settings.server.ROOT_URL}alice/docs/wiki/Home`,
      content_base64: b64("# Welcome\n"),
      commit_count: 1,
      sidebar: "",
      footer: ""
    })
    expect(page.last_commit.sha).toMatch(/^[0-9a-f]{40}$/)
    expect(page.last_commit.author).toMatchObject({ name: "alice", email: expect.any(String) })
    expect(page.last_commit.commiter.date).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(page.last_commit.message).toBe('Add "Home"\n')
    expect(wikiGit("alice", "docs", ["rev-parse", "HEAD"])).toBe(page.last_commit.sha)
    expect(wikiGit("alice", "docs", ["show", "HEAD:Home.md"])).toBe("# Welcome")
    expect(wikiGit("alice", "docs", ["log", "-1", "--format=%an"])).toBe("alice")
    expect(wikiEvents().at(-1)).toMatchObject({
      action: "created",
      page: "Home",
      comment: 'Add "Home"',
      via: "api",
      repo: { name: "docs", ownerName: "alice" },
      doer: { name: "alice" }
    })
    // The code repository is left alone.
    const repo = await json(await request(hearth, "GET", "/repos/alice/docs", alice))
    expect(repo.empty).toBe(true)
    expect(repo).toMatchObject({ has_wiki: true, has_wiki_contents: true })
    // The web's wiki pages (issue 17, test/web-wiki.test.ts) show it at the page's html_url.
    for (const path of ["/alice/docs/wiki", "/alice/docs/wiki/Home", "/alice/docs/wiki/_pages"]) {
      expect((await fetch(`${hearth.base}${path}`)).status, path).toBe(200)
    }
  })

  it("reads a page with its sidebar and footer, by any form of its name", async () => {
    expect((await create("docs", "_Sidebar", "side")).status).toBe(201)
    expect((await create("docs", "_Footer", "foot")).status).toBe(201)
    expect((await create("docs", "Getting started", "steps")).status).toBe(201)
    expect(wikiGit("alice", "docs", ["show", "HEAD:Getting-started.md"])).toBe("steps")
    for (const name of ["Getting-started", "Getting%20started", "Getting+started", "Getting-started.md"]) {
      const res = await request(hearth, "GET", `/repos/alice/docs/wiki/page/${name}`)
      expect(res.status, name).toBe(200)
      const page = await json(res)
      expect(page.content_base64).toBe(b64("steps"))
      expect(page.sidebar).toBe(b64("side"))
      expect(page.footer).toBe(b64("foot"))
    }
    expect((await json(await request(hearth, "GET", "/repos/alice/docs/wiki/page/Getting-started"))).title).toBe(
      "Getting started"
    )
  })

  it("keeps dashes, unicode and symbols in titles", async () => {
    const res = await create("docs", "Ünïcode – 2024-01-02 & more!", "u")
    expect(res.status).toBe(201)
    const page = await json(res)
    expect(page.title).toBe("Ünïcode – 2024-01-02 & more!")
    const files = wikiGit("alice", "docs", ["ls-tree", "--name-only", "-z", "HEAD"]).split("\0")
    expect(files).toContain(Paths.webPathToGitPath(page.sub_url))
    expect((await request(hearth, "GET", `/repos/alice/docs/wiki/page/${page.sub_url}`)).status).toBe(200)
    // A slash in a title is part of the name (`%2F`), whether the request escapes it or not.
    const slashed = await json(await create("docs", "Guides/Setup", "s"))
    expect(slashed.sub_url).toBe("Guides%2FSetup")
    for (const name of ["Guides%2FSetup", "Guides/Setup"]) {
      const res = await request(hearth, "GET", `/repos/alice/docs/wiki/page/${name}`)
      expect(res.status, name).toBe(200)
      expect((await json(res)).title).toBe("Guides/Setup")
    }
  })

  it("reads the page name after the repository's own path, whatever the owner and repository are called", async () => {
    await createUser(hearth, { username: "wiki" })
    await newRepo("page", {}, basic("wiki"))
    expect((await create("page", "Home", "odd names", basic("wiki"), "wiki")).status).toBe(201)
    const res = await request(hearth, "GET", "/repos/wiki/page/wiki/page/Home")
    expect(res.status).toBe(200)
    expect((await json(res)).sub_url).toBe("Home")
  })

  it("cannot leave the wiki: `../` and `/` in names stay file names of the wiki's top level", async () => {
    const res = await create("docs", "../../../escape", "x")
    expect(res.status).toBe(201)
    const page = await json(res)
    expect(page.sub_url).toBe("..%2F..%2F..%2Fescape")
    const files = wikiGit("alice", "docs", ["ls-tree", "--name-only", "-z", "HEAD"]).split("\0")
    expect(files).toContain("..%2F..%2F..%2Fescape.md")
    // A raw `.md` name with `..` is cleaned to a path inside the wiki.
    const raw = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/..%2F..%2Fraw-escape.md", alice, {
      content_base64: b64("r")
    })
    expect(raw.status).toBe(200)
    expect(wikiGit("alice", "docs", ["show", "HEAD:raw-escape.md"])).toBe("r")
    for (const outside of [
      join(hearth.settings.repository.ROOT, "raw-escape.md"),
      join(hearth.settings.repository.ROOT, "alice", "raw-escape.md"),
      join(hearth.settings.repository.ROOT, "escape.md")
    ]) {
      expect(existsSync(outside)).toBe(false)
    }
  })

  it("refuses what it cannot make, changing nothing (400)", async () => {
    const before = wikiGit("alice", "docs", ["rev-parse", "HEAD"])
    const refused = async (body: unknown, message: RegExp) => {
      const res = await request(hearth, "POST", "/repos/alice/docs/wiki/new", alice, body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await json(res)).message).toMatch(message)
    }
    await refused({ title: "  ", content_base64: b64("x") }, /title is required/)
    await refused({ content_base64: b64("x") }, /title is required/)
    await refused({ title: "Home", content_base64: b64("again") }, /^wiki page already exists \[title: Home\.md\]$/)
    await refused({ title: "New", content_base64: "not base64!" }, /^illegal base64 data at input byte 3$/)
    await refused({ title: "_pages", content_base64: b64("x") }, /^wiki title is reserved: _pages$/)
    await refused({ title: "raw", content_base64: b64("x") }, /^wiki title is reserved: raw$/)
    expect(wikiGit("alice", "docs", ["rev-parse", "HEAD"])).toBe(before)
  })

  it("answers 404 for a missing page, and for a wiki that has no pages yet", async () => {
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/page/Nowhere")).status).toBe(404)
    await newRepo("bare")
    expect((await request(hearth, "GET", "/repos/alice/bare/wiki/page/Home", alice)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/bare/wiki/pages", alice)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/bare/wiki/revisions/Home", alice)).status).toBe(404)
    expect(existsSync(wikiDir("alice", "bare"))).toBe(false)
  })
})

describe("PATCH and DELETE /wiki/page/{pageName}", () => {
  it("edits a page in place, keeping its name when no title is given (200, edited)", async () => {
    expect((await create("docs", "Editable", "v1")).status).toBe(201)
    const res = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Editable", alice, {
      content_base64: b64("v2"),
      message: "second version"
    })
    expect(res.status).toBe(200)
    const page = await json(res)
    expect(page).toMatchObject({ title: "Editable", content_base64: b64("v2"), commit_count: 2 })
    expect(page.last_commit.message).toBe("second version\n")
    expect(wikiEvents().at(-1)).toMatchObject({ action: "edited", page: "Editable", comment: "second version" })
  })

  it("renames a page in one commit, keeping its text when no content is given (renamed)", async () => {
    const before = Number(wikiGit("alice", "docs", ["rev-list", "--count", "HEAD"]))
    const res = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Editable", alice, {
      title: "edited title"
    })
    expect(res.status).toBe(200)
    const page = await json(res)
    expect(page).toMatchObject({ title: "edited title", sub_url: "edited-title", content_base64: b64("v2") })
    expect(page.last_commit.message).toBe('Update "edited-title"\n')
    expect(Number(wikiGit("alice", "docs", ["rev-list", "--count", "HEAD"]))).toBe(before + 1)
    const files = wikiGit("alice", "docs", ["ls-tree", "--name-only", "HEAD"]).split("\n")
    expect(files).toContain("edited-title.md")
    expect(files).not.toContain("Editable.md")
    expect(wikiEvents().at(-1)).toMatchObject({ action: "renamed", page: "edited-title", oldPage: "Editable" })
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/page/Editable")).status).toBe(404)
  })

  it("renames a page onto an existing one, replacing it, as Forgejo does", async () => {
    expect((await create("docs", "Src", "source")).status).toBe(201)
    expect((await create("docs", "Dst", "destination")).status).toBe(201)
    const res = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Src", alice, { title: "Dst" })
    expect(res.status).toBe(200)
    expect((await json(res)).content_base64).toBe(b64("source"))
    const files = wikiGit("alice", "docs", ["ls-tree", "--name-only", "HEAD"]).split("\n")
    expect(files).toContain("Dst.md")
    expect(files).not.toContain("Src.md")
  })

  it("writes pages sent at once one after another, each its own commit", async () => {
    const before = Number(wikiGit("alice", "docs", ["rev-list", "--count", "HEAD"]))
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) => create("docs", `Parallel ${i}`, `p${i}`).then((r) => r.status))
    )
    expect(results).toEqual([201, 201, 201, 201, 201, 201])
    expect(Number(wikiGit("alice", "docs", ["rev-list", "--count", "HEAD"]))).toBe(before + 6)
    // The same page sent twice at once is made once; the other is told it exists.
    const twice = await Promise.all([create("docs", "Once", "a"), create("docs", "Once", "b")])
    expect(twice.map((r) => r.status).sort()).toEqual([201, 400])
  })

  it("makes a page that is not there yet, as Forgejo does (created)", async () => {
    const res = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Fresh", alice, {
      title: "Fresh",
      content_base64: b64("new")
    })
    expect(res.status).toBe(200)
    expect(wikiEvents().at(-1)).toMatchObject({ action: "created", page: "Fresh" })
  })

  it("refuses bad content and reserved names (400), changing nothing", async () => {
    const before = wikiGit("alice", "docs", ["rev-parse", "HEAD"])
    const bad = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Fresh", alice, { content_base64: "%%%%" })
    expect(bad.status).toBe(400)
    const reserved = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/Fresh", alice, { title: "_edit" })
    expect(reserved.status).toBe(400)
    expect(wikiGit("alice", "docs", ["rev-parse", "HEAD"])).toBe(before)
  })

  it("deletes a page in a commit (204, deleted), and 404 for one that is not there", async () => {
    const res = await request(hearth, "DELETE", "/repos/alice/docs/wiki/page/Fresh", alice)
    expect(res.status).toBe(204)
    expect(wikiGit("alice", "docs", ["log", "-1", "--format=%s"])).toBe('Delete page "Fresh"')
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/page/Fresh")).status).toBe(404)
    expect(wikiEvents().at(-1)).toMatchObject({ action: "deleted", page: "Fresh" })
    expect((await request(hearth, "DELETE", "/repos/alice/docs/wiki/page/Fresh", alice)).status).toBe(404)
  })
})

describe("GET /wiki/pages and /wiki/revisions/{pageName}", () => {
  it("lists the pages with their last commit, paged over the wiki's top-level entries (X-Total-Count)", async () => {
    const entries = wikiGit("alice", "docs", ["ls-tree", "--name-only", "HEAD"]).split("\n")
    const res = await request(hearth, "GET", "/repos/alice/docs/wiki/pages")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe(String(entries.length))
    const pages = await json(res)
    expect(pages.map((p: { sub_url: string }) => p.sub_url)).toEqual(
      entries.map((e) => Paths.gitPathToWebPath(e)).filter((e) => e !== undefined)
    )
    const home = pages.find((p: { title: string }) => p.title === "Home")
    expect(home).toMatchObject({ sub_url: "Home", html_url: expect.stringMatching(/\/alice\/docs\/wiki\/Home$/) })
    expect(home.last_commit.commiter).toMatchObject({ name: "alice" })
    const second = await json(await request(hearth, "GET", "/repos/alice/docs/wiki/pages?page=2&limit=2"))
    expect(second.map((p: { sub_url: string }) => p.sub_url)).toEqual(
      entries.slice(2, 4).map((e) => Paths.gitPathToWebPath(e))
    )
    // A limit of 1 or less is the default page size (Forgejo).
    expect((await json(await request(hearth, "GET", "/repos/alice/docs/wiki/pages?limit=1"))).length).toBe(pages.length)
  })

  it("lists a page's commits newest first, 50 a page, with the total (WikiCommitList)", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await request(hearth, "PATCH", "/repos/alice/docs/wiki/page/edited-title", alice, {
        content_base64: b64(`v${i + 3}`),
        message: `rev ${i}`
      })
      expect(res.status).toBe(200)
    }
    const res = await request(hearth, "GET", "/repos/alice/docs/wiki/revisions/edited-title")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("4")
    const list = await json(res)
    expect(list.count).toBe(4)
    expect(list.commits.map((c: { message: string }) => c.message)).toEqual([
      "rev 2\n",
      "rev 1\n",
      "rev 0\n",
      'Update "edited-title"\n'
    ])
    const empty = await json(await request(hearth, "GET", "/repos/alice/docs/wiki/revisions/edited-title?page=2"))
    expect(empty).toEqual({ commits: [], count: 4 })
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/revisions/Nowhere")).status).toBe(404)
  })
})

describe("who may read and write the wiki", () => {
  const write = (auth: string | undefined, repo = "docs") =>
    request(hearth, "PATCH", `/repos/alice/${repo}/wiki/page/Home`, auth, { content_base64: b64("changed") })

  it("lets anyone read a public repository's wiki, and only its writers change it", async () => {
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/page/Home")).status).toBe(200)
    expect((await write(undefined)).status).toBe(401)
    expect((await write(basic("stranger"))).status).toBe(403)
    const reader = await write(basic("reader"))
    expect(reader.status).toBe(403)
    expect((await json(reader)).message).toBe("user should have a permission to write to a repo")
    expect((await write(basic("writer"))).status).toBe(200)
    expect((await write(basic("root"))).status).toBe(200)
    expect((await request(hearth, "DELETE", "/repos/alice/docs/wiki/page/Home", basic("reader"))).status).toBe(403)
    expect((await create("docs", "By reader", "x", basic("reader"))).status).toBe(403)
  })

  it("hides a private repository's wiki (404) from whoever may not see the repository", async () => {
    expect((await create("secret", "Home", "hidden")).status).toBe(201)
    expect((await request(hearth, "GET", "/repos/alice/secret/wiki/page/Home")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/wiki/page/Home", basic("stranger"))).status).toBe(404)
    expect((await write(basic("stranger"), "secret")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/wiki/pages", basic("reader"))).status).toBe(200)
    expect((await write(basic("writer"), "secret")).status).toBe(200)
  })

  it("answers 404 on every route while the wiki unit is off, and has_wiki says so", async () => {
    await newRepo("nowiki")
    expect((await create("nowiki", "Home", "x")).status).toBe(201)
    const off = await request(hearth, "PATCH", "/repos/alice/nowiki", alice, { has_wiki: false })
    expect(off.status).toBe(200)
    expect((await json(off)).has_wiki).toBe(false)
    expect((await request(hearth, "GET", "/repos/alice/nowiki/wiki/page/Home", alice)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/nowiki/wiki/pages", alice)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/nowiki/wiki/revisions/Home", alice)).status).toBe(404)
    expect((await create("nowiki", "Other", "x")).status).toBe(404)
    expect((await write(alice, "nowiki")).status).toBe(404)
    expect((await request(hearth, "DELETE", "/repos/alice/nowiki/wiki/page/Home", alice)).status).toBe(404)
  })

  it("refuses changes to an archived repository's wiki (423)", async () => {
    await newRepo("old")
    expect((await create("old", "Home", "x")).status).toBe(201)
    expect((await request(hearth, "PATCH", "/repos/alice/old", alice, { archived: true })).status).toBe(200)
    expect((await write(alice, "old")).status).toBe(423)
    expect((await request(hearth, "GET", "/repos/alice/old/wiki/page/Home")).status).toBe(200)
  })

  it("needs the repository scope: read to read, write to change", async () => {
    const readOnly = `token ${await createToken(hearth, "alice", ["read:repository"])}`
    const userOnly = `token ${await createToken(hearth, "alice", ["read:user"])}`
    const full = `token ${await createToken(hearth, "alice", ["write:repository"])}`
    expect((await request(hearth, "GET", "/repos/alice/docs/wiki/pages", readOnly)).status).toBe(200)
    expect((await write(readOnly)).status).toBe(403)
    expect((await request(hearth, "GET", "/repos/alice/secret/wiki/pages", userOnly)).status).toBe(403)
    expect((await write(full)).status).toBe(200)
  })

  it("refuses a page write over the size:assets:wiki quota (413), changing nothing", async () => {
    await createUser(hearth, { username: "quoted" })
    await newRepo("q", {}, basic("quoted"))
    expect((await create("q", "Home", "x", basic("quoted"), "quoted")).status).toBe(201)
    const root = basic("root")
    const group = await request(hearth, "POST", "/admin/quota/groups", root, {
      name: "no-wiki",
      rules: [
        { name: "no-wiki", limit: 0, subjects: ["size:assets:wiki"] },
        { name: "rest", limit: -1, subjects: ["size:all"] }
      ]
    })
    expect(group.status).toBe(201)
    expect(
      (await request(hearth, "POST", "/admin/users/quoted/quota/groups", root, { groups: ["no-wiki"] })).status
    ).toBe(204)
    const before = wikiGit("quoted", "q", ["rev-parse", "HEAD"])
    expect((await create("q", "More", "x", basic("quoted"), "quoted")).status).toBe(413)
    const edit = await request(hearth, "PATCH", "/repos/quoted/q/wiki/page/Home", basic("quoted"), {
      content_base64: b64("y")
    })
    expect(edit.status).toBe(413)
    expect(wikiGit("quoted", "q", ["rev-parse", "HEAD"])).toBe(before)
    // Deleting frees space, so it is not refused.
    expect((await request(hearth, "DELETE", "/repos/quoted/q/wiki/page/Home", basic("quoted"))).status).toBe(204)
  })
})

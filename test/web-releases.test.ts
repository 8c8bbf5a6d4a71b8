// Issue 17 item 2, releases in the browser over plain HTTP (no browser; the browser test is
// web-releases-wiki-browser.test.ts): the list (newest first, paged, drafts only to writers, the
// latest and pre-release labels, rendered notes, assets with sizes and links, source archives
// unless hidden), one release at the API's `html_url` (tags with `/` too), `/releases/latest`, the
// tags page's links to releases, the tab; a private repository's pages for a stranger (404), a
// reader (403 on the forms) and a writer; the unit switched off (404); the forms with CSRF —
// create, edit, publish a draft, upload (multipart) and remove files, delete — through the services
// (read back through the API), refusals next to their field with the input kept; the XSS corpus
// in titles and notes.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)

const as = (username: string) => signedIn(hearth.base, username)

const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const release = (repo: string, body: Record<string, unknown>) => api("POST", `/repos/${repo}/releases`, "alice", body)

/** POSTs a multipart form with the client's cookies (what a browser sends for an upload form). */
const upload = async (client: WebClient, path: string, form: FormData) => {
  const res = await fetch(`${hearth.base}${path}`, {
    method: "POST",
    redirect: "manual",
    headers: { cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    body: form
  })
  return { status: res.status, location: res.headers.get("location") ?? undefined, text: await res.text() }
}

const releasesOf = async (repo: string, user = "alice") =>
  (await api("GET", `/repos/${repo}/releases?limit=50&draft=`, user)) as Array<Record<string, any>>

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/vault/collaborators/bob", "alice", { permission: "write" })
  await api("PUT", "/repos/alice/vault/collaborators/carol", "alice", { permission: "read" })

  // alice/garden: an older release with a file and hidden archives, a stable one, a pre-release
  // with a tag holding `/`, and a draft (made in this order: newest last).
  const old = await release("alice/garden", {
    tag_name: "v0.9",
    name: "Seedling",
    body: "The **first** one.",
    hide_archive_links: true
  })
  const file = new FormData()
  file.append("attachment", new Blob([Buffer.alloc(2048, 7)]), "seeds.bin")
  const res = await fetch(`${hearth.base}/api/v1/repos/alice/garden/releases/${old.id}/assets`, {
    method: "POST",
    headers: { authorization: basic("alice") },
    body: file
  })
  expect(res.status).toBe(201)
  await release("alice/garden", { tag_name: "v1.0", name: "Bloom", body: "# Notes\n\n- roses\n- *tulips*" })
  await release("alice/garden", { tag_name: "feature/v1.1-rc", name: "Bud", prerelease: true })
  await release("alice/garden", { tag_name: "v2.0", name: "Harvest (draft)", draft: true })
  await release("alice/vault", { tag_name: "v1", name: "Vaulted" })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

describe("the releases list", () => {
  it("shows the published releases newest first, with labels, notes, assets and archives", async () => {
    const page = await web().get("/alice/garden/releases")
    expect(page.status).toBe(200)
    const titles = [...page.text.matchAll(/data-testid="release-title"><a[^>]*>([^<]*)</g)].map((m) => m[1])
    expect(titles).toEqual(["Bud", "Bloom", "Seedling"])
    // Latest is the newest that is neither a draft nor a pre-release.
    const boxes = page.text.split('data-testid="release"').slice(1)
    expect(boxes[0]).toContain('data-testid="label-prerelease"')
    expect(boxes[0]).not.toContain('data-testid="label-latest"')
    expect(boxes[1]).toContain('data-testid="label-latest"')
    expect(boxes[0]).toContain('href="/alice/garden/releases/tag/feature/v1.1-rc"')
    // Notes rendered.
    expect(boxes[1]).toContain("<li><em>tulips</em></li>")
    expect(boxes[2]).toContain("<strong>first</strong>")
    // Archives unless hidden; the file with its size and download link.
    expect(boxes[1]).toContain('href="/alice/garden/archive/v1.0.zip"')
    expect(boxes[1]).toContain('href="/alice/garden/archive/v1.0.tar.gz"')
    expect(boxes[2]).not.toContain("/archive/")
    expect(boxes[2]).toMatch(/href="http:\/\/[^"]+\/attachments\/[0-9a-f-]{36}">seeds\.bin<\/a>/)
    expect(boxes[2]).toContain("2.0 KiB")
    // The tab and its count (published releases).
    expect(page.text).toMatch(
      /href="\/alice\/garden\/releases" aria-current="page">[\s\S]*?Releases[\s\S]*?Counter">3</
    )
    // No draft, no edit buttons for a visitor.
    expect(page.text).not.toContain("Harvest")
    expect(page.text).not.toContain('data-testid="edit-release"')
    expect(page.text).not.toContain('data-testid="new-release"')
  })

  it("shows drafts and the edit buttons to writers only", async () => {
    const alice = await as("alice")
    const page = await alice.get("/alice/garden/releases")
    expect(page.text).toContain("Harvest (draft)")
    expect(page.text).toContain('data-testid="label-draft"')
    expect(page.text).toContain('href="/alice/garden/releases/edit/v2.0"')
    expect(page.text).toContain('data-testid="new-release"')
    const bob = await as("bob")
    expect((await bob.get("/alice/garden/releases")).text).not.toContain("Harvest")
    expect((await bob.get("/alice/garden/releases/tag/v2.0")).status).toBe(404)
    expect((await alice.get("/alice/garden/releases/tag/v2.0")).status).toBe(200)
  })

  it("is paged", async () => {
    await api("POST", "/user/repos", "alice", { name: "many", auto_init: true, readme: "Default" })
    for (let i = 1; i <= 12; i++) await release("alice/many", { tag_name: `r${i}` })
    const first = await web().get("/alice/many/releases")
    expect([...first.text.matchAll(/data-testid="release-title"/g)].length).toBe(10)
    expect(first.text).toContain('href="/alice/many/releases?page=2"')
    const second = await web().get("/alice/many/releases?page=2")
    const titles = [...second.text.matchAll(/data-testid="release-title"><a[^>]*>([^<]*)</g)].map((m) => m[1])
    expect(titles).toEqual(["r2", "r1"])
  }, 60_000)
})

describe("one release", () => {
  it("answers at every html_url the API returns, tags with `/` too", async () => {
    for (const r of await releasesOf("alice/garden", "dave")) {
      const path = new URL(r.html_url).pathname
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(page.text).toContain(`data-testid="release-title">${r.name}</h1>`)
    }
    const page = await web().get("/alice/garden/releases/tag/feature/v1.1-rc")
    expect(page.text).toContain('data-testid="release-tag">feature/v1.1-rc</span>')
    expect((await web().get("/alice/garden/releases/tag/nope")).status).toBe(404)
  })

  it("/releases/latest redirects to the latest release", async () => {
    const res = await web().get("/alice/garden/releases/latest")
    expect(res.status).toBe(302)
    expect(res.location).toBe("/alice/garden/releases/tag/v1.0")
    expect((await web().get("/alice/vault/releases/latest")).status).toBe(404)
  })

  it("the tags page links each tag to its release", async () => {
    const page = await web().get("/alice/garden/tags")
    expect(page.status).toBe(200)
    expect(page.text).toContain('href="/alice/garden/releases/tag/v1.0"')
    expect(page.text).toContain('href="/alice/garden/releases/tag/feature/v1.1-rc"')
  })
})

describe("who may see and change releases", () => {
  it("a private repository's releases are a 404 page for strangers, readable by readers, changeable by writers", async () => {
    const pages = ["/alice/vault/releases", "/alice/vault/releases/tag/v1", "/alice/vault/releases/edit/v1"]
    const dave = await as("dave")
    for (const path of [...pages, "/alice/vault/releases/new"]) {
      expect((await dave.get(path)).status, path).toBe(404)
      const visitor = await web().get(path)
      expect([302, 404], path).toContain(visitor.status)
    }
    expect((await web().get("/alice/vault/releases")).status).toBe(404)
    const carol = await as("carol")
    expect((await carol.get("/alice/vault/releases")).status).toBe(200)
    expect((await carol.get("/alice/vault/releases/tag/v1")).status).toBe(200)
    expect((await carol.get("/alice/vault/releases/new")).status).toBe(403)
    expect((await carol.get("/alice/vault/releases/edit/v1")).status).toBe(403)
    // A reader's forged forms change nothing.
    const csrf = csrfOf((await carol.get("/alice/vault/releases")).text)
    expect((await carol.post("/alice/vault/releases/new", { tag_name: "carol" }, csrf)).status).toBe(403)
    const [vaulted] = await releasesOf("alice/vault")
    expect((await carol.post("/alice/vault/releases/delete", { id: String(vaulted!.id) }, csrf)).status).toBe(403)
    expect((await releasesOf("alice/vault")).map((r) => r.tag_name)).toEqual(["v1"])
    const bob = await as("bob")
    expect((await bob.get("/alice/vault/releases/new")).status).toBe(200)
    expect((await bob.get("/alice/vault/releases/edit/v1")).status).toBe(200)
    // A visitor is asked to sign in to make a release.
    const visitor = await web().get("/alice/garden/releases/new")
    expect(visitor.status).toBe(302)
    expect(visitor.location).toBe("/user/login?redirect_to=%2Falice%2Fgarden%2Freleases%2Fnew")
  })

  it("the releases unit switched off: no tab, every page a 404", async () => {
    await api("POST", "/user/repos", "alice", { name: "plain", auto_init: true, readme: "Default" })
    await release("alice/plain", { tag_name: "p1" })
    expect((await web().get("/alice/plain")).text).toContain('href="/alice/plain/releases"')
    await api("PATCH", "/repos/alice/plain", "alice", { has_releases: false })
    const alice = await as("alice")
    expect((await alice.get("/alice/plain")).text).not.toContain('href="/alice/plain/releases"')
    for (const path of ["/alice/plain/releases", "/alice/plain/releases/tag/p1", "/alice/plain/releases/new"])
      expect((await alice.get(path)).status, path).toBe(404)
    expect((await alice.get("/alice/plain/tags")).text).not.toContain("/releases/tag/p1")
  })

  it("an archived repository's releases cannot be made or edited (423)", async () => {
    await api("POST", "/user/repos", "alice", { name: "attic", auto_init: true, readme: "Default" })
    await release("alice/attic", { tag_name: "a1" })
    await api("PATCH", "/repos/alice/attic", "alice", { archived: true })
    const alice = await as("alice")
    expect((await alice.get("/alice/attic/releases")).status).toBe(200)
    expect((await alice.get("/alice/attic/releases/new")).status).toBe(423)
    expect((await alice.get("/alice/attic/releases/edit/a1")).status).toBe(423)
  })
})

describe("the forms", () => {
  it("make a release (the tag made from the target) and refuse a form without its CSRF token", async () => {
    const alice = await as("alice")
    const form = await alice.get("/alice/garden/releases/new?tag=v3.0")
    expect(form.status).toBe(200)
    expect(form.text).toContain('name="tag_name" type="text" value="v3.0"')
    expect(form.text).toContain('name="tag_target" type="text" value="main"')
    const fields = { tag_name: "v3.0", tag_target: "main", title: "Fruit", content: "Ripe *now*.", prerelease: "on" }
    expect((await alice.post("/alice/garden/releases/new", fields, undefined)).status).toBe(400)
    expect((await alice.post("/alice/garden/releases/new", fields, "wrong")).status).toBe(400)
    expect((await releasesOf("alice/garden")).some((r) => r.tag_name === "v3.0")).toBe(false)
    const made = await alice.post("/alice/garden/releases/new", { ...fields, draft: "" }, csrfOf(form.text))
    expect(made.status).toBe(303)
    expect(made.location).toBe("/alice/garden/releases/tag/v3.0")
    const saved = (await releasesOf("alice/garden")).find((r) => r.tag_name === "v3.0")!
    expect(saved).toMatchObject({ name: "Fruit", body: "Ripe *now*.", draft: false, prerelease: true })
    expect((await api("GET", "/repos/alice/garden/tags/v3.0", "alice")).name).toBe("v3.0")
    const page = await alice.get(made.location!)
    expect(page.text).toContain("<em>now</em>")
  })

  it("save a draft, then publish it", async () => {
    const alice = await as("alice")
    const form = await alice.get("/alice/garden/releases/new")
    const csrf = csrfOf(form.text)
    const res = await alice.post(
      "/alice/garden/releases/new",
      { tag_name: "v4.0", tag_target: "main", title: "Later", content: "", draft: "1" },
      csrf
    )
    expect(res.status).toBe(303)
    const draft = (await releasesOf("alice/garden")).find((r) => r.tag_name === "v4.0")!
    expect(draft.draft).toBe(true)
    expect((await request(hearth, "GET", "/repos/alice/garden/tags/v4.0", basic("alice"))).status).toBe(404)
    const edit = await alice.get("/alice/garden/releases/edit/v4.0")
    expect(edit.status).toBe(200)
    expect(edit.text).toContain("Save draft")
    const published = await alice.post(
      "/alice/garden/releases/edit/v4.0",
      { tag_name: "v4.0", tag_target: "main", title: "Now", content: "Out.", draft: "" },
      csrfOf(edit.text)
    )
    expect(published.status).toBe(303)
    const now = (await releasesOf("alice/garden")).find((r) => r.tag_name === "v4.0")!
    expect(now).toMatchObject({ draft: false, name: "Now", body: "Out." })
    expect((await request(hearth, "GET", "/repos/alice/garden/tags/v4.0", basic("alice"))).status).toBe(200)
    // A published release's form keeps its tag and has no draft button.
    const again = await alice.get("/alice/garden/releases/edit/v4.0")
    expect(again.text).not.toContain("Save draft")
    expect(again.text).not.toContain('name="tag_name"')
  })

  it("show refusals next to their field and keep what was typed", async () => {
    const alice = await as("alice")
    const csrf = csrfOf((await alice.get("/alice/garden/releases/new")).text)
    const empty = await alice.post(
      "/alice/garden/releases/new",
      { tag_name: " ", tag_target: "main", title: "Kept title", content: "Kept notes" },
      csrf
    )
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-tag_name">Name the tag of the release.')
    expect(empty.text).toContain('value="Kept title"')
    expect(empty.text).toContain(">Kept notes</textarea>")
    const taken = await alice.post(
      "/alice/garden/releases/new",
      { tag_name: "v1.0", tag_target: "main", title: "Again", content: "", prerelease: "on" },
      csrf
    )
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('data-testid="error-tag_name">There is a release of the tag v1.0 already.')
    expect(taken.text).toMatch(/name="prerelease" value="on" checked/)
    const target = await alice.post(
      "/alice/garden/releases/new",
      { tag_name: "v9", tag_target: "no-such-branch", title: "", content: "" },
      csrf
    )
    expect(target.status).toBe(422)
    expect(target.text).toContain('data-testid="error-tag_target">')
    expect(target.text).toContain('value="no-such-branch"')
    const bad = await alice.post("/alice/garden/releases/new", { tag_name: "bad..tag", tag_target: "main" }, csrf)
    expect(bad.status).toBe(422)
    expect(bad.text).toContain('data-testid="error-tag_name">')
    const tags = (await releasesOf("alice/garden")).map((r) => r.tag_name)
    expect(tags).not.toContain("v9")
    expect(tags).not.toContain("bad..tag")
  })

  it("upload a file (multipart, CSRF checked before it is stored), link one, and remove them", async () => {
    const alice = await as("alice")
    const edit = await alice.get("/alice/garden/releases/edit/v1.0")
    const csrf = csrfOf(edit.text)
    const id = (await releasesOf("alice/garden")).find((r) => r.tag_name === "v1.0")!.id
    const file = () => {
      const form = new FormData()
      form.append("_csrf", csrf)
      form.append("attachment", new Blob([Buffer.alloc(3000, 1)]), "bloom.tar")
      form.append("name", "")
      return form
    }
    // Without the token (or with a wrong one): a 400 page, nothing stored.
    const forged = file()
    forged.delete("_csrf")
    expect((await upload(alice, `/alice/garden/releases/attachments/${id}`, forged)).status).toBe(400)
    const wrong = file()
    wrong.set("_csrf", "nope")
    expect((await upload(alice, `/alice/garden/releases/attachments/${id}`, wrong)).status).toBe(400)
    expect((await api("GET", `/repos/alice/garden/releases/${id}/assets`, "alice")).length).toBe(0)
    // A reader may not upload.
    const carol = await as("carol")
    const form = file()
    form.set("_csrf", csrfOf((await carol.get("/alice/vault/releases")).text))
    const vault = (await releasesOf("alice/vault"))[0]!.id
    expect((await upload(carol, `/alice/vault/releases/attachments/${vault}`, form)).status).toBe(403)

    const done = await upload(alice, `/alice/garden/releases/attachments/${id}`, file())
    expect(done.status).toBe(303)
    expect(done.location).toBe("/alice/garden/releases/edit/v1.0?done=uploaded")
    const link = new FormData()
    link.append("_csrf", csrf)
    link.append("external_url", "https://mirror.example/bloom.zip")
    link.append("name", "Mirror")
    expect((await upload(alice, `/alice/garden/releases/attachments/${id}`, link)).status).toBe(303)
    const badLink = new FormData()
    badLink.append("_csrf", csrf)
    badLink.append("external_url", "ftp://nope")
    const refused = await upload(alice, `/alice/garden/releases/attachments/${id}`, badLink)
    expect(refused.status).toBe(400)
    expect(refused.text).toContain('data-testid="error-external_url">invalid external URL')
    expect(refused.text).toContain('value="ftp://nope"')
    const stored = (await api("GET", `/repos/alice/garden/releases/${id}/assets`, "alice")) as Array<any>
    expect(stored.map((a) => [a.name, a.size, a.type])).toEqual([
      ["bloom.tar", 3000, "attachment"],
      ["Mirror", 0, "external"]
    ])
    const page = await web().get("/alice/garden/releases/tag/v1.0")
    expect(page.text).toContain(">bloom.tar</a>")
    expect(page.text).toContain("2.9 KiB")
    expect(page.text).toContain('href="https://mirror.example/bloom.zip" rel="nofollow noopener noreferrer">Mirror</a>')
    const download = await fetch(stored[0].browser_download_url)
    expect(download.status).toBe(200)
    expect((await download.arrayBuffer()).byteLength).toBe(3000)

    // Remove both with the edit page's buttons.
    const shown = await alice.get("/alice/garden/releases/edit/v1.0")
    expect(shown.text).toContain('aria-label="Remove bloom.tar"')
    for (const asset of stored) {
      const res = await alice.post(
        `/alice/garden/releases/attachments/${id}/remove`,
        { asset: String(asset.id) },
        csrfOf(shown.text)
      )
      expect(res.status).toBe(303)
    }
    expect((await api("GET", `/repos/alice/garden/releases/${id}/assets`, "alice")).length).toBe(0)
  })

  it("delete a release (confirmed), keeping its tag", async () => {
    const alice = await as("alice")
    await release("alice/garden", { tag_name: "gone", name: "To delete" })
    const edit = await alice.get("/alice/garden/releases/edit/gone")
    expect(edit.text).toMatch(/<details[^>]*data-testid="delete-release">[\s\S]*Yes, delete this release/)
    const id = (await releasesOf("alice/garden")).find((r) => r.tag_name === "gone")!.id
    expect((await alice.post("/alice/garden/releases/delete", { id: String(id) }, undefined)).status).toBe(400)
    expect((await releasesOf("alice/garden")).some((r) => r.tag_name === "gone")).toBe(true)
    const res = await alice.post("/alice/garden/releases/delete", { id: String(id) }, csrfOf(edit.text))
    expect(res.status).toBe(303)
    expect(res.location).toBe("/alice/garden/releases")
    expect((await releasesOf("alice/garden")).some((r) => r.tag_name === "gone")).toBe(false)
    expect((await request(hearth, "GET", "/repos/alice/garden/tags/gone", basic("alice"))).status).toBe(200)
    expect((await alice.get("/alice/garden/releases/tag/gone")).status).toBe(404)
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("titles and notes are text or sanitized markdown on the list, the release and the edit page", async () => {
    await api("POST", "/user/repos", "alice", { name: "hostile", auto_init: true, readme: "Default" })
    for (let i = 0; i < corpus.length; i += 12) {
      await release("alice/hostile", {
        tag_name: `x${i}`,
        name: corpus[i]!.slice(0, 200),
        body: corpus.slice(i, i + 12).join("\n\n")
      })
    }
    const alice = await as("alice")
    const pages = ["/alice/hostile/releases", "/alice/hostile/releases?page=2", "/alice/hostile/releases/tag/x0"]
    for (const path of pages) {
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(executableInRendered(page.text), path).toEqual([])
    }
    for (const path of ["/alice/hostile/releases/edit/x0", "/alice/hostile/releases/edit/x12"]) {
      const page = await alice.get(path)
      expect(page.status, path).toBe(200)
      expect(executableInRendered(page.text), path).toEqual([])
    }
    const list = await web().get("/alice/hostile/releases/tag/x0")
    expect(list.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;</h1>")
  }, 60_000)
})

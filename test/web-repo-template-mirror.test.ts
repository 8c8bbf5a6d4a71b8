// Issue 17's last repository actions over plain HTTP: a repository made a template from the new
// repository form or its settings; "Use this template" (Forgejo's `/repo/create?template_id={id}`)
// making a repository through the API's generator with the items chosen, refusals next to their
// field, 404 for a template one may not see; and a pull mirror's "Convert to a regular repository"
// in the settings' danger zone, through the API's MirrorsService.convert and its rule (the owner's:
// 403 for an admin collaborator, 404 for a stranger to a private mirror), confirmed by the full
// name, CSRF checked.
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"

let hearth: Hearth
let alice: WebClient
let bob: WebClient
let carol: WebClient
const ids: Record<string, number> = {}

beforeAll(async () => {
  hearth = await startHearth({ migrations: { ALLOW_LOCALNETWORKS: "true" } })
  for (const username of ["alice", "bob", "carol"]) ids[username] = (await createUser(hearth, { username })).id
  ;[alice, bob, carol] = await Promise.all(["alice", "bob", "carol"].map((name) => signedIn(hearth.base, name)))
  await apiAs(hearth, "POST", "/user/repos", "alice", {
    name: "starter",
    description: "A starter",
    auto_init: true,
    template: true
  })
  await apiAs(hearth, "PUT", "/repos/alice/starter/topics", "alice", { topics: ["starter", "kit"] })
  await apiAs(hearth, "POST", "/repos/alice/starter/labels", "alice", { name: "bug", color: "#ee0701" })
  const picture = await sharp({ create: { width: 64, height: 64, channels: 3, background: "#3366cc" } })
    .png()
    .toBuffer()
  await apiAs(hearth, "POST", "/repos/alice/starter/avatar", "alice", { image: picture.toString("base64") })
  await apiAs(hearth, "POST", "/user/repos", "alice", {
    name: "secret-tpl",
    auto_init: true,
    template: true,
    private: true
  })
  await apiAs(hearth, "POST", "/user/repos", "alice", { name: "plain", auto_init: true })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

const repoId = async (full: string) => (await apiAs(hearth, "GET", `/repos/${full}`, "alice")).id as number

/** Bob's POST of the template form: the given template's content into `bob/{name}`. */
const generateAsBob = (template: number, name: string, csrf: string | undefined) =>
  bob.post(
    "/repo/create",
    { repo_template: String(template), uid: String(ids.bob), repo_name: name, git_content: "on" },
    csrf
  )

describe("use this template", () => {
  it("a template's home offers it; the form makes the repository with the items chosen", async () => {
    const id = await repoId("alice/starter")
    const home = await bob.get("/alice/starter")
    expect(home.text).toMatch(new RegExp(`href="/repo/create\\?template_id=${id}" data-testid="use-template"`))
    expect((await bob.get("/alice/plain")).text).not.toContain('data-testid="use-template"')
    // An empty template offers it too (its topics, labels and settings can be copied).
    await apiAs(hearth, "POST", "/user/repos", "alice", { name: "empty-tpl", template: true })
    const emptyId = await repoId("alice/empty-tpl")
    expect((await bob.get("/alice/empty-tpl")).text).toContain(`href="/repo/create?template_id=${emptyId}"`)

    const form = await bob.get(`/repo/create?template_id=${id}`)
    expect(form.status).toBe(200)
    expect(form.text).toContain('data-testid="repo-generate-form"')
    expect(form.text).toContain('href="/alice/starter">alice/starter</a>')
    // Every item is offered and checked at first.
    for (const item of ["git_content", "topics", "avatar", "labels", "webhooks", "protected_branch"]) {
      expect(form.text).toMatch(new RegExp(`name="${item}" value="on" checked`))
    }
    const made = await bob.post(
      "/repo/create",
      {
        repo_template: String(id),
        uid: String(ids.bob),
        repo_name: "from-starter",
        description: "Mine",
        git_content: "on",
        topics: "on",
        avatar: "on"
      },
      csrfOf(form.text)
    )
    expect(made.status).toBe(303)
    expect(made.location).toBe("/bob/from-starter")
    const repo = await apiAs(hearth, "GET", "/repos/bob/from-starter", "bob")
    expect(repo).toMatchObject({ description: "Mine", private: false, empty: false, template: false })
    expect(repo.topics).toEqual(["kit", "starter"])
    // The avatar is the template's picture (the same stored file).
    const template = await apiAs(hearth, "GET", "/repos/alice/starter", "bob")
    expect(template.avatar_url).not.toBe("")
    expect(repo.avatar_url).toBe(template.avatar_url)
    // Labels were not chosen: none copied. The git content was: the README is there.
    expect(await apiAs(hearth, "GET", "/repos/bob/from-starter/labels", "bob")).toEqual([])
    expect((await request(hearth, "GET", "/repos/bob/from-starter/contents/README.md", basic("bob"))).status).toBe(200)
  })

  it("refuses a taken name, no items and an owner not offered next to the field, keeping what was typed", async () => {
    const id = await repoId("alice/starter")
    const page = `/repo/create?template_id=${id}`
    const send = (fields: Record<string, string>) =>
      bob.submit(page, { repo_template: String(id), uid: String(ids.bob), ...fields }, "/repo/create")

    const taken = await send({ repo_name: "from-starter", description: "typed here", labels: "on" })
    expect(taken.status).toBe(422)
    expect(taken.text).toContain('data-testid="error-repo_name"')
    expect(taken.text).toContain("typed here</textarea>")
    expect(taken.text).toMatch(/name="labels" value="on" checked/)
    expect(taken.text).not.toMatch(/name="topics" value="on" checked/)

    const none = await send({ repo_name: "nothing-chosen" })
    expect(none.status).toBe(422)
    expect(none.text).toMatch(/data-testid="error-items">must select at least one template item/)
    expect(none.text).toContain('value="nothing-chosen"')

    const elsewhere = await send({ repo_name: "in-carols", uid: String(ids.carol), git_content: "on" })
    expect(elsewhere.status).toBe(422)
    expect(elsewhere.text).toContain('data-testid="error-uid"')
    for (const full of ["bob/nothing-chosen", "carol/in-carols", "bob/in-carols"]) {
      expect((await request(hearth, "GET", `/repos/${full}`, basic("bob"))).status).toBe(404)
    }
  })

  it("a template one may not see, or a repository that is no template, is the 404 page", async () => {
    const secret = await repoId("alice/secret-tpl")
    const plain = await repoId("alice/plain")
    expect((await alice.get(`/repo/create?template_id=${secret}`)).status).toBe(200)
    const hidden = await bob.get(`/repo/create?template_id=${secret}`)
    expect(hidden.status).toBe(404)
    expect(hidden.text).toContain("Page not found")
    expect((await bob.get(`/repo/create?template_id=${plain}`)).status).toBe(404)
    expect((await bob.get("/repo/create?template_id=99999999")).status).toBe(404)
    expect((await bob.get("/repo/create?template_id=x")).status).toBe(404)

    // A forged POST with the hidden template's id makes nothing.
    const csrf = csrfOf((await bob.get("/repo/create")).text)
    const forged = await generateAsBob(secret, "stolen", csrf)
    expect(forged.status).toBe(404)
    expect((await request(hearth, "GET", "/repos/bob/stolen", basic("bob"))).status).toBe(404)
    // A repository that is no template: the generator's refusal, nothing made.
    const notTemplate = await generateAsBob(plain, "from-plain", csrf)
    expect(notTemplate.status).toBe(422)
    expect(notTemplate.text).toContain("alice/plain is not a template repository")
    expect((await request(hearth, "GET", "/repos/bob/from-plain", basic("bob"))).status).toBe(404)
  })

  it("asks visitors to sign in, and refuses a form without its CSRF token", async () => {
    const id = await repoId("alice/starter")
    const visitor = await new WebClient(hearth.base).get(`/repo/create?template_id=${id}`)
    expect(visitor.status).toBe(302)
    expect(visitor.location).toMatch(/^\/user\/login\?redirect_to=/)
    const forged = await generateAsBob(id, "no-csrf", undefined)
    expect(forged.status).toBe(400)
    expect((await request(hearth, "GET", "/repos/bob/no-csrf", basic("bob"))).status).toBe(404)
  })
})

describe("making a template", () => {
  it("the new repository form and the settings' options mark a repository as a template, and unmark it", async () => {
    const made = await bob.submit("/repo/create", {
      uid: String(ids.bob),
      repo_name: "blueprint",
      auto_init: "on",
      template: "on"
    })
    expect(made.status).toBe(303)
    expect((await apiAs(hearth, "GET", "/repos/bob/blueprint", "bob")).template).toBe(true)
    expect((await bob.get("/bob/blueprint")).text).toContain('data-testid="use-template"')
    const page = await bob.get("/bob/blueprint/settings")
    expect(page.text).toMatch(/name="template" value="on" checked/)
    const off = await bob.submit("/bob/blueprint/settings", {
      action: "update",
      repo_name: "blueprint",
      default_branch: "main"
    })
    expect(off.status).toBe(303)
    expect((await apiAs(hearth, "GET", "/repos/bob/blueprint", "bob")).template).toBe(false)
    expect((await bob.get("/bob/blueprint")).text).not.toContain('data-testid="use-template"')
    const on = await bob.submit("/bob/blueprint/settings", {
      action: "update",
      repo_name: "blueprint",
      default_branch: "main",
      template: "on"
    })
    expect(on.status).toBe(303)
    expect((await apiAs(hearth, "GET", "/repos/bob/blueprint", "bob")).template).toBe(true)
  })
})

describe("convert a mirror to a regular repository", () => {
  const mirror = async (name: string, extra: Record<string, unknown> = {}) => {
    const res = await request(hearth, "POST", "/repos/migrate", basic("bob"), {
      clone_addr: `${hearth.base}/alice/plain.git`,
      repo_name: name,
      mirror: true,
      ...extra
    })
    expect(res.status, await res.clone().text()).toBe(201)
  }

  it("the owner converts after typing the full name; the mirror then takes pushes and syncs no more", async () => {
    await mirror("copy")
    await apiAs(hearth, "PUT", "/repos/bob/copy/collaborators/carol", "bob", { permission: "admin" })
    const page = await bob.get("/bob/copy/settings")
    expect(page.text).toContain('data-testid="danger-convert"')
    expect(page.text).not.toContain('data-testid="danger-archive"')
    // An admin collaborator sees the settings but not the form, and a forged POST is refused.
    const admin = await carol.get("/bob/copy/settings")
    expect(admin.status).toBe(200)
    expect(admin.text).not.toContain('data-testid="danger-convert"')
    const forged = await carol.post(
      "/bob/copy/settings",
      { action: "convert", convert_confirm: "bob/copy" },
      csrfOf(admin.text)
    )
    expect(forged.status).toBe(403)
    expect(forged.text).toContain("Only the repository&#39;s owner may convert a mirror.")
    // Without the token: refused, nothing changes.
    expect(
      (await bob.post("/bob/copy/settings", { action: "convert", convert_confirm: "bob/copy" }, undefined)).status
    ).toBe(400)

    const wrong = await bob.submit("/bob/copy/settings", { action: "convert", convert_confirm: "copy" })
    expect(wrong.status).toBe(422)
    expect(wrong.text).toMatch(/data-testid="error-convert_confirm">Type the repository&#39;s full name/)
    expect((await apiAs(hearth, "GET", "/repos/bob/copy", "bob")).mirror).toBe(true)

    const done = await bob.submit("/bob/copy/settings", { action: "convert", convert_confirm: "bob/copy" })
    expect(done.status).toBe(303)
    expect(done.location).toBe("/bob/copy/settings?done=converted")
    expect((await apiAs(hearth, "GET", "/repos/bob/copy", "bob")).mirror).toBe(false)
    const after = await bob.get(done.location!)
    expect(after.text).toContain("The mirror is now a regular repository")
    expect(after.text).not.toContain('data-testid="danger-convert"')
    expect(after.text).toContain('data-testid="danger-archive"')
    // Writable now, as the API's convert leaves it; a sync is refused.
    const file = await request(hearth, "POST", "/repos/bob/copy/contents/new.txt", basic("bob"), {
      content: Buffer.from("new\n").toString("base64")
    })
    expect(file.status).toBe(201)
    expect((await request(hearth, "POST", "/repos/bob/copy/mirror-sync", basic("bob"))).status).toBe(400)
    // Converting what is no mirror (a stale form): the service's refusal on the page.
    const again = await bob.post(
      "/bob/copy/settings",
      { action: "convert", convert_confirm: "bob/copy" },
      csrfOf(after.text)
    )
    expect(again.status).toBe(422)
    expect(again.text).toContain("Repository is not a mirror")
  })

  it("a private mirror is the 404 page for a stranger, and stays a mirror", async () => {
    await mirror("hidden-copy", { private: true })
    const csrf = csrfOf((await carol.get("/")).text)
    const res = await carol.post(
      "/bob/hidden-copy/settings",
      { action: "convert", convert_confirm: "bob/hidden-copy" },
      csrf
    )
    expect(res.status).toBe(404)
    expect((await apiAs(hearth, "GET", "/repos/bob/hidden-copy", "bob")).mirror).toBe(true)
  })
})

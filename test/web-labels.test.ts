// Issue 22, labels and milestones in the browser over plain HTTP (the browser test is
// web-labels-browser.test.ts): `/{owner}/{repo}/labels` (list, archived apart, create/edit/delete
// for writers with Forgejo's form messages next to the field and the input kept) and
// `/{owner}/{repo}/milestones` (open/closed, progress from the issue counts, new/edit/close/reopen/
// delete); who may see (404) and change (403, no controls); changes read back through the API; the
// XSS corpus in names and descriptions.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const labelsOf = async (repo: string) =>
  (await api("GET", `/repos/${repo}/labels?limit=50`, "alice")) as Array<Record<string, any>>
const milestonesOf = async (repo: string, state = "all") =>
  (await api("GET", `/repos/${repo}/milestones?state=${state}&limit=50`, "alice")) as Array<Record<string, any>>

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/vault/collaborators/bob", "alice", { permission: "write" })
  await api("PUT", "/repos/alice/vault/collaborators/carol", "alice", { permission: "read" })
  await api("POST", "/repos/alice/garden/labels", "alice", { name: "bug", color: "ee0701", description: "Broken" })
  await api("POST", "/repos/alice/garden/labels", "alice", { name: "kind/feature", color: "00aabb", exclusive: true })
  await api("POST", "/repos/alice/garden/labels", "alice", { name: "old", color: "cccccc", is_archived: true })
  await api("POST", "/repos/alice/vault/labels", "alice", { name: "secret", color: "123456" })
  // A milestone with two issues, one of them closed: 50% complete.
  const m = await api("POST", "/repos/alice/garden/milestones", "alice", {
    title: "Spring",
    description: "Planting",
    due_on: "2031-03-20T12:00:00Z"
  })
  await api("POST", "/repos/alice/garden/milestones", "alice", { title: "Winter", state: "closed" })
  await api("POST", "/repos/alice/garden/issues", "alice", { title: "one", milestone: m.id })
  const two = await api("POST", "/repos/alice/garden/issues", "alice", { title: "two", milestone: m.id })
  await api("PATCH", `/repos/alice/garden/issues/${two.number}`, "alice", { state: "closed" })
  await api("POST", "/repos/alice/vault/milestones", "alice", { title: "Hidden" })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

describe("the labels page", () => {
  it("lists the labels, archived ones apart, with no controls for a visitor", async () => {
    const page = await web().get("/alice/garden/labels")
    expect(page.status).toBe(200)
    const [active, archived] = page.text.split('data-testid="archived-label-list"')
    expect(active).toContain('data-testid="label-name">')
    expect(active).toMatch(/fill="#ee0701"><\/circle><\/svg>bug</)
    expect(active).toContain('data-testid="label-description">Broken<')
    expect(active).toMatch(/kind\/feature<\/span>\s*<span[^>]*data-testid="label-exclusive"/)
    expect(active).not.toContain(">old<")
    expect(archived).toContain("old</span>")
    expect(page.text).toContain('data-testid="label-count">3<')
    expect(page.text).not.toContain('data-testid="new-label"')
    expect(page.text).not.toContain('data-testid="edit-label"')
    expect(page.text).not.toContain("/labels/delete")
  })

  it("a private repository's labels: 404 for strangers, read-only for a reader, changeable by a writer", async () => {
    expect((await web().get("/alice/vault/labels")).status).toBe(404)
    const dave = await as("dave")
    expect((await dave.get("/alice/vault/labels")).status).toBe(404)
    const daveCsrf = csrfOf((await dave.get("/alice/garden/labels")).text)
    expect((await dave.post("/alice/vault/labels/new", { title: "x", color: "#000000" }, daveCsrf)).status).toBe(404)
    const carol = await as("carol")
    const read = await carol.get("/alice/vault/labels")
    expect(read.status).toBe(200)
    expect(read.text).toContain("secret</span>")
    expect(read.text).not.toContain('data-testid="new-label"')
    const csrf = csrfOf(read.text)
    const [secret] = await labelsOf("alice/vault")
    expect((await carol.post("/alice/vault/labels/new", { title: "carol", color: "#000000" }, csrf)).status).toBe(403)
    const edit = { id: String(secret!.id), title: "carol", color: "#000000" }
    expect((await carol.post("/alice/vault/labels/edit", edit, csrf)).status).toBe(403)
    expect((await carol.post("/alice/vault/labels/delete", { id: String(secret!.id) }, csrf)).status).toBe(403)
    expect((await labelsOf("alice/vault")).map((l) => l.name)).toEqual(["secret"])
    const bob = await as("bob")
    expect((await bob.get("/alice/vault/labels")).text).toContain('data-testid="new-label"')
  })

  it("a writer creates, edits, archives and deletes a label", async () => {
    const alice = await as("alice")
    const created = await alice.submit(
      "/alice/garden/labels",
      {
        title: "  docs  ",
        color: "#ABC",
        description: "Words",
        exclusive: "on"
      },
      "/alice/garden/labels/new"
    )
    expect(created.status).toBe(303)
    expect(created.location).toBe("/alice/garden/labels")
    const docs = (await labelsOf("alice/garden")).find((l) => l.name === "docs")!
    expect(docs).toMatchObject({ color: "aabbcc", description: "Words", exclusive: true, is_archived: false })

    const edited = await alice.submit(
      "/alice/garden/labels",
      { id: String(docs.id), title: "documentation", color: "#112233", description: "", archived: "on" },
      "/alice/garden/labels/edit"
    )
    expect(edited.status).toBe(303)
    const after = (await labelsOf("alice/garden")).find((l) => l.id === docs.id)!
    // Unchecked exclusive is false: the form sends every field.
    expect(after).toMatchObject({
      name: "documentation",
      color: "112233",
      description: "",
      exclusive: false,
      is_archived: true
    })

    const deleted = await alice.submit("/alice/garden/labels", { id: String(docs.id) }, "/alice/garden/labels/delete")
    expect(deleted.status).toBe(303)
    expect((await labelsOf("alice/garden")).some((l) => l.id === docs.id)).toBe(false)
  })

  it("refuses a bad label with Forgejo's message next to the field, keeping what was typed", async () => {
    const alice = await as("alice")
    const before = (await labelsOf("alice/garden")).length
    const empty = await alice.submit(
      "/alice/garden/labels",
      { title: " ", color: "#00ff00", description: "kept" },
      "/alice/garden/labels/new"
    )
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-title">Label name cannot be empty.<')
    expect(empty.text).toContain('value="kept"')
    expect(empty.text).toMatch(/ open data-testid="new-label"/)

    const long = await alice.submit(
      "/alice/garden/labels",
      { title: "x".repeat(51), color: "#00ff00" },
      "/alice/garden/labels/new"
    )
    expect(long.status).toBe(422)
    expect(long.text).toContain('data-testid="error-title">Label name must contain at most 50 characters.<')

    const noColor = await alice.submit(
      "/alice/garden/labels",
      { title: "nocolor", color: "" },
      "/alice/garden/labels/new"
    )
    expect(noColor.text).toContain('data-testid="error-color">Color cannot be empty.<')

    const badColor = await alice.submit(
      "/alice/garden/labels",
      { title: "badcolor", color: "#12345g" },
      "/alice/garden/labels/new"
    )
    expect(badColor.status).toBe(422)
    expect(badColor.text).toContain('data-testid="error-color">bad color code: #12345g<')
    expect(badColor.text).toContain('value="badcolor"')

    // On an edit form: the error in that label's form, which is opened.
    const bug = (await labelsOf("alice/garden")).find((l) => l.name === "bug")!
    const edit = await alice.submit(
      "/alice/garden/labels",
      { id: String(bug.id), title: "bug", color: "nope" },
      "/alice/garden/labels/edit"
    )
    expect(edit.status).toBe(422)
    const form = edit.text.split(`id="label-${bug.id}"`)[1]!
    expect(form).toMatch(/ open data-testid="edit-label"/)
    expect(form).toContain('data-testid="error-color">bad color code: #nope<')
    expect((await labelsOf("alice/garden")).length).toBe(before)
    expect((await labelsOf("alice/garden")).find((l) => l.id === bug.id)!.color).toBe("ee0701")
  })

  it("shows hostile names and descriptions as text", async () => {
    await api("POST", "/user/repos", "alice", { name: "xss-labels", auto_init: true, readme: "Default" })
    for (const [i, text] of corpus.entries())
      await api("POST", "/repos/alice/xss-labels/labels", "alice", {
        name: text.slice(0, 50),
        color: "000000",
        description: `${i} ${text}`
      })
    const alice = await as("alice")
    const page = await alice.get("/alice/xss-labels/labels")
    expect(page.status).toBe(200)
    expect(executable(page.text)).toEqual([])
  }, 60_000)
})

describe("the milestones page", () => {
  it("lists open milestones with their progress, closed ones on their tab", async () => {
    const page = await web().get("/alice/garden/milestones")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="milestone-title">')
    expect(page.text).toMatch(/milestone-title">[\s\S]*?Spring</)
    expect(page.text).not.toMatch(/milestone-title">[\s\S]*?Winter</)
    expect(page.text).toContain('data-testid="milestone-progress">50% complete<')
    expect(page.text).toContain('<progress class="width-full" max="2" value="1"')
    expect(page.text).toContain('data-testid="milestone-open">1 open<')
    expect(page.text).toContain('data-testid="milestone-closed">1 closed<')
    expect(page.text).toContain('datetime="2031-03-20T12:00:00Z"')
    expect(page.text).toContain('data-testid="state-open">1 Open<')
    expect(page.text).toContain('data-testid="state-closed">1 Closed<')
    expect(page.text).not.toContain('data-testid="new-milestone"')
    expect(page.text).not.toContain('data-testid="edit-milestone"')
    const closed = await web().get("/alice/garden/milestones?state=closed")
    expect(closed.text).toMatch(/milestone-title">[\s\S]*?Winter</)
    expect(closed.text).not.toMatch(/milestone-title">[\s\S]*?Spring</)
  })

  it("a private repository's milestones: 404 for strangers, read-only for a reader", async () => {
    expect((await web().get("/alice/vault/milestones")).status).toBe(404)
    const dave = await as("dave")
    expect((await dave.get("/alice/vault/milestones")).status).toBe(404)
    expect((await dave.get("/alice/vault/milestones/new")).status).toBe(404)
    const carol = await as("carol")
    const read = await carol.get("/alice/vault/milestones")
    expect(read.status).toBe(200)
    expect(read.text).toContain("Hidden<")
    expect(read.text).not.toContain('data-testid="new-milestone"')
    expect((await carol.get("/alice/vault/milestones/new")).status).toBe(403)
    const [hidden] = await milestonesOf("alice/vault")
    expect((await carol.get(`/alice/vault/milestones/${hidden!.id}/edit`)).status).toBe(403)
    const csrf = csrfOf(read.text)
    expect((await carol.post("/alice/vault/milestones/new", { title: "carol" }, csrf)).status).toBe(403)
    expect((await carol.post(`/alice/vault/milestones/${hidden!.id}/close`, {}, csrf)).status).toBe(403)
    expect((await carol.post("/alice/vault/milestones/delete", { id: String(hidden!.id) }, csrf)).status).toBe(403)
    expect((await milestonesOf("alice/vault")).map((m) => [m.title, m.state])).toEqual([["Hidden", "open"]])
    const bob = await as("bob")
    expect((await bob.get("/alice/vault/milestones/new")).status).toBe(200)
    // A visitor is asked to sign in to make one.
    const visitor = await web().get("/alice/garden/milestones/new")
    expect(visitor.status).toBe(302)
    expect(visitor.location).toBe("/user/login?redirect_to=%2Falice%2Fgarden%2Fmilestones%2Fnew")
  })

  it("a writer creates, edits, closes, reopens and deletes a milestone", async () => {
    const alice = await as("alice")
    const created = await alice.submit("/alice/garden/milestones/new", {
      title: " Summer ",
      content: "Sun",
      deadline: "2031-07-01"
    })
    expect(created.status).toBe(303)
    expect(created.location).toBe("/alice/garden/milestones")
    const summer = (await milestonesOf("alice/garden")).find((m) => m.title === "Summer")!
    expect(summer).toMatchObject({ description: "Sun", state: "open", due_on: "2031-07-01T23:59:59Z" })

    const form = await alice.get(`/alice/garden/milestones/${summer.id}/edit`)
    expect(form.status).toBe(200)
    expect(form.text).toContain('value="2031-07-01"')
    const edited = await alice.submit(`/alice/garden/milestones/${summer.id}/edit`, {
      title: "High summer",
      content: "More sun",
      deadline: "2031-08-15"
    })
    expect(edited.status).toBe(303)
    expect((await api("GET", `/repos/alice/garden/milestones/${summer.id}`, "alice")) as any).toMatchObject({
      title: "High summer",
      description: "More sun",
      due_on: "2031-08-15T23:59:59Z"
    })

    const close = await alice.submit("/alice/garden/milestones", {}, `/alice/garden/milestones/${summer.id}/close`)
    expect(close.status).toBe(303)
    expect(close.location).toBe("/alice/garden/milestones?state=closed")
    expect(((await api("GET", `/repos/alice/garden/milestones/${summer.id}`, "alice")) as any).state).toBe("closed")
    const closedPage = await alice.get("/alice/garden/milestones?state=closed")
    expect(closedPage.text).toContain(`action="/alice/garden/milestones/${summer.id}/open"`)
    const reopen = await alice.submit(
      "/alice/garden/milestones?state=closed",
      {},
      `/alice/garden/milestones/${summer.id}/open`
    )
    expect(reopen.status).toBe(303)
    expect(((await api("GET", `/repos/alice/garden/milestones/${summer.id}`, "alice")) as any).state).toBe("open")

    const deleted = await alice.submit(
      "/alice/garden/milestones",
      { id: String(summer.id) },
      "/alice/garden/milestones/delete"
    )
    expect(deleted.status).toBe(303)
    expect((await milestonesOf("alice/garden")).some((m) => m.id === summer.id)).toBe(false)
    expect((await alice.get(`/alice/garden/milestones/${summer.id}/edit`)).status).toBe(404)
  })

  it("refuses a bad milestone with Forgejo's message next to the field, keeping what was typed", async () => {
    const alice = await as("alice")
    const before = (await milestonesOf("alice/garden")).length
    const empty = await alice.submit("/alice/garden/milestones/new", { title: "", content: "kept text", deadline: "" })
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-title">Title cannot be empty.<')
    expect(empty.text).toContain(">kept text</textarea>")
    const long = await alice.submit("/alice/garden/milestones/new", { title: "y".repeat(51), content: "" })
    expect(long.text).toContain('data-testid="error-title">Title must contain at most 50 characters.<')
    const date = await alice.submit("/alice/garden/milestones/new", {
      title: "Dated",
      content: "",
      deadline: "2031-02-30"
    })
    expect(date.status).toBe(422)
    expect(date.text).toContain(`data-testid="error-deadline">Due date format must be &#39;yyyy-mm-dd&#39;.<`)
    expect(date.text).toContain('value="Dated"')
    expect((await milestonesOf("alice/garden")).length).toBe(before)
  })

  it("shows hostile titles and descriptions as text", async () => {
    await api("POST", "/user/repos", "alice", { name: "xss-milestones", auto_init: true, readme: "Default" })
    for (const text of corpus)
      await api("POST", "/repos/alice/xss-milestones/milestones", "alice", { title: text, description: text })
    const alice = await as("alice")
    for (let page = 1; page <= Math.ceil(corpus.length / 10); page++) {
      const res = await alice.get(`/alice/xss-milestones/milestones?page=${page}`)
      expect(res.status).toBe(200)
      expect(executable(res.text)).toEqual([])
    }
  }, 60_000)
})

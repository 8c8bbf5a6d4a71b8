// Issue 22, issues in the browser over plain HTTP (the browser test is web-issues-browser.test.ts):
// the list (Forgejo's query parameters: state, labels, milestone, poster, assignee, q, sort, page;
// open/closed counts; label chips), the issue page (its timeline: rendered comments, label,
// milestone, assignee, title, close/reopen and reference events, reaction counts), the comment
// form (kept input and the error next to the field, close/reopen for the poster and writers only,
// 403 for others, CSRF), the htmx preview, a pull request's index redirecting to /pulls/{index};
// the new-issue form (title required, markdown templates, YAML forms as fields, an archived
// repository: 423); who sees what (a private repository's stranger, a disabled issues unit:
// 404); the XSS corpus in titles and comments.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const issue = (repo: string, user: string, body: Record<string, unknown>) =>
  api("POST", `/repos/${repo}/issues`, user, body) as Promise<{ number: number; id: number }>

const escaped = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

const titlesOf = (text: string) => [...text.matchAll(/data-testid="issue-title">([^<]*)</g)].map((m) => m[1])

let bugId = 0
let docsId = 0
let milestoneId = 0
let bobId = 0
let pullIndex = 0

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  bobId = (await api("GET", "/user", "bob")).id
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/garden/collaborators/bob", "alice", { permission: "write" })
  bugId = (await api("POST", "/repos/alice/garden/labels", "alice", { name: "bug", color: "#d73a4a" })).id
  docsId = (await api("POST", "/repos/alice/garden/labels", "alice", { name: "docs", color: "#0075ca" })).id
  milestoneId = (await api("POST", "/repos/alice/garden/milestones", "alice", { title: "v1.0" })).id

  // #1 by alice, labelled bug, in v1.0, assigned to bob; #2 by carol; #3 by bob, closed.
  await issue("alice/garden", "alice", {
    title: "Roses wilt",
    body: "They **wilt** in June. cc @bob",
    labels: [bugId],
    milestone: milestoneId,
    assignees: ["bob"]
  })
  await issue("alice/garden", "carol", { title: "Tulips need docs", body: "" })
  await api("POST", "/repos/alice/garden/issues/2/comments", "alice", { body: "First reply" })
  await api("POST", "/repos/alice/garden/issues/2/comments", "bob", { body: "Second reply" })
  await api("POST", "/repos/alice/garden/issues/2/labels", "alice", { labels: [docsId] })
  await issue("alice/garden", "bob", { title: "Fence broken", body: "Mended. See #1" })
  await api("PATCH", "/repos/alice/garden/issues/3", "bob", { state: "closed" })
  // Timeline events on #1: a comment with a reaction, a title change, a reference from #3 (made above).
  const comment = await api("POST", "/repos/alice/garden/issues/1/comments", "bob", {
    body: "Same here: _every_ year."
  })
  await api("POST", `/repos/alice/garden/issues/comments/${comment.id}/reactions`, "carol", { content: "+1" })
  await api("POST", "/repos/alice/garden/issues/1/reactions", "carol", { content: "heart" })
  await api("POST", "/repos/alice/garden/issues/1/reactions", "bob", { content: "heart" })
  await api("PATCH", "/repos/alice/garden/issues/1", "alice", { title: "Roses wilt in June" })

  // A pull request (#4): a branch made through the contents API.
  const repo = await api("GET", "/repos/alice/garden", "alice")
  await api("POST", "/repos/alice/garden/contents/feature.txt", "alice", {
    content: Buffer.from("feature\n").toString("base64"),
    message: "feature",
    branch: repo.default_branch,
    new_branch: "feature"
  })
  pullIndex = (
    await api("POST", "/repos/alice/garden/pulls", "alice", {
      head: "feature",
      base: repo.default_branch,
      title: "Add feature"
    })
  ).number

  await issue("alice/vault", "alice", { title: "Secret plans", body: "" })
  // A repository whose issues unit is off.
  await api("POST", "/user/repos", "alice", { name: "quiet", auto_init: true, readme: "Default" })
  await issue("alice/quiet", "alice", { title: "Hushed", body: "" })
  await api("PATCH", "/repos/alice/quiet", "alice", { has_issues: false })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

describe("the issues list", () => {
  it("shows the open issues newest first, the counts, label chips, and not the pull requests", async () => {
    const page = await web().get("/alice/garden/issues")
    expect(page.status).toBe(200)
    expect(titlesOf(page.text)).toEqual(["Tulips need docs", "Roses wilt in June"])
    expect(page.text).toContain('data-testid="count-open">2<')
    expect(page.text).toContain('data-testid="count-closed">1<')
    expect(page.text).toMatch(
      /data-testid="label-chip"[^>]*href="\/alice\/garden\/issues\?labels=\d+"><svg[^>]*><circle[^>]*fill="#d73a4a"><\/circle><\/svg>bug</
    )
    expect(page.text).toContain('href="/alice/garden/issues/1"')
    expect(page.text).not.toContain("Add feature")
    // Anonymous: no "New issue" button.
    expect(page.text).not.toContain('data-testid="new-issue"')
    expect((await (await as("dave")).get("/alice/garden/issues")).text).toContain('data-testid="new-issue"')
  })

  it("filters by state, label, milestone, poster, assignee and keyword, and sorts", async () => {
    const get = async (query: string) => titlesOf((await web().get(`/alice/garden/issues?${query}`)).text)
    expect(await get("state=closed")).toEqual(["Fence broken"])
    expect(await get("state=all")).toEqual(["Fence broken", "Tulips need docs", "Roses wilt in June"])
    expect(await get(`labels=${bugId}`)).toEqual(["Roses wilt in June"])
    expect(await get(`labels=${docsId}`)).toEqual(["Tulips need docs"])
    expect(await get(`milestone=${milestoneId}`)).toEqual(["Roses wilt in June"])
    expect(await get(`assignee=${bobId}`)).toEqual(["Roses wilt in June"])
    expect(await get(`state=all&poster=${bobId}`)).toEqual(["Fence broken"])
    expect(await get("poster=999999")).toEqual([])
    expect(await get("q=tulips")).toEqual(["Tulips need docs"])
    expect(await get("sort=oldest")).toEqual(["Roses wilt in June", "Tulips need docs"])
    expect(await get("sort=mostcomment")).toEqual(["Tulips need docs", "Roses wilt in June"])
    // The counts follow the filter.
    const filtered = await web().get(`/alice/garden/issues?labels=${bugId}`)
    expect(filtered.text).toContain('data-testid="count-open">1<')
    expect(filtered.text).toContain('data-testid="count-closed">0<')
    // The state links keep the other parameters.
    expect(filtered.text).toContain(`href="/alice/garden/issues?labels=${bugId}&amp;state=closed"`)
  })

  it("pages by 20", async () => {
    await api("POST", "/user/repos", "alice", { name: "busy", auto_init: true, readme: "Default" })
    for (let i = 1; i <= 21; i++) await issue("alice/busy", "alice", { title: `Task ${i}` })
    const first = await web().get("/alice/busy/issues")
    expect(titlesOf(first.text)).toHaveLength(20)
    expect(first.text).toContain('href="/alice/busy/issues?page=2"')
    expect(titlesOf((await web().get("/alice/busy/issues?page=2")).text)).toEqual(["Task 1"])
  }, 60_000)

  it("is the 404 page for a stranger to a private repository and for a disabled issues unit", async () => {
    expect((await web().get("/alice/vault/issues")).status).toBe(404)
    expect((await (await as("dave")).get("/alice/vault/issues")).status).toBe(404)
    expect((await (await as("dave")).get("/alice/vault/issues/1")).status).toBe(404)
    const owner = await as("alice")
    expect((await owner.get("/alice/vault/issues")).status).toBe(200)
    expect((await owner.get("/alice/quiet/issues")).status).toBe(404)
    expect((await owner.get("/alice/quiet/issues/1")).status).toBe(404)
    expect((await owner.get("/alice/quiet")).text).not.toContain('href="/alice/quiet/issues"')
  })
})

describe("an issue's page", () => {
  it("shows the issue, its rendered comments, events and reaction counts", async () => {
    const page = await web().get("/alice/garden/issues/1")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="issue-title">Roses wilt in June')
    expect(page.text).toContain("<strong>wilt</strong>")
    // The mention is a link to the account.
    expect(page.text).toMatch(/<a[^>]*href="[^"]*\/bob"[^>]*>@bob<\/a>/)
    expect(page.text).toContain("<em>every</em>")
    const events = [...page.text.matchAll(/data-testid="event" data-type="([^"]+)"/g)].map((m) => m[1])
    expect(events).toEqual(expect.arrayContaining(["label", "milestone", "assignees", "change_title", "issue_ref"]))
    expect(page.text).toContain("changed the title from <del>Roses wilt</del> to <strong>Roses wilt in June</strong>")
    expect(page.text).toMatch(/href="[^"]*\/alice\/garden\/issues\/3"/)
    // Reactions: heart 2 on the issue, +1 1 on the comment.
    expect(page.text).toMatch(
      /data-content="heart" data-testid="reaction"><span aria-hidden="true">[^<]+<\/span> <span class="Counter">2</
    )
    expect(page.text).toMatch(
      /data-content="\+1" data-testid="reaction"><span aria-hidden="true">[^<]+<\/span> <span class="Counter">1</
    )
    // The sidebar.
    expect(page.text).toMatch(/data-testid="issue-milestone">v1.0</)
    expect(page.text).toMatch(/data-testid="issue-assignees"><a[^>]*>bob</)
    // Anonymous: no form, a sign-in link.
    expect(page.text).not.toContain('data-testid="comment-form"')
    expect(page.text).toContain('data-testid="sign-in-to-comment"')
  })

  it("shows close events and the closed state", async () => {
    const page = await web().get("/alice/garden/issues/3")
    expect(page.text).toMatch(/data-testid="issue-state">[^<]*<svg[^>]*>.*<\/svg> Closed/)
    expect(page.text).toContain('data-type="close"')
  })

  it("redirects a pull request's index to /pulls/{index}, and is the 404 page for an unknown one", async () => {
    const res = await web().get(`/alice/garden/issues/${pullIndex}`)
    expect([302, 303]).toContain(res.status)
    expect(res.location).toBe(`/alice/garden/pulls/${pullIndex}`)
    expect((await web().get("/alice/garden/issues/999")).status).toBe(404)
    expect((await web().get("/alice/garden/issues/abc")).status).toBe(404)
  })
})

describe("the comment form", () => {
  it("comments as any signed-in reader; close/reopen only for the poster and writers", async () => {
    const dave = await as("dave")
    const page = await dave.get("/alice/garden/issues/2")
    expect(page.text).toContain('data-testid="comment-form"')
    expect(page.text).not.toContain('data-testid="close"')
    const res = await dave.post("/alice/garden/issues/2/comments", { content: "From **dave**" }, csrfOf(page.text))
    expect(res.status).toBe(303)
    expect(res.location).toBe("/alice/garden/issues/2")
    const comments = await api("GET", "/repos/alice/garden/issues/2/comments", "alice")
    expect(comments.at(-1).body).toBe("From **dave**")
    expect((await dave.get("/alice/garden/issues/2")).text).toContain("From <strong>dave</strong>")
    // Closing is refused to dave (not the poster, not a writer): 403, nothing changed.
    const count = (await api("GET", "/repos/alice/garden/issues/2/comments", "alice")).length
    const refused = await dave.post(
      "/alice/garden/issues/2/comments",
      { content: "Closing this", status: "close" },
      csrfOf(page.text)
    )
    expect(refused.status).toBe(403)
    expect(refused.text).toContain("may close or reopen it")
    expect(refused.text).toMatch(/<textarea[^>]*name="content"[^>]*>Closing this<\/textarea>/)
    expect((await api("GET", "/repos/alice/garden/issues/2", "alice")).state).toBe("open")
    expect((await api("GET", "/repos/alice/garden/issues/2/comments", "alice")).length).toBe(count)
    // carol posted #2: she may close it with a comment, then reopen it.
    const carol = await as("carol")
    const own = await carol.get("/alice/garden/issues/2")
    expect(own.text).toContain('data-testid="close"')
    const closed = await carol.post(
      "/alice/garden/issues/2/comments",
      { content: "Done, thanks", status: "close" },
      csrfOf(own.text)
    )
    expect(closed.status).toBe(303)
    const after = await api("GET", "/repos/alice/garden/issues/2", "alice")
    expect(after.state).toBe("closed")
    const timeline = (await api("GET", "/repos/alice/garden/issues/2/timeline", "alice")) as Array<{ type: string }>
    expect(timeline.slice(-2).map((t) => t.type)).toEqual(["comment", "close"])
    const shown = await carol.get("/alice/garden/issues/2")
    expect(shown.text).toContain('data-testid="reopen"')
    expect(
      (await carol.post("/alice/garden/issues/2/comments", { content: "", status: "reopen" }, csrfOf(shown.text)))
        .status
    ).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/2", "alice")).state).toBe("open")
  })

  it("keeps what was typed and shows the error next to the field; CSRF is required", async () => {
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/issues/1")
    const before = (await api("GET", "/repos/alice/garden/issues/1/comments", "alice")).length
    const empty = await bob.post("/alice/garden/issues/1/comments", { content: "   " }, csrfOf(page.text))
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-content"')
    expect(empty.text).toContain("Write a comment first.")
    const forged = await bob.post("/alice/garden/issues/1/comments", { content: "forged" }, undefined)
    expect(forged.status).toBe(400)
    expect((await api("GET", "/repos/alice/garden/issues/1/comments", "alice")).length).toBe(before)
    // Anonymous posting: sent to sign in.
    const anon = await web().post("/alice/garden/issues/1/comments", { content: "x" }, undefined)
    expect([303, 400]).toContain(anon.status)
  })

  it("previews markdown (htmx): the repository's rendering of the text", async () => {
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/issues/1")
    expect(page.text).toContain('hx-post="/alice/garden/markup"')
    const res = await bob.post("/alice/garden/markup", { content: "Hello **world**, see #1" }, csrfOf(page.text))
    expect(res.status).toBe(200)
    expect(res.text).toContain("<strong>world</strong>")
    expect(res.text).toMatch(/href="[^"]*\/alice\/garden\/issues\/1"/)
    expect(res.text).not.toContain("<html")
  })
})

const BUG = `---
name: Bug report
about: Something is broken
title: "[bug] "
---
## What happened?
`
const FORM = `name: Feature
description: Ask for something new
body:
  - type: markdown
    attributes:
      value: Thanks for asking!
  - type: textarea
    id: wish
    attributes:
      label: What do you wish for?
    validations:
      required: true
  - type: dropdown
    id: area
    attributes:
      label: Area
      options: [api, web]
  - type: checkboxes
    id: terms
    attributes:
      label: Terms
      options:
        - label: I searched first
`

describe("a new issue", () => {
  beforeAll(async () => {
    await api("POST", "/user/repos", "alice", { name: "tpl", auto_init: true, readme: "Default" })
    for (const [path, text] of [
      [".forgejo/issue_template/bug.md", BUG],
      [".forgejo/issue_template/feature.yaml", FORM]
    ] as const) {
      await api("POST", `/repos/alice/tpl/contents/${path}`, "alice", {
        content: Buffer.from(text).toString("base64"),
        message: `add ${path}`
      })
    }
  }, 60_000)

  it("is a title and a description where there are no templates; creating redirects to the issue", async () => {
    const dave = await as("dave")
    const page = await dave.get("/alice/garden/issues/new")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="new-issue-form"')
    // No title: the error next to it, the description kept, nothing made.
    const before = (await api("GET", "/repos/alice/garden/issues?state=all&type=issues&limit=50", "alice")).length
    const refused = await dave.post(
      "/alice/garden/issues/new",
      { title: " ", content: "Kept *text*" },
      csrfOf(page.text)
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-title"')
    expect(refused.text).toMatch(/<textarea[^>]*name="content"[^>]*>Kept \*text\*<\/textarea>/)
    expect((await api("GET", "/repos/alice/garden/issues?state=all&type=issues&limit=50", "alice")).length).toBe(before)
    const made = await dave.post(
      "/alice/garden/issues/new",
      { title: "Weeds", content: "Too **many**" },
      csrfOf(page.text)
    )
    expect(made.status).toBe(303)
    const index = Number(/\/alice\/garden\/issues\/(\d+)$/.exec(made.location ?? "")?.[1])
    const issue = await api("GET", `/repos/alice/garden/issues/${index}`, "alice")
    expect([issue.title, issue.body, issue.user.login]).toEqual(["Weeds", "Too **many**", "dave"])
  })

  it("is for signed-in readers only: anonymous is sent to sign in, a stranger to a private repository gets 404", async () => {
    const anon = await web().get("/alice/garden/issues/new")
    expect([302, 303]).toContain(anon.status)
    expect(anon.location).toContain("/user/login")
    expect((await (await as("dave")).get("/alice/vault/issues/new")).status).toBe(404)
    expect((await (await as("alice")).get("/alice/quiet/issues/new")).status).toBe(404)
  })

  it("offers the repository's templates; a markdown template fills the form, a YAML form shows its fields", async () => {
    const bob = await as("bob")
    const choose = await bob.get("/alice/tpl/issues/new")
    expect(choose.text).toContain('data-testid="template-list"')
    expect(choose.text).toContain('href="/alice/tpl/issues/new?template=bug.md"')
    expect(choose.text).toContain('href="/alice/tpl/issues/new?template=feature.yaml"')
    const bug = await bob.get("/alice/tpl/issues/new?template=bug.md")
    expect(bug.text).toMatch(/name="title"[^>]*value="\[bug\] "/)
    expect(bug.text).toMatch(/<textarea[^>]*name="content"[^>]*>## What happened\?\n<\/textarea>/)
    const feature = await bob.get("/alice/tpl/issues/new?template=feature.yaml")
    expect(feature.text).toContain("Thanks for asking!")
    expect(feature.text).toMatch(/<textarea[^>]*name="form-field-wish"[^>]*required/)
    expect(feature.text).toContain('<option value="web">web</option>')
    expect(feature.text).toContain('name="form-field-terms-0"')
    const made = await bob.post(
      "/alice/tpl/issues/new?template=feature.yaml",
      { title: "Dark mode", "form-field-wish": "A dark theme", "form-field-area": "web", "form-field-terms-0": "on" },
      csrfOf(feature.text)
    )
    expect(made.status).toBe(303)
    const issue = await api("GET", `/repos/alice/tpl/issues/${made.location!.split("/").pop()}`, "alice")
    expect(issue.body).toBe(
      "### What do you wish for?\n\nA dark theme\n\n### Area\n\nweb\n\n### Terms\n\n- [x] I searched first"
    )
    // A blank issue stays possible.
    expect((await bob.get("/alice/tpl/issues/new?template=")).text).toContain('name="content"')
  })

  it("is refused in an archived repository (423), as are comments", async () => {
    await api("POST", "/user/repos", "alice", { name: "attic", auto_init: true, readme: "Default" })
    await issue("alice/attic", "alice", { title: "Old" })
    const alice = await as("alice")
    const page = await alice.get("/alice/attic/issues/1")
    await api("PATCH", "/repos/alice/attic", "alice", { archived: true })
    expect((await alice.get("/alice/attic/issues/new")).status).toBe(423)
    expect((await alice.post("/alice/attic/issues/1/comments", { content: "late" }, csrfOf(page.text))).status).toBe(
      423
    )
    expect(await api("GET", "/repos/alice/attic/issues/1/comments", "alice")).toEqual([])
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("titles and comments are text or sanitized markdown on the list and the issue", async () => {
    await api("POST", "/user/repos", "alice", { name: "hostile", auto_init: true, readme: "Default" })
    for (let i = 0; i < corpus.length; i += 12) {
      const made = await issue("alice/hostile", "alice", {
        title: corpus[i]!.slice(0, 200),
        body: corpus.slice(i, i + 12).join("\n\n")
      })
      await api("POST", `/repos/alice/hostile/issues/${made.number}/comments`, "alice", {
        body: corpus
          .slice(i, i + 12)
          .reverse()
          .join("\n\n")
      })
    }
    const label = await api("POST", "/repos/alice/hostile/labels", "alice", {
      name: corpus[0],
      color: "#ffffff",
      description: corpus[2]
    })
    await api("POST", "/repos/alice/hostile/issues/1/labels", "alice", { labels: [label.id] })
    await api("PATCH", "/repos/alice/hostile/issues/1", "alice", { title: corpus[3] })
    const bob = await as("bob")
    const pages = [
      "/alice/hostile/issues",
      "/alice/hostile/issues?page=2",
      "/alice/hostile/issues/1",
      "/alice/hostile/issues/2"
    ]
    for (const path of pages) {
      const page = await bob.get(path)
      expect(page.status, path).toBe(200)
      expect(executableInRendered(page.text), path).toEqual([])
    }
    const second = await web().get("/alice/hostile/issues/2")
    expect(second.text).toContain(`data-testid="issue-title">${escaped(corpus[12]!.slice(0, 200))} <span`)
  }, 60_000)
})

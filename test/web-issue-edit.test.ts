// Issue 22, the issue page's edits over plain HTTP (the browser test is
// web-issue-edit-browser.test.ts): the sidebar's labels, milestone, assignees, due date, lock,
// pin, subscription, the title and one's own comments, each a plain form POST through the API's
// services (the same timeline comments as the API's), hidden from those who may not use it and
// refused to a forged POST (403 for a reader, 404 for a stranger), with bad input shown next to
// its field and nothing changed; the reaction bar (counts, who, one's own pressed, toggled by form
// and by htmx); the XSS corpus in label names, milestone titles and comment bodies.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, type WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const issue = (repo: string, user: string, body: Record<string, unknown>) =>
  api("POST", `/repos/${repo}/issues`, user, body) as Promise<{ number: number; id: number }>

/** POSTs a form with repeated fields (labels, assignees) as a browser sends it. */
const send = (client: WebClient, path: string, fields: ReadonlyArray<readonly [string, string]>, csrf: string) =>
  client.request("POST", path, {
    body: new URLSearchParams([...fields.map(([k, v]): [string, string] => [k, v]), ["_csrf", csrf]]).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" }
  })

type Event = {
  type: string
  body: string
  label: { id: number } | null
  milestone: { id: number } | null
  old_milestone: { id: number } | null
  assignee: { login: string } | null
  removed_assignee: boolean
  old_title: string
  new_title: string
  user: { login: string }
}
const timeline = async (index: number) =>
  (await api("GET", `/repos/alice/garden/issues/${index}/timeline`, "alice")) as Array<Event>
const lastEvent = async (index: number) => (await timeline(index)).at(-1)!
/** An event as both ways must make it (without ids and times). */
const shape = (e: Event) => ({
  type: e.type,
  body: e.body,
  label: e.label?.id ?? null,
  milestone: e.milestone?.id ?? null,
  old_milestone: e.old_milestone?.id ?? null,
  assignee: e.assignee?.login ?? null,
  removed_assignee: e.removed_assignee,
  old_title: e.old_title,
  new_title: e.new_title,
  user: e.user.login
})

let bugId = 0
let docsId = 0
let v1 = 0
let v2 = 0
let foreignMilestone = 0

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", "alice", { name: "shed", auto_init: true, readme: "Default" })
  // bob writes; carol posts issues; dave only reads.
  await api("PUT", "/repos/alice/garden/collaborators/bob", "alice", { permission: "write" })
  bugId = (await api("POST", "/repos/alice/garden/labels", "alice", { name: "bug", color: "#d73a4a" })).id
  docsId = (await api("POST", "/repos/alice/garden/labels", "alice", { name: "docs", color: "#0075ca" })).id
  v1 = (await api("POST", "/repos/alice/garden/milestones", "alice", { title: "v1.0" })).id
  v2 = (await api("POST", "/repos/alice/garden/milestones", "alice", { title: "v2.0" })).id
  foreignMilestone = (await api("POST", "/repos/alice/shed/milestones", "alice", { title: "elsewhere" })).id
  for (let i = 1; i <= 6; i++) await issue("alice/garden", "carol", { title: `Issue ${i}`, body: `Body ${i}` })
  await issue("alice/vault", "alice", { title: "Secret", body: "" })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

describe("who sees the sidebar's editors", () => {
  it("writers see every editor; a reader sees none but subscribe and reactions; anonymous none", async () => {
    const bob = await (await as("bob")).get("/alice/garden/issues/1")
    for (const id of ["edit-labels", "edit-milestone", "edit-assignees", "edit-due-date", "edit-lock", "edit-title"]) {
      expect(bob.text, id).toContain(`data-testid="${id}"`)
    }
    // Pinning is for repository admins (bob writes but is no admin).
    expect(bob.text).not.toContain('data-testid="pin"')
    expect((await (await as("alice")).get("/alice/garden/issues/1")).text).toContain('data-testid="pin"')
    const dave = await (await as("dave")).get("/alice/garden/issues/1")
    for (const id of ["edit-labels", "edit-milestone", "edit-assignees", "edit-due-date", "edit-lock", "edit-title"]) {
      expect(dave.text, id).not.toContain(`data-testid="${id}"`)
    }
    expect(dave.text).toContain('data-testid="subscribe"')
    expect(dave.text).toContain('data-testid="reaction-picker"')
    // carol posted it: she may edit its title and description, nothing else.
    const carol = await (await as("carol")).get("/alice/garden/issues/1")
    expect(carol.text).toContain('data-testid="edit-title"')
    expect(carol.text).toContain('data-testid="edit-issue-body"')
    expect(carol.text).not.toContain('data-testid="edit-labels"')
    const anonymous = await (await fetch(`${hearth.base}/alice/garden/issues/1`)).text()
    expect(anonymous).not.toContain('data-testid="subscribe"')
    expect(anonymous).not.toContain('data-testid="reaction-picker"')
    expect(anonymous).not.toContain('data-testid="edit-')
  })

  it("a forged POST: 403 for a reader, 404 for a stranger, sign-in for anonymous; nothing changes", async () => {
    const dave = await as("dave")
    const csrf = csrfOf((await dave.get("/alice/garden/issues/1")).text)
    const before = await api("GET", "/repos/alice/garden/issues/1", "alice")
    const forged: Array<readonly [string, ReadonlyArray<readonly [string, string]>]> = [
      ["labels", [["label", String(bugId)]]],
      ["milestone", [["milestone", String(v1)]]],
      ["assignees", [["assignee", "bob"]]],
      ["deadline", [["due_date", "2031-01-01"]]],
      ["lock", [["reason", ""]]],
      ["unlock", []],
      ["pin", []],
      ["title", [["title", "Hijacked"]]],
      ["content", [["content", "Hijacked"]]]
    ]
    for (const [action, fields] of forged) {
      const res = await send(dave, `/alice/garden/issues/1/${action}`, fields, csrf)
      expect(res.status, action).toBe(403)
    }
    const after = await api("GET", "/repos/alice/garden/issues/1", "alice")
    expect(after).toEqual(before)
    expect(await timeline(1)).toEqual([])
    // A stranger to a private repository: 404, as for reading it.
    expect((await send(dave, "/alice/vault/issues/1/labels", [], csrf)).status).toBe(404)
    expect((await send(dave, "/alice/vault/issues/1/title", [["title", "x"]], csrf)).status).toBe(404)
    // No CSRF token: refused.
    expect((await dave.post("/alice/garden/issues/1/title", { title: "x" }, undefined)).status).toBe(400)
    expect((await api("GET", "/repos/alice/garden/issues/1", "alice")).title).toBe("Issue 1")
  })
})

describe("the sidebar's edits", () => {
  it("labels: replaced by the form, with the API's timeline comments; an unknown label is refused next to the field", async () => {
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/issues/2")
    const csrf = csrfOf(page.text)
    const set = await send(
      bob,
      "/alice/garden/issues/2/labels",
      [
        ["labels-sent", "1"],
        ["label", String(bugId)],
        ["label", String(docsId)]
      ],
      csrf
    )
    expect(set.status).toBe(303)
    expect(set.location).toBe("/alice/garden/issues/2")
    const labels = (await api("GET", "/repos/alice/garden/issues/2/labels", "alice")) as Array<{ id: number }>
    expect(labels.map((l) => l.id).sort()).toEqual([bugId, docsId].sort())
    // The same comments as the API's label change on issue 3.
    await api("PUT", "/repos/alice/garden/issues/3/labels", "bob", { labels: [bugId, docsId] })
    expect((await timeline(2)).map(shape)).toEqual((await timeline(3)).map(shape))
    // Removing one by the form.
    expect(
      (
        await send(
          bob,
          "/alice/garden/issues/2/labels",
          [
            ["labels-sent", "1"],
            ["label", String(docsId)]
          ],
          csrf
        )
      ).status
    ).toBe(303)
    expect(shape(await lastEvent(2))).toMatchObject({ type: "label", label: bugId, body: "" })
    // An unknown label (and one of another repository): the message next to the field, nothing changed.
    const count = (await timeline(2)).length
    const refused = await send(
      bob,
      "/alice/garden/issues/2/labels",
      [
        ["labels-sent", "1"],
        ["label", String(bugId)],
        ["label", "999999"]
      ],
      csrf
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-label"')
    expect(refused.text).toContain("No such label here: 999999.")
    // What was ticked stays ticked.
    expect(refused.text).toMatch(new RegExp(`id="label-${bugId}" name="label" value="${bugId}" checked`))
    expect((await timeline(2)).length).toBe(count)
    const shown = (await bob.get("/alice/garden/issues/2")).text
    expect(shown).toMatch(/data-testid="issue-labels">(?:(?!<\/div>).)*docs/s)
  })

  it("milestone: set and removed, the API's comments; another repository's milestone is refused", async () => {
    const bob = await as("bob")
    const csrf = csrfOf((await bob.get("/alice/garden/issues/4")).text)
    expect((await send(bob, "/alice/garden/issues/4/milestone", [["milestone", String(v1)]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/4", "alice")).milestone.id).toBe(v1)
    await api("PATCH", "/repos/alice/garden/issues/5", "bob", { milestone: v1 })
    expect(shape(await lastEvent(4))).toEqual(shape(await lastEvent(5)))
    expect(shape(await lastEvent(4))).toMatchObject({ type: "milestone", milestone: v1 })
    // Changed, then removed.
    expect((await send(bob, "/alice/garden/issues/4/milestone", [["milestone", String(v2)]], csrf)).status).toBe(303)
    expect(shape(await lastEvent(4))).toMatchObject({ milestone: v2, old_milestone: v1 })
    expect((await send(bob, "/alice/garden/issues/4/milestone", [["milestone", "0"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/4", "alice")).milestone).toBeNull()
    const count = (await timeline(4)).length
    for (const bad of [String(foreignMilestone), "abc", "-1"]) {
      const refused = await send(bob, "/alice/garden/issues/4/milestone", [["milestone", bad]], csrf)
      expect(refused.status, bad).toBe(422)
      expect(refused.text).toContain('data-testid="error-milestone"')
      expect(refused.text).toContain("Choose a milestone of this repository.")
    }
    expect((await timeline(4)).length).toBe(count)
    expect((await api("GET", "/repos/alice/garden/issues/4", "alice")).milestone).toBeNull()
  })

  it("assignees: only those who may be assigned are offered and accepted", async () => {
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/issues/4")
    // alice (owner) and bob (writer) are offered; carol and dave are not.
    expect(page.text).toContain('id="assignee-alice"')
    expect(page.text).toContain('id="assignee-bob"')
    expect(page.text).not.toContain('id="assignee-dave"')
    const csrf = csrfOf(page.text)
    const set = await send(
      bob,
      "/alice/garden/issues/4/assignees",
      [
        ["assignees-sent", "1"],
        ["assignee", "bob"]
      ],
      csrf
    )
    expect(set.status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/4", "alice")).assignees.map((a: any) => a.login)).toEqual([
      "bob"
    ])
    await api("PATCH", "/repos/alice/garden/issues/5", "bob", { assignees: ["bob"] })
    expect(shape(await lastEvent(4))).toEqual(shape(await lastEvent(5)))
    const count = (await timeline(4)).length
    for (const bad of ["dave", "nobody-here"]) {
      const refused = await send(
        bob,
        "/alice/garden/issues/4/assignees",
        [
          ["assignees-sent", "1"],
          ["assignee", "bob"],
          ["assignee", bad]
        ],
        csrf
      )
      expect(refused.status, bad).toBe(422)
      expect(refused.text).toContain('data-testid="error-assignee"')
      expect(refused.text).toContain("Only people with write access to the repository may be assigned")
    }
    expect((await timeline(4)).length).toBe(count)
    // Unassigning everyone.
    expect((await send(bob, "/alice/garden/issues/4/assignees", [["assignees-sent", "1"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/4", "alice")).assignees).toBeNull()
  })

  it("due date: set, changed, removed, as the API's deadline; a bad date is refused next to the field", async () => {
    const bob = await as("bob")
    const csrf = csrfOf((await bob.get("/alice/garden/issues/6")).text)
    expect((await send(bob, "/alice/garden/issues/6/deadline", [["due_date", "2031-03-15"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/6", "alice")).due_date).toBe("2031-03-15T23:59:59Z")
    await api("POST", "/repos/alice/garden/issues/5/deadline", "bob", { due_date: "2031-03-15T00:00:00Z" })
    expect(shape(await lastEvent(6))).toEqual(shape(await lastEvent(5)))
    expect((await bob.get("/alice/garden/issues/6")).text).toMatch(
      /data-testid="issue-due-date"><time datetime="[^"]*">2031-03-15</
    )
    const count = (await timeline(6)).length
    for (const bad of ["2031-02-30", "15/03/2031", "", "2031-3-1"]) {
      const refused = await send(bob, "/alice/garden/issues/6/deadline", [["due_date", bad]], csrf)
      expect(refused.status, bad).toBe(422)
      expect(refused.text).toContain('data-testid="error-due_date"')
      expect(refused.text).toContain(`value="${bad}"`)
    }
    expect((await timeline(6)).length).toBe(count)
    expect(
      (
        await send(
          bob,
          "/alice/garden/issues/6/deadline",
          [
            ["due_date", ""],
            ["action", "clear"]
          ],
          csrf
        )
      ).status
    ).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/6", "alice")).due_date).toBeNull()
    expect((await lastEvent(6)).type).toBe("removed_deadline")
  })

  it("lock with a reason and unlock: readers may no longer comment; a bad reason is refused", async () => {
    const bob = await as("bob")
    const csrf = csrfOf((await bob.get("/alice/garden/issues/6")).text)
    const bad = await send(bob, "/alice/garden/issues/6/lock", [["reason", "Because"]], csrf)
    expect(bad.status).toBe(422)
    expect(bad.text).toContain('data-testid="error-reason"')
    expect((await api("GET", "/repos/alice/garden/issues/6", "alice")).is_locked).toBe(false)
    expect((await send(bob, "/alice/garden/issues/6/lock", [["reason", "Too heated"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/6", "alice")).is_locked).toBe(true)
    expect(await lastEvent(6)).toMatchObject({ type: "lock", body: "Too heated" })
    const dave = await as("dave")
    const locked = await dave.get("/alice/garden/issues/6")
    expect(locked.text).toContain('data-testid="locked-note"')
    expect(locked.text).not.toContain('data-testid="comment-form"')
    // The service refuses the reader's comment and reaction too.
    expect(
      (await dave.post("/alice/garden/issues/6/comments", { content: "let me in" }, csrfOf(locked.text))).status
    ).toBe(403)
    expect(locked.text).not.toContain('data-testid="reaction-picker"')
    // Locking twice is refused; unlocking reopens the conversation.
    expect((await send(bob, "/alice/garden/issues/6/lock", [["reason", ""]], csrf)).status).toBe(422)
    expect((await send(bob, "/alice/garden/issues/6/unlock", [], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/6", "alice")).is_locked).toBe(false)
    expect((await lastEvent(6)).type).toBe("unlock")
    expect((await dave.get("/alice/garden/issues/6")).text).toContain('data-testid="comment-form"')
  })

  it("pin and unpin by a repository admin", async () => {
    const alice = await as("alice")
    const csrf = csrfOf((await alice.get("/alice/garden/issues/5")).text)
    expect((await send(alice, "/alice/garden/issues/5/pin", [], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/pinned", "alice")).map((i: any) => i.number)).toEqual([5])
    expect((await lastEvent(5)).type).toBe("pin")
    expect((await alice.get("/alice/garden/issues/5")).text).toContain('data-testid="unpin"')
    // bob writes but is no admin.
    const bob = await as("bob")
    expect((await send(bob, "/alice/garden/issues/5/pin", [], csrfOf((await bob.get("/")).text))).status).toBe(403)
    expect((await send(alice, "/alice/garden/issues/5/pin", [], csrf)).status).toBe(303)
    expect(await api("GET", "/repos/alice/garden/issues/pinned", "alice")).toEqual([])
    expect((await lastEvent(5)).type).toBe("unpin")
  })

  it("subscribe and unsubscribe, for oneself", async () => {
    const dave = await as("dave")
    const page = await dave.get("/alice/garden/issues/5")
    expect(page.text).toContain('data-testid="subscribe"')
    const csrf = csrfOf(page.text)
    expect((await send(dave, "/alice/garden/issues/5/watch", [["watch", "true"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/5/subscriptions/check", "dave")).subscribed).toBe(true)
    expect((await dave.get("/alice/garden/issues/5")).text).toContain('data-testid="unsubscribe"')
    expect((await send(dave, "/alice/garden/issues/5/watch", [["watch", "false"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/5/subscriptions/check", "dave")).subscribed).toBe(false)
  })

  it("the title: its poster or a writer, the API's change_title comment; an empty title is refused", async () => {
    const carol = await as("carol")
    const csrf = csrfOf((await carol.get("/alice/garden/issues/3")).text)
    expect((await send(carol, "/alice/garden/issues/3/title", [["title", "Issue three"]], csrf)).status).toBe(303)
    expect((await api("GET", "/repos/alice/garden/issues/3", "alice")).title).toBe("Issue three")
    await api("PATCH", "/repos/alice/garden/issues/2", "carol", { title: "Issue two" })
    expect({ ...shape(await lastEvent(3)), old_title: "", new_title: "" }).toEqual({
      ...shape(await lastEvent(2)),
      old_title: "",
      new_title: ""
    })
    expect(await lastEvent(3)).toMatchObject({ type: "change_title", old_title: "Issue 3", new_title: "Issue three" })
    const refused = await send(carol, "/alice/garden/issues/3/title", [["title", "   "]], csrf)
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('data-testid="error-title"')
    expect((await api("GET", "/repos/alice/garden/issues/3", "alice")).title).toBe("Issue three")
  })

  it("comments: one's own, or any for a writer; another's is refused; an empty text is refused next to it", async () => {
    const dave = await as("dave")
    const own = await api("POST", "/repos/alice/garden/issues/5/comments", "dave", { body: "Typo hree" })
    const other = await api("POST", "/repos/alice/garden/issues/5/comments", "carol", { body: "Carol's" })
    const page = await dave.get("/alice/garden/issues/5")
    expect(page.text).toContain(`data-testid="edit-comment-${own.id}"`)
    expect(page.text).not.toContain(`data-testid="edit-comment-${other.id}"`)
    const csrf = csrfOf(page.text)
    const saved = await send(dave, `/alice/garden/comments/${own.id}`, [["content", "Typo **here**"]], csrf)
    expect(saved.status).toBe(303)
    expect(saved.location).toBe(`/alice/garden/issues/5#issuecomment-${own.id}`)
    expect((await api("GET", `/repos/alice/garden/issues/comments/${own.id}`, "alice")).body).toBe("Typo **here**")
    expect((await send(dave, `/alice/garden/comments/${other.id}`, [["content", "mine now"]], csrf)).status).toBe(403)
    expect((await api("GET", `/repos/alice/garden/issues/comments/${other.id}`, "alice")).body).toBe("Carol's")
    const empty = await send(dave, `/alice/garden/comments/${own.id}`, [["content", "  "]], csrf)
    expect(empty.status).toBe(422)
    expect(empty.text).toContain(`data-testid="error-comment-${own.id}"`)
    expect((await api("GET", `/repos/alice/garden/issues/comments/${own.id}`, "alice")).body).toBe("Typo **here**")
    // A writer may edit anyone's; a stranger to a private repository's comment gets 404.
    const bob = await as("bob")
    const bobCsrf = csrfOf((await bob.get("/alice/garden/issues/5")).text)
    expect((await send(bob, `/alice/garden/comments/${other.id}`, [["content", "Edited"]], bobCsrf)).status).toBe(303)
    const secret = await api("POST", "/repos/alice/vault/issues/1/comments", "alice", { body: "hidden" })
    expect((await send(dave, `/alice/vault/comments/${secret.id}`, [["content", "x"]], csrf)).status).toBe(404)
  })
})

describe("reactions", () => {
  it("the bar shows counts, who reacted and one's own; a form toggles it, htmx swaps the bar", async () => {
    const made = await issue("alice/garden", "carol", { title: "Reactive", body: "" })
    const comment = await api("POST", `/repos/alice/garden/issues/${made.number}/comments`, "carol", { body: "hi" })
    await api("POST", `/repos/alice/garden/issues/${made.number}/reactions`, "carol", { content: "heart" })
    await api("POST", `/repos/alice/garden/issues/comments/${comment.id}/reactions`, "bob", { content: "+1" })
    const dave = await as("dave")
    const path = `/alice/garden/issues/${made.number}`
    const page = await dave.get(path)
    expect(page.text).toMatch(
      /title="carol reacted with heart" aria-label="heart: 1" aria-pressed="false" data-content="heart" data-testid="reaction"/
    )
    expect(page.text).toMatch(/title="bob reacted with \+1" aria-label="\+1: 1"/)
    const csrf = csrfOf(page.text)
    // dave adds a heart by the form: a redirect back, and his own reaction pressed.
    const added = await send(dave, `${path}/reactions/react`, [["content", "heart"]], csrf)
    expect(added.status).toBe(303)
    const reactions = (await api("GET", `/repos/alice/garden/issues/${made.number}/reactions`, "alice")) as Array<{
      user: { login: string }
      content: string
    }>
    expect(reactions.map((r) => [r.user.login, r.content])).toEqual([
      ["carol", "heart"],
      ["dave", "heart"]
    ])
    expect((await dave.get(path)).text).toMatch(
      /title="carol, dave reacted with heart" aria-label="heart: 2" aria-pressed="true"/
    )
    // On the comment, through htmx: the bar comes back alone.
    const swapped = await dave.request("POST", `/alice/garden/comments/${comment.id}/reactions/react`, {
      body: new URLSearchParams({ content: "+1", _csrf: csrf }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", "hx-request": "true" }
    })
    expect(swapped.status).toBe(200)
    expect(swapped.text).not.toContain("<html")
    expect(swapped.text).toContain(`id="reactions-${comment.id}"`)
    expect(swapped.text).toMatch(/title="bob, dave reacted with \+1" aria-label="\+1: 2" aria-pressed="true"/)
    // Removing it again; an unknown reaction is refused.
    expect((await send(dave, `${path}/reactions/unreact`, [["content", "heart"]], csrf)).status).toBe(303)
    expect((await api("GET", `/repos/alice/garden/issues/${made.number}/reactions`, "alice")).length).toBe(1)
    expect((await send(dave, `${path}/reactions/react`, [["content", "banana"]], csrf)).status).toBe(403)
    expect((await send(dave, `${path}/reactions/explode`, [["content", "heart"]], csrf)).status).toBe(404)
  })

  it("are read for the issue and all its comments at once, grouped by comment", async () => {
    const made = await issue("alice/garden", "carol", { title: "Many", body: "" })
    const ids: Array<number> = []
    for (let i = 0; i < 3; i++) {
      const c = await api("POST", `/repos/alice/garden/issues/${made.number}/comments`, "carol", { body: `c${i}` })
      ids.push(c.id)
      await api("POST", `/repos/alice/garden/issues/comments/${c.id}/reactions`, "bob", { content: "rocket" })
    }
    await api("POST", `/repos/alice/garden/issues/comments/${ids[2]}/reactions`, "dave", { content: "eyes" })
    const page = await (await as("dave")).get(`/alice/garden/issues/${made.number}`)
    for (const id of ids) {
      const bar = new RegExp(`id="reactions-${id}"[^>]*>(.*?)<details`, "s").exec(page.text)![1]!
      expect(bar).toContain('data-content="rocket"')
      expect(bar.includes('data-content="eyes"')).toBe(id === ids[2])
    }
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("label names, milestone titles and comment bodies in the sidebar's editors and the timeline", async () => {
    await api("POST", "/user/repos", "alice", { name: "hostile", auto_init: true, readme: "Default" })
    const made = await issue("alice/hostile", "alice", { title: "Target", body: corpus.slice(0, 10).join("\n\n") })
    for (let i = 0; i < 12; i++) {
      const label = await api("POST", "/repos/alice/hostile/labels", "alice", {
        name: corpus[i]!.slice(0, 50) || `l${i}`,
        color: "#ffffff",
        description: corpus[(i + 5) % corpus.length]!.slice(0, 200)
      }).catch(() => undefined)
      const milestone = await api("POST", "/repos/alice/hostile/milestones", "alice", {
        title: corpus[i + 12]!.slice(0, 50) || `m${i}`
      }).catch(() => undefined)
      if (i === 0 && label !== undefined) {
        await api("POST", `/repos/alice/hostile/issues/${made.number}/labels`, "alice", { labels: [label.id] })
      }
      if (i === 0 && milestone !== undefined) {
        await api("PATCH", `/repos/alice/hostile/issues/${made.number}`, "alice", { milestone: milestone.id })
      }
    }
    for (let i = 0; i < corpus.length; i += 8) {
      await api("POST", `/repos/alice/hostile/issues/${made.number}/comments`, "alice", {
        body: corpus.slice(i, i + 8).join("\n\n")
      })
    }
    // The owner sees every editor (with every label, milestone and comment text in a form).
    const alice = await as("alice")
    const page = await alice.get(`/alice/hostile/issues/${made.number}`)
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="edit-labels"')
    expect(executableInRendered(page.text)).toEqual([])
    // A refused edit shows the page again with what was typed: escaped too.
    const refused = await send(alice, `/alice/hostile/issues/${made.number}/title`, [["title", " "]], csrfOf(page.text))
    expect(refused.status).toBe(422)
    expect(executableInRendered(refused.text)).toEqual([])
  }, 60_000)
})

const BUG = `---
name: Bug report
about: Something is broken
title: "[bug] "
labels: [Bug]
assignees: bob
ref: main
---
## What happened?
`
const FORM = `name: Docs
description: Ask for documentation
labels: "docs, bug"
assignees: [alice, bob]
body:
  - type: textarea
    id: what
    attributes:
      label: What is missing?
`

describe("a new issue from a template", () => {
  beforeAll(async () => {
    for (const [path, text] of [
      [".forgejo/issue_template/bug.md", BUG],
      [".forgejo/issue_template/docs.yaml", FORM]
    ] as const) {
      await api("POST", `/repos/alice/garden/contents/${path}`, "alice", {
        content: Buffer.from(text).toString("base64"),
        message: `add ${path}`
      })
    }
  }, 60_000)

  it("applies the template's title, labels, assignees and ref (markdown and YAML forms) for a writer", async () => {
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/issues/new?template=bug.md")
    expect(page.text).toMatch(/name="title"[^>]*value="\[bug\] "/)
    expect(page.text).toMatch(new RegExp(`id="label-${bugId}" name="label" value="${bugId}" checked`))
    expect(page.text).toMatch(new RegExp(`id="label-${docsId}" name="label" value="${docsId}">`))
    expect(page.text).toMatch(/id="assignee-bob" name="assignee" value="bob" checked/)
    expect(page.text).toContain('name="ref" value="refs/heads/main"')
    // Sent as the form offers it.
    const fields: Array<readonly [string, string]> = [
      ["title", "[bug] Thorns"],
      ["content", "Ouch"],
      ["meta-sent", "1"],
      ["label", String(bugId)],
      ["assignee", "bob"],
      ["milestone", String(v1)],
      ["ref", "refs/heads/main"]
    ]
    const made = await send(bob, "/alice/garden/issues/new?template=bug.md", fields, csrfOf(page.text))
    expect(made.status).toBe(303)
    const issue = await api("GET", `/repos/alice/garden/issues/${made.location!.split("/").pop()}`, "alice")
    expect(issue.labels.map((l: any) => l.name)).toEqual(["bug"])
    expect(issue.assignees.map((a: any) => a.login)).toEqual(["bob"])
    expect(issue.milestone.id).toBe(v1)
    expect(issue.ref).toBe("refs/heads/main")
    // The YAML form: a comma-separated string of labels, a list of assignees.
    const form = await bob.get("/alice/garden/issues/new?template=docs.yaml")
    expect(form.text).toMatch(new RegExp(`id="label-${docsId}" name="label" value="${docsId}" checked`))
    expect(form.text).toMatch(new RegExp(`id="label-${bugId}" name="label" value="${bugId}" checked`))
    expect(form.text).toMatch(/id="assignee-alice" name="assignee" value="alice" checked/)
    expect(form.text).toMatch(/id="assignee-bob" name="assignee" value="bob" checked/)
    // An unknown label: refused, what was typed kept, nothing made.
    const before = (await api("GET", "/repos/alice/garden/issues?state=all&limit=50", "alice")).length
    const refused = await send(
      bob,
      "/alice/garden/issues/new?template=docs.yaml",
      [
        ["title", "Kept"],
        ["form-field-what", "All of it"],
        ["meta-sent", "1"],
        ["label", "424242"]
      ],
      csrfOf(form.text)
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain("No such label here: 424242.")
    expect(refused.text).toMatch(/name="title"[^>]*value="Kept"/)
    expect((await api("GET", "/repos/alice/garden/issues?state=all&limit=50", "alice")).length).toBe(before)
  })

  it("a reader gets the template's title and ref; labels and assignees are the writers' (as Forgejo)", async () => {
    const dave = await as("dave")
    const page = await dave.get("/alice/garden/issues/new?template=bug.md")
    expect(page.text).not.toContain('data-testid="new-issue-labels"')
    expect(page.text).toContain('name="ref" value="refs/heads/main"')
    const made = await send(
      dave,
      "/alice/garden/issues/new?template=bug.md",
      [
        ["title", "[bug] Slugs"],
        ["content", ""],
        ["ref", "refs/heads/main"],
        ["label", String(bugId)],
        ["assignee", "bob"]
      ],
      csrfOf(page.text)
    )
    expect(made.status).toBe(303)
    const issue = await api("GET", `/repos/alice/garden/issues/${made.location!.split("/").pop()}`, "alice")
    expect([issue.title, issue.ref, issue.labels, issue.assignees]).toEqual([
      "[bug] Slugs",
      "refs/heads/main",
      [],
      null
    ])
  })
})

describe("the /issues and /pulls dashboards", () => {
  let pull = 0
  beforeAll(async () => {
    await api("POST", "/user/repos", "alice", { name: "plot", auto_init: true, readme: "Default" })
    await api("PUT", "/repos/alice/plot/collaborators/bob", "alice", { permission: "write" })
    await issue("alice/plot", "dave", { title: "Dave weeds", body: "Help @carol" })
    await api("PATCH", "/repos/alice/plot/issues/1", "alice", { assignees: ["bob"] })
    await issue("alice/plot", "alice", { title: "Old compost", body: "" })
    await api("PATCH", "/repos/alice/plot/issues/2", "alice", { state: "closed" })
    const repo = await api("GET", "/repos/alice/plot", "alice")
    await api("POST", "/repos/alice/plot/contents/seeds.txt", "alice", {
      content: Buffer.from("seeds\n").toString("base64"),
      message: "seeds",
      branch: repo.default_branch,
      new_branch: "seeds"
    })
    pull = (
      await api("POST", "/repos/alice/plot/pulls", "alice", {
        head: "seeds",
        base: repo.default_branch,
        title: "Sow seeds"
      })
    ).number
  }, 60_000)

  const titles = (text: string) => [...text.matchAll(/data-testid="issue-title">([^<]*)</g)].map((m) => m[1])

  it("sends anonymous visitors to sign in", async () => {
    for (const path of ["/issues", "/pulls"]) {
      const res = await fetch(`${hearth.base}${path}`, { redirect: "manual" })
      expect([302, 303]).toContain(res.status)
      expect(res.headers.get("location")).toContain("/user/login")
    }
  })

  it("has Forgejo's tabs: your repositories, assigned, created by you, mentioning you; open and closed", async () => {
    const get = async (who: string, query: string) => titles((await (await as(who)).get(`/issues?${query}`)).text)
    const mine = await get("alice", "")
    expect(mine).toContain("Dave weeds")
    expect(mine).toContain("Secret")
    expect(mine).not.toContain("Old compost")
    expect(mine).not.toContain("Sow seeds")
    expect(await get("alice", "state=closed")).toContain("Old compost")
    expect(await get("dave", "")).toEqual([])
    const daves = await get("dave", "type=created_by")
    expect(daves).toContain("Dave weeds")
    expect(daves).not.toContain("Old compost")
    const assigned = await get("bob", "type=assigned")
    expect(assigned).toContain("Dave weeds")
    expect(assigned).not.toContain("Old compost")
    expect(await get("alice", "type=assigned")).not.toContain("Dave weeds")
    const mentioned = await get("carol", "type=mentioned")
    expect(mentioned).toContain("Dave weeds")
    expect(await get("bob", "type=mentioned")).not.toContain("Dave weeds")
    // carol's own issues, never a private repository's she may not see.
    const carols = await get("carol", "type=created_by")
    expect(carols.length).toBeGreaterThan(0)
    expect(carols).not.toContain("Secret")
    expect(await get("alice", "q=compost&state=closed")).toEqual(["Old compost"])
    const page = await (await as("alice")).get("/issues?type=your_repositories")
    expect(page.text).toContain('href="/alice/plot/issues/1"')
    expect(page.text).toMatch(/data-testid="count-closed">\d+</)
    expect(page.text).toContain('aria-current="page" data-testid="tab-your_repositories"')
  })

  it("lists pull requests on /pulls, linking to /{owner}/{repo}/pulls/{index}", async () => {
    const page = await (await as("alice")).get("/pulls")
    expect(page.status).toBe(200)
    expect(titles(page.text)).toEqual(["Sow seeds"])
    expect(page.text).toContain(`href="/alice/plot/pulls/${pull}"`)
    expect(titles((await (await as("bob")).get("/pulls")).text)).toEqual([])
  })
})

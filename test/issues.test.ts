// Issues (CONTRACT-ISSUES §3, §1.7): create, numbering under concurrency, open_issues_count, the
// list filters, the instance-wide search and its visibility, edit in Forgejo's step order with its
// messages, delete by admins, the deadline route.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const alice = basic("alice")
const bob = basic("bob")

const post = (path: string, body: unknown, auth = alice) => request(hearth, "POST", path, auth, body)
const create = async (repo: string, body: Record<string, unknown>, auth = alice) => {
  const res = await post(`/repos/alice/${repo}/issues`, body, auth)
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const list = async (query: string, auth?: string) => {
  const res = await request(hearth, "GET", `/repos/alice/filters/issues${query}`, auth)
  expect(res.status, await res.clone().text()).toBe(200)
  return { res, body: (await json(res)) as Array<any> }
}
const numbers = (issues: Array<any>) => issues.map((i) => i.number)

let labelBug: any
let labelUi: any
let milestoneOne: any
let milestoneTwo: any

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "carol", "writer"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["filters", false],
    ["counted", false],
    ["secret", true],
    ["edits", false],
    ["parallel", false]
  ] as const) {
    expect((await post("/user/repos", { name, private: priv })).status).toBe(201)
  }
  for (const repo of ["filters", "edits", "secret"]) {
    const put = await request(hearth, "PUT", `/repos/alice/${repo}/collaborators/writer`, alice, {
      permission: "write"
    })
    expect(put.status).toBe(204)
  }
  labelBug = await json(await post("/repos/alice/filters/labels", { name: "bug", color: "ff0000" }))
  labelUi = await json(await post("/repos/alice/filters/labels", { name: "ui", color: "#00f" }))
  milestoneOne = await json(await post("/repos/alice/filters/milestones", { title: "v1" }))
  milestoneTwo = await json(await post("/repos/alice/filters/milestones", { title: "v2" }))
  // #1 bug+ui, v1, assigned to writer; #2 bug, v2, by writer, mentions carol; #3 closed; #4 plain, searchable word.
  await create("filters", {
    title: "first",
    labels: [labelBug.id, labelUi.id],
    milestone: milestoneOne.id,
    assignees: ["writer"]
  })
  await create(
    "filters",
    { title: "second", body: "ping @carol", labels: [labelBug.id], milestone: milestoneTwo.id },
    basic("writer")
  )
  await create("filters", { title: "third", closed: true })
  await create("filters", { title: "fourth", body: "the xylophone is broken" })
}, 120_000)
afterAll(() => hearth?.close())

describe("POST /repos/{o}/{r}/issues", () => {
  it("creates an issue with Forgejo's shape; non-writers' labels and milestone are dropped", async () => {
    const issue = await create("filters", { title: "  shaped  ", body: "b", ref: "main" })
    expectSwagger(issue, "Issue")
    expect(issue).toMatchObject({
      title: "shaped",
      body: "b",
      ref: "main",
      state: "open",
      comments: 0,
      labels: [],
      milestone: null,
      assignee: null,
      assignees: null,
      closed_at: null,
      due_date: null,
      pull_request: null,
      is_locked: false,
      repository: { name: "filters", owner: "alice", full_name: "alice/filters" },
      user: { login: "alice" }
    })
    expect(issue.html_url).toMatch(new RegExp(`/alice/filters/issues/${issue.number}$`))
    expect(issue.url).toMatch(new RegExp(`/api/v1/repos/alice/filters/issues/${issue.number}$`))
    // bob reads the public repository but does not write it: his labels and milestone are dropped.
    const dropped = await create("filters", { title: "by bob", labels: [labelBug.id], milestone: milestoneOne.id }, bob)
    expect(dropped.labels).toEqual([])
    expect(dropped.milestone).toBeNull()
  })

  it("answers with the issue as a later GET shows it: labels by name, assignees, the milestone's counts", async () => {
    const zeta = await json(await post("/repos/alice/edits/labels", { name: "zeta", color: "#111111" }))
    const alpha = await json(await post("/repos/alice/edits/labels", { name: "alpha", color: "#222222" }))
    const milestone = await json(await post("/repos/alice/edits/milestones", { title: "answered" }))
    const issue = await create("edits", {
      title: "as read",
      body: "b",
      labels: [zeta.id, alpha.id, zeta.id, labelBug.id],
      assignees: ["writer", "alice"],
      milestone: milestone.id
    })
    const read = await json(await request(hearth, "GET", `/repos/alice/edits/issues/${issue.number}`, alice))
    expect(issue).toEqual(read)
    // Another repository's label (labelBug, of alice/filters) is not this issue's.
    expect(issue.labels.map((l: any) => l.name)).toEqual(["alpha", "zeta"])
    expect(issue.assignees.map((u: any) => u.login).sort()).toEqual(["alice", "writer"])
    expect(issue.milestone).toMatchObject({ title: "answered", open_issues: 1, closed_issues: 0 })
  })

  it("requires a title (422 [Title]: Required) and creates nothing", async () => {
    const before = (await json(await request(hearth, "GET", "/repos/alice/counted"))).open_issues_count
    for (const body of [{}, { title: "   " }]) {
      const res = await post("/repos/alice/counted/issues", body)
      expect(res.status).toBe(422)
      expect((await json(res)).message).toBe("[Title]: Required")
    }
    expect((await json(await request(hearth, "GET", "/repos/alice/counted"))).open_issues_count).toBe(before)
  })

  it("refuses unknown or unassignable assignees with Forgejo's 422 messages", async () => {
    const unknown = await post("/repos/alice/filters/issues", { title: "x", assignees: ["nobody"] })
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).message).toBe(
      "Assignee does not exist: [name: user does not exist [uid: 0, name: nobody]]"
    )
    const carol = await post("/repos/alice/filters/issues", { title: "x", assignee: "carol" })
    expect(carol.status).toBe(422)
    expect((await json(carol)).message).toMatch(
      /^user doesn't have access to repo \[user_id: \d+, repo_name: filters\]$/
    )
  })

  it("needs a signed-in caller (401, before the repository is looked at); 404 on a private one", async () => {
    expect((await request(hearth, "POST", "/repos/alice/filters/issues", undefined, { title: "x" })).status).toBe(401)
    expect((await request(hearth, "POST", "/repos/alice/secret/issues", undefined, { title: "x" })).status).toBe(401)
    expect((await request(hearth, "POST", "/repos/alice/secret/issues", bob, { title: "x" })).status).toBe(404)
  })
})

describe("numbering and open_issues_count", () => {
  it("gives 50 concurrent creates the numbers 1..50, without gaps or duplicates", async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => post("/repos/alice/parallel/issues", { title: `p${i}` }))
    )
    expect(results.map((r) => r.status)).toEqual(Array(50).fill(201))
    const got = (await Promise.all(results.map((r) => json(r)))).map((i) => i.number).sort((a, b) => a - b)
    expect(got).toEqual(Array.from({ length: 50 }, (_, i) => i + 1))
    expect((await json(await request(hearth, "GET", "/repos/alice/parallel"))).open_issues_count).toBe(50)
  })

  it("counts open issues exactly through create, close, reopen and delete; numbers are never reused", async () => {
    const count = async () => (await json(await request(hearth, "GET", "/repos/alice/counted"))).open_issues_count
    const start = await count()
    const a = await create("counted", { title: "a" })
    const b = await create("counted", { title: "b" })
    expect(await count()).toBe(start + 2)
    await request(hearth, "PATCH", `/repos/alice/counted/issues/${a.number}`, alice, { state: "closed" })
    expect(await count()).toBe(start + 1)
    await request(hearth, "PATCH", `/repos/alice/counted/issues/${a.number}`, alice, { state: "open" })
    expect(await count()).toBe(start + 2)
    expect((await request(hearth, "DELETE", `/repos/alice/counted/issues/${b.number}`, alice)).status).toBe(204)
    expect(await count()).toBe(start + 1)
    const c = await create("counted", { title: "c" })
    expect(c.number).toBe(b.number + 1)
    const closed = await create("counted", { title: "d", closed: true })
    expect(closed.state).toBe("closed")
    expect(closed.closed_at).not.toBeNull()
    expect(await count()).toBe(start + 2)
  })
})

describe("GET /repos/{o}/{r}/issues", () => {
  it("lists open issues newest first with X-Total-Count and Link", async () => {
    const { res, body } = await list("?limit=2")
    expectSwagger(body, "Issue[]")
    expect(body).toHaveLength(2)
    expect(Number(res.headers.get("x-total-count"))).toBeGreaterThanOrEqual(4)
    expect(res.headers.get("link")).toContain('rel="next"')
    expect(body[0].number).toBeGreaterThan(body[1].number)
  })

  it("filters by state", async () => {
    expect(numbers((await list("?state=closed")).body)).toEqual([3])
    expect(numbers((await list("?state=all&sort=oldest&limit=4")).body)).toEqual([1, 2, 3, 4])
    // Any other value means open.
    expect(numbers((await list("?state=bogus")).body)).not.toContain(3)
  })

  it("filters by labels (every one named; unknown names dropped)", async () => {
    const bugs = (await list("?labels=bug&sort=oldest")).body
    expect(numbers(bugs)).toEqual([1, 2])
    // Each issue of a page with its own labels, by name, whichever labels the others share.
    expect(bugs.map((i) => i.labels.map((l: any) => l.name))).toEqual([["bug", "ui"], ["bug"]])
    expect(bugs[0].labels[0]).toEqual(labelBug)
    expect(numbers((await list("?labels=bug,ui")).body)).toEqual([1])
    expect(numbers((await list("?labels=bug,nosuch&sort=oldest")).body)).toEqual([1, 2])
  })

  it("filters by milestones by name or id, any of them", async () => {
    expect(numbers((await list("?milestones=v1")).body)).toEqual([1])
    expect(numbers((await list(`?milestones=ignore,v1,${milestoneTwo.id}&sort=oldest`)).body)).toEqual([1, 2])
  })

  it("filters by keyword (title, body, comments), poster, assignee and mention", async () => {
    expect(numbers((await list("?q=xylophone")).body)).toEqual([4])
    expect(numbers((await list("?q=SECOND")).body)).toEqual([2])
    expect(numbers((await list("?created_by=writer")).body)).toEqual([2])
    expect(numbers((await list("?assigned_by=writer")).body)).toEqual([1])
    expect(numbers((await list("?mentioned_by=carol")).body)).toEqual([2])
    const unknown = await request(hearth, "GET", "/repos/alice/filters/issues?created_by=nobody")
    expect(unknown.status).toBe(404)
  })

  it("records a mention only of users who may read the repository and did not block the author", async () => {
    const secret = await create("secret", { title: "for writer", body: "@writer @bob" })
    const mentioned = async (repo: string, login: string) =>
      numbers(await json(await request(hearth, "GET", `/repos/alice/${repo}/issues?mentioned_by=${login}`, alice)))
    expect(await mentioned("secret", "writer")).toEqual([secret.number])
    expect(await mentioned("secret", "bob")).toEqual([])
    expect((await request(hearth, "PUT", "/user/block/alice", basic("carol"))).status).toBe(204)
    const blocked = await create("edits", { title: "hey @carol @bob" })
    expect(await mentioned("edits", "carol")).toEqual([])
    expect(await mentioned("edits", "bob")).toEqual([blocked.number])
    expect((await request(hearth, "PUT", "/user/unblock/alice", basic("carol"))).status).toBe(204)
  })

  it("finds a keyword in comments too, and sorts by update and comment count", async () => {
    const res = await post("/repos/alice/filters/issues/3/comments", { body: "a zanzibar remark" })
    expect(res.status).toBe(201)
    expect(numbers((await list("?q=zanzibar&state=all")).body)).toEqual([3])
    expect(numbers((await list("?state=all&sort=recentupdate&limit=1")).body)).toEqual([3])
    expect(numbers((await list("?state=all&sort=mostcomment&limit=1")).body)).toEqual([3])
    expect(numbers((await list("?state=all&sort=oldest&limit=1")).body)).toEqual([1])
  })

  it("counts a keyword's matches on every page, and past the last one", async () => {
    for (const title of ["kumquat one", "kumquat two", "kumquat three"]) await create("filters", { title })
    const totals: Array<string | null> = []
    for (const page of [1, 2, 3, 4]) {
      const { res, body } = await list(`?q=kumquat&limit=1&page=${page}`)
      expect(body).toHaveLength(page <= 3 ? 1 : 0)
      totals.push(res.headers.get("x-total-count"))
    }
    expect(totals).toEqual(["3", "3", "3", "3"])
  })

  it("counts an issue matched in its title, body and a comment once, in the sort asked, with the other filters", async () => {
    const ripe = await json(await post("/repos/alice/edits/labels", { name: "ripe", color: "#333333" }))
    const found = async (query: string) => {
      const res = await request(hearth, "GET", `/repos/alice/edits/issues${query}`, alice)
      expect(res.status).toBe(200)
      return { total: res.headers.get("x-total-count"), body: (await json(res)) as Array<any> }
    }
    const first = await create("edits", { title: "quince everywhere", body: "quince", labels: [ripe.id] })
    expect((await post(`/repos/alice/edits/issues/${first.number}/comments`, { body: "more quince" })).status).toBe(201)
    const second = await create("edits", { title: "plain", body: "a quince", labels: [ripe.id] })
    const third = await create("edits", { title: "other" })
    expect((await post(`/repos/alice/edits/issues/${third.number}/comments`, { body: "quince?" })).status).toBe(201)
    const oldest = await found("?q=quince&sort=oldest")
    expect(numbers(oldest.body)).toEqual([first.number, second.number, third.number])
    expect(oldest.total).toBe("3")
    expect(oldest.body[0]).toEqual(
      await json(await request(hearth, "GET", `/repos/alice/edits/issues/${first.number}`, alice))
    )
    expect(numbers((await found("?q=quince")).body)).toEqual([third.number, second.number, first.number])
    expect(numbers((await found("?q=quince&sort=mostcomment&limit=2")).body)).toEqual([third.number, first.number])
    const labelled = await found("?q=quince&labels=ripe&sort=oldest&limit=1&page=2")
    expect(numbers(labelled.body)).toEqual([second.number])
    expect(labelled.total).toBe("2")
  })

  it("filters by updated time (RFC 3339; 422 otherwise)", async () => {
    expect((await list("?since=2999-01-01T00:00:00Z")).body).toEqual([])
    expect(numbers((await list("?before=2000-01-01T00:00:00Z")).body)).toEqual([])
    const bad = await request(hearth, "GET", "/repos/alice/filters/issues?since=x")
    expect(bad.status).toBe(422)
    expect((await json(bad)).message).toBe(
      'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'
    )
  })

  it("answers pulls (none here: an empty list), 404 for an unknown or private repository", async () => {
    const pulls = await request(hearth, "GET", "/repos/alice/filters/issues?type=pulls")
    expect(pulls.status).toBe(200)
    expect(await pulls.json()).toEqual([])
    expect((await request(hearth, "GET", "/repos/alice/secret/issues", bob)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/issues")).status).toBe(404)
  })

  it("404s the whole unit when issues are switched off", async () => {
    expect((await request(hearth, "PATCH", "/repos/alice/counted", alice, { has_issues: false })).status).toBe(200)
    expect((await request(hearth, "GET", "/repos/alice/counted/issues", alice)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/counted/issues/1", alice)).status).toBe(404)
    expect((await request(hearth, "PATCH", "/repos/alice/counted", alice, { has_issues: true })).status).toBe(200)
  })
})

describe("GET /repos/issues/search", () => {
  it("searches the repositories the caller may see, never a private one of someone else", async () => {
    await create("secret", { title: "hidden needle" })
    await create("filters", { title: "public needle" })
    const anon = await json(await request(hearth, "GET", "/repos/issues/search?q=needle"))
    expect(anon.map((i: any) => i.title)).toEqual(["public needle"])
    const asBob = await json(await request(hearth, "GET", "/repos/issues/search?q=needle", bob))
    expect(asBob.map((i: any) => i.title)).toEqual(["public needle"])
    const asWriter = await json(await request(hearth, "GET", "/repos/issues/search?q=needle", basic("writer")))
    expect(asWriter.map((i: any) => i.title).sort()).toEqual(["hidden needle", "public needle"])
    expectSwagger(asWriter, "Issue[]")
    expect(asWriter.find((i: any) => i.title === "hidden needle").repository.full_name).toBe("alice/secret")
  })

  it("pages by 20 by default, filters by labels and milestones by name, owner; 400 for an unknown owner or team without owner", async () => {
    const res = await request(hearth, "GET", "/repos/issues/search?state=all")
    expect((await json(res)).length).toBe(20)
    expect(Number(res.headers.get("x-total-count"))).toBeGreaterThan(20)
    const labelled = await json(await request(hearth, "GET", "/repos/issues/search?labels=ui"))
    expect(labelled.map((i: any) => i.title)).toEqual(["first"])
    const milestoned = await json(await request(hearth, "GET", "/repos/issues/search?milestones=V2"))
    expect(milestoned.map((i: any) => i.title)).toEqual(["second"])
    const byOwner = await request(hearth, "GET", "/repos/issues/search?owner=nobody")
    expect(byOwner.status).toBe(400)
    expect((await json(byOwner)).message).toBe("user does not exist [uid: 0, name: nobody]")
    const team = await request(hearth, "GET", "/repos/issues/search?team=x")
    expect(team.status).toBe(400)
    expect((await json(team)).message).toBe("Owner organisation is required for filtering on team")
    const created = await json(await request(hearth, "GET", "/repos/issues/search?created=true&limit=50", bob))
    expect(created.every((i: any) => i.user.login === "bob")).toBe(true)
  })
})

describe("PATCH /repos/{o}/{r}/issues/{index}", () => {
  it("is for the poster or a writer: 403 for another reader, 201 with the issue for the poster", async () => {
    const issue = await create("edits", { title: "bob's" }, bob)
    const carol = await request(hearth, "PATCH", `/repos/alice/edits/issues/${issue.number}`, basic("carol"), {
      title: "x"
    })
    expect(carol.status).toBe(403)
    const edited = await request(hearth, "PATCH", `/repos/alice/edits/issues/${issue.number}`, bob, {
      title: "bob's, edited",
      body: "new body",
      // A poster who does not write: the milestone and deadline are ignored.
      due_date: "2030-01-01T10:00:00Z"
    })
    expect(edited.status).toBe(201)
    const body = await json(edited)
    expectSwagger(body, "Issue")
    expect(body).toMatchObject({ title: "bob's, edited", body: "new body", due_date: null })
  })

  it("closes and reopens (closed_at set and cleared), writes change_title, close and reopen comments", async () => {
    const issue = await create("edits", { title: "old" })
    const path = `/repos/alice/edits/issues/${issue.number}`
    const closed = await json(await request(hearth, "PATCH", path, alice, { title: "new", state: "closed" }))
    expect(closed.state).toBe("closed")
    expect(closed.closed_at).not.toBeNull()
    const reopened = await json(await request(hearth, "PATCH", path, alice, { state: "anything" }))
    expect(reopened.state).toBe("open")
    expect(reopened.closed_at).toBeNull()
    const timeline = await json(await request(hearth, "GET", `${path}/timeline`))
    expect(timeline.map((c: any) => c.type)).toEqual(["change_title", "close", "reopen"])
    expect(timeline[0]).toMatchObject({ old_title: "old", new_title: "new" })
  })

  it("sets the deadline to the end of its day, and removes it; 400 without a date", async () => {
    const issue = await create("edits", { title: "due" })
    const path = `/repos/alice/edits/issues/${issue.number}`
    const set = await json(await request(hearth, "PATCH", path, alice, { due_date: "2030-05-06T08:00:00+02:00" }))
    expect(set.due_date).toBe("2030-05-06T21:59:59Z")
    const empty = await request(hearth, "PATCH", path, alice, { unset_due_date: false })
    expect(empty.status).toBe(400)
    expect((await json(empty)).message).toBe("The due_date cannot be empty")
    const unset = await json(await request(hearth, "PATCH", path, alice, { unset_due_date: true }))
    expect(unset.due_date).toBeNull()
    const types = (await json(await request(hearth, "GET", `${path}/timeline`))).map((c: any) => [c.type, c.body])
    expect(types).toEqual([
      ["added_deadline", "2030-05-06"],
      ["removed_deadline", "2030-05-06"]
    ])
  })

  it("replaces assignees and changes the milestone (writers); 422 for an unknown milestone", async () => {
    const milestone = await json(await post("/repos/alice/edits/milestones", { title: "m" }))
    const issue = await create("edits", { title: "assign me" })
    const path = `/repos/alice/edits/issues/${issue.number}`
    const edited = await json(
      await request(hearth, "PATCH", path, basic("writer"), { assignees: ["writer", "alice"], milestone: milestone.id })
    )
    expect(edited.assignees.map((u: any) => u.login).sort()).toEqual(["alice", "writer"])
    expect(edited.milestone).toMatchObject({ id: milestone.id, open_issues: 1 })
    const cleared = await json(await request(hearth, "PATCH", path, basic("writer"), { assignees: [], milestone: 0 }))
    expect(cleared.assignees).toBeNull()
    expect(cleared.milestone).toBeNull()
    const bad = await request(hearth, "PATCH", path, alice, { milestone: 99999 })
    expect(bad.status).toBe(422)
    const timeline = (await json(await request(hearth, "GET", `${path}/timeline`))).map((c: any) => c.type)
    expect(timeline).toEqual(["assignees", "assignees", "milestone", "assignees", "assignees", "milestone"])
  })

  it("runs its steps in Forgejo's order, keeping earlier ones when a later one fails", async () => {
    const issue = await create("edits", { title: "steps" })
    const path = `/repos/alice/edits/issues/${issue.number}`
    // The title (step 4) is kept; the unknown milestone (step 9) refuses; the state (step 10) never runs.
    const res = await request(hearth, "PATCH", path, alice, { title: "steps 2", milestone: 99999, state: "closed" })
    expect(res.status).toBe(422)
    const after = await json(await request(hearth, "GET", path))
    expect(after).toMatchObject({ title: "steps 2", state: "open" })
    // A refused `updated_at` (step 3) comes before any change.
    const refused = await request(hearth, "PATCH", path, basic("writer"), {
      title: "steps 3",
      updated_at: issue.created_at
    })
    expect(refused.status).toBe(403)
    expect((await json(await request(hearth, "GET", path))).title).toBe("steps 2")
  })

  it("answers 404 for an unknown index", async () => {
    for (const index of ["9999", "0", "abc"]) {
      expect((await request(hearth, "PATCH", `/repos/alice/edits/issues/${index}`, alice, { title: "x" })).status).toBe(
        404
      )
      expect((await request(hearth, "GET", `/repos/alice/edits/issues/${index}`)).status).toBe(404)
    }
  })
})

describe("DELETE /repos/{o}/{r}/issues/{index} and the deadline route", () => {
  it("deletes for repository admins only (403 with Forgejo's message for a writer)", async () => {
    const issue = await create("edits", { title: "doomed" })
    const path = `/repos/alice/edits/issues/${issue.number}`
    const refused = await request(hearth, "DELETE", path, basic("writer"))
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe(
      "user should be an owner or a collaborator with admin write of a repository"
    )
    expect((await request(hearth, "DELETE", path, alice)).status).toBe(204)
    expect((await request(hearth, "GET", path)).status).toBe(404)
  })

  it("POST …/deadline sets and removes the due date for writers (403 Not repo writer)", async () => {
    const issue = await create("edits", { title: "deadline" })
    const path = `/repos/alice/edits/issues/${issue.number}/deadline`
    const set = await request(hearth, "POST", path, alice, { due_date: "2031-02-03T04:05:06Z" })
    expect(set.status).toBe(201)
    expect(await json(set)).toEqual({ due_date: "2031-02-03T23:59:59Z" })
    const refused = await request(hearth, "POST", path, bob, { due_date: "2031-02-03T04:05:06Z" })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("Not repo writer")
    const removed = await request(hearth, "POST", path, alice, { due_date: null })
    expect(await json(removed)).toEqual({ due_date: "0001-01-01T00:00:00Z" })
  })
})

// The optional `updated_at` override (SPEC Behavior 1, CONTRACT-ISSUES §4): every carrier, every
// date it sets, its bounds and who may send it. T is the issue's own creation time (cut to whole
// seconds), the earliest date allowed, so no test waits for the clock.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const alice = basic("alice")
const writer = basic("writer")
const bob = basic("bob")

const api = (method: string, path: string, auth: string | undefined, body?: unknown) =>
  request(hearth, method, `/repos/alice/dated${path}`, auth, body)
const newIssue = async (title: string, extra: Record<string, unknown> = {}, auth = alice) => {
  const res = await api("POST", "/issues", auth, { title, ...extra })
  expect(res.status).toBe(201)
  return json(res)
}
const getIssue = async (n: number) => json(await api("GET", `/issues/${n}`, alice))
const timeline = async (n: number) => (await json(await api("GET", `/issues/${n}/timeline`, alice))) as Array<any>
const instant = (s: string) => new Date(s).toISOString()

let label: any
let other: any

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "writer", "bob"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", alice, { name: "dated" })).status).toBe(201)
  expect((await api("PUT", "/collaborators/writer", alice, { permission: "write" })).status).toBe(204)
  label = await json(await api("POST", "/labels", alice, { name: "a", color: "aaaaaa" }))
  other = await json(await api("POST", "/labels", alice, { name: "b", color: "bbbbbb" }))
}, 60_000)
afterAll(() => hearth?.close())

describe("who may send it", () => {
  it("refuses writers and posters without admin rights with Forgejo's 403, changing nothing", async () => {
    const issue = await newIssue("mine", {}, bob)
    const T = issue.created_at
    for (const [auth, path, method, body] of [
      [writer, `/issues/${issue.number}`, "PATCH", { title: "changed", updated_at: T }],
      [bob, `/issues/${issue.number}`, "PATCH", { title: "changed", updated_at: T }],
      [bob, `/issues/${issue.number}/comments`, "POST", { body: "x", updated_at: T }],
      [writer, `/issues/${issue.number}/labels`, "POST", { labels: [label.id], updated_at: T }],
      [writer, `/issues/${issue.number}/labels`, "PUT", { labels: [label.id], updated_at: T }],
      [writer, `/issues/${issue.number}/labels`, "DELETE", { updated_at: T }]
    ] as const) {
      const res = await api(method, path, auth, body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect((await json(res)).message).toBe("user needs to have admin or repository owner right to set an update date")
    }
    const after = await getIssue(issue.number)
    expect(after.title).toBe("mine")
    expect(after.labels).toEqual([])
    expect(after.comments).toBe(0)
    expect(after.updated_at).toBe(issue.updated_at)
  })

  it("refuses dates before the issue's creation or after now (403), changing nothing", async () => {
    const issue = await newIssue("bounded")
    const before = new Date(Date.parse(issue.created_at) - 86_400_000).toISOString()
    const future = new Date(Date.now() + 86_400_000).toISOString()
    for (const date of [before, future]) {
      const res = await api("PATCH", `/issues/${issue.number}`, alice, { title: "moved", updated_at: date })
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe(
        "unallowed update date, because given date must be between issue creation date and now"
      )
    }
    expect((await getIssue(issue.number)).title).toBe("bounded")
  })
})

describe("what T sets", () => {
  it("issue edit: the issue's updated_at, closed_at and every generated comment", async () => {
    const issue = await newIssue("edit me")
    const T = issue.created_at
    const edited = await json(
      await api("PATCH", `/issues/${issue.number}`, alice, { title: "edited", state: "closed", updated_at: T })
    )
    expect(instant(edited.updated_at)).toBe(instant(T))
    expect(instant(edited.closed_at)).toBe(instant(T))
    const items = await timeline(issue.number)
    expect(items.map((c) => c.type)).toEqual(["change_title", "close"])
    for (const c of items) {
      expect(instant(c.created_at)).toBe(instant(T))
      expect(instant(c.updated_at)).toBe(instant(T))
    }
  })

  it("without T every write uses now", async () => {
    const issue = await newIssue("auto")
    const start = Date.now() - 1000
    const edited = await json(await api("PATCH", `/issues/${issue.number}`, alice, { title: "auto 2" }))
    expect(Date.parse(edited.updated_at)).toBeGreaterThanOrEqual(start)
  })

  it("comment create: its created and updated dates and the issue's; comment edit: its updated date and the issue's", async () => {
    const issue = await newIssue("talk")
    const T = issue.created_at
    const created = await json(
      await api("POST", `/issues/${issue.number}/comments`, alice, { body: "hi", updated_at: T })
    )
    expect(instant(created.created_at)).toBe(instant(T))
    expect(instant(created.updated_at)).toBe(instant(T))
    expect(instant((await getIssue(issue.number)).updated_at)).toBe(instant(T))
    // Without T the comment is now; then an edit with T moves only its updated date.
    const later = await json(await api("POST", `/issues/${issue.number}/comments`, alice, { body: "later" }))
    const edited = await json(
      await api("PATCH", `/issues/comments/${later.id}`, alice, { body: "later, edited", updated_at: T })
    )
    expect(instant(edited.updated_at)).toBe(instant(T))
    expect(edited.created_at).toBe(later.created_at)
    expect(instant((await getIssue(issue.number)).updated_at)).toBe(instant(T))
    // The deprecated route carries it too.
    const deprecated = await json(
      await api("PATCH", `/issues/${issue.number}/comments/${later.id}`, alice, { body: "again", updated_at: T })
    )
    expect(instant(deprecated.updated_at)).toBe(instant(T))
  })

  it("labels: add, replace, remove one and clear date their label comments and the issue; an unchanged add writes nothing", async () => {
    const issue = await newIssue("labelled")
    const T = issue.created_at
    const path = `/issues/${issue.number}/labels`
    expect((await api("POST", path, alice, { labels: [label.id], updated_at: T })).status).toBe(200)
    expect((await api("PUT", path, alice, { labels: [other.id], updated_at: T })).status).toBe(200)
    expect((await api("DELETE", `${path}/${other.id}`, alice, { updated_at: T })).status).toBe(204)
    expect((await api("POST", path, alice, { labels: [label.id, other.id] })).status).toBe(200)
    const untouched = (await getIssue(issue.number)).updated_at
    // Adding labels the issue has changes nothing: the issue keeps its date.
    expect((await api("POST", path, alice, { labels: [label.id], updated_at: T })).status).toBe(200)
    expect((await getIssue(issue.number)).updated_at).toBe(untouched)
    expect((await api("DELETE", path, alice, { updated_at: T })).status).toBe(204)
    const items = await timeline(issue.number)
    // The timeline is in date order: the six comments dated T come before the two of now.
    expect(items.map((c) => [c.label.name, c.body])).toEqual([
      ["a", "1"],
      ["a", ""],
      ["b", "1"],
      ["b", ""],
      ["a", ""],
      ["b", ""],
      ["a", "1"],
      ["b", "1"]
    ])
    for (const c of items.slice(0, 6)) expect(instant(c.created_at)).toBe(instant(T))
    for (const c of items.slice(6)) expect(Date.parse(c.created_at)).toBeGreaterThanOrEqual(Date.parse(T))
    expect(instant((await getIssue(issue.number)).updated_at)).toBe(instant(T))
  })

  it("cross-references created by the change carry T, and so does the referenced issue", async () => {
    const target = await newIssue("target")
    const source = await newIssue("source")
    const T = source.created_at
    await api("POST", `/issues/${source.number}/comments`, alice, { body: `see #${target.number}`, updated_at: T })
    const [ref] = await timeline(target.number)
    expect(ref.type).toBe("comment_ref")
    expect(instant(ref.created_at)).toBe(instant(T))
    expect(instant((await getIssue(target.number)).updated_at)).toBe(instant(T))
  })

  it("a milestone (re)assignment moves the milestones' updated_at only forward", async () => {
    const issue = await newIssue("planned")
    const T = issue.created_at
    const milestone = await json(await api("POST", "/milestones", alice, { title: "later" }))
    // The milestone is edited after the issue was made: its date is after T.
    const touched = await json(await api("PATCH", `/milestones/${milestone.id}`, alice, { description: "d" }))
    await api("PATCH", `/issues/${issue.number}`, alice, { milestone: milestone.id, updated_at: T })
    const after = await json(await api("GET", `/milestones/${milestone.id}`, alice))
    expect(after.updated_at).toBe(touched.updated_at)
    expect(after.open_issues).toBe(1)
    // Without T the recount dates it now.
    await api("PATCH", `/issues/${issue.number}`, alice, { milestone: 0 })
    const now = await json(await api("GET", `/milestones/${milestone.id}`, alice))
    expect(Date.parse(now.updated_at)).toBeGreaterThanOrEqual(Date.parse(touched.updated_at))
    expect(now.open_issues).toBe(0)
  })

  it("refuses a malformed date with 422", async () => {
    const issue = await newIssue("malformed")
    const res = await api("PATCH", `/issues/${issue.number}`, alice, { title: "x", updated_at: "yesterday" })
    expect(res.status).toBe(422)
  })
})

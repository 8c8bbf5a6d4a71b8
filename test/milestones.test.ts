// Milestones (CONTRACT-ISSUES §9): CRUD, the `state` and `name` filters, open/closed counts
// (issues counted as they open, close, move and go), due dates, closing, and lookups by id or title.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const alice = basic("alice")
const api = (method: string, path: string, auth?: string, body?: unknown) =>
  request(hearth, method, `/repos/alice/plan${path}`, auth, body)
const milestone = async (body: Record<string, unknown>) => {
  const res = await api("POST", "/milestones", alice, body)
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const get = async (id: number | string) => json(await api("GET", `/milestones/${id}`))

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", alice, { name: "plan" })).status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("milestones", () => {
  it("creates open or closed ones, with or without a due date", async () => {
    const open = await milestone({ title: " v1 ", description: "first", due_on: "2030-01-02T03:04:05Z" })
    expectSwagger(open, "Milestone")
    expect(open).toMatchObject({
      title: "v1",
      description: "first",
      state: "open",
      open_issues: 0,
      closed_issues: 0,
      closed_at: null,
      due_on: "2030-01-02T03:04:05Z"
    })
    const closed = await milestone({ title: "v0", state: "closed" })
    expect(closed.state).toBe("closed")
    expect(closed.closed_at).not.toBeNull()
    expect(closed.due_on).toBeNull()
  })

  it("lists all by default (Forgejo ignores an unknown state), open or closed on request, by title substring", async () => {
    await milestone({ title: "Later release" })
    const all = await api("GET", "/milestones")
    expect(all.headers.get("x-total-count")).toBe("3")
    // Deadline first (none last), then title.
    expect((await json(all)).map((m: any) => m.title)).toEqual(["v1", "Later release", "v0"])
    expect((await json(await api("GET", "/milestones?state=closed"))).map((m: any) => m.title)).toEqual(["v0"])
    expect((await json(await api("GET", "/milestones?state=open"))).map((m: any) => m.title)).toEqual([
      "v1",
      "Later release"
    ])
    expect((await json(await api("GET", "/milestones?name=RELEASE"))).map((m: any) => m.title)).toEqual([
      "Later release"
    ])
    expect(await json(await api("GET", "/milestones?page=2&limit=2"))).toHaveLength(1)
  })

  it("gets by id or exact title; 404 otherwise", async () => {
    const m = await milestone({ title: "lookup" })
    expect((await get(m.id)).title).toBe("lookup")
    expect((await get("lookup")).id).toBe(m.id)
    expect((await api("GET", "/milestones/nothing")).status).toBe(404)
    expect((await api("GET", "/milestones/999999")).status).toBe(404)
  })

  it("counts its issues as they open, close, move and go", async () => {
    const m = await milestone({ title: "counted" })
    const other = await milestone({ title: "other" })
    const issue = async () => json(await api("POST", "/issues", alice, { title: "i", milestone: m.id }))
    const a = await issue()
    const b = await issue()
    await issue()
    expect(await get(m.id)).toMatchObject({ open_issues: 3, closed_issues: 0 })
    await api("PATCH", `/issues/${a.number}`, alice, { state: "closed" })
    expect(await get(m.id)).toMatchObject({ open_issues: 2, closed_issues: 1 })
    await api("PATCH", `/issues/${b.number}`, alice, { milestone: other.id })
    expect(await get(m.id)).toMatchObject({ open_issues: 1, closed_issues: 1 })
    expect(await get(other.id)).toMatchObject({ open_issues: 1, closed_issues: 0 })
    expect((await api("DELETE", `/issues/${a.number}`, alice)).status).toBe(204)
    expect(await get(m.id)).toMatchObject({ open_issues: 1, closed_issues: 0 })
  })

  it("edits: title, description, due date, closing and reopening", async () => {
    const m = await milestone({ title: "edit" })
    const closed = await json(
      await api("PATCH", `/milestones/${m.id}`, alice, { state: "closed", due_on: "2031-01-01T00:00:00Z", title: "" })
    )
    expect(closed).toMatchObject({ title: "edit", state: "closed", due_on: "2031-01-01T00:00:00Z" })
    expect(closed.closed_at).not.toBeNull()
    const reopened = await json(await api("PATCH", `/milestones/${m.id}`, alice, { state: "open", description: "d" }))
    expect(reopened).toMatchObject({ state: "open", closed_at: null, description: "d" })
  })

  it("deletes, leaving its issues without a milestone; writers only", async () => {
    const m = await milestone({ title: "doomed" })
    const issue = await json(await api("POST", "/issues", alice, { title: "i", milestone: m.id }))
    const refused = await api("DELETE", `/milestones/${m.id}`, basic("bob"))
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user should have a permission to write to a repo")
    expect((await api("POST", "/milestones", basic("bob"), { title: "x" })).status).toBe(403)
    expect((await api("DELETE", `/milestones/${m.id}`, alice)).status).toBe(204)
    expect((await json(await api("GET", `/issues/${issue.number}`))).milestone).toBeNull()
    expect((await api("DELETE", `/milestones/${m.id}`, alice)).status).toBe(404)
  })
})

// Reactions on issues and comments (CONTRACT-ISSUES §11) over real HTTP: Forgejo's allowed set
// (`[ui] REACTIONS`), 201 then 200 for the same reaction, 200 for removing one that is absent,
// lists in creation order with X-Total-Count, locked issues, blocked users and private repositories.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let issue: number
let comment: number

beforeAll(async () => {
  // A custom set: "party" is allowed, "heart" is not.
  hearth = await startHearth({ ui: { REACTIONS: "+1, -1, party" } })
  for (const username of ["owner", "reader", "stranger", "blocked"]) await createUser(hearth, { username })
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "pub" })).status).toBe(201)
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "priv", private: true })).status).toBe(
    201
  )
  expect(
    (await request(hearth, "PUT", "/repos/owner/priv/collaborators/reader", basic("owner"), { permission: "read" }))
      .status
  ).toBe(204)
  issue = (await json(await request(hearth, "POST", "/repos/owner/pub/issues", basic("owner"), { title: "t" }))).number
  comment = (
    await json(
      await request(hearth, "POST", `/repos/owner/pub/issues/${issue}/comments`, basic("owner"), { body: "c" })
    )
  ).id
}, 60_000)
afterAll(() => hearth?.close())

const issuePath = (n = issue, repo = "pub") => `/repos/owner/${repo}/issues/${n}/reactions`
const commentPath = (id = comment) => `/repos/owner/pub/issues/comments/${id}/reactions`

describe("issue reactions", () => {
  it("adds (201), re-adds (200), lists in order and removes (200)", async () => {
    const first = await request(hearth, "POST", issuePath(), basic("reader"), { content: "+1" })
    expect(first.status).toBe(201)
    const body = await json(first)
    expect(body.content).toBe("+1")
    expect(body.user.login).toBe("reader")
    expect(typeof body.created_at).toBe("string")
    const again = await request(hearth, "POST", issuePath(), basic("reader"), { content: "+1" })
    expect(again.status).toBe(200)
    expect((await json(again)).created_at).toBe(body.created_at)
    expect((await request(hearth, "POST", issuePath(), basic("owner"), { content: "party" })).status).toBe(201)

    const list = await request(hearth, "GET", issuePath())
    expect(list.status).toBe(200)
    expect(list.headers.get("x-total-count")).toBe("2")
    const rows = await json(list)
    expect(rows.map((r: any) => [r.user.login, r.content])).toEqual([
      ["reader", "+1"],
      ["owner", "party"]
    ])
    // Comment reactions are not issue reactions.
    expect(await json(await request(hearth, "GET", commentPath()))).toEqual([])

    const removed = await request(hearth, "DELETE", issuePath(), basic("reader"), { content: "+1" })
    expect(removed.status).toBe(200)
    expect(await removed.text()).toBe("")
    // Absent: 200, nothing changes.
    expect((await request(hearth, "DELETE", issuePath(), basic("reader"), { content: "-1" })).status).toBe(200)
    const after = await json(await request(hearth, "GET", issuePath()))
    expect(after.map((r: any) => r.content)).toEqual(["party"])
  })

  it("refuses a reaction outside [ui] REACTIONS with 403 and stores nothing", async () => {
    for (const content of ["heart", "", "nope"]) {
      const res = await request(hearth, "POST", issuePath(), basic("stranger"), { content })
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe(`'${content}' is not an allowed reaction`)
    }
    const rows = await json(await request(hearth, "GET", issuePath()))
    expect(rows.some((r: any) => r.user.login === "stranger")).toBe(false)
  })

  it("needs a signed-in caller; a private repository is 404 to outsiders", async () => {
    expect((await request(hearth, "POST", issuePath(), undefined, { content: "+1" })).status).toBe(401)
    const n = (await json(await request(hearth, "POST", "/repos/owner/priv/issues", basic("owner"), { title: "p" })))
      .number
    expect((await request(hearth, "GET", issuePath(n, "priv"), basic("stranger"))).status).toBe(404)
    expect((await request(hearth, "POST", issuePath(n, "priv"), basic("stranger"), { content: "+1" })).status).toBe(404)
    expect((await request(hearth, "POST", issuePath(n, "priv"), basic("reader"), { content: "+1" })).status).toBe(201)
    expect((await request(hearth, "GET", issuePath(n, "priv"), basic("reader"))).status).toBe(200)
    expect((await request(hearth, "GET", issuePath(9999))).status).toBe(404)
  })

  it("a user blocked by the poster may not react", async () => {
    expect((await request(hearth, "PUT", "/user/block/blocked", basic("owner"))).status).toBe(204)
    const res = await request(hearth, "POST", issuePath(), basic("blocked"), { content: "+1" })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("user is blocked by the poster or repository owner")
  })
})

describe("comment reactions", () => {
  it("adds, lists (no pagination headers) and removes", async () => {
    expect((await request(hearth, "POST", commentPath(), basic("reader"), { content: "-1" })).status).toBe(201)
    expect((await request(hearth, "POST", commentPath(), basic("reader"), { content: "-1" })).status).toBe(200)
    const list = await request(hearth, "GET", commentPath())
    expect(list.headers.get("x-total-count")).toBeNull()
    expect((await json(list)).map((r: any) => r.content)).toEqual(["-1"])
    expect((await request(hearth, "DELETE", commentPath(), basic("reader"), { content: "-1" })).status).toBe(200)
    expect(await json(await request(hearth, "GET", commentPath()))).toEqual([])
  })

  it("404 for an unknown comment or one of another repository", async () => {
    expect((await request(hearth, "GET", commentPath(999999))).status).toBe(404)
    const n = (await json(await request(hearth, "POST", "/repos/owner/priv/issues", basic("owner"), { title: "p" })))
      .number
    const other = await json(
      await request(hearth, "POST", `/repos/owner/priv/issues/${n}/comments`, basic("owner"), { body: "x" })
    )
    expect((await request(hearth, "GET", commentPath(other.id))).status).toBe(404)
    expect((await request(hearth, "POST", commentPath(other.id), basic("owner"), { content: "+1" })).status).toBe(404)
  })
})

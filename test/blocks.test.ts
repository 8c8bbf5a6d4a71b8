// Blocking users (Forgejo's user_model.BlockUser and its API routes): what a block undoes, what
// it refuses afterwards (403 ErrBlockedByUser), the list, and an organization blocking through
// its owners.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const BLOCKED = "user is blocked by the poster or repository owner"

let hearth: Hearth
let malloryId: number
let carolId: number
const as = (user: string) => basic(user)
const put = (path: string, user: string, body?: unknown) => request(hearth, "PUT", path, as(user), body)
const get = (path: string, user: string) => request(hearth, "GET", path, as(user))
const makeRepo = async (user: string, name: string, path = "/user/repos") =>
  expect((await request(hearth, "POST", path, as(user), { name, auto_init: true })).status).toBe(201)
const expectBlocked = async (res: Response) => {
  expect(res.status).toBe(403)
  expect((await json(res)).message).toBe(BLOCKED)
}

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  malloryId = (await createUser(hearth, { username: "mallory" })).id
  carolId = (await createUser(hearth, { username: "carol" })).id
  await createUser(hearth, { username: "dave" })
  await makeRepo("alice", "garden")
  await makeRepo("alice", "shed")
  await makeRepo("mallory", "gift")
  await makeRepo("mallory", "lair")
  await makeRepo("carol", "plot")
  expect((await request(hearth, "POST", "/orgs", as("alice"), { username: "acme" })).status).toBe(201)
  await makeRepo("alice", "tools", "/orgs/acme/repos")
})
afterAll(() => hearth?.close())

describe("blocking a user", () => {
  it("unfollows both ways, ends watches and collaborations on the blocker's repositories, drops offered transfers", async () => {
    expect((await put("/user/following/mallory", "alice")).status).toBe(204)
    expect((await put("/user/following/alice", "mallory")).status).toBe(204)
    expect((await put("/repos/alice/garden/subscription", "mallory")).status).toBe(200)
    expect((await put("/repos/alice/shed/collaborators/mallory", "alice", { permission: "write" })).status).toBe(204)
    const offered = await request(hearth, "POST", "/repos/mallory/gift/transfer", as("mallory"), { new_owner: "alice" })
    expect(offered.status).toBe(201)
    const watchersBefore = (await json(await get("/repos/alice/garden", "alice"))).watchers_count

    expect((await put("/user/block/mallory", "alice")).status).toBe(204)

    expect((await get("/user/following/mallory", "alice")).status).toBe(404)
    expect((await get("/user/following/alice", "mallory")).status).toBe(404)
    const alice = await json(await get("/user", "alice"))
    expect([alice.followers_count, alice.following_count]).toEqual([0, 0])
    expect((await get("/repos/alice/garden/subscription", "mallory")).status).toBe(404)
    expect((await json(await get("/repos/alice/garden", "alice"))).watchers_count).toBe(watchersBefore - 1)
    expect((await get("/repos/alice/shed/collaborators/mallory", "alice")).status).toBe(404)
    // The transfer is gone and the repository is an ordinary one again.
    expect((await request(hearth, "POST", "/repos/mallory/gift/transfer/accept", as("alice"))).status).toBe(404)
    expect(await json(await get("/repos/mallory/gift", "mallory"))).toMatchObject({
      full_name: "mallory/gift",
      repo_transfer: null
    })
  })

  it("lists the blocked users (block_id, created_at) with X-Total-Count", async () => {
    const res = await get("/user/list_blocked", "alice")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("1")
    const rows = await json(res)
    expect(rows).toEqual([
      { block_id: malloryId, created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }
    ])
    expect(await json(await get("/user/list_blocked", "mallory"))).toEqual([])
  })

  it("refuses following either way with 403", async () => {
    await expectBlocked(await put("/user/following/alice", "mallory"))
    await expectBlocked(await put("/user/following/mallory", "alice"))
  })

  it("refuses starring and watching the blocker's repositories, not others'", async () => {
    await expectBlocked(await put("/user/starred/alice/garden", "mallory"))
    await expectBlocked(await put("/repos/alice/garden/subscription", "mallory"))
    expect((await put("/user/starred/carol/plot", "mallory")).status).toBe(204)
    // The blocker may still star the blocked user's repositories (Forgejo checks the owner's block only).
    expect((await put("/user/starred/mallory/lair", "alice")).status).toBe(204)
  })

  it("refuses collaboration either way", async () => {
    await expectBlocked(await put("/repos/alice/garden/collaborators/mallory", "alice", { permission: "read" }))
    await expectBlocked(await put("/repos/mallory/lair/collaborators/alice", "mallory", { permission: "read" }))
  })

  it("refuses transfers to the blocker; the blocker may still transfer to the blocked user", async () => {
    await expectBlocked(
      await request(hearth, "POST", "/repos/mallory/lair/transfer", as("mallory"), { new_owner: "alice" })
    )
    const res = await request(hearth, "POST", "/repos/alice/shed/transfer", as("alice"), { new_owner: "mallory" })
    expect(res.status).toBe(201)
    expect((await request(hearth, "POST", "/repos/alice/shed/transfer/reject", as("alice"))).status).toBe(200)
  })

  it("answers 204 and changes nothing for yourself and for someone already blocked", async () => {
    expect((await put("/user/block/alice", "alice")).status).toBe(204)
    expect((await put("/user/block/mallory", "alice")).status).toBe(204)
    const rows = await json(await get("/user/list_blocked", "alice"))
    expect(rows.map((r: { block_id: number }) => r.block_id)).toEqual([malloryId])
  })

  it("answers 404 for an unknown user, 401 without credentials, 403 for a token without write:user", async () => {
    expect((await put("/user/block/nobody-here", "alice")).status).toBe(404)
    expect((await put("/user/unblock/nobody-here", "alice")).status).toBe(404)
    expect((await request(hearth, "PUT", "/user/block/carol")).status).toBe(401)
    const readOnly = await createToken(hearth, "alice", ["read:user"])
    const res = await request(hearth, "PUT", "/user/block/carol", `token ${readOnly}`)
    expect(res.status).toBe(403)
    expect((await request(hearth, "GET", "/user/list_blocked", `token ${readOnly}`)).status).toBe(200)
    expect((await json(await get("/user/list_blocked", "alice"))).length).toBe(1)
  })

  it("pages the list with page and limit", async () => {
    expect((await put("/user/block/carol", "dave")).status).toBe(204)
    expect((await put("/user/block/mallory", "dave")).status).toBe(204)
    const first = await get("/user/list_blocked?limit=1&page=1", "dave")
    expect(first.headers.get("x-total-count")).toBe("2")
    expect(first.headers.get("link")).toContain('rel="next"')
    expect((await json(first)).map((r: { block_id: number }) => r.block_id)).toEqual([malloryId])
    const second = await json(await get("/user/list_blocked?limit=1&page=2", "dave"))
    expect(second.map((r: { block_id: number }) => r.block_id)).toEqual([carolId])
  })

  it("unblocking lifts the refusals; unblocking someone not blocked is a 204 too", async () => {
    expect((await put("/user/unblock/mallory", "alice")).status).toBe(204)
    expect((await put("/user/unblock/mallory", "alice")).status).toBe(204)
    expect(await json(await get("/user/list_blocked", "alice"))).toEqual([])
    expect((await put("/user/following/alice", "mallory")).status).toBe(204)
    expect((await put("/user/starred/alice/garden", "mallory")).status).toBe(204)
  })
})

describe("an organization blocking a user", () => {
  it("is for its owners: 403 for others", async () => {
    const res = await put("/orgs/acme/block/mallory", "carol")
    expect(res.status).toBe(403)
    expect((await get("/orgs/acme/list_blocked", "carol")).status).toBe(403)
    expect((await put("/orgs/nope-org/block/mallory", "alice")).status).toBe(404)
  })

  it("refuses the blocked user's stars and watches of its repositories, and lists the block", async () => {
    expect((await put("/user/starred/alice/garden", "carol")).status).toBe(204)
    expect((await put("/orgs/acme/block/carol", "alice")).status).toBe(204)
    await expectBlocked(await put("/user/starred/acme/tools", "carol"))
    await expectBlocked(await put("/repos/acme/tools/subscription", "carol"))
    await expectBlocked(await put("/repos/acme/tools/collaborators/carol", "alice", { permission: "read" }))
    const list = await get("/orgs/acme/list_blocked", "alice")
    expect(list.headers.get("x-total-count")).toBe("1")
    expect((await json(list)).map((r: { block_id: number }) => r.block_id)).toEqual([carolId])
    expect((await put("/orgs/acme/unblock/carol", "alice")).status).toBe(204)
    expect((await put("/user/starred/acme/tools", "carol")).status).toBe(204)
  })
})

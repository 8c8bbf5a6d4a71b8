// Follows (issue 5 item 6; Forgejo's routers/api/v1/user/follower.go): idempotent
// 204s, exact counters (also under concurrency and when an account is deleted), lists of what
// the caller may see, scopes.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const CROWD = Array.from({ length: 10 }, (_, i) => `crowd${i}`)
beforeAll(async () => {
  // A small default page shows that the lists without `page` still return every row.
  hearth = await startHearth({ api: { DEFAULT_PAGING_NUM: "2" } })
  for (const username of ["alice", "bob", "carol", "dave", "erin", ...CROWD]) await createUser(hearth, { username })
  await createUser(hearth, { username: "hidden", visibility: "private" })
  await createUser(hearth, { username: "root", isAdmin: true })
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)
const me = async (user: string) => json(await call("GET", "/user", basic(user)))
const logins = (users: ReadonlyArray<{ login: string }>) => users.map((u) => u.login)

/** The stored counters and the rows they summarize. */
const truth = (name: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql`SELECT u.num_followers, u.num_following,
        (SELECT count(*) FROM follows f WHERE f.follow_id = u.id) AS followers,
        (SELECT count(*) FROM follows f WHERE f.user_id = u.id) AS following
      FROM users u WHERE u.lower_name = ${name.toLowerCase()}`
      return {
        numFollowers: Number(row!.num_followers),
        followers: Number(row!.followers),
        numFollowing: Number(row!.num_following),
        following: Number(row!.following)
      }
    })
  )

describe("follow and unfollow", () => {
  it("PUT and DELETE are idempotent 204s with empty bodies, and keep both counters exact", async () => {
    expect((await call("GET", "/user/following/carol", basic("bob"))).status).toBe(404)
    for (let i = 0; i < 2; i++) {
      const res = await call("PUT", "/user/following/carol", basic("bob"))
      expect(res.status).toBe(204)
      expect(await res.text()).toBe("")
    }
    expect((await call("GET", "/user/following/carol", basic("bob"))).status).toBe(204)
    expect((await call("GET", "/users/bob/following/carol", basic("dave"))).status).toBe(204)
    expect((await call("GET", "/users/carol/following/bob", basic("dave"))).status).toBe(404)
    expect((await me("bob")).following_count).toBe(1)
    expect((await me("carol")).followers_count).toBe(1)
    const profile = await json(await call("GET", "/users/carol", basic("dave")))
    expectSwagger(profile, "User")
    expect(profile.followers_count).toBe(1)
    expect(await truth("carol")).toEqual({ numFollowers: 1, followers: 1, numFollowing: 0, following: 0 })

    for (let i = 0; i < 2; i++) {
      const res = await call("DELETE", "/user/following/carol", basic("bob"))
      expect(res.status).toBe(204)
      expect(await res.text()).toBe("")
    }
    expect((await call("GET", "/user/following/carol", basic("bob"))).status).toBe(404)
    expect((await me("bob")).following_count).toBe(0)
    expect(await truth("carol")).toEqual({ numFollowers: 0, followers: 0, numFollowing: 0, following: 0 })
  })

  it("shows the new counters at once to callers using tokens (cached with their account)", async () => {
    const erin = await createToken(hearth, "erin", ["all"])
    const alice = await createToken(hearth, "alice", ["all"])
    const count = async (token: string, member: string) =>
      (await json(await call("GET", "/user", `token ${token}`)))[member]
    expect(await count(erin, "following_count")).toBe(0)
    expect(await count(alice, "followers_count")).toBe(0)
    expect((await call("PUT", "/user/following/alice", `token ${erin}`)).status).toBe(204)
    expect(await count(erin, "following_count")).toBe(1)
    expect(await count(alice, "followers_count")).toBe(1)
    expect((await call("DELETE", "/user/following/alice", `token ${erin}`)).status).toBe(204)
    expect(await count(erin, "following_count")).toBe(0)
    expect(await count(alice, "followers_count")).toBe(0)
  })

  it("refuses following oneself (422, where Forgejo ignores it); unknown users are 404; nothing changes", async () => {
    for (const name of ["dave", "DAVE"]) {
      const res = await call("PUT", `/user/following/${name}`, basic("dave"))
      expect(res.status).toBe(422)
      expect((await json(res)).message).toBe("you cannot follow yourself")
    }
    expect((await call("GET", "/user/following/dave", basic("dave"))).status).toBe(404)
    expect(await truth("dave")).toEqual({ numFollowers: 0, followers: 0, numFollowing: 0, following: 0 })

    for (const method of ["PUT", "GET", "DELETE"]) {
      const res = await call(method, "/user/following/nobody", basic("dave"))
      expect(res.status).toBe(404)
      expect(await res.text()).toBe("")
    }
    expect((await call("GET", "/users/nobody/followers", basic("dave"))).status).toBe(404)
    expect((await call("GET", "/users/nobody/following", basic("dave"))).status).toBe(404)
    expect((await call("GET", "/users/dave/following/nobody", basic("dave"))).status).toBe(404)
    expect((await call("GET", "/users/nobody/following/dave", basic("dave"))).status).toBe(404)
    expect(await truth("dave")).toEqual({ numFollowers: 0, followers: 0, numFollowing: 0, following: 0 })
  })

  it("needs a signed-in caller, read:user to read and write:user to change (`tokenRequiresScopes`)", async () => {
    for (const [method, path] of [
      ["GET", "/user/followers"],
      ["GET", "/user/following"],
      ["GET", "/user/following/bob"],
      ["PUT", "/user/following/bob"],
      ["DELETE", "/user/following/bob"],
      ["GET", "/users/bob/followers"],
      ["GET", "/users/bob/following"],
      ["GET", "/users/bob/following/carol"]
    ] as const) {
      expect((await call(method, path)).status, `${method} ${path}`).toBe(401)
    }
    const reader = await createToken(hearth, "erin", ["read:user"])
    const refused = await call("PUT", "/user/following/bob", `token ${reader}`)
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toContain("write:user")
    expect((await call("GET", "/user/following", `token ${reader}`)).status).toBe(200)
    const repoOnly = await createToken(hearth, "erin", ["write:repository"])
    expect((await call("GET", "/users/bob/followers", `token ${repoOnly}`)).status).toBe(403)
    const writer = await createToken(hearth, "erin", ["write:user"])
    expect((await call("PUT", "/user/following/bob", `token ${writer}`)).status).toBe(204)
    expect((await call("DELETE", "/user/following/bob", `token ${writer}`)).status).toBe(204)
    expect(await truth("erin")).toMatchObject({ numFollowing: 0, following: 0 })
  })

  it("keeps the counters exact when many users follow and unfollow at once", async () => {
    const all = (method: string) =>
      Promise.all(
        CROWD.flatMap((user) => [
          call(method, "/user/following/alice", basic(user)),
          call(method, "/user/following/alice", basic(user))
        ])
      )
    for (const res of await all("PUT")) expect(res.status).toBe(204)
    expect(await truth("alice")).toMatchObject({ numFollowers: CROWD.length, followers: CROWD.length })
    for (const user of CROWD.slice(0, 3)) expect((await me(user)).following_count).toBe(1)
    for (const res of await all("DELETE")) expect(res.status).toBe(204)
    expect(await truth("alice")).toMatchObject({ numFollowers: 0, followers: 0 })
    for (const user of CROWD.slice(0, 3)) expect(await truth(user)).toMatchObject({ numFollowing: 0, following: 0 })
  })

  it("deleting an account lowers the counters of those it followed and of its followers", async () => {
    await createUser(hearth, { username: "leaver" })
    expect((await call("PUT", "/user/following/leaver", basic("carol"))).status).toBe(204)
    expect((await call("PUT", "/user/following/dave", basic("leaver"))).status).toBe(204)
    expect(await truth("carol")).toMatchObject({ numFollowing: 1 })
    expect(await truth("dave")).toMatchObject({ numFollowers: 1 })
    expect((await call("DELETE", "/admin/users/leaver", basic("root"))).status).toBe(204)
    expect(await truth("carol")).toEqual({ numFollowers: 0, followers: 0, numFollowing: 0, following: 0 })
    expect(await truth("dave")).toEqual({ numFollowers: 0, followers: 0, numFollowing: 0, following: 0 })
    expect((await me("carol")).following_count).toBe(0)
  })
})

describe("lists", () => {
  it("answer User[] with X-Total-Count and no Link; every row without `page`, pages with it", async () => {
    await createUser(hearth, { username: "star" })
    const fans = CROWD.slice(0, 4)
    for (const fan of fans) expect((await call("PUT", "/user/following/star", basic(fan))).status).toBe(204)

    const res = await call("GET", "/users/star/followers", basic("bob"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("4")
    expect(res.headers.get("link")).toBeNull()
    const body = await json(res)
    expectSwagger(body, "User[]")
    // More than DEFAULT_PAGING_NUM (2): newest follow first.
    expect(logins(body)).toEqual([...fans].reverse())

    const paged = await call("GET", "/users/star/followers?page=2&limit=3", basic("bob"))
    expect(logins(await json(paged))).toEqual([fans[0]])
    expect(paged.headers.get("x-total-count")).toBe("4")
    expect((await json(await call("GET", "/users/star/followers?page=1", basic("bob")))).length).toBe(2)

    const mine = await call("GET", "/user/followers", basic("star"))
    expect(logins(await json(mine))).toEqual([...fans].reverse())
    expect(mine.headers.get("x-total-count")).toBe("4")

    const following = await call("GET", `/users/${fans[0]}/following`, basic("bob"))
    expect(following.status).toBe(200)
    const followed = await json(following)
    expectSwagger(followed, "User[]")
    expect(logins(followed)).toEqual(["star"])
    expect(logins(await json(await call("GET", "/user/following", basic(fans[0]!))))).toEqual(["star"])
    expect(followed[0].followers_count).toBe(4)
  })

  it("list only accounts the caller may see; hidden accounts are 404 in paths", async () => {
    await createUser(hearth, { username: "celeb" })
    expect((await call("PUT", "/user/following/celeb", basic("hidden"))).status).toBe(204)
    expect((await call("PUT", "/user/following/celeb", basic("carol"))).status).toBe(204)

    // bob cannot see the private account: not in the list, not in the count.
    const seenByBob = await call("GET", "/users/celeb/followers", basic("bob"))
    expect(logins(await json(seenByBob))).toEqual(["carol"])
    expect(seenByBob.headers.get("x-total-count")).toBe("1")
    // The account itself and administrators see it.
    expect(logins(await json(await call("GET", "/users/celeb/followers", basic("root"))))).toEqual(["carol", "hidden"])
    expect(logins(await json(await call("GET", "/user/following", basic("hidden"))))).toEqual(["celeb"])
    // The counter counts every follower (Forgejo's num_followers).
    expect((await json(await call("GET", "/users/celeb", basic("bob")))).followers_count).toBe(2)

    for (const [method, path] of [
      ["PUT", "/user/following/hidden"],
      ["GET", "/user/following/hidden"],
      ["DELETE", "/user/following/hidden"],
      ["GET", "/users/hidden/followers"],
      ["GET", "/users/hidden/following"],
      ["GET", "/users/hidden/following/celeb"],
      ["GET", "/users/celeb/following/hidden"]
    ] as const) {
      const res = await call(method, path, basic("bob"))
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(await res.text()).toBe("")
    }
    expect(await truth("hidden")).toMatchObject({ numFollowers: 0, numFollowing: 1 })
    expect((await call("GET", "/users/hidden/following/celeb", basic("root"))).status).toBe(204)
    // A public-only token sees public accounts only.
    const publicOnly = await createToken(hearth, "root", ["read:user", "public-only"])
    expect(logins(await json(await call("GET", "/users/celeb/followers", `token ${publicOnly}`)))).toEqual(["carol"])
  })

  it("never show another user's private e-mail in the lists", async () => {
    await createUser(hearth, { username: "quiet" })
    await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        yield* users.update(yield* users.get("quiet"), { keep_email_private: true })
      })
    )
    expect((await call("PUT", "/user/following/dave", basic("quiet"))).status).toBe(204)
    const seen = (await json(await call("GET", "/users/dave/followers", basic("bob")))).find(
      (u: any) => u.login === "quiet"
    )
    expect(seen.email).toBe(`quiet@${hearth.settings.service.NO_REPLY_ADDRESS}`)
    const own = (await json(await call("GET", "/users/dave/followers", basic("quiet")))).find(
      (u: any) => u.login === "quiet"
    )
    expect(own.email).toBe("quiet@example.com")
    expect((await call("DELETE", "/user/following/dave", basic("quiet"))).status).toBe(204)
  })

  it("organizations can be followed and are listed under following, never under followers", async () => {
    const org = await call("POST", "/orgs", basic("alice"), { username: "guild" })
    expect(org.status, await org.clone().text()).toBe(201)
    expect((await call("PUT", "/user/following/guild", basic("erin"))).status).toBe(204)
    expect((await call("GET", "/user/following/guild", basic("erin"))).status).toBe(204)
    expect(logins(await json(await call("GET", "/users/erin/following", basic("bob"))))).toContain("guild")
    expect(await truth("guild")).toMatchObject({ numFollowers: 1, followers: 1 })
    expect((await call("DELETE", "/user/following/guild", basic("erin"))).status).toBe(204)
    expect(await truth("guild")).toMatchObject({ numFollowers: 0, followers: 0 })
  })
})

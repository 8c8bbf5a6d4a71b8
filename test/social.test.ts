// Stars and watches (issue 3 item 10; Forgejo's routers/api/v1/user/star.go, watch.go):
// idempotent writes, exact counters under concurrency, private repositories hidden, scopes.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const CROWD = Array.from({ length: 12 }, (_, i) => `fan${i}`)
beforeAll(async () => {
  // A small default page shows that the lists without `page` still return every row.
  // The counts here are of explicit watches only (auto-watch is test/auto-watch.test.ts).
  hearth = await startHearth({ api: { DEFAULT_PAGING_NUM: "2" }, service: { AUTO_WATCH_NEW_REPOS: "false" } })
  for (const username of ["alice", "bob", "carol", "dave", ...CROWD]) await createUser(hearth, { username })
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

let unique = 0
const createRepo = async (user: string, body: Record<string, unknown> = {}) => {
  const res = await call("POST", "/user/repos", basic(user), { name: `r${++unique}`, ...body })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)) as { name: string; full_name: string; created_at: string }
}

const repoJson = async (fullName: string, auth = basic("alice")) => json(await call("GET", `/repos/${fullName}`, auth))
const starredCount = async (user: string) => (await json(await call("GET", "/user", basic(user)))).starred_repos_count

/** The stored counters, read straight from the tables they summarize. */
const truth = (fullName: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [owner, name] = fullName.split("/")
      const [row] = yield* sql`SELECT r.num_stars, r.num_watches,
        (SELECT count(*) FROM stars s WHERE s.repo_id = r.id) AS stars,
        (SELECT count(*) FROM watches w WHERE w.repo_id = r.id AND w.mode <> 'dont') AS watches
      FROM repositories r JOIN users o ON o.id = r.owner_id
      WHERE o.lower_name = ${owner!.toLowerCase()} AND r.lower_name = ${name!.toLowerCase()}`
      return {
        numStars: Number(row!.num_stars),
        stars: Number(row!.stars),
        numWatches: Number(row!.num_watches),
        watches: Number(row!.watches)
      }
    })
  )

describe("stars", () => {
  it("PUT and DELETE are idempotent 204s and keep both counters exact", async () => {
    const repo = await createRepo("alice")
    const path = `/user/starred/${repo.full_name}`
    expect((await call("GET", path, basic("bob"))).status).toBe(404)
    const before = await starredCount("bob")

    for (let i = 0; i < 2; i++) {
      const res = await call("PUT", path, basic("bob"))
      expect(res.status).toBe(204)
      expect(await res.text()).toBe("")
    }
    expect((await call("GET", path, basic("bob"))).status).toBe(204)
    expect((await repoJson(repo.full_name)).stars_count).toBe(1)
    expect(await starredCount("bob")).toBe(before + 1)

    for (let i = 0; i < 2; i++) expect((await call("DELETE", path, basic("bob"))).status).toBe(204)
    expect((await call("GET", path, basic("bob"))).status).toBe(404)
    expect((await repoJson(repo.full_name)).stars_count).toBe(0)
    expect(await starredCount("bob")).toBe(before)
  })

  it("answers 404 for unknown owners and repositories, and 401 to anonymous callers", async () => {
    expect((await call("PUT", "/user/starred/alice/no-such-repo", basic("bob"))).status).toBe(404)
    expect((await call("PUT", "/user/starred/nobody/x", basic("bob"))).status).toBe(404)
    expect((await call("GET", "/user/starred/alice/no-such-repo", basic("bob"))).status).toBe(404)
    const repo = await createRepo("alice")
    expect((await call("PUT", `/user/starred/${repo.full_name}`)).status).toBe(401)
    expect((await call("GET", "/user/starred")).status).toBe(401)
  })

  it("lists starred repositories as Repository[] with X-Total-Count and no Link, all rows without `page`", async () => {
    const repos = [await createRepo("alice"), await createRepo("bob"), await createRepo("carol")]
    for (const r of repos) expect((await call("PUT", `/user/starred/${r.full_name}`, basic("dave"))).status).toBe(204)

    const res = await call("GET", "/user/starred", basic("dave"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toBeNull()
    const body = await json(res)
    expectSwagger(body, "Repository[]")
    // More than DEFAULT_PAGING_NUM (2): without `page` every row comes back, newest star first.
    expect(body.map((r: any) => r.full_name)).toEqual(repos.map((r) => r.full_name).reverse())
    expect(body[0].stars_count).toBe(1)

    const paged = await json(await call("GET", "/user/starred?page=2&limit=2", basic("dave")))
    expect(paged.map((r: any) => r.full_name)).toEqual([repos[0]!.full_name])
    const first = await call("GET", "/user/starred?page=1", basic("dave"))
    expect((await json(first)).length).toBe(2)
    expect(first.headers.get("x-total-count")).toBe("3")

    const other = await call("GET", "/users/dave/starred", basic("bob"))
    expect(other.status).toBe(200)
    expect((await json(other)).map((r: any) => r.full_name)).toEqual(repos.map((r) => r.full_name).reverse())
    expect((await call("GET", "/users/nobody/starred", basic("bob"))).status).toBe(404)
    expect((await call("GET", "/users/dave/starred")).status).toBe(401)
  })

  it("hides private repositories from those who cannot see them (404), and from lists", async () => {
    const secret = await createRepo("carol", { private: true })
    const path = `/user/starred/${secret.full_name}`
    expect((await call("PUT", path, basic("carol"))).status).toBe(204)
    // bob cannot see it: every route answers as if it did not exist.
    expect((await call("PUT", path, basic("bob"))).status).toBe(404)
    expect((await call("GET", path, basic("bob"))).status).toBe(404)
    expect((await call("DELETE", path, basic("bob"))).status).toBe(404)
    expect((await call("GET", `/repos/${secret.full_name}/stargazers`, basic("bob"))).status).toBe(404)
    expect((await call("GET", `/repos/${secret.full_name}/stargazers`)).status).toBe(404)
    expect((await truth(secret.full_name)).stars).toBe(1)

    const mine = await json(await call("GET", "/user/starred", basic("carol")))
    expect(mine.map((r: any) => r.full_name)).toContain(secret.full_name)
    const seenByBob = await call("GET", "/users/carol/starred", basic("bob"))
    expect((await json(seenByBob)).map((r: any) => r.full_name)).not.toContain(secret.full_name)
    // Forgejo's quirk: the header is the user's star counter, private stars included.
    expect(seenByBob.headers.get("x-total-count")).toBe(String(await starredCount("carol")))
  })

  it("keeps the counters exact when many users star and unstar at once", async () => {
    const repo = await createRepo("alice")
    const path = `/user/starred/${repo.full_name}`
    const all = (method: string) =>
      Promise.all(CROWD.flatMap((user) => [call(method, path, basic(user)), call(method, path, basic(user))]))
    for (const res of await all("PUT")) expect(res.status).toBe(204)
    expect(await truth(repo.full_name)).toMatchObject({ numStars: CROWD.length, stars: CROWD.length })
    expect((await repoJson(repo.full_name)).stars_count).toBe(CROWD.length)
    for (const user of CROWD.slice(0, 3)) expect(await starredCount(user)).toBe(1)

    const gazers = await call("GET", `/repos/${repo.full_name}/stargazers`)
    expect(gazers.status).toBe(200)
    expect(gazers.headers.get("x-total-count")).toBe(String(CROWD.length))
    const users = await json(gazers)
    expectSwagger(users, "User[]")
    expect(users.map((u: any) => u.login).sort()).toEqual([...CROWD].sort())
    expect((await json(await call("GET", `/repos/${repo.full_name}/stargazers?page=2&limit=5`))).length).toBe(5)

    for (const res of await all("DELETE")) expect(res.status).toBe(204)
    expect(await truth(repo.full_name)).toMatchObject({ numStars: 0, stars: 0 })
    for (const user of CROWD.slice(0, 3)) expect(await starredCount(user)).toBe(0)
  })

  it("needs user + repository scopes, write ones to star (`tokenRequiresScopes`)", async () => {
    const repo = await createRepo("alice")
    const path = `/user/starred/${repo.full_name}`
    const repoOnly = await createToken(hearth, "bob", ["write:repository"])
    const res = await call("PUT", path, `token ${repoOnly}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toContain("write:user")
    const readBoth = await createToken(hearth, "bob", ["read:user", "read:repository"])
    expect((await call("GET", "/user/starred", `token ${readBoth}`)).status).toBe(200)
    expect((await call("PUT", path, `token ${readBoth}`)).status).toBe(403)
    expect((await truth(repo.full_name)).stars).toBe(0)
    const writeBoth = await createToken(hearth, "bob", ["write:user", "write:repository"])
    expect((await call("PUT", path, `token ${writeBoth}`)).status).toBe(204)
    expect((await truth(repo.full_name)).stars).toBe(1)
    // /users/{u}/starred needs `user` only.
    const userOnly = await createToken(hearth, "bob", ["read:user"])
    expect((await call("GET", "/users/bob/starred", `token ${userOnly}`)).status).toBe(200)
    expect((await call("GET", "/user/starred", `token ${userOnly}`)).status).toBe(403)
  })

  it("keeps private repositories away from public-only tokens", async () => {
    const secret = await createRepo("alice", { private: true })
    const open = await createRepo("alice")
    expect((await call("PUT", `/user/starred/${secret.full_name}`, basic("alice"))).status).toBe(204)
    expect((await call("PUT", `/user/starred/${open.full_name}`, basic("alice"))).status).toBe(204)
    const token = await createToken(hearth, "alice", ["public-only", "write:user", "write:repository"])
    const listed = await json(await call("GET", "/user/starred", `token ${token}`))
    expect(listed.map((r: any) => r.full_name)).toContain(open.full_name)
    expect(listed.map((r: any) => r.full_name)).not.toContain(secret.full_name)
    const refused = await call("DELETE", `/user/starred/${secret.full_name}`, `token ${token}`)
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("token scope is limited to public repos")
    expect((await truth(secret.full_name)).stars).toBe(1)
  })
})

describe("token callers", () => {
  it("see their own counters change at once (the cached token keeps no stale account row)", async () => {
    const repo = await createRepo("alice")
    const token = `token ${await createToken(hearth, "carol", ["write:user", "write:repository", "read:user"])}`
    const before = (await json(await call("GET", "/user", token))).starred_repos_count
    expect((await call("PUT", `/user/starred/${repo.full_name}`, token)).status).toBe(204)
    expect((await json(await call("GET", "/user", token))).starred_repos_count).toBe(before + 1)
    expect((await call("DELETE", `/user/starred/${repo.full_name}`, token)).status).toBe(204)
    expect((await json(await call("GET", "/user", token))).starred_repos_count).toBe(before)
  })
})

describe("watches", () => {
  it("PUT answers WatchInfo, GET 200 while watching and 404 after DELETE; counts stay exact", async () => {
    const repo = await createRepo("alice")
    const path = `/repos/${repo.full_name}/subscription`
    expect((await call("GET", path, basic("bob"))).status).toBe(404)

    for (let i = 0; i < 2; i++) {
      const res = await call("PUT", path, basic("bob"))
      expect(res.status).toBe(200)
      const info = await json(res)
      expectSwagger(info, "WatchInfo")
      const root = hearth.settings.server.ROOT_URL
      expect(info).toEqual({
        subscribed: true,
        ignored: false,
        reason: null,
        // Forgejo's quirk: the repository's creation time.
        created_at: repo.created_at,
        url: `${root}api/v1/repos/${repo.full_name}/subscription`,
        repository_url: `${root}api/v1/repos/${repo.full_name}`
      })
    }
    const got = await call("GET", path, basic("bob"))
    expect(got.status).toBe(200)
    expectSwagger(await json(got), "WatchInfo")
    expect((await repoJson(repo.full_name)).watchers_count).toBe(1)
    expect((await call("GET", path)).status).toBe(401)
    expect((await call("GET", `/repos/alice/no-such-repo/subscription`, basic("bob"))).status).toBe(404)

    for (let i = 0; i < 2; i++) {
      const res = await call("DELETE", path, basic("bob"))
      expect(res.status).toBe(204)
    }
    expect((await call("GET", path, basic("bob"))).status).toBe(404)
    expect((await repoJson(repo.full_name)).watchers_count).toBe(0)
    expect(await truth(repo.full_name)).toMatchObject({ numWatches: 0, watches: 0 })
  })

  it("counts a revived 'don't watch' row once, and an automatic watch not again", async () => {
    const repo = await createRepo("alice")
    const path = `/repos/${repo.full_name}/subscription`
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`INSERT INTO watches (user_id, repo_id, mode)
        SELECT u.id, r.id, m.mode FROM repositories r JOIN users o ON o.id = r.owner_id,
          (VALUES ('bob', 'dont'), ('carol', 'auto')) AS m (name, mode) JOIN users u ON u.lower_name = m.name
        WHERE o.lower_name = 'alice' AND r.lower_name = ${repo.name.toLowerCase()}`
        yield* sql`UPDATE repositories SET num_watches = 1 WHERE lower_name = ${repo.name.toLowerCase()}`
      })
    )
    expect((await call("GET", path, basic("bob"))).status).toBe(404)
    expect((await call("GET", path, basic("carol"))).status).toBe(200)
    expect((await call("PUT", path, basic("bob"))).status).toBe(200)
    expect((await call("PUT", path, basic("carol"))).status).toBe(200)
    expect(await truth(repo.full_name)).toMatchObject({ numWatches: 2, watches: 2 })
  })

  it("lists watched repositories and watchers; private ones only for who may see them", async () => {
    const open = await createRepo("dave")
    const secret = await createRepo("dave", { private: true })
    for (const r of [open, secret]) {
      expect((await call("PUT", `/repos/${r.full_name}/subscription`, basic("dave"))).status).toBe(200)
    }
    expect((await call("PUT", `/repos/${secret.full_name}/subscription`, basic("bob"))).status).toBe(404)
    expect((await truth(secret.full_name)).watches).toBe(1)

    const mine = await call("GET", "/user/subscriptions", basic("dave"))
    expect(mine.status).toBe(200)
    const body = await json(mine)
    expectSwagger(body, "Repository[]")
    expect(body.map((r: any) => r.full_name)).toEqual([open.full_name, secret.full_name])
    expect(mine.headers.get("x-total-count")).toBe("2")
    expect(mine.headers.get("link")).toBeNull()

    const seen = await call("GET", "/users/dave/subscriptions", basic("bob"))
    expect((await json(seen)).map((r: any) => r.full_name)).toEqual([open.full_name])
    // Unlike the starred lists, the total counts what the caller may see.
    expect(seen.headers.get("x-total-count")).toBe("1")
    expect(
      (await json(await call("GET", "/users/dave/subscriptions?page=2&limit=1", basic("dave")))).map(
        (r: any) => r.full_name
      )
    ).toEqual([secret.full_name])
    expect((await call("GET", "/users/dave/subscriptions")).status).toBe(401)

    const watchers = await call("GET", `/repos/${open.full_name}/subscribers`)
    expect(watchers.status).toBe(200)
    expect(watchers.headers.get("x-total-count")).toBe("1")
    const users = await json(watchers)
    expectSwagger(users, "User[]")
    expect(users.map((u: any) => u.login)).toEqual(["dave"])
    expect((await call("GET", `/repos/${secret.full_name}/subscribers`, basic("bob"))).status).toBe(404)
  })

  it("keeps the watch counter exact under concurrent watches and unwatches", async () => {
    const repo = await createRepo("alice")
    const path = `/repos/${repo.full_name}/subscription`
    const all = (method: string) =>
      Promise.all(CROWD.flatMap((user) => [call(method, path, basic(user)), call(method, path, basic(user))]))
    for (const res of await all("PUT")) expect(res.status).toBe(200)
    expect(await truth(repo.full_name)).toMatchObject({ numWatches: CROWD.length, watches: CROWD.length })
    for (const res of await all("DELETE")) expect(res.status).toBe(204)
    expect(await truth(repo.full_name)).toMatchObject({ numWatches: 0, watches: 0 })
  })

  it("needs the repository scope on /repos/…/subscription and user on the lists", async () => {
    const repo = await createRepo("alice")
    const path = `/repos/${repo.full_name}/subscription`
    const userOnly = await createToken(hearth, "bob", ["write:user"])
    expect((await call("PUT", path, `token ${userOnly}`)).status).toBe(403)
    expect((await call("GET", "/user/subscriptions", `token ${userOnly}`)).status).toBe(200)
    const readRepo = await createToken(hearth, "bob", ["read:repository"])
    expect((await call("PUT", path, `token ${readRepo}`)).status).toBe(403)
    expect((await call("GET", "/user/subscriptions", `token ${readRepo}`)).status).toBe(403)
    expect((await truth(repo.full_name)).watches).toBe(0)
    const writeRepo = await createToken(hearth, "bob", ["write:repository"])
    expect((await call("PUT", path, `token ${writeRepo}`)).status).toBe(200)
    expect((await call("GET", path, `token ${readRepo}`)).status).toBe(200)
  })
})

describe("deletions keep the counters exact", () => {
  it("deleting a repository lowers its stargazers' starred count", async () => {
    await createUser(hearth, { username: "fading" })
    const repo = await createRepo("fading")
    expect((await call("PUT", `/user/starred/${repo.full_name}`, basic("bob"))).status).toBe(204)
    const before = await starredCount("bob")
    expect((await call("DELETE", `/repos/${repo.full_name}`, basic("fading"))).status).toBe(204)
    expect(await starredCount("bob")).toBe(before - 1)
  })

  it("deleting a user lowers the star and watch counters of what it starred and watched", async () => {
    await createUser(hearth, { username: "root2", isAdmin: true })
    await createUser(hearth, { username: "goner" })
    const repo = await createRepo("alice")
    expect((await call("PUT", `/user/starred/${repo.full_name}`, basic("goner"))).status).toBe(204)
    expect((await call("PUT", `/repos/${repo.full_name}/subscription`, basic("goner"))).status).toBe(200)
    expect(await truth(repo.full_name)).toMatchObject({ numStars: 1, numWatches: 1 })
    expect((await call("DELETE", "/admin/users/goner", basic("root2"))).status).toBe(204)
    const after = await truth(repo.full_name)
    expect(after).toMatchObject({ numStars: 0, stars: 0 })
    expect(after.numWatches).toBe(after.watches)
    expect((await repoJson(repo.full_name)).stars_count).toBe(0)
  })
})

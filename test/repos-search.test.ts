// GET /repos/search: keywords (commas, owner/name), uid/exclusive, private/is_private, mode, sort
// and order, starredBy, paging capped by [ui] EXPLORE_PAGING_NUM, what each caller may see, and
// `{ok:false,error}` with 500 on a database failure (issue 3 item 3; Forgejo's repo `Search`).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let publicOnlyToken: string
beforeAll(async () => {
  hearth = await startHearth({ ui: { EXPLORE_PAGING_NUM: "4" } })
  await Promise.all([
    createUser(hearth, { username: "alice" }),
    createUser(hearth, { username: "bob" }),
    createUser(hearth, { username: "carol" }),
    createUser(hearth, { username: "lim", visibility: "limited" }),
    createUser(hearth, { username: "hid", visibility: "private" }),
    createUser(hearth, { username: "rita", restricted: true }),
    createUser(hearth, { username: "root", isAdmin: true })
  ])
  const make = async (user: string, name: string, priv = false) => {
    const res = await request(hearth, "POST", "/user/repos", basic(user), { name, private: priv })
    expect(res.status, await res.clone().text()).toBe(201)
  }
  // Created in this order: ids follow it.
  await make("alice", "zeta-tool")
  await make("alice", "alpha-tool")
  await make("alice", "secret-tool", true)
  await make("bob", "bob-tool")
  await make("bob", "bob_under")
  await make("lim", "lim-tool")
  await make("hid", "hid-tool")
  await make("carol", "carol-private", true)
  await make("carol", "carol-fork")
  // bob collaborates on alice's private repository; carol's fork is a fork; alice stars two.
  await hearth.sql(
    (s) =>
      s`INSERT INTO collaborations (repo_id, user_id, mode)
      SELECT r.id, u.id, 'read' FROM repositories r, users u WHERE r.lower_name = 'secret-tool' AND u.lower_name = 'bob'`
  )
  await hearth.sql(
    (s) =>
      s`INSERT INTO collaborations (repo_id, user_id, mode)
      SELECT r.id, u.id, 'read' FROM repositories r, users u WHERE r.lower_name = 'alpha-tool' AND u.lower_name = 'rita'`
  )
  await hearth.sql((s) => s`UPDATE repositories SET is_fork = true, size = 5000 WHERE lower_name = 'carol-fork'`)
  await hearth.sql(
    (s) =>
      s`INSERT INTO stars (user_id, repo_id) SELECT u.id, r.id FROM users u, repositories r
      WHERE u.lower_name = 'alice' AND r.lower_name IN ('bob-tool', 'zeta-tool')`
  )
  publicOnlyToken = await createToken(hearth, "bob", ["read:repository", "public-only"])
})
afterAll(() => hearth?.close())

const search = (query: string, auth?: string) => request(hearth, "GET", `/repos/search?${query}`, auth)

/** Full names found, in order (limit 4 is the cap: several pages are read when needed). */
const names = async (query: string, auth?: string): Promise<Array<string>> => {
  const out: Array<string> = []
  for (let page = 1; page < 10; page++) {
    const res = await search(`${query}&page=${page}`, auth)
    expect(res.status, await res.clone().text()).toBe(200)
    const body = await json(res)
    expect(body.ok).toBe(true)
    out.push(...body.data.map((r: any) => r.full_name))
    if (body.data.length < 4) break
  }
  return out
}

const sorted = (xs: Array<string>) => [...xs].sort()

describe("GET /repos/search", () => {
  it("answers {ok, data} with Repository objects, X-Total-Count and Link", async () => {
    const res = await search("q=tool")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "SearchResults")
    expect(body.ok).toBe(true)
    // Anonymous: public repositories of public owners only, by name.
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(body.data.map((r: any) => r.full_name)).toEqual(["alice/alpha-tool", "bob/bob-tool", "alice/zeta-tool"])
    expect(body.data[0].permissions).toEqual({ admin: false, push: false, pull: true })
  })

  it("reports each caller's own permissions per repository (batched lookups)", async () => {
    expect((await request(hearth, "POST", "/orgs", basic("carol"), { username: "guild" })).status).toBe(201)
    expect(
      (await request(hearth, "POST", "/orgs/guild/repos", basic("carol"), { name: "guild-vault", private: true }))
        .status
    ).toBe(201)
    const perms = async (auth: string) => {
      const body = await json(await search("q=secret,vault&limit=50", auth))
      return Object.fromEntries(body.data.map((r: any) => [r.full_name, r.permissions]))
    }
    expect(await perms(basic("bob"))).toEqual({ "alice/secret-tool": { admin: false, push: false, pull: true } })
    expect(await perms(basic("alice"))).toEqual({ "alice/secret-tool": { admin: true, push: true, pull: true } })
    // carol owns the org (owner team): owner rights on its private repository.
    expect(await perms(basic("carol"))).toEqual({ "guild/guild-vault": { admin: true, push: true, pull: true } })
    await hearth.sql(
      (s) => s`UPDATE collaborations SET mode = 'write' WHERE user_id = (SELECT id FROM users WHERE lower_name = 'bob')`
    )
    expect(await perms(basic("bob"))).toEqual({ "alice/secret-tool": { admin: false, push: true, pull: true } })
    await hearth.sql(
      (s) => s`UPDATE collaborations SET mode = 'read' WHERE user_id = (SELECT id FROM users WHERE lower_name = 'bob')`
    )
  })

  it("caps limit by EXPLORE_PAGING_NUM and links the pages", async () => {
    const res = await search("limit=50")
    const body = await json(res)
    expect(body.data.length).toBe(4)
    const total = Number(res.headers.get("x-total-count"))
    expect(total).toBeGreaterThan(4)
    const link = res.headers.get("link")!
    expect(link).toContain('rel="next"')
    expect(link).toContain("page=2")
  })

  it("anonymous callers see no private repositories and no limited or private owners", async () => {
    const found = await names("limit=4")
    expect(sorted(found)).toEqual([
      "alice/alpha-tool",
      "alice/zeta-tool",
      "bob/bob-tool",
      "bob/bob_under",
      "carol/carol-fork"
    ])
  })

  it("signed-in callers add limited owners and what they can reach; private=false drops the private ones", async () => {
    expect(sorted(await names("q=tool", basic("bob")))).toEqual([
      "alice/alpha-tool",
      "alice/secret-tool",
      "alice/zeta-tool",
      "bob/bob-tool",
      "lim/lim-tool"
    ])
    expect(sorted(await names("q=tool&private=false", basic("bob")))).toEqual([
      "alice/alpha-tool",
      "alice/zeta-tool",
      "bob/bob-tool"
    ])
    expect(await names("q=secret", basic("carol"))).toEqual([])
    expect(await names("q=secret", `token ${publicOnlyToken}`)).toEqual([])
  })

  it("site admins see everything; restricted users only what they were given", async () => {
    expect(sorted(await names("q=private", basic("root")))).toEqual(["carol/carol-private"])
    expect(await names("q=hid", basic("root"))).toEqual(["hid/hid-tool"])
    expect(await names("q=tool", basic("rita"))).toEqual(["alice/alpha-tool"])
  })

  it("q: comma-separated alternatives, owner/name form, LIKE wildcards taken literally", async () => {
    expect(sorted(await names("q=alpha,zeta"))).toEqual(["alice/alpha-tool", "alice/zeta-tool"])
    expect(await names("q=ali/alp")).toEqual(["alice/alpha-tool"])
    // Repositories of the owner named in an owner/name keyword come first.
    expect(await names("q=alpha,bob/bob")).toEqual(["bob/bob-tool", "bob/bob_under", "alice/alpha-tool"])
    expect(await names("q=alpha,bob")).toEqual(["alice/alpha-tool", "bob/bob-tool", "bob/bob_under"])
    expect(await names("q=ALPHA")).toEqual(["alice/alpha-tool"])
    expect(await names("q=_")).toEqual(["bob/bob_under"])
    expect(await names("q=%25")).toEqual([])
  })

  it("uid with and without exclusive; is_private", async () => {
    const bobId = (await json(await request(hearth, "GET", "/users/bob", basic("bob")))).id
    expect(sorted(await names(`uid=${bobId}`, basic("bob")))).toEqual([
      "alice/secret-tool",
      "bob/bob-tool",
      "bob/bob_under"
    ])
    expect(sorted(await names(`uid=${bobId}&exclusive=true`, basic("bob")))).toEqual(["bob/bob-tool", "bob/bob_under"])
    expect(await names(`uid=${bobId}&mode=collaborative`, basic("bob"))).toEqual(["alice/secret-tool"])
    expect(await names("is_private=true", basic("bob"))).toEqual(["alice/secret-tool"])
    expect(await names("uid=abc&q=zeta")).toEqual(["alice/zeta-tool"])
  })

  it("mode fork and source, starredBy", async () => {
    expect(await names("mode=fork")).toEqual(["carol/carol-fork"])
    expect((await names("mode=source")).includes("carol/carol-fork")).toBe(false)
    expect(await names("mode=mirror")).toEqual([])
    const aliceId = (await json(await request(hearth, "GET", "/users/alice", basic("alice")))).id
    expect(sorted(await names(`starredBy=${aliceId}`))).toEqual(["alice/zeta-tool", "bob/bob-tool"])
  })

  it("sorts: default by name, alpha by owner then name, id, size, with order", async () => {
    expect(await names("q=tool")).toEqual(["alice/alpha-tool", "bob/bob-tool", "alice/zeta-tool"])
    expect(await names("q=tool&sort=alpha&order=desc")).toEqual(["bob/bob-tool", "alice/zeta-tool", "alice/alpha-tool"])
    expect(await names("q=tool&sort=alpha")).toEqual(["alice/alpha-tool", "alice/zeta-tool", "bob/bob-tool"])
    expect(await names("q=tool&sort=id")).toEqual(["alice/zeta-tool", "alice/alpha-tool", "bob/bob-tool"])
    expect(await names("q=tool&sort=created&order=desc")).toEqual([
      "bob/bob-tool",
      "alice/alpha-tool",
      "alice/zeta-tool"
    ])
    expect((await names("sort=size&order=desc"))[0]).toBe("carol/carol-fork")
  })

  it("refuses unknown modes, sorts and orders with 422", async () => {
    for (const [query, message] of [
      ["mode=weird", 'Invalid search mode: "weird"'],
      ["sort=weird", 'Invalid sort mode: "weird"'],
      ["sort=id&order=up", 'Invalid sort order: "up"']
    ]) {
      const res = await search(query!)
      expect(res.status, query).toBe(422)
      expect((await json(res)).message).toBe(message)
    }
    // order without sort is ignored.
    expect((await search("order=up")).status).toBe(200)
  })

  it("answers {ok:false, error} with 500 when the database fails", async () => {
    await hearth.sql((s) => s`ALTER TABLE stars RENAME TO stars_away`)
    try {
      const res = await search("starredBy=1")
      expect(res.status).toBe(500)
      const body = await json(res)
      expect(body.ok).toBe(false)
      expect(typeof body.error).toBe("string")
      expect(body.error.length).toBeGreaterThan(0)
    } finally {
      await hearth.sql((s) => s`ALTER TABLE stars_away RENAME TO stars`)
    }
  })
})

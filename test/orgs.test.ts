// Organizations: /orgs, /orgs/{org}, /user/orgs, /users/{u}/orgs, members and public members
// (issue item 9; Forgejo's `tokenRequiresScopes`, `reqOrgOwnership`).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { UsersRepo } from "../src/users/Repo.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all([
    createUser(hearth, { username: "root", isAdmin: true }),
    createUser(hearth, { username: "alice" }),
    createUser(hearth, { username: "bob" }),
    createUser(hearth, { username: "carol" }),
    createUser(hearth, { username: "hidden", visibility: "private" })
  ])
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

let unique = 0
const orgName = (prefix = "org") => `${prefix}${++unique}`

/** Creates an org over the API as `owner`; returns its name. */
const createOrg = async (owner: string, extra: Record<string, unknown> = {}) => {
  const name = orgName()
  const res = await call("POST", "/orgs", basic(owner), { username: name, ...extra })
  expect(res.status, await res.clone().text()).toBe(201)
  return name
}

/**
 * Adds `username` to the org's Owners team or to a "members" team (made by `owner` when missing);
 * `actor` does the adding (site admins may add private users, owners may not see them).
 */
const addMember = async (
  org: string,
  owner: string,
  username: string,
  team: "Owners" | "members" = "members",
  actor = owner
) => {
  const teams = await json(await call("GET", `/orgs/${org}/teams`, basic(owner)))
  let found = teams.find((t: any) => t.name === team)
  if (found === undefined) {
    const res = await call("POST", `/orgs/${org}/teams`, basic(owner), {
      name: team,
      permission: "read",
      units: ["repo.code"]
    })
    expect(res.status).toBe(201)
    found = await json(res)
  }
  expect((await call("PUT", `/teams/${found.id}/members/${username}`, basic(actor))).status).toBe(204)
}

const orgCount = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql`SELECT count(*) AS n FROM users WHERE type = 1`
      return Number(row!.n)
    })
  )

describe("POST /orgs", () => {
  it("creates the org with an Owners team holding the creator, and answers Forgejo's Organization", async () => {
    const name = orgName("Acme")
    const res = await call("POST", "/orgs", basic("alice"), {
      username: name,
      full_name: "Acme Inc.",
      email: "info@acme.example",
      description: "We make things",
      website: "https://acme.example",
      location: "Earth",
      visibility: "limited",
      repo_admin_change_team_access: true
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(body, "Organization")
    expect(body).toMatchObject({
      name,
      username: name,
      full_name: "Acme Inc.",
      email: "info@acme.example",
      description: "We make things",
      website: "https://acme.example",
      location: "Earth",
      visibility: "limited",
      repo_admin_change_team_access: true
    })
    expect(body.avatar_url).toBe(`${hearth.base}/avatars/identicon/${name.toLowerCase()}`)

    const teams = await json(await call("GET", `/orgs/${name}/teams`, basic("alice")))
    expect(teams).toHaveLength(1)
    expect(teams[0]).toMatchObject({
      name: "Owners",
      permission: "owner",
      includes_all_repositories: true,
      can_create_org_repo: true
    })
    const members = await json(await call("GET", `/teams/${teams[0].id}/members`, basic("alice")))
    expect(members.map((u: any) => u.login)).toEqual(["alice"])
    expect((await call("GET", `/orgs/${name}/members/alice`, basic("alice"))).status).toBe(204)
    const mine = await json(await call("GET", "/user/orgs", basic("alice")))
    expect(mine.map((o: any) => o.name)).toContain(name)
  })

  it("defaults to public visibility, also for an empty visibility string (as Go clients send)", async () => {
    const a = await json(await call("POST", "/orgs", basic("alice"), { username: orgName() }))
    expect(a.visibility).toBe("public")
    const b = await json(await call("POST", "/orgs", basic("alice"), { username: orgName(), visibility: "" }))
    expect(b.visibility).toBe("public")
  })

  it("needs a signed-in caller", async () => {
    const res = await call("POST", "/orgs", undefined, { username: orgName() })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("token is required")
  })

  it("needs the write:organization scope", async () => {
    const read = await createToken(hearth, "alice", ["read:organization", "write:user"])
    const res = await call("POST", "/orgs", `token ${read}`, { username: orgName() })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe(
      "token does not have at least one of required scope(s): [write:organization]"
    )
    const write = await createToken(hearth, "alice", ["write:organization"])
    expect((await call("POST", "/orgs", `token ${write}`, { username: orgName() })).status).toBe(201)
  })

  it("refuses users not allowed to create organizations (403), but never site admins", async () => {
    const dan = await createUser(hearth, { username: "dan" })
    const root = await createUser(hearth, { username: "root2", isAdmin: true })
    await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        yield* users.update(dan, { allow_create_organization: false })
        yield* users.update(root, { allow_create_organization: false })
      })
    )
    const before = await orgCount()
    const res = await call("POST", "/orgs", basic("dan"), { username: orgName() })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Create organization not allowed")
    expect(await orgCount()).toBe(before)
    expect((await call("POST", "/orgs", basic("root2"), { username: orgName() })).status).toBe(201)
  })

  it("shares the user namespace: names taken by a user or an org, in any case, are 422", async () => {
    const taken = await createOrg("alice")
    const before = await orgCount()
    for (const username of ["bob", "BOB", taken.toUpperCase()]) {
      const res = await call("POST", "/orgs", basic("carol"), { username })
      expect(res.status, username).toBe(422)
      expect((await json(res)).message).toBe(`user already exists [name: ${username}]`)
    }
    expect(await orgCount()).toBe(before)
  })

  it("refuses invalid and reserved names with 422, writing nothing", async () => {
    const before = await orgCount()
    const cases: Array<[string, string]> = [
      ["", "[UserName]: Required"],
      ["bad name", "[UserName]: must be valid"],
      ["-dash", "[UserName]: must be valid"],
      ["a".repeat(41), "[UserName]: MaxSize (40)"],
      ["admin", "name is reserved"],
      ["thing.keys", "name is reserved"]
    ]
    for (const [username, message] of cases) {
      const res = await call("POST", "/orgs", basic("alice"), { username })
      expect(res.status, username).toBe(422)
      expect((await json(res)).message, username).toContain(message)
    }
    expect(await orgCount()).toBe(before)
  })

  it("refuses bad bodies with 422 naming the problem, writing nothing", async () => {
    const before = await orgCount()
    const cases: Array<[unknown, string]> = [
      [{}, "username"],
      [{ full_name: "No Name" }, "username"],
      [{ username: 42 }, "username"],
      [{ username: orgName(), visibility: "secret" }, "visibility"],
      [{ username: orgName(), full_name: 5 }, "full_name"],
      [{ username: orgName(), repo_admin_change_team_access: "yes" }, "repo_admin_change_team_access"],
      [{ username: orgName(), email: "not-an-email" }, "[Email]"],
      [{ username: orgName(), website: "ftp://example.com" }, "[Website]"],
      [{ username: orgName(), website: "not a url" }, "[Website]"],
      [{ username: orgName(), location: "x".repeat(51) }, "[Location]: MaxSize (50)"],
      [{ username: orgName(), full_name: "x".repeat(101) }, "[FullName]: MaxSize (100)"],
      [{ username: orgName(), description: "x".repeat(256) }, "[Description]: MaxSize (255)"],
      ["{not json", ""]
    ]
    for (const [body, field] of cases) {
      const res = await call("POST", "/orgs", basic("alice"), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      const message = (await json(res)).message
      expect(typeof message).toBe("string")
      expect(message, JSON.stringify(body)).toContain(field)
    }
    expect(await orgCount()).toBe(before)
  })
})

describe("GET /orgs/{org}", () => {
  it("shows a public org to everyone, without the e-mail to anonymous callers", async () => {
    const name = await createOrg("alice", { email: "team@example.com" })
    const anonymous = await call("GET", `/orgs/${name}`)
    expect(anonymous.status).toBe(200)
    const body = await json(anonymous)
    expectSwagger(body, "Organization")
    expect(body.email).toBe("")
    expect((await json(await call("GET", `/orgs/${name}`, basic("bob")))).email).toBe("team@example.com")
    // Lookups ignore case; the stored case is kept.
    expect((await json(await call("GET", `/orgs/${name.toUpperCase()}`))).name).toBe(name)
  })

  it("is 404 for unknown names and for individual users", async () => {
    expect((await call("GET", "/orgs/nosuchorg")).status).toBe(404)
    const res = await call("GET", "/orgs/bob", basic("bob"))
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })

  it("hides a limited org from anonymous callers only", async () => {
    const name = await createOrg("alice", { visibility: "limited" })
    expect((await call("GET", `/orgs/${name}`)).status).toBe(404)
    expect((await call("GET", `/orgs/${name}`, basic("bob"))).status).toBe(200)
  })

  it("hides a private org from everyone but its members and site admins", async () => {
    const name = await createOrg("alice", { visibility: "private" })
    expect((await call("GET", `/orgs/${name}`)).status).toBe(404)
    expect((await call("GET", `/orgs/${name}`, basic("bob"))).status).toBe(404)
    expect((await call("GET", `/orgs/${name}`, basic("alice"))).status).toBe(200)
    expect((await call("GET", `/orgs/${name}`, basic("root"))).status).toBe(200)
    await addMember(name, "alice", "bob")
    expect((await call("GET", `/orgs/${name}`, basic("bob"))).status).toBe(200)
  })

  it("answers public-only tokens 403 for a non-public org, and needs read:organization", async () => {
    const name = await createOrg("alice", { visibility: "limited" })
    const publicOnly = await createToken(hearth, "alice", ["public-only", "read:organization"])
    const res = await call("GET", `/orgs/${name}`, `token ${publicOnly}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token scope is limited to public orgs")
    const userOnly = await createToken(hearth, "alice", ["read:user"])
    const denied = await call("GET", `/orgs/${name}`, `token ${userOnly}`)
    expect(denied.status).toBe(403)
    expect((await json(denied)).message).toBe(
      "token does not have at least one of required scope(s): [read:organization]"
    )
    const read = await createToken(hearth, "alice", ["read:organization"])
    expect((await call("GET", `/orgs/${name}`, `token ${read}`)).status).toBe(200)
  })
})

describe("PATCH /orgs/{org}", () => {
  it("lets owners change the given fields only", async () => {
    const name = await createOrg("alice", { full_name: "Before", location: "Here" })
    const res = await call("PATCH", `/orgs/${name}`, basic("alice"), {
      description: "After",
      visibility: "private",
      repo_admin_change_team_access: true
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Organization")
    expect(body).toMatchObject({
      full_name: "Before",
      location: "Here",
      description: "After",
      visibility: "private",
      repo_admin_change_team_access: true
    })
    // An empty visibility string leaves it unchanged.
    const again = await json(await call("PATCH", `/orgs/${name}`, basic("alice"), { visibility: "", full_name: "" }))
    expect(again).toMatchObject({ visibility: "private", full_name: "" })
  })

  it("is 403 for callers who can see the org but do not own it, 404 for those who cannot see it", async () => {
    const open = await createOrg("alice")
    await addMember(open, "alice", "bob")
    for (const who of ["bob", "carol"]) {
      const res = await call("PATCH", `/orgs/${open}`, basic(who), { description: "hijack" })
      expect(res.status, who).toBe(403)
      expect((await json(res)).message).toBe("Must be an organization owner")
    }
    const hidden = await createOrg("alice", { visibility: "private" })
    expect((await call("PATCH", `/orgs/${hidden}`, basic("carol"), { description: "x" })).status).toBe(404)
    expect((await json(await call("GET", `/orgs/${open}`))).description).toBe("")
  })

  it("lets site admins edit any org", async () => {
    const name = await createOrg("alice", { visibility: "private" })
    const res = await call("PATCH", `/orgs/${name}`, basic("root"), { location: "Moon" })
    expect(res.status).toBe(200)
    expect((await json(res)).location).toBe("Moon")
  })

  it("refuses invalid values with 422 and changes nothing", async () => {
    const name = await createOrg("alice", { website: "https://ok.example" })
    for (const body of [
      { visibility: "secret" },
      { website: "nope" },
      { email: "bad" },
      { location: 7 },
      { description: "x".repeat(256) }
    ]) {
      const res = await call("PATCH", `/orgs/${name}`, basic("alice"), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect(typeof (await json(res)).message).toBe("string")
    }
    const org = await json(await call("GET", `/orgs/${name}`, basic("alice")))
    expect(org).toMatchObject({ visibility: "public", website: "https://ok.example", location: "", description: "" })
  })
})

describe("DELETE /orgs/{org}", () => {
  it("lets owners delete the org with its teams (204); others who can see it get 403", async () => {
    const name = await createOrg("alice")
    await addMember(name, "alice", "bob")
    const teams = await json(await call("GET", `/orgs/${name}/teams`, basic("alice")))
    const denied = await call("DELETE", `/orgs/${name}`, basic("bob"))
    expect(denied.status).toBe(403)
    expect((await json(denied)).message).toBe("Must be an organization owner")
    expect((await call("DELETE", `/orgs/${name}`, basic("alice"))).status).toBe(204)
    expect((await call("GET", `/orgs/${name}`, basic("alice"))).status).toBe(404)
    for (const team of teams) expect((await call("GET", `/teams/${team.id}`, basic("root"))).status).toBe(404)
    expect((await json(await call("GET", "/user/orgs", basic("bob")))).map((o: any) => o.name)).not.toContain(name)
    // The name is free again.
    expect((await call("POST", "/orgs", basic("carol"), { username: name })).status).toBe(201)
  })

  it("is 404 for a private org the caller cannot see; site admins may delete any org", async () => {
    const name = await createOrg("alice", { visibility: "private" })
    expect((await call("DELETE", `/orgs/${name}`, basic("carol"))).status).toBe(404)
    expect((await call("DELETE", `/orgs/${name}`, basic("root"))).status).toBe(204)
  })
})

describe("org lists", () => {
  let pub: string, lim: string, priv: string, privOfBob: string
  beforeAll(async () => {
    pub = await createOrg("carol")
    lim = await createOrg("carol", { visibility: "limited" })
    priv = await createOrg("carol", { visibility: "private" })
    privOfBob = await createOrg("carol", { visibility: "private" })
    await addMember(privOfBob, "carol", "bob")
  })
  const names = async (res: Response) => (await json(res)).map((o: any) => o.name) as Array<string>

  it("GET /orgs shows what the caller may see, sorted by name, with X-Total-Count and Link", async () => {
    const anonymous = await call("GET", "/orgs?limit=50")
    expect(anonymous.status).toBe(200)
    const body = await json(anonymous)
    expectSwagger(body, "Organization[]")
    const seen: Array<string> = body.map((o: any) => o.name)
    expect(seen).toContain(pub)
    expect(seen).not.toContain(lim)
    expect(seen).not.toContain(priv)
    expect(Number(anonymous.headers.get("x-total-count"))).toBe(seen.length)
    expect([...seen].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()))).toEqual(seen)

    const bob = await names(await call("GET", "/orgs?limit=50", basic("bob")))
    expect(bob).toEqual(expect.arrayContaining([pub, lim, privOfBob]))
    expect(bob).not.toContain(priv)
    const root = await names(await call("GET", "/orgs?limit=50", basic("root")))
    expect(root).toEqual(expect.arrayContaining([pub, lim, priv, privOfBob]))
    const publicOnly = await createToken(hearth, "bob", ["public-only", "read:organization"])
    const filtered = await names(await call("GET", "/orgs?limit=50", `token ${publicOnly}`))
    expect(filtered).toContain(pub)
    expect(filtered).not.toContain(lim)
    expect(filtered).not.toContain(privOfBob)
  })

  it("GET /orgs pages with limit and page", async () => {
    const all = await names(await call("GET", "/orgs?limit=50", basic("root")))
    expect(all.length).toBeGreaterThan(2)
    const res = await call("GET", "/orgs?limit=1&page=2", basic("root"))
    expect(await names(res)).toEqual([all[1]])
    expect(res.headers.get("x-total-count")).toBe(String(all.length))
    const link = res.headers.get("link")!
    expect(link).toContain(`<${hearth.base}/api/v1/orgs?limit=1&page=3>; rel="next"`)
    expect(link).toContain(`rel="first"`)
    expect(link).toContain(`rel="prev"`)
  })

  it("GET /user/orgs lists the caller's orgs, private ones included; anonymous callers get 401", async () => {
    const res = await call("GET", "/user/orgs", basic("bob"))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Organization[]")
    expect(body.map((o: any) => o.name)).toContain(privOfBob)
    expect(body.map((o: any) => o.name)).not.toContain(pub)
    expect(res.headers.get("x-total-count")).toBe(String(body.length))
    expect((await call("GET", "/user/orgs")).status).toBe(401)
  })

  it("GET /user/orgs needs read:user and read:organization", async () => {
    const orgOnly = await createToken(hearth, "bob", ["read:organization"])
    const res = await call("GET", "/user/orgs", `token ${orgOnly}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe(
      "token does not have at least one of required scope(s): [read:user read:organization]"
    )
    const both = await createToken(hearth, "bob", ["read:user", "read:organization"])
    expect((await call("GET", "/user/orgs", `token ${both}`)).status).toBe(200)
  })

  it("GET /users/{u}/orgs: the user and admins see every membership, others only public ones", async () => {
    const org = await createOrg("carol")
    await addMember(org, "carol", "bob")
    expect(await names(await call("GET", "/users/bob/orgs", basic("bob")))).toEqual(
      expect.arrayContaining([org, privOfBob])
    )
    expect(await names(await call("GET", "/users/bob/orgs", basic("root")))).toEqual(
      expect.arrayContaining([org, privOfBob])
    )
    // Memberships start concealed (Forgejo's default).
    expect(await names(await call("GET", "/users/bob/orgs", basic("alice")))).toEqual([])
    expect((await call("PUT", `/orgs/${org}/public_members/bob`, basic("bob"))).status).toBe(204)
    expect((await call("PUT", `/orgs/${privOfBob}/public_members/bob`, basic("bob"))).status).toBe(204)
    // A public membership of a private org stays hidden from those who cannot see the org.
    const res = await call("GET", "/users/bob/orgs", basic("alice"))
    expect(await names(res)).toEqual([org])
    expect(res.headers.get("x-total-count")).toBe("1")
    expect(await names(await call("GET", "/users/bob/orgs", basic("carol")))).toEqual(
      expect.arrayContaining([org, privOfBob])
    )
  })

  it("GET /users/{u}/orgs needs a signed-in caller and hides private users", async () => {
    expect((await call("GET", "/users/bob/orgs")).status).toBe(401)
    expect((await call("GET", "/users/hidden/orgs", basic("bob"))).status).toBe(404)
    expect((await call("GET", "/users/nobody/orgs", basic("bob"))).status).toBe(404)
    expect((await call("GET", "/users/hidden/orgs", basic("hidden"))).status).toBe(200)
  })
})

describe("org members", () => {
  let org: string
  beforeAll(async () => {
    org = await createOrg("alice")
    await addMember(org, "alice", "bob")
    await addMember(org, "alice", "hidden", "members", "root")
  })
  const logins = async (res: Response) => (await json(res)).map((u: any) => u.login) as Array<string>

  it("members and site admins see every member; others only public members", async () => {
    for (const who of ["alice", "bob", "root"]) {
      const res = await call("GET", `/orgs/${org}/members`, basic(who))
      expect(res.status).toBe(200)
      const body = await json(res)
      expectSwagger(body, "User[]")
      expect(body.map((u: any) => u.login).sort(), who).toEqual(["alice", "bob", "hidden"])
      expect(res.headers.get("x-total-count")).toBe("3")
    }
    expect(await logins(await call("GET", `/orgs/${org}/members`, basic("carol")))).toEqual([])
    expect(await logins(await call("GET", `/orgs/${org}/members`))).toEqual([])
    expect((await call("PUT", `/orgs/${org}/public_members/bob`, basic("bob"))).status).toBe(204)
    expect((await call("PUT", `/orgs/${org}/public_members/hidden`, basic("hidden"))).status).toBe(204)
    // A private user stays hidden from outsiders even with a public membership.
    expect(await logins(await call("GET", `/orgs/${org}/members`, basic("carol")))).toEqual(["bob"])
    expect(await logins(await call("GET", `/orgs/${org}/members`))).toEqual(["bob"])
    expect(await logins(await call("GET", `/orgs/${org}/public_members`))).toEqual(["bob"])
    expect((await call("GET", `/orgs/${org}/public_members/bob`)).status).toBe(204)
    expect((await call("GET", `/orgs/${org}/public_members/alice`)).status).toBe(404)
    expect((await call("DELETE", `/orgs/${org}/public_members/bob`, basic("bob"))).status).toBe(204)
    expect(await logins(await call("GET", `/orgs/${org}/members`, basic("carol")))).toEqual([])
  })

  it("GET /orgs/{org}/members/{u}: 204 for members, 404 otherwise; outsiders learn only public memberships", async () => {
    expect((await call("GET", `/orgs/${org}/members/bob`, basic("alice"))).status).toBe(204)
    expect((await call("GET", `/orgs/${org}/members/carol`, basic("alice"))).status).toBe(404)
    expect((await call("GET", `/orgs/${org}/members/nobody`, basic("alice"))).status).toBe(404)
    expect((await call("GET", `/orgs/${org}/members/bob`, basic("root"))).status).toBe(204)
    expect((await call("GET", `/orgs/${org}/members/bob`, basic("carol"))).status).toBe(404)
    expect((await call("PUT", `/orgs/${org}/public_members/bob`, basic("bob"))).status).toBe(204)
    expect((await call("GET", `/orgs/${org}/members/bob`, basic("carol"))).status).toBe(204)
    expect((await call("GET", `/orgs/${org}/members/bob`)).status).toBe(401)
  })

  it("private orgs hide their member lists (404) from outsiders", async () => {
    const hiddenOrg = await createOrg("alice", { visibility: "private" })
    expect((await call("GET", `/orgs/${hiddenOrg}/members`, basic("carol"))).status).toBe(404)
    expect((await call("GET", `/orgs/${hiddenOrg}/members/alice`, basic("carol"))).status).toBe(404)
    expect((await call("GET", `/orgs/${hiddenOrg}/public_members`)).status).toBe(404)
  })

  it("only a member may publicize or conceal, and only their own membership", async () => {
    const other = await call("PUT", `/orgs/${org}/public_members/bob`, basic("alice"))
    expect(other.status).toBe(403)
    expect((await json(other)).message).toBe("Cannot publicize another member")
    const conceal = await call("DELETE", `/orgs/${org}/public_members/bob`, basic("alice"))
    expect(conceal.status).toBe(403)
    expect((await json(conceal)).message).toBe("Cannot conceal another member")
    const outsider = await call("PUT", `/orgs/${org}/public_members/carol`, basic("carol"))
    expect(outsider.status).toBe(403)
    expect((await json(outsider)).message).toBe("Must be an organization member")
  })

  it("DELETE /orgs/{org}/members/{u}: owners remove a member from every team; the last owner stays", async () => {
    const name = await createOrg("alice")
    await addMember(name, "alice", "bob")
    await addMember(name, "alice", "bob", "Owners")
    const denied = await call("DELETE", `/orgs/${name}/members/alice`, basic("carol"))
    expect(denied.status).toBe(403)
    expect((await call("DELETE", `/orgs/${name}/members/bob`, basic("alice"))).status).toBe(204)
    expect((await call("GET", `/orgs/${name}/members/bob`, basic("alice"))).status).toBe(404)
    const teams = await json(await call("GET", `/orgs/${name}/teams`, basic("alice")))
    for (const team of teams) {
      const members = await json(await call("GET", `/teams/${team.id}/members`, basic("alice")))
      expect(members.map((u: any) => u.login)).not.toContain("bob")
    }
    const last = await call("DELETE", `/orgs/${name}/members/alice`, basic("alice"))
    expect(last.status).toBe(422)
    expect((await json(last)).message).toContain("last member of owner team")
    expect((await call("GET", `/orgs/${name}/members/alice`, basic("alice"))).status).toBe(204)
  })
})

describe("org rows", () => {
  it("are accounts of type organization that cannot sign in", async () => {
    const name = await createOrg("alice")
    const row = await hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersRepo
        return yield* users.findByName(name)
      })
    )
    expect(row._tag).toBe("Some")
    if (row._tag === "Some") {
      expect(row.value.type).toBe("organization")
      expect(row.value.passwdHash).toBe("")
    }
    expect((await call("GET", "/user", basic(name, ""))).status).toBe(401)
  })
})

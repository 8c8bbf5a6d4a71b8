// Teams: /orgs/{org}/teams, /teams/{id}, team members, and the org policy other slices use
// (issue item 9: can_create_org_repo and permission levels for repository creation rules).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { OrgPolicy } from "../src/orgs/Policy.ts"
import { OrgsService } from "../src/orgs/Service.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all([
    createUser(hearth, { username: "root", isAdmin: true }),
    createUser(hearth, { username: "owner" }),
    createUser(hearth, { username: "member" }),
    createUser(hearth, { username: "other" }),
    createUser(hearth, { username: "outsider" }),
    createUser(hearth, { username: "secret", visibility: "private" })
  ])
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

let unique = 0
const createOrg = async (visibility = "public") => {
  const name = `team-org${++unique}`
  const res = await call("POST", "/orgs", basic("owner"), { username: name, visibility })
  expect(res.status).toBe(201)
  return name
}
const teamsOf = async (org: string) => json(await call("GET", `/orgs/${org}/teams`, basic("owner")))
const ownersTeam = async (org: string) => (await teamsOf(org)).find((t: any) => t.permission === "owner")
const createTeam = async (org: string, body: Record<string, unknown>) => {
  const res = await call("POST", `/orgs/${org}/teams`, basic("owner"), body)
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const put = (team: number, username: string, who = "owner") =>
  call("PUT", `/teams/${team}/members/${username}`, basic(who))
const del = (team: number, username: string, who = "owner") =>
  call("DELETE", `/teams/${team}/members/${username}`, basic(who))
const isOrgMember = async (org: string, username: string) =>
  (await call("GET", `/orgs/${org}/members/${username}`, basic("root"))).status === 204
const teamCount = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql`SELECT count(*) AS n FROM teams`
      return Number(row!.n)
    })
  )

describe("POST /orgs/{org}/teams", () => {
  it("creates a team (201) shaped as Forgejo's Team, units at the team's level", async () => {
    const org = await createOrg()
    const res = await call("POST", `/orgs/${org}/teams`, basic("owner"), {
      name: "Devs",
      description: "developers",
      permission: "write",
      includes_all_repositories: true,
      can_create_org_repo: true,
      units: ["repo.code", "repo.issues"]
    })
    expect(res.status).toBe(201)
    const team = await json(res)
    expectSwagger(team, "Team")
    expect(team).toMatchObject({
      name: "Devs",
      description: "developers",
      permission: "write",
      includes_all_repositories: true,
      can_create_org_repo: true,
      organization: null,
      units: ["repo.code", "repo.issues"],
      units_map: { "repo.code": "write", "repo.issues": "write" }
    })
    expect(typeof team.id).toBe("number")
  })

  it("gives admin teams every unit at admin, and takes the level from units_map below admin", async () => {
    const org = await createOrg()
    const admins = await createTeam(org, { name: "admins", permission: "admin", units: ["repo.code"] })
    expect(admins.permission).toBe("admin")
    expect(admins.units).toHaveLength(10)
    expect(Object.values(admins.units_map).every((m) => m === "admin")).toBe(true)
    // Forgejo: below admin, the lowest unit level above none wins over `permission`.
    const mixed = await createTeam(org, {
      name: "mixed",
      permission: "read",
      units_map: { "repo.code": "write", "repo.issues": "admin", "repo.wiki": "none", "repo.ext_wiki": "read" }
    })
    expect(mixed.permission).toBe("write")
    expect(mixed.units_map).toEqual({
      "repo.code": "write",
      "repo.issues": "admin",
      "repo.wiki": "none",
      "repo.ext_wiki": "read"
    })
    const mapOnly = await createTeam(org, { name: "maponly", units_map: { "repo.code": "read" } })
    expect(mapOnly.permission).toBe("read")
    expect(mapOnly.includes_all_repositories).toBe(false)
    expect(mapOnly.can_create_org_repo).toBe(false)
  })

  it("is 403 for members and visible-org outsiders, 404 where the org is hidden; site admins may", async () => {
    const org = await createOrg()
    const members = await createTeam(org, { name: "members", permission: "read", units: ["repo.code"] })
    expect((await put(members.id, "member")).status).toBe(204)
    for (const who of ["member", "outsider"]) {
      const res = await call("POST", `/orgs/${org}/teams`, basic(who), {
        name: `x-${who}`,
        permission: "read",
        units: ["repo.code"]
      })
      expect(res.status, who).toBe(403)
      expect((await json(res)).message).toBe("Must be an organization owner")
    }
    const hidden = await createOrg("private")
    const res = await call("POST", `/orgs/${hidden}/teams`, basic("outsider"), {
      name: "x",
      permission: "read",
      units: ["repo.code"]
    })
    expect(res.status).toBe(404)
    expect(
      (
        await call("POST", `/orgs/${hidden}/teams`, basic("root"), {
          name: "byadmin",
          permission: "read",
          units: ["repo.code"]
        })
      ).status
    ).toBe(201)
    expect((await call("POST", "/orgs/nosuch/teams", basic("root"), { name: "x", permission: "read" })).status).toBe(
      404
    )
  })

  it("refuses duplicates, bad permissions, names, units and types with 422, writing nothing", async () => {
    const org = await createOrg()
    await createTeam(org, { name: "Taken", permission: "read", units: ["repo.code"] })
    const before = await teamCount()
    const cases: Array<[unknown, string]> = [
      [{ name: "taken", permission: "read", units: ["repo.code"] }, "team already exists"],
      [{ name: "Owners", permission: "admin" }, "team already exists"],
      [{ name: "p1", permission: "owner" }, "permission"],
      [{ name: "p2", permission: "none" }, "permission"],
      [{ name: "p3", permission: "superuser" }, "permission"],
      [{ name: "p4", permission: 3 }, "permission"],
      [{ name: "p5" }, "[Permission]"],
      [{ name: "p6", units: ["repo.code"] }, "[Permission]"],
      [{ permission: "read", units: ["repo.code"] }, "name"],
      [{ name: "", permission: "read", units: ["repo.code"] }, "[Name]: Required"],
      [{ name: "bad name", permission: "read", units: ["repo.code"] }, "[Name]"],
      [{ name: "new", permission: "read", units: ["repo.code"] }, "reserved"],
      [{ name: "x".repeat(256), permission: "read", units: ["repo.code"] }, "[Name]: MaxSize (255)"],
      [{ name: "u1", permission: "read", units: ["repo.nope"] }, "[Units]"],
      [{ name: "u2", units_map: { "repo.nope": "read" } }, "[UnitsMap]"],
      [{ name: "u3", units_map: { "repo.code": "god" } }, "[UnitsMap]"],
      [{ name: "u4", permission: "read", units: "repo.code" }, "units"],
      [{ name: "u5", permission: "read", units: ["repo.code"], can_create_org_repo: "yes" }, "can_create_org_repo"],
      [{ name: "u6", permission: "read", units: ["repo.code"], description: "x".repeat(256) }, "[Description]"],
      ["{", ""]
    ]
    for (const [body, text] of cases) {
      const res = await call("POST", `/orgs/${org}/teams`, basic("owner"), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect((await json(res)).message, JSON.stringify(body)).toContain(text)
    }
    expect(await teamCount()).toBe(before)
  })

  it("needs write:organization", async () => {
    const org = await createOrg()
    const read = await createToken(hearth, "owner", ["read:organization"])
    const res = await call("POST", `/orgs/${org}/teams`, `token ${read}`, {
      name: "t",
      permission: "read",
      units: ["repo.code"]
    })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe(
      "token does not have at least one of required scope(s): [write:organization]"
    )
  })
})

describe("reading teams", () => {
  let org: string, devs: any, ops: any
  beforeAll(async () => {
    org = await createOrg()
    devs = await createTeam(org, { name: "devs", permission: "write", units: ["repo.code"] })
    ops = await createTeam(org, { name: "ops", permission: "read", units: ["repo.code"] })
    expect((await put(devs.id, "member")).status).toBe(204)
  })

  it("GET /orgs/{org}/teams lists the org's teams to members, with X-Total-Count", async () => {
    const res = await call("GET", `/orgs/${org}/teams`, basic("member"))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Team[]")
    expect(body.map((t: any) => t.name)).toEqual(["devs", "ops", "Owners"])
    expect(res.headers.get("x-total-count")).toBe("3")
    const paged = await call("GET", `/orgs/${org}/teams?limit=1&page=2`, basic("member"))
    expect((await json(paged)).map((t: any) => t.name)).toEqual(["ops"])
    expect(paged.headers.get("x-total-count")).toBe("3")
  })

  it("GET /orgs/{org}/teams is 403 to outsiders of a visible org, 404 for a hidden org, 401 anonymous", async () => {
    const res = await call("GET", `/orgs/${org}/teams`, basic("outsider"))
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Must be an organization member")
    const hidden = await createOrg("private")
    expect((await call("GET", `/orgs/${hidden}/teams`, basic("outsider"))).status).toBe(404)
    expect((await call("GET", `/orgs/${org}/teams`)).status).toBe(401)
    expect((await call("GET", `/orgs/${hidden}/teams`, basic("root"))).status).toBe(200)
  })

  it("GET /teams/{id} shows the team with its organization to team members, owners and admins", async () => {
    for (const who of ["member", "owner", "root"]) {
      const res = await call("GET", `/teams/${devs.id}`, basic(who))
      expect(res.status, who).toBe(200)
      const body = await json(res)
      expectSwagger(body, "Team")
      expect(body.name).toBe("devs")
      expect(body.organization.name).toBe(org)
    }
  })

  it("GET /teams/{id} is 403 to org members outside the team, 404 to outsiders and for unknown ids", async () => {
    const res = await call("GET", `/teams/${ops.id}`, basic("member"))
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Must be a team member")
    expect((await call("GET", `/teams/${devs.id}`, basic("outsider"))).status).toBe(404)
    expect((await call("GET", "/teams/999999", basic("root"))).status).toBe(404)
    expect((await call("GET", "/teams/abc", basic("root"))).status).toBe(404)
    expect((await call("GET", `/teams/${devs.id}`)).status).toBe(401)
  })

  it("GET /teams/{id}/members lists members with X-Total-Count; /members/{u} is 200 or 404", async () => {
    const res = await call("GET", `/teams/${devs.id}/members`, basic("member"))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "User[]")
    expect(body.map((u: any) => u.login)).toEqual(["member"])
    expect(res.headers.get("x-total-count")).toBe("1")
    const one = await call("GET", `/teams/${devs.id}/members/member`, basic("owner"))
    expect(one.status).toBe(200)
    expectSwagger(await json(one), "User")
    expect((await call("GET", `/teams/${devs.id}/members/owner`, basic("owner"))).status).toBe(404)
    expect((await call("GET", `/teams/${devs.id}/members/nobody`, basic("owner"))).status).toBe(404)
    expect((await call("GET", `/teams/${devs.id}/members`, basic("outsider"))).status).toBe(404)
  })

  it("public-only tokens get 403 for teams of a non-public org", async () => {
    const limited = await createOrg("limited")
    const team = await ownersTeam(limited)
    const token = await createToken(hearth, "owner", ["public-only", "read:organization"])
    const res = await call("GET", `/teams/${team.id}`, `token ${token}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token scope is limited to public orgs")
  })
})

describe("PATCH /teams/{id}", () => {
  it("lets owners change name, description, flags, permission and units", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "before", permission: "read", units: ["repo.code", "repo.wiki"] })
    const res = await call("PATCH", `/teams/${team.id}`, basic("owner"), {
      name: "after",
      description: "renamed",
      can_create_org_repo: true,
      includes_all_repositories: true,
      permission: "write"
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Team")
    expect(body).toMatchObject({
      name: "after",
      description: "renamed",
      can_create_org_repo: true,
      includes_all_repositories: true,
      permission: "write",
      units_map: { "repo.code": "write", "repo.wiki": "write" }
    })
    const units = await json(
      await call("PATCH", `/teams/${team.id}`, basic("owner"), { units_map: { "repo.issues": "read" } })
    )
    expect(units).toMatchObject({ name: "after", permission: "read", units_map: { "repo.issues": "read" } })
    const admin = await json(await call("PATCH", `/teams/${team.id}`, basic("owner"), { permission: "admin" }))
    expect(admin.permission).toBe("admin")
    expect(admin.units).toHaveLength(10)
  })

  it("keeps the Owners team an owner team: no rename, no permission change, always can create repos", async () => {
    const org = await createOrg()
    const owners = await ownersTeam(org)
    const rename = await call("PATCH", `/teams/${owners.id}`, basic("owner"), { name: "Bosses" })
    expect(rename.status).toBe(422)
    expect((await json(rename)).message).toContain("cannot be renamed")
    const res = await call("PATCH", `/teams/${owners.id}`, basic("owner"), {
      name: "Owners",
      description: "the bosses",
      permission: "read",
      can_create_org_repo: false,
      includes_all_repositories: false
    })
    expect(res.status).toBe(200)
    expect(await json(res)).toMatchObject({
      name: "Owners",
      description: "the bosses",
      permission: "owner",
      can_create_org_repo: true,
      includes_all_repositories: true
    })
  })

  it("refuses a name another team has, and bad values, with 422 and changes nothing", async () => {
    const org = await createOrg()
    await createTeam(org, { name: "one", permission: "read", units: ["repo.code"] })
    const two = await createTeam(org, { name: "two", permission: "read", units: ["repo.code"] })
    for (const body of [
      { name: "ONE" },
      { name: "bad name" },
      { permission: "owner" },
      { units_map: { x: "read" } },
      { description: 5 }
    ]) {
      const res = await call("PATCH", `/teams/${two.id}`, basic("owner"), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
    }
    const after = await json(await call("GET", `/teams/${two.id}`, basic("owner")))
    expect(after).toMatchObject({ name: "two", permission: "read", description: "" })
  })

  it("is 403 for team members who are not owners", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "crew", permission: "read", units: ["repo.code"] })
    expect((await put(team.id, "member")).status).toBe(204)
    const res = await call("PATCH", `/teams/${team.id}`, basic("member"), { permission: "admin" })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Must be an organization owner")
    expect((await call("PATCH", `/teams/${team.id}`, basic("outsider"), { permission: "admin" })).status).toBe(404)
  })
})

describe("DELETE /teams/{id}", () => {
  it("deletes a team (204) and drops org memberships no other team carries", async () => {
    const org = await createOrg()
    const a = await createTeam(org, { name: "a", permission: "read", units: ["repo.code"] })
    const b = await createTeam(org, { name: "b", permission: "read", units: ["repo.code"] })
    expect((await put(a.id, "member")).status).toBe(204)
    expect((await put(a.id, "other")).status).toBe(204)
    expect((await put(b.id, "other")).status).toBe(204)
    expect((await call("DELETE", `/teams/${a.id}`, basic("member"))).status).toBe(403)
    expect((await call("DELETE", `/teams/${a.id}`, basic("owner"))).status).toBe(204)
    expect((await call("GET", `/teams/${a.id}`, basic("root"))).status).toBe(404)
    expect(await isOrgMember(org, "member")).toBe(false)
    expect(await isOrgMember(org, "other")).toBe(true)
  })

  it("refuses to delete the Owners team", async () => {
    const org = await createOrg()
    const owners = await ownersTeam(org)
    const res = await call("DELETE", `/teams/${owners.id}`, basic("owner"))
    expect(res.status).toBe(422)
    expect((await json(res)).message).toContain("cannot be deleted")
    expect((await call("GET", `/teams/${owners.id}`, basic("owner"))).status).toBe(200)
  })
})

describe("team members", () => {
  it("PUT adds a user to the team and the org (204, idempotent); DELETE removes them", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "crew", permission: "read", units: ["repo.code"] })
    expect(await isOrgMember(org, "member")).toBe(false)
    expect((await put(team.id, "member")).status).toBe(204)
    expect((await put(team.id, "MEMBER")).status).toBe(204)
    expect(await isOrgMember(org, "member")).toBe(true)
    const list = await call("GET", `/teams/${team.id}/members`, basic("owner"))
    expect((await json(list)).map((u: any) => u.login)).toEqual(["member"])
    expect((await del(team.id, "member")).status).toBe(204)
    expect(await isOrgMember(org, "member")).toBe(false)
    // Removing someone who is not in the team is a no-op, as Forgejo.
    expect((await del(team.id, "member")).status).toBe(204)
  })

  it("keeps the org membership while another team still holds the user", async () => {
    const org = await createOrg()
    const a = await createTeam(org, { name: "a", permission: "read", units: ["repo.code"] })
    const b = await createTeam(org, { name: "b", permission: "read", units: ["repo.code"] })
    expect((await put(a.id, "member")).status).toBe(204)
    expect((await put(b.id, "member")).status).toBe(204)
    expect((await del(a.id, "member")).status).toBe(204)
    expect(await isOrgMember(org, "member")).toBe(true)
    expect((await del(b.id, "member")).status).toBe(204)
    expect(await isOrgMember(org, "member")).toBe(false)
  })

  it("is 403 for non-owners who see the team, 404 for unknown users, 422 for organizations", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "crew", permission: "read", units: ["repo.code"] })
    expect((await put(team.id, "member")).status).toBe(204)
    const res = await put(team.id, "other", "member")
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Must be an organization owner")
    expect((await del(team.id, "member", "member")).status).toBe(403)
    expect((await put(team.id, "other", "outsider")).status).toBe(404)
    expect((await put(team.id, "nobody")).status).toBe(404)
    const otherOrg = await createOrg()
    const asMember = await put(team.id, otherOrg)
    expect(asMember.status).toBe(422)
    expect((await json(asMember)).message).toContain("organization cannot be a team member")
    expect(await isOrgMember(org, "other")).toBe(false)
  })

  it("hides private users from owners (404) but lets site admins add them; members stay manageable", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "crew", permission: "read", units: ["repo.code"] })
    expect((await put(team.id, "secret")).status).toBe(404)
    expect(await isOrgMember(org, "secret")).toBe(false)
    expect((await put(team.id, "secret", "root")).status).toBe(204)
    const owners = await ownersTeam(org)
    expect((await put(owners.id, "secret")).status).toBe(204)
    expect((await del(team.id, "secret")).status).toBe(204)
  })

  it("never removes the last member of the Owners team", async () => {
    const org = await createOrg()
    const owners = await ownersTeam(org)
    const res = await del(owners.id, "owner")
    expect(res.status).toBe(422)
    expect((await json(res)).message).toBe(
      `user is the last member of owner team [uid: ${(await json(await call("GET", "/user", basic("owner")))).id}]: an organization must keep at least one owner`
    )
    expect((await put(owners.id, "member")).status).toBe(204)
    expect((await del(owners.id, "owner", "member")).status).toBe(204)
    expect(await isOrgMember(org, "owner")).toBe(false)
    expect((await del(owners.id, "member", "member")).status).toBe(422)
  })

  it("keeps one owner when the last two owners remove each other at the same time", async () => {
    // Several rounds: without the team lock the race is lost only some of the time.
    for (let round = 0; round < 5; round++) {
      const org = await createOrg()
      const owners = await ownersTeam(org)
      expect((await put(owners.id, "member")).status).toBe(204)
      const results = await Promise.all([del(owners.id, "owner", "member"), del(owners.id, "member", "owner")])
      const statuses = results.map((r) => r.status).sort()
      // One removal wins; the other finds the last owner (422), or a caller who is no longer an
      // owner (403) or no longer in the org at all (404).
      expect(statuses[0]).toBe(204)
      expect([403, 404, 422]).toContain(statuses[1])
      const left = await json(await call("GET", `/teams/${owners.id}/members`, basic("root")))
      expect(left).toHaveLength(1)
    }
  })

  it("needs write:organization to change members and read:organization to list them", async () => {
    const org = await createOrg()
    const team = await createTeam(org, { name: "crew", permission: "read", units: ["repo.code"] })
    const read = await createToken(hearth, "owner", ["read:organization"])
    const res = await call("PUT", `/teams/${team.id}/members/member`, `token ${read}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe(
      "token does not have at least one of required scope(s): [write:organization]"
    )
    expect((await call("GET", `/teams/${team.id}/members`, `token ${read}`)).status).toBe(200)
    const userOnly = await createToken(hearth, "owner", ["read:user"])
    expect((await call("GET", `/teams/${team.id}/members`, `token ${userOnly}`)).status).toBe(403)
  })
})

describe("OrgPolicy", () => {
  it("answers ownership, membership, team access and repository creation rights", async () => {
    const org = await createOrg()
    const creators = await createTeam(org, {
      name: "creators",
      permission: "write",
      units: ["repo.code"],
      can_create_org_repo: true
    })
    const readers = await createTeam(org, { name: "readers", permission: "read", units: ["repo.code"] })
    expect((await put(creators.id, "other")).status).toBe(204)
    expect((await put(readers.id, "member")).status).toBe(204)
    const answers = await hearth.run(
      Effect.gen(function* () {
        const policy = yield* OrgPolicy
        const orgs = yield* OrgsService
        const users = yield* UsersService
        const o = yield* orgs.get(org)
        const out: Record<string, unknown> = {}
        for (const name of ["owner", "other", "member", "outsider", "root"]) {
          const u = yield* users.get(name)
          out[name] = {
            owner: yield* policy.isOwner(o, u),
            member: yield* policy.isMember(o, u),
            access: yield* policy.teamAccess(o, u),
            create: yield* policy.canCreateOrgRepo(o, u),
            teams: (yield* policy.teamsOf(o, u)).map((t) => t.name)
          }
        }
        return out
      })
    )
    expect(answers).toEqual({
      owner: { owner: true, member: true, access: "owner", create: true, teams: ["Owners"] },
      other: { owner: false, member: true, access: "write", create: true, teams: ["creators"] },
      member: { owner: false, member: true, access: "read", create: false, teams: ["readers"] },
      outsider: { owner: false, member: false, access: "none", create: false, teams: [] },
      root: { owner: false, member: false, access: "none", create: true, teams: [] }
    })
  })
})

// Issue 23 item 1: a team's repositories (/teams/{id}/repos…), a repository's teams
// (/repos/{o}/{r}/teams…), /user/teams, team search, a user's permissions in an organization and
// renaming an organization — with Forgejo's rules for site admins, org owners, team members, other
// org members, outsiders and anonymous callers, and for private and limited organizations.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const call = (method: string, path: string, who?: string, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)
const ok = async (method: string, path: string, who: string, body?: unknown) => {
  const res = await call(method, path, who, body)
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300)
  return res.status === 204 ? undefined : json(res)
}

let devs: number // write team of acme, repositories given one by one; `member` is in it
let everyone: number // read team of acme that includes all repositories; `orgmate` is in it
let admins: number // admin team of acme given acme/app; `repoadmin` is in it
let hiddenTeam: number // a team of the private org `hidden`

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["root", "owner", "member", "orgmate", "repoadmin", "outsider"]) {
    await createUser(hearth, { username, isAdmin: username === "root" })
  }
  await ok("POST", "/orgs", "owner", { username: "acme", email: "acme@example.com" })
  await ok("POST", "/orgs", "owner", { username: "hidden", visibility: "private" })
  await ok("POST", "/orgs", "owner", { username: "lim", visibility: "limited" })
  devs = (
    await ok("POST", "/orgs/acme/teams", "owner", {
      name: "devs",
      description: "the builders",
      permission: "write",
      units: ["repo.code", "repo.issues"]
    })
  ).id
  everyone = (
    await ok("POST", "/orgs/acme/teams", "owner", {
      name: "everyone",
      permission: "read",
      includes_all_repositories: true,
      units: ["repo.code"]
    })
  ).id
  admins = (await ok("POST", "/orgs/acme/teams", "owner", { name: "admins", permission: "admin" })).id
  hiddenTeam = (await ok("POST", "/orgs/hidden/teams", "owner", { name: "quiet", permission: "read" })).id
  await ok("PUT", `/teams/${devs}/members/member`, "owner")
  await ok("PUT", `/teams/${everyone}/members/orgmate`, "owner")
  await ok("PUT", `/teams/${admins}/members/repoadmin`, "owner")
  await ok("PUT", `/teams/${hiddenTeam}/members/member`, "owner")
  await ok("POST", "/orgs/acme/repos", "owner", { name: "app", private: true, auto_init: true })
  await ok("POST", "/orgs/acme/repos", "owner", { name: "lib" })
  await ok("POST", "/orgs/hidden/repos", "owner", { name: "vault" })
  await ok("POST", "/user/repos", "owner", { name: "mine" })
  await ok("PUT", `/teams/${admins}/repos/acme/app`, "owner")
}, 120_000)
afterAll(() => hearth?.close())

const names = (list: Array<{ name: string }>) => list.map((x) => x.name)

describe("team repositories (/teams/{id}/repos)", () => {
  it("an owner gives a repository to a team: its members reach it, and it is listed and checked", async () => {
    expect((await call("GET", "/repos/acme/app", "member")).status).toBe(404)
    expect(await ok("GET", `/teams/${devs}/repos`, "member")).toEqual([])
    expect((await call("GET", `/teams/${devs}/repos/acme/app`, "member")).status).toBe(404)

    expect((await call("PUT", `/teams/${devs}/repos/acme/app`, "owner")).status).toBe(204)
    expect((await call("PUT", `/teams/${devs}/repos/acme/app`, "owner")).status).toBe(204) // idempotent
    const res = await call("GET", `/teams/${devs}/repos`, "member")
    expect(res.headers.get("x-total-count")).toBe("1")
    const listed = await json(res)
    expect(names(listed)).toEqual(["app"])
    expectSwagger(listed[0], "Repository")
    expect(listed[0].permissions).toEqual({ admin: false, push: true, pull: true })
    const one = await ok("GET", `/teams/${devs}/repos/acme/app`, "member")
    expect(one.full_name).toBe("acme/app")
    expect((await call("GET", "/repos/acme/app", "member")).status).toBe(200)

    expect((await call("DELETE", `/teams/${devs}/repos/acme/app`, "owner")).status).toBe(204)
    expect((await call("GET", `/teams/${devs}/repos/acme/app`, "member")).status).toBe(404)
    expect((await call("GET", "/repos/acme/app", "member")).status).toBe(404)
  })

  it("a team that includes all repositories lists every repository of its org", async () => {
    expect(names(await ok("GET", `/teams/${everyone}/repos`, "orgmate"))).toEqual(["app", "lib"])
    expect((await call("GET", `/teams/${everyone}/repos/acme/lib`, "orgmate")).status).toBe(200)
    // Forgejo keeps such a team's repositories: taking one away changes nothing.
    expect((await call("DELETE", `/teams/${everyone}/repos/acme/lib`, "owner")).status).toBe(204)
    expect(names(await ok("GET", `/teams/${everyone}/repos`, "orgmate"))).toEqual(["app", "lib"])
  })

  it("who may look and who may change: members and owners see, owners change, others 403/404/401", async () => {
    expect((await call("GET", `/teams/${devs}/repos`, "root")).status).toBe(200)
    expect((await call("GET", `/teams/${devs}/repos`, "owner")).status).toBe(200)
    const orgmate = await call("GET", `/teams/${devs}/repos`, "orgmate")
    expect(orgmate.status).toBe(403)
    expect((await json(orgmate)).message).toBe("Must be a team member")
    expect((await call("GET", `/teams/${devs}/repos`, "outsider")).status).toBe(404)
    expect((await call("GET", `/teams/${devs}/repos`)).status).toBe(401)

    const member = await call("PUT", `/teams/${devs}/repos/acme/lib`, "member")
    expect(member.status).toBe(403)
    expect((await json(member)).message).toBe("Must be an organization owner")
    expect((await call("PUT", `/teams/${devs}/repos/acme/lib`, "outsider")).status).toBe(404)
    expect((await call("PUT", `/teams/${devs}/repos/acme/lib`, "root")).status).toBe(204)
    expect((await call("DELETE", `/teams/${devs}/repos/acme/lib`, "root")).status).toBe(204)
  })

  it("a repository that is not the team's organization's, or does not exist, is 404 and nothing changes", async () => {
    expect((await call("PUT", `/teams/${devs}/repos/owner/mine`, "owner")).status).toBe(404)
    expect((await call("PUT", `/teams/${devs}/repos/hidden/vault`, "owner")).status).toBe(404)
    expect((await call("PUT", `/teams/${devs}/repos/acme/nope`, "owner")).status).toBe(404)
    expect((await call("PUT", "/teams/999999/repos/acme/lib", "owner")).status).toBe(404)
    expect((await call("GET", "/teams/not-a-number/repos", "owner")).status).toBe(404)
    expect(await ok("GET", `/teams/${devs}/repos`, "owner")).toEqual([])
  })

  it("a team of a private organization is 404 to outsiders and a public-only token", async () => {
    expect((await call("GET", `/teams/${hiddenTeam}/repos`, "outsider")).status).toBe(404)
    expect((await call("GET", `/teams/${hiddenTeam}/repos`, "member")).status).toBe(200)
    const token = await createToken(hearth, "member", ["read:organization", "public-only"])
    const res = await request(hearth, "GET", `/teams/${hiddenTeam}/repos`, `token ${token}`)
    expect(res.status).toBe(403)
  })

  it("needs the organization scope", async () => {
    const token = await createToken(hearth, "member", ["read:repository"])
    expect((await request(hearth, "GET", `/teams/${devs}/repos`, `token ${token}`)).status).toBe(403)
    const orgToken = await createToken(hearth, "member", ["read:organization"])
    expect((await request(hearth, "GET", `/teams/${devs}/repos`, `token ${orgToken}`)).status).toBe(200)
  })
})

describe("a repository's teams (/repos/{owner}/{repo}/teams)", () => {
  it("lists the teams reaching the repository, the owner team first", async () => {
    const teams = await ok("GET", "/repos/acme/app/teams", "repoadmin")
    expect(names(teams)).toEqual(["Owners", "admins", "everyone"])
    expectSwagger(teams[1], "Team")
    expect(teams[1].organization).toBeNull()
    expect(names(await ok("GET", "/repos/acme/lib/teams", "outsider"))).toEqual(["Owners", "everyone"])
    expect((await call("GET", "/repos/acme/app/teams", "outsider")).status).toBe(404) // private repository
    expect((await call("GET", "/repos/acme/lib/teams")).status).toBe(401)
    expect((await call("GET", "/repos/hidden/vault/teams", "outsider")).status).toBe(404)
  })

  it("checks one team by name: 200 with the team when it reaches the repository, else 404", async () => {
    const team = await ok("GET", "/repos/acme/app/teams/admins", "repoadmin")
    expect(team).toMatchObject({ id: admins, name: "admins", permission: "admin" })
    expect((await call("GET", "/repos/acme/app/teams/devs", "repoadmin")).status).toBe(404)
    expect((await call("GET", "/repos/acme/app/teams/nosuch", "repoadmin")).status).toBe(404)
  })

  it("owners add and remove a team; twice is 422 with Forgejo's message", async () => {
    expect((await call("PUT", "/repos/acme/lib/teams/devs", "owner")).status).toBe(204)
    expect(names(await ok("GET", "/repos/acme/lib/teams", "owner"))).toEqual(["Owners", "devs", "everyone"])
    const again = await call("PUT", "/repos/acme/lib/teams/devs", "owner")
    expect(again.status).toBe(422)
    expect((await json(again)).message).toBe("team 'devs' is already added to repo")
    expect((await call("DELETE", "/repos/acme/lib/teams/devs", "owner")).status).toBe(204)
    const gone = await call("DELETE", "/repos/acme/lib/teams/devs", "owner")
    expect(gone.status).toBe(422)
    expect((await json(gone)).message).toBe("team 'devs' was not added to repo")
    expect((await call("PUT", "/repos/acme/lib/teams/nosuch", "owner")).status).toBe(404)
    expect(names(await ok("GET", "/repos/acme/lib/teams", "owner"))).toEqual(["Owners", "everyone"])
  })

  it("a repository admin changes teams only when the org lets repository admins do so", async () => {
    const refused = await call("PUT", "/repos/acme/app/teams/devs", "repoadmin")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user is nor repo admin nor owner")
    await ok("PATCH", "/orgs/acme", "owner", { repo_admin_change_team_access: true })
    try {
      expect((await call("PUT", "/repos/acme/app/teams/devs", "repoadmin")).status).toBe(204)
      expect((await call("DELETE", "/repos/acme/app/teams/devs", "repoadmin")).status).toBe(204)
    } finally {
      await ok("PATCH", "/orgs/acme", "owner", { repo_admin_change_team_access: false })
    }
    // Writers are no repository admins (Forgejo's reqAdmin).
    await ok("PUT", `/teams/${devs}/repos/acme/lib`, "owner")
    const writer = await call("PUT", "/repos/acme/lib/teams/admins", "member")
    expect(writer.status).toBe(403)
    await ok("DELETE", `/teams/${devs}/repos/acme/lib`, "owner")
  })

  it("a repository of an individual user has no teams (422)", async () => {
    const res = await call("GET", "/repos/owner/mine/teams", "owner")
    expect(res.status).toBe(422)
    expect((await json(res)).message).toBe("repo is not owned by an organization")
    expect((await call("PUT", "/repos/owner/mine/teams/devs", "owner")).status).toBe(422)
  })
})

describe("GET /user/teams", () => {
  it("lists the caller's teams in every organization, each with its organization", async () => {
    const teams = await ok("GET", "/user/teams", "member")
    expect(teams.map((t: any) => `${t.organization.name}/${t.name}`)).toEqual(["acme/devs", "hidden/quiet"])
    expectSwagger(teams[0], "Team")
    expect(await ok("GET", "/user/teams", "outsider")).toEqual([])
    expect((await call("GET", "/user/teams")).status).toBe(401)
    const token = await createToken(hearth, "member", ["read:user"])
    expect((await request(hearth, "GET", "/user/teams", `token ${token}`)).status).toBe(403)
  })
})

describe("GET /orgs/{org}/teams/search", () => {
  it("finds teams by name (and description), among the caller's own teams unless a site admin", async () => {
    const res = await call("GET", "/orgs/acme/teams/search?q=DEV", "member")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("1")
    const body = await json(res)
    expect(body.ok).toBe(true)
    expect(names(body.data)).toEqual(["devs"])
    expectSwagger(body.data[0], "Team")
    expect(names((await ok("GET", "/orgs/acme/teams/search?q=builders", "member")).data)).toEqual(["devs"])
    expect((await ok("GET", "/orgs/acme/teams/search?q=builders&include_desc=false", "member")).data).toEqual([])
    // Forgejo: only site admins search all teams; an owner finds the teams it is in.
    expect(names((await ok("GET", "/orgs/acme/teams/search", "owner")).data)).toEqual(["Owners"])
    expect(names((await ok("GET", "/orgs/acme/teams/search", "root")).data)).toEqual([
      "admins",
      "devs",
      "everyone",
      "Owners"
    ])
  })

  it("is for org members: 403 for outsiders, 404 when the org is hidden, 401 anonymous", async () => {
    const outsider = await call("GET", "/orgs/acme/teams/search", "outsider")
    expect(outsider.status).toBe(403)
    expect((await json(outsider)).message).toBe("Must be an organization member")
    expect((await call("GET", "/orgs/hidden/teams/search", "outsider")).status).toBe(404)
    expect((await call("GET", "/orgs/acme/teams/search")).status).toBe(401)
  })
})

describe("GET /users/{username}/orgs/{org}/permissions", () => {
  it("answers the user's highest team level and whether it may create repositories", async () => {
    const owner = await ok("GET", "/users/owner/orgs/acme/permissions", "outsider")
    expectSwagger(owner, "OrganizationPermissions")
    expect(owner).toEqual({
      can_create_repository: true,
      can_read: true,
      can_write: true,
      is_admin: true,
      is_owner: true
    })
    expect(await ok("GET", "/users/member/orgs/acme/permissions", "member")).toEqual({
      can_create_repository: false,
      can_read: true,
      can_write: true,
      is_admin: false,
      is_owner: false
    })
    expect(await ok("GET", "/users/repoadmin/orgs/acme/permissions", "member")).toMatchObject({
      is_admin: true,
      is_owner: false
    })
    expect(await ok("GET", "/users/outsider/orgs/acme/permissions", "outsider")).toEqual({
      can_create_repository: false,
      can_read: false,
      can_write: false,
      is_admin: false,
      is_owner: false
    })
    // A site admin has no rights in an org by these rules (Forgejo's GetOrgUserMaxAuthorizeLevel).
    expect((await ok("GET", "/users/root/orgs/acme/permissions", "root")).can_read).toBe(false)
  })

  it("hides private and limited organizations as Forgejo does", async () => {
    expect((await call("GET", "/users/member/orgs/hidden/permissions", "outsider")).status).toBe(404)
    expect((await ok("GET", "/users/member/orgs/hidden/permissions", "member")).can_read).toBe(true)
    expect((await call("GET", "/users/owner/orgs/lim/permissions", "outsider")).status).toBe(200)
    expect((await call("GET", "/users/owner/orgs/lim/permissions")).status).toBe(401)
    expect((await call("GET", "/users/nobody/orgs/acme/permissions", "outsider")).status).toBe(404)
    expect((await call("GET", "/users/owner/orgs/nosuch/permissions", "outsider")).status).toBe(404)
  })
})

describe("POST /orgs/{org}/rename", () => {
  it("an owner renames the org: the old name's repository URLs answer 307 to the new one", async () => {
    await ok("POST", "/orgs", "owner", { username: "oldco" })
    await ok("POST", "/orgs/oldco/repos", "owner", { name: "site", auto_init: true })
    expect((await call("POST", "/orgs/oldco/rename", "member", { new_name: "newco" })).status).toBe(403)
    expect((await call("POST", "/orgs/oldco/rename", undefined, { new_name: "newco" })).status).toBe(401)

    expect((await call("POST", "/orgs/oldco/rename", "owner", { new_name: "newco" })).status).toBe(204)
    expect((await ok("GET", "/orgs/newco", "owner")).name).toBe("newco")
    // The old name redirects (Forgejo's RedirectToUser), the organization itself too.
    const renamed = await fetch(hearth.api("/orgs/oldco"), {
      headers: { authorization: basic("owner") },
      redirect: "manual"
    })
    expect(renamed.status).toBe(307)
    expect(new URL(renamed.headers.get("location")!, hearth.base).pathname).toBe("/api/v1/orgs/newco")
    const moved = await fetch(hearth.api("/repos/oldco/site/contents/README.md"), {
      headers: { authorization: basic("owner") },
      redirect: "manual"
    })
    expect(moved.status).toBe(307)
    expect(new URL(moved.headers.get("location")!, hearth.base).pathname).toBe(
      "/api/v1/repos/newco/site/contents/README.md"
    )
    expect((await ok("GET", "/repos/newco/site/contents/README.md", "owner")).name).toBe("README.md")
  })

  it("refuses a taken or invalid name with 422, changing nothing", async () => {
    await ok("POST", "/orgs", "owner", { username: "stay" })
    const taken = await call("POST", "/orgs/stay/rename", "owner", { new_name: "ACME" })
    expect(taken.status).toBe(422)
    expect((await json(taken)).message).toBe("user already exists [name: ACME]")
    const bad = await call("POST", "/orgs/stay/rename", "owner", { new_name: "no spaces" })
    expect(bad.status).toBe(422)
    expect((await json(bad)).message).toContain("[UserName]")
    expect((await call("POST", "/orgs/stay/rename", "owner", { new_name: "admin" })).status).toBe(422)
    expect((await call("POST", "/orgs/stay/rename", "owner", {})).status).toBe(422)
    expect((await ok("GET", "/orgs/stay", "owner")).name).toBe("stay")
    // Only the letter case: the same org, no redirect needed.
    expect((await call("POST", "/orgs/stay/rename", "owner", { new_name: "Stay" })).status).toBe(204)
    expect((await ok("GET", "/orgs/stay", "owner")).name).toBe("Stay")
  })
})

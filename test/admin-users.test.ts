// /admin/users (Forgejo's admin user routes): site admins only, with the admin token scope;
// creation without a password and with must_change_password on by default; edits that take
// effect on already-cached tokens; deletion refusals and purge.
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type UserRow, UsersRepo } from "../src/users/Repo.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const tokens: Record<string, string> = {}

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "chief", isAdmin: true })
  await createUser(hearth, { username: "plain" })
  tokens.chief = await createToken(hearth, "chief")
  tokens.plain = await createToken(hearth, "plain")
  tokens.chiefReadAdmin = await createToken(hearth, "chief", ["read:admin"])
  tokens.chiefNoAdmin = await createToken(hearth, "chief", ["write:user"])
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, options: { token?: string; auth?: string; body?: unknown } = {}) =>
  fetch(hearth.api(path), {
    method,
    headers: {
      ...(options.token === undefined ? {} : { authorization: `token ${options.token}` }),
      ...(options.auth === undefined ? {} : { authorization: options.auth }),
      ...(options.body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) })
  })

const asChief = (method: string, path: string, body?: unknown) =>
  call(method, path, { token: tokens.chief, ...(body === undefined ? {} : { body }) })

const row = (name: string) =>
  hearth.run(
    Effect.gen(function* () {
      const repo = yield* UsersRepo
      return Option.getOrUndefined(yield* repo.findByName(name))
    })
  )

const query = <A = Record<string, unknown>>(text: (sql: SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  hearth.run(
    Effect.gen(function* () {
      return yield* text(yield* SqlClient)
    })
  )

const userCount = async () => Number((await query((sql) => sql`SELECT count(*) AS n FROM users`))[0]!.n)

describe("access to /admin/users", () => {
  it("answers anonymous callers 401", async () => {
    const res = await call("GET", "/admin/users")
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("token is required")
  })

  it("answers a user who is no site admin 403 on every route, and writes nothing", async () => {
    const before = await userCount()
    const attempts = [
      call("GET", "/admin/users", { token: tokens.plain }),
      call("POST", "/admin/users", { token: tokens.plain, body: { username: "sneaky", email: "sneaky@example.com" } }),
      call("PATCH", "/admin/users/plain", { token: tokens.plain, body: { admin: true } }),
      call("DELETE", "/admin/users/chief", { token: tokens.plain })
    ]
    for (const res of await Promise.all(attempts)) {
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe("user should be the site admin")
    }
    expect(await userCount()).toBe(before)
    expect((await row("plain"))!.isAdmin).toBe(false)
    expect(await row("chief")).toBeDefined()
  })

  it("needs the admin token scope: read for listing, write for changes", async () => {
    const noScope = await call("GET", "/admin/users", { token: tokens.chiefNoAdmin })
    expect(noScope.status).toBe(403)
    expect((await json(noScope)).message).toBe("token does not have at least one of required scope(s): [read:admin]")
    expect((await call("GET", "/admin/users", { token: tokens.chiefReadAdmin })).status).toBe(200)
    const readOnly = await call("POST", "/admin/users", {
      token: tokens.chiefReadAdmin,
      body: { username: "viaread", email: "viaread@example.com" }
    })
    expect(readOnly.status).toBe(403)
    expect((await json(readOnly)).message).toBe("token does not have at least one of required scope(s): [write:admin]")
    expect(await row("viaread")).toBeUndefined()
  })

  it("accepts the admin's password (Basic) too", async () => {
    expect((await call("GET", "/admin/users", { auth: basic("chief") })).status).toBe(200)
  })
})

describe("POST /admin/users", () => {
  it("creates an account without a password, which must change its password by default", async () => {
    const res = await asChief("POST", "/admin/users", { username: "NoPass", email: "nopass@example.com" })
    expect(res.status).toBe(201)
    const user = await json(res)
    expectSwagger(user, "User")
    expect(user).toMatchObject({
      login: "NoPass",
      login_name: "NoPass",
      email: "nopass@example.com",
      active: true,
      is_admin: false,
      visibility: "public",
      restricted: false
    })
    const stored = (await row("nopass"))!
    expect(stored.id).toBe(user.id)
    expect(stored.mustChangePassword).toBe(true)
    expect(stored.passwdHash).toBe("")
    // No password: it cannot sign in with one.
    expect((await call("GET", "/user", { auth: basic("NoPass", "anything-at-all") })).status).toBe(401)
  })

  it("keeps must_change_password off when asked, and the account signs in", async () => {
    const res = await asChief("POST", "/admin/users", {
      username: "ready",
      email: "ready@example.com",
      password: "ready-password",
      must_change_password: false
    })
    expect(res.status).toBe(201)
    const me = await call("GET", "/user", { auth: basic("ready", "ready-password") })
    expect(me.status).toBe(200)
    expect((await json(me)).login).toBe("ready")
  })

  it("answers an account that must change its password 403 on every API route", async () => {
    await asChief("POST", "/admin/users", {
      username: "forced",
      email: "forced@example.com",
      password: "forced-password"
    })
    expect((await row("forced"))!.mustChangePassword).toBe(true)
    for (const path of ["/user", "/users/forced", "/users/search?q=x", "/version", "/admin/users"]) {
      const res = await call("GET", path, { auth: basic("forced", "forced-password") })
      expect(res.status, path).toBe(403)
      expect((await json(res)).message).toBe(
        `You must change your password. Change it at: ${hearth.base}/user/change_password`
      )
    }
  })

  it("sets visibility, restriction, full name, login name and creation time", async () => {
    const res = await asChief("POST", "/admin/users", {
      username: "shaped",
      email: "shaped@example.com",
      full_name: "Shaped Person",
      login_name: "shaped-login",
      visibility: "private",
      restricted: true,
      created_at: "2020-02-03T04:05:06Z"
    })
    expect(res.status).toBe(201)
    expect(await json(res)).toMatchObject({
      full_name: "Shaped Person",
      login_name: "shaped-login",
      visibility: "private",
      restricted: true,
      created: "2020-02-03T04:05:06Z"
    })
    // An empty visibility, as Go clients send it, means the default.
    const blank = await asChief("POST", "/admin/users", {
      username: "blankvis",
      email: "blankvis@example.com",
      visibility: ""
    })
    expect((await json(blank)).visibility).toBe("public")
  })

  it("refuses invalid, reserved and duplicate names and e-mails with 422, writing nothing", async () => {
    const before = await userCount()
    const cases: Array<[unknown, string]> = [
      [{ username: "bad name", email: "a@example.com" }, "[UserName]: must be valid"],
      [{ username: "-dash", email: "a@example.com" }, "[UserName]: must be valid"],
      [{ username: "x".repeat(41), email: "a@example.com" }, "[UserName]: MaxSize"],
      [{ username: "admin", email: "a@example.com" }, "name is reserved"],
      [{ username: "thing.keys", email: "a@example.com" }, "name is reserved"],
      [{ username: "CHIEF", email: "a@example.com" }, "user already exists"],
      [{ username: "fresh1", email: "not-an-email" }, "[Email]: e-mail invalid"],
      [{ username: "fresh2", email: "CHIEF@example.com" }, "e-mail already in use"],
      [{ username: "fresh3" }, "email"],
      [{ username: "fresh4", email: "f4@example.com", visibility: "secret" }, "visibility"],
      [{ username: "fresh5", email: "f5@example.com", source_id: 5 }, "login source does not exist [id: 5]"],
      [{ username: "fresh6", email: "f6@example.com", created_at: "yesterday" }, "created_at"]
    ]
    for (const [body, message] of cases) {
      const res = await asChief("POST", "/admin/users", body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect((await json(res)).message, JSON.stringify(body)).toContain(message)
    }
    expect(await userCount()).toBe(before)
  })

  it("refuses a password shorter than 8 characters with 400", async () => {
    const res = await asChief("POST", "/admin/users", {
      username: "shorty",
      email: "shorty@example.com",
      password: "short"
    })
    expect(res.status).toBe(400)
    expect((await json(res)).message).toBe("password must be at least 8 characters")
    expect(await row("shorty")).toBeUndefined()
  })
})

describe("GET /admin/users", () => {
  it("lists every individual user, private ones included, with X-Total-Count and Link", async () => {
    await hearth.run(
      Effect.gen(function* () {
        const repo = yield* UsersRepo
        yield* repo.insert({ type: 1, name: "listorg", email: "listorg@example.com" })
      })
    )
    const res = await asChief("GET", "/admin/users?limit=50")
    expect(res.status).toBe(200)
    const list = await json(res)
    expectSwagger(list, "User[]")
    const logins = list.map((u: any) => u.login)
    const expected = Number((await query((sql) => sql`SELECT count(*) AS n FROM users WHERE type = 0`))[0]!.n)
    expect(res.headers.get("x-total-count")).toBe(String(expected))
    expect(logins).toHaveLength(expected)
    expect(logins).toContain("shaped")
    expect(logins).not.toContain("listorg")

    const paged = await asChief("GET", "/admin/users?limit=1&page=2")
    expect(await json(paged)).toHaveLength(1)
    expect(paged.headers.get("link")).toContain(`rel="first"`)
  })

  it("filters by login name and sorts", async () => {
    const byLogin = await json(await asChief("GET", "/admin/users?login_name=shaped-login"))
    expect(byLogin.map((u: any) => u.login)).toEqual(["shaped"])
    // Every account is local (source 0) in Hearth.
    const local = await asChief("GET", "/admin/users?source_id=0&limit=1")
    const all = await asChief("GET", "/admin/users?limit=1")
    expect(local.headers.get("x-total-count")).toBe(all.headers.get("x-total-count"))
    expect(await json(await asChief("GET", "/admin/users?source_id=9"))).toEqual([])
    const newest = await json(await asChief("GET", "/admin/users?sort=newest&limit=1"))
    const last = Number((await query((sql) => sql`SELECT max(id) AS id FROM users WHERE type = 0`))[0]!.id)
    expect(newest[0].id).toBe(last)
  })
})

describe("PATCH /admin/users/{username}", () => {
  it("changes profile fields and answers the updated user", async () => {
    await createUser(hearth, { username: "editee" })
    const res = await asChief("PATCH", "/admin/users/editee", {
      full_name: "Edited Name",
      location: "Somewhere",
      website: "https://example.org/me",
      description: "about me",
      pronouns: "she/her",
      visibility: "limited",
      hide_email: true,
      max_repo_creation: 3,
      allow_create_organization: false
    })
    expect(res.status).toBe(200)
    const edited = await json(res)
    expectSwagger(edited, "User")
    expect(edited).toMatchObject({
      login: "editee",
      full_name: "Edited Name",
      location: "Somewhere",
      website: "https://example.org/me",
      description: "about me",
      pronouns: "she/her",
      visibility: "limited"
    })
    const stored = (await row("editee"))!
    expect(stored).toMatchObject({ keepEmailPrivate: true, maxRepoCreation: 3, allowCreateOrganization: false })
    // An empty body changes nothing.
    const same = await asChief("PATCH", "/admin/users/editee", {})
    expect(same.status).toBe(200)
    expect((await json(same)).full_name).toBe("Edited Name")
  })

  it("sets a new password", async () => {
    await createUser(hearth, { username: "repass" })
    expect((await asChief("PATCH", "/admin/users/repass", { password: "brand-new-password" })).status).toBe(200)
    expect((await call("GET", "/user", { auth: basic("repass", "brand-new-password") })).status).toBe(200)
    expect((await call("GET", "/user", { auth: basic("repass", "password123") })).status).toBe(401)
  })

  it("takes effect at once on the account's cached token", async () => {
    await createUser(hearth, { username: "cached" })
    const token = await createToken(hearth, "cached")
    expect((await call("GET", "/user", { token })).status).toBe(200) // now in the token cache

    await asChief("PATCH", "/admin/users/cached", { must_change_password: true })
    const forced = await call("GET", "/user", { token })
    expect(forced.status).toBe(403)
    expect((await json(forced)).message).toContain("You must change your password")
    await asChief("PATCH", "/admin/users/cached", { must_change_password: false })
    expect((await call("GET", "/user", { token })).status).toBe(200)

    for (const change of [{ prohibit_login: true }, { active: false }]) {
      await asChief("PATCH", "/admin/users/cached", change)
      const res = await call("GET", "/user", { token })
      expect(res.status, JSON.stringify(change)).toBe(403)
      expect((await json(res)).message).toBe(
        "This account is prohibited from signing in, please contact your site administrator."
      )
      await asChief("PATCH", "/admin/users/cached", { prohibit_login: false, active: true })
      expect((await call("GET", "/user", { token })).status).toBe(200)
    }

    expect((await call("GET", "/admin/users", { token })).status).toBe(403)
    await asChief("PATCH", "/admin/users/cached", { admin: true })
    expect((await call("GET", "/admin/users", { token })).status).toBe(200)
    await asChief("PATCH", "/admin/users/cached", { admin: false })
    expect((await call("GET", "/admin/users", { token })).status).toBe(403)
  })

  it("refuses to take the admin rights of the last admin", async () => {
    await createUser(hearth, { username: "second", isAdmin: true })
    expect((await asChief("PATCH", "/admin/users/second", { admin: false })).status).toBe(200)
    const res = await asChief("PATCH", "/admin/users/chief", { admin: false })
    expect(res.status).toBe(400)
    expect((await json(res)).message).toContain("last admin")
    expect((await row("chief"))!.isAdmin).toBe(true)
  })

  it("refuses bad values, changing nothing", async () => {
    await createUser(hearth, { username: "victim", email: "victim@example.com" })
    const cases: Array<[unknown, number, string]> = [
      [{ email: "not-an-email" }, 400, "e-mail invalid"],
      [{ email: "chief@example.com" }, 400, "e-mail already in use"],
      [{ password: "short" }, 400, "password must be at least 8 characters"],
      [{ login_name: "x" }, 422, "source_id and login_name must be specified together"],
      [{ source_id: 0 }, 422, "source_id and login_name must be specified together"],
      [{ login_name: "x", source_id: 7 }, 422, "login source does not exist [id: 7]"],
      [{ website: "javascript:alert(1)" }, 422, "website"],
      [{ max_repo_creation: -2 }, 422, "MaxRepoCreation"],
      [{ visibility: "hidden" }, 422, "visibility"],
      [{ full_name: "x".repeat(101) }, 422, "full_name"],
      [{ admin: "yes" }, 422, "admin"]
    ]
    for (const [body, status, message] of cases) {
      const res = await asChief("PATCH", "/admin/users/victim", { full_name: "Changed", ...(body as object) })
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect((await json(res)).message, JSON.stringify(body)).toContain(message)
    }
    const stored = (await row("victim"))!
    expect(stored.fullName).toBe("")
    expect(stored.email).toBe("victim@example.com")
    // The pair together is accepted (source 0 is the local one).
    expect((await asChief("PATCH", "/admin/users/victim", { login_name: "victim-login", source_id: 0 })).status).toBe(
      200
    )
    expect((await row("victim"))!.loginName).toBe("victim-login")
  })

  it("answers 404 for an unknown user and 422 for an organization", async () => {
    expect((await asChief("PATCH", "/admin/users/nobody-known", { full_name: "x" })).status).toBe(404)
    const org = await asChief("PATCH", "/admin/users/listorg", { full_name: "x" })
    expect(org.status).toBe(422)
    expect((await json(org)).message).toBe("listorg is an organization not a user")
  })
})

/** An organization with an owners team holding `owners`, and `members` in a second team. */
const makeOrg = (name: string, owners: ReadonlyArray<UserRow>, members: ReadonlyArray<UserRow> = []) =>
  hearth.run(
    Effect.gen(function* () {
      const repo = yield* UsersRepo
      const sql = yield* SqlClient
      const org = yield* repo.insert({ type: 1, name, email: `${name}@example.com` })
      for (const [teamName, permission, users] of [
        ["Owners", "owner", owners],
        ["Helpers", "write", members]
      ] as const) {
        const [created] = yield* sql`INSERT INTO teams (org_id, name, lower_name, permission)
        VALUES (${org.id}, ${teamName}, ${teamName.toLowerCase()}, ${permission}) RETURNING id`
        for (const user of users) {
          yield* sql`INSERT INTO team_users (team_id, user_id, org_id) VALUES (${created!.id}, ${user.id}, ${org.id})`
          yield* sql`INSERT INTO org_users (org_id, user_id) VALUES (${org.id}, ${user.id}) ON CONFLICT DO NOTHING`
        }
      }
      return org
    })
  )

describe("DELETE /admin/users/{username}", () => {
  it("refuses to delete the admin's own account", async () => {
    const res = await asChief("DELETE", "/admin/users/chief")
    expect(res.status).toBe(422)
    expect((await json(res)).message).toBe("you cannot delete yourself")
    expect(await row("chief")).toBeDefined()
  })

  it("answers 404 for an unknown user and 422 for an organization", async () => {
    expect((await asChief("DELETE", "/admin/users/nobody-known")).status).toBe(404)
    const res = await asChief("DELETE", "/admin/users/listorg")
    expect(res.status).toBe(422)
    expect((await json(res)).message).toBe("listorg is an organization not a user")
    expect(await row("listorg")).toBeDefined()
  })

  it("deletes an account with its tokens and second factor; its cached token stops working", async () => {
    const doomed = await createUser(hearth, { username: "doomed" })
    const token = await createToken(hearth, "doomed")
    expect((await call("GET", "/user", { token })).status).toBe(200)
    await query((sql) => sql`INSERT INTO two_factor (user_id, secret, enabled) VALUES (${doomed.id}, 'x', true)`)

    const res = await asChief("DELETE", "/admin/users/doomed")
    expect(res.status).toBe(204)
    expect(await res.text()).toBe("")
    expect(await row("doomed")).toBeUndefined()
    expect((await call("GET", "/user", { token })).status).toBe(401)
    expect((await call("GET", "/users/doomed")).status).toBe(404)
    for (const table of ["access_tokens", "two_factor"]) {
      const left = await query((sql) => sql`SELECT count(*) AS n FROM ${sql(table)} WHERE user_id = ${doomed.id}`)
      expect(Number(left[0]!.n), table).toBe(0)
    }
  })

  it("refuses to delete an organization member without purge, and removes it with purge", async () => {
    const member = await createUser(hearth, { username: "member" })
    const coOwner = await createUser(hearth, { username: "coowner" })
    const solo = await makeOrg("soloorg", [member])
    const shared = await makeOrg("sharedorg", [member, coOwner])
    const helped = await makeOrg("helpedorg", [coOwner], [member])

    const refused = await asChief("DELETE", "/admin/users/member")
    expect(refused.status).toBe(422)
    expect((await json(refused)).message).toContain("user still has membership of organizations")
    expect(await row("member")).toBeDefined()
    const purgeFalse = await asChief("DELETE", "/admin/users/member?purge=false")
    expect(purgeFalse.status).toBe(422)

    const purged = await asChief("DELETE", "/admin/users/member?purge=true")
    expect(purged.status).toBe(204)
    expect(await row("member")).toBeUndefined()
    // The organization it owned alone goes with it; the others stay, without it.
    expect(await row("soloorg")).toBeUndefined()
    expect(await row("sharedorg")).toBeDefined()
    expect(await row("helpedorg")).toBeDefined()
    const memberships = await query(
      (sql) => sql`SELECT count(*) AS n FROM org_users WHERE user_id = ${member.id} OR org_id = ${solo.id}`
    )
    expect(Number(memberships[0]!.n)).toBe(0)
    const teamsLeft = await query(
      (sql) =>
        sql`SELECT count(*) AS n FROM team_users WHERE org_id IN (${shared.id}, ${helped.id}) AND user_id = ${coOwner.id}`
    )
    expect(Number(teamsLeft[0]!.n)).toBe(2)
  })
})

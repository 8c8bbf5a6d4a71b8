// Quota administration (issue 7 item 1; Forgejo's routers/api/v1/admin/quota*.go):
// rules, groups and memberships for site administrators with every status Forgejo answers, what an
// account and an organization's owners see of their quota, and every route 404 while quotas are off.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let off: Hearth

beforeAll(async () => {
  ;[hearth, off] = await Promise.all([startHearth({ quota: { ENABLED: "true" } }), startHearth()])
  await createUser(hearth, { username: "root", isAdmin: true })
  await Promise.all(["alice", "bob", "carol", "dora"].map((username) => createUser(hearth, { username })))
  await createUser(off, { username: "root", isAdmin: true })
  // acme: alice owns it, bob is a member without ownership; secretive: private, alice's.
  expect(
    (await request(hearth, "POST", "/orgs", basic("alice"), { username: "acme", email: "acme@example.com" })).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/orgs", basic("alice"), { username: "secretive", visibility: "private" })).status
  ).toBe(201)
  const team = await json(
    await request(hearth, "POST", "/orgs/acme/teams", basic("alice"), {
      name: "devs",
      permission: "write",
      units: ["repo.code"]
    })
  )
  expect((await request(hearth, "PUT", `/teams/${team.id}/members/bob`, basic("alice"))).status).toBe(204)
})
afterAll(() => Promise.all([hearth?.close(), off?.close()]))

const root = basic("root")
const asRoot = (method: string, path: string, body?: unknown) => request(hearth, method, path, root, body)

const count = async (table: string, where = "true") =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql.unsafe<{ n: bigint }>(`SELECT count(*) AS n FROM ${table} WHERE ${where}`)
      return Number(row!.n)
    })
  )

let n = 0
const unique = (prefix: string) => `${prefix}-${++n}`

const createRule = async (body: Record<string, unknown>) => {
  const res = await asRoot("POST", "/admin/quota/rules", body)
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const createGroup = async (name: string, rules: Array<Record<string, unknown>> = []) => {
  const res = await asRoot("POST", "/admin/quota/groups", { name, rules })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const expectEmpty404 = async (res: Response) => {
  expect(res.status).toBe(404)
  expect(await res.text()).toBe("")
}
const expectError = async (res: Response, status: number, message: string) => {
  expect(res.status).toBe(status)
  const body = await json(res)
  expect(body.message).toBe(message)
  expect(body.url).toBe(`${hearth.base}/api/swagger`)
}

// Every administrative route, with a body where it takes one.
const adminRoutes: ReadonlyArray<readonly [string, string, unknown?]> = [
  ["GET", "/admin/quota/groups"],
  ["POST", "/admin/quota/groups", { name: "sneaky" }],
  ["GET", "/admin/quota/groups/g"],
  ["DELETE", "/admin/quota/groups/g"],
  ["GET", "/admin/quota/groups/g/users"],
  ["PUT", "/admin/quota/groups/g/users/alice"],
  ["DELETE", "/admin/quota/groups/g/users/alice"],
  ["PUT", "/admin/quota/groups/g/rules/r"],
  ["DELETE", "/admin/quota/groups/g/rules/r"],
  ["GET", "/admin/quota/rules"],
  ["POST", "/admin/quota/rules", { name: "sneaky", limit: 1 }],
  ["GET", "/admin/quota/rules/r"],
  ["PATCH", "/admin/quota/rules/r", { limit: 5 }],
  ["DELETE", "/admin/quota/rules/r"],
  ["GET", "/admin/users/alice/quota"],
  ["POST", "/admin/users/alice/quota/groups", { groups: [] }]
]

describe("who may administer quotas", () => {
  it("answers anonymous callers 401 on every administrative route", async () => {
    for (const [method, path, body] of adminRoutes) {
      const res = await request(hearth, method, path, undefined, body)
      expect(res.status, `${method} ${path}`).toBe(401)
      expect((await json(res)).message).toBe("token is required")
    }
  })

  it("answers a signed-in user who is no site admin 403 on every route, and writes nothing", async () => {
    for (const [method, path, body] of adminRoutes) {
      const res = await request(hearth, method, path, basic("alice"), body)
      expect(res.status, `${method} ${path}`).toBe(403)
      expect((await json(res)).message).toBe("user should be the site admin")
    }
    expect(await count("quota_rules", "name = 'sneaky'")).toBe(0)
    expect(await count("quota_groups", "name = 'sneaky'")).toBe(0)
  })

  it("needs the admin token scope: read to look, write to change", async () => {
    const readOnly = await createToken(hearth, "root", ["read:admin"])
    const noAdmin = await createToken(hearth, "root", ["write:user"])
    const refused = await request(hearth, "GET", "/admin/quota/rules", `token ${noAdmin}`)
    await expectError(refused, 403, "token does not have at least one of required scope(s): [read:admin]")
    expect((await request(hearth, "GET", "/admin/quota/rules", `token ${readOnly}`)).status).toBe(200)
    const write = await request(hearth, "POST", "/admin/quota/rules", `token ${readOnly}`, {
      name: unique("r"),
      limit: 1
    })
    await expectError(write, 403, "token does not have at least one of required scope(s): [write:admin]")
  })
})

describe("/admin/quota/rules", () => {
  it("creates a rule (201 QuotaRuleInfo), gets it and lists it", async () => {
    const name = unique("repos-1k")
    const created = await createRule({ name, limit: 1024, subjects: ["size:repos:all", "size:git:lfs"] })
    expectSwagger(created, "QuotaRuleInfo")
    expect(created).toEqual({ name, limit: 1024, subjects: ["size:repos:all", "size:git:lfs"] })
    const got = await asRoot("GET", `/admin/quota/rules/${name}`)
    expect(got.status).toBe(200)
    expect(await json(got)).toEqual(created)
    const list = await json(await asRoot("GET", "/admin/quota/rules"))
    expectSwagger(list, "QuotaRuleInfo[]")
    expect(list).toContainEqual(created)
  })

  it("leaves `subjects` out of a rule that has none, as Forgejo's omitempty", async () => {
    const name = unique("bare")
    expect(await createRule({ name, limit: -1 })).toEqual({ name, limit: -1 })
  })

  it("refuses a missing name or limit (422), an unknown subject (422) and a duplicate (409)", async () => {
    expect((await asRoot("POST", "/admin/quota/rules", { limit: 1 })).status).toBe(422)
    expect((await asRoot("POST", "/admin/quota/rules", { name: "", limit: 1 })).status).toBe(422)
    const name = unique("r")
    await expectError(await asRoot("POST", "/admin/quota/rules", { name }), 422, "[Limit]: Required")
    await expectError(await asRoot("POST", "/admin/quota/rules", { name, limit: null }), 422, "[Limit]: Required")
    await expectError(
      await asRoot("POST", "/admin/quota/rules", { name, limit: 1, subjects: ["size:repos:all", "size:everything"] }),
      422,
      "unrecognized quota limit subject: [subject: size:everything]"
    )
    expect(await count("quota_rules", `name = '${name}'`)).toBe(0)
    await createRule({ name, limit: 1 })
    await expectError(
      await asRoot("POST", "/admin/quota/rules", { name, limit: 2 }),
      409,
      `rule already exists: [name: ${name}]`
    )
    expect((await json(await asRoot("GET", `/admin/quota/rules/${name}`))).limit).toBe(1)
  })

  it("answers an unknown rule 404 with an empty body on get, edit and delete", async () => {
    await expectEmpty404(await asRoot("GET", "/admin/quota/rules/nope"))
    await expectEmpty404(await asRoot("PATCH", "/admin/quota/rules/nope", { limit: 1 }))
    await expectEmpty404(await asRoot("DELETE", "/admin/quota/rules/nope"))
  })

  it("edits only the fields given; an empty body is 200 and changes nothing; an unknown subject is 422", async () => {
    const name = unique("edit")
    await createRule({ name, limit: 10, subjects: ["size:all"] })
    const limited = await asRoot("PATCH", `/admin/quota/rules/${name}`, { limit: 20 })
    expect(limited.status).toBe(200)
    const body = await json(limited)
    expectSwagger(body, "QuotaRuleInfo")
    expect(body).toEqual({ name, limit: 20, subjects: ["size:all"] })
    const empty = await asRoot("PATCH", `/admin/quota/rules/${name}`, {})
    expect(empty.status).toBe(200)
    expect(await json(empty)).toEqual({ name, limit: 20, subjects: ["size:all"] })
    expect(await json(await asRoot("PATCH", `/admin/quota/rules/${name}`, { subjects: ["size:git:all"] }))).toEqual({
      name,
      limit: 20,
      subjects: ["size:git:all"]
    })
    await expectError(
      await asRoot("PATCH", `/admin/quota/rules/${name}`, { limit: 30, subjects: ["bogus"] }),
      422,
      "unrecognized quota limit subject: [subject: bogus]"
    )
    expect(await json(await asRoot("GET", `/admin/quota/rules/${name}`))).toEqual({
      name,
      limit: 20,
      subjects: ["size:git:all"]
    })
    expect(await json(await asRoot("PATCH", `/admin/quota/rules/${name}`, { subjects: [] }))).toEqual({
      name,
      limit: 20
    })
  })

  it("deletes a rule (204), also from every group that had it", async () => {
    const name = unique("doomed")
    const group = unique("holder")
    await createGroup(group, [{ name, limit: 5, subjects: ["size:all"] }])
    expect((await asRoot("DELETE", `/admin/quota/rules/${name}`)).status).toBe(204)
    await expectEmpty404(await asRoot("GET", `/admin/quota/rules/${name}`))
    expect((await json(await asRoot("GET", `/admin/quota/groups/${group}`))).rules).toEqual([])
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/rules/${name}`))
  })
})

describe("/admin/quota/groups", () => {
  it("creates a group with its rules in one go: existing rules reused unchanged, new ones created (limit 0 when omitted)", async () => {
    const kept = unique("kept")
    await createRule({ name: kept, limit: 4096, subjects: ["size:repos:all"] })
    const fresh = unique("fresh")
    const zero = unique("zero")
    const name = unique("team")
    const group = await createGroup(name, [
      { name: kept, limit: 1, subjects: ["size:all"] },
      { name: fresh, limit: 2048, subjects: ["size:git:lfs", "size:assets:all"] },
      { name: zero, subjects: ["size:assets:packages:all"] }
    ])
    expectSwagger(group, "QuotaGroup")
    expect(group).toEqual({
      name,
      rules: [
        { name: kept, limit: 4096, subjects: ["size:repos:all"] },
        { name: fresh, limit: 2048, subjects: ["size:git:lfs", "size:assets:all"] },
        { name: zero, limit: 0, subjects: ["size:assets:packages:all"] }
      ]
    })
    expect(await json(await asRoot("GET", `/admin/quota/rules/${kept}`))).toEqual({
      name: kept,
      limit: 4096,
      subjects: ["size:repos:all"]
    })
    const got = await asRoot("GET", `/admin/quota/groups/${name}`)
    expect(got.status).toBe(200)
    expect(await json(got)).toEqual(group)
    const list = await json(await asRoot("GET", "/admin/quota/groups"))
    expectSwagger(list, "QuotaGroup[]")
    expect(list).toContainEqual(group)
  })

  it("creates a group without rules, and a rule listed twice is in it once", async () => {
    expect(await createGroup(unique("empty"))).toEqual({ name: `empty-${n}`, rules: [] })
    const rule = unique("twice")
    const group = await createGroup(unique("g"), [
      { name: rule, limit: 3 },
      { name: rule, limit: 9 }
    ])
    expect(group.rules).toEqual([{ name: rule, limit: 3 }])
  })

  it("refuses an existing group name with 409, changing nothing", async () => {
    const name = unique("taken")
    await createGroup(name)
    const rule = unique("not-created")
    await expectError(
      await asRoot("POST", "/admin/quota/groups", { name, rules: [{ name: rule, limit: 1 }] }),
      409,
      `group already exists: [name: ${name}]`
    )
    expect(await count("quota_rules", `name = '${rule}'`)).toBe(0)
  })

  it("is atomic: an unknown subject (422) leaves neither the group nor the rules listed before it", async () => {
    const name = unique("broken")
    const before = unique("before")
    await expectError(
      await asRoot("POST", "/admin/quota/groups", {
        name,
        rules: [
          { name: before, limit: 1, subjects: ["size:all"] },
          { name: unique("bad"), limit: 1, subjects: ["size:moon"] }
        ]
      }),
      422,
      "unrecognized quota limit subject: [subject: size:moon]"
    )
    expect(await count("quota_groups", `name = '${name}'`)).toBe(0)
    expect(await count("quota_rules", `name = '${before}'`)).toBe(0)
    expect(await count("quota_group_rules", `group_name = '${name}'`)).toBe(0)
  })

  it("refuses a missing or empty name (422)", async () => {
    expect((await asRoot("POST", "/admin/quota/groups", { rules: [] })).status).toBe(422)
    await expectError(await asRoot("POST", "/admin/quota/groups", { name: "" }), 422, "[Name]: Required")
  })

  it("answers an unknown group 404 with an empty body", async () => {
    await expectEmpty404(await asRoot("GET", "/admin/quota/groups/nope"))
    await expectEmpty404(await asRoot("DELETE", "/admin/quota/groups/nope"))
    await expectEmpty404(await asRoot("GET", "/admin/quota/groups/nope/users"))
    await expectEmpty404(await asRoot("PUT", "/admin/quota/groups/nope/users/alice"))
    await expectEmpty404(await asRoot("DELETE", "/admin/quota/groups/nope/users/alice"))
    const rule = unique("r")
    await createRule({ name: rule, limit: 1 })
    await expectEmpty404(await asRoot("PUT", `/admin/quota/groups/nope/rules/${rule}`))
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/groups/nope/rules/${rule}`))
  })

  it("adds a rule (204), refuses it twice (409) and an unknown rule (422); removes it (204), then 404", async () => {
    const group = unique("g")
    const rule = unique("r")
    await createGroup(group)
    await createRule({ name: rule, limit: 7, subjects: ["size:repos:public"] })
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/rules/${rule}`)).status).toBe(204)
    expect((await json(await asRoot("GET", `/admin/quota/groups/${group}`))).rules).toEqual([
      { name: rule, limit: 7, subjects: ["size:repos:public"] }
    ])
    await expectError(
      await asRoot("PUT", `/admin/quota/groups/${group}/rules/${rule}`),
      409,
      `rule already in group: [group: ${group}, rule: ${rule}]`
    )
    await expectError(
      await asRoot("PUT", `/admin/quota/groups/${group}/rules/ghost`),
      422,
      "rule not found: [name: ghost]"
    )
    const removed = await asRoot("DELETE", `/admin/quota/groups/${group}/rules/${rule}`)
    expect(removed.status).toBe(204)
    expect((await json(await asRoot("GET", `/admin/quota/groups/${group}`))).rules).toEqual([])
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/groups/${group}/rules/${rule}`))
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/groups/${group}/rules/ghost`))
    // The rule itself stays.
    expect((await asRoot("GET", `/admin/quota/rules/${rule}`)).status).toBe(200)
  })

  it("adds users and organizations (204), refuses a member twice (409), lists them, removes them (204), then 404", async () => {
    const group = unique("g")
    await createGroup(group)
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/carol`)).status).toBe(204)
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/acme`)).status).toBe(204)
    const carolId = (await json(await request(hearth, "GET", "/users/carol", root))).id
    await expectError(
      await asRoot("PUT", `/admin/quota/groups/${group}/users/carol`),
      409,
      `user already in group: [group: ${group}, userID: ${carolId}]`
    )
    await expectEmpty404(await asRoot("PUT", `/admin/quota/groups/${group}/users/nobody`))
    const listed = await asRoot("GET", `/admin/quota/groups/${group}/users`)
    expect(listed.status).toBe(200)
    const users = await json(listed)
    expectSwagger(users, "User[]")
    expect(users.map((u: { login: string }) => u.login)).toEqual(["carol", "acme"])
    expect((await asRoot("DELETE", `/admin/quota/groups/${group}/users/carol`)).status).toBe(204)
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/groups/${group}/users/carol`))
    await expectEmpty404(await asRoot("DELETE", `/admin/quota/groups/${group}/users/nobody`))
    expect(
      (await json(await asRoot("GET", `/admin/quota/groups/${group}/users`))).map((u: { login: string }) => u.login)
    ).toEqual(["acme"])
    expect((await asRoot("DELETE", `/admin/quota/groups/${group}/users/acme`)).status).toBe(204)
  })

  it("forgets the memberships of a deleted account", async () => {
    const group = unique("g")
    await createGroup(group)
    const user = unique("leaving")
    await createUser(hearth, { username: user })
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/${user}`)).status).toBe(204)
    expect((await asRoot("DELETE", `/admin/users/${user}`)).status).toBe(204)
    expect(await json(await asRoot("GET", `/admin/quota/groups/${group}/users`))).toEqual([])
  })

  it("deletes a group (204) with its memberships; its rules stay", async () => {
    const group = unique("g")
    const rule = unique("r")
    await createGroup(group, [{ name: rule, limit: 1 }])
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/dora`)).status).toBe(204)
    expect((await asRoot("DELETE", `/admin/quota/groups/${group}`)).status).toBe(204)
    await expectEmpty404(await asRoot("GET", `/admin/quota/groups/${group}`))
    expect(await count("quota_group_users", `group_name = '${group}'`)).toBe(0)
    expect((await asRoot("GET", `/admin/quota/rules/${rule}`)).status).toBe(200)
    expect((await json(await asRoot("GET", "/admin/users/dora/quota"))).groups).toEqual([])
  })
})

describe("POST /admin/users/{username}/quota/groups", () => {
  it("puts the user in exactly the listed groups (204)", async () => {
    const [a, b, c, old] = [unique("a"), unique("b"), unique("c"), unique("old")]
    for (const g of [a, b, c, old]) await createGroup(g, [{ name: `${g}-rule`, limit: 100, subjects: ["size:all"] }])
    expect((await asRoot("PUT", `/admin/quota/groups/${old}/users/bob`)).status).toBe(204)
    expect((await asRoot("POST", "/admin/users/bob/quota/groups", { groups: [a, b, c] })).status).toBe(204)
    const info = await json(await asRoot("GET", "/admin/users/bob/quota"))
    expect(info.groups.map((g: { name: string }) => g.name).sort()).toEqual([a, b, c].sort())
    expect((await asRoot("POST", "/admin/users/bob/quota/groups", { groups: [] })).status).toBe(204)
    expect((await json(await asRoot("GET", "/admin/users/bob/quota"))).groups).toEqual([])
  })

  it("refuses an unknown group with 422 and changes nothing", async () => {
    const kept = unique("kept")
    await createGroup(kept)
    expect((await asRoot("POST", "/admin/users/carol/quota/groups", { groups: [kept] })).status).toBe(204)
    await expectError(
      await asRoot("POST", "/admin/users/carol/quota/groups", { groups: ["ghost-group"] }),
      422,
      "group not found: [group: ghost-group]"
    )
    expect(
      (await json(await asRoot("GET", "/admin/users/carol/quota"))).groups.map((g: { name: string }) => g.name)
    ).toEqual([kept])
  })

  it("answers an unknown user 404 and a body without `groups` 422", async () => {
    await expectEmpty404(await asRoot("POST", "/admin/users/nobody/quota/groups", { groups: [] }))
    expect((await asRoot("POST", "/admin/users/carol/quota/groups", {})).status).toBe(422)
  })
})

describe("GET /admin/users/{username}/quota", () => {
  it("shows a fresh account's zero usage and no groups (QuotaInfo)", async () => {
    const res = await asRoot("GET", "/admin/users/dora/quota")
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "QuotaInfo")
    expect(body).toEqual({
      used: {
        size: {
          repos: { public: 0, private: 0 },
          git: { LFS: 0 },
          assets: { attachments: { issues: 0, releases: 0 }, artifacts: 0, packages: { all: 0 } }
        }
      },
      groups: []
    })
  })

  it("shows group and rule names to the administrator", async () => {
    const group = unique("named")
    const rule = unique("named-rule")
    await createGroup(group, [{ name: rule, limit: 42, subjects: ["size:git:all"] }])
    const user = unique("named-user")
    await createUser(hearth, { username: user })
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/${user}`)).status).toBe(204)
    expect((await json(await asRoot("GET", `/admin/users/${user}/quota`))).groups).toEqual([
      { name: group, rules: [{ name: rule, limit: 42, subjects: ["size:git:all"] }] }
    ])
  })

  it("answers an unknown user 404", async () => {
    await expectEmpty404(await asRoot("GET", "/admin/users/nobody/quota"))
  })
})

describe("an account's own quota", () => {
  it("GET /user/quota shows the usage and the groups without names", async () => {
    const user = unique("own")
    await createUser(hearth, { username: user })
    const [g1, g2] = [unique("g"), unique("g")]
    await createGroup(g1, [{ name: `${g1}-r`, limit: 1000, subjects: ["size:repos:all"] }])
    await createGroup(g2, [{ name: `${g2}-r`, limit: -1, subjects: ["size:assets:all"] }])
    for (const g of [g1, g2]) expect((await asRoot("PUT", `/admin/quota/groups/${g}/users/${user}`)).status).toBe(204)
    const res = await request(hearth, "GET", "/user/quota", basic(user))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "QuotaInfo")
    expect(body.groups).toEqual([
      { rules: [{ limit: 1000, subjects: ["size:repos:all"] }] },
      { rules: [{ limit: -1, subjects: ["size:assets:all"] }] }
    ])
    expect(body.used.size.repos).toEqual({ public: 0, private: 0 })
  })

  it("GET /user/quota/check answers a bare boolean, 422 for an unknown or missing subject", async () => {
    const user = unique("checked")
    await createUser(hearth, { username: user })
    const group = unique("g")
    await createGroup(group, [{ name: `${group}-none`, limit: 0, subjects: ["size:repos:all"] }])
    // No group yet: the built-in default ([quota.default] TOTAL = -1) allows everything.
    const free = await request(hearth, "GET", "/user/quota/check?subject=size:repos:all", basic(user))
    expect(free.status).toBe(200)
    expect(free.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await free.text()).toBe("true")
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/${user}`)).status).toBe(204)
    expect(await (await request(hearth, "GET", "/user/quota/check?subject=size:repos:all", basic(user))).text()).toBe(
      "false"
    )
    // Not covered by the group's only rule: no group has an opinion, so the check fails too.
    expect(await (await request(hearth, "GET", "/user/quota/check?subject=size:assets:all", basic(user))).text()).toBe(
      "false"
    )
    await expectError(
      await request(hearth, "GET", "/user/quota/check?subject=size:lots", basic(user)),
      422,
      "unrecognized quota limit subject: [subject: size:lots]"
    )
    await expectError(
      await request(hearth, "GET", "/user/quota/check", basic(user)),
      422,
      "unrecognized quota limit subject: [subject: ]"
    )
  })

  it("lists no attachments, packages or artifacts (Hearth stores none yet)", async () => {
    for (const [kind, definition] of [
      ["attachments", "QuotaUsedAttachment[]"],
      ["packages", "QuotaUsedPackage[]"],
      ["artifacts", "QuotaUsedArtifact[]"]
    ] as const) {
      const res = await request(hearth, "GET", `/user/quota/${kind}?page=1&limit=10`, basic("alice"))
      expect(res.status).toBe(200)
      expect(res.headers.get("x-total-count")).toBe("0")
      const body = await json(res)
      expectSwagger(body, definition)
      expect(body).toEqual([])
    }
  })

  it("needs a signed-in caller (401) with the user scope (403)", async () => {
    for (const path of ["/user/quota", "/user/quota/check?subject=size:all", "/user/quota/packages"]) {
      expect((await request(hearth, "GET", path)).status).toBe(401)
    }
    const token = await createToken(hearth, "alice", ["read:repository"])
    await expectError(
      await request(hearth, "GET", "/user/quota", `token ${token}`),
      403,
      "token does not have at least one of required scope(s): [read:user]"
    )
  })
})

describe("an organization's quota (its owners and site admins)", () => {
  it("shows it to an owner and to a site admin", async () => {
    for (const auth of [basic("alice"), root]) {
      const res = await request(hearth, "GET", "/orgs/acme/quota", auth)
      expect(res.status).toBe(200)
      expectSwagger(await json(res), "QuotaInfo")
      expect(await (await request(hearth, "GET", "/orgs/acme/quota/check?subject=size:all", auth)).text()).toBe("true")
      const list = await request(hearth, "GET", "/orgs/acme/quota/artifacts", auth)
      expect(list.status).toBe(200)
      expect(await json(list)).toEqual([])
    }
  })

  it("refuses a member who is no owner and an outsider (403), hides a private org (404) and an unknown one (404)", async () => {
    for (const path of [
      "/orgs/acme/quota",
      "/orgs/acme/quota/check?subject=size:all",
      "/orgs/acme/quota/packages",
      "/orgs/acme/quota/attachments"
    ]) {
      await expectError(await request(hearth, "GET", path, basic("bob")), 403, "Must be an organization owner")
      await expectError(await request(hearth, "GET", path, basic("carol")), 403, "Must be an organization owner")
    }
    await expectEmpty404(await request(hearth, "GET", "/orgs/secretive/quota", basic("carol")))
    expect((await request(hearth, "GET", "/orgs/secretive/quota", basic("alice"))).status).toBe(200)
    await expectEmpty404(await request(hearth, "GET", "/orgs/nope/quota", basic("alice")))
  })

  it("checks the organization's own groups, not the caller's", async () => {
    const group = unique("org-none")
    await createGroup(group, [{ name: `${group}-r`, limit: 0, subjects: ["size:all"] }])
    const org = unique("limited-org")
    expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: org })).status).toBe(201)
    expect((await asRoot("PUT", `/admin/quota/groups/${group}/users/${org}`)).status).toBe(204)
    expect(
      await (await request(hearth, "GET", `/orgs/${org}/quota/check?subject=size:repos:all`, basic("alice"))).text()
    ).toBe("false")
    expect(
      await (await request(hearth, "GET", "/user/quota/check?subject=size:repos:all", basic("alice"))).text()
    ).toBe("true")
    await expectError(
      await request(hearth, "GET", `/orgs/${org}/quota/check?subject=nope`, basic("alice")),
      422,
      "unrecognized quota limit subject: [subject: nope]"
    )
  })
})

describe("with [quota] ENABLED = false", () => {
  const userRoutes = [
    "/user/quota",
    "/user/quota/check?subject=size:all",
    "/user/quota/attachments",
    "/user/quota/packages",
    "/user/quota/artifacts",
    "/orgs/acme/quota",
    "/orgs/acme/quota/check?subject=size:all",
    "/orgs/acme/quota/artifacts"
  ]

  it("answers every quota route 404 with an empty body, to site admins and anonymous callers alike", async () => {
    for (const auth of [basic("root"), undefined]) {
      for (const [method, path, body] of adminRoutes) {
        const res = await request(off, method, path, auth, body)
        expect(res.status, `${method} ${path}`).toBe(404)
        expect(await res.text()).toBe("")
      }
      for (const path of userRoutes) expect((await request(off, "GET", path, auth)).status, path).toBe(404)
    }
    // The routes around them still work.
    expect((await request(off, "GET", "/user", basic("root"))).status).toBe(200)
  })
})

// OAuth2 applications (issue 5 item 8; Forgejo's /user/applications/oauth2): snake_case members, the secret only in
// the 201 (stored as a hash), redirect URIs validated, another user's application 404.

import { createHash } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol"]) await createUser(hearth, { username })
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

const create = async (user: string, body: Record<string, unknown>) => {
  const res = await call("POST", "/user/applications/oauth2", basic(user), body)
  expect(res.status, await res.clone().text()).toBe(201)
  const app = await json(res)
  expectSwagger(app, "OAuth2Application")
  return app
}
const stored = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT * FROM oauth2_applications ORDER BY id`
      return rows.map((r): Record<string, any> => ({ ...r, id: Number(r.id), user_id: Number(r.user_id) }))
    })
  )

describe("creating", () => {
  it("answers 201 with the client id, the secret (once), the URIs and the creation time", async () => {
    const before = Date.now()
    const app = await create("alice", {
      name: "CI bot",
      redirect_uris: ["https://ci.example.org/callback", "http://127.0.0.1:8080/cb", "com.example.app:/oauth"],
      confidential_client: true
    })
    expect(app).toMatchObject({
      name: "CI bot",
      redirect_uris: ["https://ci.example.org/callback", "http://127.0.0.1:8080/cb", "com.example.app:/oauth"],
      confidential_client: true
    })
    expect(app.client_id).toMatch(UUID)
    expect(app.client_secret).toMatch(/^gto_[a-z2-7]{52}$/)
    expect(app.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(Date.parse(app.created)).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000 - 1000)
    expect(Object.keys(app).sort()).toEqual([
      "client_id",
      "client_secret",
      "confidential_client",
      "created",
      "id",
      "name",
      "redirect_uris"
    ])

    // Only a hash of the secret is kept.
    const row = (await stored()).find((r) => r.id === app.id)!
    expect(JSON.stringify(row)).not.toContain(app.client_secret)
    expect(row.client_secret_hash).toBe(createHash("sha256").update(app.client_secret).digest("hex"))

    const other = await create("alice", { name: "public", redirect_uris: ["https://x.example.org/"] })
    expect(other.confidential_client).toBe(false)
    expect(other.client_id).not.toBe(app.client_id)
    expect(other.client_secret).not.toBe(app.client_secret)
  })

  it("refuses missing names, missing or invalid redirect URIs (422) and creates nothing", async () => {
    const before = await stored()
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ redirect_uris: ["https://a.example.org/"] }, "[Name]: Required"],
      [{ name: "  ", redirect_uris: ["https://a.example.org/"] }, "[Name]: Required"],
      [{ name: "x".repeat(256), redirect_uris: ["https://a.example.org/"] }, "[Name]: MaxSize"],
      [{ name: "n" }, "[RedirectURIs]: Required"],
      [{ name: "n", redirect_uris: [] }, "[RedirectURIs]: Required"],
      [{ name: "n", redirect_uris: ["/callback"] }, "not an absolute URI"],
      [{ name: "n", redirect_uris: ["example.org/cb"] }, "invalid redirect URI"],
      [{ name: "n", redirect_uris: ["https://a.example.org/cb#frag"] }, "fragment"],
      [{ name: "n", redirect_uris: ["javascript:alert(1)"] }, "reverse-domain"],
      [{ name: "n", redirect_uris: ["https://user:pw@a.example.org/cb"] }, "user name or password"],
      [{ name: "n", redirect_uris: [" https://a.example.org/cb"] }, "surrounding spaces"],
      [{ name: "n", redirect_uris: ["https://a.example.org/", "ftp:nothing"] }, 'invalid redirect URI "ftp:nothing"']
    ]
    for (const [body, message] of cases) {
      const res = await call("POST", "/user/applications/oauth2", basic("bob"), body)
      expect(res.status, JSON.stringify(body)).toBe(422)
      expect((await json(res)).message).toContain(message)
    }
    expect(
      (
        await call("POST", "/user/applications/oauth2", basic("bob"), {
          name: 5,
          redirect_uris: ["https://a.example.org"]
        })
      ).status
    ).toBe(422)
    expect(await stored()).toEqual(before)
  })

  it("needs a signed-in caller; write:user to create, read:user to list", async () => {
    expect((await call("GET", "/user/applications/oauth2")).status).toBe(401)
    expect(
      (
        await call("POST", "/user/applications/oauth2", undefined, {
          name: "n",
          redirect_uris: ["https://a.example.org"]
        })
      ).status
    ).toBe(401)
    const reader = await createToken(hearth, "carol", ["read:user"])
    expect((await call("GET", "/user/applications/oauth2", `token ${reader}`)).status).toBe(200)
    const refused = await call("POST", "/user/applications/oauth2", `token ${reader}`, {
      name: "n",
      redirect_uris: ["https://a.example.org"]
    })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toContain("write:user")
  })
})

describe("reading, changing, deleting", () => {
  it("lists the caller's applications without secrets, with X-Total-Count and pages", async () => {
    const names = ["one", "two", "three"]
    for (const name of names) await create("carol", { name, redirect_uris: [`https://${name}.example.org/cb`] })
    const res = await call("GET", "/user/applications/oauth2", basic("carol"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    const apps = await json(res)
    expectSwagger(apps, "OAuth2Application[]")
    expect(apps.map((a: any) => a.name)).toEqual(names)
    for (const app of apps) expect(app.client_secret).toBe("")
    const page = await json(await call("GET", "/user/applications/oauth2?page=2&limit=2", basic("carol")))
    expect(page.map((a: any) => a.name)).toEqual(["three"])
    // Nobody else's.
    expect((await json(await call("GET", "/user/applications/oauth2", basic("bob")))).length).toBe(0)
  })

  it("gets one (secret hidden) and answers 404 for another user's, unknown and malformed ids", async () => {
    const app = await create("alice", { name: "mine", redirect_uris: ["https://m.example.org/cb"] })
    const res = await call("GET", `/user/applications/oauth2/${app.id}`, basic("alice"))
    expect(res.status).toBe(200)
    const got = await json(res)
    expectSwagger(got, "OAuth2Application")
    expect(got).toEqual({ ...app, client_secret: "" })

    const before = await stored()
    for (const [method, path, body] of [
      ["GET", `/user/applications/oauth2/${app.id}`, undefined],
      ["PATCH", `/user/applications/oauth2/${app.id}`, { name: "stolen" }],
      ["DELETE", `/user/applications/oauth2/${app.id}`, undefined]
    ] as const) {
      const denied = await call(method, path, basic("bob"), body)
      expect(denied.status, `${method} as bob`).toBe(404)
      expect(await denied.text()).toBe("")
    }
    for (const id of ["999999", "abc", "0", "-1", "1e3"]) {
      expect((await call("GET", `/user/applications/oauth2/${id}`, basic("alice"))).status, id).toBe(404)
    }
    expect(await stored()).toEqual(before)
  })

  it("PATCH changes only the members given, keeps the secret, and validates like creation", async () => {
    const app = await create("bob", {
      name: "old",
      redirect_uris: ["https://old.example.org/cb"],
      confidential_client: true
    })
    const [row] = (await stored()).filter((r) => r.id === app.id)

    const renamed = await call("PATCH", `/user/applications/oauth2/${app.id}`, basic("bob"), { name: "new" })
    expect(renamed.status).toBe(200)
    const body = await json(renamed)
    expectSwagger(body, "OAuth2Application")
    expect(body).toEqual({ ...app, name: "new", client_secret: "" })

    const moved = await json(
      await call("PATCH", `/user/applications/oauth2/${app.id}`, basic("bob"), {
        redirect_uris: ["https://new.example.org/cb", "https://new.example.org/cb2"],
        confidential_client: false
      })
    )
    expect(moved).toMatchObject({
      name: "new",
      redirect_uris: ["https://new.example.org/cb", "https://new.example.org/cb2"],
      confidential_client: false,
      client_id: app.client_id,
      created: app.created
    })
    const [after] = (await stored()).filter((r) => r.id === app.id)
    expect(after!.client_secret_hash).toBe(row!.client_secret_hash)

    for (const bad of [{ name: "" }, { redirect_uris: [] }, { redirect_uris: ["relative/path"] }]) {
      const res = await call("PATCH", `/user/applications/oauth2/${app.id}`, basic("bob"), bad)
      expect(res.status, JSON.stringify(bad)).toBe(422)
    }
    expect((await stored()).filter((r) => r.id === app.id)).toEqual([after])
  })

  it("deletes (204), then the application is gone (404)", async () => {
    const app = await create("alice", { name: "doomed", redirect_uris: ["https://d.example.org/cb"] })
    const res = await call("DELETE", `/user/applications/oauth2/${app.id}`, basic("alice"))
    expect(res.status).toBe(204)
    expect(await res.text()).toBe("")
    expect((await call("GET", `/user/applications/oauth2/${app.id}`, basic("alice"))).status).toBe(404)
    expect((await call("DELETE", `/user/applications/oauth2/${app.id}`, basic("alice"))).status).toBe(404)
  })
})

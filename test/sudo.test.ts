// Sudo (CONTRACT §1.1 step 6): an administrator acts as another user for one request, named by
// the `sudo` query parameter or the `Sudo` header; anyone else who asks is refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let adminToken: string
let adminReadToken: string
let aliceToken: string

const call = (
  method: string,
  path: string,
  auth: string | undefined,
  headers: Record<string, string> = {},
  body?: unknown
) =>
  fetch(hearth.api(path), {
    method,
    headers: {
      ...(auth === undefined ? {} : { authorization: auth }),
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...headers
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  adminToken = await createToken(hearth, "root")
  adminReadToken = await createToken(hearth, "root", ["read:user", "read:repository"])
  aliceToken = await createToken(hearth, "alice")
  const created = await request(hearth, "POST", "/user/repos", `token ${aliceToken}`, { name: "secret", private: true })
  expect(created.status).toBe(201)
})
afterAll(() => hearth?.close())

describe("sudo", () => {
  it("switches an administrator with a token to the named user (Sudo header)", async () => {
    const res = await call("GET", "/user", `token ${adminToken}`, { Sudo: "bob" })
    expect(res.status).toBe(200)
    expect((await json(res)).login).toBe("bob")
  })

  it("switches an administrator signed in with a password (sudo query parameter)", async () => {
    const res = await call("GET", "/user?sudo=alice", basic("root"))
    expect(res.status).toBe(200)
    expect((await json(res)).login).toBe("alice")
  })

  it("prefers the query parameter over the header, as Forgejo reads them", async () => {
    const res = await call("GET", "/user?sudo=alice", basic("root"), { Sudo: "bob" })
    expect((await json(res)).login).toBe("alice")
  })

  it("attributes a write to the switched user", async () => {
    const res = await call("POST", "/user/repos", `token ${adminToken}`, { Sudo: "bob" }, { name: "made-by-sudo" })
    expect(res.status).toBe(201)
    expect((await json(res)).owner.login).toBe("bob")
    const mine = await json(await request(hearth, "GET", "/users/bob/repos", `token ${adminToken}`))
    expect(mine.map((r: { name: string }) => r.name)).toContain("made-by-sudo")
    expect((await request(hearth, "GET", "/repos/root/made-by-sudo", `token ${adminToken}`)).status).toBe(404)
  })

  it("checks permissions as the switched user: a private repository it cannot see is a 404", async () => {
    expect((await request(hearth, "GET", "/repos/alice/secret", `token ${adminToken}`)).status).toBe(200)
    const res = await call("GET", "/repos/alice/secret", `token ${adminToken}`, { Sudo: "bob" })
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })

  it("keeps the administrator's token scopes", async () => {
    const res = await call("POST", "/user/repos", `token ${adminReadToken}`, { Sudo: "bob" }, { name: "nope" })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toMatch(/token does not have at least one of required scope/)
    expect((await call("GET", "/user", `token ${adminReadToken}`, { Sudo: "bob" })).status).toBe(200)
  })

  it("answers 404 with an empty body for an unknown user", async () => {
    const res = await call("GET", "/user", `token ${adminToken}`, { Sudo: "nobody-here" })
    expect(res.status).toBe(404)
    expect(await res.text()).toBe("")
  })

  it("refuses a user who is not an administrator with 403", async () => {
    for (const res of [
      await call("GET", "/user", `token ${aliceToken}`, { Sudo: "bob" }),
      await call("GET", "/user?sudo=bob", basic("alice"))
    ]) {
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe("Only administrators allowed to sudo.")
    }
  })

  it("refuses an anonymous caller with 403, as Forgejo does", async () => {
    const res = await call("GET", "/repos/alice/secret", undefined, { Sudo: "alice" })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("Only administrators allowed to sudo.")
  })
})

import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { QUERY_TOKEN_WARNING } from "../src/http/Authentication.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "Alice" })
})
afterAll(() => hearth?.close())

describe("authentication", () => {
  it("accepts `token X` and `Bearer X`, with the scheme word in any case", async () => {
    const token = await createToken(hearth, "alice")
    for (const scheme of ["token", "Token", "bearer", "BEARER"]) {
      const res = await fetch(hearth.api("/user"), { headers: { authorization: `${scheme} ${token}` } })
      expect(res.status, scheme).toBe(200)
      expect((await json(res)).login).toBe("Alice")
    }
  })

  it("accepts Basic with the password and with a token as password", async () => {
    const token = await createToken(hearth, "alice")
    expect((await fetch(hearth.api("/user"), { headers: { authorization: basic("alice") } })).status).toBe(200)
    expect((await fetch(hearth.api("/user"), { headers: { authorization: basic("alice", token) } })).status).toBe(200)
  })

  it("rejects an unknown token with 401 and a message", async () => {
    const res = await fetch(hearth.api("/user"), { headers: { authorization: `token ${"0".repeat(40)}` } })
    expect(res.status).toBe(401)
    const body = await json(res)
    expect(body.message).toContain("access token does not exist")
    expect(body.url).toBe(`${hearth.base}/api/swagger`)
  })

  it("answers 401 'token is required' on signed-in routes for anonymous callers", async () => {
    const res = await fetch(hearth.api("/user"))
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("token is required")
  })

  it("accepts query tokens with the deprecation Warning header", async () => {
    const token = await createToken(hearth, "alice")
    for (const key of ["token", "access_token"]) {
      const res = await fetch(hearth.api(`/user?${key}=${token}`))
      expect(res.status).toBe(200)
      expect(res.headers.get("warning")).toBe(QUERY_TOKEN_WARNING)
    }
  })

  it("enforces token scopes per route", async () => {
    const readOnly = await createToken(hearth, "alice", ["read:repository"])
    const res = await fetch(hearth.api("/user"), { headers: { authorization: `token ${readOnly}` } })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token does not have at least one of required scope(s): [read:user]")
    const userScope = await createToken(hearth, "alice", ["read:user"])
    expect((await fetch(hearth.api("/user"), { headers: { authorization: `token ${userScope}` } })).status).toBe(200)
  })
})

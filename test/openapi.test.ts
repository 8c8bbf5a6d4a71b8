// The served API description (/api/swagger.v1.json, OpenAPI 3.1) and its docs page (/api/swagger).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Hearth, startHearth } from "./support/hearth.ts"

let plain: Hearth
let secure: Hearth
beforeAll(async () => {
  ;[plain, secure] = await Promise.all([
    startHearth(),
    // Behind a TLS-terminating proxy: served over http here, but addressed as https.
    startHearth({ server: { ROOT_URL: "https://forge.example.org/hearth/" } })
  ])
})
afterAll(() => Promise.all([plain?.close(), secure?.close()]))

const document = async (h: Hearth) => {
  const res = await fetch(`${h.base}/api/swagger.v1.json`)
  expect(res.status).toBe(200)
  expect(res.headers.get("content-type")).toMatch(/^application\/json/)
  return (await res.json()) as {
    openapi: string
    info: { title: string; version: string }
    servers: Array<{ url: string }>
    components: { securitySchemes: Record<string, { type: string; in?: string; name?: string; scheme?: string }> }
    security: Array<Record<string, Array<string>>>
    paths: Record<string, Record<string, { operationId?: string }>>
  }
}

describe("GET /api/swagger.v1.json", () => {
  it("is an OpenAPI 3.1 document of version 1.1.1 with every route under /api/v1", async () => {
    const doc = await document(plain)
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.version).toBe("1.1.1")
    const paths = Object.keys(doc.paths)
    expect(paths.length).toBeGreaterThan(0)
    for (const path of paths) expect(path).toMatch(/^\/api\/v1\//)
    for (const path of ["/api/v1/version", "/api/v1/user", "/api/v1/users/{username}/tokens", "/api/v1/user/twofa"]) {
      expect(paths).toContain(path)
    }
    expect(Object.keys(doc.paths["/api/v1/users/{username}/tokens/{token}"]!)).toContain("delete")
  })

  it("declares the accepted credentials: Basic, the token header and the TOTP header", async () => {
    const doc = await document(plain)
    expect(doc.components.securitySchemes.BasicAuth).toMatchObject({ type: "http", scheme: "basic" })
    expect(doc.components.securitySchemes.AuthorizationHeaderToken).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "Authorization"
    })
    expect(doc.components.securitySchemes.TOTPHeader).toMatchObject({
      type: "apiKey",
      in: "header",
      name: "X-FORGEJO-OTP"
    })
    expect(doc.security.flatMap((s) => Object.keys(s))).toContain("AuthorizationHeaderToken")
  })

  it("declares sudo as Forgejo does: the `sudo` query parameter and the `Sudo` header", async () => {
    const doc = await document(plain)
    const description = "Sudo API request as the user provided as the key. Admin privileges are required."
    expect(doc.components.securitySchemes.SudoParam).toEqual({ type: "apiKey", in: "query", name: "sudo", description })
    expect(doc.components.securitySchemes.SudoHeader).toEqual({
      type: "apiKey",
      in: "header",
      name: "Sudo",
      description
    })
    expect(doc.security.flatMap((s) => Object.keys(s))).toEqual(expect.arrayContaining(["SudoParam", "SudoHeader"]))
  })

  it("lists the scheme in use first: http for an http ROOT_URL", async () => {
    const doc = await document(plain)
    expect(doc.servers.map((s) => s.url)).toEqual([plain.base, plain.base.replace(/^http:/, "https:")])
  })

  it("lists the scheme in use first: https for an https ROOT_URL", async () => {
    const doc = await document(secure)
    expect(doc.servers.map((s) => s.url)).toEqual([
      "https://forge.example.org/hearth",
      "http://forge.example.org/hearth"
    ])
  })
})

describe("GET /api/swagger", () => {
  it("serves an HTML page documenting the API", async () => {
    const res = await fetch(`${plain.base}/api/swagger`)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toMatch(/^text\/html/)
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const html = await res.text()
    expect(html).toMatch(/^<!doctype html>/i)
    expect(html).toContain("<title>Hearth API</title>")
    expect(html).toContain("/api/v1/users/{username}/tokens")
  })
})

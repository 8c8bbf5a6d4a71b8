// The served API description (/api/swagger.v1.json, OpenAPI 3.1) and its docs page (/api/swagger).
import { existsSync, readFileSync } from "node:fs"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Hearth, startHearth } from "./support/hearth.ts"
import { swaggerPath } from "./support/swagger.ts"

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
  it("is an OpenAPI 3.1 document of version 1.1.1 with every route under /api/v1 (WebFinger and NodeInfo's discovery aside)", async () => {
    const doc = await document(plain)
    expect(doc.openapi).toBe("3.1.0")
    expect(doc.info.version).toBe("1.1.1")
    const paths = Object.keys(doc.paths)
    expect(paths.length).toBeGreaterThan(0)
    for (const path of paths) expect(path).toMatch(/^\/api\/v1\/|^\/\.well-known\/(webfinger|nodeinfo)$/)
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

/** `{param}` and a trailing `*` alike, so that Hearth's `/contents/*` meets Forgejo's `/contents/{filepath}`. */
const shape = (path: string) => path.replace(/\{[^}]+\}|\*/g, "{}")

const operations = (doc: { paths: Record<string, Record<string, { operationId?: string }>> }) =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, id: op.operationId }))
  )

describe("operation ids", () => {
  it("names every operation, each once, in Forgejo's style", async () => {
    const ops = operations(await document(plain))
    const ids = ops.map((op) => op.id)
    for (const op of ops) expect(op.id, `${op.method} ${op.path}`).toMatch(/^[A-Za-z][A-Za-z0-9]*$/)
    expect(new Set(ids).size).toBe(ids.length)
    expect(ids).toEqual(expect.arrayContaining(["repoListJobs", "adminListJobs", "userGetCurrent", "repoGet"]))
    // Pull requests (issue 19), under Forgejo's paths: `/pulls/{index}.{diffType}` among them.
    const pulls = ops.filter((op) => op.path.startsWith("/api/v1/repos/{owner}/{repo}/pulls")).map((op) => op.id)
    expect(pulls).toEqual(
      expect.arrayContaining([
        "repoListPullRequests",
        "repoCreatePullRequest",
        "repoGetPullRequest",
        "repoEditPullRequest",
        "repoGetPullRequestByBaseHead",
        "repoDownloadPullDiffOrPatch",
        "repoGetPullRequestCommits",
        "repoGetPullRequestFiles",
        "repoPullRequestIsMerged",
        "repoMergePullRequest",
        "repoUpdatePullRequest",
        // Reviews (issue 19 item 5).
        "repoListPullReviews",
        "repoCreatePullReview",
        "repoGetPullReview",
        "repoSubmitPullReview",
        "repoDeletePullReview",
        "repoGetPullReviewComments",
        "repoCreatePullReviewComment",
        "repoGetPullReviewComment",
        "repoDeletePullReviewComment",
        "repoDismissPullReview",
        "repoUnDismissPullReview",
        "repoCreatePullReviewRequests",
        "repoDeletePullReviewRequests"
      ])
    )
  })

  it("gives every operation Forgejo has the operationId of Forgejo's swagger", async (context) => {
    if (!existsSync(swaggerPath)) return context.skip()
    const swagger = JSON.parse(readFileSync(swaggerPath, "utf8")) as {
      paths: Record<string, Record<string, { operationId: string }>>
    }
    const forgejo = new Map<string, string>()
    for (const [path, item] of Object.entries(swagger.paths)) {
      for (const [method, op] of Object.entries(item))
        forgejo.set(`${method} ${shape(`/api/v1${path}`)}`, op.operationId)
    }
    let shared = 0
    for (const op of operations(await document(plain))) {
      const expected = forgejo.get(`${op.method} ${shape(op.path)}`)
      if (expected === undefined) continue
      shared++
      expect(op.id, `${op.method} ${op.path}`).toBe(expected)
    }
    expect(shared).toBeGreaterThan(150)
  })
})

describe("GET /api/swagger (try it)", () => {
  it("shows the served document: its credentials and operation ids", async () => {
    const html = await (await fetch(`${plain.base}/api/swagger`)).text()
    const embedded = /content: (\{.*\})\s*\}\)/s.exec(html)
    expect(embedded).not.toBeNull()
    const shown = JSON.parse(embedded![1]!) as Awaited<ReturnType<typeof document>>
    expect(Object.keys(shown.components.securitySchemes)).toEqual(
      expect.arrayContaining(["BasicAuth", "AuthorizationHeaderToken", "TOTPHeader"])
    )
    expect(shown.security.flatMap((s) => Object.keys(s))).toContain("AuthorizationHeaderToken")
    expect(shown.paths["/api/v1/repos/{owner}/{repo}"]?.get?.operationId).toBe("repoGet")
    expect(shown.servers[0]?.url).toBe(plain.base)
    // Each server shows its own address.
    const other = await (await fetch(`${secure.base}/api/swagger`)).text()
    expect(other).toContain('"servers":[{"url":"https://forge.example.org/hearth"}')
  })
})

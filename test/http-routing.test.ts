// What no single route answers (issue 15 items 7 and 8): a known path asked with a method it does
// not accept is 405 with `Allow` and `{message, url}` — API, git and other routes alike — while an
// unknown path stays an empty 404; and Forgejo's health check at /api/healthz.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let errorUrl: string
beforeAll(async () => {
  hearth = await startHearth()
  errorUrl = `${hearth.base}/api/swagger`
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "demo", auto_init: true })).status).toBe(
    201
  )
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string) =>
  fetch(`${hearth.base}${path}`, { method, headers: auth === undefined ? {} : { authorization: auth } })

const allowOf = (res: Response) => (res.headers.get("allow") ?? "").split(", ").sort()

describe("405 Method Not Allowed", () => {
  it("answers an API path asked with another method with 405, Allow and {message, url}", async () => {
    const res = await call("DELETE", "/api/v1/version")
    expect(res.status).toBe(405)
    expect(res.headers.get("allow")).toBe("GET")
    expect(res.headers.get("content-type")).toBe("application/json")
    expect(await json(res)).toEqual({
      message: "method DELETE is not allowed here; this path accepts GET",
      url: errorUrl
    })
  })

  it("lists every method the path accepts", async () => {
    const res = await call("PUT", "/api/v1/repos/alice/demo", basic("alice"))
    expect(res.status).toBe(405)
    expect(allowOf(res)).toEqual(["DELETE", "GET", "PATCH"])
    // Whoever asks, and whether or not the repository exists: the answer is about the path.
    expect(allowOf(await call("PUT", "/api/v1/repos/nobody/nothing"))).toEqual(["DELETE", "GET", "PATCH"])
  })

  it("answers the git and other routes the same way", async () => {
    const refs = await call("POST", "/alice/demo.git/info/refs")
    expect(refs.status).toBe(405)
    expect(refs.headers.get("allow")).toBe("GET")
    expect((await json(refs)).url).toBe(errorUrl)
    const pack = await call("GET", "/alice/demo.git/git-upload-pack")
    expect(pack.status).toBe(405)
    expect(pack.headers.get("allow")).toBe("POST")
    const health = await call("POST", "/api/healthz")
    expect(health.status).toBe(405)
    expect(health.headers.get("allow")).toBe("GET")
  })

  it("changes nothing", async () => {
    const res = await call("PUT", "/api/v1/repos/alice/demo", basic("alice"))
    expect(res.status).toBe(405)
    expect((await request(hearth, "GET", "/repos/alice/demo", basic("alice"))).status).toBe(200)
  })

  it("keeps unknown paths an empty 404, and the methods a path has working", async () => {
    for (const [method, path] of [
      ["DELETE", "/api/v1/nothing/here"],
      // (A GET of an unknown web page is the web's styled 404 page: test/web.test.ts.)
      ["GET", "/api/nothing"],
      ["POST", "/a/b/c/d"]
    ] as const) {
      const res = await call(method, path)
      expect(res.status, `${method} ${path}`).toBe(404)
      expect(await res.text()).toBe("")
    }
    expect((await call("GET", "/api/v1/version")).status).toBe(200)
    // HEAD is answered wherever GET is.
    expect((await call("HEAD", "/api/v1/version")).status).toBe(200)
  })
})

describe("GET /api/healthz", () => {
  it("reports pass in Forgejo's format, without signing in", async () => {
    const res = await call("GET", "/api/healthz")
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/json")
    expect(res.headers.get("cache-control")).toBe("no-store")
    const body = await json(res)
    expect(body).toEqual({
      status: "pass",
      description: "Hearth",
      checks: {
        "cache:ping": [{ status: "pass", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }],
        "database:ping": [{ status: "pass", time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/) }]
      }
    })
  })
})

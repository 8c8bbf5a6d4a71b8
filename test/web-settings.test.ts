// Issue 17, the web's ground under settings other than the defaults: [service]
// REQUIRE_SIGNIN_VIEW and DISABLE_REGISTRATION, [service.explore] DISABLE_USERS_PAGE,
// [session] SESSION_LIFE_TIME, and an https ROOT_URL (Secure cookies).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { WebClient } from "./support/web.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)

beforeAll(async () => {
  hearth = await startHearth({
    // Served on http://127.0.0.1:port in the test, known to the world by https.
    server: { ROOT_URL: "https://hearth.example/" },
    service: { REQUIRE_SIGNIN_VIEW: "true", DISABLE_REGISTRATION: "true" },
    "service.explore": { DISABLE_USERS_PAGE: "true" },
    session: { SESSION_LIFE_TIME: "3600" }
  })
}, 120_000)
afterAll(() => hearth?.close())

const sessions = (userId: number) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return (yield* sql`SELECT id_hash, expires_at FROM web_sessions WHERE user_id = ${userId}`) as ReadonlyArray<{
        id_hash: string
        expires_at: Date | string
      }>
    })
  )

describe("REQUIRE_SIGNIN_VIEW", () => {
  it("sends visitors to sign in, coming back to the page they asked for; the account pages stay open", async () => {
    for (const [path, to] of [
      ["/", "/user/login"],
      ["/explore/repos?q=x", "/user/login?redirect_to=%2Fexplore%2Frepos%3Fq%3Dx"]
    ] as const) {
      const res = await web().get(path)
      expect(res.status, path).toBe(302)
      expect(res.location, path).toBe(to)
    }
    expect((await web().get("/user/login")).status).toBe(200)
    expect((await web().get("/user/sign_up")).status).toBe(200)
  })
})

describe("REQUIRE_SIGNIN_VIEW on profiles", () => {
  it("a profile asks visitors to sign in; /api stays the API's empty 404; signed in, the profile shows", async () => {
    const user = await createUser(hearth)
    const res = await web().get(`/${user.name}`)
    expect(res.status).toBe(302)
    expect(res.location).toBe(`/user/login?redirect_to=%2F${user.name}`)
    for (const method of ["GET", "POST"]) {
      const api = await fetch(`${hearth.base}/api`, { method })
      expect(api.status, method).toBe(404)
      expect(await api.text(), method).toBe("")
    }
    const client = web()
    await client.signIn(user.name)
    expect((await client.get(`/${user.name}`)).status).toBe(200)
  })
})

describe("DISABLE_REGISTRATION", () => {
  it("the sign-up page says registration is off and the form is refused", async () => {
    const client = web()
    const page = await client.get("/user/sign_up")
    expect(page.text).toContain("Registration is disabled. Please contact your site administrator.")
    expect(page.text).not.toContain('name="password"')
    // The sign-in page does not offer it, nor does the header.
    expect((await client.get("/user/login")).text).not.toContain('href="/user/sign_up"')
    const login = await client.get("/user/login")
    const csrf = /name="_csrf" value="([^"]+)"/.exec(login.text)![1]!
    const refused = await client.post(
      "/user/sign_up",
      { user_name: "gatecrasher", email: "gatecrasher@example.com", password: "password123", retype: "password123" },
      csrf
    )
    expect(refused.status).toBe(403)
    expect((await request(hearth, "GET", "/users/gatecrasher", basic((await createUser(hearth)).name))).status).toBe(
      404
    )
  })
})

describe("sessions and cookies", () => {
  it("cookies are Secure when ROOT_URL is https; a session lasts SESSION_LIFE_TIME and ends past it", async () => {
    const user = await createUser(hearth)
    const client = web()
    const visitor = await client.get("/user/login")
    expect(visitor.headers.getSetCookie().find((c) => c.startsWith("hearth_csrf="))).toMatch(/; Secure/)
    const before = Date.now()
    const res = await client.signIn(user.name)
    expect(res.status).toBe(303)
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("hearth_session="))!
    expect(cookie).toMatch(/; Secure/)
    expect(cookie).toMatch(/; HttpOnly/)
    const [row] = await sessions(user.id)
    const expires = new Date(row!.expires_at).getTime()
    expect(expires).toBeGreaterThanOrEqual(before + 3600_000 - 1000)
    expect(expires).toBeLessThanOrEqual(Date.now() + 3600_000 + 1000)
    expect((await client.get("/")).status).toBe(200)

    // Past its end (moved there in the database rather than waited for), it signs no one in.
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE web_sessions SET expires_at = now() - interval '1 second' WHERE user_id = ${user.id}`
      })
    )
    const after = await client.get("/")
    expect(after.status).toBe(302)
    expect(after.location).toBe("/user/login")
    expect(await sessions(user.id)).toHaveLength(0)
  })
})

describe("DISABLE_USERS_PAGE", () => {
  it("the users page is a 404 even signed in; the other explore pages are there", async () => {
    const user = await createUser(hearth)
    const client = web()
    await client.signIn(user.name)
    const users = await client.get("/explore/users")
    expect(users.status).toBe(404)
    expect(users.text).toContain("Page not found")
    const repos = await client.get("/explore/repos")
    expect(repos.status).toBe(200)
    expect(repos.text).not.toContain('href="/explore/users"')
    expect((await client.get("/explore/organizations")).status).toBe(200)
  })
})

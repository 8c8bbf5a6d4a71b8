import { request as httpRequest } from "node:http"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseAuthorization, QUERY_TOKEN_WARNING } from "../src/auth/Authentication.ts"
import type { AccountChanges } from "../src/users/Service.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
/** Sign-in required, query tokens disabled, throttling after 3 failures. */
let strict: Hearth
beforeAll(async () => {
  ;[hearth, strict] = await Promise.all([
    startHearth(),
    startHearth({
      security: { LOGIN_MAX_FAILURES: "3", LOGIN_THROTTLE_SECONDS: "60", DISABLE_QUERY_AUTH_TOKEN: "true" },
      service: { REQUIRE_SIGNIN_VIEW: "true" }
    })
  ])
  await createUser(hearth, { username: "Alice" })
})
afterAll(() => Promise.all([hearth?.close(), strict?.close()]))

const get = (h: Hearth, path: string, headers: Record<string, string> = {}) => fetch(h.api(path), { headers })

/** Changes an account through the users service (which also drops cached token look-ups). */
const changeAccount = (h: Hearth, name: string, changes: AccountChanges) =>
  h.run(
    Effect.gen(function* () {
      const users = yield* UsersService
      yield* users.update(yield* users.get(name), changes)
    })
  )

/** A request with a raw header value (fetch refuses bytes outside ISO-8859-1 in headers). */
const rawGet = (url: string, authorization: string) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const req = httpRequest(url, { headers: { authorization } }, (res) => {
      let body = ""
      res.on("data", (chunk) => (body += chunk))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }))
    })
    req.on("error", reject)
    req.end()
  })

describe("authentication", () => {
  it("accepts `token X` and `Bearer X`, with the scheme word in any case", async () => {
    const token = await createToken(hearth, "alice")
    for (const scheme of ["token", "Token", "bearer", "BEARER"]) {
      const res = await fetch(hearth.api("/user"), { headers: { authorization: `${scheme} ${token}` } })
      expect(res.status, scheme).toBe(200)
      const body = await json(res)
      expect(body.login).toBe("Alice")
      expectSwagger(body, "User")
    }
  })

  it("accepts Basic with the password and with a token as password", async () => {
    const token = await createToken(hearth, "alice")
    expect((await fetch(hearth.api("/user"), { headers: { authorization: basic("alice") } })).status).toBe(200)
    expect((await fetch(hearth.api("/user"), { headers: { authorization: basic("alice", token) } })).status).toBe(200)
  })

  it("takes the username of Basic as the token when the password is empty or x-oauth-basic", async () => {
    const token = await createToken(hearth, "alice")
    for (const password of ["", "x-oauth-basic"]) {
      const res = await get(hearth, "/user", { authorization: basic(token, password) })
      expect(res.status, JSON.stringify(password)).toBe(200)
      expect((await json(res)).login).toBe("Alice")
    }
    // Without a token there, the same forms are a failed token look-up, not a password sign-in.
    const res = await get(hearth, "/user", { authorization: basic("alice", "x-oauth-basic") })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toContain("access token does not exist")
  })

  it("signs in with the e-mail address as the Basic user name", async () => {
    const res = await get(hearth, "/user", { authorization: basic("alice@example.com") })
    expect(res.status).toBe(200)
    expect((await json(res)).login).toBe("Alice")
  })

  it("answers a wrong password or an unknown user with 401 and Forgejo's message", async () => {
    const wrong = await get(hearth, "/user", { authorization: basic("alice", "not-the-password") })
    expect(wrong.status).toBe(401)
    expect((await json(wrong)).message).toMatch(/^user's password is invalid \[uid: \d+, name: Alice\]$/)
    const unknown = await get(hearth, "/user", { authorization: basic("nobody-here", "password123") })
    expect(unknown.status).toBe(401)
    expect((await json(unknown)).message).toBe("user does not exist [uid: 0, name: nobody-here]")
  })

  it("rejects an unknown token with 401 and a message", async () => {
    const res = await fetch(hearth.api("/user"), { headers: { authorization: `token ${"0".repeat(40)}` } })
    expect(res.status).toBe(401)
    const body = await json(res)
    expect(body.message).toContain("access token does not exist")
    expect(body.url).toBe(`${hearth.base}/api/swagger`)
    // Forgejo's tokens are 40 lower-case hex characters; anything else never matches.
    const upper = (await createToken(hearth, "alice")).toUpperCase()
    expect((await get(hearth, "/user", { authorization: `token ${upper}` })).status).toBe(401)
  })

  it("answers 401 'token is required' on signed-in routes for anonymous callers", async () => {
    const res = await fetch(hearth.api("/user"))
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("token is required")
    expect(res.headers.get("www-authenticate")).toBeNull()
  })
})

describe("Authorization header forms", () => {
  it("needs exactly two fields and folds the scheme word by ASCII rules only", () => {
    const token = "a".repeat(40)
    expect(parseAuthorization(`token ${token}`)).toEqual({ kind: "token", token })
    expect(parseAuthorization(`Token ${token}`)).toEqual({ kind: "token", token })
    expect(parseAuthorization(`bearer ${token}`)).toEqual({ kind: "token", token })
    expect(parseAuthorization(`Bearer ${token}`)).toEqual({ kind: "token", token })
    expect(parseAuthorization(`  token   ${token}  `)).toEqual({ kind: "token", token })
    // The Kelvin sign K (U+212A) lower-cases to an ASCII "k" under Unicode rules: not accepted.
    expect("to\u212Aen".toLowerCase()).toBe("token")
    expect(parseAuthorization(`to\u212Aen ${token}`)).toEqual({ kind: "none" })
    expect(parseAuthorization(`TO\u212AEN ${token}`)).toEqual({ kind: "none" })
    expect(parseAuthorization(token)).toEqual({ kind: "none" })
    expect(parseAuthorization(`token ${token} extra`)).toEqual({ kind: "none" })
    expect(parseAuthorization("token")).toEqual({ kind: "none" })
    expect(parseAuthorization(undefined)).toEqual({ kind: "none" })
    expect(parseAuthorization(`Basic ${Buffer.from("u:p:q").toString("base64")}`)).toEqual({
      kind: "basic",
      username: "u",
      password: "p:q"
    })
    expect(parseAuthorization(`BASIC ${Buffer.from("u").toString("base64")}`)).toEqual({
      kind: "basic",
      username: "u",
      password: ""
    })
  })

  it("treats other header forms as no credentials at all", async () => {
    const token = await createToken(hearth, "alice")
    const forms = [token, `token ${token} extra`, `token`, `Digest ${token}`, `tokens ${token}`]
    for (const authorization of forms) {
      const res = await get(hearth, "/user", { authorization })
      expect(res.status, authorization).toBe(401)
      expect((await json(res)).message, authorization).toBe("token is required")
      // Anonymous, not refused: public routes still answer.
      expect((await get(hearth, "/version", { authorization })).status, authorization).toBe(200)
    }
    // The look-alike sent on the wire (its UTF-8 bytes) is not the word "token" either.
    const kelvin = Buffer.from(`to\u212Aen ${token}`, "utf8").toString("latin1")
    const res = await rawGet(hearth.api("/user"), kelvin)
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body).message).toBe("token is required")
  })
})

// The benchmark's token GET (`GET /users/{name}` with a token) answers from the token cache, the
// account cache and the rendered JSON; each change below must still apply on the very next request.
describe("the cached token user GET", () => {
  /** Three uses, so that the token, the account and its JSON are all cached before the change. */
  const warmed = async (name: string) => {
    await createUser(hearth, { username: name })
    const token = await createToken(hearth, name, ["read:user"])
    for (let i = 0; i < 3; i++) {
      expect((await get(hearth, `/users/${name}`, { authorization: `token ${token}` })).status).toBe(200)
    }
    return token
  }
  const removeAccount = (name: string) =>
    hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        yield* users.remove(yield* users.get(name))
      })
    )

  it("stops at once when the account is made inactive", async () => {
    const token = await warmed("dozer")
    await changeAccount(hearth, "dozer", { is_active: false })
    const res = await get(hearth, "/users/dozer", { authorization: `token ${token}` })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toContain("This account is prohibited from signing in")
  })

  it("stops at once when the account is deleted", async () => {
    const token = await warmed("leaver")
    await removeAccount("leaver")
    const res = await get(hearth, "/users/alice", { authorization: `token ${token}` })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toContain("access token does not exist")
  })

  it("answers the account as changed at once, and hides it once private", async () => {
    const token = await warmed("shifter")
    await changeAccount(hearth, "shifter", { full_name: "Shifted" })
    const mine = await get(hearth, "/users/shifter", { authorization: `token ${token}` })
    expect(((await json(mine)) as { full_name: string }).full_name).toBe("Shifted")
    const other = await createToken(hearth, "alice", ["read:user"])
    expect((await get(hearth, "/users/shifter", { authorization: `token ${other}` })).status).toBe(200)
    await changeAccount(hearth, "shifter", { visibility: "private" })
    expect((await get(hearth, "/users/shifter", { authorization: `token ${other}` })).status).toBe(404)
    expect((await get(hearth, "/users/shifter")).status).toBe(404)
    expect((await get(hearth, "/users/shifter", { authorization: `token ${token}` })).status).toBe(200)
  })

  it("refuses a well-formed token that was never issued, each time (only issued ones are cached)", async () => {
    const unknown = "0123456789abcdef".repeat(3).slice(0, 40)
    for (let i = 0; i < 2; i++) {
      const res = await get(hearth, "/users/alice", { authorization: `token ${unknown}` })
      expect(res.status).toBe(401)
      expect((await json(res)).message).toBe(`access token does not exist [sha: ${unknown}]`)
    }
  })
})

describe("query tokens", () => {
  it("accepts query tokens with the deprecation Warning header", async () => {
    const token = await createToken(hearth, "alice")
    for (const key of ["token", "access_token"]) {
      const res = await fetch(hearth.api(`/user?${key}=${token}`))
      expect(res.status).toBe(200)
      expect(res.headers.get("warning")).toBe(QUERY_TOKEN_WARNING)
    }
    expect((await get(hearth, "/user", { authorization: `token ${token}` })).headers.get("warning")).toBeNull()
  })

  it("checks the query token before the Authorization header", async () => {
    const token = await createToken(hearth, "alice")
    const res = await get(hearth, `/user?token=${"f".repeat(40)}`, { authorization: `token ${token}` })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toContain("access token does not exist")
    expect(res.headers.get("warning")).toBe(QUERY_TOKEN_WARNING)
  })

  it("rejects query tokens with 401 when DISABLE_QUERY_AUTH_TOKEN is set, still with the Warning", async () => {
    await createUser(strict, { username: "querier" })
    const token = await createToken(strict, "querier")
    for (const key of ["token", "access_token"]) {
      const res = await get(strict, `/user?${key}=${token}`)
      expect(res.status).toBe(401)
      expect((await json(res)).message).toMatch(/query string are disabled.*DISABLE_QUERY_AUTH_TOKEN/)
      expect(res.headers.get("warning")).toBe(QUERY_TOKEN_WARNING)
    }
    expect((await get(strict, "/user", { authorization: `token ${token}` })).status).toBe(200)
  })
})

describe("account state", () => {
  it("refuses an account that must change its password with 403 and the address to do it", async () => {
    await createUser(hearth, { username: "changer" })
    const token = await createToken(hearth, "changer")
    await changeAccount(hearth, "changer", { must_change_password: true })
    const message = `You must change your password. Change it at: ${hearth.base}/user/change_password`
    for (const authorization of [basic("changer"), `token ${token}`]) {
      const res = await get(hearth, "/user", { authorization })
      expect(res.status).toBe(403)
      expect(await json(res)).toEqual({ message, url: `${hearth.base}/api/swagger` })
    }
    // Even on routes that need no sign-in: the caller is signed in and must change it first.
    expect((await get(hearth, "/version", { authorization: `token ${token}` })).status).toBe(403)
  })

  it("refuses a prohibited account: 401 with the password, 403 with a token", async () => {
    await createUser(hearth, { username: "banned" })
    const token = await createToken(hearth, "banned")
    expect((await get(hearth, "/user", { authorization: `token ${token}` })).status).toBe(200)
    await changeAccount(hearth, "banned", { prohibit_login: true })
    const byPassword = await get(hearth, "/user", { authorization: basic("banned") })
    expect(byPassword.status).toBe(401)
    expect((await json(byPassword)).message).toBe("user is not allowed login")
    // The token was cached by the request above; the account change must still apply at once.
    const byToken = await get(hearth, "/user", { authorization: `token ${token}` })
    expect(byToken.status).toBe(403)
    expect((await json(byToken)).message).toBe(
      "This account is prohibited from signing in, please contact your site administrator."
    )
  })

  it("refuses an inactive account with 403", async () => {
    await createUser(hearth, { username: "sleeper" })
    const token = await createToken(hearth, "sleeper")
    await changeAccount(hearth, "sleeper", { is_active: false })
    const res = await get(hearth, "/user", { authorization: `token ${token}` })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toContain("This account is prohibited from signing in")
  })

  it("answers anonymous callers 403 when REQUIRE_SIGNIN_VIEW is set, and signed-in ones as usual", async () => {
    await createUser(strict, { username: "viewer" })
    const res = await get(strict, "/version")
    expect(res.status).toBe(403)
    expect(await json(res)).toEqual({
      message: "Only signed in user is allowed to call APIs.",
      url: `${strict.base}/api/swagger`
    })
    expect((await get(strict, "/users/viewer")).status).toBe(403)
    const token = await createToken(strict, "viewer")
    const version = await get(strict, "/version", { authorization: `token ${token}` })
    expect(version.status).toBe(200)
    expectSwagger(await json(version), "ServerVersion")
    expect((await get(strict, "/version", { authorization: basic("viewer") })).status).toBe(200)
    // Without the setting, anonymous callers may read public routes.
    expect((await get(hearth, "/version")).status).toBe(200)
  })
})

describe("password throttling", () => {
  it("answers 429 with Retry-After once an account has too many failed passwords", async () => {
    await createUser(strict, { username: "target" })
    await createUser(strict, { username: "bystander" })
    const token = await createToken(strict, "target")
    for (let i = 0; i < 3; i++) {
      expect((await get(strict, "/user", { authorization: basic("target", `wrong-${i}`) })).status).toBe(401)
    }
    // Now even the right password waits, however the account is named.
    for (const name of ["target", "TARGET", "target@example.com"]) {
      const res = await get(strict, "/user", { authorization: basic(name) })
      expect(res.status, name).toBe(429)
      const retryAfter = Number(res.headers.get("retry-after"))
      expect(retryAfter).toBeGreaterThan(0)
      expect(retryAfter).toBeLessThanOrEqual(60)
      const body = await json(res)
      expect(body.message).toMatch(/too many failed sign-in attempts for target: try again in \d+ seconds/)
      expect(body.url).toBe(`${strict.base}/api/swagger`)
    }
    // Only that account, and only password sign-ins.
    expect((await get(strict, "/user", { authorization: basic("bystander") })).status).toBe(200)
    expect((await get(strict, "/user", { authorization: `token ${token}` })).status).toBe(200)
  })

  it("throttles concurrent guesses too: no more than the limit get a password check", async () => {
    await createUser(strict, { username: "swarmed" })
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => get(strict, "/user", { authorization: basic("swarmed", `guess-${i}`) }))
    )
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([401, 401, 401, 429, 429, 429, 429, 429, 429, 429])
  })

  it("forgets earlier failures after a successful sign-in", async () => {
    await createUser(strict, { username: "forgetful" })
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 2; i++) {
        expect((await get(strict, "/user", { authorization: basic("forgetful", "nope-nope") })).status).toBe(401)
      }
      expect((await get(strict, "/user", { authorization: basic("forgetful") })).status).toBe(200)
    }
  })
})

describe("token scopes", () => {
  const withToken = async (scopes: ReadonlyArray<string>, path: string, method = "GET") => {
    const token = await createToken(hearth, "alice", scopes)
    return fetch(hearth.api(path), { method, headers: { authorization: `token ${token}` } })
  }

  it("enforces token scopes per route", async () => {
    const readOnly = await createToken(hearth, "alice", ["read:repository"])
    const res = await fetch(hearth.api("/user"), { headers: { authorization: `token ${readOnly}` } })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token does not have at least one of required scope(s): [read:user]")
    const userScope = await createToken(hearth, "alice", ["read:user"])
    expect((await fetch(hearth.api("/user"), { headers: { authorization: `token ${userScope}` } })).status).toBe(200)
  })

  it("lets write imply read, and `all` grant everything", async () => {
    expect((await withToken(["write:user"], "/user")).status).toBe(200)
    expect((await withToken(["all"], "/user")).status).toBe(200)
    expect((await withToken(["all"], "/users/alice/tokens")).status).toBe(200)
  })

  it("needs the write level for POST/PUT/PATCH/DELETE", async () => {
    // A read scope stops a DELETE at the scope check…
    const read = await withToken(["read:user"], "/users/alice/tokens/nothing", "DELETE")
    expect(read.status).toBe(403)
    expect((await json(read)).message).toBe("token does not have at least one of required scope(s): [write:user]")
    // …a write scope passes it (and then meets the route's own rule: tokens need the password).
    const write = await withToken(["write:user"], "/users/alice/tokens/nothing", "DELETE")
    expect(write.status).toBe(401)
    expect((await json(write)).message).toBe("auth method not allowed")
  })

  it("does not restrict password sign-ins by scope", async () => {
    expect((await get(hearth, "/users/alice/tokens", { authorization: basic("alice") })).status).toBe(200)
  })

  it("limits public-only tokens to public users with 403", async () => {
    await createUser(hearth, { username: "hidden", visibility: "limited" })
    await createUser(hearth, { username: "open" })
    const publicOnly = await createToken(hearth, "alice", ["public-only", "read:user"])
    const limited = await get(hearth, "/users/hidden", { authorization: `token ${publicOnly}` })
    expect(limited.status).toBe(403)
    expect((await json(limited)).message).toBe("token scope is limited to public users")
    expect((await get(hearth, "/users/open", { authorization: `token ${publicOnly}` })).status).toBe(200)
    // The same user is visible with an unrestricted token.
    const full = await createToken(hearth, "alice", ["read:user"])
    expect((await get(hearth, "/users/hidden", { authorization: `token ${full}` })).status).toBe(200)
  })
})

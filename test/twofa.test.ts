// TOTP second factor: Hearth's enrolment routes (/user/twofa) and the passcode inside Basic
// authentication (Forgejo's services/auth/method basic.go; TestAPITwoFactor).
//
// Codes are made with `otpauth` for a chosen 30-second step. The server accepts the previous,
// current and next step, and each step once only, in increasing order. So each account is
// verified with the previous step's code, leaving the current and the next step for two
// sign-ins; tests that need more use another account.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Secret, TOTP, URI } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TWO_FACTOR_NEEDS_TOKEN } from "../src/auth/Authenticator.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth({ security: { LOGIN_MAX_FAILURES: "5" } })
})
afterAll(() => hearth?.close())

let counter = 0
const newUser = async () => {
  const username = `otp${++counter}`
  await createUser(hearth, { username })
  return username
}

/**
 * The code of the step `steps` away from now (−1 previous, 0 current, +1 next). A previous-step
 * code made in the last seconds of a step may arrive when it is two steps old, so it waits for
 * the next step first.
 */
const code = async (secret: string, steps = 0) => {
  const left = 30_000 - (Date.now() % 30_000)
  if (steps < 0 && left < 5_000) await new Promise((resolve) => setTimeout(resolve, left + 100))
  return new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp: Date.now() + steps * 30_000 })
}

const call = (method: string, path: string, headers: Record<string, string>, body?: unknown) =>
  fetch(hearth.api(path), {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const enroll = async (username: string) => {
  const res = await call("POST", "/user/twofa", { authorization: basic(username) })
  expect(res.status).toBe(201)
  return (await json(res)) as { secret: string; uri: string }
}
const verify = (username: string, passcode: string) =>
  call("POST", "/user/twofa/verify", { authorization: basic(username) }, { passcode })

/** An account with TOTP enabled (verified with the previous step's code). */
const enabledUser = async () => {
  const username = await newUser()
  const { secret } = await enroll(username)
  expect((await verify(username, await code(secret, -1))).status).toBe(204)
  return { username, secret }
}

const me = (headers: Record<string, string>) => call("GET", "/user", headers)

const twoFactorRow = (username: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT t.secret, t.enabled FROM two_factor t JOIN users u ON u.id = t.user_id
      WHERE u.lower_name = ${username.toLowerCase()}`
      return rows[0] as { secret: string; enabled: boolean } | undefined
    })
  )

describe("enrolment (POST /user/twofa, POST /user/twofa/verify)", () => {
  it("returns a base32 secret and its otpauth URI, and requires nothing until verified", async () => {
    const username = await newUser()
    const { secret, uri } = await enroll(username)
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    const parsed = URI.parse(uri)
    expect(parsed).toBeInstanceOf(TOTP)
    expect(parsed.secret.base32).toBe(secret)
    expect(parsed.label).toBe(username)
    expect(parsed.issuer).toBe(hearth.settings.server.DOMAIN)
    // Pending: the password alone still signs in.
    expect((await me({ authorization: basic(username) })).status).toBe(200)
    // Stored encrypted, not as the secret itself.
    const row = await twoFactorRow(username)
    expect(row).toMatchObject({ enabled: false })
    expect(row!.secret).not.toContain(secret)
  })

  it("refuses a wrong code with 422 and enables nothing; the right code enables it", async () => {
    const username = await newUser()
    const { secret } = await enroll(username)
    for (const wrong of [await code(secret, 5), "abcdef", "12345", ""]) {
      const res = await verify(username, wrong)
      expect(res.status, wrong).toBe(422)
      expect((await json(res)).message).toBe("invalid provided OTP")
    }
    expect((await twoFactorRow(username))!.enabled).toBe(false)
    expect((await me({ authorization: basic(username) })).status).toBe(200)

    expect((await verify(username, await code(secret, -1))).status).toBe(204)
    expect((await twoFactorRow(username))!.enabled).toBe(true)
    const res = await me({ authorization: basic(username) })
    expect(res.status).toBe(401)
    expect((await json(res)).message).toBe("invalid provided OTP")
  })

  it("restarting a pending enrolment replaces its secret", async () => {
    const username = await newUser()
    const first = await enroll(username)
    const second = await enroll(username)
    expect(second.secret).not.toBe(first.secret)
    expect((await verify(username, await code(first.secret, -1))).status).toBe(422)
    expect((await verify(username, await code(second.secret, -1))).status).toBe(204)
  })

  it("refuses to enrol or verify again while enabled (422), keeping the factor", async () => {
    const { secret, username } = await enabledUser()
    const otp = await code(secret, 0)
    const again = await call("POST", "/user/twofa", { authorization: basic(username), "x-forgejo-otp": otp })
    expect(again.status).toBe(422)
    expect((await json(again)).message).toMatch(/already enabled/)
    const verifyAgain = await call(
      "POST",
      "/user/twofa/verify",
      { authorization: basic(username), "x-forgejo-otp": await code(secret, 1) },
      { passcode: await code(secret, 1) }
    )
    expect(verifyAgain.status).toBe(422)
    expect((await twoFactorRow(username))!.enabled).toBe(true)
  })

  it("answers 422 to a verification without enrolment or without a passcode", async () => {
    const username = await newUser()
    const none = await verify(username, "123456")
    expect(none.status).toBe(422)
    expect((await json(none)).message).toBe("no two-factor enrolment in progress: start one with POST /user/twofa")
    await enroll(username)
    const missing = await call("POST", "/user/twofa/verify", { authorization: basic(username) }, {})
    expect(missing.status).toBe(422)
    expect((await json(missing)).message).toBe("[passcode]: Missing key")
  })

  it("needs Basic password authentication on every route; a token gets 401", async () => {
    const username = await newUser()
    const token = await createToken(hearth, username, ["all"])
    for (const [method, path, body] of [
      ["POST", "/user/twofa", undefined],
      ["POST", "/user/twofa/verify", { passcode: "123456" }],
      ["DELETE", "/user/twofa", undefined]
    ] as const) {
      const res = await call(method, path, { authorization: `token ${token}` }, body)
      expect(res.status, `${method} ${path}`).toBe(401)
      expect((await json(res)).message).toBe("auth method not allowed")
      const anonymous = await call(method, path, {}, body)
      expect(anonymous.status).toBe(401)
      expect((await json(anonymous)).message).toBe("token is required")
    }
    expect(await twoFactorRow(username)).toBeUndefined()
  })
})

describe("the passcode inside Basic authentication", () => {
  it("accepts a valid code in X-Gitea-OTP or X-Forgejo-OTP, and refuses a missing or wrong one", async () => {
    const { secret, username } = await enabledUser()
    for (const headers of [{}, { "x-forgejo-otp": await code(secret, 5) }, { "x-gitea-otp": "000000x" }]) {
      const res = await me({ authorization: basic(username), ...headers })
      expect(res.status, JSON.stringify(headers)).toBe(401)
      expect((await json(res)).message).toBe("invalid provided OTP")
    }
    expect((await me({ authorization: basic(username), "x-gitea-otp": await code(secret, 0) })).status).toBe(200)
    expect((await me({ authorization: basic(username), "x-forgejo-otp": await code(secret, 1) })).status).toBe(200)
  })

  it("prefers X-Forgejo-OTP when both headers are sent", async () => {
    const { secret, username } = await enabledUser()
    const gitea = await me({
      authorization: basic(username),
      "x-forgejo-otp": await code(secret, 5),
      "x-gitea-otp": await code(secret, 0)
    })
    expect(gitea.status).toBe(401)
    const forgejo = await me({
      authorization: basic(username),
      "x-forgejo-otp": await code(secret, 0),
      "x-gitea-otp": await code(secret, 5)
    })
    expect(forgejo.status).toBe(200)
  })

  it("accepts each code once, and no older code after a newer one", async () => {
    const { secret, username } = await enabledUser()
    const next = await code(secret, 1)
    expect((await me({ authorization: basic(username), "x-forgejo-otp": next })).status).toBe(200)
    const replay = await me({ authorization: basic(username), "x-forgejo-otp": next })
    expect(replay.status).toBe(401)
    expect((await json(replay)).message).toBe("invalid provided OTP")
    // The current step's code is still inside the validity window, but older than the one used.
    expect((await me({ authorization: basic(username), "x-forgejo-otp": await code(secret, 0) })).status).toBe(401)
    // The code that enabled the factor cannot sign in either.
    expect((await me({ authorization: basic(username), "x-forgejo-otp": await code(secret, -1) })).status).toBe(401)
  })

  it("never asks for a passcode with token authentication", async () => {
    const username = await newUser()
    const before = await createToken(hearth, username, ["all"])
    const { secret } = await enroll(username)
    expect((await verify(username, await code(secret, -1))).status).toBe(204)
    for (const authorization of [`token ${before}`, basic(username, before), basic(before, "x-oauth-basic")]) {
      expect((await me({ authorization })).status, authorization).toBe(200)
    }
    // Creating a token now takes the password and a passcode.
    const create = (headers: Record<string, string>) =>
      call(
        "POST",
        `/users/${username}/tokens`,
        { authorization: basic(username), ...headers },
        {
          name: `after-${Date.now()}`,
          scopes: ["read:user"]
        }
      )
    expect((await create({})).status).toBe(401)
    const created = await create({ "x-forgejo-otp": await code(secret, 0) })
    expect(created.status).toBe(201)
    expect((await me({ authorization: `token ${(await json(created)).sha1}` })).status).toBe(200)
  })

  it("counts wrong passcodes as failed sign-ins (throttled like wrong passwords)", async () => {
    const { secret, username } = await enabledUser()
    for (let i = 0; i < 5; i++) {
      const wrong = await code(secret, 10 + i)
      expect((await me({ authorization: basic(username), "x-forgejo-otp": wrong })).status).toBe(401)
    }
    const res = await me({ authorization: basic(username), "x-forgejo-otp": await code(secret, 0) })
    expect(res.status).toBe(429)
    expect(Number(res.headers.get("retry-after"))).toBeGreaterThan(0)
  })
})

describe("git over HTTP with two-factor sign-in", () => {
  it("refuses the account's password, even with a passcode, and says to use a token; a token works", async () => {
    const username = await newUser()
    const token = await createToken(hearth, username, ["all"])
    const created = await call(
      "POST",
      "/user/repos",
      { authorization: `token ${token}` },
      { name: "twofa-git", private: true, auto_init: true }
    )
    expect(created.status).toBe(201)
    const refs = (authorization: string, headers: Record<string, string> = {}) =>
      fetch(`${hearth.base}/${username}/twofa-git.git/info/refs?service=git-upload-pack`, {
        headers: { authorization, ...headers }
      })
    expect((await refs(basic(username))).status).toBe(200)
    const { secret } = await enroll(username)
    expect((await verify(username, await code(secret, -1))).status).toBe(204)
    for (const headers of [{}, { "x-forgejo-otp": await code(secret, 0) }]) {
      const refused = await refs(basic(username), headers)
      expect(refused.status).toBe(401)
      expect(await refused.text()).toContain(TWO_FACTOR_NEEDS_TOKEN)
    }
    // A wrong password learns nothing about the second factor.
    const wrong = await refs(basic(username, "not-the-password"))
    expect(wrong.status).toBe(401)
    expect(await wrong.text()).not.toContain("two-factor")
    expect((await refs(basic(username, token))).status).toBe(200)
  })
})

describe("DELETE /user/twofa", () => {
  it("needs the current passcode in X-Forgejo-OTP, then removes the factor", async () => {
    const { secret, username } = await enabledUser()
    const without = await call("DELETE", "/user/twofa", { authorization: basic(username) })
    expect(without.status).toBe(401)
    expect((await json(without)).message).toBe("invalid provided OTP")
    expect((await twoFactorRow(username))!.enabled).toBe(true)

    const otp = await code(secret, 0)
    const res = await call("DELETE", "/user/twofa", { authorization: basic(username), "x-forgejo-otp": otp })
    expect(res.status).toBe(204)
    expect(await twoFactorRow(username)).toBeUndefined()
    expect((await me({ authorization: basic(username) })).status).toBe(200)
    // Nothing left to remove.
    const again = await call("DELETE", "/user/twofa", { authorization: basic(username) })
    expect(again.status).toBe(404)
    expect(await again.text()).toBe("")
  })

  it("cancels a pending enrolment without a passcode", async () => {
    const username = await newUser()
    const { secret } = await enroll(username)
    expect((await call("DELETE", "/user/twofa", { authorization: basic(username) })).status).toBe(204)
    expect((await verify(username, await code(secret, -1))).status).toBe(422)
    expect((await me({ authorization: basic(username) })).status).toBe(200)
  })
})

// Issue 17 item 1 (account settings) over plain HTTP: the profile settings (the rules of
// src/users/Profile.ts, refusals next to their field with what was typed kept, the XSS corpus
// shown as text), the e-mail addresses (add, delete, make primary, activate), and two-factor
// enrolment with a QR code (an SVG data: URL holding the otpauth URI), the secret shown again
// after a wrong passcode, and turning it off with a passcode. Every page is signed-in only and
// every form needs the CSRF token.
import { createHash, randomBytes } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Secret, TOTP } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "root", isAdmin: true })
}, 120_000)
afterAll(() => hearth?.close())

const signedIn = async (options: Parameters<typeof createUser>[1] = {}) => {
  const user = await createUser(hearth, options)
  const client = web()
  expect((await client.signIn(user.name)).status).toBe(303)
  return { user, client }
}

const apiUser = async (name: string) => json(await request(hearth, "GET", "/user", basic(name)))

describe("the settings pages", () => {
  it("are for signed-in accounts only, and every form needs the CSRF token", async () => {
    for (const path of [
      "/user/settings",
      "/user/settings/account",
      "/user/settings/keys",
      "/user/settings/applications",
      "/user/settings/security"
    ]) {
      const res = await web().get(path)
      expect(res.status, path).toBe(302)
      expect(res.location, path).toBe(`/user/login?redirect_to=${encodeURIComponent(path)}`)
    }
    const { user, client } = await signedIn()
    for (const path of [
      "/user/settings",
      "/user/settings/account",
      "/user/settings/keys",
      "/user/settings/applications",
      "/user/settings/security"
    ]) {
      const page = await client.get(path)
      expect(page.status, path).toBe(200)
      expect(page.text, path).toContain('aria-current="page"')
    }
    for (const [path, fields] of [
      ["/user/settings", { full_name: "Forged", visibility: "public" }],
      ["/user/settings/account/email", { email: "forged@example.com" }],
      ["/user/settings/keys", { type: "ssh", ssh_title: "x", ssh_content: "y" }],
      ["/user/settings/applications", { name: "forged", scope: "write:user" }],
      ["/user/settings/applications/oauth2", { application_name: "forged", redirect_uris: "https://e.example/cb" }]
    ] as const) {
      const res = await client.post(path, fields, undefined)
      expect(res.status, path).toBe(400)
    }
    expect((await apiUser(user.name)).full_name).toBe("")
    expect(await json(await request(hearth, "GET", "/user/emails", basic(user.name)))).toHaveLength(1)
  })
})

describe("profile settings", () => {
  it("saves the profile through the users service; the API and the profile page show it", async () => {
    const { user, client } = await signedIn()
    const form = await client.get("/user/settings")
    expect(form.text).toContain('data-testid="profile-form"')
    const saved = await client.post(
      "/user/settings",
      {
        full_name: "Grace Hopper",
        description: "Compilers, mostly.",
        website: "https://grace.example/",
        location: "Arlington",
        pronouns: "she/her",
        visibility: "limited",
        keep_email_private: "on"
      },
      csrfOf(form.text)
    )
    expect(saved.status).toBe(303)
    expect(saved.location).toBe("/user/settings?done=profile")
    const shown = await client.get(saved.location!)
    expect(shown.text).toContain("Your profile has been updated.")
    expect(shown.text).toContain('value="Grace Hopper"')
    expect(shown.text).toMatch(/<option value="limited" selected>/)
    expect(shown.text).toMatch(/name="keep_email_private" value="on" checked/)
    const api = await apiUser(user.name)
    expect(api).toMatchObject({
      full_name: "Grace Hopper",
      description: "Compilers, mostly.",
      website: "https://grace.example/",
      location: "Arlington",
      pronouns: "she/her",
      visibility: "limited"
    })
    // Limited: signed-out visitors no longer see the profile; the hidden e-mail is hidden.
    expect((await web().get(`/${user.name}`)).status).toBe(404)
    const other = await signedIn()
    const profile = await other.client.get(`/${user.name}`)
    expect(profile.text).toContain("Compilers, mostly.")
    expect(profile.text).not.toContain(user.email)
  })

  it("refuses bad fields next to the field, keeps what was typed, changes nothing", async () => {
    const { user, client } = await signedIn()
    const typed = {
      full_name: "x".repeat(101),
      description: "kept description",
      website: "javascript:alert(1)",
      location: "l".repeat(51),
      pronouns: "they/them",
      visibility: "secret"
    }
    const refused = await client.submit("/user/settings", typed)
    expect(refused.status).toBe(422)
    expect(refused.text).toMatch(/data-testid="error-full_name">The full name must be at most 100 characters\./)
    expect(refused.text).toMatch(/data-testid="error-website">The website must be an http:\/\/ or https:\/\/ address\./)
    expect(refused.text).toMatch(/data-testid="error-location">The location must be at most 50 characters\./)
    expect(refused.text).toMatch(/data-testid="error-visibility">/)
    expect(refused.text).not.toContain('data-testid="error-pronouns"')
    expect(refused.text).toContain(">kept description</textarea>")
    expect(refused.text).toContain('value="they/them"')
    expect(refused.text).toContain('value="javascript:alert(1)"')
    expect(refused.text).toMatch(/id="field-website"[^>]*aria-invalid="true"/)
    const api = await apiUser(user.name)
    expect(api.description).toBe("")
    expect(api.pronouns).toBe("")
    // Within the bounds (counted in characters, not bytes) it is accepted.
    const ok = await client.submit("/user/settings", { full_name: "é".repeat(100), visibility: "public" })
    expect(ok.status).toBe(303)
  })

  it("shows hostile values from the corpus as text in the form", async () => {
    const { client } = await signedIn()
    for (let i = 0; i < corpus.length; i += 8) {
      const saved = await client.submit("/user/settings", {
        full_name: corpus[i]!.slice(0, 100),
        description: corpus
          .slice(i, i + 4)
          .join("\n")
          .slice(0, 255),
        location: (corpus[i + 4] ?? "").slice(0, 50),
        pronouns: (corpus[i + 5] ?? "").slice(0, 50),
        visibility: "public"
      })
      expect(saved.status, corpus[i]).toBe(303)
      const page = await client.get("/user/settings")
      expect(executable(page.text), corpus[i]).toEqual([])
      // A textarea's content cannot be closed early by what it holds.
      expect(page.text.match(/<\/textarea>/g)).toHaveLength(1)
    }
  })
})

describe("e-mail addresses", () => {
  it("adds an address (activation pending), activates it, makes it primary, deletes the old one", async () => {
    const { user, client } = await signedIn()
    const page = await client.get("/user/settings/account")
    expect(page.text).toContain(user.email)
    expect(page.text).toContain('href="/user/change_password"')
    const added = await client.post("/user/settings/account/email", { email: "second@example.com" }, csrfOf(page.text))
    expect(added.status).toBe(303)
    const list = await client.get(added.location!)
    expect(list.text).toContain("It needs activation")
    expect(list.text).toContain("second@example.com")
    expect(list.text).toContain("Not activated")
    // Not activated: it may not become the primary one.
    const early = await client.post(
      "/user/settings/account/email",
      { _method: "PRIMARY", email: "second@example.com" },
      csrfOf(list.text)
    )
    expect(early.status).toBe(422)
    expect(early.text).toContain("is not activated yet")
    expect((await apiUser(user.name)).email).toBe(user.email)

    // A wrong token is refused next to its field; the logged one activates the address.
    const wrong = await client.post("/user/settings/account/email/activate", { token: "nope" }, csrfOf(list.text))
    expect(wrong.status).toBe(422)
    expect(wrong.text).toMatch(/data-testid="error-token">The activation token is invalid/)
    // The token Hearth logs for the administrator; read it back the way the API test does.
    const token = await activationToken(user.name, "second@example.com")
    const activated = await client.post("/user/settings/account/email/activate", { token }, csrfOf(list.text))
    expect(activated.status).toBe(303)

    const primary = await client.post(
      "/user/settings/account/email",
      { _method: "PRIMARY", email: "second@example.com" },
      csrfOf(list.text)
    )
    expect(primary.status).toBe(303)
    expect((await apiUser(user.name)).email).toBe("second@example.com")
    const emails = (await json(await request(hearth, "GET", "/user/emails", basic(user.name)))) as Array<{
      email: string
      primary: boolean
      verified: boolean
    }>
    expect(emails).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ email: "second@example.com", primary: true, verified: true }),
        expect.objectContaining({ email: user.email, primary: false, verified: true })
      ])
    )
    // The primary address cannot be deleted; the old one can.
    const keep = await client.post(
      "/user/settings/account/email/delete",
      { email: "second@example.com" },
      csrfOf(list.text)
    )
    expect(keep.status).toBe(422)
    expect(keep.text).toContain("Primary e-mail address cannot be deleted")
    const deleted = await client.post("/user/settings/account/email/delete", { email: user.email }, csrfOf(list.text))
    expect(deleted.status).toBe(303)
    expect(await json(await request(hearth, "GET", "/user/emails", basic(user.name)))).toHaveLength(1)
    // Someone else's address is nobody's business: a 404.
    const other = await createUser(hearth)
    expect(
      (await client.post("/user/settings/account/email/delete", { email: other.email }, csrfOf(list.text))).status
    ).toBe(404)
  })

  it("refuses an address in use or invalid, next to the field, keeping it", async () => {
    const { client } = await signedIn()
    const taken = await client.submit(
      "/user/settings/account",
      { email: "root@example.com" },
      "/user/settings/account/email"
    )
    expect(taken.status).toBe(422)
    expect(taken.text).toMatch(/data-testid="error-email">Email address has been used: root@example.com/)
    expect(taken.text).toContain('value="root@example.com"')
    const invalid = await client.submit(
      "/user/settings/account",
      { email: "not an address" },
      "/user/settings/account/email"
    )
    expect(invalid.text).toMatch(/data-testid="error-email">Email address has invalid format/)
  })
})

/**
 * An activation token for a pending address. Hearth sends no mail and writes the token only to the
 * log, so the test replaces the stored hash with one of a token of its own.
 */
const activationToken = async (name: string, email: string): Promise<string> => {
  const token = randomBytes(20).toString("hex")
  await hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      yield* sql`UPDATE email_addresses SET activation_hash = ${createHash("sha256").update(token).digest("hex")}
        WHERE lower_email = ${email.toLowerCase()} AND user_id = (SELECT id FROM users WHERE lower_name = ${name.toLowerCase()})`
    })
  )
  return token
}

describe("two-factor authentication", () => {
  const secretOf = (page: string) => /data-testid="twofa-secret">([A-Z2-7 ]+)</.exec(page)![1]!.replace(/ /g, "")
  const qrOf = (page: string) => /src="(data:image\/svg\+xml;base64,[^"]+)"[^>]*data-testid="twofa-qr"/.exec(page)![1]!

  it("enrols with the QR code's secret, keeps the same secret after a wrong passcode, then asks for it at sign-in", async () => {
    const { user, client } = await signedIn()
    const security = await client.get("/user/settings/security")
    expect(security.text).toMatch(/data-testid="twofa-status"><span class="Label">Off/)
    const enroll = await client.get("/user/settings/security/two_factor/enroll")
    expect(enroll.status).toBe(200)
    const secret = secretOf(enroll.text)
    expect(secret).toMatch(/^[A-Z2-7]{32}$/)
    // The QR code: an SVG made on the server, nothing else in it.
    const svg = Buffer.from(qrOf(enroll.text).split(",")[1]!, "base64").toString("utf8")
    expect(svg).toMatch(
      /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"[^>]*><rect [^>]*\/><path fill="#000" d="[Mhvz0-9 -]+"\/><\/svg>$/
    )
    // Opening the page again shows the same enrolment.
    expect(secretOf((await client.get("/user/settings/security/two_factor/enroll")).text)).toBe(secret)

    const wrong = await client.post(
      "/user/settings/security/two_factor/enroll",
      { passcode: "000000" },
      csrfOf(enroll.text)
    )
    expect(wrong.status).toBe(422)
    expect(wrong.text).toMatch(/data-testid="error-passcode">This passcode is not the one the app shows now/)
    expect(secretOf(wrong.text)).toBe(secret)
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    const on = await client.post(
      "/user/settings/security/two_factor/enroll",
      { passcode: totp.generate({ timestamp: Date.now() - 30_000 }) },
      csrfOf(enroll.text)
    )
    expect(on.status).toBe(303)
    expect(on.location).toBe("/user/settings/security?done=twofa-enabled")
    const after = await client.get(on.location!)
    expect(after.text).toContain('data-testid="disable-twofa-form"')
    // Enabled: the enrolment page sends back; a new sign-in needs the passcode.
    expect((await client.get("/user/settings/security/two_factor/enroll")).status).toBe(302)
    const second = web()
    const first = await second.signIn(user.name)
    expect(first.location).toBe("/user/two_factor")
    const passcode = await second.submit("/user/two_factor", { passcode: totp.generate() })
    expect(passcode.status).toBe(303)
    // The API asks for it too.
    expect((await request(hearth, "GET", "/user", basic(user.name))).status).toBe(401)
  })

  it("turns off only with a current passcode", async () => {
    const { user, client } = await signedIn()
    const enroll = await client.get("/user/settings/security/two_factor/enroll")
    const totp = new TOTP({ secret: Secret.fromBase32(secretOf(enroll.text)) })
    expect(
      (
        await client.post(
          "/user/settings/security/two_factor/enroll",
          { passcode: totp.generate({ timestamp: Date.now() - 30_000 }) },
          csrfOf(enroll.text)
        )
      ).status
    ).toBe(303)
    const page = await client.get("/user/settings/security")
    const wrong = await client.post(
      "/user/settings/security/two_factor/disable",
      { passcode: "123456" },
      csrfOf(page.text)
    )
    expect(wrong.status).toBe(401)
    expect(wrong.text).toMatch(/data-testid="error-passcode">Your passcode is incorrect\./)
    const empty = await client.post("/user/settings/security/two_factor/disable", {}, csrfOf(page.text))
    expect(empty.status).toBe(422)
    expect(
      (await client.post("/user/settings/security/two_factor/disable", { passcode: totp.generate() }, undefined)).status
    ).toBe(400)
    const off = await client.post(
      "/user/settings/security/two_factor/disable",
      { passcode: totp.generate() },
      csrfOf(page.text)
    )
    expect(off.status).toBe(303)
    expect((await client.get(off.location!)).text).toContain("Two-factor authentication is off.")
    expect((await request(hearth, "GET", "/user", basic(user.name))).status).toBe(200)
  })
})

// Issue 17, the web's ground, over plain HTTP (no browser): the pages' security headers and
// styled 404 beside the API's empty one and the other routes that must keep answering, the
// immutable assets, sessions (cookie flags, stored hashed, sign-out, password changes), CSRF
// refusals, the sign-in with its TOTP step and the throttle it shares with the API, sign-up,
// must-change-password, explore (search, sort, paging, visibility) and HTML escaping of the XSS
// corpus in names and descriptions. The browser tests are in web-browser.test.ts.
import { createHash } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Secret, TOTP } from "otpauth"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let adminToken: string
const web = () => new WebClient(hearth.base)

beforeAll(async () => {
  hearth = await startHearth({ security: { LOGIN_MAX_FAILURES: "3" }, ui: { EXPLORE_PAGING_NUM: "20" } })
  await createUser(hearth, { username: "root", isAdmin: true })
  adminToken = await createToken(hearth, "root")
}, 120_000)
afterAll(() => hearth?.close())

const signedInAs = (html: string) => /data-testid="signed-in-as">[\s\S]*?<\/svg> ([^<]+)<\/a>/.exec(html)?.[1]

const sessionRows = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return (yield* sql`SELECT id_hash, user_id, stage FROM web_sessions`) as ReadonlyArray<{
        id_hash: string
        user_id: number
        stage: string
      }>
    })
  )

/** A fresh account and a client signed in as it. */
const signedIn = async (options: { readonly mustChangePassword?: boolean } = {}) => {
  const user = await createUser(hearth, options)
  const client = web()
  const res = await client.signIn(user.name)
  expect(res.status).toBe(303)
  return { user, client }
}

describe("pages and what must keep answering beside them", () => {
  it("every page has the security headers and no inline script or style", async () => {
    const { client } = await signedIn()
    for (const path of ["/", "/explore/repos", "/explore/users", "/explore/organizations", "/no/such/page"]) {
      for (const c of [web(), client]) {
        const res = await c.get(path)
        expect(res.headers.get("content-type"), path).toBe("text/html; charset=utf-8")
        const csp = res.headers.get("content-security-policy") ?? ""
        expect(csp, path).toContain("default-src 'none'")
        expect(csp, path).toContain("script-src 'self'")
        expect(csp, path).toContain("frame-ancestors 'none'")
        expect(csp, path).not.toContain("unsafe-inline")
        expect(res.headers.get("x-frame-options"), path).toBe("DENY")
        expect(res.headers.get("referrer-policy"), path).toBe("strict-origin-when-cross-origin")
        expect(res.headers.get("x-content-type-options"), path).toBe("nosniff")
        // No inline script, no style element or attribute (the CSP would block them).
        expect(res.text.match(/<script[^>]*>[^<]+<\/script>/g), path).toBeNull()
        expect(res.text, path).not.toMatch(/<style|\sstyle=/)
        expect(res.text, path).toMatch(/<html lang="en" data-color-mode="auto"/)
      }
    }
  })

  it("an unknown web page is a styled 404; the API's unknown routes stay empty 404s and 405s", async () => {
    const page = await web().get("/no/such/page")
    expect(page.status).toBe(404)
    expect(page.text).toContain("Page not found")
    expect(page.text).toContain('href="/assets/hearth.')
    const head = await fetch(`${hearth.base}/no/such/page`, { method: "HEAD" })
    expect(head.status).toBe(404)

    for (const [method, path, status] of [
      ["GET", "/api/v1/no/such/route", 404],
      ["GET", "/api/nothing", 404],
      ["POST", "/no/such/page", 404],
      ["GET", "/.well-known/nothing", 404],
      ["GET", "/assets/hearth.0000000000000000.css", 404]
    ] as const) {
      const res = await fetch(`${hearth.base}${path}`, { method })
      expect(res.status, `${method} ${path}`).toBe(status)
      expect(await res.text(), `${method} ${path}`).toBe("")
    }
    // A known git path with another method: still the server's 405 with Allow, not a page.
    const pack = await fetch(`${hearth.base}/root/x/git-upload-pack`)
    expect(pack.status).toBe(405)
    expect(pack.headers.get("allow")).toBe("POST")
  })

  it("the API, git over HTTP, key exports, WebFinger and health still answer", async () => {
    const created = await request(hearth, "POST", "/user/repos", `token ${adminToken}`, {
      name: "still-there",
      auto_init: true
    })
    expect(created.status).toBe(201)
    const checks: ReadonlyArray<readonly [string, number, string]> = [
      ["/api/v1/version", 200, "application/json"],
      ["/api/healthz", 200, "application/json"],
      ["/api/swagger.v1.json", 200, "application/json"],
      ["/root.gpg", 200, "text/plain"],
      ["/root/still-there.git/info/refs?service=git-upload-pack", 200, "application/x-git-upload-pack-advertisement"],
      ["/root/still-there/info/refs?service=git-upload-pack", 200, "application/x-git-upload-pack-advertisement"],
      [`/.well-known/webfinger?resource=acct:root@${new URL(hearth.base).host}`, 200, "application/jrd+json"]
    ]
    for (const [path, status, type] of checks) {
      const res = await fetch(`${hearth.base}${path}`)
      expect(res.status, path).toBe(status)
      expect(res.headers.get("content-type") ?? "", path).toContain(type)
      expect(res.headers.get("content-security-policy"), path).toBeNull()
    }
  })

  it("serves Primer's stylesheet, htmx and the favicon at content-hashed URLs, cached for a year, gzipped on request", async () => {
    const page = (await web().get("/user/login")).text
    const urls = [...page.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!)
    expect(urls).toHaveLength(3)
    const types: Record<string, string> = { css: "text/css", js: "text/javascript", svg: "image/svg+xml" }
    for (const url of urls) {
      expect(url).toMatch(/^\/assets\/[a-z]+\.[0-9a-f]{16}\.(css|js|svg)$/)
      const plain = await fetch(`${hearth.base}${url}`, { headers: { "accept-encoding": "identity" } })
      expect(plain.status).toBe(200)
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
      expect(plain.headers.get("content-type")).toContain(types[url.split(".").pop()!])
      expect(plain.headers.get("content-encoding")).toBeNull()
      const body = Buffer.from(await plain.arrayBuffer())
      // The URL names the content: its digest.
      expect(url).toContain(createHash("sha256").update(body).digest("hex").slice(0, 16))
      const zipped = await fetch(`${hearth.base}${url}`, { headers: { "accept-encoding": "gzip" } })
      expect(zipped.headers.get("content-encoding")).toBe("gzip")
      expect(Buffer.from(await zipped.arrayBuffer()).equals(body)).toBe(true) // fetch inflates it
    }
    const css = await (await fetch(`${hearth.base}${urls.find((u) => u.endsWith(".css"))}`)).text()
    expect(css).toContain(".Box{") // Primer's components
    expect(css).toContain("prefers-color-scheme: dark") // the dark theme
  })
})

describe("sessions", () => {
  it("the session cookie is HttpOnly and SameSite=Lax (not Secure on http), its id is stored only hashed", async () => {
    const user = await createUser(hearth)
    const client = web()
    const res = await client.signIn(user.name)
    expect(res.status).toBe(303)
    expect(res.location).toBe("/")
    const cookie = res.headers.getSetCookie().find((c) => c.startsWith("hearth_session="))!
    expect(cookie).toMatch(/; HttpOnly/)
    expect(cookie).toMatch(/; SameSite=Lax/)
    expect(cookie).not.toMatch(/Secure/)
    const id = client.cookies.get("hearth_session")!
    const rows = (await sessionRows()).filter((r) => Number(r.user_id) === user.id)
    expect(rows).toHaveLength(1)
    expect(rows[0]!.id_hash).toBe(createHash("sha256").update(id).digest("hex"))
    expect(rows.some((r) => r.id_hash.includes(id))).toBe(false)
    expect(signedInAs((await client.get("/")).text)).toBe(user.name)
  })

  it("sign-out deletes the session: the cookie signs no one in afterwards", async () => {
    const { user, client } = await signedIn()
    const id = client.cookies.get("hearth_session")!
    const home = await client.get("/")
    const out = await client.post("/user/logout", {}, csrfOf(home.text))
    expect(out.status).toBe(303)
    expect(client.cookies.has("hearth_session")).toBe(false)
    expect((await sessionRows()).some((r) => Number(r.user_id) === user.id)).toBe(false)
    // The old cookie, sent again, is nobody.
    const replay = web()
    replay.cookies.set("hearth_session", id)
    const page = await replay.get("/")
    expect(signedInAs(page.text)).toBeUndefined()
    expect(page.text).toContain("Sign in")
  })

  it("changing the password on the web ends the account's other sessions, not this one", async () => {
    const { user, client: first } = await signedIn()
    const second = web()
    expect((await second.signIn(user.name)).status).toBe(303)
    const changed = await first.submit("/user/change_password", {
      old_password: "password123",
      password: "new-password-1",
      retype: "new-password-1"
    })
    expect(changed.status).toBe(303)
    expect(signedInAs((await first.get("/")).text)).toBe(user.name)
    expect(signedInAs((await second.get("/")).text)).toBeUndefined()
    // The new password works over the API too.
    expect((await request(hearth, "GET", "/user", basic(user.name, "new-password-1"))).status).toBe(200)
  })

  it("a password changed elsewhere (the admin API) ends every web session of the account", async () => {
    const { user, client } = await signedIn()
    const edited = await request(hearth, "PATCH", `/admin/users/${user.name}`, `token ${adminToken}`, {
      login_name: user.name,
      source_id: 0,
      password: "changed-by-admin"
    })
    expect(edited.status).toBe(200)
    expect(signedInAs((await client.get("/")).text)).toBeUndefined()
  })

  it("a session of an account that may no longer sign in ends", async () => {
    const { user, client } = await signedIn()
    const edited = await request(hearth, "PATCH", `/admin/users/${user.name}`, `token ${adminToken}`, {
      login_name: user.name,
      source_id: 0,
      prohibit_login: true
    })
    expect(edited.status).toBe(200)
    expect(signedInAs((await client.get("/")).text)).toBeUndefined()
  })
})

describe("CSRF", () => {
  it("a form without the token, or with another session's, is a 400 page and changes nothing", async () => {
    const user = await createUser(hearth)
    const client = web()
    await client.get("/user/login")
    const missing = await client.post("/user/login", { user_name: user.name, password: "password123" }, undefined)
    expect(missing.status).toBe(400)
    expect(missing.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(missing.text).toContain("security token (CSRF) is missing or out of date")
    expect(missing.headers.getSetCookie().some((c) => c.startsWith("hearth_session="))).toBe(false)

    // A token from another visitor's page.
    const other = csrfOf((await web().get("/user/login")).text)
    const wrong = await client.post("/user/login", { user_name: user.name, password: "password123" }, other)
    expect(wrong.status).toBe(400)

    const signUp = await client.post(
      "/user/sign_up",
      { user_name: "csrf-victim", email: "csrf-victim@example.com", password: "password123", retype: "password123" },
      other
    )
    expect(signUp.status).toBe(400)
    expect((await request(hearth, "GET", "/users/csrf-victim", `token ${adminToken}`)).status).toBe(404)
  })

  it("sign-out needs the token: a cross-site POST does not sign anyone out", async () => {
    const { user, client } = await signedIn()
    const forged = await client.post("/user/logout", {}, undefined)
    expect(forged.status).toBe(400)
    expect(signedInAs((await client.get("/")).text)).toBe(user.name)
    // The token of the visitor before signing in is not the session's.
    const visitor = web()
    const before = csrfOf((await visitor.get("/user/login")).text)
    expect((await visitor.post("/user/login", { user_name: user.name, password: "password123" }, before)).status).toBe(
      303
    )
    expect((await visitor.post("/user/logout", {}, before)).status).toBe(400)
  })
})

describe("signing in", () => {
  it("wrong password: the message, the name kept, never the password; by e-mail works", async () => {
    const user = await createUser(hearth)
    const client = web()
    const wrong = await client.submit("/user/login", { user_name: user.name, password: "not-the-password" })
    expect(wrong.status).toBe(401)
    expect(wrong.text).toContain("Username or password is incorrect.")
    expect(wrong.text).toContain(`value="${user.name}"`)
    expect(wrong.text).not.toContain("not-the-password")
    const empty = await client.submit("/user/login", { user_name: "", password: "" })
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-user_name"')
    expect(empty.text).toContain('data-testid="error-password"')
    const byEmail = await client.submit("/user/login", { user_name: user.email, password: "password123" })
    expect(byEmail.status).toBe(303)
    expect(signedInAs((await client.get("/")).text)).toBe(user.name)
  })

  it("goes back to redirect_to when it is a local path, and only then", async () => {
    const user = await createUser(hearth)
    const local = await web().submit("/user/login?redirect_to=%2Fexplore%2Fusers", {
      user_name: user.name,
      password: "password123",
      redirect_to: "/explore/users"
    })
    expect(local.location).toBe("/explore/users")
    for (const target of ["//evil.example/", "https://evil.example/", "/\\evil.example"]) {
      const res = await web().submit("/user/login", {
        user_name: user.name,
        password: "password123",
        redirect_to: target
      })
      expect(res.location, target).toBe("/")
    }
  })

  it("with TOTP: the password opens only the two-factor step; the passcode signs in", async () => {
    const user = await createUser(hearth)
    const enrolled = await request(hearth, "POST", "/user/twofa", basic(user.name))
    const { secret } = (await json(enrolled)) as { secret: string }
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    const previous = totp.generate({ timestamp: Date.now() - 30_000 })
    expect((await request(hearth, "POST", "/user/twofa/verify", basic(user.name), { passcode: previous })).status).toBe(
      204
    )

    const client = web()
    const first = await client.signIn(user.name)
    expect(first.status).toBe(303)
    expect(first.location).toBe("/user/two_factor")
    // Not signed in yet.
    expect(signedInAs((await client.get("/")).text)).toBeUndefined()
    expect((await sessionRows()).find((r) => Number(r.user_id) === user.id)?.stage).toBe("two-factor")
    const wrong = await client.submit("/user/two_factor", { passcode: "000000" })
    expect(wrong.status).toBe(401)
    expect(wrong.text).toContain("Your passcode is incorrect.")
    const pendingId = client.cookies.get("hearth_session")
    const ok = await client.submit("/user/two_factor", { passcode: totp.generate() })
    expect(ok.status).toBe(303)
    expect(ok.location).toBe("/")
    // A new session id, not the pending one.
    expect(client.cookies.get("hearth_session")).not.toBe(pendingId)
    expect(signedInAs((await client.get("/")).text)).toBe(user.name)
  })

  it("shares the throttle with the API: failures over the API lock the web sign-in, and the other way round", async () => {
    const viaApi = await createUser(hearth)
    for (let i = 0; i < 3; i++) {
      expect((await request(hearth, "GET", "/user", basic(viaApi.name, "wrong-password"))).status).toBe(401)
    }
    const locked = await web().signIn(viaApi.name)
    expect(locked.status).toBe(429)
    expect(locked.text).toContain(`too many failed sign-in attempts for ${viaApi.name}`)

    const viaWeb = await createUser(hearth)
    const client = web()
    for (let i = 0; i < 3; i++) expect((await client.signIn(viaWeb.name, "wrong-password")).status).toBe(401)
    expect((await request(hearth, "GET", "/user", basic(viaWeb.name))).status).toBe(429)
  })

  it("an account that must change its password is sent to /user/change_password before anything else", async () => {
    const { user, client } = await signedIn({ mustChangePassword: true })
    for (const path of ["/", "/explore/repos", "/user/login"]) {
      const res = await client.get(path)
      expect(res.status, path).toBe(302)
      expect(res.location, path).toBe("/user/change_password")
    }
    const form = await client.get("/user/change_password")
    expect(form.status).toBe(200)
    expect(form.text).toContain('data-testid="must-change"')
    expect(form.text).not.toContain('name="old_password"')
    const mismatch = await client.post(
      "/user/change_password",
      { password: "brand-new-pass", retype: "other" },
      csrfOf(form.text)
    )
    expect(mismatch.status).toBe(422)
    expect(mismatch.text).toContain("The passwords do not match.")
    const short = await client.submit("/user/change_password", { password: "short", retype: "short" })
    expect(short.status).toBe(422)
    expect(short.text).toMatch(/data-testid="error-password">\[Password\]: password is too short/)
    const done = await client.submit("/user/change_password", { password: "brand-new-pass", retype: "brand-new-pass" })
    expect(done.status).toBe(303)
    const home = await client.get("/")
    expect(home.status).toBe(200)
    expect(signedInAs(home.text)).toBe(user.name)
  })
})

describe("signing up", () => {
  it("shows refusals next to their field, keeps what was typed but the password, then signs the account in", async () => {
    const client = web()
    const taken = await client.submit("/user/sign_up", {
      user_name: "root",
      email: "fresh@example.com",
      password: "password123",
      retype: "password123"
    })
    expect(taken.status).toBe(422)
    expect(taken.text).toMatch(/data-testid="error-user_name">user already exists/)
    expect(taken.text).toContain('value="fresh@example.com"')
    expect(taken.text).not.toContain("password123")
    const mismatch = await client.submit("/user/sign_up", {
      user_name: "newcomer",
      email: "newcomer@example.com",
      password: "password123",
      retype: "password124"
    })
    expect(mismatch.text).toMatch(/data-testid="error-retype">The passwords do not match/)
    expect(mismatch.text).toContain('value="newcomer"')
    const badEmail = await client.submit("/user/sign_up", {
      user_name: "newcomer",
      email: "not-an-email",
      password: "password123",
      retype: "password123"
    })
    expect(badEmail.text).toMatch(/data-testid="error-email">\[Email\]: e-mail invalid/)
    const ok = await client.submit("/user/sign_up", {
      user_name: "newcomer",
      email: "newcomer@example.com",
      password: "password123",
      retype: "password123"
    })
    expect(ok.status).toBe(303)
    expect(signedInAs((await client.get("/")).text)).toBe("newcomer")
    expect((await request(hearth, "GET", "/user", basic("newcomer"))).status).toBe(200)
  })
})

describe("home and explore", () => {
  it("search, sort and visibility are the API's: a private repository only for those who may see it", async () => {
    const owner = await createUser(hearth, { username: "explorer" })
    const token = await createToken(hearth, owner.name)
    for (const [name, isPrivate] of [
      ["zeta-public", false],
      ["alpha-public", false],
      ["secret-plans", true]
    ] as const) {
      const res = await request(hearth, "POST", "/user/repos", `token ${token}`, {
        name,
        private: isPrivate,
        description: `about ${name}`
      })
      expect(res.status).toBe(201)
    }
    const anonymous = await web().get("/explore/repos?q=public&sort=alphabetically")
    expect(anonymous.text).toContain('href="/explorer/alpha-public"')
    expect(anonymous.text).not.toContain("secret-plans")
    expect(anonymous.text.indexOf("alpha-public")).toBeLessThan(anonymous.text.indexOf("zeta-public"))
    const reversed = await web().get("/explore/repos?q=public&sort=reversealphabetically")
    expect(reversed.text.indexOf("zeta-public")).toBeLessThan(reversed.text.indexOf("alpha-public"))
    expect((await web().get("/explore/repos?q=zeta")).text).not.toContain("alpha-public")
    expect((await web().get("/explore/repos?q=secret")).text).not.toContain("secret-plans")

    // The owner's home lists its repositories, the private one too; anonymous home is explore.
    const client = web()
    await client.signIn(owner.name)
    const home = await client.get("/")
    expect(home.text).toContain("Your repositories")
    expect(home.text).toContain('href="/explorer/secret-plans"')
    expect((await web().get("/")).text).not.toContain("secret-plans")
    expect((await client.get("/explore/repos?q=secret")).text).toContain('href="/explorer/secret-plans"')
  })

  it("signed in, the home is the dashboard: the account's activity beside its repositories, hostile text as text", async () => {
    const { user, client } = await signedIn()
    const empty = await client.get("/")
    expect(empty.text).toContain("Nothing has happened yet")
    expect(empty.text).toContain('href="/repo/create"')
    const res = await request(hearth, "POST", "/user/repos", basic(user.name), { name: "busy", auto_init: true })
    expect(res.status).toBe(201)
    const message = corpus.slice(0, 8).join(" ")
    const file = await request(hearth, "POST", `/repos/${user.name}/busy/contents/a.txt`, basic(user.name), {
      content: Buffer.from("a\n").toString("base64"),
      message
    })
    expect(file.status).toBe(201)
    // Actions are recorded after the request: wait for the push to reach the feed.
    let home = await client.get("/")
    for (let i = 0; i < 100 && !home.text.includes(" pushed to main at "); i++) {
      await new Promise((r) => setTimeout(r, 50))
      home = await client.get("/")
    }
    expect(home.text).toContain('data-testid="activity-feed"')
    expect(home.text).toContain(`${user.name} created repository ${user.name}/busy`)
    expect(home.text).toContain(`${user.name} pushed to main at ${user.name}/busy`)
    expect(home.text).toContain(`/${user.name}/busy/src/branch/main"`)
    expect(home.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    expect(executable(home.text)).toEqual([])
    // Another account's home shows none of it.
    expect((await (await signedIn()).client.get("/")).text).not.toContain(`${user.name}/busy`)
  })

  it("users and organizations: search by name or full name, links to the profiles", async () => {
    await createUser(hearth, { username: "findable-person", fullName: "Ada Lovelace" })
    const org = await request(hearth, "POST", "/orgs", `token ${adminToken}`, {
      username: "findable-org",
      full_name: "The Org"
    })
    expect(org.status).toBe(201)
    const users = await web().get("/explore/users?q=lovelace")
    expect(users.text).toContain('href="/findable-person"')
    expect(users.text).toContain("Ada Lovelace")
    expect(users.text).not.toContain("findable-org")
    const orgs = await web().get("/explore/organizations?q=findable")
    expect(orgs.text).toContain('href="/findable-org"')
    expect(orgs.text).not.toContain("findable-person")
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  /** Executable constructs among the page's real tags (text holds no "<": it is escaped). */
  const executable = (html: string): ReadonlyArray<string> => {
    const found: Array<string> = []
    const tags = html.match(/<[a-zA-Z][^>]*>/g) ?? []
    const named = (name: string) => tags.filter((t) => t.toLowerCase().startsWith(`<${name}`)).length
    // Hearth's own: one script (htmx), two links (icon, stylesheet), icons as inline SVG.
    if (named("script") !== 1) found.push("a script element")
    if (named("link") !== 2) found.push("a link element")
    for (const name of ["iframe", "object", "embed", "img", "math", "base", "style", "video", "audio", "frame"]) {
      if (named(name) > 0) found.push(`a ${name} element`)
    }
    for (const tag of tags) {
      if (/\son[a-z]+\s*=/i.test(tag)) found.push(`an event handler: ${tag}`)
      if (
        /(?:href|src|action|formaction|data|srcset|xlink:href)\s*=\s*["']?\s*(?:javascript|vbscript|data):/i.test(tag)
      )
        found.push(`a script URL: ${tag}`)
      if (/^<svg/i.test(tag) && !tag.startsWith('<svg class="octicon')) found.push(`a foreign svg: ${tag}`)
      if (/^<meta/i.test(tag) && /http-equiv/i.test(tag)) found.push(`a meta refresh: ${tag}`)
    }
    return found
  }

  it("full names and descriptions from the corpus are shown as text on every explore page", async () => {
    const owner = await createUser(hearth, { username: "hostile", fullName: corpus[0]! })
    const token = await createToken(hearth, owner.name)
    for (let i = 0; i < corpus.length; i++) {
      await createUser(hearth, { username: `xss-${i}`, fullName: corpus[i]!.slice(0, 255), password: "" })
    }
    for (let i = 0; i < corpus.length; i += 4) {
      const res = await request(hearth, "POST", "/user/repos", `token ${token}`, {
        name: `xss-repo-${i}`,
        description: corpus.slice(i, i + 4).join(" ")
      })
      expect(res.status, corpus[i]).toBe(201)
    }
    for (const start of ["/explore/users?q=xss-", "/explore/repos?q=xss-repo"]) {
      let path: string | undefined = start
      let pages = 0
      let items = 0
      while (path !== undefined) {
        const page = await web().get(path)
        expect(page.status).toBe(200)
        expect(executable(page.text), path).toEqual([])
        items += (page.text.match(/class="Box-row/g) ?? []).length
        pages++
        path = /rel="next" href="([^"]+)"/.exec(page.text)?.[1]?.replaceAll("&amp;", "&")
      }
      expect(pages, start).toBeGreaterThan(1)
      expect(items, start).toBe(start.includes("users") ? corpus.length : Math.ceil(corpus.length / 4))
    }
    // The text itself arrives, escaped.
    const first = await web().get("/explore/users?q=hostile")
    expect(first.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
  }, 180_000)
})

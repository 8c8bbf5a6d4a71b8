// Issue 17 items 1, 2 and 4 in a real browser (Chromium through playwright-core): follow a user
// from the profile, add an SSH key and an access token through the settings pages, enrol two-
// factor authentication by reading the QR code (decoded from the pixels the browser drew) and
// sign in with it. Every page visited is screenshotted and audited with axe-core (no serious or
// critical violation) and no page may log a console error (a CSP refusal is one).
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Secret, TOTP, URI } from "otpauth"
import type { Page } from "playwright-core"
import decodeQR from "qr/decode.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser
const dir = mkdtempSync(join(tmpdir(), "hearth-web-people-"))

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-people-browser")
}, 120_000)
afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

const url = (path: string) => `${hearth.base}${path}`

const signIn = (page: Page, login: string, password?: string) =>
  signInThrough(page, url("/user/login"), login, password)

describe("profiles in a browser", () => {
  it("follows a user from the profile and unfollows again", async () => {
    const ada = await createUser(hearth, { username: "ada-browser", fullName: "Ada Lovelace" })
    const fan = await createUser(hearth, { username: "fan-browser" })
    expect((await request(hearth, "POST", "/user/repos", basic(ada.name), { name: "engine" })).status).toBe(201)
    const org = await request(hearth, "POST", "/orgs", basic(ada.name), {
      username: "analytical",
      full_name: "Analytical Society"
    })
    expect(org.status).toBe(201)

    const { page } = await chrome.person()
    await page.goto(url("/ada-browser"))
    await chrome.check(page, "profile-signed-out")
    expect(await page.getByRole("button", { name: "Follow" }).count()).toBe(0)
    await page.getByRole("link", { name: "ada-browser/engine" }).waitFor()

    await signIn(page, fan.name)
    await page.goto(url("/ada-browser"))
    await page.getByRole("button", { name: "Follow" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Unfollow" }).count()).toBe(1)
    expect(await page.getByTestId("followers-count").textContent()).toBe("1")
    await chrome.check(page, "profile-followed")
    expect((await request(hearth, "GET", "/user/following/ada-browser", basic(fan.name))).status).toBe(204)
    await page.getByTestId("tab-followers").click()
    await expect.poll(() => page.url()).toBe(url("/ada-browser?tab=followers"))
    expect(await page.getByRole("link", { name: "fan-browser" }).count()).toBeGreaterThan(0)
    await chrome.check(page, "profile-followers")
    await page.goto(url("/ada-browser"))
    await page.getByRole("button", { name: "Unfollow" }).click()
    await expect.poll(() => page.getByRole("button", { name: "Follow" }).count()).toBe(1)
    expect((await request(hearth, "GET", "/user/following/ada-browser", basic(fan.name))).status).toBe(404)

    await page.goto(url("/analytical"))
    await chrome.check(page, "organization")
    expect(await page.getByRole("heading", { name: "Analytical Society" }).count()).toBe(1)
  })
})

describe("settings in a browser", () => {
  it("edits the profile, adds an SSH key and creates an access token", async () => {
    const user = await createUser(hearth, { username: "settler" })
    const { page } = await chrome.person()
    await signIn(page, user.name)

    await page.goto(url("/user/settings"))
    await chrome.check(page, "settings-profile")
    await page.getByLabel("Full name").fill("Sam Settler")
    await page.getByLabel("Website").fill("not a url")
    await page.getByRole("button", { name: "Update profile" }).click()
    await expect.poll(() => page.getByTestId("error-website").textContent()).toContain("must be an http://")
    expect(await page.getByLabel("Full name").inputValue()).toBe("Sam Settler")
    await chrome.check(page, "settings-profile-refused")
    await page.getByLabel("Website").fill("https://sam.example/")
    await page.getByRole("button", { name: "Update profile" }).click()
    await expect.poll(() => page.getByTestId("form-notice").textContent()).toBe("Your profile has been updated.")
    expect((await json(await request(hearth, "GET", "/user", basic(user.name)))).full_name).toBe("Sam Settler")

    await page.goto(url("/user/settings/account"))
    await chrome.check(page, "settings-account")

    // An SSH key: a refusal first, next to the field, then the key.
    const file = join(dir, "id")
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "settler@test", "-f", file])
    const pub = readFileSync(`${file}.pub`, "utf8").trim()
    await page.goto(url("/user/settings/keys"))
    await chrome.check(page, "settings-keys")
    await page.getByLabel("Title").fill("workstation")
    await page.getByLabel("Key", { exact: true }).fill("ssh-ed25519 AAAA-broken")
    await page.getByRole("button", { name: "Add SSH key" }).click()
    await expect.poll(() => page.getByTestId("error-ssh_content").count()).toBe(1)
    expect(await page.getByLabel("Title").inputValue()).toBe("workstation")
    await chrome.check(page, "settings-keys-refused")
    await page.getByLabel("Key", { exact: true }).fill(pub)
    await page.getByRole("button", { name: "Add SSH key" }).click()
    await expect.poll(() => page.getByTestId("ssh-key-title").textContent()).toBe("workstation")
    const keys = (await json(await request(hearth, "GET", "/user/keys", basic(user.name)))) as Array<{ title: string }>
    expect(keys.map((k) => k.title)).toEqual(["workstation"])

    // An access token: read and write on repositories, shown once.
    await page.goto(url("/user/settings/applications"))
    await chrome.check(page, "settings-applications")
    await page.getByLabel("Token name").fill("deploy")
    await page.getByLabel("Repositories", { exact: true }).selectOption("write:repository")
    await page.getByLabel("User", { exact: true }).selectOption("write:user")
    await page.getByRole("button", { name: "Generate token" }).click()
    await expect.poll(() => page.getByTestId("new-token").count()).toBe(1)
    const token = (await page.getByTestId("new-token").textContent())!
    expect(token).toMatch(/^[0-9a-f]{40}$/)
    await chrome.check(page, "settings-token-created")
    expect((await request(hearth, "POST", "/user/repos", `token ${token}`, { name: "by-token" })).status).toBe(201)
    expect((await request(hearth, "GET", "/admin/users", `token ${token}`)).status).toBe(403)
    await page.reload()
    expect(await page.getByTestId("new-token").count()).toBe(0)

    // An OAuth2 application, its edit page.
    await page.getByLabel("Application name").fill("Dashboard")
    await page.getByLabel("Redirect URIs").fill("https://dash.example/callback")
    await page.getByRole("button", { name: "Create application" }).click()
    await expect.poll(() => page.getByTestId("client-secret").count()).toBe(1)
    await chrome.check(page, "settings-oauth2-created")
  })

  it("enrols two-factor authentication from the QR code and signs in with it", async () => {
    const user = await createUser(hearth, { username: "careful" })
    const { page, context } = await chrome.person()
    await signIn(page, user.name)
    await page.goto(url("/user/settings/security"))
    await chrome.check(page, "settings-security")
    await page.getByRole("link", { name: "Set up two-factor authentication" }).click()
    const qr = page.getByTestId("twofa-qr")
    await qr.waitFor()
    await chrome.check(page, "settings-twofa-enroll")

    // Decode the code from the pixels the browser drew: it holds the secret shown as text.
    // (A string: the tests are compiled without the DOM's types.)
    const pixels = (await page.evaluate(`(() => {
      const img = document.querySelector('[data-testid="twofa-qr"]')
      const canvas = document.createElement("canvas")
      canvas.width = img.naturalWidth
      canvas.height = img.naturalHeight
      const context2d = canvas.getContext("2d")
      context2d.drawImage(img, 0, 0)
      const data = context2d.getImageData(0, 0, canvas.width, canvas.height)
      return { width: data.width, height: data.height, data: Array.from(data.data) }
    })()`)) as { width: number; height: number; data: Array<number> }
    const uri = decodeQR({ width: pixels.width, height: pixels.height, data: Uint8Array.from(pixels.data) })
    const totp = URI.parse(uri) as TOTP
    expect(totp.label).toBe(user.name)
    const shown = (await page.getByTestId("twofa-secret").textContent())!.replace(/\s/g, "")
    expect(totp.secret.base32).toBe(shown)

    await page.getByLabel("Passcode").fill("000000")
    await page.getByRole("button", { name: "Turn on two-factor authentication" }).click()
    await expect.poll(() => page.getByTestId("error-passcode").count()).toBe(1)
    await chrome.check(page, "settings-twofa-refused")
    // The current step's code turns it on; signing in below uses the next step's, so that it is
    // never the code already used (each step counts once) and stays valid if a step ends meanwhile.
    const code = new TOTP({ secret: Secret.fromBase32(shown) })
    await page.getByLabel("Passcode").fill(code.generate())
    await page.getByRole("button", { name: "Turn on two-factor authentication" }).click()
    await expect.poll(() => page.getByTestId("twofa-status").textContent()).toContain("On")
    await chrome.check(page, "settings-twofa-on")

    await page.getByRole("button", { name: "Sign out" }).click()
    await context.clearCookies()
    await signIn(page, user.name)
    await expect.poll(() => page.url()).toBe(url("/user/two_factor"))
    await page.getByLabel("Passcode").fill(totp.generate({ timestamp: Date.now() + 30_000 }))
    await page.getByRole("button", { name: "Verify" }).click()
    await expect.poll(() => page.getByTestId("signed-in-as").textContent()).toContain(user.name)
  })
})

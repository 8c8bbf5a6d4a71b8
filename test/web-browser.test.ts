// Issue 17 in a real browser (Chromium through playwright-core, test/support/browser.ts): sign up,
// sign out, sign in (also with TOTP, enrolled through the API), a repository created from the header
// and pushed to with git, the must-change-password detour,
// explore search from the header, the 404 page, and hostile names from the XSS corpus shown as
// text. Every page visited is screenshotted and audited with axe-core (no serious or critical
// violation), and no page may log a console error (the CSP's refusals are errors) or open a dialog.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Secret, TOTP } from "otpauth"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { gitIn } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let chrome: TestBrowser

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-browser")
}, 120_000)
afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const url = (path: string) => `${hearth.base}${path}`
const signedInAs = (page: Page) => page.getByTestId("signed-in-as").textContent()

const signIn = (page: Page, login: string, password?: string) =>
  signInThrough(page, url("/user/login"), login, password)

describe("accounts in a browser", () => {
  it("signs up, signs out and signs in again", async () => {
    const { page } = await chrome.person()
    await page.goto(url("/"))
    await chrome.check(page, "home-signed-out")
    await page.getByRole("link", { name: "Sign up" }).click()
    await expect.poll(() => page.url()).toBe(url("/user/sign_up"))
    await chrome.check(page, "sign-up")

    // A refusal next to its field, what was typed kept (not the passwords).
    await page.getByLabel("Username").fill("browser-person")
    await page.getByLabel("E-mail address").fill("browser-person@example.com")
    await page.getByLabel("Password", { exact: true }).fill("password123")
    await page.getByLabel("Confirm password").fill("password999")
    await page.getByRole("button", { name: "Create account" }).click()
    await expect.poll(() => page.getByTestId("error-retype").textContent()).toBe("The passwords do not match.")
    expect(await page.getByLabel("Username").inputValue()).toBe("browser-person")
    expect(await page.getByLabel("Password", { exact: true }).inputValue()).toBe("")
    await chrome.check(page, "sign-up-refused")

    await page.getByLabel("Password", { exact: true }).fill("password123")
    await page.getByLabel("Confirm password").fill("password123")
    await page.getByRole("button", { name: "Create account" }).click()
    await expect.poll(() => signedInAs(page)).toContain("browser-person")
    await chrome.check(page, "home-signed-in")

    await page.getByRole("button", { name: "Sign out" }).click()
    await expect.poll(() => page.getByRole("link", { name: "Sign in" }).count()).toBe(1)
    expect(await page.getByTestId("signed-in-as").count()).toBe(0)

    await signIn(page, "browser-person", "wrong-password")
    await expect.poll(() => page.getByTestId("form-error").textContent()).toBe("Username or password is incorrect.")
    await chrome.check(page, "sign-in-refused")
    await signIn(page, "browser-person")
    await expect.poll(() => signedInAs(page)).toContain("browser-person")
  })

  it("signs in with a second factor enrolled through the API", async () => {
    const user = await createUser(hearth)
    const enrolled = await request(hearth, "POST", "/user/twofa", basic(user.name))
    const { secret } = (await json(enrolled)) as { secret: string }
    const totp = new TOTP({ secret: Secret.fromBase32(secret) })
    const previous = totp.generate({ timestamp: Date.now() - 30_000 })
    expect((await request(hearth, "POST", "/user/twofa/verify", basic(user.name), { passcode: previous })).status).toBe(
      204
    )

    const { page } = await chrome.person()
    await signIn(page, user.name)
    await expect.poll(() => page.url()).toBe(url("/user/two_factor"))
    await chrome.check(page, "two-factor")
    await page.getByLabel("Passcode").fill("000000")
    await page.getByRole("button", { name: "Verify" }).click()
    await expect.poll(() => page.getByTestId("error-passcode").textContent()).toBe("Your passcode is incorrect.")
    await chrome.check(page, "two-factor-refused")
    await page.getByLabel("Passcode").fill(totp.generate())
    await page.getByRole("button", { name: "Verify" }).click()
    await expect.poll(() => signedInAs(page)).toContain(user.name)
  })

  it("creates a repository from the header, is shown how to push, and sees what git pushed", async () => {
    const user = await createUser(hearth)
    const { page } = await chrome.person()
    await signIn(page, user.name)
    await page.getByTestId("new-repository").click()
    await expect.poll(() => page.url()).toBe(url("/repo/create"))
    await chrome.check(page, "repo-create")
    await page.getByLabel("Repository name").fill("hearthstone")
    await page.getByLabel("Description").fill("Made in a browser")
    await page.getByRole("button", { name: "Create repository" }).click()
    await expect.poll(() => page.url()).toBe(url(`/${user.name}/hearthstone`))
    await expect.poll(() => page.getByTestId("empty-repo").count()).toBe(1)
    await chrome.check(page, "repo-empty")

    const work = mkdtempSync(join(tmpdir(), "hearth-web-push-"))
    try {
      await gitIn(work, ["init", "--quiet", "--initial-branch=main", "."])
      writeFileSync(join(work, "README.md"), "# Hearthstone\n\nPushed with **git**.\n")
      await gitIn(work, ["add", "README.md"])
      await gitIn(work, ["commit", "--quiet", "-m", "first commit"])
      const remote = new URL(url(`/${user.name}/hearthstone.git`))
      remote.username = user.name
      remote.password = "password123"
      await gitIn(work, ["push", "--quiet", remote.href, "main"])
    } finally {
      rmSync(work, { recursive: true, force: true })
    }
    await page.reload()
    await expect.poll(() => page.getByTestId("empty-repo").count()).toBe(0)
    await expect.poll(() => page.getByRole("heading", { name: "Hearthstone" }).count()).toBe(1)
    expect(await page.getByRole("link", { name: "README.md" }).count()).toBeGreaterThan(0)
    await chrome.check(page, "repo-pushed")
  })

  it("sends an account that must change its password to the change page first", async () => {
    const user = await createUser(hearth, { mustChangePassword: true })
    const { page } = await chrome.person()
    await signIn(page, user.name)
    await expect.poll(() => page.url()).toBe(url("/user/change_password"))
    await chrome.check(page, "must-change-password")
    await page.goto(url("/explore/repos"))
    await expect.poll(() => page.url()).toBe(url("/user/change_password"))
    await page.getByLabel("New password", { exact: true }).fill("a-new-password")
    await page.getByLabel("Confirm new password").fill("a-new-password")
    await page.getByRole("button", { name: "Change password" }).click()
    await expect.poll(() => page.url()).toBe(url("/"))
    expect(await signedInAs(page)).toContain(user.name)
    expect((await request(hearth, "GET", "/user", basic(user.name, "a-new-password"))).status).toBe(200)
  })
})

describe("pages in a browser", () => {
  it("searches repositories from the header and pages through explore", async () => {
    const owner = await createUser(hearth, { username: "gardener" })
    const token = await createToken(hearth, owner.name)
    for (const name of ["tomatoes", "roses"]) {
      expect(
        (await request(hearth, "POST", "/user/repos", `token ${token}`, { name, description: `All about ${name}` }))
          .status
      ).toBe(201)
    }
    const { page } = await chrome.person()
    await page.goto(url("/explore/repos"))
    await chrome.check(page, "explore-repos")
    await page.getByRole("searchbox", { name: "Search repositories" }).first().fill("tomato")
    await page.getByRole("searchbox", { name: "Search repositories" }).first().press("Enter")
    await expect.poll(() => page.url()).toBe(url("/explore/repos?q=tomato"))
    expect(await page.getByRole("link", { name: "gardener/tomatoes" }).count()).toBe(1)
    expect(await page.getByRole("link", { name: "gardener/roses" }).count()).toBe(0)
    await chrome.check(page, "explore-repos-search")
    await page.getByRole("link", { name: "Users" }).click()
    await expect.poll(() => page.url()).toBe(url("/explore/users"))
    await chrome.check(page, "explore-users")
    await page.getByRole("link", { name: "Organizations" }).click()
    await chrome.check(page, "explore-organizations")
  })

  it("follows the system's dark mode", async () => {
    const background = async (colorScheme: "light" | "dark") => {
      const { page } = await chrome.person({ colorScheme })
      await page.goto(url("/user/login"))
      await chrome.check(page, `login-${colorScheme}`)
      return (await page.evaluate("getComputedStyle(document.body).backgroundColor")) as string
    }
    const luminance = (rgb: string) => {
      const [r, g, b] = rgb.match(/\d+/g)!.map(Number)
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!
    }
    expect(luminance(await background("light"))).toBeGreaterThan(200)
    expect(luminance(await background("dark"))).toBeLessThan(60)
  })

  it("shows the styled 404 page for an unknown page", async () => {
    const { page } = await chrome.person()
    const response = await page.goto(url("/no/such/page"))
    expect(response?.status()).toBe(404)
    expect(await page.getByRole("heading", { name: "404" }).count()).toBe(1)
    expect(await page.getByText("Page not found").count()).toBe(1)
    await chrome.check(page, "not-found")
  })

  it("shows hostile names and descriptions as text: nothing runs, nothing is injected", async () => {
    const owner = await createUser(hearth, { username: "mallory", fullName: corpus[1]! })
    const token = await createToken(hearth, owner.name)
    for (let i = 0; i < corpus.length; i += 10) {
      await createUser(hearth, { username: `evil-${i}`, fullName: corpus[i]!.slice(0, 255), password: "" })
      const res = await request(hearth, "POST", "/user/repos", `token ${token}`, {
        name: `evil-${i}`,
        description: corpus.slice(i, i + 10).join("\n")
      })
      expect(res.status).toBe(201)
    }
    const { page } = await chrome.person()
    for (const path of ["/explore/users?q=evil", "/explore/repos?q=evil", "/explore/users?q=mallory"]) {
      await page.goto(url(path))
      const injected = await page.evaluate(
        "document.querySelectorAll('main script, main img, main iframe, main object, main embed, main style, main svg:not(.octicon), main math, main a[href^=\"javascript\" i]').length"
      )
      expect(injected, path).toBe(0)
      const items = await page.locator("main .Box-row").count()
      expect(items, path).toBeGreaterThan(0)
      await chrome.check(page, `xss-${path.replace(/\W+/g, "-")}`)
    }
    // The hostile text is there, as text.
    expect(await page.locator("main").textContent()).toContain(corpus[1]!)
  })
})

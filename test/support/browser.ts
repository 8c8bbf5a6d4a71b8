// A real browser for the web pages' tests: Debian's Chromium (`/usr/bin/chromium`, installed by
// .ci/run when missing) driven by playwright-core, launched once per test file. Every page a test
// checks (`check`) is screenshotted under artefacts/screenshots/<file>/ (git-ignored) and audited
// with axe-core: a serious or critical accessibility violation fails the test, and so does any
// console error or uncaught exception on any page (a CSP violation is one), or a JavaScript dialog.
import { mkdirSync, readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { join, resolve } from "node:path"
import { type Browser, type BrowserContext, chromium, type Page } from "playwright-core"

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const root = resolve(import.meta.dirname, "../..")
const require = createRequire(import.meta.url)

export interface AxeViolation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<{ readonly target: ReadonlyArray<string> }>
}

export interface TestBrowser {
  readonly browser: Browser
  /** A new person: a context of its own (its own cookies) and a page in it. */
  readonly person: (options?: {
    readonly colorScheme?: "light" | "dark"
  }) => Promise<{ context: BrowserContext; page: Page }>
  /**
   * Screenshot `name` and audit the page with axe: throws on serious/critical violations and on
   * console errors seen so far on any page.
   */
  readonly check: (page: Page, name: string) => Promise<void>
  /** Throws if any page logged an error (checked by `check` too). */
  readonly assertNoErrors: () => void
  readonly close: () => Promise<void>
}

export const launchBrowser = async (file: string): Promise<TestBrowser> => {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--no-first-run"
    ]
  })
  const shots = join(root, "artefacts", "screenshots", file)
  mkdirSync(shots, { recursive: true })
  const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8")
  const errors: Array<string> = []
  const contexts: Array<BrowserContext> = []

  const watch = (page: Page) => {
    page.on("console", (message) => {
      if (message.type() !== "error") return
      // The document's own status (a 404 or 400 page a test opens on purpose) is asserted by the
      // test itself; a sub-resource that fails is an error.
      const at = message.location().url
      if (/^Failed to load resource: the server responded with a status of/.test(message.text()) && at === page.url())
        return
      errors.push(`console error on ${page.url()}: ${message.text()} (${at})`)
    })
    page.on("pageerror", (error) => errors.push(`uncaught exception on ${page.url()}: ${error.message}`))
    page.on("dialog", (dialog) => {
      errors.push(`a ${dialog.type()} dialog opened on ${page.url()}: ${dialog.message()}`)
      void dialog.dismiss()
    })
  }

  const assertNoErrors = () => {
    if (errors.length > 0) throw new Error(errors.splice(0).join("\n"))
  }

  return {
    browser,
    person: async (options = {}) => {
      const context = await browser.newContext({
        viewport: { width: 1200, height: 800 },
        colorScheme: options.colorScheme ?? "light"
      })
      contexts.push(context)
      context.on("page", watch)
      const page = await context.newPage()
      return { context, page }
    },
    check: async (page, name) => {
      await page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
      // Evaluated through the DevTools protocol, which the page's CSP does not govern.
      await page.evaluate(axeSource)
      const violations = (await page.evaluate(
        "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations)"
      )) as ReadonlyArray<AxeViolation>
      const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical")
      if (bad.length > 0) {
        throw new Error(
          `accessibility violations on ${name} (${page.url()}):\n${bad
            .map((v) => `- ${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)
            .join("\n")}`
        )
      }
      assertNoErrors()
    },
    assertNoErrors,
    close: async () => {
      for (const context of contexts) await context.close().catch(() => undefined)
      await browser.close()
    }
  }
}

/** Signs in through the login form at `loginUrl` (the account's password, by default the tests' one). */
export const signInThrough = async (page: Page, loginUrl: string, login: string, password = "password123") => {
  await page.goto(loginUrl)
  await page.getByLabel("Username or e-mail address").fill(login)
  await page.getByLabel("Password").fill(password)
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForLoadState()
}

// Issue 22's labels and milestones pages in a real browser (Chromium through playwright-core,
// test/support/browser.ts): a writer creates a label with the form (a refused colour first, shown
// next to its field), edits it, and creates, closes and reopens a milestone whose progress comes
// from its issues. Every page is screenshotted and audited with axe-core (no serious or critical
// violation), in light and dark; someone mentioned in an issue sees the header's unread count
// drop after reading the notification, and no page may log a console error (a CSP refusal is one).
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser

const url = (path: string) => `${hearth.base}${path}`
const api = (method: string, path: string, body?: unknown) => apiAs(hearth, method, path, "ann", body)

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-labels-browser")
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", { name: "orchard", auto_init: true, readme: "Default" })
  await api("POST", "/repos/ann/orchard/labels", { name: "bug", color: "ee0701", description: "Something is broken" })
  await api("POST", "/repos/ann/orchard/labels", { name: "old", color: "cccccc", is_archived: true })
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("labels and milestones", () => {
  it("a writer makes a label and a milestone, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page } = await chrome.person({ colorScheme })
      await signIn(page, "ann")
      await page.goto(url("/ann/orchard/labels"))
      await chrome.check(page, `labels-${colorScheme}`)

      const name = `feature-${colorScheme}`
      await page.getByText("New label").click()
      const form = page.getByTestId("new-label-form")
      await form.getByLabel("Label name").fill(name)
      await form.getByLabel("Color").fill("#zz0000")
      await form.getByLabel("Description").fill("Something new")
      await form.getByRole("button", { name: "Create label" }).click()
      await page.waitForLoadState()
      expect(await page.getByTestId("error-color").textContent()).toBe("bad color code: #zz0000")
      expect(await page.getByTestId("new-label-form").getByLabel("Label name").inputValue()).toBe(name)
      await chrome.check(page, `label-refused-${colorScheme}`)
      await page.getByTestId("new-label-form").getByLabel("Color").fill("#0e8a16")
      await page.getByTestId("new-label-form").getByRole("button", { name: "Create label" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/labels"))
      expect(await page.getByTestId("label-list").getByText(name, { exact: true }).count()).toBe(1)

      await page.goto(url("/ann/orchard/milestones"))
      await page.getByRole("link", { name: "New milestone" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/milestones/new"))
      await page.getByLabel("Title").fill(`Harvest ${colorScheme}`)
      await page.getByLabel("Description").fill("Pick everything")
      await page.getByLabel("Due date (optional)").fill("2031-09-30")
      await chrome.check(page, `milestone-new-${colorScheme}`)
      await page.getByRole("button", { name: "Create milestone" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/milestones"))
      const milestones = (await api("GET", "/repos/ann/orchard/milestones?state=all")) as Array<Record<string, any>>
      const made = milestones.find((m) => m.title === `Harvest ${colorScheme}`)!
      expect(made.due_on).toBe("2031-09-30T23:59:59Z")
      await api("POST", "/repos/ann/orchard/issues", { title: `apples ${colorScheme}`, milestone: made.id })
      const done = await api("POST", "/repos/ann/orchard/issues", { title: `pears ${colorScheme}`, milestone: made.id })
      await api("PATCH", `/repos/ann/orchard/issues/${done.number}`, { state: "closed" })
      await page.reload()
      const row = page.locator(`#milestone-${made.id}`)
      expect(await row.getByTestId("milestone-progress").textContent()).toBe("50% complete")
      await chrome.check(page, `milestones-${colorScheme}`)
      await row.getByRole("button", { name: "Close" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/milestones?state=closed"))
      await page.locator(`#milestone-${made.id}`).getByRole("button", { name: "Reopen" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/milestones"))
      expect(await page.locator(`#milestone-${made.id}`).count()).toBe(1)
    }
  }, 180_000)

  it("a notification's count drops after reading it", async () => {
    await api("POST", "/repos/ann/orchard/issues", { title: "Ladders needed", body: "Can you bring some, @ben?" })
    const { page } = await chrome.person({ colorScheme: "light" })
    await signIn(page, "ben")
    await page.goto(url("/ann/orchard"))
    expect(await page.getByTestId("unread-count").textContent()).toBe("1")
    await page.getByTestId("notifications-link").click()
    await expect.poll(() => page.url()).toBe(url("/notifications"))
    expect(await page.getByTestId("notification-title").textContent()).toContain("Ladders needed")
    await chrome.check(page, "notifications-light")
    await page.getByRole("button", { name: "Mark read: Ladders needed" }).click()
    await expect.poll(() => page.url()).toBe(url("/notifications"))
    expect(await page.getByTestId("unread-count").count()).toBe(0)
    expect(await page.getByTestId("no-notifications").count()).toBe(1)
    await page.getByTestId("tab-read").click()
    await expect.poll(() => page.url()).toBe(url("/notifications?type=read"))
    expect(await page.getByTestId("notification").count()).toBe(1)
    await chrome.check(page, "notifications-read-light")
  }, 120_000)
})

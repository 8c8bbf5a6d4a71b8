// Issue 22's issue pages in a real browser (Chromium through playwright-core,
// test/support/browser.ts): the list with a labelled issue, opening it (its label, a rendered
// mention), previewing a comment through htmx, commenting, closing it with the form. Every page is
// screenshotted and audited with axe-core (no serious or critical violation), in light and dark,
// and no page may log a console error (a CSP refusal is one).
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
  chrome = await launchBrowser("web-issues-browser")
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", { name: "orchard", auto_init: true, readme: "Default" })
  const label = await api("POST", "/repos/ann/orchard/labels", { name: "pests", color: "#e11d21" })
  await api("POST", "/repos/ann/orchard/issues", {
    title: "Aphids on the apple trees",
    body: "Spotted **aphids** again; @ben can you look?",
    labels: [label.id]
  })
  await api("POST", "/repos/ann/orchard/issues", { title: "Order more ladders", body: "" })
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("issues", () => {
  it("the list and an issue, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page } = await chrome.person({ colorScheme })
      await page.goto(url("/ann/orchard"))
      await page.getByRole("link", { name: /Issues/ }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/issues"))
      expect(await page.getByTestId("issue-row").count()).toBe(2)
      await chrome.check(page, `issues-${colorScheme}`)
      await page.getByRole("link", { name: "Aphids on the apple trees" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/issues/1"))
      expect(await page.getByTestId("issue-labels").getByText("pests").count()).toBe(1)
      expect(await page.getByRole("link", { name: "@ben" }).count()).toBe(1)
      await chrome.check(page, `issue-${colorScheme}`)
    }
  }, 120_000)

  it("opens an issue with a label and a mention, previews and posts a comment, closes it", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ann")
    await page.goto(url("/ann/orchard/issues?labels=1"))
    expect(await page.getByTestId("issue-row").count()).toBe(1)
    await page.getByRole("link", { name: "Aphids on the apple trees" }).click()
    await page.getByLabel("Add a comment").fill("Sprayed with *soap*, thanks @ben")
    await page.getByTestId("preview").click()
    await expect.poll(() => page.getByTestId("comment-preview").innerHTML()).toContain("<em>soap</em>")
    await chrome.check(page, "issue-preview")
    await page.getByTestId("comment-button").click()
    await expect.poll(() => page.locator(".markdown-body", { hasText: "Sprayed with" }).count()).toBe(1)
    expect(await page.getByTestId("issue-state").textContent()).toContain("Open")
    await page.getByLabel("Add a comment").fill("Gone now.")
    await page.getByTestId("close").click()
    await expect.poll(() => page.getByTestId("issue-state").textContent()).toContain("Closed")
    expect(await page.getByTestId("reopen").count()).toBe(1)
    await chrome.check(page, "issue-closed")
    const issue = await api("GET", "/repos/ann/orchard/issues/1")
    expect(issue.state).toBe("closed")
    expect(issue.comments).toBe(2)
    await page.goto(url("/ann/orchard/issues?state=closed"))
    expect(await page.getByTestId("issue-row").count()).toBe(1)
    await chrome.check(page, "issues-closed")
  }, 120_000)
})

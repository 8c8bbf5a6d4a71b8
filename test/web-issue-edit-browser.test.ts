// Issue 22's issue page edits in a real browser (Chromium through playwright-core,
// test/support/browser.ts): an issue with a label and a mention is opened, commented on, reacted to
// (the picker, swapped in place by htmx), given a milestone and an assignee from the sidebar, and
// closed; then the /issues dashboard. Every page is screenshotted and audited with axe-core (no
// serious or critical violation), and no page may log a console error (a CSP refusal is one).
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
  chrome = await launchBrowser("web-issue-edit-browser")
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", { name: "orchard", auto_init: true, readme: "Default" })
  await api("PUT", "/repos/ann/orchard/collaborators/ben", { permission: "write" })
  const label = await api("POST", "/repos/ann/orchard/labels", { name: "pests", color: "#e11d21" })
  await api("POST", "/repos/ann/orchard/milestones", { title: "Spring" })
  await api("POST", "/repos/ann/orchard/issues", {
    title: "Aphids on the apple trees",
    body: "Spotted **aphids** again; @ben can you look?",
    labels: [label.id]
  })
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("the issue page's edits", () => {
  it("comments, reacts, sets a milestone and an assignee, closes", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ann")
    await page.goto(url("/ann/orchard/issues/1"))
    expect(await page.getByTestId("issue-labels").getByText("pests").count()).toBe(1)
    expect(await page.getByRole("link", { name: "@ben" }).count()).toBe(1)
    await chrome.check(page, "issue-edit-open")

    await page.getByLabel("Add a comment").fill("Sprayed with *soap*")
    await page.getByTestId("comment-button").click()
    await expect.poll(() => page.locator(".markdown-body", { hasText: "Sprayed with" }).count()).toBe(1)

    // A reaction on the issue through the picker: htmx swaps the bar, the page stays.
    const bar = page.locator("#reactions-issue")
    await bar.getByTestId("reaction-picker").locator("summary").click()
    await bar.getByTestId("react-heart").click()
    await expect.poll(() => page.locator("#reactions-issue [data-testid=reaction]").count()).toBe(1)
    expect(await page.locator("#reactions-issue [data-testid=reaction]").getAttribute("aria-pressed")).toBe("true")
    expect((await api("GET", "/repos/ann/orchard/issues/1/reactions")).map((r: any) => r.content)).toEqual(["heart"])

    // The milestone and an assignee from the sidebar.
    await page.getByTestId("edit-milestone").locator("summary").click()
    await page.getByLabel("Milestone").selectOption({ label: "Spring" })
    await page.getByTestId("form-milestone").getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.getByTestId("issue-milestone").textContent()).toContain("Spring")
    await page.getByTestId("edit-assignees").locator("summary").click()
    await page.getByTestId("form-assignees").getByLabel("ben").check()
    await page.getByTestId("form-assignees").getByRole("button", { name: "Save" }).click()
    await expect.poll(() => page.getByTestId("issue-assignees").textContent()).toContain("ben")
    await page.getByTestId("edit-labels").locator("summary").click()
    await page.getByTestId("edit-assignees").locator("summary").click()
    await chrome.check(page, "issue-edit-sidebar")

    await page.getByTestId("close").click()
    await expect.poll(() => page.getByTestId("issue-state").textContent()).toContain("Closed")
    const issue = await api("GET", "/repos/ann/orchard/issues/1")
    expect([issue.state, issue.milestone.title, issue.assignees.map((a: any) => a.login)]).toEqual([
      "closed",
      "Spring",
      ["ben"]
    ])
    const events = ((await api("GET", "/repos/ann/orchard/issues/1/timeline")) as Array<{ type: string }>).map(
      (e) => e.type
    )
    expect(events).toEqual(expect.arrayContaining(["comment", "milestone", "assignees", "close"]))
    await chrome.check(page, "issue-edit-closed")

    await page.goto(url("/issues?state=closed"))
    expect(await page.getByTestId("issue-row").count()).toBe(1)
    await chrome.check(page, "dashboard-issues")
  }, 180_000)
})

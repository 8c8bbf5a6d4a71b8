// Issue 22 item 2 in a real browser (Chromium through playwright-core, test/support/browser.ts): a
// reviewer opens a pull request's files changed, comments on a line (htmx inserts the form under
// the line), sees the comment pending, then finishes the review approving it; the split view and
// a file folded as viewed. Every page is screenshotted and audited with axe-core (no serious or
// critical violation), in light and dark, and no page may log a console error (a CSP refusal is one).
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser
let index: number

const url = (path: string) => `${hearth.base}${path}`
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)
const b64 = (text: string) => Buffer.from(text).toString("base64")

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-pull-files-browser")
  for (const username of ["ann", "ben", "rae"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "ann", { name: "orchard", auto_init: true, readme: "Default" })
  await api("PUT", "/repos/ann/orchard/collaborators/ben", "ann", { permission: "write" })
  const lines = Array.from({ length: 12 }, (_, i) => `export const tree${i} = "apple ${i}"`)
  const made = await api("POST", "/repos/ann/orchard/contents/trees.ts", "ann", {
    content: b64(`${lines.join("\n")}\n`),
    message: "trees"
  })
  const changed = lines.map((l, i) => (i === 5 ? `export const tree5 = "pear 5" // grafted` : l))
  await api("PUT", "/repos/ann/orchard/contents/trees.ts", "ben", {
    content: b64(`${changed.join("\n")}\n`),
    sha: made.content.sha,
    branch: "main",
    new_branch: "graft",
    message: "Graft a pear"
  })
  await api("POST", "/repos/ann/orchard/contents/notes.md", "ben", {
    content: b64("# Notes\n\nGrafted in spring.\n"),
    branch: "graft",
    message: "Notes"
  })
  index = (await api("POST", "/repos/ann/orchard/pulls", "ben", { head: "graft", base: "main", title: "Graft a pear" }))
    .number
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("files changed", () => {
  it("comments on a line, then approves the pull request", async () => {
    const { page } = await chrome.person()
    await signIn(page, "rae")
    const files = `/ann/orchard/pulls/${index}/files`
    await page.goto(url(files))
    expect(await page.getByTestId("diff-file").count()).toBe(2)
    await chrome.check(page, "files-light")

    // The "+" of the new line 6 asks htmx for the form and inserts it under the line.
    await page.getByRole("link", { name: "Comment on line 6 (new side)" }).click()
    const form = page.getByTestId("comment-form")
    await form.waitFor()
    expect(page.url()).toBe(url(files))
    await form.getByRole("textbox").fill("Will the **pear** take?")
    await chrome.check(page, "comment-form")
    await form.getByRole("button", { name: "Add review comment" }).click()
    await page.waitForLoadState()
    const comment = page.getByTestId("review-comment")
    await comment.waitFor()
    expect(await comment.textContent()).toContain("Will the pear take?")
    expect(await page.getByTestId("pending-label").count()).toBe(1)
    expect(await page.getByTestId("pending-count").textContent()).toBe("1")
    await chrome.check(page, "pending")

    // Finish review: approve.
    await page.getByText("Finish review").click()
    const review = page.getByTestId("review-form")
    await review.getByLabel("Review summary").fill("Looks good to me.")
    await review.getByLabel("Approve").check()
    await chrome.check(page, "finish-review")
    await review.getByRole("button", { name: "Submit review" }).click()
    await page.waitForLoadState()
    await expect.poll(() => page.getByTestId("pending-label").count()).toBe(0)
    expect(await page.getByTestId("review-comment").count()).toBe(1)
    const reviews = await api("GET", `/repos/ann/orchard/pulls/${index}/reviews`, "ann")
    expect(reviews.map((r: any) => [r.user.login, r.state, r.body, r.comments_count])).toEqual([
      ["rae", "APPROVED", "Looks good to me.", 1]
    ])
    chrome.assertNoErrors()
  }, 120_000)

  it("the split view and a file marked viewed, in dark", async () => {
    const { page } = await chrome.person({ colorScheme: "dark" })
    await signIn(page, "ann")
    await page.goto(url(`/ann/orchard/pulls/${index}/files`))
    await page.getByTestId("style-split").click()
    await page.waitForLoadState()
    expect(page.url()).toContain("style=split")
    const notes = page.getByTestId("diff-file").filter({ hasText: "notes.md" })
    await notes.getByTestId("viewed-toggle").click()
    await page.waitForLoadState()
    expect(page.url()).toContain("style=split")
    await expect.poll(() => notes.locator("details.hearth-diff-fold").getAttribute("open")).toBeNull()
    expect(await page.getByTestId("viewed-count").textContent()).toBe("1 / 2 files viewed")
    await chrome.check(page, "split-viewed-dark")
  }, 60_000)
})

// Issue 22 item 4's pull request flow in a real browser (Chromium through playwright-core,
// test/support/browser.ts): a fork's owner opens a pull request from the compare page; the base
// repository's owner comments on a line of its files changed and approves it, looks at the
// conversation and the commits, and merges it with squash (the merge box's title switching to the
// squash's default with the style). Every page is screenshotted and audited with axe-core (no
// serious or critical violation), and no page may log a console error (a CSP refusal is one).
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser

const url = (path: string) => `${hearth.base}${path}`
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-pulls-browser")
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  await apiAs(hearth, "POST", "/user/repos", "ann", { name: "orchard", auto_init: true, readme: "Default" })
  expect((await request(hearth, "POST", "/repos/ann/orchard/forks", basic("ben"), {})).status).toBe(202)
  for (let i = 0; i < 400; i++) {
    if ((await json(await request(hearth, "GET", "/repos/ben/orchard", basic("ben")))).empty === false) break
    await sleep(25)
  }
  await apiAs(hearth, "POST", "/repos/ben/orchard/contents/plums.txt", "ben", {
    content: Buffer.from("plums\ncherries\n").toString("base64"),
    branch: "main",
    new_branch: "plums",
    message: "Plant plums"
  })
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("a pull request from a fork", () => {
  it("is opened from the compare page, approved, and merged with squash", async () => {
    const ben = (await chrome.person()).page
    await signIn(ben, "ben")
    await ben.goto(url("/ann/orchard/compare/main...ben:plums"))
    expect(await ben.getByTestId("new-pull-form").count()).toBe(1)
    expect(await ben.getByLabel("Title").inputValue()).toBe("Plant plums")
    await chrome.check(ben, "pull-compare")
    await ben.getByLabel("Title").fill("Plums for the orchard")
    await ben.getByLabel("Description").fill("Two **fruits**.")
    await ben.getByRole("button", { name: "Create pull request" }).click()
    await expect.poll(() => ben.url()).toBe(url("/ann/orchard/pulls/1"))
    expect(await ben.getByTestId("pull-summary").textContent()).toContain(
      "wants to merge 1 commit into main from ben:plums"
    )
    expect(await ben.locator("#issue-body .markdown-body strong").textContent()).toBe("fruits")
    await chrome.check(ben, "pull-opened")

    // ann comments on a line of the files changed and approves, then merges.
    const ann = (await chrome.person()).page
    await signIn(ann, "ann")
    await ann.goto(url("/ann/orchard/pulls"))
    await ann.getByRole("link", { name: "Plums for the orchard" }).click()
    await expect.poll(() => ann.url()).toBe(url("/ann/orchard/pulls/1"))
    await ann.getByTestId("pull-tab-files").click()
    await expect.poll(() => ann.url()).toBe(url("/ann/orchard/pulls/1/files"))
    await ann.getByRole("link", { name: "Comment on line 2 (new side)" }).click()
    const form = ann.getByTestId("comment-form")
    await form.waitFor()
    await form.getByRole("textbox").fill("Sour **cherries**?")
    await form.getByRole("button", { name: "Add review comment" }).click()
    await ann.waitForLoadState()
    await ann.getByTestId("review-comment").waitFor()
    await ann.getByText("Finish review").click()
    const review = ann.getByTestId("review-form")
    await review.getByLabel("Review summary").fill("Tasty")
    await review.getByLabel("Approve").check()
    await review.getByRole("button", { name: "Submit review" }).click()
    await ann.waitForLoadState()
    await expect.poll(() => ann.getByTestId("pending-label").count()).toBe(0)
    await chrome.check(ann, "pull-files-reviewed")
    await ann.getByTestId("pull-tab-conversation").click()
    await expect.poll(() => ann.url()).toBe(url("/ann/orchard/pulls/1"))
    expect(await ann.getByTestId("review").getAttribute("data-state")).toBe("APPROVED")
    expect(await ann.getByTestId("review").textContent()).toContain("Sour cherries?")
    await chrome.check(ann, "pull-conversation")
    await ann.getByTestId("pull-tab-commits").click()
    await expect.poll(() => ann.url()).toBe(url("/ann/orchard/pulls/1/commits"))
    expect(await ann.getByRole("link", { name: "Plant plums" }).count()).toBe(1)
    await chrome.check(ann, "pull-commits")
    await ann.getByTestId("pull-tab-conversation").click()
    expect(await ann.getByLabel("Commit title").inputValue()).toBe(
      "Merge pull request 'Plums for the orchard' (#1) from ben/orchard:plums into main"
    )
    await ann.getByLabel("Create squash commit").check()
    await expect.poll(() => ann.getByLabel("Commit title").inputValue()).toBe("Plums for the orchard (#1)")
    expect(await ann.getByLabel("Commit message").inputValue()).toBe("* Plant plums")
    await ann.getByTestId("merge-button").click()
    await expect.poll(() => ann.getByTestId("pull-state").textContent()).toContain("Merged")
    expect(await ann.getByTestId("merge-box").textContent()).toContain("This pull request was merged")
    await chrome.check(ann, "pull-merged")
    const pull = await json(await request(hearth, "GET", "/repos/ann/orchard/pulls/1", basic("ann")))
    expect(pull.merged).toBe(true)
    const commit = await json(
      await request(hearth, "GET", `/repos/ann/orchard/git/commits/${pull.merge_commit_sha}`, basic("ann"))
    )
    expect(commit.commit.message.trim()).toBe("Plums for the orchard (#1)\n\n* Plant plums")
    expect(commit.parents).toHaveLength(1)
  }, 120_000)
})

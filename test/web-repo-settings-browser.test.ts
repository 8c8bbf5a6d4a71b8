// Issue 17 item 3's repository settings in a real browser (Chromium through playwright-core,
// test/support/browser.ts): the owner renames a repository, adds a collaborator, adds a deploy
// key, archives it and deletes it with the typed confirmation. Every page is screenshotted and
// audited with axe-core (no serious or critical violation), and no page may log a console error.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, type TestBrowser } from "./support/browser.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser
let work: string

const url = (path: string) => `${hearth.base}${path}`

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-repo-settings-browser")
  work = mkdtempSync(join(tmpdir(), "hearth-web-reposettings-browser-"))
  for (const username of ["cora", "dan"]) await createUser(hearth, { username })
  expect(
    (await request(hearth, "POST", "/user/repos", basic("cora"), { name: "garden", auto_init: true })).status
  ).toBe(201)
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const signIn = async (page: Page, login: string) => {
  await page.goto(url("/user/login"))
  await page.getByLabel("Username or e-mail address").fill(login)
  await page.getByLabel("Password").fill("password123")
  await page.getByRole("button", { name: "Sign in" }).click()
  await page.waitForLoadState()
}

describe("repository settings", () => {
  it("rename, add a collaborator, add a deploy key, archive, delete with the confirmation", async () => {
    const { page } = await chrome.person()
    await signIn(page, "cora")
    await page.goto(url("/cora/garden"))
    await page.getByRole("link", { name: "Settings" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/garden/settings"))
    await chrome.check(page, "options")

    // Rename: the page follows the new name.
    await page.getByLabel("Repository name").fill("meadow")
    await page.getByLabel("Description").fill("Wild flowers")
    await page.getByTestId("settings-update-form").getByRole("button", { name: "Update settings" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/meadow/settings?done=updated"))
    expect(await page.getByTestId("form-notice").textContent()).toContain("settings have been updated")
    await chrome.check(page, "options-renamed")

    // A refusal next to its field.
    await page.getByLabel("Website").fill("not a url")
    await page.getByTestId("settings-update-form").getByRole("button", { name: "Update settings" }).click()
    await page.waitForLoadState()
    expect(await page.getByTestId("error-website").textContent()).toContain("Invalid url")
    await chrome.check(page, "options-refused")

    // A collaborator.
    await page.getByRole("link", { name: "Collaborators" }).click()
    await page.getByLabel("User name").fill("dan")
    await page.getByLabel("Permission", { exact: true }).selectOption("read")
    await page.getByRole("button", { name: "Add collaborator" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/meadow/settings/collaboration?done=collaborator-added"))
    expect(await page.getByTestId("collaborator-name").textContent()).toBe("dan")
    await chrome.check(page, "collaborators")

    // A deploy key.
    execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "ci@test", "-f", join(work, "deploy")])
    await page.getByRole("link", { name: "Deploy keys" }).click()
    await page.getByLabel("Title").fill("ci")
    await page.getByLabel("Key", { exact: true }).fill(readFileSync(join(work, "deploy.pub"), "utf8"))
    await page.getByLabel("Allow write access").check()
    await page.getByRole("button", { name: "Add deploy key" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/meadow/settings/keys?done=key-added"))
    expect(await page.getByTestId("deploy-key-title").textContent()).toBe("ci")
    await chrome.check(page, "deploy-keys")

    // Archive.
    await page.getByRole("link", { name: "Options" }).click()
    await page.getByLabel("Type cora/meadow to confirm").first().waitFor()
    const archive = page.getByTestId("danger-archive")
    await archive.getByLabel("Type cora/meadow to confirm").fill("cora/meadow")
    await archive.getByRole("button", { name: "Archive this repository" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/meadow/settings?done=archived"))
    expect(await page.getByTestId("repo-title").textContent()).toContain("Archived")
    await chrome.check(page, "archived")

    // Delete: a wrong confirmation is refused, the right one deletes.
    const del = page.getByTestId("danger-delete")
    await del.getByLabel("Type cora/meadow to confirm").fill("meadow")
    await del.getByRole("button", { name: "Delete this repository" }).click()
    await page.waitForLoadState()
    expect(await page.getByTestId("error-delete_confirm").textContent()).toContain("full name")
    await chrome.check(page, "delete-refused")
    await page.getByTestId("danger-delete").getByLabel("Type cora/meadow to confirm").fill("cora/meadow")
    await page.getByTestId("danger-delete").getByRole("button", { name: "Delete this repository" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora"))
    await chrome.check(page, "deleted")
    expect((await request(hearth, "GET", "/repos/cora/meadow", basic("cora"))).status).toBe(404)
    expect(await json(await request(hearth, "GET", "/users/cora/repos", basic("cora")))).toEqual([])
    chrome.assertNoErrors()
  })
})

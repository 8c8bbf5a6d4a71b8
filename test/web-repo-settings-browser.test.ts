// Issue 17 item 3's repository settings in a real browser (Chromium through playwright-core,
// test/support/browser.ts): the owner renames a repository, adds a collaborator, adds a deploy
// key, archives it and deletes it with the typed confirmation; protects a branch and tags; adds a
// webhook, sends a test delivery to a real receiver and reads its history; makes a repository with
// "Use this template" and converts a mirror to a regular repository. Every page is
// screenshotted and audited with axe-core (no serious or critical violation), and no page may log
// a console error.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser
let work: string
let receiver: Server
let receiverUrl: string

const url = (path: string) => `${hearth.base}${path}`

beforeAll(async () => {
  receiver = createServer((req, res) => {
    req.resume()
    req.on("end", () => res.writeHead(200, { "content-type": "text/plain" }).end("received"))
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  hearth = await startHearth({
    webhook: { ALLOWED_HOST_LIST: "loopback" },
    migrations: { ALLOW_LOCALNETWORKS: "true" }
  })
  chrome = await launchBrowser("web-repo-settings-browser")
  work = mkdtempSync(join(tmpdir(), "hearth-web-reposettings-browser-"))
  for (const username of ["cora", "dan"]) await createUser(hearth, { username })
  expect(
    (await request(hearth, "POST", "/user/repos", basic("cora"), { name: "garden", auto_init: true })).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/user/repos", basic("cora"), { name: "orchard", auto_init: true })).status
  ).toBe(201)
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
  await new Promise<void>((resolve) => (receiver === undefined ? resolve() : receiver.close(() => resolve())))
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

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
    const left = (await json(await request(hearth, "GET", "/users/cora/repos", basic("cora")))) as Array<{
      name: string
    }>
    expect(left.map((repo) => repo.name)).toEqual(["orchard"])
    chrome.assertNoErrors()
  }, 120_000)
})

describe("branch protection and webhooks", () => {
  it("protect a branch and tags, add a webhook, test it and read its delivery", async () => {
    const { page } = await chrome.person()
    await signIn(page, "cora")
    await page.goto(url("/cora/orchard/settings"))

    // Branch protection: the list, a refused rule, the rule saved.
    await page.getByRole("link", { name: "Branches", exact: true }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/orchard/settings/branches"))
    await chrome.check(page, "branches-empty")
    await page.getByRole("link", { name: "Add rule" }).click()
    await page.getByLabel("Branch name or pattern").fill("main")
    await page.getByLabel("Only the users and teams listed", { exact: true }).check()
    await page.getByLabel("Push whitelist: users").fill("cora")
    await page.getByLabel("Only the users and teams listed may merge pull requests").check()
    await page.getByLabel("Merge whitelist: users").fill("nobody-here")
    await page.getByLabel("Required approvals").fill("1")
    await chrome.check(page, "branch-rule-new")
    await page.getByRole("button", { name: "Add rule" }).click()
    await page.waitForLoadState()
    expect(await page.getByTestId("error-merge_whitelist_users").textContent()).toContain("no user named nobody-here")
    await chrome.check(page, "branch-rule-refused")
    await page.getByLabel("Merge whitelist: users").fill("cora")
    await page.getByRole("button", { name: "Add rule" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/orchard/settings/branches?done=rule-saved"))
    expect(await page.getByTestId("branch-rule-name").textContent()).toBe("main")
    await chrome.check(page, "branches")
    const rule = await json(await request(hearth, "GET", "/repos/cora/orchard/branch_protections/main", basic("cora")))
    expect(rule).toMatchObject({
      enable_push_whitelist: true,
      push_whitelist_usernames: ["cora"],
      merge_whitelist_usernames: ["cora"],
      required_approvals: 1
    })
    await page.getByRole("link", { name: "Edit the rule main" }).click()
    await page.waitForLoadState()
    await chrome.check(page, "branch-rule-edit")

    // Tags.
    await page.getByRole("link", { name: "Tags", exact: true }).click()
    await page.getByLabel("Tag name or pattern").fill("v*")
    await page.getByRole("button", { name: "Add tag rule" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/orchard/settings/tags?done=tag-saved"))
    expect(await page.getByTestId("tag-rule-pattern").textContent()).toBe("v*")
    await chrome.check(page, "tags")

    // A webhook: the type menu, the form, the list, a test delivery and its history.
    await page.getByRole("link", { name: "Webhooks", exact: true }).click()
    await chrome.check(page, "hooks-empty")
    await page.getByText("Add webhook").click()
    await page.getByRole("link", { name: "Forgejo", exact: true }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/orchard/settings/hooks/forgejo/new"))
    await page.getByLabel("Target URL").fill(receiverUrl)
    await page.getByLabel("Secret").fill("a-secret")
    await page.getByLabel("The events chosen below").check()
    await page.getByLabel("Push: commits are pushed").check()
    await page.getByLabel("Release: published, updated or deleted").check()
    await chrome.check(page, "hook-new")
    await page.getByRole("button", { name: "Add webhook" }).click()
    await expect.poll(() => page.url()).toBe(url("/cora/orchard/settings/hooks?done=added"))
    await chrome.check(page, "hooks")
    const [hook] = await json(await request(hearth, "GET", "/repos/cora/orchard/hooks", basic("cora")))
    expect(hook).toMatchObject({ url: receiverUrl, events: ["push", "release"], active: true })
    await page.getByTestId("hook-url").click()
    await page.getByRole("button", { name: "Test delivery" }).click()
    await expect.poll(() => page.url()).toBe(url(`/cora/orchard/settings/hooks/${hook.id}?done=tested`))
    // Reloaded until the delivery is recorded (bounded by the poll's time-out).
    await expect
      .poll(async () => {
        await page.reload()
        return page.getByTestId("delivery-response-status").count()
      })
      .toBe(1)
    await page.getByTestId("delivery-uuid").click()
    expect(await page.getByTestId("delivery-response-body").textContent()).toBe("received")
    await chrome.check(page, "hook-delivery")
    chrome.assertNoErrors()
  }, 120_000)
})

describe("templates and mirrors", () => {
  it("use this template, then convert a mirror to a regular repository", async () => {
    expect(
      (await request(hearth, "POST", "/user/repos", basic("cora"), { name: "seed", auto_init: true, template: true }))
        .status
    ).toBe(201)
    const { page } = await chrome.person()
    await signIn(page, "dan")
    await page.goto(url("/cora/seed"))
    await page.getByRole("link", { name: "Use this template" }).click()
    await page.waitForLoadState()
    await chrome.check(page, "template-form")
    await page.getByLabel("Repository name").fill("sprout")
    await page.getByLabel("Git content (the default branch)").uncheck()
    for (const item of ["Topics", "Avatar", "Labels", "Webhooks", "Branch protection rules"]) {
      await page.getByLabel(item, { exact: true }).uncheck()
    }
    await page.getByRole("button", { name: "Create repository" }).click()
    await page.waitForLoadState()
    expect(await page.getByTestId("error-items").textContent()).toBe("must select at least one template item")
    expect(await page.getByLabel("Repository name").inputValue()).toBe("sprout")
    await chrome.check(page, "template-refused")
    await page.getByLabel("Git content (the default branch)").check()
    await page.getByRole("button", { name: "Create repository" }).click()
    await expect.poll(() => page.url()).toBe(url("/dan/sprout"))
    await chrome.check(page, "template-made")

    const res = await request(hearth, "POST", "/repos/migrate", basic("dan"), {
      clone_addr: `${hearth.base}/cora/seed.git`,
      repo_name: "copy",
      mirror: true
    })
    expect(res.status).toBe(201)
    await page.goto(url("/dan/copy/settings"))
    const convert = page.getByTestId("danger-convert")
    await convert.getByLabel("Type dan/copy to confirm").fill("dan/copy")
    await chrome.check(page, "mirror-options")
    await convert.getByRole("button", { name: "Convert this repository" }).click()
    await expect.poll(() => page.url()).toBe(url("/dan/copy/settings?done=converted"))
    expect(await page.getByTestId("repo-title").textContent()).not.toContain("Mirror")
    await chrome.check(page, "mirror-converted")
    expect((await json(await request(hearth, "GET", "/repos/dan/copy", basic("dan")))).mirror).toBe(false)
    chrome.assertNoErrors()
  }, 120_000)
})

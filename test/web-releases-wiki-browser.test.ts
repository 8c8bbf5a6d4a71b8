// Issue 17 item 2's pages in a real browser (Chromium through playwright-core,
// test/support/browser.ts): the releases list and a release, making a release with the form,
// uploading a file to it and deleting it (confirmed); the wiki's Home page, following a [[link]],
// writing, editing and deleting a page, its history and the pages list, an empty wiki's start
// page. Every page is screenshotted and audited with axe-core (no serious or critical violation),
// in light and dark, and no page may log a console error (a CSP refusal is one).
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { apiAs, basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser

const url = (path: string) => `${hearth.base}${path}`

const api = (method: string, path: string, body?: unknown) => apiAs(hearth, method, path, "ann", body)
const b64 = (text: string) => Buffer.from(text).toString("base64")

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-releases-wiki-browser")
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", { name: "orchard", auto_init: true, readme: "Default" })
  await api("POST", "/user/repos", { name: "meadow", auto_init: true, readme: "Default" })
  const first = await api("POST", "/repos/ann/orchard/releases", {
    tag_name: "v1.0",
    name: "First harvest",
    body: "## Changes\n\n- apples\n- **pears**\n\n> [!NOTE]\n> Picked by hand."
  })
  const file = new FormData()
  file.append("attachment", new Blob([Buffer.alloc(5000, 3)]), "apples.tar.gz")
  const res = await fetch(url(`/api/v1/repos/ann/orchard/releases/${first.id}/assets`), {
    method: "POST",
    headers: { authorization: basic("ann") },
    body: file
  })
  expect(res.status).toBe(201)
  await api("POST", "/repos/ann/orchard/releases", { tag_name: "v1.1-rc", name: "Blossom", prerelease: true })
  await api("POST", "/repos/ann/orchard/wiki/new", {
    title: "Home",
    content_base64: b64("# Orchard wiki\n\nHow we grow: see [[Pruning Trees]].\n")
  })
  await api("POST", "/repos/ann/orchard/wiki/new", {
    title: "Pruning Trees",
    content_base64: b64("Prune in **winter**.\n\n1. cut\n2. seal\n")
  })
  await api("POST", "/repos/ann/orchard/wiki/new", { title: "_Sidebar", content_base64: b64("[[Home]]\n") })
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("releases", () => {
  it("the list and a release, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page } = await chrome.person({ colorScheme })
      await page.goto(url("/ann/orchard"))
      await page.getByRole("link", { name: /Releases/ }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases"))
      expect(await page.getByTestId("release").count()).toBe(2)
      expect(await page.getByTestId("label-latest").count()).toBe(1)
      expect(await page.getByTestId("label-prerelease").count()).toBe(1)
      await chrome.check(page, `releases-${colorScheme}`)
      await page.getByRole("link", { name: "First harvest" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases/tag/v1.0"))
      expect(await page.getByRole("heading", { name: "First harvest" }).count()).toBe(1)
      expect(await page.getByRole("link", { name: "apples.tar.gz" }).count()).toBe(1)
      await chrome.check(page, `release-${colorScheme}`)
    }
  })

  it("a writer makes a release, uploads a file to it, and deletes it", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ann")
    await page.goto(url("/ann/orchard/releases"))
    await page.getByTestId("new-release").click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases/new"))
    await chrome.check(page, "release-new")
    // Refused: no tag. The form comes back with what was typed.
    await page.getByLabel("Title").fill("Second harvest")
    await page.getByLabel("Tag name").fill(" ")
    await page.getByRole("button", { name: "Publish release" }).click()
    await expect.poll(() => page.getByTestId("error-tag_name").textContent()).toContain("Name the tag")
    expect(await page.getByLabel("Title").inputValue()).toBe("Second harvest")
    await chrome.check(page, "release-new-refused")
    await page.getByLabel("Tag name").fill("v2.0")
    await page.getByLabel("Release notes").fill("Plums *and* cherries.")
    await page.getByRole("button", { name: "Publish release" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases/tag/v2.0"))
    expect(await page.locator(".markdown-body em").textContent()).toBe("and")

    await page.getByTestId("edit-release").click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases/edit/v2.0"))
    await page.getByLabel("Upload a file").setInputFiles({
      name: "plums.txt",
      mimeType: "text/plain",
      buffer: Buffer.from("plums\n")
    })
    await page.getByRole("button", { name: "Upload", exact: true }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases/edit/v2.0?done=uploaded"))
    expect(await page.getByTestId("asset").textContent()).toContain("plums.txt")
    await chrome.check(page, "release-edit")

    await page.getByTestId("delete-release").locator("summary").click()
    await chrome.check(page, "release-delete-confirm")
    await page.getByRole("button", { name: "Yes, delete this release" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/releases"))
    expect(await page.getByRole("link", { name: "Second harvest" }).count()).toBe(0)
    expect((await request(hearth, "GET", "/repos/ann/orchard/releases/tags/v2.0", basic("ann"))).status).toBe(404)
  }, 60_000)
})

describe("the wiki", () => {
  it("the Home page, a [[link]], the history and the pages list, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page } = await chrome.person({ colorScheme })
      await page.goto(url("/ann/orchard"))
      await page.getByRole("link", { name: "Wiki" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/wiki"))
      expect(await page.getByRole("heading", { name: "Orchard wiki" }).count()).toBe(1)
      await chrome.check(page, `wiki-home-${colorScheme}`)
      await page.getByTestId("wiki-content").getByRole("link", { name: "Pruning Trees" }).click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/wiki/Pruning-Trees"))
      expect(await page.locator(".markdown-body strong").first().textContent()).toBe("winter")
      await chrome.check(page, `wiki-page-${colorScheme}`)
      await page.getByTestId("wiki-history").click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/wiki/Pruning-Trees?action=_revision"))
      await chrome.check(page, `wiki-history-${colorScheme}`)
      await page.getByTestId("wiki-pages").first().click()
      await expect.poll(() => page.url()).toBe(url("/ann/orchard/wiki/?action=_pages"))
      expect(await page.getByTestId("wiki-page-list").locator("li").count()).toBe(3)
      await chrome.check(page, `wiki-pages-${colorScheme}`)
    }
  })

  it("a writer starts an empty wiki, edits the page and deletes it", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ann")
    await page.goto(url("/ann/meadow/wiki"))
    await chrome.check(page, "wiki-start")
    await page.getByTestId("wiki-create-first").click()
    await expect.poll(() => page.url()).toBe(url("/ann/meadow/wiki?action=_new"))
    await chrome.check(page, "wiki-new")
    await page.getByLabel("Title").fill("Home")
    await page.getByLabel("Content").fill("Grass and *flowers*.")
    await page.getByRole("button", { name: "Save page" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/meadow/wiki/Home"))
    expect(await page.locator(".markdown-body em").textContent()).toBe("flowers")

    await page.getByTestId("wiki-edit").click()
    await expect.poll(() => page.url()).toBe(url("/ann/meadow/wiki/Home?action=_edit"))
    await page.getByLabel("Content").fill("Grass, *flowers* and bees.")
    await page.getByLabel("Edit message (optional)").fill("Add the bees")
    await chrome.check(page, "wiki-edit")
    await page.getByRole("button", { name: "Save changes" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/meadow/wiki/Home"))
    expect(await page.getByTestId("wiki-content").textContent()).toContain("bees")

    await page.getByTestId("wiki-delete").locator("summary").click()
    await chrome.check(page, "wiki-delete-confirm")
    await page.getByRole("button", { name: "Yes, delete this page" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/meadow/wiki/?action=_pages"))
    expect(await page.getByTestId("wiki-page-list").locator("li").count()).toBe(0)
    await chrome.check(page, "wiki-pages-empty")
  }, 60_000)

  it("a reader sees no writer's buttons", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ben")
    await page.goto(url("/ann/orchard/wiki"))
    expect(await page.getByTestId("wiki-edit").count()).toBe(0)
    expect(await page.getByTestId("wiki-new").count()).toBe(0)
    await page.goto(url("/ann/orchard/releases"))
    expect(await page.getByTestId("new-release").count()).toBe(0)
    await chrome.check(page, "releases-reader")
  })
})

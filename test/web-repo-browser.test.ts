// Issue 17's repository pages in a real browser (Chromium through playwright-core,
// test/support/browser.ts): a repository created through the API and pushed to with real git,
// then its home, a file (and a line anchor), the history, a commit (unified and split), the
// branches, tags and blame pages, starring (htmx swaps the buttons) and forking with the buttons,
// and a private repository's 404 page. Every page is screenshotted and audited with axe-core (no
// serious or critical violation), and no page may log a console error (a CSP refusal is one).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import type { Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { launchBrowser, signInThrough, type TestBrowser } from "./support/browser.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let chrome: TestBrowser
let work: string
let commits: { first: string; second: string }

const url = (path: string) => `${hearth.base}${path}`

const CODE = Array.from({ length: 40 }, (_, i) => `export const value${i + 1} = ${i + 1} // line ${i + 1}`).join("\n")

beforeAll(async () => {
  hearth = await startHearth()
  chrome = await launchBrowser("web-repo-browser")
  work = mkdtempSync(join(tmpdir(), "hearth-web-repo-browser-"))
  for (const username of ["ann", "ben"]) await createUser(hearth, { username })
  expect(
    (
      await request(hearth, "POST", "/user/repos", basic("ann"), {
        name: "orchard",
        description: "Apples and pears"
      })
    ).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/user/repos", basic("ann"), { name: "hidden", private: true, auto_init: true }))
      .status
  ).toBe(201)
  const local = join(work, "orchard")
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  const files: Record<string, string> = {
    "README.md": "# Orchard\n\nTrees, **fruit** and `code`.\n\n- apples\n- pears\n",
    "src/trees.ts": `${CODE}\n`,
    "docs/notes.md": "Some notes.\n"
  }
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(local, path)), { recursive: true })
    writeFileSync(join(local, path), content)
  }
  await gitIn(local, ["add", "--all"])
  await gitIn(local, ["commit", "--quiet", "-m", "Plant the orchard"])
  const first = await gitIn(local, ["rev-parse", "HEAD"])
  writeFileSync(join(local, "src/trees.ts"), `${CODE.replace("line 12", "line twelve")}\n// pruned\n`)
  await gitIn(local, ["commit", "--quiet", "-am", "Prune the trees"])
  const second = await gitIn(local, ["rev-parse", "HEAD"])
  await gitIn(local, ["tag", "v1"])
  const remote = new URL(url("/ann/orchard.git"))
  remote.username = "ann"
  remote.password = "password123"
  await gitIn(local, ["push", "--quiet", remote.toString(), "main", "v1"])
  commits = { first, second }
}, 180_000)

afterAll(async () => {
  await chrome?.close()
  await hearth?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

const signIn = (page: Page, login: string) => signInThrough(page, url("/user/login"), login)

describe("browsing a repository", () => {
  it("the home, a file with a line anchor, the history, a commit unified and split", async () => {
    const { page } = await chrome.person()
    await page.goto(url("/ann/orchard"))
    expect(await page.getByRole("heading", { name: "Orchard" }).count()).toBe(1)
    expect(await page.getByText("Apples and pears").count()).toBeGreaterThan(0)
    expect(await page.getByTestId("latest-commit").textContent()).toContain("Prune the trees")
    expect(await page.getByTestId("languages").textContent()).toContain("TypeScript")
    await chrome.check(page, "home")

    // The branch menu opens without JavaScript's help (a details element).
    await page.getByTestId("ref-menu").locator("summary").click()
    expect(await page.getByRole("link", { name: "v1" }).isVisible()).toBe(true)
    await chrome.check(page, "home-ref-menu")
    await page.getByTestId("ref-menu").locator("summary").click()

    // Into src/, then the file.
    await page.getByRole("link", { name: "src", exact: true }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/src/branch/main/src"))
    await chrome.check(page, "directory")
    await page.getByRole("link", { name: "trees.ts" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/src/branch/main/src/trees.ts"))
    expect(await page.getByTestId("file-info").textContent()).toContain("41 lines")
    // Its last commit arrives after the page (htmx).
    await expect.poll(() => page.getByTestId("latest-commit").textContent()).toContain("Prune the trees")
    await chrome.check(page, "file")

    // A line anchor: the row is the target, highlighted.
    await page.getByRole("link", { name: "12", exact: true }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/src/branch/main/src/trees.ts#L12"))
    expect(await page.locator("tr:target").getAttribute("id")).toBe("L12")
    expect(await page.locator("tr:target").textContent()).toContain("line twelve")
    const background = (await page.evaluate(
      "getComputedStyle(document.querySelector('tr:target td')).backgroundColor"
    )) as string
    expect(background).not.toBe("rgba(0, 0, 0, 0)")
    await chrome.check(page, "file-line-anchor")

    // Blame and raw links exist; blame renders.
    await page.getByTestId("blame-link").click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/blame/branch/main/src/trees.ts"))
    expect(await page.getByTestId("blame").textContent()).toContain("Prune the trees")
    await chrome.check(page, "blame")

    // The history, then the commit.
    await page.goto(url("/ann/orchard"))
    await page.getByRole("link", { name: "History" }).click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/commits/branch/main"))
    expect(await page.getByTestId("commit-list").locator("li").count()).toBe(2)
    await chrome.check(page, "history")
    await page.getByRole("link", { name: "Prune the trees" }).click()
    await expect.poll(() => page.url()).toBe(url(`/ann/orchard/commit/${commits.second}`))
    expect(await page.getByTestId("commit-title").textContent()).toBe("Prune the trees")
    expect(await page.locator(".hearth-add").count()).toBeGreaterThan(0)
    expect(await page.locator(".hearth-del").count()).toBeGreaterThan(0)
    await chrome.check(page, "commit-unified")
    await page.getByTestId("style-split").click()
    await expect.poll(() => page.url()).toBe(url(`/ann/orchard/commit/${commits.second}?style=split`))
    expect(await page.locator("table.hearth-split").count()).toBe(1)
    await chrome.check(page, "commit-split")
    await page.getByTestId("parent").click()
    await expect.poll(() => page.url()).toBe(url(`/ann/orchard/commit/${commits.first}`))
    await chrome.check(page, "commit-root")
  })

  it("the branches, tags and compare pages, in light and dark", async () => {
    for (const colorScheme of ["light", "dark"] as const) {
      const { page } = await chrome.person({ colorScheme })
      for (const [path, name] of [
        ["/ann/orchard/branches", "branches"],
        ["/ann/orchard/tags", "tags"],
        [`/ann/orchard/compare/${commits.first}...main`, "compare"],
        ["/ann/orchard/src/branch/main/README.md", "markdown-file"]
      ] as const) {
        const response = await page.goto(url(path))
        expect(response?.status(), path).toBe(200)
        await chrome.check(page, `${name}-${colorScheme}`)
      }
    }
  })

  it("a private repository is the 404 page for someone who may not see it", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ben")
    const response = await page.goto(url("/ann/hidden"))
    expect(response?.status()).toBe(404)
    expect(await page.getByText("Page not found").count()).toBe(1)
    await chrome.check(page, "private-404")
  })
})

describe("the buttons", () => {
  it("stars (the buttons swapped in place) and forks", async () => {
    const { page } = await chrome.person()
    await signIn(page, "ben")
    await page.goto(url("/ann/orchard"))
    const star = page.getByTestId("star")
    expect(await star.textContent()).toContain("Star 0")
    await star.click()
    await expect.poll(() => page.getByTestId("unstar").textContent()).toContain("Unstar 1")
    // Swapped in place by htmx: still the same page, no navigation.
    expect(page.url()).toBe(url("/ann/orchard"))
    expect((await request(hearth, "GET", "/user/starred/ann/orchard", basic("ben"))).status).toBe(204)
    await chrome.check(page, "starred")
    await page.getByTestId("unstar").click()
    await expect.poll(() => page.getByTestId("star").textContent()).toContain("Star 0")

    await page.getByTestId("fork").click()
    await expect.poll(() => page.url()).toBe(url("/ann/orchard/fork"))
    await chrome.check(page, "fork-form")
    await page.getByLabel("Repository name").fill("my-orchard")
    await page.getByRole("button", { name: "Fork repository" }).click()
    await expect.poll(() => page.url()).toBe(url("/ben/my-orchard"))
    expect(await page.getByTestId("fork-of").textContent()).toContain("ann/orchard")
    expect(await page.getByTestId("latest-commit").textContent()).toContain("Prune the trees")
    await chrome.check(page, "fork")
  }, 60_000)

  it("the copy button copies a clone URL", async () => {
    const { context, page } = await chrome.person()
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: hearth.base })
    await page.goto(url("/ann/orchard"))
    await page.locator('button[data-copy="clone-http"]').click()
    await expect.poll(() => page.locator('button[data-copy="clone-http"]').textContent()).toContain("Copied")
    expect(await page.evaluate("navigator.clipboard.readText()")).toBe(url("/ann/orchard.git"))
    chrome.assertNoErrors()
  })
})

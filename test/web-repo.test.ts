// Issue 17, the repository pages over plain HTTP (no browser): the frame (badges, topics, tabs by
// unit, Settings for admins, star/watch/fork with CSRF), the home (clone URLs, branch menu, files
// with their last commits, README, languages; an empty repository's instructions), directories
// and files (line anchors, highlighting, images, markdown, binary and large files), raw files
// (content types, the sandbox CSP, nosniff), blame, history (paged), a commit's diff (unified and
// split), branches, tags and their archives, compare — on branch names with `/`, tags and commit
// ids alike; the API's access rules (a private repository is a 404 page, a renamed one redirects
// with the rest of the URL kept), compression, and the XSS corpus in file names, file contents,
// commit messages, branch names and descriptions. The browser tests are in
// web-repo-browser.test.ts.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus, JS } from "./support/xss.ts"

let hearth: Hearth
let work: string
const web = () => new WebClient(hearth.base)

/** A 1×1 PNG. */
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex"
)

const remote = (owner: string, repo: string) => {
  const u = new URL(`${hearth.base}/${owner}/${repo}.git`)
  u.username = owner
  u.password = "password123"
  return u.toString()
}

const write = (root: string, files: Record<string, string | Buffer>) => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true })
    writeFileSync(join(root, path), content)
  }
}

const commit = async (local: string, files: Record<string, string | Buffer>, message: string) => {
  write(local, files)
  await gitIn(local, ["add", "--all"])
  await gitIn(local, ["commit", "--quiet", "--allow-empty", "-m", message])
  return gitIn(local, ["rev-parse", "HEAD"])
}

const createRepo = async (owner: string, body: Record<string, unknown>) => {
  const res = await request(hearth, "POST", "/user/repos", basic(owner), body)
  expect(res.status, await res.clone().text()).toBe(201)
}

const TS = `// The garden's entry point.
import { readFileSync } from "node:fs"

export interface Plant {
  readonly name: string
  readonly height: number
}

export const tallest = (plants: ReadonlyArray<Plant>): Plant | undefined =>
  plants.reduce<Plant | undefined>((a, b) => (a === undefined || b.height > a.height ? b : a), undefined)

console.log(tallest(JSON.parse(readFileSync("plants.json", "utf8"))))
`

const README = `# The garden

A repository about plants, for @bob.

See [the guide](docs/guide.md) and the logo:

![logo](img/logo.png)
`

let garden: { first: string; second: string; feature: string; local: string }

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-web-repo-"))
  for (const username of ["alice", "bob", "carol"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })

  // alice/garden: two commits on main, a branch whose name holds `/`, an annotated tag.
  await createRepo("alice", { name: "garden", description: "Plants & <flowers>" })
  const local = join(work, "garden")
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  const first = await commit(
    local,
    {
      "README.md": README,
      "src/main.ts": TS,
      "img/logo.png": PNG,
      "img/icon.svg": '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"><script>alert(1)</script></svg>',
      "docs/guide.md": "# Guide\n\nRead [the README](../README.md).\n",
      "bin/data.bin": Buffer.from([0, 1, 2, 3, 0, 255]),
      "big.txt": `${"x".repeat(99)}\n`.repeat(11_000),
      "dir with space/file name.txt": "spaced\n"
    },
    "Plant the garden\n\nThe first commit, with a body."
  )
  await gitIn(local, ["tag", "-a", "v1.0", "-m", "The first release"])
  await gitIn(local, ["mv", "docs/guide.md", "docs/manual.md"])
  const second = await commit(
    local,
    { "src/main.ts": TS.replace("The garden's entry point.", "The garden's main module."), "notes.txt": "new\n" },
    "Water the plants"
  )
  await gitIn(local, ["checkout", "--quiet", "-b", "feature/deep/work"])
  const feature = await commit(local, { "src/main.ts": `${TS}// more\n` }, "Deep work on a branch")
  await gitIn(local, ["checkout", "--quiet", "main"])
  await gitIn(local, ["push", "--quiet", remote("alice", "garden"), "main", "feature/deep/work", "v1.0"])
  garden = { first, second, feature, local }
  expect(
    (await request(hearth, "PATCH", "/repos/alice/garden", basic("alice"), { website: "https://garden.example" }))
      .status
  ).toBe(200)
  expect(
    (await request(hearth, "PUT", "/repos/alice/garden/topics", basic("alice"), { topics: ["plants", "green"] })).status
  ).toBe(204)

  // alice/secret: private.
  await createRepo("alice", { name: "secret", private: true, auto_init: true, readme: "Default" })
  // alice/empty: nothing pushed.
  await createRepo("alice", { name: "empty" })
}, 180_000)

afterAll(async () => {
  await hearth?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

/** A signed-in client. */
const as = (username: string) => signedIn(hearth.base, username)

/** The raw response: status, headers and the bytes as sent (compressed or not). */
const rawGet = (path: string, headers: Record<string, string> = {}) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>(
    (resolve, reject) => {
      // The path exactly as given (a URL string would have its `..` resolved first).
      const { hostname, port } = new URL(hearth.base)
      const req = httpRequest({ hostname, port, path, headers }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }))
      })
      req.on("error", reject)
      req.end()
    }
  )

describe("the repository home", () => {
  it("shows the files with their last commits, the README, clone URLs, languages, topics and the branch menu", async () => {
    const page = await web().get("/alice/garden")
    expect(page.status).toBe(200)
    const text = page.text
    // The frame.
    expect(text).toContain('href="/alice">alice</a>')
    expect(text).toContain('<span class="Label ml-2">Public</span>')
    expect(text).toContain("Plants &amp; &lt;flowers&gt;")
    expect(text).toContain('href="https://garden.example"')
    const topics = /data-testid="repo-topics">([\s\S]*?)<\/p>/.exec(text)![1]!
    expect(topics).toContain('href="/explore/repos?q=plants">plants</a>')
    expect(topics).toContain('href="/explore/repos?q=green">green</a>')
    // The files, directories first, each with the subject of its last commit.
    const list = /data-testid="file-list">([\s\S]*?)<\/table>/.exec(text)![1]!
    const names = [...list.matchAll(/href="\/alice\/garden\/src\/branch\/main\/([^"]+)">/g)].map((m) => m[1])
    expect(names).toEqual(["bin", "dir%20with%20space", "docs", "img", "src", "README.md", "big.txt", "notes.txt"])
    expect(list).toMatch(/src\/branch\/main\/src">src<\/a>[\s\S]*?Water the plants/)
    expect(list).toMatch(/src\/branch\/main\/bin">bin<\/a>[\s\S]*?Plant the garden/)
    // The latest commit, the README rendered (links to src, images from raw), the clone URL.
    expect(text).toContain(`href="/alice/garden/commit/${garden.second}">Water the plants</a>`)
    expect(text).toMatch(/<h1 id="user-content-the-garden">The garden<\/h1>/)
    expect(text).toContain(`href="${hearth.base}/alice/garden/src/branch/main/docs/guide.md"`)
    expect(text).toContain(`src="${hearth.base}/alice/garden/raw/branch/main/img/logo.png"`)
    expect(text).toContain(`value="${hearth.base}/alice/garden.git"`)
    expect(text).toMatch(/<script src="\/assets\/copy\.[0-9a-f]{16}\.js" defer><\/script>/)
    // Languages, the branch menu (both branches, the tag).
    expect(text).toMatch(/data-testid="languages">[\s\S]*TypeScript/)
    const menu = /data-testid="ref-menu">([\s\S]*?)<\/details>/.exec(text)![1]!
    expect(menu).toContain('href="/alice/garden/src/branch/feature/deep/work"')
    expect(menu).toContain('href="/alice/garden/src/tag/v1.0"')
    expect(text).toContain("<strong>2</strong> branches")
  })

  it("renders the README once per blob, but mentions as each viewer may see them", async () => {
    await createUser(hearth, { username: "dora", visibility: "limited" })
    await createRepo("alice", { name: "mentions" })
    const readme = "# Hello\n\nThanks to @dora and @alice.\n"
    const made = await request(hearth, "POST", "/repos/alice/mentions/contents/README.md", basic("alice"), {
      content: Buffer.from(readme).toString("base64")
    })
    expect(made.status).toBe(201)
    // dora is limited: a visitor gets no link to her, a signed-in user does; the same blob twice each.
    for (let i = 0; i < 2; i++) {
      const visitor = (await web().get("/alice/mentions")).text
      expect(visitor).toContain(`href="${hearth.base}/alice"`)
      expect(visitor).not.toContain(`href="${hearth.base}/dora"`)
      const member = (await (await as("bob")).get("/alice/mentions")).text
      expect(member).toContain(`href="${hearth.base}/dora"`)
    }
  })

  it("shows an empty repository's push instructions", async () => {
    const page = await web().get("/alice/empty")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="empty-repo"')
    expect(page.text).toContain(`git remote add origin ${hearth.base}/alice/empty.git`)
    expect(page.text).toContain("git push -u origin main")
  })

  it("is compressed with brotli or gzip as the client accepts, within the budget", async () => {
    for (const [accept, encoding] of [
      ["br, gzip", "br"],
      ["gzip", "gzip"],
      ["identity", undefined]
    ] as const) {
      const res = await rawGet("/alice/garden", { "accept-encoding": accept })
      expect(res.status).toBe(200)
      expect(res.headers["content-encoding"], accept).toBe(encoding)
      expect(res.headers.vary).toContain("accept-encoding")
      const html =
        encoding === "br"
          ? brotliDecompressSync(res.body).toString()
          : encoding === "gzip"
            ? gunzipSync(res.body).toString()
            : res.body.toString()
      expect(html).toContain("The garden")
      if (encoding !== undefined) expect(res.body.length).toBeLessThan(html.length / 2)
    }
    // The stylesheet too, and page + stylesheet within the issue's 100 KB.
    const page = await rawGet("/alice/garden", { "accept-encoding": "br" })
    const css = /href="(\/assets\/hearth\.[0-9a-f]+\.css)"/.exec(brotliDecompressSync(page.body).toString())![1]!
    const sheet = await rawGet(css, { "accept-encoding": "br, gzip" })
    expect(sheet.headers["content-encoding"]).toBe("br")
    expect(page.body.length + sheet.body.length).toBeLessThan(100 * 1024)
  })
})

describe("who may see a repository", () => {
  it("a private repository is a 404 page for visitors and other users, on every page", async () => {
    const bob = await as("bob")
    const alice = await as("alice")
    for (const path of [
      "/alice/secret",
      "/alice/secret/src/branch/main",
      "/alice/secret/src/branch/main/README.md",
      "/alice/secret/raw/branch/main/README.md",
      "/alice/secret/blame/branch/main/README.md",
      "/alice/secret/commits/branch/main",
      "/alice/secret/branches",
      "/alice/secret/tags",
      "/alice/secret/compare/main...main"
    ]) {
      for (const client of [web(), bob]) {
        const page = await client.get(path)
        expect(page.status, path).toBe(404)
        expect(page.text, path).toContain("Page not found")
        expect(page.text, path).not.toContain("secret/")
      }
      expect((await alice.get(path)).status, path).toBeLessThan(400)
    }
    // Nor can they star or fork it.
    const home = await bob.get("/alice/garden")
    expect((await bob.post("/alice/secret/action/star", {}, csrfOf(home.text))).status).toBe(404)
  })

  it("tabs follow the units, and Settings is shown to admins only", async () => {
    const tabs = (html: string) => /aria-label="Repository">([\s\S]*?)<\/nav>/.exec(html)![1]!
    const before = tabs((await web().get("/alice/garden")).text)
    expect(before).toContain('href="/alice/garden/issues"')
    expect(before).toContain('href="/alice/garden/pulls"')
    expect(before).not.toContain('href="/alice/garden/settings"')
    const edit = await request(hearth, "PATCH", "/repos/alice/garden", basic("alice"), {
      has_issues: false,
      has_wiki: false
    })
    expect(edit.status).toBe(200)
    try {
      const after = tabs((await web().get("/alice/garden")).text)
      expect(after).not.toContain('href="/alice/garden/issues"')
      expect(after).not.toContain('href="/alice/garden/wiki"')
      expect(after).toContain('href="/alice/garden/pulls"')
      expect(tabs((await (await as("alice")).get("/alice/garden")).text)).toContain('href="/alice/garden/settings"')
      expect(tabs((await (await as("root")).get("/alice/garden")).text)).toContain('href="/alice/garden/settings"')
      expect(tabs((await (await as("bob")).get("/alice/garden")).text)).not.toContain("/settings")
    } finally {
      await request(hearth, "PATCH", "/repos/alice/garden", basic("alice"), { has_issues: true, has_wiki: true })
    }
  })

  it("a renamed repository redirects to its new name with the rest of the URL; a hidden one stays 404", async () => {
    await createRepo("alice", { name: "old-name", auto_init: true, readme: "Default" })
    expect((await request(hearth, "PATCH", "/repos/alice/old-name", basic("alice"), { name: "new-name" })).status).toBe(
      200
    )
    const moved = await web().get("/alice/old-name/src/branch/main/README.md?display=source")
    expect(moved.status).toBe(302)
    expect(moved.location).toBe("/alice/new-name/src/branch/main/README.md?display=source")
    expect((await web().get(moved.location!)).status).toBe(200)
    // Private now: the old name tells a visitor nothing.
    expect((await request(hearth, "PATCH", "/repos/alice/new-name", basic("alice"), { private: true })).status).toBe(
      200
    )
    expect((await web().get("/alice/old-name")).status).toBe(404)
    expect((await (await as("alice")).get("/alice/old-name")).location).toBe("/alice/new-name")
  })
})

describe("directories and files", () => {
  it("a directory lists its entries; a branch name with `/`, a tag and a commit id all resolve", async () => {
    const page = await web().get("/alice/garden/src/branch/main/src")
    expect(page.status).toBe(200)
    expect(page.text).toContain('href="/alice/garden/src/branch/main/src/main.ts">main.ts</a>')
    expect(page.text).toContain('title="Parent directory"')
    const deep = await web().get("/alice/garden/src/branch/feature/deep/work/src/main.ts")
    expect(deep.status).toBe(200)
    expect(deep.text).toContain("// more")
    expect(deep.text).toMatch(/<strong aria-current="page">main\.ts<\/strong>/)
    const branchRoot = await web().get("/alice/garden/src/branch/feature/deep/work")
    expect(branchRoot.status).toBe(200)
    expect(branchRoot.text).toContain("Deep work on a branch")
    const tag = await web().get("/alice/garden/src/tag/v1.0/docs")
    expect(tag.status).toBe(200)
    expect(tag.text).toContain("guide.md")
    const byCommit = await web().get(`/alice/garden/src/commit/${garden.first.slice(0, 10)}/docs/guide.md`)
    expect(byCommit.status).toBe(200)
    expect(byCommit.text).toContain("Read <a")
    for (const missing of [
      "/alice/garden/src/branch/nope",
      "/alice/garden/src/branch/feature/deep",
      "/alice/garden/src/branch/main/no/such/file",
      "/alice/garden/src/tag/v2",
      "/alice/garden/src/commit/0123456789/README.md",
      "/alice/garden/src/commit/not-hex"
    ]) {
      expect((await web().get(missing)).status, missing).toBe(404)
    }
    // `..` as sent (a browser would resolve it first) names nothing.
    expect((await rawGet("/alice/garden/src/branch/main/src/../README.md")).status).toBe(404)
    expect((await rawGet("/alice/garden/raw/branch/main/src/%2e%2e/README.md")).status).toBe(404)
  })

  it("a file is highlighted, one anchored row per line, with raw, blame and history links", async () => {
    const page = await web().get("/alice/garden/src/branch/main/src/main.ts")
    expect(page.status).toBe(200)
    const lines = TS.split("\n").length - 1
    expect(page.text).toContain(`${lines} lines`)
    expect(page.text).toContain("TypeScript")
    expect(page.text).toContain('<tr id="L1"><td class="hearth-num"><a href="#L1">1</a></td>')
    expect(page.text).toContain(`<tr id="L${lines}">`)
    expect(page.text).not.toContain(`<tr id="L${lines + 1}">`)
    expect(page.text).toContain('<span class="hljs-keyword">export</span>')
    expect(page.text).toContain('href="/alice/garden/raw/branch/main/src/main.ts"')
    expect(page.text).toContain('href="/alice/garden/blame/branch/main/src/main.ts"')
    expect(page.text).toContain('href="/alice/garden/commits/branch/main/src/main.ts"')
    // Its last commit, loaded by htmx from a fragment of its own.
    expect(page.text).toContain(`hx-get="/alice/garden/lastcommit/${garden.second}/src/main.ts" hx-trigger="load"`)
    const last = await web().get(`/alice/garden/lastcommit/${garden.second}/src/main.ts`)
    expect(last.status).toBe(200)
    expect(last.text).toMatch(/^<div class="Box-header[^"]*" data-testid="latest-commit">/)
    expect(last.text).toContain(`href="/alice/garden/commit/${garden.second}">Water the plants</a>`)
    const older = await web().get(`/alice/garden/lastcommit/${garden.second}/img/logo.png`)
    expect(older.text).toContain(`href="/alice/garden/commit/${garden.first}">Plant the garden</a>`)
    expect((await web().get(`/alice/garden/lastcommit/${garden.second}/nope`)).status).toBe(404)
    const secret = (await (
      await request(hearth, "GET", "/repos/alice/secret/branches/main", basic("alice"))
    ).json()) as {
      commit: { id: string }
    }
    expect((await web().get(`/alice/secret/lastcommit/${secret.commit.id}/README.md`)).status).toBe(404)
    expect((await (await as("alice")).get(`/alice/secret/lastcommit/${secret.commit.id}/README.md`)).status).toBe(200)
  })

  it("images are shown, markdown rendered (or its source), binary and large files are links to raw", async () => {
    const image = await web().get("/alice/garden/src/branch/main/img/logo.png")
    expect(image.text).toContain(
      '<img class="hearth-image" src="/alice/garden/raw/branch/main/img/logo.png" alt="logo.png">'
    )
    const svg = await web().get("/alice/garden/src/branch/main/img/icon.svg")
    expect(svg.text).toContain('src="/alice/garden/raw/branch/main/img/icon.svg"')
    const md = await web().get("/alice/garden/src/tag/v1.0/docs/guide.md")
    expect(md.text).toMatch(/data-testid="markdown-file">[\s\S]*<h1 id="user-content-guide">Guide<\/h1>/)
    expect(md.text).toContain(`href="${hearth.base}/alice/garden/src/tag/v1.0/docs/../README.md"`)
    const source = await web().get("/alice/garden/src/tag/v1.0/docs/guide.md?display=source")
    expect(source.text).toContain('<tr id="L1">')
    expect(source.text).not.toContain('data-testid="markdown-file"')
    const binary = await web().get("/alice/garden/src/branch/main/bin/data.bin")
    expect(binary.text).toContain("Binary file not shown.")
    expect(binary.text).toContain('href="/alice/garden/raw/branch/main/bin/data.bin" download="data.bin"')
    const big = await web().get("/alice/garden/src/branch/main/big.txt")
    expect(big.text).toContain("This file is too large to show")
    expect(big.text).not.toContain('<tr id="L1">')
    const spaced = await web().get("/alice/garden/src/branch/main/dir%20with%20space/file%20name.txt")
    expect(spaced.status).toBe(200)
    expect(spaced.text).toContain("spaced")
  })
})

describe("raw files", () => {
  it("are served with their content type, nosniff and the sandbox CSP", async () => {
    const cases: ReadonlyArray<readonly [string, string, string]> = [
      ["/alice/garden/raw/branch/main/src/main.ts", "text/plain; charset=utf-8", "inline"],
      ["/alice/garden/raw/branch/main/img/logo.png", "image/png", "inline"],
      ["/alice/garden/raw/branch/main/img/icon.svg", "image/svg+xml", "inline"],
      ["/alice/garden/raw/branch/main/bin/data.bin", "application/octet-stream", "attachment"],
      ["/alice/garden/raw/branch/feature/deep/work/src/main.ts", "text/plain; charset=utf-8", "inline"],
      ["/alice/garden/raw/tag/v1.0/docs/guide.md", "text/plain; charset=utf-8", "inline"],
      [`/alice/garden/raw/commit/${garden.first}/README.md`, "text/plain; charset=utf-8", "inline"]
    ]
    for (const [path, type, disposition] of cases) {
      const res = await fetch(`${hearth.base}${path}`)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("content-type"), path).toBe(type)
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff")
      expect(res.headers.get("content-security-policy"), path).toBe(
        "default-src 'none'; style-src 'unsafe-inline'; sandbox"
      )
      expect(res.headers.get("content-disposition"), path).toMatch(new RegExp(`^${disposition}; filename\\*=UTF-8''`))
    }
    expect(
      Buffer.from(await (await fetch(`${hearth.base}/alice/garden/raw/branch/main/img/logo.png`)).arrayBuffer())
    ).toEqual(PNG)
    expect(await (await fetch(`${hearth.base}/alice/garden/raw/branch/feature/deep/work/src/main.ts`)).text()).toBe(
      `${TS}// more\n`
    )
    for (const missing of [
      "/alice/garden/raw/branch/main/src",
      "/alice/garden/raw/branch/main/nope",
      "/alice/garden/raw/branch/main"
    ]) {
      expect((await fetch(`${hearth.base}${missing}`)).status, missing).toBe(404)
    }
  })
})

describe("history", () => {
  it("blame shows each line's last commit", async () => {
    const page = await web().get("/alice/garden/blame/branch/main/src/main.ts")
    expect(page.status).toBe(200)
    const blame = /data-testid="blame">([\s\S]*)/.exec(page.text)![1]!
    // Line 1 was changed by the second commit, the rest come from the first.
    expect(blame).toMatch(
      new RegExp(
        `<tr id="L1" class="hearth-blame-first"><td class="hearth-blame-commit" rowspan="1"><a class="Link--primary" href="/alice/garden/commit/${garden.second}"`
      )
    )
    expect(blame).toMatch(
      new RegExp(
        `<tr id="L2" class="hearth-blame-first"><td class="hearth-blame-commit" rowspan="${TS.split("\n").length - 2}"><a class="Link--primary" href="/alice/garden/commit/${garden.first}"`
      )
    )
    expect((await web().get("/alice/garden/blame/branch/main/bin/data.bin")).text).toContain("have no blame")
  })

  it("the history of a branch and of a path, paged", async () => {
    const all = await web().get("/alice/garden/commits/branch/feature/deep/work")
    expect(all.status).toBe(200)
    expect(all.text).toContain("3 commits")
    const subjects = [...all.text.matchAll(/class="text-bold Link--primary wb-break-word" href="[^"]+">([^<]+)</g)].map(
      (m) => m[1]
    )
    expect(subjects).toEqual(["Deep work on a branch", "Water the plants", "Plant the garden"])
    const path = await web().get("/alice/garden/commits/branch/main/notes.txt")
    expect(path.text).toContain("1 commit changed notes.txt")
    expect((await web().get("/alice/garden/commits/branch/main/no-such-file")).status).toBe(404)

    // 55 more commits: two pages of 50.
    await createRepo("alice", { name: "long" })
    const local = join(work, "long")
    await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
    for (let i = 1; i <= 55; i++) await commit(local, {}, `Commit number ${i}`)
    await gitIn(local, ["push", "--quiet", remote("alice", "long"), "main"])
    const first = await web().get("/alice/long/commits/branch/main")
    expect(first.text).toContain("55 commits")
    expect(first.text.match(/class="Box-row d-flex flex-items-start"/g)).toHaveLength(50)
    expect(first.text).toContain("Commit number 55")
    expect(first.text).toContain('rel="next" href="/alice/long/commits/branch/main?page=2"')
    const second = await web().get("/alice/long/commits/branch/main?page=2")
    expect(second.text.match(/class="Box-row d-flex flex-items-start"/g)).toHaveLength(5)
    expect(second.text).toContain("Commit number 1<")
  }, 60_000)

  it("a commit shows its message, parents and diff, unified or split", async () => {
    const page = await web().get(`/alice/garden/commit/${garden.second}`)
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="commit-title">Water the plants</h1>')
    expect(page.text).toContain(
      `href="/alice/garden/commit/${garden.first}" data-testid="parent">${garden.first.slice(0, 10)}</a>`
    )
    expect(page.text).toMatch(/Showing <strong>3 changed files<\/strong>/)
    const files = [
      ...page.text.matchAll(/<span class="Label (Label--\w+) mr-2">(\w+)<\/span>\s*<h3[^>]*>([\s\S]*?)<\/h3>/g)
    ].map((m) => [m[2], m[3]!.replace(/<svg[\s\S]*?<\/svg>/, "→").replace(/\s+/g, " ")])
    expect(files).toEqual([
      ["Renamed", "docs/guide.md → docs/manual.md"],
      ["Added", "notes.txt"],
      ["Modified", "src/main.ts"]
    ])
    expect(page.text).toContain("File renamed without changes.")
    // Unified by default: one table per file with text, old and new numbers; the changed line highlighted.
    expect(page.text).not.toContain("hearth-split")
    expect(page.text).toMatch(
      /<tr class="hearth-del"><td class="hearth-num">1<\/td><td class="hearth-num"><\/td><td class="hearth-sign">-<\/td><td class="hearth-text"><span class="hljs-comment">\/\/ The garden&#x27;s entry point.<\/span><\/td><\/tr>/
    )
    expect(page.text).toMatch(
      /<tr class="hearth-add"><td class="hearth-num"><\/td><td class="hearth-num">1<\/td><td class="hearth-sign">\+<\/td>/
    )
    const split = await web().get(`/alice/garden/commit/${garden.second}?style=split`)
    expect(split.text).toContain('<table class="hearth-code hearth-split highlight">')
    expect(split.text).toMatch(
      /<td class="hearth-num hearth-del-cell">1<\/td><td class="hearth-text hearth-del-cell">[\s\S]*?<\/td><td class="hearth-num hearth-add-cell">1<\/td>/
    )
    expect(split.text).toMatch(
      /data-testid="style-split" aria-current="true"|aria-current="true" data-testid="style-split"/
    )
    // A root commit: everything added, no parent; a short id works; nonsense is 404.
    const root = await web().get(`/alice/garden/commit/${garden.first.slice(0, 8)}`)
    expect(root.text).toContain("No parent")
    expect(root.text).toContain("Binary file not shown.")
    expect(root.text).toContain("The first commit, with a body.")
    for (const missing of [
      "/alice/garden/commit/zzzz",
      "/alice/garden/commit/0000000000",
      "/alice/garden/commit/main"
    ]) {
      expect((await web().get(missing)).status, missing).toBe(404)
    }
  })
})

describe("branches, tags, compare", () => {
  it("lists branches (the default first) and tags with their downloads", async () => {
    const branches = await web().get("/alice/garden/branches")
    expect(branches.status).toBe(200)
    const names = [...branches.text.matchAll(/class="text-bold wb-break-word" href="[^"]+">([^<]+)</g)].map((m) => m[1])
    expect(names).toEqual(["main", "feature/deep/work"])
    expect(branches.text).toContain('href="/alice/garden/compare/main...feature/deep/work"')
    const tags = await web().get("/alice/garden/tags")
    expect(tags.text).toContain('href="/alice/garden/src/tag/v1.0">v1.0</a>')
    expect(tags.text).toContain("The first release")
    expect(tags.text).toContain('href="/alice/garden/archive/v1.0.zip"')
    const zip = await fetch(`${hearth.base}/alice/garden/archive/v1.0.zip`)
    expect(zip.status).toBe(200)
    expect(zip.headers.get("content-type")).toBe("application/zip")
    expect(
      Buffer.from(await zip.arrayBuffer())
        .subarray(0, 2)
        .toString()
    ).toBe("PK")
    expect((await fetch(`${hearth.base}/alice/garden/archive/nope.zip`)).status).toBe(404)
  })

  it("the branch menu follows new, moved and deleted refs (the list is kept only while they are unchanged)", async () => {
    const menu = async () =>
      /data-testid="ref-menu">([\s\S]*?)<\/details>/.exec((await web().get("/alice/garden")).text)![1]!
    const settle = () => new Promise((resolve) => setTimeout(resolve, 250))
    await menu()
    await settle()
    expect(await menu()).not.toContain("/src/branch/feature/deep/other")
    // A branch in an existing sub-directory of refs/heads, then a tag, then both gone.
    const branch = await request(hearth, "POST", "/repos/alice/garden/branches", basic("alice"), {
      new_branch_name: "feature/deep/other",
      old_ref_name: garden.first
    })
    expect(branch.status).toBe(201)
    expect(await menu()).toContain('href="/alice/garden/src/branch/feature/deep/other"')
    await settle()
    expect(await menu()).toContain('href="/alice/garden/src/branch/feature/deep/other"')
    expect(
      (await request(hearth, "POST", "/repos/alice/garden/tags", basic("alice"), { tag_name: "v1.1" })).status
    ).toBe(201)
    expect(await menu()).toContain('href="/alice/garden/src/tag/v1.1"')
    await settle()
    expect(
      (await request(hearth, "DELETE", "/repos/alice/garden/branches/feature/deep/other", basic("alice"))).status
    ).toBe(204)
    expect((await request(hearth, "DELETE", "/repos/alice/garden/tags/v1.1", basic("alice"))).status).toBe(204)
    const after = await menu()
    expect(after).not.toContain("/src/branch/feature/deep/other")
    expect(after).not.toContain("/src/tag/v1.1")
  })

  it("compares two branches (names with `/`), and redirects the compare form", async () => {
    for (const path of [
      "/alice/garden/compare/main...feature/deep/work",
      "/alice/garden/compare/main...feature%2Fdeep%2Fwork"
    ]) {
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(page.text).toContain("1 commit")
      expect(page.text).toContain("Deep work on a branch")
      expect(page.text).toMatch(/Showing <strong>1 changed file<\/strong>/)
      expect(page.text).toContain("// more")
    }
    const same = await web().get("/alice/garden/compare/feature/deep/work...main")
    expect(same.text).toContain('data-testid="compare-same"')
    const byTag = await web().get(`/alice/garden/compare/v1.0...${garden.second}`)
    expect(byTag.text).toContain("Water the plants")
    expect((await web().get("/alice/garden/compare/main...nope")).status).toBe(404)
    expect((await web().get("/alice/garden/compare/main")).status).toBe(404)
    const form = await web().get("/alice/garden/compare")
    expect(form.status).toBe(200)
    const redirected = await web().get("/alice/garden/compare?base=main&head=feature/deep/work")
    expect(redirected.location).toBe("/alice/garden/compare/main...feature/deep/work")
  })
})

describe("star, watch and fork", () => {
  const counts = (html: string) => {
    const buttons = /data-testid="repo-social">([\s\S]*?)<\/div>/.exec(html)![1]!
    const of = (name: string) => Number(new RegExp(`${name} <span class="Counter">(\\d+)<`).exec(buttons)?.[1])
    return { watch: of("(?:Un)?[Ww]atch"), star: of("(?:Un)?[Ss]tar"), fork: of("Fork") }
  }

  it("stars and watches with forms (CSRF checked), and swaps the buttons for htmx", async () => {
    const carol = await as("carol")
    const home = await carol.get("/alice/garden")
    const before = counts(home.text)
    expect(home.text).toContain('action="/alice/garden/action/star"')
    // Without the token nothing changes.
    expect((await carol.post("/alice/garden/action/star", {}, undefined)).status).toBe(400)
    expect(counts((await carol.get("/alice/garden")).text)).toEqual(before)
    const starred = await carol.post(
      "/alice/garden/action/star",
      { redirect_to: "/alice/garden/branches" },
      csrfOf(home.text)
    )
    expect(starred.status).toBe(303)
    expect(starred.location).toBe("/alice/garden/branches")
    const after = await carol.get("/alice/garden")
    expect(counts(after.text)).toEqual({ ...before, star: before.star + 1 })
    expect(after.text).toContain('action="/alice/garden/action/unstar"')
    expect((await request(hearth, "GET", "/user/starred/alice/garden", basic("carol"))).status).toBe(204)
    // htmx: the buttons alone, with the new counts.
    const watched = await carol.request("POST", "/alice/garden/action/watch", {
      body: new URLSearchParams({ _csrf: csrfOf(after.text) }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", "hx-request": "true" }
    })
    expect(watched.status).toBe(200)
    expect(watched.text).toMatch(/^<div class="d-flex flex-items-center" id="repo-social"/)
    expect(watched.text).toContain('action="/alice/garden/action/unwatch"')
    expect(counts(watched.text).watch).toBe(before.watch + 1)
    const unstarred = await carol.post("/alice/garden/action/unstar", {}, csrfOf(after.text))
    expect(unstarred.location).toBe("/alice/garden")
    expect((await request(hearth, "GET", "/user/starred/alice/garden", basic("carol"))).status).toBe(404)
    // Visitors are sent to sign in.
    const visitor = await web().get("/alice/garden")
    expect(visitor.text).toContain('href="/user/login?redirect_to=%2Falice%2Fgarden"')
    const anonymous = await web().post("/alice/garden/action/star", {}, undefined)
    expect(anonymous.status).toBe(303)
    expect(anonymous.location).toMatch(/^\/user\/login/)
  })

  it("forks into the viewer's account, refusing a taken name next to the field", async () => {
    const bob = await as("bob")
    const form = await bob.get("/alice/garden/fork")
    expect(form.status).toBe(200)
    expect(form.text).toContain('value="garden"')
    const made = await bob.post("/alice/garden/fork", { repo_name: "my-garden" }, csrfOf(form.text))
    expect(made.status).toBe(303)
    expect(made.location).toBe("/bob/my-garden")
    const fork = await bob.get("/bob/my-garden")
    expect(fork.status).toBe(200)
    expect(fork.text).toMatch(/data-testid="fork-of">forked from <a href="\/alice\/garden">alice\/garden<\/a>/)
    expect(fork.text).toContain("Water the plants")
    expect(counts((await web().get("/alice/garden")).text).fork).toBe(1)
    const again = await bob.post("/alice/garden/fork", { repo_name: "other" }, csrfOf(form.text))
    expect(again.status).toBe(422)
    expect(again.text).toContain('data-testid="error-repo_name"')
    expect(again.text).toContain('value="other"')
    expect((await web().get("/alice/garden/fork")).location).toMatch(/^\/user\/login/)
  }, 60_000)
})

describe("HTML escaping (the XSS corpus)", () => {
  /** Executable constructs among the page's real tags (text holds no "<": it is escaped). */
  const executable = (html: string): ReadonlyArray<string> => {
    const found: Array<string> = []
    const tags = html.match(/<[a-zA-Z][^>]*>/g) ?? []
    for (const tag of tags) {
      const name = /^<([a-zA-Z0-9]+)/.exec(tag)![1]!.toLowerCase()
      if (name === "script" && !/^<script src="\/assets\/(?:htmx|copy)\.[0-9a-f]{16}\.js" defer>$/.test(tag))
        found.push(`a script: ${tag}`)
      if (["iframe", "object", "embed", "math", "base", "style", "video", "audio", "frame", "form"].includes(name)) {
        if (!(name === "form" && /\smethod="(?:post|get)"/.test(tag) && /\saction="\/[^"]*"/.test(tag)))
          found.push(`a ${name} element: ${tag}`)
      }
      if (/\son[a-z]+\s*=/i.test(tag)) found.push(`an event handler: ${tag}`)
      if (
        /(?:href|src|action|formaction|data|srcset|xlink:href)\s*=\s*["']?\s*(?:javascript|vbscript|data):/i.test(tag)
      )
        found.push(`a script URL: ${tag}`)
      if (name === "svg" && !/^<svg (?:class="octicon|class="hearth-langbar|width="8")/.test(tag))
        found.push(`a foreign svg: ${tag}`)
      if (name === "meta" && /http-equiv/i.test(tag)) found.push(`a meta refresh: ${tag}`)
    }
    return found
  }

  it("file names, file contents, commit messages, branch names and descriptions are text on every page", async () => {
    await createRepo("alice", { name: "hostile", description: corpus.slice(0, 5).join(" ") })
    const local = join(work, "hostile")
    await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
    // File names: the corpus without `/` (git's separator), NUL and line breaks.
    const names = corpus.slice(0, 40).map((s, i) => `${i}-${s.replace(/[/\0\n\r]/g, "_").slice(0, 120)}`)
    const files: Record<string, string> = {}
    names.forEach((name, i) => {
      files[`x/${name}.md`] = `${corpus[i]}\n`
      files[`y/${name}.ts`] = `const a = "${corpus[i]}"\n// ${corpus[i]}\n`
    })
    files["README.md"] = corpus.join("\n\n")
    for (let i = 0; i < corpus.length; i += 20) {
      await commit(local, i === 0 ? files : { [`z/${i}.txt`]: corpus[i]! }, corpus.slice(i, i + 20).join("\n\n"))
    }
    const branch = `"><svg-onload=alert(1)>`
    await gitIn(local, ["branch", branch])
    await gitIn(local, ["push", "--quiet", remote("alice", "hostile"), "main", branch])
    const head = await gitIn(local, ["rev-parse", "HEAD"])
    const root = await gitIn(local, ["rev-list", "--max-parents=0", "HEAD"])

    const pages = [
      "/alice/hostile",
      "/alice/hostile/src/branch/main/x",
      "/alice/hostile/src/branch/main/y",
      `/alice/hostile/src/branch/main/x/${encodeURIComponent(`${names[2]}.md`)}`,
      `/alice/hostile/src/branch/main/y/${encodeURIComponent(`${names[2]}.ts`)}`,
      `/alice/hostile/blame/branch/main/y/${encodeURIComponent(`${names[0]}.ts`)}`,
      `/alice/hostile/lastcommit/${head}/y/${encodeURIComponent(`${names[0]}.ts`)}`,
      "/alice/hostile/commits/branch/main",
      `/alice/hostile/commit/${head}`,
      `/alice/hostile/commit/${root}`,
      `/alice/hostile/commit/${root}?style=split`,
      "/alice/hostile/branches",
      `/alice/hostile/src/branch/${encodeURIComponent(branch)}`,
      `/alice/hostile/compare/main...${encodeURIComponent(branch)}`
    ]
    for (const path of pages) {
      const page = await web().get(path)
      expect(page.status, path).toBe(200)
      expect(executable(page.text), path).toEqual([])
    }
    // Each file's page shows its name and content as text.
    for (let i = 0; i < names.length; i += 7) {
      const page = await web().get(`/alice/hostile/src/branch/main/y/${encodeURIComponent(`${names[i]}.ts`)}`)
      expect(page.status, names[i]).toBe(200)
      expect(executable(page.text), names[i]).toEqual([])
    }
    const home = await web().get("/alice/hostile")
    expect(home.text).toContain("&lt;script&gt;alert(1)&lt;/script&gt;")
    const code = await web().get(`/alice/hostile/src/branch/main/y/${encodeURIComponent(`${names[0]}.ts`)}`)
    expect(code.text).toContain(`&lt;script&gt;${JS}&lt;/script&gt;`)
  }, 120_000)
})

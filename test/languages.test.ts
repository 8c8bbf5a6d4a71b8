// GET /repos/{o}/{r}/languages: bytes per language of the default branch (Forgejo's
// GetLanguageStats), with enry's exclusions, kept until the next push.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { languageStats } from "../src/languages/Detect.ts"
import { eventually } from "./support/federation.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string

const remote = (repo: string) => {
  const u = new URL(`${hearth.base}/alice/${repo}.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}
const bare = (repo: string) => join(hearth.settings.repository.ROOT, "alice", `${repo}.git`)

/** A clone of a new repository `name` holding `files` (path → content), committed and pushed. */
const pushRepo = async (name: string, files: Record<string, string>, priv = false) => {
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })).status).toBe(201)
  const local = join(work, name)
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  await commitFiles(local, files)
  await gitIn(local, ["push", "--quiet", remote(name), "main"])
  return local
}
const commitFiles = async (local: string, files: Record<string, string>) => {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(local, path)), { recursive: true })
    writeFileSync(join(local, path), content)
  }
  await gitIn(local, ["add", "--all"])
  await gitIn(local, ["commit", "--quiet", "-m", "files"])
}

let mixed = ""
beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-languages-"))
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  mixed = await pushRepo("mixed", {
    "src/main.ts": "x".repeat(100),
    "src/view.tsx": "x".repeat(50),
    "lib/util.go": "x".repeat(30),
    Makefile: "x".repeat(20),
    "README.md": "x".repeat(1000),
    "docs/guide.py": "x".repeat(1000),
    "node_modules/dep/index.js": "x".repeat(1000),
    "vendor/lib.c": "x".repeat(1000),
    ".github/workflows/ci.py": "x".repeat(1000),
    "package.json": "x".repeat(1000),
    "package-lock.json": "x".repeat(1000),
    "app.min.js": "x".repeat(1000),
    "empty.c": "",
    "notes.unknownext": "x".repeat(1000)
  })
  symlinkSync("src/main.ts", join(mixed, "link.rb"))
  await commitFiles(mixed, {})
  await gitIn(mixed, ["push", "--quiet", remote("mixed"), "main"])
  await pushRepo("data", { "table.csv": "x".repeat(12), "more.csv": "x".repeat(8) })
  await pushRepo("secret", { "a.rs": "x".repeat(5) }, true)
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "empty" })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("GET /repos/{owner}/{repo}/languages", () => {
  it("counts the bytes of each language, TSX as TypeScript, leaving out vendored, dot, documentation, configuration, generated, empty files and symlinks", async () => {
    const res = await request(hearth, "GET", "/repos/alice/mixed/languages")
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toEqual({ Go: 30, Makefile: 20, TypeScript: 150 })
    // Keys in byte order, as Forgejo's JSON of a Go map.
    expect(Object.keys(body)).toEqual(["Go", "Makefile", "TypeScript"])
  })

  it("answers the first data language when no programming or markup language is found", async () => {
    expect(await json(await request(hearth, "GET", "/repos/alice/data/languages"))).toEqual({ CSV: 20 })
  })

  it("answers {} for an empty repository and 404 for one the caller may not see", async () => {
    expect(await json(await request(hearth, "GET", "/repos/alice/empty/languages"))).toEqual({})
    expect((await request(hearth, "GET", "/repos/alice/secret/languages")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/languages", basic("bob"))).status).toBe(404)
    expect(await json(await request(hearth, "GET", "/repos/alice/secret/languages", basic("alice")))).toEqual({
      Rust: 5
    })
    expect((await request(hearth, "GET", "/repos/alice/nope/languages")).status).toBe(404)
  })

  it("keeps the answer until the next push, then counts the new tree", async () => {
    const before = await json(await request(hearth, "GET", "/repos/alice/mixed/languages"))
    // A commit that reaches the repository behind Hearth's back: not seen, the answer is kept.
    await commitFiles(mixed, { "lib/extra.py": "x".repeat(7) })
    await gitIn(mixed, ["push", "--quiet", bare("mixed"), "main"])
    expect(await json(await request(hearth, "GET", "/repos/alice/mixed/languages"))).toEqual(before)
    // A push through Hearth: counted again.
    await commitFiles(mixed, { "lib/more.rs": "x".repeat(40) })
    await gitIn(mixed, ["push", "--quiet", remote("mixed"), "main"])
    expect(await json(await request(hearth, "GET", "/repos/alice/mixed/languages"))).toEqual({
      Go: 30,
      Makefile: 20,
      Python: 7,
      Rust: 40,
      TypeScript: 150
    })
  })
})

describe("the Repository's language", () => {
  /** The repository's `language` once it is `expected` (counted after the push's answer). */
  const languageBecomes = (repo: string, expected: string) =>
    eventually(
      async () => {
        const body = await json(await request(hearth, "GET", `/repos/alice/${repo}`, basic("alice")))
        return body.language === expected ? body.language : undefined
      },
      15_000,
      `${repo}'s language to be ${expected}`
    )

  it("is the largest language, counted after each push without anyone asking", async () => {
    const local = await pushRepo("solo", { "main.go": "x".repeat(10) })
    expect(await languageBecomes("solo", "Go")).toBe("Go")
    await commitFiles(local, { "big.rs": "x".repeat(100) })
    await gitIn(local, ["push", "--quiet", remote("solo"), "main"])
    expect(await languageBecomes("solo", "Rust")).toBe("Rust")
    expect(await languageBecomes("mixed", "TypeScript")).toBe("TypeScript")
    expect(await languageBecomes("data", "CSV")).toBe("CSV")
    expect((await json(await request(hearth, "GET", "/repos/alice/empty"))).language).toBe("")
  })
})

describe("languageStats", () => {
  it("resolves an extension several languages claim as enry usually does, and the longest extension first", () => {
    const stats = languageStats([
      { path: "a.h", size: 1 },
      { path: "b.pl", size: 2 },
      { path: "c.m", size: 4 },
      { path: "types.d.ts", size: 8 },
      { path: "Dockerfile", size: 16 }
    ])
    expect(stats).toEqual({ C: 1, Dockerfile: 16, "Objective-C": 4, Perl: 2, TypeScript: 8 })
  })
})

// Git over HTTP against a running Hearth with the real `git` client: repositories created through
// the API are cloned and pushed at {ROOT_URL}{owner}/{repo}.git with the API's access rules
// (issue 3 items 5 and 11).
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-git-http-"))
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["public-repo", false],
    ["secret", true]
  ] as const) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })
    expect(res.status).toBe(201)
  }
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

interface Result {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
}

const git = (args: ReadonlyArray<string>, cwd = work) =>
  new Promise<Result>((done) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com"
    })
    execFile("git", args as Array<string>, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stdout, stderr })
    )
  })

/** The clone URL, with credentials in it when given. */
const url = (repo: string, user?: string, secret = "password123") => {
  const u = new URL(`${hearth.base}/${repo}.git`)
  if (user !== undefined) {
    u.username = user
    u.password = secret
  }
  return u.toString()
}

let unique = 0
const dir = () => join(work, `w${++unique}`)

describe("git over HTTP", () => {
  it("clones an empty repository, pushes to it, and the API learns about the push", async () => {
    const local = dir()
    expect((await git(["clone", url("alice/public-repo", "alice"), local])).code).toBe(0)
    writeFileSync(join(local, "README.md"), "# hello\n")
    writeFileSync(join(local, "noise.bin"), randomBytes(200 * 1024)) // incompressible: the size shows
    expect((await git(["add", "README.md", "noise.bin"], local)).code).toBe(0)
    expect((await git(["commit", "-m", "first"], local)).code).toBe(0)
    const pushed = await git(["push", "origin", "HEAD:refs/heads/main"], local)
    expect(pushed.code, pushed.stderr).toBe(0)
    const repo = await json(await request(hearth, "GET", "/repos/alice/public-repo"))
    expect(repo).toMatchObject({ empty: false, default_branch: "main" })
    expect(repo.size).toBeGreaterThanOrEqual(150) // KiB
  })

  it("lets anyone clone a public repository, without credentials", async () => {
    const local = dir()
    const cloned = await git(["clone", url("alice/public-repo"), local])
    expect(cloned.code, cloned.stderr).toBe(0)
    expect((await git(["log", "--format=%s"], local)).stdout.trim()).toBe("first")
  })

  it("asks for credentials for pushes and for private repositories, and hides them from others", async () => {
    const anonymousPush = dir()
    await git(["clone", url("alice/public-repo"), anonymousPush])
    await git(["commit", "--allow-empty", "-m", "x"], anonymousPush)
    const refused = await git(["push", "origin", "HEAD:refs/heads/main"], anonymousPush)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/Authentication failed|could not read Username|401/)

    const info = await fetch(`${hearth.base}/alice/secret.git/info/refs?service=git-upload-pack`)
    expect(info.status).toBe(401)
    expect(info.headers.get("www-authenticate")).toMatch(/^Basic /)
    expect((await git(["clone", url("alice/secret"), dir()])).code).not.toBe(0)
    // bob is signed in but may not read it: it does not exist for him.
    const asBob = await fetch(`${hearth.base}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: basic("bob") }
    })
    expect(asBob.status).toBe(404)
    const owned = await git(["clone", url("alice/secret", "alice"), dir()])
    expect(owned.code, owned.stderr).toBe(0)
  })

  it("accepts a token as password, with the scopes it has", async () => {
    const writer = await createToken(hearth, "alice", ["write:repository"])
    const local = dir()
    expect((await git(["clone", url("alice/public-repo", "alice", writer), local])).code).toBe(0)
    await git(["commit", "--allow-empty", "-m", "by token"], local)
    const pushed = await git(["push", "origin", "HEAD:refs/heads/main"], local)
    expect(pushed.code, pushed.stderr).toBe(0)

    const reader = await createToken(hearth, "alice", ["read:repository"])
    const readOnly = dir()
    expect((await git(["clone", url("alice/public-repo", "alice", reader), readOnly])).code).toBe(0)
    await git(["commit", "--allow-empty", "-m", "refused"], readOnly)
    const refused = await git(["push", "origin", "HEAD:refs/heads/main"], readOnly)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toMatch(/403/)

    const userOnly = await createToken(hearth, "alice", ["read:user"])
    const res = await fetch(`${hearth.base}/alice/secret.git/info/refs?service=git-upload-pack`, {
      headers: { authorization: basic("alice", userOnly) }
    })
    expect(res.status).toBe(403)
  })

  it("refuses pushes from those who may read but not write (in the pre-receive hook: they may open AGit pull requests), and non-fast-forward pushes", async () => {
    const asBob = dir()
    expect((await git(["clone", url("alice/public-repo", "bob"), asBob])).code).toBe(0)
    await git(["commit", "--allow-empty", "-m", "bob"], asBob)
    const refused = await git(["push", "origin", "HEAD:refs/heads/main"], asBob)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain("User 'bob' is not allowed to push to branch 'main' in 'alice/public-repo'.")

    const behind = dir()
    await git(["clone", url("alice/public-repo", "alice"), behind])
    await git(["reset", "--hard", "HEAD~1"], behind)
    await git(["commit", "--allow-empty", "-m", "diverged"], behind)
    const rejected = await git(["push", "origin", "HEAD:refs/heads/main"], behind)
    expect(rejected.code).not.toBe(0)
    expect(rejected.stderr).toMatch(/rejected|non-fast-forward|fetch first/)
  })

  it("answers 404 for repositories that do not exist", async () => {
    const res = await fetch(`${hearth.base}/alice/nothing.git/info/refs?service=git-upload-pack`)
    expect(res.status).toBe(404)
    expect((await fetch(`${hearth.base}/nobody/nothing.git/info/refs?service=git-upload-pack`)).status).toBe(404)
  })
})

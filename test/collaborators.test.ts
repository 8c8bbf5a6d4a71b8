// Collaborators: list, check, add/change, remove and the permission query; levels take effect at
// once in the API and over git smart HTTP (issue 3 item 4; Forgejo's routers/api/v1/repo/collaborators.go).
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-collaborators-"))
  await Promise.all(["alice", "bob", "carol", "dave", "erin"].map((username) => createUser(hearth, { username })))
  await createUser(hearth, { username: "root", isAdmin: true })
  expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: "guild" })).status).toBe(201)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

let unique = 0
const createRepo = async (user: string, body: Record<string, unknown> = {}) => {
  const res = await call("POST", "/user/repos", basic(user), { name: `co${++unique}`, ...body })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)).name as string
}

const collab = (repo: string, user: string, suffix = "") => `/repos/alice/${repo}/collaborators/${user}${suffix}`

describe("PUT/GET/DELETE /repos/{o}/{r}/collaborators/{u}", () => {
  it("adds with the default write level, lists, checks and removes", async () => {
    const repo = await createRepo("alice")
    expect((await call("GET", collab(repo, "bob"), basic("alice"))).status).toBe(404)
    const put = await call("PUT", collab(repo, "bob"), basic("alice"), {})
    expect(put.status).toBe(204)
    expect((await call("GET", collab(repo, "bob"), basic("alice"))).status).toBe(204)
    const list = await call("GET", `/repos/alice/${repo}/collaborators`, basic("alice"))
    expect(list.status).toBe(200)
    expect(list.headers.get("x-total-count")).toBe("1")
    const users = await json(list)
    expectSwagger(users, "User[]")
    expect(users.map((u: any) => u.login)).toEqual(["bob"])
    const perm = await json(await call("GET", collab(repo, "bob", "/permission"), basic("alice")))
    expectSwagger(perm, "RepoCollaboratorPermission")
    expect(perm).toMatchObject({ permission: "write", role_name: "write", user: { login: "bob" } })
    expect((await call("DELETE", collab(repo, "bob"), basic("alice"))).status).toBe(204)
    expect((await call("GET", collab(repo, "bob"), basic("alice"))).status).toBe(404)
    // Removing someone who is not a collaborator is no error.
    expect((await call("DELETE", collab(repo, "bob"), basic("alice"))).status).toBe(204)
  })

  it("changes the level with a second PUT and lists by name with paging", async () => {
    const repo = await createRepo("alice")
    for (const [user, permission] of [
      ["dave", "read"],
      ["bob", "admin"],
      ["carol", "write"]
    ] as const) {
      expect((await call("PUT", collab(repo, user), basic("alice"), { permission })).status).toBe(204)
    }
    expect((await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "admin" })).status).toBe(204)
    const perm = await json(await call("GET", collab(repo, "dave", "/permission"), basic("alice")))
    expect(perm.permission).toBe("admin")
    const page = await call("GET", `/repos/alice/${repo}/collaborators?limit=2&page=2`, basic("alice"))
    expect(page.headers.get("x-total-count")).toBe("3")
    expect((await json(page)).map((u: any) => u.login)).toEqual(["dave"])
  })

  it("refuses bad permissions, the owner, organizations and unknown users with 422", async () => {
    const repo = await createRepo("alice")
    for (const [user, body] of [
      ["bob", { permission: "owner" }],
      ["bob", { permission: "none" }],
      ["alice", {}],
      ["guild", {}],
      ["nobody", {}]
    ] as const) {
      const res = await call("PUT", collab(repo, user), basic("alice"), body)
      expect(res.status, `${user} ${JSON.stringify(body)}`).toBe(422)
      expect((await json(res)).message).toBeTruthy()
    }
    expect((await call("GET", collab(repo, "nobody"), basic("alice"))).status).toBe(422)
    expect((await call("DELETE", collab(repo, "nobody"), basic("alice"))).status).toBe(422)
    expect((await call("GET", collab(repo, "nobody", "/permission"), basic("alice"))).status).toBe(404)
    expect(await json(await call("GET", `/repos/alice/${repo}/collaborators`, basic("alice")))).toEqual([])
  })

  it("needs admin access to change: write collaborators 403, admin collaborators 204, strangers 404 on private", async () => {
    const repo = await createRepo("alice", { private: true })
    await call("PUT", collab(repo, "bob"), basic("alice"), { permission: "write" })
    await call("PUT", collab(repo, "carol"), basic("alice"), { permission: "admin" })
    const denied = await call("PUT", collab(repo, "dave"), basic("bob"), {})
    expect(denied.status).toBe(403)
    expect((await call("DELETE", collab(repo, "carol"), basic("bob"))).status).toBe(403)
    expect((await call("PUT", collab(repo, "dave"), basic("erin"), {})).status).toBe(404)
    expect((await call("GET", `/repos/alice/${repo}/collaborators`, basic("erin"))).status).toBe(404)
    expect((await call("GET", `/repos/alice/${repo}/collaborators`)).status).toBe(401)
    expect((await call("PUT", collab(repo, "dave"), basic("carol"), { permission: "read" })).status).toBe(204)
    expect((await call("PUT", collab(repo, "erin"), basic("root"), { permission: "read" })).status).toBe(204)
    const list = await json(await call("GET", `/repos/alice/${repo}/collaborators`, basic("bob")))
    expect(list.map((u: any) => u.login)).toEqual(["bob", "carol", "dave", "erin"])
    const readToken = await createToken(hearth, "alice", ["read:repository"])
    expect((await call("PUT", collab(repo, "dave"), `token ${readToken}`, {})).status).toBe(403)
  })

  it("levels take effect at once in the API (private repository)", async () => {
    const repo = await createRepo("alice", { private: true })
    expect((await call("GET", `/repos/alice/${repo}`, basic("dave"))).status).toBe(404)
    await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "read" })
    const read = await json(await call("GET", `/repos/alice/${repo}`, basic("dave")))
    expect(read.permissions).toEqual({ admin: false, push: false, pull: true })
    await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "write" })
    expect((await json(await call("GET", `/repos/alice/${repo}`, basic("dave")))).permissions).toEqual({
      admin: false,
      push: true,
      pull: true
    })
    await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "admin" })
    expect((await json(await call("GET", `/repos/alice/${repo}`, basic("dave")))).permissions).toEqual({
      admin: true,
      push: true,
      pull: true
    })
    await call("DELETE", collab(repo, "dave"), basic("alice"))
    expect((await call("GET", `/repos/alice/${repo}`, basic("dave"))).status).toBe(404)
  })
})

describe("GET /repos/{o}/{r}/collaborators/{u}/permission", () => {
  it("reports owner, read on public repositories and none on private ones", async () => {
    const pub = await createRepo("alice")
    const priv = await createRepo("alice", { private: true })
    expect((await json(await call("GET", collab(pub, "alice", "/permission"), basic("alice")))).permission).toBe(
      "owner"
    )
    expect((await json(await call("GET", collab(pub, "erin", "/permission"), basic("alice")))).permission).toBe("read")
    expect((await json(await call("GET", collab(priv, "erin", "/permission"), basic("alice")))).permission).toBe("none")
  })

  it("others may query only themselves unless they are repository or site admins", async () => {
    const repo = await createRepo("alice")
    await call("PUT", collab(repo, "bob"), basic("alice"), { permission: "write" })
    await call("PUT", collab(repo, "carol"), basic("alice"), { permission: "admin" })
    const self = await call("GET", collab(repo, "bob", "/permission"), basic("bob"))
    expect(self.status).toBe(200)
    expect((await json(self)).permission).toBe("write")
    const other = await call("GET", collab(repo, "carol", "/permission"), basic("bob"))
    expect(other.status).toBe(403)
    expect((await json(other)).message).toContain("Only admins can query all permissions")
    expect((await call("GET", collab(repo, "bob", "/permission"), basic("carol"))).status).toBe(200)
    expect((await call("GET", collab(repo, "bob", "/permission"), basic("root"))).status).toBe(200)
    expect((await call("GET", collab(repo, "bob", "/permission"), basic("dave"))).status).toBe(403)
  })
})

interface Result {
  readonly code: number
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
    execFile("git", args as Array<string>, { cwd, env, timeout: 60_000 }, (error, _stdout, stderr) =>
      done({ code: error === null ? 0 : typeof error.code === "number" ? error.code : -1, stderr })
    )
  })

const remote = (user: string, repo: string) => {
  const url = new URL(`${hearth.base}/alice/${repo}.git`)
  url.username = user
  url.password = "password123"
  return url.toString()
}

describe("collaborators over git smart HTTP", () => {
  it("a push needs write: read collaborators are refused, write accepted, removal revokes at once", async () => {
    const repo = await createRepo("alice", { private: true })
    const dir = mkdtempSync(join(work, "push-"))
    expect((await git(["init", "-q", "-b", "main"], dir)).code).toBe(0)
    writeFileSync(join(dir, "a.txt"), "a\n")
    await git(["add", "a.txt"], dir)
    expect((await git(["commit", "-q", "-m", "one"], dir)).code).toBe(0)

    // Not a collaborator: the private repository is not found.
    expect((await git(["push", "-q", remote("dave", repo), "main"], dir)).code).not.toBe(0)
    await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "read" })
    const refused = await git(["push", "-q", remote("dave", repo), "main"], dir)
    expect(refused.code).not.toBe(0)
    // A reader reaches git, whose pre-receive hook refuses the branch (AGit's refs/for/… would pass).
    expect(refused.stderr).toContain("User 'dave' is not allowed to push to branch 'main'")
    // Reading works with read.
    expect((await git(["ls-remote", remote("dave", repo)], dir)).code).toBe(0)

    await call("PUT", collab(repo, "dave"), basic("alice"), { permission: "write" })
    const pushed = await git(["push", "-q", remote("dave", repo), "main"], dir)
    expect(pushed.code, pushed.stderr).toBe(0)

    await call("DELETE", collab(repo, "dave"), basic("alice"))
    writeFileSync(join(dir, "b.txt"), "b\n")
    await git(["add", "b.txt"], dir)
    await git(["commit", "-q", "-m", "two"], dir)
    expect((await git(["push", "-q", remote("dave", repo), "main"], dir)).code).not.toBe(0)
    expect((await git(["ls-remote", remote("dave", repo)], dir)).code).not.toBe(0)
  })
})

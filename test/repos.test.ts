// Repositories: creation (user and org), reading, deletion and the owner lists, with the bare
// repository on disk kept in step with the database (issue 3 items 1 and 3; Forgejo's `repoAssignment`, services/convert `ToRepo`).

import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Settings from "../src/config/Settings.ts"
import * as Git from "../src/git/Git.ts"
import { sshUrl } from "../src/repos/Schema.ts"
import { UsersService } from "../src/users/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all([
    createUser(hearth, { username: "root", isAdmin: true }),
    createUser(hearth, { username: "alice" }),
    createUser(hearth, { username: "bob" }),
    createUser(hearth, { username: "carol" }),
    createUser(hearth, { username: "dave" }),
    createUser(hearth, { username: "hidden", visibility: "private" }),
    createUser(hearth, { username: "limited", visibility: "limited" }),
    createUser(hearth, { username: "diskfail" })
  ])
})
afterAll(() => hearth?.close())

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

const repoDir = (owner: string, name: string) =>
  join(hearth.settings.repository.ROOT, owner.toLowerCase(), `${name.toLowerCase()}.git`)

const head = async (owner: string, name: string) =>
  (await hearth.run(Git.run(["--git-dir", repoDir(owner, name), "symbolic-ref", "HEAD"]))).stdout.toString().trim()

const repoCount = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql`SELECT count(*) AS n FROM repositories`
      return Number(row!.n)
    })
  )

const addCollaborator = (owner: string, name: string, user: string, mode: "read" | "write" | "admin") =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      yield* sql`INSERT INTO collaborations (repo_id, user_id, mode)
      SELECT r.id, u.id, ${mode} FROM repositories r JOIN users o ON o.id = r.owner_id, users u
      WHERE o.lower_name = ${owner} AND r.lower_name = ${name.toLowerCase()} AND u.lower_name = ${user}`
    })
  )

let unique = 0
const repoName = (prefix = "repo") => `${prefix}${++unique}`

/** Creates a repo for `user` over the API; returns its JSON. */
const createRepo = async (user: string, body: Record<string, unknown> = {}) => {
  const res = await call("POST", "/user/repos", basic(user), { name: repoName(), ...body })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}

describe("POST /user/repos", () => {
  it("creates the repository and its bare git directory, answering with owner permissions", async () => {
    const res = await call("POST", "/user/repos", basic("alice"), { name: "My-Project", description: "first" })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(body, "Repository")
    const root = hearth.settings.server.ROOT_URL
    expect(body).toMatchObject({
      name: "My-Project",
      full_name: "alice/My-Project",
      description: "first",
      empty: true,
      private: false,
      fork: false,
      mirror: false,
      parent: null,
      archived: false,
      default_branch: "main",
      size: 0,
      stars_count: 0,
      forks_count: 0,
      watchers_count: 1, // the creator watches it ([service] AUTO_WATCH_NEW_REPOS)
      open_issues_count: 0,
      html_url: `${root}alice/My-Project`,
      clone_url: `${root}alice/My-Project.git`,
      url: `${root}api/v1/repos/alice/My-Project`,
      ssh_url: "git@localhost:alice/My-Project.git",
      permissions: { admin: true, push: true, pull: true },
      owner: { login: "alice" }
    })
    expect(body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
    expect(existsSync(repoDir("alice", "My-Project"))).toBe(true)
    expect(await head("alice", "My-Project")).toBe("refs/heads/main")
  })

  it("uses the requested default branch as HEAD", async () => {
    const body = await createRepo("alice", { default_branch: "trunk" })
    expect(body.default_branch).toBe("trunk")
    expect(await head("alice", body.name)).toBe("refs/heads/trunk")
  })

  it.each([
    ["..", "name is reserved"],
    [".", "name is reserved"],
    ["-", "name is reserved"],
    ["a/b", "[Name]: must contain only"],
    ["sp ace", "[Name]: must contain only"],
    ["x.git", "name pattern is not allowed [pattern: *.git]"],
    ["x.WIKI", "name pattern is not allowed [pattern: *.wiki]"],
    ["feed.rss", "name pattern is not allowed"],
    ["feed.atom", "name pattern is not allowed"],
    ["a".repeat(101), "[Name]: MaxSize (100)"],
    ["", "[Name]: Required"]
  ])("refuses the name %j with 422 and writes nothing", async (name, message) => {
    const before = await repoCount()
    const res = await call("POST", "/user/repos", basic("bob"), { name })
    expect(res.status).toBe(422)
    expect((await json(res)).message).toContain(message)
    expect(await repoCount()).toBe(before)
    const dir = join(hearth.settings.repository.ROOT, "bob")
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([])
  })

  it("accepts a 100-character name and names with dots, dashes and underscores", async () => {
    await createRepo("carol", { name: "a".repeat(100) })
    await createRepo("carol", { name: "a.b-c_d" })
  })

  it("refuses a missing name, an invalid default branch and a long description", async () => {
    expect((await call("POST", "/user/repos", basic("alice"), {})).status).toBe(422)
    for (const branch of ["a..b", "-x", "x.lock", "a b", "x/"]) {
      const res = await call("POST", "/user/repos", basic("alice"), { name: repoName(), default_branch: branch })
      expect(res.status, branch).toBe(422)
      expect((await json(res)).message).toContain("[DefaultBranch]")
    }
    const long = await call("POST", "/user/repos", basic("alice"), { name: repoName(), description: "d".repeat(2049) })
    expect(long.status).toBe(422)
  })

  it("answers 409 for a duplicate name, case-insensitively, leaving the first repository alone", async () => {
    const first = await createRepo("alice", { name: "Dup" })
    const before = await repoCount()
    const res = await call("POST", "/user/repos", basic("alice"), { name: "dUP" })
    expect(res.status).toBe(409)
    expect((await json(res)).message).toBe("The repository with the same name already exists.")
    expect(await repoCount()).toBe(before)
    expect(
      readdirSync(join(hearth.settings.repository.ROOT, "alice")).filter((d) => d.toLowerCase() === "dup.git")
    ).toEqual(["dup.git"])
    expect(await head("alice", "Dup")).toBe("refs/heads/main")
    // The same name under another owner is fine.
    expect((await call("POST", "/user/repos", basic("bob"), { name: first.name })).status).toBe(201)
  })

  it("lets exactly one of several concurrent creations of one name win; the others get 409", async () => {
    const statuses = await Promise.all(
      ["Race", "race", "RACE", "rAce", "raCe"].map(
        async (name) => (await call("POST", "/user/repos", basic("carol"), { name })).status
      )
    )
    expect(statuses.filter((s) => s === 201)).toHaveLength(1)
    expect(statuses.filter((s) => s === 409)).toHaveLength(4)
    expect(await head("carol", "race")).toBe("refs/heads/main")
    await hearth.run(Git.run(["--git-dir", repoDir("carol", "race"), "fsck"]))
  })

  it("refuses with 409 when files already exist at the path, and leaves them", async () => {
    const dir = repoDir("alice", "leftover")
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(dir, "keep"), "x")
    const res = await call("POST", "/user/repos", basic("alice"), { name: "leftover" })
    expect(res.status).toBe(409)
    expect(existsSync(join(dir, "keep"))).toBe(true)
    expect((await call("GET", "/repos/alice/leftover", basic("alice"))).status).toBe(404)
    rmSync(dir, { recursive: true })
  })

  it("keeps no row when the disk part fails", async () => {
    // A file where the owner's directory should be makes `git init` impossible.
    const ownerDir = join(hearth.settings.repository.ROOT, "diskfail")
    mkdirSync(hearth.settings.repository.ROOT, { recursive: true })
    writeFileSync(ownerDir, "not a directory")
    const before = await repoCount()
    const res = await call("POST", "/user/repos", basic("diskfail"), { name: "broken" })
    expect(res.status).toBe(500)
    expect(await repoCount()).toBe(before)
    rmSync(ownerDir)
    // Once the obstacle is gone the same name can be created.
    expect((await call("POST", "/user/repos", basic("diskfail"), { name: "broken" })).status).toBe(201)
  })

  it("needs a signed-in caller and both write:user and write:repository", async () => {
    expect((await call("POST", "/user/repos", undefined, { name: repoName() })).status).toBe(401)
    const repoOnly = await createToken(hearth, "alice", ["write:repository"])
    const denied = await call("POST", "/user/repos", `token ${repoOnly}`, { name: repoName() })
    expect(denied.status).toBe(403)
    expect((await json(denied)).message).toContain("token does not have at least one of required scope(s)")
    const both = await createToken(hearth, "alice", ["write:repository", "write:user"])
    expect((await call("POST", "/user/repos", `token ${both}`, { name: repoName() })).status).toBe(201)
  })
})

describe("ssh_url", () => {
  it("uses the built-in SSH server's user, the domain, and the port when it is not 22", () => {
    const at = (server: Record<string, string>) =>
      sshUrl(Settings.resolveSettings({ server: { APP_DATA_PATH: "/tmp/x", ...server } }), "alice", "demo")
    expect(at({})).toBe("git@localhost:alice/demo.git")
    expect(at({ DOMAIN: "forge.example", BUILTIN_SSH_SERVER_USER: "forge" })).toBe("forge@forge.example:alice/demo.git")
    expect(at({ DOMAIN: "forge.example", SSH_PORT: "2222" })).toBe("ssh://git@forge.example:2222/alice/demo.git")
    expect(at({ DOMAIN: "::1", ROOT_URL: "http://[::1]:3000/", SSH_PORT: "2222" })).toBe(
      "ssh://git@[::1]:2222/alice/demo.git"
    )
  })
})

describe("reading and deleting", () => {
  it("hides a private repository (404) from anonymous callers and others; owner and admin see it", async () => {
    const repo = await createRepo("alice", { private: true })
    expect(repo.private).toBe(true)
    expect((await call("GET", `/repos/alice/${repo.name}`)).status).toBe(404)
    expect((await call("GET", `/repos/alice/${repo.name}`, basic("bob"))).status).toBe(404)
    expect((await call("GET", `/repositories/${repo.id}`, basic("bob"))).status).toBe(404)
    expect((await call("DELETE", `/repos/alice/${repo.name}`, basic("bob"))).status).toBe(404)
    const own = await call("GET", `/repos/alice/${repo.name}`, basic("alice"))
    expect(own.status).toBe(200)
    expectSwagger(await json(own), "Repository")
    const admin = await json(await call("GET", `/repos/ALICE/${repo.name.toUpperCase()}`, basic("root")))
    expect(admin.permissions).toEqual({ admin: true, push: true, pull: true })
    expect(admin.name).toBe(repo.name)
    expect(existsSync(repoDir("alice", repo.name))).toBe(true)
  })

  it("shows a public repository to anyone, with the caller's permissions", async () => {
    const repo = await createRepo("alice")
    const anon = await json(await call("GET", `/repos/alice/${repo.name}`))
    expect(anon.permissions).toEqual({ admin: false, push: false, pull: true })
    expect(anon.owner.email).toBe(`alice@${hearth.settings.service.NO_REPLY_ADDRESS}`)
    const byId = await call("GET", `/repositories/${repo.id}`)
    expect(byId.status).toBe(200)
    expect((await json(byId)).full_name).toBe(`alice/${repo.name}`)
    expect((await call("GET", "/repositories/999999")).status).toBe(404)
    expect((await call("GET", "/repositories/abc")).status).toBe(404)
    expect((await call("GET", "/repos/alice/nope")).status).toBe(404)
    expect((await call("GET", "/repos/nobody/nope")).status).toBe(404)
  })

  it("gives collaborators their level: read sees a private repository, only the owner deletes", async () => {
    const repo = await createRepo("alice", { private: true })
    await addCollaborator("alice", repo.name, "bob", "read")
    await addCollaborator("alice", repo.name, "carol", "admin")
    const bob = await json(await call("GET", `/repos/alice/${repo.name}`, basic("bob")))
    expect(bob.permissions).toEqual({ admin: false, push: false, pull: true })
    const carol = await json(await call("GET", `/repos/alice/${repo.name}`, basic("carol")))
    expect(carol.permissions).toEqual({ admin: true, push: true, pull: true })
    for (const user of ["bob", "carol"]) {
      const res = await call("DELETE", `/repos/alice/${repo.name}`, basic(user))
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe("user should be the owner of the repo")
    }
    expect(existsSync(repoDir("alice", repo.name))).toBe(true)
  })

  it("answers 403 to a public-only token on a private repository it could otherwise read", async () => {
    const repo = await createRepo("alice", { private: true })
    const publicRepo = await createRepo("alice")
    const token = await createToken(hearth, "alice", ["public-only", "read:repository"])
    const res = await call("GET", `/repos/alice/${repo.name}`, `token ${token}`)
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("token scope is limited to public repos")
    expect((await call("GET", `/repos/alice/${publicRepo.name}`, `token ${token}`)).status).toBe(200)
  })

  it("hides public repositories of a private owner from others, and of a limited owner from anonymous callers", async () => {
    const hidden = await createRepo("hidden")
    expect(hidden.internal).toBe(true)
    expect((await call("GET", `/repos/hidden/${hidden.name}`, basic("bob"))).status).toBe(404)
    expect((await call("GET", `/repos/hidden/${hidden.name}`, basic("root"))).status).toBe(200)
    const limited = await createRepo("limited")
    expect((await call("GET", `/repos/limited/${limited.name}`)).status).toBe(404)
    expect((await call("GET", `/repos/limited/${limited.name}`, basic("bob"))).status).toBe(200)
  })

  it("lets the owner delete: 204, the row and the directory are gone", async () => {
    const repo = await createRepo("alice")
    expect(existsSync(repoDir("alice", repo.name))).toBe(true)
    expect((await call("DELETE", `/repos/alice/${repo.name}`)).status).toBe(401)
    expect((await call("DELETE", `/repos/alice/${repo.name}`, basic("bob"))).status).toBe(403)
    expect((await call("DELETE", `/repos/alice/${repo.name}`, basic("alice"))).status).toBe(204)
    expect(existsSync(repoDir("alice", repo.name))).toBe(false)
    expect((await call("GET", `/repos/alice/${repo.name}`, basic("alice"))).status).toBe(404)
    expect((await call("DELETE", `/repos/alice/${repo.name}`, basic("alice"))).status).toBe(404)
    // The name is free again.
    expect((await call("POST", "/user/repos", basic("alice"), { name: repo.name })).status).toBe(201)
  })

  it("lets a site admin delete someone else's repository", async () => {
    const repo = await createRepo("bob", { private: true })
    expect((await call("DELETE", `/repos/bob/${repo.name}`, basic("root"))).status).toBe(204)
    expect(existsSync(repoDir("bob", repo.name))).toBe(false)
  })
})

describe("organization repositories", () => {
  let org = ""
  let privateOrg = ""
  beforeAll(async () => {
    org = `org${++unique}`
    privateOrg = `porg${++unique}`
    // With an e-mail: an org without one shows `owner.email: ""`, as Forgejo, which the swagger
    // format check would flag.
    expect((await call("POST", "/orgs", basic("alice"), { username: org, email: `${org}@example.com` })).status).toBe(
      201
    )
    expect((await call("POST", "/orgs", basic("alice"), { username: privateOrg, visibility: "private" })).status).toBe(
      201
    )
    const team = async (name: string, extra: Record<string, unknown>, member: string) => {
      const res = await call("POST", `/orgs/${org}/teams`, basic("alice"), { name, units: ["repo.code"], ...extra })
      expect(res.status, await res.clone().text()).toBe(201)
      const { id } = await json(res)
      expect((await call("PUT", `/teams/${id}/members/${member}`, basic("alice"))).status).toBe(204)
    }
    await team("creators", { permission: "write", can_create_org_repo: true, includes_all_repositories: true }, "carol")
    await team("readers", { permission: "read", includes_all_repositories: true }, "dave")
  })

  it("creates for an owner, an admin and a creator-team member; 403 for others", async () => {
    for (const user of ["alice", "root", "carol"]) {
      const res = await call("POST", `/orgs/${org}/repos`, basic(user), { name: repoName() })
      expect(res.status, user).toBe(201)
      const body = await json(res)
      expectSwagger(body, "Repository")
      expect(body.owner.login).toBe(org)
      expect(body.permissions).toEqual({ admin: true, push: true, pull: true })
      expect(existsSync(repoDir(org, body.name))).toBe(true)
    }
    for (const user of ["dave", "bob"]) {
      const res = await call("POST", `/orgs/${org}/repos`, basic(user), { name: repoName() })
      expect(res.status, user).toBe(403)
      expect((await json(res)).message).toBe("Given user is not allowed to create repository in organization.")
    }
  })

  it("serves the deprecated /org/{org}/repos the same way", async () => {
    const res = await call("POST", `/org/${org}/repos`, basic("alice"), { name: repoName() })
    expect(res.status).toBe(201)
    expect((await call("POST", `/org/${org}/repos`, basic("bob"), { name: repoName() })).status).toBe(403)
  })

  it("answers 422 for an unknown org and 404 for an org the caller cannot see", async () => {
    const missing = await call("POST", "/orgs/no-such-org/repos", basic("alice"), { name: repoName() })
    expect(missing.status).toBe(422)
    expect((await json(missing)).message).toContain("org does not exist")
    expect((await call("POST", "/org/alice/repos", basic("alice"), { name: repoName() })).status).toBe(422)
    expect((await call("POST", `/orgs/${privateOrg}/repos`, basic("bob"), { name: repoName() })).status).toBe(404)
    expect((await call("POST", `/orgs/${privateOrg}/repos`, basic("alice"), { name: repoName() })).status).toBe(201)
  })

  it("needs write:organization and write:repository", async () => {
    const token = await createToken(hearth, "alice", ["write:repository"])
    expect((await call("POST", `/orgs/${org}/repos`, `token ${token}`, { name: repoName() })).status).toBe(403)
  })

  it("gives team members the team's level on a private org repository; outsiders get 404", async () => {
    const res = await call("POST", `/orgs/${org}/repos`, basic("alice"), { name: repoName(), private: true })
    const repo = await json(res)
    const dave = await json(await call("GET", `/repos/${org}/${repo.name}`, basic("dave")))
    expect(dave.permissions).toEqual({ admin: false, push: false, pull: true })
    const carol = await json(await call("GET", `/repos/${org}/${repo.name}`, basic("carol")))
    expect(carol.permissions).toEqual({ admin: false, push: true, pull: true })
    expect((await call("GET", `/repos/${org}/${repo.name}`, basic("bob"))).status).toBe(404)
    // Team write is not enough to delete; the org's owners may.
    expect((await call("DELETE", `/repos/${org}/${repo.name}`, basic("carol"))).status).toBe(403)
    expect((await call("DELETE", `/repos/${org}/${repo.name}`, basic("alice"))).status).toBe(204)
    expect(existsSync(repoDir(org, repo.name))).toBe(false)
  })

  it("lists the org's repositories the caller may see", async () => {
    const priv = await json(
      await call("POST", `/orgs/${org}/repos`, basic("alice"), { name: repoName(), private: true })
    )
    const anon = await call("GET", `/orgs/${org}/repos?limit=50`)
    expect(anon.status).toBe(200)
    const anonNames = (await json(anon)).map((r: any) => r.name)
    expect(anonNames).not.toContain(priv.name)
    const mine = await json(await call("GET", `/orgs/${org}/repos?limit=50`, basic("dave")))
    expect(mine.map((r: any) => r.name)).toContain(priv.name)
    expectSwagger(mine, "Repository[]")
    expect(Number(anon.headers.get("x-total-count"))).toBe(anonNames.length)
    expect((await call("GET", `/orgs/${privateOrg}/repos`, basic("bob"))).status).toBe(404)
  })
})

describe("lists", () => {
  it("GET /users/{u}/repos: public ones for anonymous callers, more for those with access, paged", async () => {
    await createUser(hearth, { username: "lister" })
    const a = await createRepo("lister")
    const b = await createRepo("lister", { private: true })
    const c = await createRepo("lister")
    await addCollaborator("lister", b.name, "bob", "write")

    const anon = await call("GET", "/users/lister/repos")
    expect(anon.status).toBe(200)
    expect((await json(anon)).map((r: any) => r.name)).toEqual([a.name, c.name])
    expect(anon.headers.get("x-total-count")).toBe("2")

    const bob = await json(await call("GET", "/users/lister/repos", basic("bob")))
    expect(bob.map((r: any) => r.name)).toEqual([a.name, b.name, c.name])
    expect(bob[1].permissions).toEqual({ admin: false, push: true, pull: true })
    expect((await json(await call("GET", "/users/lister/repos", basic("carol")))).length).toBe(2)

    const paged = await call("GET", "/users/lister/repos?limit=1&page=2", basic("lister"))
    expect((await json(paged)).map((r: any) => r.name)).toEqual([b.name])
    expect(paged.headers.get("x-total-count")).toBe("3")
    const root = hearth.settings.server.ROOT_URL
    expect(paged.headers.get("link")).toBe(
      `<${root}api/v1/users/lister/repos?limit=1&page=3>; rel="next",` +
        `<${root}api/v1/users/lister/repos?limit=1&page=3>; rel="last",` +
        `<${root}api/v1/users/lister/repos?limit=1&page=1>; rel="first",` +
        `<${root}api/v1/users/lister/repos?limit=1&page=1>; rel="prev"`
    )
    expect((await call("GET", "/users/hidden/repos", basic("bob"))).status).toBe(404)
    expect((await call("GET", "/users/nobody/repos")).status).toBe(404)
  })

  it("GET /user/repos: own repositories (private too) and collaborations, by name", async () => {
    await createUser(hearth, { username: "mine" })
    const z = await createRepo("mine", { name: "zeta", private: true })
    const a = await createRepo("mine", { name: "Alpha" })
    const other = await createRepo("carol", { name: "beta-shared", private: true })
    await addCollaborator("carol", other.name, "mine", "read")
    const res = await call("GET", "/user/repos", basic("mine"))
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Repository[]")
    expect(body.map((r: any) => r.full_name)).toEqual([`mine/${a.name}`, `carol/${other.name}`, `mine/${z.name}`])
    expect(res.headers.get("x-total-count")).toBe("3")
    expect((await call("GET", "/user/repos")).status).toBe(401)
    const token = await createToken(hearth, "mine", ["public-only", "read:repository", "read:user"])
    const publicOnly = await json(await call("GET", "/user/repos", `token ${token}`))
    expect(publicOnly.map((r: any) => r.name)).toEqual([a.name])
  })

  it("GET /user/repos: order_by, and 422 for an unknown one", async () => {
    const names = async (order: string) =>
      (await json(await call("GET", `/user/repos?order_by=${order}`, basic("mine")))).map((r: any) => r.name)
    expect(await names("id")).toEqual(["zeta", "Alpha", "beta-shared"])
    expect(await names("name")).toEqual(["Alpha", "beta-shared", "zeta"])
    expect(await names("reversealphabetically")).toEqual(["zeta", "beta-shared", "Alpha"])
    expect(await names("newest")).toEqual(["beta-shared", "Alpha", "zeta"])
    const limited = await call("GET", "/user/repos?order_by=id&limit=2", basic("mine"))
    expect((await json(limited)).map((r: any) => r.name)).toEqual(["zeta", "Alpha"])
    expect(limited.headers.get("link")).toContain('rel="next"')
    const bad = await call("GET", "/user/repos?order_by=sideways", basic("mine"))
    expect(bad.status).toBe(422)
    expect((await json(bad)).message).toBe("invalid order_by")
  })

  it("GET /user/repos: includes the repositories an org team covers", async () => {
    await createUser(hearth, { username: "teamed" })
    const org = `torg${++unique}`
    expect((await call("POST", "/orgs", basic("alice"), { username: org })).status).toBe(201)
    const repo = await json(
      await call("POST", `/orgs/${org}/repos`, basic("alice"), { name: "covered", private: true })
    )
    const team = await json(
      await call("POST", `/orgs/${org}/teams`, basic("alice"), {
        name: "all",
        permission: "read",
        units: ["repo.code"],
        includes_all_repositories: true
      })
    )
    expect((await json(await call("GET", "/user/repos", basic("teamed")))).length).toBe(0)
    expect((await call("PUT", `/teams/${team.id}/members/teamed`, basic("alice"))).status).toBe(204)
    const listed = await json(await call("GET", "/user/repos", basic("teamed")))
    expect(listed.map((r: any) => r.id)).toEqual([repo.id])
    expect(listed[0].permissions).toEqual({ admin: false, push: false, pull: true })
  })

  it("a restricted user reaches only what it was given", async () => {
    await createUser(hearth, { username: "restricted", restricted: true })
    const open = await createRepo("alice")
    const shared = await createRepo("alice", { private: true })
    await addCollaborator("alice", shared.name, "restricted", "read")
    expect((await call("GET", `/repos/alice/${open.name}`, basic("restricted"))).status).toBe(404)
    expect((await call("GET", `/repos/alice/${shared.name}`, basic("restricted"))).status).toBe(200)
    const own = await createRepo("restricted")
    expect((await call("GET", `/repos/restricted/${own.name}`, basic("restricted"))).status).toBe(200)
  })
})

describe("owners of repositories", () => {
  const repoCountOf = (name: string) =>
    hearth.run(
      Effect.gen(function* () {
        const users = yield* UsersService
        return (yield* users.get(name)).numRepos
      })
    )

  it("keeps the owner's repository count exact at once (no stale cached account)", async () => {
    await createUser(hearth, { username: "counter" })
    expect(await repoCountOf("counter")).toBe(0)
    const repo = await createRepo("counter")
    expect(await repoCountOf("counter")).toBe(1)
    expect((await call("DELETE", `/repos/counter/${repo.name}`, basic("counter"))).status).toBe(204)
    expect(await repoCountOf("counter")).toBe(0)
  })

  it("refuses to delete an organization that still owns repositories (422), then deletes it once empty", async () => {
    await createUser(hearth, { username: "orgboss" })
    expect(
      (await call("POST", "/orgs", basic("orgboss"), { username: "holding", email: "h@example.com" })).status
    ).toBe(201)
    const created = await call("POST", "/orgs/holding/repos", basic("orgboss"), { name: "kept" })
    expect(created.status).toBe(201)
    const refused = await call("DELETE", "/orgs/holding", basic("orgboss"))
    expect(refused.status).toBe(422)
    expect((await json(refused)).message).toContain("organization still has ownership of repositories")
    expect(existsSync(repoDir("holding", "kept"))).toBe(true)
    expect((await call("GET", "/orgs/holding", basic("orgboss"))).status).toBe(200)
    expect((await call("DELETE", "/repos/holding/kept", basic("orgboss"))).status).toBe(204)
    expect((await call("DELETE", "/orgs/holding", basic("orgboss"))).status).toBe(204)
  })

  it("refuses to delete a user who owns repositories unless purged; a purge removes them from disk", async () => {
    await createUser(hearth, { username: "leaver" })
    const repo = await createRepo("leaver")
    const refused = await call("DELETE", "/admin/users/leaver", basic("root"))
    expect(refused.status).toBe(422)
    expect((await json(refused)).message).toContain("user still has ownership of repositories")
    expect((await call("GET", `/repos/leaver/${repo.name}`, basic("root"))).status).toBe(200)
    expect((await call("DELETE", "/admin/users/leaver?purge=true", basic("root"))).status).toBe(204)
    expect((await call("GET", "/users/leaver", basic("root"))).status).toBe(404)
    expect(existsSync(repoDir("leaver", repo.name))).toBe(false)
  })
})

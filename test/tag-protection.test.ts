// Tag protection (Forgejo's routers/api/v1/repo/tag.go `*TagProtection`, models/git/protected_tag.go
// `IsUserAllowedToControlTag`, routers/private/hook_pre_receive.go `preReceiveTag`): the rules' CRUD
// for repository admins, glob and /regexp/ patterns, whitelists of users and teams (an
// organisation's), and enforcement on tag pushes over HTTP and SSH and on the tag API.
import { execFileSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tagPatternMatches } from "../src/protection/Policy.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen, sshUrl, type TestKey } from "./support/ssh.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let sshPort: number
const work = mkdtempSync(join(tmpdir(), "hearth-tags-"))
const keys: Record<string, TestKey> = {}
let teamId = 0

const call = (method: string, path: string, who: string | undefined, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)
const rules = (repo: string) => `/repos/${repo}/tag_protections`

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    }
  })
  for (const username of ["boss", "writer", "reader", "releaser", "maint", "stranger"])
    await createUser(hearth, { username })
  expect((await call("POST", "/orgs", "boss", { username: "crew" })).status).toBe(201)
  for (const [name, priv] of [
    ["app", false],
    ["hidden", true]
  ] as const) {
    const res = await call("POST", "/orgs/crew/repos", "boss", { name, private: priv, auto_init: true })
    expect(res.status).toBe(201)
    for (const [who, permission] of [
      ["writer", "write"],
      ["reader", "read"],
      ["maint", "admin"]
    ] as const) {
      expect((await call("PUT", `/repos/crew/${name}/collaborators/${who}`, "boss", { permission })).status).toBe(204)
    }
  }
  const team = await call("POST", "/orgs/crew/teams", "boss", {
    name: "releasers",
    permission: "write",
    includes_all_repositories: true,
    units: ["repo.code"]
  })
  expect(team.status).toBe(201)
  teamId = (await json(team)).id
  expect((await call("PUT", `/teams/${teamId}/members/releaser`, "boss")).status).toBe(204)
  for (const who of ["writer", "releaser"]) {
    keys[who] = keygen(work)
    expect((await call("POST", "/user/keys", who, { title: "k", key: keys[who].pub })).status).toBe(201)
  }
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("patterns", () => {
  it("are globs (no separators), or regular expressions between slashes", () => {
    const match = (namePattern: string, tag: string) => tagPatternMatches({ namePattern }, tag)
    expect(match("v*", "v1.2.3")).toBe(true)
    expect(match("v*", "release/v1")).toBe(false)
    expect(match("*", "a/b")).toBe(true)
    expect(match("v1.?", "v1.2")).toBe(true)
    expect(match("/^v[0-9]+$/", "v12")).toBe(true)
    expect(match("/^v[0-9]+$/", "v12-rc")).toBe(false)
  })
})

describe("tag protection CRUD", () => {
  let id = 0
  it("creates a rule (201) with whitelisted users and teams, shaped as Forgejo's TagProtection", async () => {
    const res = await call("POST", rules("crew/app"), "boss", {
      name_pattern: " v* ",
      whitelist_usernames: ["writer"],
      whitelist_teams: ["releasers"]
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(body, "TagProtection")
    expect(body).toMatchObject({ name_pattern: "v*", whitelist_usernames: ["writer"], whitelist_teams: ["releasers"] })
    id = body.id
    expect(await json(await call("GET", `${rules("crew/app")}/${id}`, "boss"))).toEqual(body)
    const list = await json(await call("GET", rules("crew/app"), "maint"))
    expect(list.map((r: { id: number }) => r.id)).toEqual([id])
  })

  it("refuses bad input with Forgejo's statuses, storing nothing", async () => {
    const cases: ReadonlyArray<[unknown, number, string]> = [
      [{ name_pattern: "  " }, 400, "name_pattern are empty"],
      [{ name_pattern: "/[/" }, 400, "name_pattern is invalid"],
      [{ name_pattern: "v*" }, 403, "Tag protection already exist"],
      [{ name_pattern: "x*", whitelist_usernames: ["ghost"] }, 422, "user does not exist [uid: 0, name: ghost]"],
      [
        { name_pattern: "x*", whitelist_teams: ["nope"] },
        422,
        expect.stringMatching(/^team does not exist \[org_id \d+, team_id 0, name: nope\]$/)
      ]
    ] as const
    for (const [body, status, message] of cases) {
      const res = await call("POST", rules("crew/app"), "boss", body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      expect((await json(res)).message).toEqual(message)
    }
    expect(await json(await call("GET", rules("crew/app"), "boss"))).toHaveLength(1)
  })

  it("edits the pattern and the whitelists (absent keeps), and deletes", async () => {
    const extra = await json(await call("POST", rules("crew/app"), "boss", { name_pattern: "tmp-*" }))
    const edited = await call("PATCH", `${rules("crew/app")}/${extra.id}`, "boss", {
      name_pattern: "temp-*",
      whitelist_usernames: ["writer"]
    })
    expect(edited.status).toBe(200)
    expect(await json(edited)).toMatchObject({
      name_pattern: "temp-*",
      whitelist_usernames: ["writer"],
      whitelist_teams: []
    })
    const kept = await json(await call("PATCH", `${rules("crew/app")}/${extra.id}`, "boss", {}))
    expect(kept).toMatchObject({ name_pattern: "temp-*", whitelist_usernames: ["writer"] })
    expect((await call("DELETE", `${rules("crew/app")}/${extra.id}`, "boss")).status).toBe(204)
    expect((await call("GET", `${rules("crew/app")}/${extra.id}`, "boss")).status).toBe(404)
    expect((await call("DELETE", `${rules("crew/app")}/${extra.id}`, "boss")).status).toBe(404)
    expect((await call("GET", `${rules("crew/app")}/abc`, "boss")).status).toBe(404)
  })

  it("is for repository admins: 401, 403 for writers and readers, 404 hidden", async () => {
    expect((await call("GET", rules("crew/app"), undefined)).status).toBe(401)
    for (const who of ["reader", "writer"]) {
      const res = await call("GET", rules("crew/app"), who)
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe(
        "user should be an owner or a collaborator with admin write of a repository"
      )
    }
    expect((await call("GET", rules("crew/hidden"), "stranger")).status).toBe(404)
    expect((await call("POST", rules("crew/app"), "writer", { name_pattern: "y*" })).status).toBe(403)
  })
})

describe("enforcement", () => {
  const url = (who: string) => {
    const u = new URL(`${hearth.base}/crew/app.git`)
    u.username = who
    u.password = "password123"
    return u.toString()
  }
  let n = 0
  const clone = async (who: string) => {
    const dir = join(work, `c${++n}`)
    await gitIn(work, ["clone", "--quiet", url(who), dir])
    return dir
  }
  const refused = (outcome: { code: number | null; stderr: string }, tag: string) => {
    expect(outcome.code, outcome.stderr).not.toBe(0)
    expect(outcome.stderr).toContain(`remote: Hearth: Tag ${tag} is protected`)
    expect(outcome.stderr).toContain("pre-receive hook declined")
  }
  const tagExists = async (tag: string) => (await call("GET", `/repos/crew/app/tags/${tag}`, "boss")).status === 200

  it("refuses pushing a protected tag by someone not whitelisted, over HTTP and SSH", async () => {
    const dir = await clone("maint")
    await gitIn(dir, ["tag", "v1.0"])
    refused(await gitRun(dir, ["push", "origin", "v1.0"]), "v1.0")
    expect(await tagExists("v1.0")).toBe(false)
    // An unprotected tag goes through.
    await gitIn(dir, ["tag", "nightly"])
    expect((await gitRun(dir, ["push", "origin", "nightly"])).code).toBe(0)
  })

  it("lets a whitelisted user and a member of a whitelisted team create, move and delete it", async () => {
    const dir = await clone("writer")
    await gitIn(dir, ["tag", "v1.0"])
    expect((await gitRun(dir, ["push", "origin", "v1.0"])).code).toBe(0)
    expect(await tagExists("v1.0")).toBe(true)
    const ssh = { GIT_SSH_COMMAND: gitSshCommand(keys.releaser!.file, sshPort) }
    const remote = sshUrl(sshPort, "crew/app.git")
    const rel = await clone("releaser")
    execFileSync("git", ["-C", rel, "commit", "--quiet", "--allow-empty", "-m", "next"], {
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "R",
        GIT_AUTHOR_EMAIL: "r@example.com",
        GIT_COMMITTER_NAME: "R",
        GIT_COMMITTER_EMAIL: "r@example.com"
      }
    })
    await gitIn(rel, ["tag", "v2.0"])
    expect((await gitRun(rel, ["push", remote, "v2.0"], ssh)).code).toBe(0)
    await gitIn(rel, ["tag", "-f", "v1.0"])
    expect((await gitRun(rel, ["push", "--force", remote, "v1.0"], ssh)).code).toBe(0)
    expect((await gitRun(rel, ["push", remote, ":v2.0"], ssh)).code).toBe(0)
    expect(await tagExists("v2.0")).toBe(false)
  })

  it("refuses moving or deleting a protected tag by others, whatever their role (the owner too)", async () => {
    const dir = await clone("boss")
    refused(await gitRun(dir, ["push", "origin", ":v1.0"]), "v1.0")
    await gitIn(dir, ["tag", "-f", "v1.0", "HEAD"])
    refused(await gitRun(dir, ["push", "--force", "origin", "v1.0"]), "v1.0")
    expect(await tagExists("v1.0")).toBe(true)
  })

  it("applies to the tag API: 422 with Forgejo's messages for create and delete", async () => {
    const create = await call("POST", "/repos/crew/app/tags", "maint", { tag_name: "v3.0" })
    expect(create.status).toBe(422)
    expect((await json(create)).message).toBe("user not allowed to create protected tag")
    const del = await call("DELETE", "/repos/crew/app/tags/v1.0", "maint")
    expect(del.status).toBe(422)
    expect((await json(del)).message).toBe("user not allowed to delete protected tag")
    expect(await tagExists("v1.0")).toBe(true)
    expect((await call("POST", "/repos/crew/app/tags", "writer", { tag_name: "v3.0" })).status).toBe(201)
    expect((await call("DELETE", "/repos/crew/app/tags/v3.0", "releaser")).status).toBe(204)
    expect((await call("POST", "/repos/crew/app/tags", "maint", { tag_name: "beta" })).status).toBe(201)
  })
})

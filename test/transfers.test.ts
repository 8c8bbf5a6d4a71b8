// Repository transfers (issue 4 item 5): at once into an organization the doer may create in,
// pending for a user until accepted or rejected; the directory moves; old names redirect (307)
// for the API and for git, also after a rename.
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const git = (args: ReadonlyArray<string>, cwd = work) => gitIn(cwd, args)

const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const transfer = (repo: string, auth: string, body: unknown) =>
  request(hearth, "POST", `/repos/${repo}/transfer`, auth, body)
/** A request that does not follow redirects. */
const raw = (path: string, auth?: string) =>
  fetch(hearth.api(path), { redirect: "manual", headers: auth === undefined ? {} : { authorization: auth } })

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-transfers-"))
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  for (const name of ["gift", "shared", "moving", "hidden", "renamed"]) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
      name,
      auto_init: true,
      private: name === "hidden"
    })
    expect(res.status).toBe(201)
  }
  expect((await request(hearth, "POST", "/orgs", basic("alice"), { username: "acme" })).status).toBe(201)
  expect((await request(hearth, "POST", "/orgs", basic("bob"), { username: "bobco" })).status).toBe(201)
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("transfer to a user", () => {
  it("waits for the recipient (201 with repo_transfer), then moves on accept (202)", async () => {
    const res = await transfer("alice/gift", basic("alice"), { new_owner: "bob" })
    expect(res.status).toBe(201)
    const pending = await json(res)
    expectSwagger(pending, "Repository")
    expect(pending.full_name).toBe("alice/gift")
    expect(pending.repo_transfer).toMatchObject({ doer: { login: "alice" }, recipient: { login: "bob" }, teams: null })
    // A second transfer while one waits: 409.
    expect((await transfer("alice/gift", basic("alice"), { new_owner: "carol" })).status).toBe(409)
    // Only the recipient may accept (the repository is public: others see it, so 403).
    expect((await request(hearth, "POST", "/repos/alice/gift/transfer/accept", basic("carol"))).status).toBe(403)
    expect((await request(hearth, "POST", "/repos/alice/gift/transfer/accept", basic("alice"))).status).toBe(403)
    const accepted = await request(hearth, "POST", "/repos/alice/gift/transfer/accept", basic("bob"))
    expect(accepted.status).toBe(202)
    const repo = await json(accepted)
    expect(repo).toMatchObject({ full_name: "bob/gift", repo_transfer: null, permissions: { admin: true } })
    expect(existsSync(dirOf("bob", "gift"))).toBe(true)
    expect(existsSync(dirOf("alice", "gift"))).toBe(false)
    expect((await request(hearth, "GET", "/repos/bob/gift/contents/README.md", basic("bob"))).status).toBe(200)
    // Counters moved with it.
    expect((await json(await request(hearth, "GET", "/users/bob", basic("bob")))).repos_count ?? 1).toBeGreaterThan(0)
  })

  it("redirects the old name (307) for the API and for git", async () => {
    const res = await raw("/repos/alice/gift/contents/README.md?ref=main", basic("bob"))
    expect(res.status).toBe(307)
    expect(res.headers.get("location")).toBe(hearth.api("/repos/bob/gift/contents/README.md?ref=main"))
    await git(["clone", `${hearth.base}/alice/gift.git`, join(work, "gift")])
    expect(await git(["log", "--format=%s"], join(work, "gift"))).toBe("Initial commit")
    // Nothing moved away from a name that never existed.
    expect((await raw("/repos/alice/never", basic("bob"))).status).toBe(404)
  })

  it("is cancelled by a rejection from the recipient or the owner (200), and nothing moves", async () => {
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "carol" })).status).toBe(201)
    const rejected = await request(hearth, "POST", "/repos/alice/shared/transfer/reject", basic("carol"))
    expect(rejected.status).toBe(200)
    expect((await json(rejected)).repo_transfer).toBeNull()
    expect((await request(hearth, "POST", "/repos/alice/shared/transfer/accept", basic("carol"))).status).toBe(404)
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "carol" })).status).toBe(201)
    expect((await request(hearth, "POST", "/repos/alice/shared/transfer/reject", basic("alice"))).status).toBe(200)
    expect(existsSync(dirOf("alice", "shared"))).toBe(true)
    expect((await json(await request(hearth, "GET", "/repos/alice/shared", basic("alice")))).full_name).toBe(
      "alice/shared"
    )
  })
})

describe("transfer to an organization", () => {
  it("happens at once (202) for someone who may create repositories there, with the teams given", async () => {
    const team = await json(
      await request(hearth, "POST", "/orgs/acme/teams", basic("alice"), {
        name: "devs",
        permission: "write",
        units: ["repo.code"],
        includes_all_repositories: false
      })
    )
    expect((await request(hearth, "PUT", `/teams/${team.id}/members/carol`, basic("alice"))).status).toBe(204)
    expect((await request(hearth, "GET", "/repos/alice/moving", basic("carol"))).status).toBe(200) // public
    const res = await transfer("alice/moving", basic("alice"), { new_owner: "acme", team_ids: [team.id] })
    expect(res.status).toBe(202)
    expect((await json(res)).full_name).toBe("acme/moving")
    // The team may now push to it.
    const repo = await json(await request(hearth, "GET", "/repos/acme/moving", basic("carol")))
    expect(repo.permissions).toMatchObject({ push: true, admin: false })
    await git(["clone", `${hearth.base}/acme/moving.git`, join(work, "moving")])
  })

  it("refuses what Forgejo refuses", async () => {
    // Only the owner may transfer.
    expect(
      (await request(hearth, "PUT", "/repos/alice/shared/collaborators/bob", basic("alice"), { permission: "admin" }))
        .status
    ).toBe(204)
    expect((await transfer("alice/shared", basic("bob"), { new_owner: "bob" })).status).toBe(403)
    // Unknown recipient; teams for a user; an unknown team; another organization's team.
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "nobody" })).status).toBe(404)
    const forUser = await transfer("alice/shared", basic("alice"), { new_owner: "bob", team_ids: [1] })
    expect(forUser.status).toBe(422)
    expect((await json(forUser)).message).toBe("Teams can only be added to organization-owned repositories")
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "acme", team_ids: [99999] })).status).toBe(422)
    const bobTeam = await json(
      await request(hearth, "POST", "/orgs/bobco/teams", basic("bob"), {
        name: "b",
        permission: "read",
        units: ["repo.code"]
      })
    )
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "acme", team_ids: [bobTeam.id] })).status).toBe(
      403
    )
    // The recipient already has a repository of that name.
    expect((await request(hearth, "POST", "/user/repos", basic("carol"), { name: "shared" })).status).toBe(201)
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "carol" })).status).toBe(422)
    // To its own owner.
    expect((await transfer("alice/shared", basic("alice"), { new_owner: "alice" })).status).toBe(422)
    expect(existsSync(dirOf("alice", "shared"))).toBe(true)
  })
})

describe("redirects", () => {
  it("follow a rename too, and end when a new repository takes the old name", async () => {
    expect((await request(hearth, "PATCH", "/repos/alice/renamed", basic("alice"), { name: "better" })).status).toBe(
      200
    )
    const res = await raw("/repos/alice/renamed", basic("alice"))
    expect(res.status).toBe(307)
    expect(res.headers.get("location")).toBe(hearth.api("/repos/alice/better"))
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "renamed" })).status).toBe(201)
    expect((await raw("/repos/alice/renamed", basic("alice"))).status).toBe(200)
  })

  it("do not reveal where a private repository went to those who may not see it", async () => {
    expect((await transfer("alice/hidden", basic("alice"), { new_owner: "acme" })).status).toBe(202)
    expect((await raw("/repos/alice/hidden", basic("bob"))).status).toBe(404)
    expect((await raw("/repos/alice/hidden")).status).toBe(404)
    expect((await raw("/repos/alice/hidden", basic("alice"))).status).toBe(307)
  })
})

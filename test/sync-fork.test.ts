// Syncing a fork with its base (Forgejo's /repos/{o}/{r}/sync_fork[/{branch}]): what a sync would do
// (allowed only for a fork branch behind its base's that never diverged), the fast-forward itself
// (a push event: the branch API shows it), and its refusals — diverged 400, readers 403, a protected
// branch 403, no such branch 404 — each changing nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth

const write = async (repo: string, user: string, path: string, branch = "main") =>
  (
    await apiAs(hearth, "POST", `/repos/${repo}/contents/${path}`, user, {
      content: Buffer.from(`${path}\n`).toString("base64"),
      branch
    })
  ).commit.sha as string
const head = async (repo: string, branch: string) =>
  (await apiAs(hearth, "GET", `/repos/${repo}/branches/${branch}`, "ann")).commit.id as string
const info = async (path: string, as = "bob") => {
  const res = await request(hearth, "GET", path, basic(as))
  expect(res.status, path).toBe(200)
  const body = await json(res)
  expectSwagger(body, "SyncForkInfo")
  return body
}

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["ann", "bob", "carol"]) await createUser(hearth, { username })
  await apiAs(hearth, "POST", "/user/repos", "ann", { name: "base", auto_init: true })
  await apiAs(hearth, "POST", "/repos/ann/base/branches", "ann", { new_branch_name: "stable" })
  const fork = await request(hearth, "POST", "/repos/ann/base/forks", basic("bob"), {})
  expect(fork.status).toBe(202)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("sync_fork", () => {
  it("says a fork that is level with its base has nothing to sync; a repository that is no fork, nothing at all", async () => {
    const level = await info("/repos/bob/base/sync_fork")
    expect(level).toEqual({
      allowed: false,
      fork_commit: await head("bob/base", "main"),
      base_commit: await head("ann/base", "main"),
      commits_behind: 0
    })
    expect(level.fork_commit).toBe(level.base_commit)
    expect(await info("/repos/ann/base/sync_fork", "ann")).toEqual({
      allowed: false,
      fork_commit: "",
      base_commit: "",
      commits_behind: 0
    })
  })

  it("fast-forwards the default branch of a fork behind its base", async () => {
    const before = await head("bob/base", "main")
    await write("ann/base", "ann", "one.txt")
    const after = await write("ann/base", "ann", "two.txt")
    expect(await info("/repos/bob/base/sync_fork")).toEqual({
      allowed: true,
      fork_commit: before,
      base_commit: after,
      commits_behind: 2
    })
    // A reader of the fork who may not write: 403, nothing moves.
    expect((await request(hearth, "POST", "/repos/bob/base/sync_fork", basic("carol"))).status).toBe(403)
    expect(await head("bob/base", "main")).toBe(before)

    const res = await request(hearth, "POST", "/repos/bob/base/sync_fork", basic("bob"))
    expect(res.status).toBe(204)
    expect(await head("bob/base", "main")).toBe(after)
    expect((await info("/repos/bob/base/sync_fork")).allowed).toBe(false)
  })

  it("syncs a named branch, and answers 404 for a branch the fork does not have", async () => {
    const moved = await write("ann/base", "ann", "stable.txt", "stable")
    const named = await info("/repos/bob/base/sync_fork/stable")
    expect(named).toMatchObject({ allowed: true, base_commit: moved, commits_behind: 1 })
    expect((await request(hearth, "POST", "/repos/bob/base/sync_fork/stable", basic("bob"))).status).toBe(204)
    expect(await head("bob/base", "stable")).toBe(moved)
    expect((await request(hearth, "GET", "/repos/bob/base/sync_fork/nowhere", basic("bob"))).status).toBe(404)
  })

  it("refuses a protected branch the syncing user may not push to", async () => {
    await write("ann/base", "ann", "three.txt")
    const before = await head("bob/base", "main")
    await apiAs(hearth, "POST", "/repos/bob/base/branch_protections", "bob", {
      rule_name: "main",
      enable_push: false
    })
    const res = await request(hearth, "POST", "/repos/bob/base/sync_fork", basic("bob"))
    expect(res.status).toBe(403)
    expect(await head("bob/base", "main")).toBe(before)
    await apiAs(hearth, "DELETE", "/repos/bob/base/branch_protections/main", "bob")
  })

  it("refuses a fork that diverged from its base with 400, changing nothing", async () => {
    const ours = await write("bob/base", "bob", "ours.txt")
    await write("ann/base", "ann", "theirs.txt")
    const diverged = await info("/repos/bob/base/sync_fork")
    expect(diverged).toMatchObject({ allowed: false, fork_commit: ours, commits_behind: 0 })
    const res = await request(hearth, "POST", "/repos/bob/base/sync_fork", basic("bob"))
    expect(res.status).toBe(400)
    expect((await json(res)).message).toBe("You can't sync this branch")
    expect(await head("bob/base", "main")).toBe(ours)
  })
})

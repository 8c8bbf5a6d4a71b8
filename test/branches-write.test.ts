// Creating, renaming and deleting branches and tags through the API, on repositories filled by
// pushing with the real git client; every change checked again over git (`ls-remote`).
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
const shas: Record<string, string> = {}

const git = (args: ReadonlyArray<string>, cwd: string) =>
  new Promise<string>((done, fail) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "Alice",
      GIT_AUTHOR_EMAIL: "alice@example.com",
      GIT_COMMITTER_NAME: "Alice",
      GIT_COMMITTER_EMAIL: "alice@example.com",
      GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
      GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z"
    })
    execFile("git", args as Array<string>, { cwd, env, timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  })

const url = (repo: string) => {
  const u = new URL(`${hearth.base}/${repo}.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}

/** The refs git itself sees over HTTP: `{ "refs/heads/main": sha, … }`. */
const remoteRefs = async (repo: string) => {
  const out = await git(["ls-remote", url(repo)], work)
  return Object.fromEntries(
    out
      .split("\n")
      .filter((l) => l !== "")
      .map((l) => l.split("\t").reverse())
  )
}

/** A statement run directly on the test's database (for states the API cannot reach yet). */
const sqlRun = (statement: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      yield* sql.unsafe(statement)
    })
  )

const alice = () => basic("alice")
const post = (path: string, body: unknown, auth: string | undefined = alice()) =>
  request(hearth, "POST", path, auth, body)
const del = (path: string, auth: string | undefined = alice()) => request(hearth, "DELETE", path, auth)
const patch = (path: string, body: unknown, auth: string | undefined = alice()) =>
  request(hearth, "PATCH", path, auth, body)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-branches-write-"))
  await Promise.all(["alice", "bob", "carol", "dave"].map((username) => createUser(hearth, { username })))
  const repos = [
    ["proj", false],
    ["secret", true],
    ["empty", false],
    ["arch", false],
    ["rename", false],
    ["race", false],
    ["mirror", false]
  ] as const
  for (const [name, priv] of repos) {
    expect((await request(hearth, "POST", "/user/repos", alice(), { name, private: priv })).status).toBe(201)
  }
  const local = join(work, "proj")
  await git(["init", "--quiet", "--initial-branch=main", local], work)
  writeFileSync(join(local, "README.md"), "one\n")
  await git(["add", "README.md"], local)
  await git(["commit", "--quiet", "-m", "first"], local)
  shas.c1 = await git(["rev-parse", "HEAD"], local)
  writeFileSync(join(local, "README.md"), "two\n")
  await git(["commit", "--quiet", "-am", "second"], local)
  shas.c2 = await git(["rev-parse", "HEAD"], local)
  await git(["branch", "feature/x", shas.c1], local)
  await git(["tag", "v1", shas.c1], local)
  for (const [name] of repos) {
    if (name !== "empty") await git(["push", "--quiet", url(`alice/${name}`), "main", "feature/x", "v1"], local)
  }
  // carol may read alice/proj and alice/secret, dave may write to them.
  for (const repo of ["proj", "secret"]) {
    for (const [user, permission] of [
      ["carol", "read"],
      ["dave", "write"]
    ]) {
      const res = await request(hearth, "PUT", `/repos/alice/${repo}/collaborators/${user}`, alice(), { permission })
      expect(res.status).toBe(204)
    }
  }
  expect((await patch("/repos/alice/arch", { archived: true })).status).toBe(200)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("POST /repos/{owner}/{repo}/branches", () => {
  it("creates a branch from the default branch, a branch, a tag, a commit id or a full ref", async () => {
    const fromDefault = await post("/repos/alice/proj/branches", { new_branch_name: "from-default" })
    expect(fromDefault.status).toBe(201)
    const branch = await json(fromDefault)
    expectSwagger(branch, "Branch")
    expect(branch).toMatchObject({
      name: "from-default",
      commit: { id: shas.c2, author: { username: "alice" } },
      user_can_push: true
    })

    const sources: Array<[string, Record<string, string>, string]> = [
      ["from-branch", { old_branch_name: "feature/x" }, shas.c1!],
      ["from-ref-branch", { old_ref_name: "feature/x" }, shas.c1!],
      ["from-tag", { old_ref_name: "v1" }, shas.c1!],
      ["from-sha", { old_ref_name: shas.c1!.slice(0, 10) }, shas.c1!],
      ["from-full-ref", { old_ref_name: "refs/heads/main" }, shas.c2!],
      ["nested/deeper/name", { old_ref_name: "main" }, shas.c2!]
    ]
    for (const [name, source, sha] of sources) {
      const res = await post("/repos/alice/proj/branches", { new_branch_name: name, ...source })
      expect(res.status, name).toBe(201)
      expect((await json(res)).commit.id).toBe(sha)
    }
    const refs = await remoteRefs("alice/proj")
    expect(refs["refs/heads/from-default"]).toBe(shas.c2)
    expect(refs["refs/heads/from-tag"]).toBe(shas.c1)
    expect(refs["refs/heads/nested/deeper/name"]).toBe(shas.c2)
  })

  it("answers 404 for a missing source and changes nothing", async () => {
    const before = await remoteRefs("alice/proj")
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "n1", old_ref_name: "nope" })).status).toBe(404)
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "n2", old_branch_name: "nope" })).status).toBe(
      404
    )
    // old_branch_name names a branch only, not a tag.
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "n3", old_branch_name: "v1" })).status).toBe(
      404
    )
    expect(await remoteRefs("alice/proj")).toEqual(before)
  })

  it("answers 409 when the branch, a clashing path or a same-named tag exists", async () => {
    const before = await remoteRefs("alice/proj")
    const exists = await post("/repos/alice/proj/branches", { new_branch_name: "main", old_ref_name: "feature/x" })
    expect(exists.status).toBe(409)
    expect(await json(exists)).toMatchObject({ message: "The branch already exists." })
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "feature" })).status).toBe(409)
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "main/sub" })).status).toBe(409)
    const tag = await post("/repos/alice/proj/branches", { new_branch_name: "v1" })
    expect(tag.status).toBe(409)
    expect((await json(tag)).message).toContain("tag")
    expect(await remoteRefs("alice/proj")).toEqual(before)
  })

  it("answers 422 for an invalid or missing name, and 404 in an empty repository", async () => {
    const before = await remoteRefs("alice/proj")
    for (const name of ["bad..name", "-x", "a b", "x.lock", "HEAD", "", "a/", "x~1", "a".repeat(101)]) {
      const res = await post("/repos/alice/proj/branches", { new_branch_name: name })
      expect(res.status, name).toBe(422)
      expect((await json(res)).message).toMatch(/BranchName|new_branch_name/)
    }
    expect((await post("/repos/alice/proj/branches", {})).status).toBe(422)
    expect(await remoteRefs("alice/proj")).toEqual(before)
    expect((await post("/repos/alice/empty/branches", { new_branch_name: "x" })).status).toBe(404)
  })

  it("creates 8 distinct branches in parallel, and exactly one of 2 racing for the same name", async () => {
    const names = Array.from({ length: 8 }, (_, i) => `par-${i}`)
    const results = await Promise.all(
      names.map((name) => post("/repos/alice/race/branches", { new_branch_name: name }))
    )
    expect(results.map((r) => r.status)).toEqual(names.map(() => 201))
    const refs = await remoteRefs("alice/race")
    for (const name of names) expect(refs[`refs/heads/${name}`]).toBe(shas.c2)

    const race = await Promise.all(
      [1, 2].map(() => post("/repos/alice/race/branches", { new_branch_name: "same", old_ref_name: "feature/x" }))
    )
    expect(race.map((r) => r.status).sort()).toEqual([201, 409])
    expect((await remoteRefs("alice/race"))["refs/heads/same"]).toBe(shas.c1)
  })
})

describe("DELETE /repos/{owner}/{repo}/branches/{branch}", () => {
  it("deletes a branch (204), visible over git at once", async () => {
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "doomed" })).status).toBe(201)
    expect((await remoteRefs("alice/proj"))["refs/heads/doomed"]).toBe(shas.c2)
    const res = await del("/repos/alice/proj/branches/doomed")
    expect(res.status).toBe(204)
    expect((await remoteRefs("alice/proj"))["refs/heads/doomed"]).toBeUndefined()
    expect((await request(hearth, "GET", "/repos/alice/proj/branches/doomed")).status).toBe(404)
    expect((await del("/repos/alice/proj/branches/doomed")).status).toBe(404)
  })

  it("deletes names with `/` given as they are or percent-encoded", async () => {
    for (const name of ["gone/one", "gone/two/deep"]) {
      expect((await post("/repos/alice/proj/branches", { new_branch_name: name })).status).toBe(201)
    }
    expect((await request(hearth, "GET", "/repos/alice/proj/branches/gone/two/deep")).status).toBe(200)
    expect((await del("/repos/alice/proj/branches/gone/one")).status).toBe(204)
    expect((await del("/repos/alice/proj/branches/gone%2Ftwo%2Fdeep")).status).toBe(204)
    const refs = await remoteRefs("alice/proj")
    expect(refs["refs/heads/gone/one"]).toBeUndefined()
    expect(refs["refs/heads/gone/two/deep"]).toBeUndefined()
  })

  it("refuses to delete the default branch (403) and leaves it", async () => {
    const res = await del("/repos/alice/proj/branches/main")
    expect(res.status).toBe(403)
    expect(await json(res)).toMatchObject({ message: "can not delete default branch" })
    expect((await remoteRefs("alice/proj"))["refs/heads/main"]).toBe(shas.c2)
  })

  it("answers 404 for an unknown or invalid branch and in an empty repository", async () => {
    expect((await del("/repos/alice/proj/branches/nope")).status).toBe(404)
    expect((await del("/repos/alice/proj/branches/bad..name")).status).toBe(404)
    expect((await del("/repos/alice/empty/branches/main")).status).toBe(404)
  })
})

describe("PATCH /repos/{owner}/{repo}/branches/{branch} (rename)", () => {
  it("renames a branch in one step: the new name at the same commit, the old one gone", async () => {
    expect(
      (await post("/repos/alice/proj/branches", { new_branch_name: "old-name", old_ref_name: "feature/x" })).status
    ).toBe(201)
    const res = await patch("/repos/alice/proj/branches/old-name", { name: "new/name" })
    expect(res.status).toBe(204)
    const refs = await remoteRefs("alice/proj")
    expect(refs["refs/heads/old-name"]).toBeUndefined()
    expect(refs["refs/heads/new/name"]).toBe(shas.c1)
    const branch = await json(await request(hearth, "GET", "/repos/alice/proj/branches/new/name"))
    expectSwagger(branch, "Branch")
    expect(branch).toMatchObject({ name: "new/name", commit: { id: shas.c1 } })
  })

  it("renames names with `/`, given as they are or percent-encoded", async () => {
    expect((await patch("/repos/alice/proj/branches/new/name", { name: "plain" })).status).toBe(204)
    expect((await patch("/repos/alice/proj/branches/plain", { name: "s/l/ash" })).status).toBe(204)
    expect((await patch("/repos/alice/proj/branches/s%2Fl%2Fash", { name: "back" })).status).toBe(204)
    const refs = await remoteRefs("alice/proj")
    expect(refs["refs/heads/back"]).toBe(shas.c1)
    expect(Object.keys(refs).filter((r) => /new\/name|plain|s\/l\/ash/.test(r))).toEqual([])
  })

  it("answers 422 for an existing, identical or invalid new name, 404 for an unknown branch, and changes nothing", async () => {
    const before = await remoteRefs("alice/proj")
    const taken = await patch("/repos/alice/proj/branches/back", { name: "main" })
    expect(taken.status).toBe(422)
    expect((await json(taken)).message).toContain("already exists")
    expect((await patch("/repos/alice/proj/branches/back", { name: "back" })).status).toBe(422)
    expect((await patch("/repos/alice/proj/branches/back", { name: "bad..name" })).status).toBe(422)
    expect((await patch("/repos/alice/proj/branches/back", {})).status).toBe(422)
    expect((await patch("/repos/alice/proj/branches/back", { name: "b".repeat(101) })).status).toBe(422)
    expect((await patch("/repos/alice/proj/branches/nope", { name: "whatever" })).status).toBe(404)
    // `feature` cannot exist next to `feature/x`.
    expect((await patch("/repos/alice/proj/branches/back", { name: "feature" })).status).toBe(409)
    expect(await remoteRefs("alice/proj")).toEqual(before)
  })

  it("renaming the default branch moves HEAD and the repository's default_branch", async () => {
    expect((await patch("/repos/alice/rename/branches/main", { name: "trunk" })).status).toBe(204)
    const repo = await json(await request(hearth, "GET", "/repos/alice/rename", alice()))
    expect(repo.default_branch).toBe("trunk")
    const head = await git(["ls-remote", "--symref", url("alice/rename"), "HEAD"], work)
    expect(head).toContain("ref: refs/heads/trunk\tHEAD")
    const refs = await remoteRefs("alice/rename")
    expect(refs["refs/heads/main"]).toBeUndefined()
    expect(refs["refs/heads/trunk"]).toBe(shas.c2)
    // The renamed branch is now the one that cannot be deleted.
    expect((await del("/repos/alice/rename/branches/trunk")).status).toBe(403)
    const commits = await request(hearth, "GET", "/repos/alice/rename/commits?limit=1")
    expect(commits.status).toBe(200)
    expect((await json(commits))[0].sha).toBe(shas.c2)
  })
})

describe("tags", () => {
  it("creates a lightweight tag on the default branch", async () => {
    const res = await post("/repos/alice/proj/tags", { tag_name: "light" })
    expect(res.status).toBe(201)
    const tag = await json(res)
    expectSwagger(tag, "Tag")
    expect(tag).toMatchObject({ name: "light", id: shas.c2, commit: { sha: shas.c2 }, message: "second\n" })
    expect((await remoteRefs("alice/proj"))["refs/tags/light"]).toBe(shas.c2)
  })

  it("creates an annotated tag when a message is given: id is the tag object, commit the target", async () => {
    const res = await post("/repos/alice/proj/tags", {
      tag_name: "annotated",
      message: "release notes",
      target: "feature/x"
    })
    expect(res.status).toBe(201)
    const tag = await json(res)
    expectSwagger(tag, "Tag")
    expect(tag).toMatchObject({ name: "annotated", message: "release notes\n", commit: { sha: shas.c1 } })
    const peeled = await git(["ls-remote", url("alice/proj"), "refs/tags/annotated", "refs/tags/annotated^{}"], work)
    const [object, commit] = peeled.split("\n").map((line) => line.split("\t")[0])
    expect(tag.id).toBe(object)
    expect(tag.id).not.toBe(shas.c1)
    expect(commit).toBe(shas.c1)
    // The tagger is the caller.
    const local = join(work, "check")
    await git(["clone", "--quiet", "--bare", url("alice/proj"), local], work)
    expect(await git(["cat-file", "-p", "annotated"], local)).toMatch(/^tagger alice <alice@example\.com> \d+ \+0000$/m)
    for (const [target, sha] of [
      ["v1", shas.c1],
      [shas.c1!.slice(0, 8), shas.c1]
    ] as const) {
      const byTarget = await post("/repos/alice/proj/tags", { tag_name: `on-${target}`, target })
      expect(byTarget.status).toBe(201)
      expect((await json(byTarget)).commit.sha).toBe(sha)
    }
  })

  it("answers 409 for an existing tag, 404 for an unknown target, 422 for an invalid name, and changes nothing", async () => {
    const before = await remoteRefs("alice/proj")
    const exists = await post("/repos/alice/proj/tags", { tag_name: "v1", target: "main" })
    expect(exists.status).toBe(409)
    expect((await json(exists)).message).toBe("tag already exists [name: v1]")
    expect((await post("/repos/alice/proj/tags", { tag_name: "t1", target: "nope" })).status).toBe(404)
    for (const name of ["bad..tag", "-t", "a b", "", "t^"]) {
      expect((await post("/repos/alice/proj/tags", { tag_name: name })).status, name).toBe(422)
    }
    expect((await post("/repos/alice/proj/tags", { message: "no name" })).status).toBe(422)
    expect(await remoteRefs("alice/proj")).toEqual(before)
    expect((await post("/repos/alice/empty/tags", { tag_name: "t" })).status).toBe(404)
  })

  it("gets and deletes tags with `/` in the name, as they are or percent-encoded", async () => {
    for (const name of ["rc/v1", "rc/v2/1"]) {
      expect((await post("/repos/alice/proj/tags", { tag_name: name, message: `tag ${name}` })).status).toBe(201)
    }
    for (const path of ["rc/v1", "rc%2Fv1"]) {
      const res = await request(hearth, "GET", `/repos/alice/proj/tags/${path}`)
      expect(res.status, path).toBe(200)
      expect((await json(res)).name).toBe("rc/v1")
    }
    expect((await json(await request(hearth, "GET", "/repos/alice/proj/tags/rc/v2/1"))).name).toBe("rc/v2/1")
    expect((await del("/repos/alice/proj/tags/rc/v1")).status).toBe(204)
    expect((await del("/repos/alice/proj/tags/rc%2Fv2%2F1")).status).toBe(204)
    const refs = await remoteRefs("alice/proj")
    expect(refs["refs/tags/rc/v1"]).toBeUndefined()
    expect(refs["refs/tags/rc/v2/1"]).toBeUndefined()
    expect((await request(hearth, "GET", "/repos/alice/proj/tags/rc/v1")).status).toBe(404)
    // `v1/rc` cannot exist next to the tag `v1`: git keeps refs as paths.
    const clash = await post("/repos/alice/proj/tags", { tag_name: "v1/rc" })
    expect(clash.status).toBe(409)
    expect((await json(clash)).message).toBe('tag "v1/rc" cannot exist next to the tag "v1"')
  })

  it("deletes a tag (204) and answers 404 for an unknown one", async () => {
    expect((await post("/repos/alice/proj/tags", { tag_name: "short-lived", message: "bye" })).status).toBe(201)
    expect((await del("/repos/alice/proj/tags/short-lived")).status).toBe(204)
    expect((await remoteRefs("alice/proj"))["refs/tags/short-lived"]).toBeUndefined()
    expect((await del("/repos/alice/proj/tags/short-lived")).status).toBe(404)
    expect((await del("/repos/alice/proj/tags/bad..name")).status).toBe(404)
  })
})

describe("who may change branches and tags", () => {
  const writes = (repo: string) => [
    () => ["POST", `/repos/alice/${repo}/branches`, { new_branch_name: "intruder" }] as const,
    () => ["DELETE", `/repos/alice/${repo}/branches/feature/x`, undefined] as const,
    () => ["PATCH", `/repos/alice/${repo}/branches/feature%2Fx`, { name: "taken-over" }] as const,
    () => ["POST", `/repos/alice/${repo}/tags`, { tag_name: "intruder" }] as const,
    () => ["DELETE", `/repos/alice/${repo}/tags/v1`, undefined] as const
  ]
  const tryAll = async (repo: string, auth: string | undefined) => {
    const statuses: Array<number> = []
    for (const write of writes(repo)) {
      const [method, path, body] = write()
      statuses.push((await request(hearth, method, path, auth, body)).status)
    }
    return statuses
  }

  it("refuses read-only collaborators (403), strangers to a private repository (404), anonymous callers (401)", async () => {
    const before = { proj: await remoteRefs("alice/proj"), secret: await remoteRefs("alice/secret") }
    expect(await tryAll("proj", basic("carol"))).toEqual([403, 403, 403, 403, 403])
    expect(await tryAll("proj", basic("bob"))).toEqual([403, 403, 403, 403, 403])
    expect(await tryAll("secret", basic("carol"))).toEqual([403, 403, 403, 403, 403])
    expect(await tryAll("secret", basic("bob"))).toEqual([404, 404, 404, 404, 404])
    expect(await tryAll("proj", undefined)).toEqual([401, 401, 401, 401, 401])
    const refused = await post("/repos/alice/proj/branches", { new_branch_name: "intruder" }, basic("carol"))
    expect(await json(refused)).toMatchObject({ message: "user should have a permission to write to a repo" })
    expect(await remoteRefs("alice/proj")).toEqual(before.proj)
    expect(await remoteRefs("alice/secret")).toEqual(before.secret)
  })

  it("lets write collaborators change them", async () => {
    const res = await post("/repos/alice/secret/branches", { new_branch_name: "by-dave" }, basic("dave"))
    expect(res.status).toBe(201)
    expect((await del("/repos/alice/secret/branches/by-dave", basic("dave"))).status).toBe(204)
  })

  it("needs the write:repository scope on tokens", async () => {
    const read = `token ${await createToken(hearth, "alice", ["read:repository"])}`
    const refused = await post("/repos/alice/proj/branches", { new_branch_name: "by-token" }, read)
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toContain("write:repository")
    expect(await tryAll("proj", read)).toEqual([403, 403, 403, 403, 403])
    expect((await request(hearth, "GET", "/repos/alice/proj/branches/main", read)).status).toBe(200)
    const write = `token ${await createToken(hearth, "alice", ["write:repository"])}`
    expect((await post("/repos/alice/proj/branches", { new_branch_name: "by-token" }, write)).status).toBe(201)
    expect((await del("/repos/alice/proj/branches/by-token", write)).status).toBe(204)
  })

  it("refuses branch changes in a mirror (403)", async () => {
    await sqlRun("UPDATE repositories SET is_mirror = true WHERE lower_name = 'mirror'")
    const before = await remoteRefs("alice/mirror")
    const create = await post("/repos/alice/mirror/branches", { new_branch_name: "x" })
    expect(create.status).toBe(403)
    expect(await json(create)).toMatchObject({ message: "Git Repository is a mirror." })
    expect((await del("/repos/alice/mirror/branches/feature/x")).status).toBe(403)
    expect((await patch("/repos/alice/mirror/branches/feature/x", { name: "y" })).status).toBe(403)
    expect(await remoteRefs("alice/mirror")).toEqual(before)
  })

  it("signs annotated tags as the caller: full name, and the placeholder e-mail when the address is private", async () => {
    await createUser(hearth, { username: "root", isAdmin: true })
    const edited = await patch("/admin/users/dave", { full_name: "Dave <The> Writer", hide_email: true }, basic("root"))
    expect(edited.status).toBe(200)
    const res = await post("/repos/alice/secret/tags", { tag_name: "by-dave", message: "signed off" }, basic("dave"))
    expect(res.status).toBe(201)
    const local = join(work, "secret-check")
    await git(["clone", "--quiet", "--bare", url("alice/secret"), local], work)
    const email = `dave@${hearth.settings.service.NO_REPLY_ADDRESS}`
    expect(await git(["cat-file", "-p", "by-dave"], local)).toContain(`\ntagger Dave The Writer <${email}> `)
  })

  it("refuses every change to an archived repository (423)", async () => {
    const before = await remoteRefs("alice/arch")
    expect(await tryAll("arch", alice())).toEqual([423, 423, 423, 423, 423])
    const res = await post("/repos/alice/arch/branches", { new_branch_name: "x" })
    expect((await json(res)).message).toMatch(/^<Repository \d+:alice\/arch> is archived$/)
    expect(await remoteRefs("alice/arch")).toEqual(before)
    // Reading still works.
    expect((await request(hearth, "GET", "/repos/alice/arch/branches")).status).toBe(200)
  })
})

describe("the API description", () => {
  it("documents the branch and tag routes as Forgejo names them, without the routing twins for `/`", async () => {
    const doc = await json(await fetch(`${hearth.base}/api/swagger.v1.json`))
    const paths = doc.paths as Record<string, Record<string, unknown>>
    expect(Object.keys(paths["/api/v1/repos/{owner}/{repo}/branches"]!).sort()).toEqual(["get", "post"])
    expect(Object.keys(paths["/api/v1/repos/{owner}/{repo}/branches/{branch}"]!).sort()).toEqual([
      "delete",
      "get",
      "patch"
    ])
    expect(Object.keys(paths["/api/v1/repos/{owner}/{repo}/tags"]!).sort()).toEqual(["get", "post"])
    expect(Object.keys(paths["/api/v1/repos/{owner}/{repo}/tags/{tag}"]!).sort()).toEqual(["delete", "get"])
    const ours = Object.keys(paths).filter((p) => /\/(branches|tags)(\/|$)/.test(p))
    expect(ours.filter((p) => p.includes("{rest}") || p.includes("*"))).toEqual([])
  })
})

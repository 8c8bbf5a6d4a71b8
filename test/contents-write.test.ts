// Changing files through the API (issue 3 item 6, write side): create, update, delete, several
// changes in one commit, branches, identities — every commit made by the repository's entity and
// checked with the real git client on the bare repository.
import { execFile } from "node:child_process"
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const run = (args: ReadonlyArray<string>, cwd: string) =>
  new Promise<string>((done, fail) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com"
    })
    execFile(
      "git",
      args as Array<string>,
      { cwd, env, timeout: 60_000, maxBuffer: 1 << 26 },
      (error, stdout, stderr) =>
        error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  })

/** git on the bare repository Hearth keeps for alice/{name}. */
const bare = (name: string, args: ReadonlyArray<string>) =>
  run(["--git-dir", join(hearth.settings.repository.ROOT, "alice", `${name}.git`), ...args], work)

const b64 = (text: string | Buffer) => Buffer.from(text).toString("base64")
const blobSha = (name: string, text: string) =>
  new Promise<string>((done, fail) => {
    const child = execFile("git", ["hash-object", "--stdin"], { env: gitEnv() }, (error, stdout) =>
      error === null ? done(stdout.trim()) : fail(error)
    )
    child.stdin!.end(text)
    void name
  })

const alice = () => basic("alice")
/** `auth` null: anonymous. */
const contents = (repo: string, path: string, method: string, body: unknown, auth: string | null = alice()) =>
  request(hearth, method, `/repos/alice/${repo}/contents${path === "" ? "" : `/${path}`}`, auth ?? undefined, body)

const newRepo = async (name: string, extra: Record<string, unknown> = {}) => {
  expect((await request(hearth, "POST", "/user/repos", alice(), { name, ...extra })).status).toBe(201)
}

/** Forgejo encodes unset *string fields as null; the schema check reads them as plain strings. */
const withoutNulls = (value: any): any =>
  value === null || typeof value !== "object"
    ? value
    : Array.isArray(value)
      ? value.map(withoutNulls)
      : Object.fromEntries(
          Object.entries(value)
            .filter(([, v]) => v !== null)
            .map(([k, v]) => [k, withoutNulls(v)])
        )

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-contents-write-"))
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("creating a file", () => {
  it("makes the first commit of an empty repository on its default branch (201 FileResponse)", async () => {
    await newRepo("first")
    const res = await contents("first", "docs/hello.txt", "POST", { content: b64("hello\n") })
    expect(res.status).toBe(201)
    const body = await json(res)
    expectSwagger(withoutNulls(body), "FileResponse")
    const head = await bare("first", ["rev-parse", "refs/heads/main"])
    expect(body.commit.sha).toBe(head)
    expect(body.commit.parents).toEqual([])
    expect(body.commit.message).toBe("Add docs/hello.txt\n")
    expect(body.content).toMatchObject({
      name: "hello.txt",
      path: "docs/hello.txt",
      type: "file",
      size: 6,
      sha: await blobSha("", "hello\n"),
      last_commit_sha: head,
      content: b64("hello\n")
    })
    expect(await bare("first", ["show", "main:docs/hello.txt"])).toBe("hello")
    // The database learnt it: the repository is no longer empty.
    const repo = await json(await request(hearth, "GET", "/repos/alice/first", alice()))
    expect(repo.empty).toBe(false)
    expect(repo.default_branch).toBe("main")
  })

  it("uses the signed-in account as author and committer unless told otherwise", async () => {
    const log = await bare("first", ["log", "-1", "--format=%an <%ae>|%cn <%ce>", "main"])
    expect(log).toBe("alice <alice@example.com>|alice <alice@example.com>")
  })

  it("refuses a path that exists, or that goes through a file, with 422 and changes nothing", async () => {
    const before = await bare("first", ["rev-parse", "main"])
    const exists = await contents("first", "docs/hello.txt", "POST", { content: b64("again") })
    expect(exists.status).toBe(422)
    expect((await json(exists)).message).toContain("repository file already exists [path: docs/hello.txt]")
    const under = await contents("first", "docs/hello.txt/deeper.txt", "POST", { content: b64("x") })
    expect(under.status).toBe(422)
    expect((await json(under)).message).toContain(
      "a file exists where you're trying to create a subdirectory [path: docs/hello.txt]"
    )
    const dir = await contents("first", "docs", "POST", { content: b64("x") })
    expect(dir.status).toBe(422)
    expect(await bare("first", ["rev-parse", "main"])).toBe(before)
  })

  it("refuses bad paths, bad base64, bad branch names and bad identities with 422", async () => {
    const before = await bare("first", ["rev-parse", "main"])
    const cases: Array<[string, unknown]> = [
      [".git/config", { content: b64("x") }],
      ["ok.txt", { content: "not base64!" }],
      ["ok.txt", { content: b64("x"), branch: "bad..name" }],
      ["ok.txt", { content: b64("x"), new_branch: "-flag" }],
      ["ok.txt", { content: b64("x"), author: { name: "Eve <evil>", email: "e@example.com" } }],
      ["ok.txt", { content: b64("x"), dates: { author: "yesterday" } }],
      ["ok.txt", {}]
    ]
    for (const [path, body] of cases) {
      const res = await contents("first", path, "POST", body)
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(422)
      expect((await json(res)).message).not.toBe("")
    }
    // (URLs cannot carry `.` and `..` segments: clients resolve them before sending.)
    const multi = [
      { operation: "create", path: "a/../b.txt", content: b64("x") },
      { operation: "create", path: "a/./b.txt", content: b64("x") },
      { operation: "update", path: "b.txt", from_path: "../b.txt", content: b64("x"), sha: "1".repeat(40) },
      { operation: "create", path: "/etc/passwd", content: b64("x") },
      { operation: "create", path: "a\u0000b", content: b64("x") },
      { operation: "create", path: "", content: b64("x") },
      // Longer than a file system's name or path (it once wrote a tree entry without a name).
      { operation: "create", path: "n".repeat(256), content: b64("x") },
      { operation: "create", path: `${"d".repeat(200)}/`.repeat(21).slice(0, -1), content: b64("x") }
    ]
    for (const file of multi) {
      const res = await contents("first", "", "POST", { files: [file] })
      expect(res.status, JSON.stringify(file).slice(0, 200)).toBe(422)
    }
    const long = await contents("first", "", "POST", { files: [{ operation: "create", path: "é".repeat(128) }] })
    expect((await json(long)).message).toMatch(/at most 255 bytes/)
    // 255 bytes is a name a file system takes.
    const longest = await contents("first", "", "POST", {
      files: [{ operation: "create", path: "n".repeat(255) }],
      new_branch: "long-names"
    })
    expect(longest.status).toBe(201)
    await bare("first", ["fsck", "--strict", "--no-dangling"])
    expect((await contents("first", "", "POST", { files: [] })).status).toBe(422)
    expect(await bare("first", ["rev-parse", "main"])).toBe(before)
  })

  it("takes message, author, committer, dates and signoff", async () => {
    const res = await contents("first", "notes.txt", "POST", {
      content: b64("n\n"),
      message: "Write the notes",
      author: { name: "Ann Author", email: "ann@example.com" },
      committer: { name: "Cid Committer", email: "cid@example.com" },
      dates: { author: "2020-01-02T03:04:05Z", committer: "2021-02-03T04:05:06+02:00" },
      signoff: true
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(body.commit.author).toEqual({ name: "Ann Author", email: "ann@example.com", date: "2020-01-02T03:04:05Z" })
    expect(body.commit.committer).toMatchObject({ name: "Cid Committer", email: "cid@example.com" })
    expect(new Date(body.commit.committer.date).toISOString()).toBe("2021-02-03T02:05:06.000Z")
    const message = await bare("first", ["log", "-1", "--format=%B", "main"])
    expect(message).toBe("Write the notes\n\nSigned-off-by: Cid Committer <cid@example.com>")
  })

  it("puts the commit on a new branch with new_branch, leaving the base branch alone", async () => {
    const main = await bare("first", ["rev-parse", "main"])
    const res = await contents("first", "feature.txt", "POST", { content: b64("f"), new_branch: "feature/one" })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(await bare("first", ["rev-parse", "refs/heads/feature/one"])).toBe(body.commit.sha)
    expect(body.commit.parents.map((p: { sha: string }) => p.sha)).toEqual([main])
    expect(await bare("first", ["rev-parse", "main"])).toBe(main)
    expect(body.content.url).toContain("?ref=feature%2Fone")
    // The new branch exists now; naming it again as new_branch is refused.
    const again = await contents("first", "feature2.txt", "POST", { content: b64("f"), new_branch: "feature/one" })
    expect(again.status).toBe(422)
    expect((await json(again)).message).toContain("branch already exists")
    // A commit on the feature branch itself.
    expect((await contents("first", "feature3.txt", "POST", { content: b64("f"), branch: "feature/one" })).status).toBe(
      201
    )
    expect(await bare("first", ["rev-parse", "main"])).toBe(main)
    // An unknown base branch is 404.
    expect((await contents("first", "x.txt", "POST", { content: b64("f"), branch: "nope" })).status).toBe(404)
  })
})

describe("updating and deleting a file", () => {
  beforeAll(async () => {
    await newRepo("edit")
    const local = join(work, "edit")
    const remote = new URL(`${hearth.base}/alice/edit.git`)
    remote.username = "alice"
    remote.password = "password123"
    await run(["clone", remote.toString(), local], work)
    writeFileSync(join(local, "run.sh"), "#!/bin/sh\necho one\n")
    chmodSync(join(local, "run.sh"), 0o755)
    writeFileSync(join(local, "a.txt"), "a\n")
    writeFileSync(join(local, "b.txt"), "b\n")
    await run(["add", "."], local)
    await run(["commit", "-m", "start"], local)
    await run(["push", "origin", "HEAD:refs/heads/main"], local)
  })

  const shaOf = async (path: string) => (await json(await contents("edit", path, "GET", undefined))).sha as string

  it("updates a file given its current sha (200) and keeps an executable file executable", async () => {
    const sha = await shaOf("run.sh")
    const res = await contents("edit", "run.sh", "PUT", { content: b64("#!/bin/sh\necho two\n"), sha })
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(withoutNulls(body), "FileResponse")
    expect(body.commit.message).toBe("Update run.sh\n")
    expect(await bare("edit", ["ls-tree", "main", "--", "run.sh"])).toMatch(/^100755 blob /)
    expect(await bare("edit", ["show", "main:run.sh"])).toBe("#!/bin/sh\necho two")
  })

  it("refuses a stale sha (422), a missing sha (422) and a missing file (404)", async () => {
    const before = await bare("edit", ["rev-parse", "main"])
    const stale = await contents("edit", "a.txt", "PUT", { content: b64("z"), sha: "0".repeat(39) + "1" })
    expect(stale.status).toBe(422)
    expect((await json(stale)).message).toContain("sha does not match")
    expect((await contents("edit", "a.txt", "PUT", { content: b64("z") })).status).toBe(422)
    expect(
      (await contents("edit", "missing.txt", "PUT", { content: b64("z"), sha: await shaOf("a.txt") })).status
    ).toBe(404)
    expect(await bare("edit", ["rev-parse", "main"])).toBe(before)
  })

  it("moves a file with from_path", async () => {
    const sha = await shaOf("b.txt")
    const res = await contents("edit", "moved/b2.txt", "PUT", { content: b64("b moved\n"), sha, from_path: "b.txt" })
    expect(res.status).toBe(200)
    expect(await bare("edit", ["ls-tree", "-r", "--name-only", "main"])).toBe(
      ["a.txt", "moved/b2.txt", "run.sh"].join("\n")
    )
  })

  it("deletes a file given its sha (200, content null); 404 when missing, 400 for a stale sha", async () => {
    const before = await bare("edit", ["rev-parse", "main"])
    expect((await contents("edit", "nothing.txt", "DELETE", { sha: await shaOf("a.txt") })).status).toBe(404)
    const stale = await contents("edit", "a.txt", "DELETE", { sha: "1".repeat(40) })
    expect(stale.status).toBe(400)
    expect((await json(stale)).message).toContain("sha does not match")
    expect(await bare("edit", ["rev-parse", "main"])).toBe(before)
    const res = await contents("edit", "a.txt", "DELETE", { sha: await shaOf("a.txt"), message: "Remove a" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body.content).toBeNull()
    expectSwagger(withoutNulls(body), "FileDeleteResponse")
    expect(await bare("edit", ["ls-tree", "-r", "--name-only", "main"])).toBe(["moved/b2.txt", "run.sh"].join("\n"))
    expect((await contents("edit", "a.txt", "GET", undefined)).status).toBe(404)
  })

  it("changes several files in one commit with POST /contents (201 FilesResponse)", async () => {
    const before = await bare("edit", ["rev-parse", "main"])
    const res = await contents("edit", "", "POST", {
      files: [
        { operation: "create", path: "new/one.txt", content: b64("1") },
        { operation: "update", path: "run.sh", content: b64("#!/bin/sh\necho three\n"), sha: await shaOf("run.sh") },
        { operation: "delete", path: "moved/b2.txt", sha: await shaOf("moved/b2.txt") }
      ]
    })
    expect(res.status).toBe(201)
    const body = await json(res)
    expect(body.files.map((f: { path: string } | null) => f?.path ?? null)).toEqual(["new/one.txt", "run.sh", null])
    expectSwagger(withoutNulls({ ...body, files: body.files.filter((f: unknown) => f !== null) }), "FilesResponse")
    expect(body.commit.message).toBe("Add new/one.txt\nUpdate run.sh\nDelete moved/b2.txt\n")
    expect(body.commit.parents.map((p: { sha: string }) => p.sha)).toEqual([before])
    expect(await bare("edit", ["rev-list", "--count", `${before}..main`])).toBe("1")
    expect(await bare("edit", ["ls-tree", "-r", "--name-only", "main"])).toBe(["new/one.txt", "run.sh"].join("\n"))
  })

  it("is all or nothing: one refused operation leaves the branch as it was", async () => {
    const before = await bare("edit", ["rev-parse", "main"])
    const res = await contents("edit", "", "POST", {
      files: [
        { operation: "create", path: "fine.txt", content: b64("ok") },
        { operation: "delete", path: "not-there.txt", sha: "2".repeat(40) }
      ]
    })
    expect(res.status).toBe(404)
    expect(await bare("edit", ["rev-parse", "main"])).toBe(before)
  })
})

describe("who may change files", () => {
  beforeAll(async () => {
    await newRepo("guarded")
    await newRepo("hidden", { private: true })
    expect(
      (await request(hearth, "PUT", "/repos/alice/guarded/collaborators/bob", alice(), { permission: "read" })).status
    ).toBe(204)
  })

  it("needs a signed-in caller with write access; anonymous 401, reader 403, stranger on private 404", async () => {
    const body = { content: b64("x") }
    expect((await contents("guarded", "x.txt", "POST", body, null)).status).toBe(401)
    expect((await contents("guarded", "x.txt", "POST", body, basic("bob"))).status).toBe(403)
    expect((await contents("hidden", "x.txt", "POST", body, basic("carol"))).status).toBe(404)
    expect(await bare("guarded", ["for-each-ref"])).toBe("")
  })

  it("needs a token with write:repository", async () => {
    const reader = await createToken(hearth, "alice", ["read:repository"])
    const writer = await createToken(hearth, "alice", ["write:repository"])
    expect((await contents("guarded", "x.txt", "POST", { content: b64("x") }, `token ${reader}`)).status).toBe(403)
    expect((await contents("guarded", "x.txt", "POST", { content: b64("x") }, `token ${writer}`)).status).toBe(201)
  })

  it("refuses changes to an archived repository with 423", async () => {
    expect((await request(hearth, "PATCH", "/repos/alice/guarded", alice(), { archived: true })).status).toBe(200)
    const res = await contents("guarded", "y.txt", "POST", { content: b64("y") })
    expect(res.status).toBe(423)
    expect((await json(res)).message).toContain("archived")
  })
})

// Many commits queue behind one another on purpose: on a loaded 2-core machine the queue alone
// outlasts the default 30 s time-out (a bound on a hang, not a measure of speed).
describe("concurrent commits to one repository", () => {
  it("serializes 50 concurrent commits: all succeed, history is linear, nothing is lost, fsck is clean", async () => {
    await newRepo("busy")
    expect((await contents("busy", "start.txt", "POST", { content: b64("start") })).status).toBe(201)
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => contents("busy", `files/f${i}.txt`, "POST", { content: b64(`file ${i}\n`) }))
    )
    const statuses = results.map((r) => r.status)
    expect(statuses.every((s) => s === 201)).toBe(true)
    const shas = await Promise.all(results.map(async (r) => (await json(r)).commit.sha as string))
    expect(new Set(shas).size).toBe(50)
    expect(await bare("busy", ["rev-list", "--count", "main"])).toBe("51")
    expect(await bare("busy", ["rev-list", "--min-parents=2", "main"])).toBe("")
    const listed = (await bare("busy", ["ls-tree", "-r", "--name-only", "main", "--", "files"])).split("\n")
    expect(listed.length).toBe(50)
    await bare("busy", ["fsck", "--strict", "--no-progress"])
    // No temporary refs are left behind.
    expect(await bare("busy", ["for-each-ref", "refs/hearth/"])).toBe("")
  }, 120_000)

  it("lets exactly one of 20 concurrent updates of the same file win; the rest get a clean 422", async () => {
    const sha = (await json(await contents("busy", "start.txt", "GET", undefined))).sha
    const before = Number(await bare("busy", ["rev-list", "--count", "main"]))
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => contents("busy", "start.txt", "PUT", { content: b64(`version ${i}`), sha }))
    )
    const statuses = results.map((r) => r.status).sort()
    expect(statuses.filter((s) => s === 200).length).toBe(1)
    expect(statuses.filter((s) => s === 422).length).toBe(19)
    expect(Number(await bare("busy", ["rev-list", "--count", "main"]))).toBe(before + 1)
    await bare("busy", ["fsck", "--strict", "--no-progress"])
  }, 120_000)
})

// Commits (with their stats, files and verification), branches and tags read through the API from
// repositories filled by pushing with the real git client over HTTP (issue 3 items 7, 8 read side).
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
const shas: Record<string, string> = {}
let signedPayload = ""
let signedSignature = ""

const git = (args: ReadonlyArray<string>, cwd: string, date = "2026-01-01T00:00:00Z") =>
  new Promise<string>((done, fail) => {
    const env = gitEnv({
      GIT_AUTHOR_NAME: "Alice",
      GIT_AUTHOR_EMAIL: "alice@example.com",
      GIT_COMMITTER_NAME: "Someone",
      GIT_COMMITTER_EMAIL: "nobody@elsewhere.test",
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_DATE: date
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

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-branches-"))
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["proj", false],
    ["hidden", true],
    ["empty", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: priv })).status).toBe(201)
  }
  const local = join(work, "proj")
  await git(["init", "--quiet", "--initial-branch=main", local], work)
  const commit = async (key: string, file: string, content: string, message: string, date: string) => {
    mkdirSync(join(local, file, ".."), { recursive: true })
    writeFileSync(join(local, file), content)
    await git(["add", file], local)
    await git(["commit", "--quiet", "-m", message], local, date)
    shas[key] = await git(["rev-parse", "HEAD"], local)
  }
  await commit("c1", "README.md", "one\n", "first", "2026-01-01T10:00:00Z")
  await commit("c2", "src/a.txt", "a\n", "second\n\nwith a body", "2026-01-02T10:00:00+02:00")
  await commit("c3", "README.md", "two\n", "third", "2026-01-03T10:00:00Z")
  await git(["tag", "v1", shas.c1!], local)
  await git(["tag", "-a", "-m", "release two", "v2", shas.c2!], local, "2026-01-04T00:00:00Z")
  await git(["branch", "feature/x", shas.c2!], local)
  await git(["push", "--quiet", url("alice/proj"), "main", "feature/x", "v1", "v2"], local)
  await git(["push", "--quiet", url("alice/hidden"), "main"], local)
  shas.v2 = await git(["rev-parse", "v2"], local)

  // alice/signed: a pure rename, then a commit carrying a (made-up) signature header.
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "signed" })).status).toBe(201)
  const other = join(work, "signed")
  await git(["init", "--quiet", "--initial-branch=main", other], work)
  writeFileSync(join(other, "old.txt"), "same\n")
  await git(["add", "old.txt"], other)
  await git(["commit", "--quiet", "-m", "base"], other)
  await git(["mv", "old.txt", "new.txt"], other)
  await git(["commit", "--quiet", "-m", "rename"], other)
  shas.renamed = await git(["rev-parse", "HEAD"], other)
  writeFileSync(join(other, "new.txt"), "same\nmore\n")
  await git(["commit", "--quiet", "-am", "signed change"], other)
  const raw = await git(["cat-file", "commit", "HEAD"], other)
  const signature =
    "-----BEGIN PGP SIGNATURE-----\n\niQEzBAABCAAdFiEEmadeupmadeupmadeup\n=abcd\n-----END PGP SIGNATURE-----"
  const signedObject = raw.replace(/^(committer .*)$/m, `$1\ngpgsig ${signature.split("\n").join("\n ")}`) + "\n"
  signedPayload = raw + "\n"
  signedSignature = signature + "\n"
  const file = join(work, "signed-commit")
  writeFileSync(file, signedObject)
  shas.signed = await git(["hash-object", "-t", "commit", "-w", file], other)
  await git(["update-ref", "refs/heads/main", shas.signed], other)
  await git(["branch", "unsigned", shas.renamed], other)
  await git(["push", "--quiet", url("alice/signed"), "main", "unsigned"], other)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("commits", () => {
  it("lists the default branch's history, newest first, with totals and Link", async () => {
    const res = await request(hearth, "GET", "/repos/alice/proj/commits?limit=2")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toContain('rel="next"')
    const list = await json(res)
    expectSwagger(list, "Commit[]")
    expect(list.map((c: any) => c.sha)).toEqual([shas.c3, shas.c2])
    const second = list[1]
    expect(second.commit.message).toBe("second\n\nwith a body\n")
    expect(second.commit.author).toEqual({
      name: "Alice",
      email: "alice@example.com",
      date: "2026-01-02T10:00:00+02:00"
    })
    expect(second.created).toBe("2026-01-02T10:00:00+02:00")
    expect(second.parents).toEqual([expect.objectContaining({ sha: shas.c1 })])
    expect(second.html_url).toBe(`${hearth.settings.server.ROOT_URL}alice/proj/commit/${shas.c2}`)
    expect(second.url).toBe(`${hearth.settings.server.ROOT_URL}api/v1/repos/alice/proj/git/commits/${shas.c2}`)
    // The author e-mail belongs to alice; the committer's to nobody.
    expect(second.author).toMatchObject({ login: "alice" })
    expect(second.committer).toBeNull()
    const page2 = await json(await request(hearth, "GET", "/repos/alice/proj/commits?limit=2&page=2"))
    expect(page2.map((c: any) => c.sha)).toEqual([shas.c1])
  })

  it("answers Forgejo's paging headers: X-Page, X-PerPage, X-Total, X-PageCount, X-HasMore", async () => {
    const first = await request(hearth, "GET", "/repos/alice/proj/commits?limit=2&stat=false&files=false")
    const paging = (res: Response) =>
      Object.fromEntries(
        ["x-page", "x-perpage", "x-total", "x-pagecount", "x-hasmore", "x-total-count"].map((h) => [
          h,
          res.headers.get(h)
        ])
      )
    // The total is counted whatever details are switched off (GetAllCommits always counts).
    expect(paging(first)).toEqual({
      "x-page": "1",
      "x-perpage": "2",
      "x-total": "3",
      "x-pagecount": "2",
      "x-hasmore": "true",
      "x-total-count": "3"
    })
    expect(first.headers.get("access-control-expose-headers")?.split(", ")).toEqual(
      expect.arrayContaining(["X-Total-Count", "Link", "X-Page", "X-PerPage", "X-Total", "X-PageCount", "X-HasMore"])
    )
    const last = await request(hearth, "GET", "/repos/alice/proj/commits?limit=2&page=2")
    expect(paging(last)).toMatchObject({ "x-page": "2", "x-pagecount": "2", "x-hasmore": "false" })
    expect((await json(last)).map((c: any) => c.sha)).toEqual([shas.c1])
    const beyond = await request(hearth, "GET", "/repos/alice/proj/commits?limit=2&page=5")
    expect(paging(beyond)).toMatchObject({ "x-page": "5", "x-hasmore": "false", "x-total": "3" })
    expect(await json(beyond)).toEqual([])
  })

  it("follows sha (branch, tag or commit id) and filters by path", async () => {
    const onBranch = await request(hearth, "GET", "/repos/alice/proj/commits?sha=feature/x")
    expect(onBranch.headers.get("x-total-count")).toBe("2")
    expect((await json(onBranch)).map((c: any) => c.sha)).toEqual([shas.c2, shas.c1])
    const onTag = await json(await request(hearth, "GET", "/repos/alice/proj/commits?sha=v1"))
    expect(onTag.map((c: any) => c.sha)).toEqual([shas.c1])
    const onSha = await json(await request(hearth, "GET", `/repos/alice/proj/commits?sha=${shas.c2!.slice(0, 10)}`))
    expect(onSha.map((c: any) => c.sha)).toEqual([shas.c2, shas.c1])
    const readme = await request(hearth, "GET", "/repos/alice/proj/commits?path=README.md")
    expect(readme.headers.get("x-total-count")).toBe("2")
    expect((await json(readme)).map((c: any) => c.sha)).toEqual([shas.c3, shas.c1])
    // Forgejo: a path that no commit touches is 404, not an empty list.
    expect((await request(hearth, "GET", "/repos/alice/proj/commits?path=nope.txt")).status).toBe(404)
  })

  it("answers 404 for an unknown ref and 409 for an empty repository", async () => {
    expect((await request(hearth, "GET", "/repos/alice/proj/commits?sha=nope")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/proj/commits?sha=--all")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/proj/commits?path=a%00b")).status).toBe(422)
    const empty = await request(hearth, "GET", "/repos/alice/empty/commits")
    expect(empty.status).toBe(409)
    expect(await json(empty)).toMatchObject({ message: "Git Repository is empty." })
  })

  it("returns one commit by ref and by sha, 422 for a malformed sha", async () => {
    const byRef = await json(await request(hearth, "GET", "/repos/alice/proj/commits/feature%2Fx"))
    expect(byRef.sha).toBe(shas.c2)
    expectSwagger(byRef, "Commit")
    // The same ref unencoded: the path parameter takes the rest of the path.
    const deep = await request(hearth, "GET", "/repos/alice/proj/commits/feature/x?stat=false")
    expect(deep.status).toBe(200)
    expect(await json(deep)).toMatchObject({ sha: shas.c2, stats: null })
    expect((await request(hearth, "GET", "/repos/alice/proj/commits/feature/nope")).status).toBe(404)
    const bySha = await request(hearth, "GET", `/repos/alice/proj/git/commits/${shas.c1}`)
    expect(bySha.status).toBe(200)
    expect((await json(bySha)).commit.message).toBe("first\n")
    // Forgejo's GetSingleCommit takes any ref name as well: a branch, a tag (peeled), `refs/…`.
    for (const [ref, sha] of [
      ["main", shas.c3],
      ["v2", shas.c2],
      ["feature%2Fx", shas.c2],
      ["refs%2Fheads%2Fmain", shas.c3],
      [shas.c1!.slice(0, 8), shas.c1]
    ] as const) {
      const res = await request(hearth, "GET", `/repos/alice/proj/git/commits/${ref}`)
      expect(res.status, ref).toBe(200)
      expect((await json(res)).sha, ref).toBe(sha)
    }
    const malformed = await request(hearth, "GET", "/repos/alice/proj/git/commits/main~1")
    expect(malformed.status).toBe(422)
    expect(await json(malformed)).toMatchObject({ message: "no valid ref or sha: main~1" })
    expect((await request(hearth, "GET", "/repos/alice/proj/git/commits/nope")).status).toBe(404)
    expect((await request(hearth, "GET", `/repos/alice/proj/git/commits/${"0".repeat(40)}`)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/proj/commits/nope")).status).toBe(404)
  })

  it("hides a private repository's commits from others", async () => {
    expect((await request(hearth, "GET", "/repos/alice/hidden/commits")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/hidden/commits", basic("bob"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/hidden/commits", basic("alice"))).status).toBe(200)
  })
})

describe("commit details", () => {
  it("gives each listed commit its stats and affected files, and Forgejo's verification", async () => {
    const list = await json(await request(hearth, "GET", "/repos/alice/proj/commits"))
    expectSwagger(list, "Commit[]")
    const bySha = Object.fromEntries(list.map((c: any) => [c.sha, c]))
    expect(bySha[shas.c1!]).toMatchObject({
      stats: { total: 1, additions: 1, deletions: 0 },
      files: [{ filename: "README.md", status: "added" }]
    })
    expect(bySha[shas.c2!]).toMatchObject({
      stats: { total: 1, additions: 1, deletions: 0 },
      files: [{ filename: "src/a.txt", status: "added" }]
    })
    expect(bySha[shas.c3!]).toMatchObject({
      stats: { total: 2, additions: 1, deletions: 1 },
      files: [{ filename: "README.md", status: "modified" }]
    })
    expect(bySha[shas.c3!].commit.verification).toEqual({
      verified: false,
      reason: "gpg.error.not_signed_commit",
      signature: "",
      signer: null,
      payload: ""
    })
    // The path filter limits the commits, not what each commit reports.
    const filtered = await json(await request(hearth, "GET", "/repos/alice/proj/commits?path=src/a.txt"))
    expect(filtered[0].files).toEqual([{ filename: "src/a.txt", status: "added" }])
  })

  it("leaves out stats, files and verification when asked to (null, as Forgejo)", async () => {
    const list = await json(
      await request(hearth, "GET", "/repos/alice/proj/commits?stat=false&files=0&verification=false&limit=1")
    )
    expectSwagger(list, "Commit[]")
    expect(list[0]).toMatchObject({ stats: null, files: null, commit: { verification: null } })
    const one = await json(await request(hearth, "GET", `/repos/alice/proj/git/commits/${shas.c3}?files=false`))
    expectSwagger(one, "Commit")
    expect(one.files).toBeNull()
    expect(one.stats).toEqual({ total: 2, additions: 1, deletions: 1 })
    const byRef = await json(await request(hearth, "GET", "/repos/alice/proj/commits/main?stat=f"))
    expect(byRef.stats).toBeNull()
    expect(byRef.files).toEqual([{ filename: "README.md", status: "modified" }])
  })

  it("counts a rename as nothing changed, but lists it as a removal and an addition", async () => {
    const commit = await json(await request(hearth, "GET", `/repos/alice/signed/git/commits/${shas.renamed}`))
    expect(commit.stats).toEqual({ total: 0, additions: 0, deletions: 0 })
    expect(commit.files).toEqual([
      { filename: "new.txt", status: "added" },
      { filename: "old.txt", status: "removed" }
    ])
  })

  it("answers a signed commit as not verified for want of a known key, with its signature and payload", async () => {
    const res = await request(hearth, "GET", `/repos/alice/signed/git/commits/${shas.signed}`)
    expect(res.status).toBe(200)
    const commit = await json(res)
    expectSwagger(commit, "Commit")
    expect(commit.commit.verification).toEqual({
      verified: false,
      reason: "gpg.error.no_gpg_keys_found",
      signature: signedSignature,
      signer: null,
      payload: signedPayload
    })
    expect(commit.stats).toEqual({ total: 1, additions: 1, deletions: 0 })
    const branches = await json(await request(hearth, "GET", "/repos/alice/signed/branches"))
    expectSwagger(branches, "Branch[]")
    const byName = Object.fromEntries(branches.map((b: any) => [b.name, b]))
    expect(byName.main.commit.verification).toMatchObject({
      reason: "gpg.error.no_gpg_keys_found",
      signature: signedSignature
    })
    expect(byName.unsigned.commit.verification).toMatchObject({ reason: "gpg.error.not_signed_commit" })
  })

  it("leaves out commits reachable from `not`", async () => {
    const res = await request(hearth, "GET", "/repos/alice/proj/commits?sha=main&not=feature/x")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("1")
    expect((await json(res)).map((c: any) => c.sha)).toEqual([shas.c3])
    const bySha = await json(await request(hearth, "GET", `/repos/alice/proj/commits?not=${shas.c1}`))
    expect(bySha.map((c: any) => c.sha)).toEqual([shas.c3, shas.c2])
    const unknown = await request(hearth, "GET", "/repos/alice/proj/commits?not=nope")
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).message).toContain("nope")
  })
})

describe("branches", () => {
  it("lists branches with their head commit, paged", async () => {
    const res = await request(hearth, "GET", "/repos/alice/proj/branches", basic("alice"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    const list = await json(res)
    expectSwagger(list, "Branch[]")
    expect(list.map((b: any) => [b.name, b.commit.id])).toEqual([
      ["feature/x", shas.c2],
      ["main", shas.c3]
    ])
    expect(list[1]).toMatchObject({ protected: false, user_can_push: true, commit: { message: "third\n" } })
    const anonymous = await json(await request(hearth, "GET", "/repos/alice/proj/branches?limit=1&page=2"))
    expect(anonymous.map((b: any) => b.name)).toEqual(["main"])
    expect(anonymous[0].user_can_push).toBe(false)
  })

  it("gets one branch (slashes allowed, encoded or not), 404 when unknown or invisible", async () => {
    for (const spelling of ["feature%2Fx", "feature/x"]) {
      const res = await request(hearth, "GET", `/repos/alice/proj/branches/${spelling}`)
      expect(res.status, spelling).toBe(200)
      const branch = await json(res)
      expectSwagger(branch, "Branch")
      expect(branch).toMatchObject({ name: "feature/x", commit: { id: shas.c2 } })
      // Usernames of the accounts behind the e-mails; the author's date, as Forgejo's PayloadCommit.
      expect(branch.commit.author).toEqual({ name: "Alice", email: "alice@example.com", username: "alice" })
      expect(branch.commit.committer.username).toBe("")
      expect(branch.commit.timestamp).toBe("2026-01-02T10:00:00+02:00")
    }
    expect((await request(hearth, "GET", "/repos/alice/proj/branches/feature/nope")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/proj/branches/nope")).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/hidden/branches/main", basic("bob"))).status).toBe(404)
  })
})

describe("tags", () => {
  it("lists lightweight and annotated tags", async () => {
    const res = await request(hearth, "GET", "/repos/alice/proj/tags")
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    const list = await json(res)
    expectSwagger(list, "Tag[]")
    const byName = Object.fromEntries(list.map((t: any) => [t.name, t]))
    expect(byName.v1).toMatchObject({ id: shas.c1, message: "first\n", commit: { sha: shas.c1 } })
    expect(byName.v2).toMatchObject({ id: shas.v2, message: "release two\n", commit: { sha: shas.c2 } })
    expect(byName.v2.zipball_url).toBe(`${hearth.settings.server.ROOT_URL}alice/proj/archive/v2.zip`)
  })

  it("gets one tag, 404 when unknown", async () => {
    const tag = await json(await request(hearth, "GET", "/repos/alice/proj/tags/v2"))
    expectSwagger(tag, "Tag")
    expect(tag).toMatchObject({ name: "v2", commit: { sha: shas.c2 } })
    expect(await request(hearth, "GET", "/repos/alice/proj/tags/v")).toMatchObject({ status: 404 })
    expect(await request(hearth, "GET", "/repos/alice/proj/tags/v*")).toMatchObject({ status: 404 })
    expect(await request(hearth, "GET", "/repos/alice/proj/tags/v2/nope")).toMatchObject({ status: 404 })
  })
})

describe("archives", () => {
  const download = async (path: string, auth?: string) => {
    const res = await request(hearth, "GET", path, auth)
    return { res, bytes: Buffer.from(await res.arrayBuffer()) }
  }

  it("streams zip, tar.gz and bundle archives of a ref", async () => {
    const zip = await download("/repos/alice/proj/archive/main.zip")
    expect(zip.res.status).toBe(200)
    expect(zip.res.headers.get("content-type")).toBe("application/zip")
    expect(zip.res.headers.get("content-disposition")).toBe('attachment; filename="proj-main.zip"')
    expect(zip.bytes.subarray(0, 2).toString()).toBe("PK")
    expect(zip.bytes.includes(Buffer.from("proj/src/a.txt"))).toBe(true)

    const tgz = await download(`/repos/alice/proj/archive/${shas.c1}.tar.gz`)
    expect(tgz.res.status).toBe(200)
    expect([...tgz.bytes.subarray(0, 2)]).toEqual([0x1f, 0x8b])

    const bundle = await download("/repos/alice/proj/archive/feature%2Fx.bundle")
    expect(bundle.res.status).toBe(200)
    const file = join(work, "x.bundle")
    writeFileSync(file, bundle.bytes)
    expect(await git(["bundle", "list-heads", file], join(work, "proj"))).toBe(`${shas.c2} refs/heads/feature/x`)
    await git(["bundle", "verify", "--quiet", file], join(work, "proj"))

    // A ref with `/` unencoded, as Forgejo's `/archive/*` takes it.
    const deep = await download("/repos/alice/proj/archive/feature/x.zip")
    expect(deep.res.status).toBe(200)
    expect(deep.res.headers.get("content-disposition")).toBe('attachment; filename="proj-feature-x.zip"')
    expect((await request(hearth, "GET", "/repos/alice/proj/archive/feature/nope.zip")).status).toBe(404)
  })

  it("answers JSON errors: 404 unknown ref or invisible repository, 422 unknown format", async () => {
    const unknown = await request(hearth, "GET", "/repos/alice/proj/archive/nope.zip")
    expect(unknown.status).toBe(404)
    const format = await request(hearth, "GET", "/repos/alice/proj/archive/main.rar")
    expect(format.status).toBe(422)
    expect(format.headers.get("content-type")).toContain("application/json")
    expect((await json(format)).message).toContain("main.rar")
    expect((await request(hearth, "GET", "/repos/alice/hidden/archive/main.zip", basic("bob"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/hidden/archive/main.zip", basic("alice"))).status).toBe(200)
  })
  it("kills git when the client goes away mid-download", async () => {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "big" })).status).toBe(201)
    const local = join(work, "big")
    await git(["init", "--quiet", "--initial-branch=main", local], work)
    // Incompressible and far larger than the pipe buffers: git blocks until the client reads.
    writeFileSync(join(local, "noise.bin"), randomBytes(24 * 1024 * 1024))
    await git(["add", "noise.bin"], local)
    await git(["commit", "--quiet", "-m", "noise"], local)
    await git(["push", "--quiet", url("alice/big"), "main"], local)

    const running = () =>
      new Promise<boolean>((done) =>
        execFile("ps", ["-eo", "args"], (_error, stdout) => done(stdout.includes("--prefix=big/")))
      )
    const controller = new AbortController()
    const res = await fetch(hearth.api("/repos/alice/big/archive/main.zip"), { signal: controller.signal })
    expect(res.status).toBe(200)
    const reader = res.body!.getReader()
    expect((await reader.read()).done).toBe(false)
    expect(await running()).toBe(true)
    controller.abort()
    let gone = false
    for (let i = 0; i < 50 && !gone; i++) {
      await new Promise((r) => setTimeout(r, 100))
      gone = !(await running())
    }
    expect(gone).toBe(true)
    // The server is still fine.
    expect((await request(hearth, "GET", "/repos/alice/big/branches")).status).toBe(200)
  }, 60_000)
})

// PATCH /repos/{owner}/{repo} (EditRepoOption): renames that move the bare repository with the
// row, default branches that must exist, archiving, mirror settings, unit switches; admin access
// or 403; bad input 422 with nothing written (issue 3 item 3; Forgejo's repo `Edit`).
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-repos-edit-"))
  await Promise.all(["alice", "bob", "carol", "dave"].map((username) => createUser(hearth, { username })))
  await createUser(hearth, { username: "root", isAdmin: true })
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

const call = (method: string, path: string, auth?: string, body?: unknown) => request(hearth, method, path, auth, body)

const repoDir = (owner: string, name: string) =>
  join(hearth.settings.repository.ROOT, owner.toLowerCase(), `${name.toLowerCase()}.git`)

const head = async (owner: string, name: string) =>
  (await hearth.run(Git.run(["--git-dir", repoDir(owner, name), "symbolic-ref", "HEAD"]))).stdout.toString().trim()

const sqlRun = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  hearth.run(
    Effect.gen(function* () {
      return yield* f(yield* SqlClient)
    }) as Effect.Effect<A>
  )

const row = async (owner: string, name: string) =>
  (
    await sqlRun(
      (sql) =>
        sql`SELECT r.* FROM repositories r JOIN users o ON o.id = r.owner_id
      WHERE o.lower_name = ${owner} AND r.lower_name = ${name.toLowerCase()}`
    )
  )[0]

const addCollaborator = (owner: string, name: string, user: string, mode: "read" | "write" | "admin") =>
  sqlRun(
    (sql) =>
      sql`INSERT INTO collaborations (repo_id, user_id, mode)
      SELECT r.id, u.id, ${mode} FROM repositories r JOIN users o ON o.id = r.owner_id, users u
      WHERE o.lower_name = ${owner} AND r.lower_name = ${name.toLowerCase()} AND u.lower_name = ${user}`
  )

let unique = 0
const createRepo = async (user: string, body: Record<string, unknown> = {}) => {
  const res = await call("POST", "/user/repos", basic(user), { name: `edit${++unique}`, ...body })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}

const git = (args: ReadonlyArray<string>, cwd: string) =>
  new Promise<void>((done, fail) => {
    const env = Git.gitEnv({
      GIT_AUTHOR_NAME: "A",
      GIT_AUTHOR_EMAIL: "a@example.com",
      GIT_COMMITTER_NAME: "A",
      GIT_COMMITTER_EMAIL: "a@example.com"
    })
    execFile("git", args as Array<string>, { cwd, env }, (error, _stdout, stderr) =>
      error === null ? done() : fail(new Error(stderr))
    )
  })

/** Puts branches `main` and `dev` into the bare repository directly and marks it non-empty. */
const fill = async (owner: string, name: string) => {
  const dir = mkdtempSync(join(work, "w-"))
  await git(["init", "-q", "-b", "main"], dir)
  writeFileSync(join(dir, "README.md"), "hello\n")
  await git(["add", "README.md"], dir)
  await git(["commit", "-q", "-m", "first"], dir)
  await git(["push", "-q", repoDir(owner, name), "main:main", "main:dev"], dir)
  await sqlRun(
    (sql) =>
      sql`UPDATE repositories SET is_empty = false WHERE lower_name = ${name.toLowerCase()}
      AND owner_id = (SELECT id FROM users WHERE lower_name = ${owner})`
  )
}

const patch = (owner: string, name: string, auth: string | undefined, body: unknown) =>
  call("PATCH", `/repos/${owner}/${name}`, auth, body)

describe("PATCH /repos/{owner}/{repo}", () => {
  it("changes description, website and visibility and answers the Repository", async () => {
    const repo = await createRepo("alice")
    const res = await patch("alice", repo.name, basic("alice"), {
      description: "new words",
      website: "https://example.com/x",
      private: true
    })
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Repository")
    expect(body).toMatchObject({
      name: repo.name,
      description: "new words",
      website: "https://example.com/x",
      private: true,
      permissions: { admin: true, push: true, pull: true }
    })
    // Private now: invisible to others.
    expect((await call("GET", `/repos/alice/${repo.name}`, basic("bob"))).status).toBe(404)
    const again = await json(await call("GET", `/repos/alice/${repo.name}`, basic("alice")))
    expect(again.description).toBe("new words")
  })

  it("an empty body changes nothing and answers 200", async () => {
    const repo = await createRepo("alice", { description: "keep" })
    const res = await patch("alice", repo.name, basic("alice"), {})
    expect(res.status).toBe(200)
    expect((await json(res)).description).toBe("keep")
  })

  it("renames: the directory moves with the row, the old name redirects to the new one", async () => {
    const repo = await createRepo("alice")
    await fill("alice", repo.name)
    const res = await patch("alice", repo.name, basic("alice"), { name: "Renamed-One" })
    expect(res.status).toBe(200)
    const body = await json(res)
    expect(body).toMatchObject({ name: "Renamed-One", full_name: "alice/Renamed-One" })
    expect(existsSync(repoDir("alice", repo.name))).toBe(false)
    expect(existsSync(repoDir("alice", "Renamed-One"))).toBe(true)
    expect(await head("alice", "Renamed-One")).toBe("refs/heads/main")
    const old = await fetch(hearth.api(`/repos/alice/${repo.name}`), {
      redirect: "manual",
      headers: { authorization: basic("alice") }
    })
    expect(old.status).toBe(307)
    expect(old.headers.get("location")).toBe(hearth.api("/repos/alice/Renamed-One"))
    expect((await call("GET", "/repos/alice/renamed-one", basic("alice"))).status).toBe(200)
  })

  it("a change of letter case only keeps the directory", async () => {
    const repo = await createRepo("alice", { name: "casey" })
    const res = await patch("alice", repo.name, basic("alice"), { name: "Casey" })
    expect(res.status).toBe(200)
    expect((await json(res)).name).toBe("Casey")
    expect(existsSync(repoDir("alice", "casey"))).toBe(true)
  })

  it("refuses a taken name with 409 and an invalid one with 422, writing nothing", async () => {
    const a = await createRepo("alice")
    const b = await createRepo("alice")
    const taken = await patch("alice", a.name, basic("alice"), { name: b.name.toUpperCase(), description: "x" })
    expect(taken.status).toBe(409)
    expect((await json(taken)).message).toContain("already exists")
    for (const name of ["..", "a/b", "x.git", "a".repeat(101)]) {
      const res = await patch("alice", a.name, basic("alice"), { name, description: "x" })
      expect(res.status, name).toBe(422)
    }
    expect((await row("alice", a.name)).description).toBe("")
    expect(existsSync(repoDir("alice", a.name))).toBe(true)
  })

  it("a rename whose target directory already exists is refused with 409 and leaves both", async () => {
    const repo = await createRepo("alice")
    const stray = repoDir("alice", "stray-dir")
    await hearth.run(Git.initBare(stray, "main"))
    const res = await patch("alice", repo.name, basic("alice"), { name: "stray-dir" })
    expect(res.status).toBe(409)
    expect(existsSync(stray)).toBe(true)
    expect(existsSync(repoDir("alice", repo.name))).toBe(true)
    expect((await row("alice", repo.name)).name).toBe(repo.name)
  })

  it("sets the default branch and HEAD when the branch exists; 422 when it does not", async () => {
    const repo = await createRepo("alice")
    await fill("alice", repo.name)
    const res = await patch("alice", repo.name, basic("alice"), { default_branch: "dev" })
    expect(res.status).toBe(200)
    expect((await json(res)).default_branch).toBe("dev")
    expect(await head("alice", repo.name)).toBe("refs/heads/dev")
    const missing = await patch("alice", repo.name, basic("alice"), { default_branch: "nope", description: "x" })
    expect(missing.status).toBe(422)
    expect((await json(missing)).message).toContain("branch does not exist")
    expect((await row("alice", repo.name)).default_branch).toBe("dev")
    expect((await row("alice", repo.name)).description).toBe("")
    const invalid = await patch("alice", repo.name, basic("alice"), { default_branch: "a..b" })
    expect(invalid.status).toBe(422)
  })

  it("an empty repository takes any valid default branch", async () => {
    const repo = await createRepo("alice")
    const res = await patch("alice", repo.name, basic("alice"), { default_branch: "trunk" })
    expect(res.status).toBe(200)
    expect((await json(res)).default_branch).toBe("trunk")
    expect(await head("alice", repo.name)).toBe("refs/heads/trunk")
  })

  it("archives and un-archives (archived_at follows)", async () => {
    const repo = await createRepo("alice")
    const archived = await json(await patch("alice", repo.name, basic("alice"), { archived: true }))
    expect(archived.archived).toBe(true)
    expect(archived.archived_at).not.toBe("1970-01-01T00:00:00Z")
    // Read back as a GET reads it (the row as one JSON value, src/db/JsonRows.ts): the same times.
    const read = await json(await request(hearth, "GET", `/repos/alice/${repo.name}`, basic("alice")))
    expect([read.archived_at, read.created_at, read.updated_at]).toEqual([
      archived.archived_at,
      archived.created_at,
      archived.updated_at
    ])
    const back = await json(await patch("alice", repo.name, basic("alice"), { archived: false }))
    expect(back.archived).toBe(false)
    expect(back.archived_at).toBe("1970-01-01T00:00:00Z")
  })

  it("takes enable_prune alone, and mirror_interval (a Go duration) when present", async () => {
    const repo = await createRepo("alice")
    const prune = await patch("alice", repo.name, basic("alice"), { enable_prune: false })
    expect(prune.status).toBe(200)
    expect((await row("alice", repo.name)).enable_prune).toBe(false)
    const interval = await patch("alice", repo.name, basic("alice"), { mirror_interval: "8h" })
    expect(interval.status).toBe(200)
    expect((await json(interval)).mirror_interval).toBe("8h0m0s")
    const off = await patch("alice", repo.name, basic("alice"), { mirror_interval: "0" })
    expect((await json(off)).mirror_interval).toBe("0s")
    for (const bad of ["8 hours", "", "h", "1x", "5m"]) {
      const res = await patch("alice", repo.name, basic("alice"), { mirror_interval: bad, description: "x" })
      expect(res.status, bad).toBe(422)
      expect((await json(res)).message).toContain("mirror interval")
    }
    expect((await row("alice", repo.name)).mirror_interval).toBe("0s")
    expect((await row("alice", repo.name)).description).toBe("")
  })

  it("stores the unit switches", async () => {
    const repo = await createRepo("alice")
    const body = await json(
      await patch("alice", repo.name, basic("alice"), { has_issues: false, has_wiki: false, has_actions: true })
    )
    expect(body).toMatchObject({ has_issues: false, has_wiki: false, has_actions: true, has_pull_requests: true })
    const again = await json(await call("GET", `/repos/alice/${repo.name}`, basic("alice")))
    expect(again).toMatchObject({ has_issues: false, has_wiki: false, has_actions: true })
  })

  it("refuses bad descriptions and websites with 422", async () => {
    const repo = await createRepo("alice")
    for (const body of [
      { description: "d".repeat(2049) },
      { website: "not a url" },
      { website: "ftp://x.org" },
      { website: "https://x.org/" + "a".repeat(1024) },
      { private: "yes" }
    ]) {
      const res = await patch("alice", repo.name, basic("alice"), body)
      expect(res.status, JSON.stringify(body).slice(0, 40)).toBe(422)
    }
    expect((await row("alice", repo.name)).website).toBe("")
  })

  it("needs admin access: read/write collaborators 403, admin collaborators and site admins 200, strangers 404", async () => {
    const repo = await createRepo("alice", { private: true })
    await addCollaborator("alice", repo.name, "bob", "write")
    await addCollaborator("alice", repo.name, "carol", "admin")
    const denied = await patch("alice", repo.name, basic("bob"), { description: "bob" })
    expect(denied.status).toBe(403)
    expect((await row("alice", repo.name)).description).toBe("")
    expect((await patch("alice", repo.name, basic("dave"), { description: "dave" })).status).toBe(404)
    expect((await patch("alice", repo.name, undefined, { description: "anon" })).status).toBe(401)
    const carol = await patch("alice", repo.name, basic("carol"), { description: "carol" })
    expect(carol.status).toBe(200)
    expect((await json(carol)).permissions).toEqual({ admin: true, push: true, pull: true })
    expect((await patch("alice", repo.name, basic("root"), { description: "root" })).status).toBe(200)
    expect((await row("alice", repo.name)).description).toBe("root")
  })

  it("needs a write:repository token", async () => {
    const repo = await createRepo("alice")
    const readOnly = await createToken(hearth, "alice", ["read:repository"])
    expect((await patch("alice", repo.name, `token ${readOnly}`, { description: "t" })).status).toBe(403)
    const writer = await createToken(hearth, "alice", ["write:repository"])
    expect((await patch("alice", repo.name, `token ${writer}`, { description: "t" })).status).toBe(200)
  })
})

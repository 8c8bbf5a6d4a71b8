// Issue 23 item 2: the rest of Forgejo's /admin routes — organizations, repositories and SSH keys
// made for an account, renaming a user (its repositories, git URLs and API URLs follow with
// redirects; the old name is free again), e-mail addresses, every organization, the periodic
// tasks listed and run on demand, and unadopted repositories (listed, adopted, deleted). Every
// route is for site admins only: 403 for other users, 401 anonymous.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { keygen } from "./support/ssh.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
const call = (method: string, path: string, who?: string, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)
const ok = async (method: string, path: string, who: string, body?: unknown) => {
  const res = await call(method, path, who, body)
  expect(res.status, `${method} ${path}: ${await res.clone().text()}`).toBeLessThan(300)
  return res.status === 204 ? undefined : json(res)
}
/** Only site admins: 403 "user should be the site admin" for a user, 401 anonymous. */
const adminOnly = async (method: string, path: string, body?: unknown) => {
  const user = await call(method, path, "alice", body)
  expect(user.status, `${method} ${path}`).toBe(403)
  expect((await json(user)).message).toBe("user should be the site admin")
  expect((await call(method, path, undefined, body)).status).toBe(401)
}
const cloneUrl = (path: string, user = "root") => {
  const url = new URL(`${hearth.base}/${path}`)
  url.username = user
  url.password = "password123"
  return url.toString()
}

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-admin-extra-"))
  for (const username of ["root", "alice", "bob", "carol"]) {
    await createUser(hearth, { username, isAdmin: username === "root" })
  }
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("organizations, repositories and keys made for an account", () => {
  it("POST /admin/users/{u}/orgs makes an org the user owns", async () => {
    await adminOnly("POST", "/admin/users/alice/orgs", { username: "made-org" })
    const res = await call("POST", "/admin/users/alice/orgs", "root", {
      username: "made-org",
      visibility: "private",
      email: "org@example.com"
    })
    expect(res.status).toBe(201)
    const org = await json(res)
    expectSwagger(org, "Organization")
    expect(org).toMatchObject({ name: "made-org", visibility: "private" })
    expect((await ok("GET", "/users/alice/orgs/made-org/permissions", "alice")).is_owner).toBe(true)

    const taken = await call("POST", "/admin/users/alice/orgs", "root", { username: "made-org" })
    expect(taken.status).toBe(422)
    expect((await json(taken)).message).toBe("user already exists [name: made-org]")
    expect((await call("POST", "/admin/users/alice/orgs", "root", { username: "bad name" })).status).toBe(422)
    expect((await call("POST", "/admin/users/made-org/orgs", "root", { username: "org-of-org" })).status).toBe(422)
    expect((await call("POST", "/admin/users/nobody/orgs", "root", { username: "x-org" })).status).toBe(404)
    expect((await call("GET", "/orgs/bad name", "root")).status).toBe(404)
    expect((await call("GET", "/orgs/org-of-org", "root")).status).toBe(404)
  })

  it("POST /admin/users/{u}/repos makes a repository of the account", async () => {
    await adminOnly("POST", "/admin/users/alice/repos", { name: "given" })
    const res = await call("POST", "/admin/users/alice/repos", "root", { name: "given", auto_init: true })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expect(repo).toMatchObject({ full_name: "alice/given", permissions: { admin: true, push: true, pull: true } })
    expect((await ok("GET", "/repos/alice/given", "alice")).owner.login).toBe("alice")
    const dup = await call("POST", "/admin/users/alice/repos", "root", { name: "given" })
    expect(dup.status).toBe(409)
    expect((await json(dup)).message).toBe("The repository with the same name already exists.")
    expect((await call("POST", "/admin/users/made-org/repos", "root", { name: "org-repo" })).status).toBe(201)
    expect((await call("POST", "/admin/users/nobody/repos", "root", { name: "x" })).status).toBe(404)
  })

  it("POST and DELETE /admin/users/{u}/keys add and remove the account's SSH keys", async () => {
    const key = keygen(work)
    await adminOnly("POST", "/admin/users/alice/keys", { title: "laptop", key: key.pub })
    const res = await call("POST", "/admin/users/alice/keys", "root", { title: "laptop", key: key.pub })
    expect(res.status).toBe(201)
    const made = await json(res)
    expectSwagger(made, "PublicKey")
    expect(made).toMatchObject({ title: "laptop", fingerprint: key.fingerprint, user: { login: "alice" } })
    expect((await ok("GET", "/user/keys", "alice")).map((k: any) => k.id)).toEqual([made.id])

    const bad = await call("POST", "/admin/users/alice/keys", "root", { title: "junk", key: "ssh-ed25519 nope" })
    expect(bad.status).toBe(422)
    const again = await call("POST", "/admin/users/bob/keys", "root", { title: "laptop", key: key.pub })
    expect(again.status).toBe(422)

    await adminOnly("DELETE", `/admin/users/alice/keys/${made.id}`)
    // Forgejo deletes as the account: another account's key is refused.
    const other = await call("DELETE", `/admin/users/bob/keys/${made.id}`, "root")
    expect(other.status).toBe(403)
    expect((await json(other)).message).toBe("You do not have access to this key")
    expect((await call("DELETE", "/admin/users/alice/keys/99999", "root")).status).toBe(404)
    expect((await call("DELETE", `/admin/users/alice/keys/${made.id}`, "root")).status).toBe(204)
    expect(await ok("GET", "/user/keys", "alice")).toEqual([])
  })
})

describe("e-mail addresses", () => {
  it("lists and deletes an account's addresses; lists and searches every address", async () => {
    await ok("POST", "/user/emails", "carol", { emails: ["carol.work@example.com"] })
    await adminOnly("GET", "/admin/users/carol/emails")
    const listed = await ok("GET", "/admin/users/carol/emails", "root")
    expect(listed.map((e: any) => [e.email, e.primary, e.verified])).toEqual([
      ["carol@example.com", true, true],
      ["carol.work@example.com", false, false]
    ])
    expectSwagger(listed[0], "Email")

    await adminOnly("GET", "/admin/emails")
    const all = await call("GET", "/admin/emails?limit=50", "root")
    expect(Number(all.headers.get("x-total-count"))).toBeGreaterThanOrEqual(5)
    const everyone = (await json(all)).map((e: any) => e.email)
    expect(everyone).toEqual(expect.arrayContaining(["root@example.com", "carol.work@example.com"]))
    expect(everyone).toEqual([...everyone].sort())

    await adminOnly("GET", "/admin/emails/search?q=carol")
    const found = await ok("GET", "/admin/emails/search?q=CAROL", "root")
    expect(found.map((e: any) => [e.email, e.username, e.primary])).toEqual([
      ["carol.work@example.com", "carol", false],
      ["carol@example.com", "carol", true]
    ])
    expect(await ok("GET", "/admin/emails/search?q=nobody-has-this", "root")).toEqual([])

    await adminOnly("DELETE", "/admin/users/carol/emails", { emails: ["carol.work@example.com"] })
    const primary = await call("DELETE", "/admin/users/carol/emails", "root", { emails: ["carol@example.com"] })
    expect(primary.status).toBe(422)
    expect((await call("DELETE", "/admin/users/carol/emails", "root", { emails: ["nope@example.com"] })).status).toBe(
      404
    )
    expect((await ok("GET", "/admin/users/carol/emails", "root")).length).toBe(2)
    expect(
      (await call("DELETE", "/admin/users/carol/emails", "root", { emails: ["carol.work@example.com"] })).status
    ).toBe(204)
    expect((await ok("GET", "/admin/users/carol/emails", "root")).map((e: any) => e.email)).toEqual([
      "carol@example.com"
    ])
  })
})

describe("GET /admin/orgs", () => {
  it("lists every organization, private ones included", async () => {
    await adminOnly("GET", "/admin/orgs")
    const res = await call("GET", "/admin/orgs", "root")
    expect(res.status).toBe(200)
    const orgs = await json(res)
    expect(orgs.map((o: any) => o.name)).toContain("made-org")
    expect(res.headers.get("x-total-count")).toBe(String(orgs.length))
    // Not in the public list that others see.
    expect((await ok("GET", "/orgs", "bob")).map((o: any) => o.name)).not.toContain("made-org")
    const token = await createToken(hearth, "root", ["read:user"])
    expect((await request(hearth, "GET", "/admin/orgs", `token ${token}`)).status).toBe(403)
  })
})

describe("POST /admin/users/{u}/rename", () => {
  it("renames a user: repositories move, old API and git URLs redirect, the old name is free again", async () => {
    await ok("POST", "/user/repos", "bob", { name: "proj", auto_init: true })
    await adminOnly("POST", "/admin/users/bob/rename", { new_username: "robert" })
    expect((await call("POST", "/admin/users/bob/rename", "root", { new_username: "robert" })).status).toBe(204)

    const root = hearth.settings.repository.ROOT
    expect(existsSync(join(root, "robert", "proj.git"))).toBe(true)
    expect(existsSync(join(root, "bob"))).toBe(false)
    expect((await ok("GET", "/user", "robert")).login).toBe("robert")
    const moved = await fetch(hearth.api("/repos/bob/proj/branches/main"), {
      headers: { authorization: basic("robert") },
      redirect: "manual"
    })
    expect(moved.status).toBe(307)
    expect(new URL(moved.headers.get("location")!, hearth.base).pathname).toBe(
      "/api/v1/repos/robert/proj/branches/main"
    )
    const profile = await fetch(hearth.api("/users/bob"), { redirect: "manual" })
    expect(profile.status).toBe(307)
    expect(new URL(profile.headers.get("location")!, hearth.base).pathname).toBe("/api/v1/users/robert")
    // git over HTTP follows the redirect to the new place.
    const dir = join(work, "proj")
    await gitIn(work, ["clone", "-q", cloneUrl("bob/proj.git", "robert"), dir])
    writeFileSync(join(dir, "more.txt"), "more\n")
    await gitIn(dir, ["add", "more.txt"])
    await gitIn(dir, ["commit", "-q", "-m", "more"])
    await gitIn(dir, ["remote", "set-url", "origin", cloneUrl("robert/proj.git", "robert")])
    const pushed = await gitRun(dir, ["push", "-q", "origin", "HEAD:main"])
    expect(pushed.code, pushed.stderr).toBe(0)

    // Forgejo without USERNAME_COOLDOWN_PERIOD: a new account may take the old name at once, and
    // then the old URLs are its own.
    await createUser(hearth, { username: "bob", email: "new-bob@example.com" })
    expect((await call("GET", "/repos/bob/proj", "root")).status).toBe(404)
    expect((await ok("GET", "/users/bob", "root")).email).toBe("new-bob@example.com")
    expect((await ok("GET", "/repos/robert/proj", "robert")).full_name).toBe("robert/proj")
  })

  it("refuses a taken or invalid name, and organizations, changing nothing", async () => {
    const taken = await call("POST", "/admin/users/alice/rename", "root", { new_username: "Carol" })
    expect(taken.status).toBe(422)
    expect((await json(taken)).message).toBe("The username is already taken.")
    const bad = await call("POST", "/admin/users/alice/rename", "root", { new_username: "-bad-" })
    expect(bad.status).toBe(422)
    expect((await call("POST", "/admin/users/alice/rename", "root", { new_username: "api" })).status).toBe(422)
    const org = await call("POST", "/admin/users/made-org/rename", "root", { new_username: "other-org" })
    expect(org.status).toBe(422)
    expect((await json(org)).message).toBe("made-org is an organization not a user")
    expect((await call("POST", "/admin/users/nobody/rename", "root", { new_username: "somebody" })).status).toBe(404)
    expect((await ok("GET", "/user", "alice")).login).toBe("alice")
    expect((await ok("GET", "/repos/alice/given", "alice")).full_name).toBe("alice/given")
  })

  it("waits while a repository of the user is still being created (409): its job writes into the old directory", async () => {
    await ok("POST", "/user/repos", "carol", { name: "forking" })
    const setStatus = (status: string) =>
      hearth.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`UPDATE repositories SET status = ${status} WHERE lower_name = 'forking'`
        })
      )
    await setStatus("creating")
    const refused = await call("POST", "/admin/users/carol/rename", "root", { new_username: "caroline" })
    expect(refused.status).toBe(409)
    expect((await json(refused)).message).toBe("repository is being created, try again in a moment")
    expect((await ok("GET", "/user", "carol")).login).toBe("carol")
    await setStatus("ready")
  })
})

describe("AGit pull requests of a renamed user", () => {
  it("show their head branch under the new name right after the rename (Forgejo's agit.UserNameChanged)", async () => {
    await createUser(hearth, { username: "dave" })
    const dir = join(work, "dave-given")
    await gitIn(work, ["clone", "-q", cloneUrl("alice/given.git", "dave"), dir])
    writeFileSync(join(dir, "topic.txt"), "x\n")
    await gitIn(dir, ["add", "topic.txt"])
    await gitIn(dir, ["commit", "-q", "-m", "Topic x"])
    const pushed = await gitRun(dir, ["push", "origin", "HEAD:refs/for/main", "-o", "topic=x"])
    expect(pushed.code, pushed.stderr).toBe(0)

    expect((await call("POST", "/admin/users/dave/rename", "root", { new_username: "david" })).status).toBe(204)
    const merged = await call("POST", "/repos/alice/given/pulls/1/merge", "alice", { Do: "merge" })
    expect(merged.status, await merged.clone().text()).toBe(200)
    const bare = join(hearth.settings.repository.ROOT, "alice", "given.git")
    expect(await gitIn(bare, ["log", "-1", "--format=%s", "main"])).toBe(
      "Merge pull request 'Topic x' (#1) from david/x into main"
    )
  })
})

describe("periodic tasks (/admin/cron)", () => {
  it("lists the tasks under Forgejo's names with their schedule", async () => {
    await adminOnly("GET", "/admin/cron")
    const res = await call("GET", "/admin/cron", "root")
    expect(res.status).toBe(200)
    const tasks = await json(res)
    expect(tasks.map((t: any) => t.name)).toEqual(["cleanup_hook_task_table", "cleanup_packages", "update_mirrors"])
    for (const task of tasks) expectSwagger(task, "Cron")
    expect(tasks[0]).toMatchObject({ schedule: "@midnight", prev: "0001-01-01T00:00:00Z", exec_times: 0 })
    expect(Date.parse(tasks[0].next)).toBeGreaterThan(Date.now() - 1000)
  })

  it("runs a task on demand through the existing job: the package cleanup removes versions", async () => {
    for (const version of ["1.0.0", "1.1.0", "1.2.0"]) {
      const put = await fetch(`${hearth.base}/api/packages/alice/generic/tool/${version}/tool.txt`, {
        method: "PUT",
        headers: { authorization: basic("alice") },
        body: `tool ${version}`
      })
      expect(put.status).toBe(201)
    }
    await ok("POST", "/admin/packages/cleanup-rules", "root", { owner: "alice", type: "generic", keep_count: 1 })
    const versions = async () =>
      (await ok("GET", "/packages/alice?q=tool", "alice")).filter((p: any) => p.name === "tool").length
    expect(await versions()).toBe(3)

    await adminOnly("POST", "/admin/cron/cleanup_packages")
    expect(await versions()).toBe(3)
    expect((await call("POST", "/admin/cron/cleanup_packages", "root")).status).toBe(204)
    expect(await versions()).toBe(1)
    const task = (await ok("GET", "/admin/cron", "root")).find((t: any) => t.name === "cleanup_packages")
    expect(task.exec_times).toBe(1)
    expect(Date.parse(task.prev)).toBeGreaterThan(Date.now() - 60_000)

    expect((await call("POST", "/admin/cron/update_mirrors", "root")).status).toBe(204)
    expect((await call("POST", "/admin/cron/no_such_task", "root")).status).toBe(404)
  })
})

describe("unadopted repositories (/admin/unadopted)", () => {
  /** A bare repository with one commit at `{ROOT}/{owner}/{name}.git`, made behind Hearth's back. */
  const stray = async (owner: string, name: string) => {
    const bare = join(hearth.settings.repository.ROOT, owner, `${name}.git`)
    await gitIn(work, ["init", "-q", "--bare", "-b", "trunk", bare])
    const src = join(work, `src-${owner}-${name}`)
    await gitIn(work, ["init", "-q", "-b", "trunk", src])
    writeFileSync(join(src, "hello.txt"), "hello\n")
    await gitIn(src, ["add", "hello.txt"])
    await gitIn(src, ["commit", "-q", "-m", "hello"])
    await gitIn(src, ["push", "-q", bare, "trunk"])
    return bare
  }

  it("lists directories without a row, adopts one as a private repository, deletes another", async () => {
    await stray("alice", "found")
    const doomed = await stray("alice", "doomed")
    await stray("carol", "lost")

    await adminOnly("GET", "/admin/unadopted")
    const res = await call("GET", "/admin/unadopted", "root")
    expect(await json(res)).toEqual(["alice/doomed", "alice/found", "carol/lost"])
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(await ok("GET", "/admin/unadopted?pattern=alice/f*", "root")).toEqual(["alice/found"])
    expect(await ok("GET", "/admin/unadopted?pattern=carol", "root")).toEqual(["carol/lost"])
    expect(await ok("GET", "/admin/unadopted?limit=1&page=2", "root")).toEqual(["alice/found"])

    await adminOnly("POST", "/admin/unadopted/alice/found")
    expect((await call("POST", "/admin/unadopted/alice/found", "root")).status).toBe(204)
    const repo = await ok("GET", "/repos/alice/found", "alice")
    expect(repo).toMatchObject({ private: true, empty: false, default_branch: "trunk" })
    const clone = join(work, "found-clone")
    await gitIn(work, ["clone", "-q", cloneUrl("alice/found.git", "alice"), clone])
    expect(await gitIn(clone, ["log", "-1", "--format=%s"])).toBe("hello")
    // A repository with a row is not unadopted: 404 to adopt or delete it again.
    expect((await call("POST", "/admin/unadopted/alice/found", "root")).status).toBe(404)
    expect((await call("DELETE", "/admin/unadopted/alice/given", "root")).status).toBe(404)
    expect((await call("POST", "/admin/unadopted/alice/nothing-here", "root")).status).toBe(404)
    expect((await call("POST", "/admin/unadopted/nobody/found", "root")).status).toBe(404)
    expect((await call("DELETE", "/admin/unadopted/alice/no%20such", "root")).status).toBe(404)

    await adminOnly("DELETE", "/admin/unadopted/alice/doomed")
    expect((await call("DELETE", "/admin/unadopted/alice/doomed", "root")).status).toBe(204)
    expect(existsSync(doomed)).toBe(false)
    expect(await ok("GET", "/admin/unadopted", "root")).toEqual(["carol/lost"])
    expect(existsSync(join(hearth.settings.repository.ROOT, "alice", "given.git"))).toBe(true)
  })
})

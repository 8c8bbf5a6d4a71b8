// Push mirrors (issue 4 item 4): a repository pushes itself to a second repository of this same
// Hearth instance — after every git push when `sync_on_commit` (through a job, so the pusher never
// waits for the remote), on POST push_mirrors-sync, and on its interval — with the last error
// recorded and shown. Addresses are checked like migrations (here with BLOCKED_DOMAINS), and the
// credentials appear in no response and in no git config.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, remoteAs } from "./support/git.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string

const git = (args: ReadonlyArray<string>, cwd = work) => gitIn(cwd, args)

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const heads = (owner: string, name: string) =>
  git(["--git-dir", dirOf(owner, name), "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"])

const addMirror = (repo: string, body: Record<string, unknown>, auth = basic("alice")) =>
  request(hearth, "POST", `/repos/${repo}/push_mirrors`, auth, body)

const to = (name: string, password = "password123") => ({
  remote_address: `${hearth.base}/alice/${name}.git`,
  remote_username: "alice",
  remote_password: password
})

/** Waits until `target` has exactly the branches and tags of `source`. */
const converges = async (source: string, target: string, ms = 20_000) => {
  const [so, sn] = source.split("/") as [string, string]
  const [to, tn] = target.split("/") as [string, string]
  for (let waited = 0; waited < ms; waited += 100) {
    if ((await heads(so, sn)) === (await heads(to, tn))) return true
    await sleep(100)
  }
  return false
}

const commit = async (repo: string, path: string) =>
  expect(
    (
      await request(hearth, "POST", `/repos/${repo}/contents/${path}`, basic("alice"), {
        content: Buffer.from(`${path} ${Math.random()}\n`).toString("base64")
      })
    ).status
  ).toBe(201)

const mirrorsOf = async (repo: string) =>
  json(await request(hearth, "GET", `/repos/${repo}/push_mirrors`, basic("alice")))

beforeAll(async () => {
  hearth = await startHearth({
    migrations: { ALLOW_LOCALNETWORKS: "true", BLOCKED_DOMAINS: "localhost, 10.0.0.0/8" },
    mirror: { MIN_INTERVAL: "1s" }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-push-mirrors-"))
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  for (const name of ["backup", "backup2", "backup3", "backup4"]) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, private: true })).status).toBe(201)
  }
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "hidden", private: true })).status).toBe(
    201
  )
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/bob", basic("alice"), { permission: "write" })).status
  ).toBe(204)
  await git(["clone", remoteAs(hearth.base, "alice", "alice/app"), join(work, "app")])
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("push mirrors", () => {
  let name = ""

  it("POST creates one (200 PushMirror, no credentials shown); GET lists and reads it", async () => {
    const res = await addMirror("alice/app", { ...to("backup"), interval: "0", sync_on_commit: true })
    expect(res.status).toBe(200)
    const text = await res.text()
    expect(text).not.toContain("password123")
    const mirror = JSON.parse(text)
    expectSwagger(mirror, "PushMirror")
    expect(mirror).toMatchObject({
      repo_name: "app",
      remote_address: `${hearth.base}/alice/backup.git`,
      interval: "0s",
      sync_on_commit: true,
      last_error: "",
      branch_filter: ""
    })
    expect(mirror.remote_name).toMatch(/^remote_mirror_[0-9a-f]{10}$/)
    name = mirror.remote_name
    const list = await request(hearth, "GET", "/repos/alice/app/push_mirrors", basic("alice"))
    expect(list.status).toBe(200)
    expect(list.headers.get("x-total-count")).toBe("1")
    const items = await json(list)
    expectSwagger(items, "PushMirror[]")
    expect(items.map((m: any) => m.remote_name)).toEqual([name])
    const one = await request(hearth, "GET", `/repos/alice/app/push_mirrors/${name}`, basic("alice"))
    expect(await json(one)).toEqual(mirror)
    // The credentials are not in the repository's git config either.
    expect(await git(["--git-dir", dirOf("alice", "app"), "config", "--list"])).not.toMatch(
      /password123|extraheader|backup/i
    )
  })

  it("sync_on_commit: a git push to the repository reaches the mirror, through a job", async () => {
    expect((await addMirror("alice/app", { ...to("backup2"), interval: "0", sync_on_commit: false })).status).toBe(200)
    const clone = join(work, "app")
    await git(["commit", "--allow-empty", "-m", "pushed"], clone)
    await git(["push", "origin", "HEAD:main"], clone)
    expect(await converges("alice/app", "alice/backup")).toBe(true)
    const jobs = (await json(await request(hearth, "GET", "/repos/alice/app/jobs", basic("alice")))) as Array<any>
    const job = jobs.find((j) => j.kind === "push-mirror")
    expect(job).toBeDefined()
    for (
      let i = 0;
      i < 100 && (await mirrorsOf("alice/app")).find((m: any) => m.remote_name === name).last_update.startsWith("0001");
      i++
    )
      await sleep(100)
    const mirror = (await mirrorsOf("alice/app")).find((m: any) => m.remote_name === name)
    expect(mirror.last_error).toBe("")
    expect(mirror.last_update).not.toBe("0001-01-01T00:00:00Z")
    // The mirror without sync_on_commit did not get it.
    await sleep(500)
    expect(await heads("alice", "backup2")).toBe("")
  })

  it("POST push_mirrors-sync (200, empty body) pushes to every mirror, also changes made through the API", async () => {
    await commit("alice/app", "api.txt")
    const res = await request(hearth, "POST", "/repos/alice/app/push_mirrors-sync", basic("alice"))
    expect(res.status).toBe(200)
    expect(await res.text()).toBe("")
    expect(await converges("alice/app", "alice/backup")).toBe(true)
    expect(await converges("alice/app", "alice/backup2")).toBe(true)
  })

  it("records the last error of a failing push and shows it, without the credentials", async () => {
    const res = await addMirror("alice/app", { ...to("backup3", "wrong-password"), interval: "0" })
    expect(res.status).toBe(200)
    const bad = (await json(res)).remote_name
    expect((await request(hearth, "POST", "/repos/alice/app/push_mirrors-sync", basic("alice"))).status).toBe(200)
    let mirror: any
    for (let i = 0; i < 300; i++) {
      mirror = await json(await request(hearth, "GET", `/repos/alice/app/push_mirrors/${bad}`, basic("alice")))
      if (mirror.last_error !== "") break
      await sleep(100)
    }
    expect(mirror.last_error).toMatch(/^pushing to .*alice\/backup3\.git failed: /)
    expect(mirror.last_error).not.toContain("wrong-password")
    expect(mirror.last_update).not.toBe("0001-01-01T00:00:00Z")
    expect(await heads("alice", "backup3")).toBe("")
    const jobs = (await json(
      await request(hearth, "GET", "/repos/alice/app/jobs?limit=50", basic("alice"))
    )) as Array<any>
    expect(
      jobs.some((j) => j.kind === "push-mirror" && j.state === "failed" && !j.last_error.includes("wrong-password"))
    ).toBe(true)
    expect((await request(hearth, "DELETE", `/repos/alice/app/push_mirrors/${bad}`, basic("alice"))).status).toBe(204)
  }, 60_000)

  it("pushes on its interval", async () => {
    const res = await addMirror("alice/app", { ...to("backup4"), interval: "2s" })
    expect(res.status).toBe(200)
    expect((await json(res)).interval).toBe("2s")
    expect(await converges("alice/app", "alice/backup4", 30_000)).toBe(true)
    await commit("alice/app", "later.txt")
    expect(await converges("alice/app", "alice/backup4", 30_000)).toBe(true)
  }, 70_000)

  it("DELETE removes one (204); then it is 404", async () => {
    const res = await addMirror("alice/app", { ...to("backup2"), interval: "0" })
    const doomed = (await json(res)).remote_name
    expect((await request(hearth, "DELETE", `/repos/alice/app/push_mirrors/${doomed}`, basic("alice"))).status).toBe(
      204
    )
    expect((await request(hearth, "GET", `/repos/alice/app/push_mirrors/${doomed}`, basic("alice"))).status).toBe(404)
    expect((await request(hearth, "DELETE", `/repos/alice/app/push_mirrors/${doomed}`, basic("alice"))).status).toBe(
      404
    )
  })
})

describe("push mirror refusals", () => {
  it("refuses bad intervals, ssh, local paths, other protocols and blocked hosts with 400, creating nothing", async () => {
    const before = (await mirrorsOf("alice/app")).length
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ ...to("backup"), interval: "abc" }, /invalid interval: time: invalid duration "abc"/],
      [{ ...to("backup"), interval: "" }, /invalid interval/],
      [{ ...to("backup"), interval: "500ms" }, /below the minimum interval/],
      [{ ...to("backup"), interval: "1h", use_ssh: true }, /SSH/],
      [
        { remote_address: `file://${dirOf("alice", "backup")}`, interval: "1h" },
        /^You are not allowed to import local repositories\.$/
      ],
      [
        { remote_address: dirOf("alice", "backup"), interval: "1h" },
        /^You are not allowed to import local repositories\.$/
      ],
      [{ remote_address: "ssh://git@127.0.0.1/alice/backup.git", interval: "1h" }, /protocol is not allowed/],
      [
        { remote_address: hearth.base.replace("127.0.0.1", "localhost") + "/alice/backup.git", interval: "1h" },
        /^You can not import from disallowed hosts/
      ],
      [
        { remote_address: "http://10.1.2.3/alice/backup.git", interval: "1h" },
        /^You can not import from disallowed hosts/
      ],
      [{ ...to("backup"), interval: "1h", branch_filter: "a*b*" }, /branch_filter/]
    ]
    for (const [body, message] of cases) {
      const res = await addMirror("alice/app", body)
      expect(res.status, JSON.stringify(body)).toBe(400)
      expect((await json(res)).message, JSON.stringify(body)).toMatch(message)
    }
    expect((await mirrorsOf("alice/app")).length).toBe(before)
  })

  it("needs a signed-in repository administrator: 401, 403 (write collaborator, read scope), 404 invisible", async () => {
    expect((await request(hearth, "GET", "/repos/alice/app/push_mirrors")).status).toBe(401)
    const writer = await addMirror("alice/app", { ...to("backup"), interval: "1h" }, basic("bob"))
    expect(writer.status).toBe(403)
    expect((await json(writer)).message).toBe(
      "user should be an owner or a collaborator with admin write of a repository"
    )
    expect((await request(hearth, "GET", "/repos/alice/app/push_mirrors", basic("bob"))).status).toBe(403)
    expect((await request(hearth, "POST", "/repos/alice/app/push_mirrors-sync", basic("bob"))).status).toBe(403)
    const readOnly = await createToken(hearth, "alice", ["read:repository"])
    expect((await addMirror("alice/app", { ...to("backup"), interval: "1h" }, `token ${readOnly}`)).status).toBe(403)
    expect((await request(hearth, "GET", "/repos/alice/hidden/push_mirrors", basic("bob"))).status).toBe(404)
  })

  it("refuses to sync an archived repository (423)", async () => {
    expect((await request(hearth, "PATCH", "/repos/alice/hidden", basic("alice"), { archived: true })).status).toBe(200)
    expect((await request(hearth, "POST", "/repos/alice/hidden/push_mirrors-sync", basic("alice"))).status).toBe(423)
  })
})

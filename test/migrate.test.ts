// POST /repos/migrate for git sources (issue 4 item 3): a repository served by this same Hearth
// instance is migrated with the real git client underneath, with and without credentials; every
// refusal (local paths, other protocols, local networks, bad credentials, not a repository, bad
// intervals, owners the caller may not create in) is a clear 4xx that leaves nothing behind, and
// credentials never show in a response, the repository's git config or the stored row.

import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, rmSync } from "node:fs"
import { createServer, request as httpRequest, type Server } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolveSettings } from "../src/config/Settings.ts"
import { gitEnv } from "../src/git/Git.ts"
import { sealer } from "../src/lib/Sealer.ts"
import { checkRemote, parseRemote } from "../src/mirrors/Policy.ts"
import { cloneFailedMessage } from "../src/mirrors/Workflow.ts"
import { remoteAs } from "./support/git.ts"
import { basic, createToken, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { createAliceWithCli, killAll, onTestDatabase, restartableHearth, sleep } from "./support/spawn.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
/** A second instance with the default [migrations] and [mirror] ENABLED = false. */
let strict: Hearth
let work: string
let aliceToken: string

const git = (args: ReadonlyArray<string>, cwd = work) =>
  new Promise<string>((done, fail) =>
    execFile("git", args as Array<string>, { cwd, env: gitEnv(), timeout: 60_000 }, (error, stdout, stderr) =>
      error === null ? done(stdout.trim()) : fail(new Error(`git ${args.join(" ")}: ${stderr}`))
    )
  )

const dirOf = (h: Hearth, owner: string, name: string) => join(h.settings.repository.ROOT, owner, `${name}.git`)
const refs = (dir: string) =>
  git(["--git-dir", dir, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags"])
const migrate = (body: Record<string, unknown>, auth = basic("bob"), h = hearth) =>
  request(h, "POST", "/repos/migrate", auth, body)

/** The repository neither exists in the database nor on disk. */
const nothingLeft = async (owner: string, name: string, h = hearth, auth = basic(h === hearth ? "root" : owner)) => {
  expect((await request(h, "GET", `/repos/${owner}/${name}`, auth)).status).toBe(404)
  expect(existsSync(dirOf(h, owner, name))).toBe(false)
  expect(existsSync(`${dirOf(h, owner, name)}.copying`)).toBe(false)
}

beforeAll(async () => {
  hearth = await startHearth({ migrations: { ALLOW_LOCALNETWORKS: "true" } })
  strict = await startHearth({ mirror: { ENABLED: "false" } })
  work = mkdtempSync(join(tmpdir(), "hearth-migrate-"))
  await createUser(hearth, { username: "root", isAdmin: true })
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  await createUser(strict, { username: "bob" })
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "lib", auto_init: true, description: "d" }))
      .status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/repos/alice/lib/tags", basic("alice"), { tag_name: "v1" })).status
  ).toBeLessThan(300)
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "secret", private: true, auto_init: true }))
      .status
  ).toBe(201)
  aliceToken = await createToken(hearth, "alice", ["read:repository"])
  // An organization bob owns, and one where he is a member without the right to create repositories.
  expect((await request(hearth, "POST", "/orgs", basic("bob"), { username: "bobs" })).status).toBe(201)
  expect((await request(hearth, "POST", "/orgs", basic("carol"), { username: "carols" })).status).toBe(201)
  const team = await json(
    await request(hearth, "POST", "/orgs/carols/teams", basic("carol"), {
      name: "readers",
      permission: "read",
      can_create_org_repo: false,
      units: ["repo.code"]
    })
  )
  expect((await request(hearth, "PUT", `/teams/${team.id}/members/bob`, basic("carol"))).status).toBe(204)
})
afterAll(async () => {
  await hearth?.close()
  await strict?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("POST /repos/migrate", () => {
  it("clones a public repository: 201 once the git data is there, with its branches, tags and HEAD", async () => {
    const res = await migrate({
      clone_addr: `${hearth.base}/alice/lib.git`,
      repo_name: "lib-copy",
      description: "copied"
    })
    expect(res.status).toBe(201)
    const repo = await json(res)
    expectSwagger(repo, "Repository")
    expect(repo).toMatchObject({
      full_name: "bob/lib-copy",
      mirror: false,
      empty: false,
      private: false,
      description: "copied",
      default_branch: "main",
      original_url: `${hearth.base}/alice/lib.git`,
      permissions: { admin: true, push: true, pull: true }
    })
    expect(repo.size).toBeGreaterThanOrEqual(0)
    expect(await refs(dirOf(hearth, "bob", "lib-copy"))).toBe(await refs(dirOf(hearth, "alice", "lib")))
    expect(await refs(dirOf(hearth, "bob", "lib-copy"))).toContain("refs/tags/v1")
    // No remote is left configured, and the copy clones like any repository.
    expect(await git(["--git-dir", dirOf(hearth, "bob", "lib-copy"), "remote"])).toBe("")
    await git(["clone", `${hearth.base}/bob/lib-copy.git`, join(work, "lib-copy")])
    expect(await git(["log", "--format=%s", "-1"], join(work, "lib-copy"))).toBe("Initial commit")
    // A plain migration is an ordinary repository: it accepts pushes.
    expect(
      (await request(hearth, "POST", "/repos/bob/lib-copy/contents/x.txt", basic("bob"), { content: "eA==" })).status
    ).toBe(201)
  })

  it("clones a private repository with a username and password, which appear nowhere afterwards", async () => {
    const res = await migrate(
      {
        clone_addr: `${hearth.base}/alice/secret.git`,
        repo_name: "secret-copy",
        auth_username: "alice",
        auth_password: "password123",
        private: true,
        mirror: true
      },
      basic("alice")
    )
    expect(res.status).toBe(201)
    const text = await res.text()
    expect(text).not.toContain("password123")
    const repo = JSON.parse(text)
    expect(repo).toMatchObject({
      private: true,
      mirror: true,
      empty: false,
      original_url: `${hearth.base}/alice/secret.git`
    })
    const dir = dirOf(hearth, "alice", "secret-copy")
    expect(await refs(dir)).toBe(await refs(dirOf(hearth, "alice", "secret")))
    const config = await git(["--git-dir", dir, "config", "--list"])
    expect(config).not.toContain("password123")
    expect(config).not.toMatch(/extraheader|authorization|url =/i)
    // Stored sealed, not readable from the database.
    const stored = await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        return yield* sql`SELECT m.remote_address, m.credentials, r.original_url FROM pull_mirrors m
        JOIN repositories r ON r.id = m.repo_id WHERE r.id = ${repo.id}`
      })
    )
    expect(stored).toHaveLength(1)
    const row = stored[0]!
    expect(JSON.stringify(row)).not.toContain("password123")
    expect(JSON.stringify(row)).not.toContain(Buffer.from("alice:password123").toString("base64"))
    expect(row.credentials).not.toBe("")
    expect(sealer(hearth.settings.security.SECRET_KEY, "mirror-credentials").open(row.credentials as string)).toBe(
      `Authorization: Basic ${Buffer.from("alice:password123").toString("base64")}`
    )
  })

  it("clones with an access token, and with credentials written in the address (taken out of it)", async () => {
    const byToken = await migrate(
      { clone_addr: `${hearth.base}/alice/secret.git`, repo_name: "by-token", auth_token: aliceToken },
      basic("alice")
    )
    expect(byToken.status).toBe(201)
    expect(await byToken.text()).not.toContain(aliceToken)
    const inUrl = await migrate(
      {
        clone_addr: remoteAs(hearth.base, "alice", "alice/secret"),
        repo_name: "in-url"
      },
      basic("alice")
    )
    expect(inUrl.status).toBe(201)
    const repo = await json(inUrl)
    expect(repo.original_url).toBe(`${hearth.base}/alice/secret.git`)
    expect(await refs(dirOf(hearth, "alice", "in-url"))).toBe(await refs(dirOf(hearth, "alice", "secret")))
    // By host name: git is pinned to the addresses that were checked (http.curloptResolve).
    const byName = await migrate({
      clone_addr: `${hearth.base.replace("127.0.0.1", "localhost")}/alice/lib.git`,
      repo_name: "by-name"
    })
    expect(byName.status).toBe(201)
    expect(await refs(dirOf(hearth, "bob", "by-name"))).toBe(await refs(dirOf(hearth, "alice", "lib")))
  })

  it("refuses bad credentials with 422 and leaves nothing behind", async () => {
    const res = await migrate({
      clone_addr: `${hearth.base}/alice/secret.git`,
      repo_name: "bad-creds",
      auth_username: "alice",
      auth_password: "wrong-password"
    })
    expect(res.status).toBe(422)
    const body = await json(res)
    expect(body.message).toMatch(/^Authentication failed: /)
    expect(body.message).not.toContain("wrong-password")
    await nothingLeft("bob", "bad-creds")
    // Without any credentials a private repository cannot be read either.
    const anonymous = await migrate({ clone_addr: `${hearth.base}/alice/secret.git`, repo_name: "bad-creds" })
    expect(anonymous.status).toBe(422)
    await nothingLeft("bob", "bad-creds")
  })

  it("refuses what is not a git repository, and an unreachable server, with 422 and leaves nothing behind", async () => {
    const notGit = await migrate({ clone_addr: `${hearth.base}/api/v1/version`, repo_name: "not-git" })
    expect(notGit.status).toBe(422)
    expect((await json(notGit)).message).toMatch(/^Migration failed: /)
    await nothingLeft("bob", "not-git")
    const closed = await freePort()
    const unreachable = await migrate({ clone_addr: `http://127.0.0.1:${closed}/x/y.git`, repo_name: "unreachable" })
    expect(unreachable.status).toBe(422)
    expect((await json(unreachable)).message).toMatch(/^Migration failed: .*(connect|Connection refused|Failed)/i)
    await nothingLeft("bob", "unreachable")
    const missing = await migrate({ clone_addr: `${hearth.base}/alice/nothing-here.git`, repo_name: "missing" })
    expect(missing.status).toBe(422)
    await nothingLeft("bob", "missing")
  })

  it("refuses local paths, file://, ssh and other protocols, and malformed addresses (422, as Forgejo words them)", async () => {
    const cases: Array<[string, RegExp]> = [
      [`file://${dirOf(hearth, "alice", "lib")}`, /^You are not allowed to import local repositories\.$/],
      [dirOf(hearth, "alice", "lib"), /^You are not allowed to import local repositories\.$/],
      ["../alice/lib.git", /^You are not allowed to import local repositories\.$/],
      ["ssh://git@127.0.0.1/alice/lib.git", /is not allowed: the provided url protocol is not allowed/],
      ["git://127.0.0.1/alice/lib.git", /is not allowed: the provided url protocol is not allowed/],
      ["git@127.0.0.1:alice/lib.git", /is not allowed: the provided url is invalid/],
      ["", /Required/]
    ]
    for (const [address, message] of cases) {
      const res = await migrate({ clone_addr: address, repo_name: "refused" })
      expect(res.status, address).toBe(422)
      expect((await json(res)).message, address).toMatch(message)
      await nothingLeft("bob", "refused")
    }
  })

  it("validates the mirror interval (Go durations, at least [mirror] MIN_INTERVAL, 0 for no schedule)", async () => {
    for (const interval of ["abc", "10", "1m", "-1h"]) {
      const res = await migrate({
        clone_addr: `${hearth.base}/alice/lib.git`,
        repo_name: "interval",
        mirror: true,
        mirror_interval: interval
      })
      expect(res.status, interval).toBe(422)
      expect((await json(res)).message, interval).toMatch(/^invalid mirror interval/)
      await nothingLeft("bob", "interval")
    }
    const fine = await migrate({
      clone_addr: `${hearth.base}/alice/lib.git`,
      repo_name: "interval",
      mirror: true,
      mirror_interval: "1h30m"
    })
    expect(fine.status).toBe(201)
    expect(await json(fine)).toMatchObject({ mirror: true, mirror_interval: "1h30m0s" })
    const byDefault = await migrate({
      clone_addr: `${hearth.base}/alice/lib.git`,
      repo_name: "default-interval",
      mirror: true
    })
    expect(await json(byDefault)).toMatchObject({ mirror: true, mirror_interval: "8h0m0s" })
    const none = await migrate({
      clone_addr: `${hearth.base}/alice/lib.git`,
      repo_name: "no-interval",
      mirror: true,
      mirror_interval: "0"
    })
    expect(await json(none)).toMatchObject({ mirror: true, mirror_interval: "0s" })
  })

  it("migrates into the caller, an organization the caller may create in, or (admins) any account", async () => {
    const source = `${hearth.base}/alice/lib.git`
    expect((await migrate({ clone_addr: source, repo_name: "org-copy", repo_owner: "bobs" })).status).toBe(201)
    const notOrg = await migrate({ clone_addr: source, repo_name: "x", repo_owner: "alice" })
    expect(notOrg.status).toBe(403)
    expect((await json(notOrg)).message).toBe("Given user is not an organization.")
    const noRight = await migrate({ clone_addr: source, repo_name: "x", repo_owner: "carols" })
    expect(noRight.status).toBe(403)
    expect((await json(noRight)).message).toBe("Given user is not allowed to create repository in organization.")
    await nothingLeft("carols", "x")
    const unknown = await migrate({ clone_addr: source, repo_name: "x", repo_owner: "nobody" })
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).message).toContain("user does not exist")
    const admin = await migrate({ clone_addr: source, repo_name: "from-admin", repo_owner: "carol" }, basic("root"))
    expect(admin.status).toBe(201)
    expect((await json(admin)).full_name).toBe("carol/from-admin")
  })

  it("refuses a taken name (409), a bad name (422), other sources' extras (422), and anonymous callers (401)", async () => {
    const source = `${hearth.base}/alice/lib.git`
    const taken = await migrate({ clone_addr: source, repo_name: "lib-copy" })
    expect(taken.status).toBe(409)
    expect((await json(taken)).message).toBe("The repository with the same name already exists.")
    expect((await migrate({ clone_addr: source, repo_name: "bad name" })).status).toBe(422)
    expect((await migrate({ clone_addr: source, repo_name: "issues", issues: true })).status).toBe(422)
    await nothingLeft("bob", "issues")
    expect(
      (await request(hearth, "POST", "/repos/migrate", undefined, { clone_addr: source, repo_name: "anon" })).status
    ).toBe(401)
    const readOnly = await createToken(hearth, "bob", ["read:repository"])
    expect((await migrate({ clone_addr: source, repo_name: "scoped" }, `token ${readOnly}`)).status).toBe(403)
  })
})

describe("settings", () => {
  it("[migrations] and [mirror] have Forgejo's defaults, and a bad interval stops start-up naming the key", () => {
    const defaults = resolveSettings({})
    expect(defaults.migrations).toEqual({ ALLOW_LOCALNETWORKS: false, ALLOWED_DOMAINS: "", BLOCKED_DOMAINS: "" })
    expect(defaults.mirror).toEqual({ ENABLED: true, MIN_INTERVAL: 600, DEFAULT_INTERVAL: 28800 })
    expect(resolveSettings({ migrations: { ALLOW_LOCALNETWORKS: "yes" } }).migrations.ALLOW_LOCALNETWORKS).toBe(true)
    expect(() => resolveSettings({ mirror: { MIN_INTERVAL: "ten minutes" } })).toThrow(
      /\[mirror\] MIN_INTERVAL = "ten minutes"/
    )
    expect(() => resolveSettings({ mirror: { DEFAULT_INTERVAL: "0s" } })).toThrow(/\[mirror\] DEFAULT_INTERVAL/)
    expect(() => resolveSettings({ mirror: { ENABLED: "maybe" } })).toThrow(/\[mirror\] ENABLED/)
  })
})

describe("outbound addresses (SSRF)", () => {
  it("refuses this server itself when [migrations] ALLOW_LOCALNETWORKS is off, and leaves nothing behind", async () => {
    for (const address of [`${strict.base}/bob/x.git`, strict.base.replace("127.0.0.1", "localhost") + "/bob/x.git"]) {
      const res = await migrate({ clone_addr: address, repo_name: "local" }, basic("bob"), strict)
      expect(res.status, address).toBe(422)
      expect((await json(res)).message, address).toMatch(
        /^You can not import from disallowed hosts\..*ALLOW_LOCALNETWORKS/
      )
      await nothingLeft("bob", "local", strict)
    }
  })

  it("refuses creating a pull mirror while [mirror] ENABLED is false (403), and mirror-sync there answers 400", async () => {
    const res = await migrate(
      { clone_addr: "https://example.com/a/b.git", repo_name: "m", mirror: true },
      basic("bob"),
      strict
    )
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe("the site administrator has disabled the creation of new pull mirrors")
    expect((await request(strict, "POST", "/user/repos", basic("bob"), { name: "plain" })).status).toBe(201)
    const sync = await request(strict, "POST", "/repos/bob/plain/mirror-sync", basic("bob"))
    expect(sync.status).toBe(400)
    expect((await json(sync)).message).toBe("Mirror feature is disabled")
  })

  it("classifies every address family: loopback, private, link-local, unspecified, multicast, IPv4-mapped", async () => {
    const settings = (migrations: Record<string, string> = {}) => resolveSettings({ migrations })
    const check = (url: string, migrations?: Record<string, string>) =>
      Effect.runPromise(
        Effect.match(checkRemote(settings(migrations), url), { onFailure: (e) => e.message, onSuccess: () => "ok" })
      )
    const refusedByDefault = [
      "http://127.0.0.1/",
      "http://127.1.2.3/",
      "http://[::1]/",
      "http://[::ffff:127.0.0.1]/",
      "http://[::ffff:7f00:1]/",
      "http://10.0.0.1/",
      "http://172.16.5.4/",
      "http://192.168.1.1/",
      "http://100.64.0.1/",
      "http://[fd00::1]/",
      "http://169.254.169.254/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://[::]/",
      "http://224.0.0.1/",
      "http://[ff02::1]/",
      "http://255.255.255.255/",
      "http://[::ffff:10.0.0.1]/",
      "http://[64:ff9b::7f00:1]/",
      "http://[2002:7f00:1::]/",
      "http://localhost:3000/",
      "http://2130706433/"
    ]
    for (const url of refusedByDefault)
      expect(await check(url), url).toMatch(/^You can not import from disallowed hosts/)
    expect(await check("http://8.8.8.8/")).toBe("ok")
    expect(await check("http://[2001:4860:4860::8888]/")).toBe("ok")
    // Local networks allowed: loopback and private pass; link-local, unspecified and multicast never do.
    const local = { ALLOW_LOCALNETWORKS: "true" }
    for (const url of [
      "http://127.0.0.1/",
      "http://[::1]/",
      "http://10.0.0.1/",
      "http://[::ffff:192.168.0.1]/",
      "http://localhost/"
    ]) {
      expect(await check(url, local), url).toBe("ok")
    }
    for (const url of [
      "http://169.254.169.254/",
      "http://[fe80::1]/",
      "http://0.0.0.0/",
      "http://224.0.0.1/",
      "http://[::]/"
    ]) {
      expect(await check(url, local), url).toMatch(/disallowed hosts/)
    }
    // ALLOWED_DOMAINS replaces "any public host"; BLOCKED_DOMAINS always wins.
    const only = { ALLOWED_DOMAINS: "*.example.org, 8.8.0.0/16" }
    expect(await check("http://8.8.8.8/", only)).toBe("ok")
    expect(await check("http://1.1.1.1/", only)).toMatch(/disallowed hosts/)
    expect(await check("http://9.9.9.9/", { BLOCKED_DOMAINS: "9.9.9.0/24" })).toMatch(/disallowed hosts/)
    expect(await check("http://localhost/", { ...local, BLOCKED_DOMAINS: "localhost" })).toMatch(/disallowed hosts/)
    expect(await check("http://no-such-host.invalid/")).toMatch(/could not be resolved/)
  })

  it("pins git to the checked addresses and turns redirects off", async () => {
    const settings = resolveSettings({ migrations: { ALLOW_LOCALNETWORKS: "true" } })
    const config = await Effect.runPromise(checkRemote(settings, "http://localhost:8080/a/b.git"))
    expect(config).toContainEqual({ key: "http.followRedirects", value: "false" })
    const pin = config.find((c) => c.key === "http.curloptResolve")
    expect(pin?.value).toMatch(/^localhost:8080:(127\.0\.0\.1|\[::1\])/)
    const remote = parseRemote("https://u:p%40ss@example.com/a.git#frag", { username: "", password: "" })
    expect(remote).toEqual({
      _tag: "Remote",
      url: "https://example.com/a.git",
      credentials: { username: "u", password: "p@ss", token: "" }
    })
  })
})

describe("a migration and SIGKILL", () => {
  // A real `hearth serve` process, killed while git is cloning from a remote that does not answer
  // yet (a proxy this test controls); after a restart the clone job resumes and either finishes
  // or, when the remote now refuses, removes the repository: never a half-made one.
  const scope = Effect.runSync(Scope.make())
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-migrate-kill-"))
  let env: Record<string, string> = {}
  let proxy: Server
  let proxyPort = 0
  let mode: "hang" | "forward" | "refuse" = "hang"
  let seen = 0
  const auth = basic("alice")
  const hearth = restartableHearth(() => env, auth)
  const { api, start } = hearth
  const kill = async () => expect((await hearth.kill()).signal).toBe("SIGKILL")
  const repoDir = (name: string) => join(dataDir, "repositories", "alice", `${name}.git`)

  beforeAll(async () => {
    env = {
      HEARTH__server__APP_DATA_PATH: dataDir,
      HEARTH__log__LEVEL: "Error",
      HEARTH__migrations__ALLOW_LOCALNETWORKS: "true",
      // The schedule then runs every 5 s (it also restarts jobs whose workflow never started).
      HEARTH__mirror__MIN_INTERVAL: "1s"
    }
    env = await onTestDatabase(env, scope, { migrated: true })
    // The remote: hangs, forwards to the current server, or refuses.
    proxyPort = await freePort()
    proxy = createServer((req, res) => {
      seen++
      if (mode === "hang") return
      if (mode === "refuse") return void res.writeHead(404).end()
      const target = new URL(req.url ?? "/", hearth.base)
      const upstream = httpRequest(
        target,
        { method: req.method, headers: { ...req.headers, host: target.host } },
        (up) => {
          res.writeHead(up.statusCode ?? 502, up.headers)
          up.pipe(res)
        }
      )
      upstream.on("error", () => res.writeHead(502).end())
      req.pipe(upstream)
    })
    await new Promise<void>((done) => proxy.listen(proxyPort, "127.0.0.1", done))
    await createAliceWithCli(env)
    await start()
    expect((await api("POST", "/user/repos", { name: "src", auto_init: true })).status).toBe(201)
  }, 120_000)

  afterAll(async () => {
    killAll()
    proxy?.closeAllConnections()
    await new Promise((done) => proxy?.close(done))
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dataDir, { recursive: true, force: true })
  })

  /** Starts a migration through the proxy and kills the server while git waits for the remote. */
  const killMidClone = async (name: string) => {
    mode = "hang"
    seen = 0
    const pending = api("POST", "/repos/migrate", {
      clone_addr: `http://127.0.0.1:${proxyPort}/alice/src.git`,
      repo_name: name,
      mirror: true
    }).catch(() => undefined)
    // The clone step runs (git waits for the remote) and the row is there, being made.
    let job: any
    for (let i = 0; i < 400; i++) {
      const jobs = await api("GET", `/repos/alice/${name}/jobs`)
      job = (jobs.body ?? []).find((j: any) => j.kind === "migrate")
      if (job?.state === "running" && seen > 0) break
      await sleep(25)
    }
    expect(job).toMatchObject({ state: "running", attempts: 1 })
    await kill()
    await pending
  }

  it("killed while cloning, the clone resumes after a restart and the repository is made once", async () => {
    await killMidClone("resumed")
    mode = "forward"
    await start()
    let repo: any
    for (let i = 0; i < 600; i++) {
      repo = (await api("GET", "/repos/alice/resumed")).body
      if (repo?.empty === false) break
      await sleep(50)
    }
    expect(repo).toMatchObject({ empty: false, mirror: true, full_name: "alice/resumed" })
    // The job is marked done just after the repository is: wait (bounded) for it to settle.
    let states: Array<string> = []
    for (let i = 0; i < 600; i++) {
      const jobs = (await api("GET", "/repos/alice/resumed/jobs")).body as Array<any>
      states = jobs.filter((j) => j.kind === "migrate").map((j) => j.state)
      if (!states.includes("running")) break
      await sleep(50)
    }
    expect(states).toEqual(["succeeded"])
    expect(await refs(repoDir("resumed"))).toBe(await refs(repoDir("src")))
    // It syncs like any mirror made without a crash.
    expect((await api("POST", "/repos/alice/resumed/mirror-sync")).status).toBe(200)
    let synced: any
    for (let i = 0; i < 600; i++) {
      synced = ((await api("GET", "/repos/alice/resumed/jobs")).body as Array<any>).find(
        (j) => j.kind === "mirror-sync"
      )
      if (synced?.finished_at !== null && synced !== undefined) break
      await sleep(50)
    }
    expect(synced.state).toBe("succeeded")
  }, 180_000)

  it("a caller that goes away while git clones does not stop the clone", async () => {
    mode = "hang"
    seen = 0
    const controller = new AbortController()
    const pending = fetch(`${hearth.base}/api/v1/repos/migrate`, {
      method: "POST",
      signal: controller.signal,
      headers: { authorization: auth, "content-type": "application/json" },
      body: JSON.stringify({ clone_addr: `http://127.0.0.1:${proxyPort}/alice/src.git`, repo_name: "walked-away" })
    }).catch(() => undefined)
    for (let i = 0; i < 400 && seen === 0; i++) await sleep(25)
    controller.abort()
    await pending
    await sleep(300)
    mode = "forward"
    proxy.closeAllConnections() // the waiting git fails; its step is not retried (one attempt) …
    let repo: any
    for (let i = 0; i < 200; i++) {
      repo = await api("GET", "/repos/alice/walked-away")
      if ((repo.status === 404 && !existsSync(repoDir("walked-away"))) || repo.body?.empty === false) break
      await sleep(50)
    }
    // … so the clone ends as a refused one would: removed, not left half-made.
    expect(repo.status).toBe(404)
    expect(existsSync(repoDir("walked-away"))).toBe(false)
  }, 60_000)

  it("killed at any moment of the request, no half-made repository remains after a restart", async () => {
    mode = "refuse"
    for (const delay of [0, 40, 120]) {
      const name = `early-${delay}`
      const pending = api("POST", "/repos/migrate", {
        clone_addr: `http://127.0.0.1:${proxyPort}/alice/src.git`,
        repo_name: name
      }).catch(() => undefined)
      await sleep(delay)
      await kill()
      await pending
      await start()
      // The remote refuses, so the repository must end up absent (row and directory).
      let status = 200
      for (let i = 0; i < 800 && (status !== 404 || existsSync(repoDir(name))); i++) {
        status = (await api("GET", `/repos/alice/${name}`)).status
        await sleep(50)
      }
      expect(status, name).toBe(404)
      expect(existsSync(repoDir(name)), name).toBe(false)
    }
  }, 180_000)

  it("killed while cloning from a remote that then refuses, the repository is removed after a restart", async () => {
    await killMidClone("abandoned")
    mode = "refuse"
    await start()
    let status = 200
    for (let i = 0; i < 600 && (status !== 404 || existsSync(repoDir("abandoned"))); i++) {
      status = (await api("GET", "/repos/alice/abandoned")).status
      await sleep(50)
    }
    expect(status).toBe(404)
    expect(existsSync(repoDir("abandoned"))).toBe(false)
  }, 180_000)
})

describe("cloneFailedMessage", () => {
  it("calls a failure authentication only when git says so, not when the address holds 401 or 403", () => {
    expect(
      cloneFailedMessage(
        "fatal: unable to access 'http://127.0.0.1:40367/x.git/': The requested URL returned error: 403"
      )
    ).toMatch(/^Authentication failed: /)
    expect(cloneFailedMessage("fatal: Authentication failed for 'https://example.com/x.git/'")).toMatch(
      /^Authentication failed: /
    )
    expect(cloneFailedMessage("fatal: repository 'http://127.0.0.1:40367/x.git/' not found")).toMatch(
      /^Migration failed: /
    )
    expect(cloneFailedMessage("fatal: unable to access 'http://127.0.0.1:14013/x.git/': Failed to connect")).toMatch(
      /^Migration failed: /
    )
  })
})

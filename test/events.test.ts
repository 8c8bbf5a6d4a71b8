// The event hub (src/events) on a real server: a test subscriber collects what every producer
// publishes — repositories created (user, organisation, migration, fork), renamed, made private,
// archived, transferred, deleted; refs moved by pushes over smart HTTP and SSH, the contents,
// branch and tag APIs and a pull mirror's sync, each with its refs' old and new ids — and the
// hub's own rules: a failing subscriber changes nothing for the others or the producer, events
// about one repository are dispatched one at a time in order, durable subscribers get their events
// through the delivery queue and are retried.
import { spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { type Event, ZERO_ID } from "../src/events/Events.ts"
import { EventHub, publishLeftoverPushes } from "../src/events/Hub.ts"
import { pushLogDir } from "../src/git/PushLog.ts"
import { eventually } from "./support/federation.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen } from "./support/ssh.ts"

let hearth: Hearth
let sshPort: number
const work = mkdtempSync(join(tmpdir(), "hearth-events-"))
const seen: Array<Event> = []
let failures = 0

const hub = () => hearth.run(Effect.service(EventHub))

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    },
    migrations: { ALLOW_LOCALNETWORKS: "true" },
    federation: { ENABLED: "false" }
  })
  const events = await hub()
  // One that always fails and one that dies, before the collector: neither stops it, nor the producer.
  await hearth.run(
    events.subscribe({
      name: "failing",
      handle: () =>
        Effect.andThen(
          Effect.sync(() => failures++),
          Effect.fail("no")
        )
    })
  )
  await hearth.run(events.subscribe({ name: "dying", handle: () => Effect.die(new Error("boom")) }))
  await hearth.run(events.subscribe({ name: "collector", handle: (event) => Effect.sync(() => void seen.push(event)) }))
  await createUser(hearth, { username: "alice", isAdmin: true })
  await createUser(hearth, { username: "bob" })
  const org = await request(hearth, "POST", "/orgs", basic("alice"), { username: "crew" })
  expect(org.status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})
beforeEach(() => {
  seen.length = 0
})

const of = <T extends Event["_tag"]>(tag: T) => seen.filter((e): e is Extract<Event, { _tag: T }> => e._tag === tag)
const api = async (method: string, path: string, body?: unknown, user = "alice") => {
  const res = await request(hearth, method, path, basic(user), body)
  const text = await res.text()
  return { status: res.status, body: text === "" ? undefined : JSON.parse(text) }
}
const refOf = async (repo: string, ref: string) =>
  gitIn(work, ["--git-dir", join(hearth.settings.repository.ROOT, repo.toLowerCase() + ".git"), "rev-parse", ref])
const clone = async (repo: string, user = "alice") => {
  const dir = mkdtempSync(join(work, "clone-"))
  await gitIn(work, [
    "clone",
    "-q",
    `${hearth.base.replace("http://", `http://${user}:password123@`)}/${repo}.git`,
    dir
  ])
  return dir
}

describe("repository events", () => {
  it("creating a repository (own, organisation's) publishes CreateRepository with the doer", async () => {
    expect((await api("POST", "/user/repos", { name: "made", auto_init: true })).status).toBe(201)
    expect((await api("POST", "/orgs/crew/repos", { name: "shared" })).status).toBe(201)
    expect(of("CreateRepository").map((e) => [e.repo.ownerName, e.repo.name, e.doer.name, e.repo.private])).toEqual([
      ["alice", "made", "alice", false],
      ["crew", "shared", "alice", false]
    ])
    // Failing subscribers ran too, and the producers answered as ever.
    expect(failures).toBeGreaterThanOrEqual(2)
  })

  it("editing publishes RenameRepository, ChangeRepositoryVisibility and ArchiveRepository", async () => {
    expect((await api("POST", "/user/repos", { name: "edited" })).status).toBe(201)
    seen.length = 0
    expect((await api("PATCH", "/repos/alice/edited", { name: "renamed", private: true })).status).toBe(200)
    expect((await api("PATCH", "/repos/alice/renamed", { archived: true })).status).toBe(200)
    expect((await api("PATCH", "/repos/alice/renamed", { archived: false, description: "x" })).status).toBe(200)
    expect((await api("PATCH", "/repos/alice/renamed", { description: "only this" })).status).toBe(200)
    expect(seen.map((e) => e._tag)).toEqual([
      "RenameRepository",
      "ChangeRepositoryVisibility",
      "ArchiveRepository",
      "ArchiveRepository"
    ])
    expect(of("RenameRepository")[0]).toMatchObject({ oldName: "edited", repo: { name: "renamed", private: true } })
    expect(of("ArchiveRepository").map((e) => e.archived)).toEqual([true, false])
  })

  it("a transfer publishes TransferRepository, a deletion DeleteRepository", async () => {
    expect((await api("POST", "/user/repos", { name: "given" })).status).toBe(201)
    seen.length = 0
    expect((await api("POST", "/repos/alice/given/transfer", { new_owner: "crew" })).status).toBe(202)
    expect(of("TransferRepository")).toMatchObject([
      { oldOwnerName: "alice", repo: { ownerName: "crew", name: "given" }, doer: { name: "alice" } }
    ])
    expect((await api("DELETE", "/repos/crew/given")).status).toBe(204)
    expect(of("DeleteRepository")).toMatchObject([
      { repo: { ownerName: "crew", name: "given" }, doer: { name: "alice" } }
    ])
  })

  it("a fork publishes ForkRepository naming its source", async () => {
    expect((await api("POST", "/user/repos", { name: "forkme", auto_init: true })).status).toBe(201)
    const source = of("CreateRepository")[0]!.repo
    expect((await api("POST", "/repos/alice/forkme/forks", {}, "bob")).status).toBe(202)
    expect(of("ForkRepository")).toMatchObject([
      {
        repo: { ownerName: "bob", name: "forkme" },
        doer: { name: "bob" },
        source: { id: source.id, fullName: "alice/forkme" }
      }
    ])
  })
})

describe("PushCommits", () => {
  it("a push over smart HTTP: every ref it moved with its old and new id, and none it did not", async () => {
    expect((await api("POST", "/user/repos", { name: "pushed", auto_init: true })).status).toBe(201)
    const dir = await clone("alice/pushed")
    const main0 = await refOf("alice/pushed", "refs/heads/main")
    await gitIn(dir, ["push", "-q", "origin", "HEAD:refs/heads/gone", "HEAD:refs/heads/kept"])
    await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "two"])
    const main1 = await gitIn(dir, ["rev-parse", "HEAD"])
    seen.length = 0
    await gitIn(dir, [
      "push",
      "-q",
      "origin",
      "HEAD:refs/heads/main",
      "HEAD:refs/heads/new",
      ":refs/heads/gone",
      "HEAD:refs/tags/v1"
    ])
    const pushes = of("PushCommits")
    expect(pushes).toHaveLength(1)
    expect(pushes[0]).toMatchObject({
      via: "http",
      doer: { name: "alice" },
      repo: { ownerName: "alice", name: "pushed" }
    })
    const byRef = Object.fromEntries(pushes[0]!.refs.map((r) => [r.ref, [r.before, r.after]]))
    expect(byRef).toEqual({
      "refs/heads/main": [main0, main1],
      "refs/heads/new": [ZERO_ID, main1],
      "refs/heads/gone": [main0, ZERO_ID],
      "refs/tags/v1": [ZERO_ID, main1]
    })
    // The in-process subscribers ran before the push was answered: the database knows the branch.
    const branches = (await api("GET", "/repos/alice/pushed/branches")).body.map((b: { name: string }) => b.name)
    expect(branches.sort()).toEqual(["kept", "main", "new"])
  })

  it("a push that moves nothing publishes nothing", async () => {
    const dir = await clone("alice/pushed")
    seen.length = 0
    await gitIn(dir, ["push", "-q", "origin", "HEAD:refs/heads/main"])
    expect(of("PushCommits")).toEqual([])
  })

  it("a push over SSH, with via ssh", async () => {
    const key = keygen(work)
    expect((await api("POST", "/user/keys", { title: "k", key: key.pub })).status).toBe(201)
    const dir = await clone("alice/pushed")
    await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "ssh"])
    const head = await gitIn(dir, ["rev-parse", "HEAD"])
    const before = await refOf("alice/pushed", "refs/heads/main")
    seen.length = 0
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        "git",
        ["push", "-q", `ssh://git@127.0.0.1:${sshPort}/alice/pushed.git`, "HEAD:refs/heads/main"],
        { cwd: dir, env: { ...process.env, GIT_SSH_COMMAND: gitSshCommand(key.file, sshPort) } }
      )
      let stderr = ""
      child.stderr.on("data", (d) => (stderr += d))
      child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(stderr))))
    })
    expect(of("PushCommits")).toMatchObject([
      { via: "ssh", doer: { name: "alice" }, refs: [{ ref: "refs/heads/main", before, after: head }] }
    ])
  })

  it("a push its server died before publishing is published at the next start, from its push log", async () => {
    // receive-pack with Hearth's hooks and a push log, as a push over HTTP runs it, but with nobody
    // left to publish it: the refs move, the hook leaves the log.
    const data = hearth.settings.server.APP_DATA_PATH
    const logs = pushLogDir(data)
    mkdirSync(logs, { recursive: true })
    const file = join(logs, "left.push")
    const dir = await clone("alice/pushed")
    await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "unpublished"])
    const head = await gitIn(dir, ["rev-parse", "HEAD"])
    const before = await refOf("alice/pushed", "refs/heads/main")
    const repo = (await api("GET", "/repos/alice/pushed")).body
    const header = {
      repo: { id: repo.id, name: "pushed", ownerId: repo.owner.id, ownerName: "alice", private: false },
      doer: { id: repo.owner.id, name: "alice" },
      via: "http"
    }
    seen.length = 0
    const receivePack = `git -c core.hooksPath=${join(data, "hooks", "push")} receive-pack`
    const bareDir = join(hearth.settings.repository.ROOT, "alice/pushed.git")
    await gitIn(dir, ["push", "-q", `--receive-pack=${receivePack}`, bareDir, "HEAD:refs/heads/main"], {
      HEARTH_PUSH_LOG: file,
      HEARTH_PUSH_HEADER: JSON.stringify(header)
    })
    expect(existsSync(file)).toBe(true)
    expect(seen).toEqual([])
    // The log must be older than the process that replays it (one that is newer is a push in progress).
    utimesSync(file, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    await hearth.run(publishLeftoverPushes(data, Date.now()))
    expect(of("PushCommits")).toMatchObject([{ via: "http", refs: [{ ref: "refs/heads/main", before, after: head }] }])
    expect(existsSync(file)).toBe(false)
  })

  it("the contents API: a commit on a branch, and one that makes a new branch", async () => {
    const before = await refOf("alice/pushed", "refs/heads/main")
    seen.length = 0
    const made = await api("POST", "/repos/alice/pushed/contents/a.txt", {
      content: Buffer.from("a").toString("base64")
    })
    expect(made.status).toBe(201)
    const onBranch = await api("POST", "/repos/alice/pushed/contents/b.txt", {
      content: Buffer.from("b").toString("base64"),
      new_branch: "feature"
    })
    expect(onBranch.status).toBe(201)
    expect(of("PushCommits").map((e) => [e.via, e.refs])).toEqual([
      ["api", [{ ref: "refs/heads/main", before, after: made.body.commit.sha }]],
      ["api", [{ ref: "refs/heads/feature", before: ZERO_ID, after: onBranch.body.commit.sha }]]
    ])
  })

  it("the branch and tag APIs: create, rename, delete", async () => {
    const main = await refOf("alice/pushed", "refs/heads/main")
    seen.length = 0
    expect((await api("POST", "/repos/alice/pushed/branches", { new_branch_name: "b1" })).status).toBe(201)
    expect((await api("PATCH", "/repos/alice/pushed/branches/b1", { name: "b2" })).status).toBe(204)
    expect((await api("DELETE", "/repos/alice/pushed/branches/b2")).status).toBe(204)
    expect((await api("POST", "/repos/alice/pushed/tags", { tag_name: "t1", message: "annotated" })).status).toBe(201)
    const tag = await refOf("alice/pushed", "refs/tags/t1")
    expect((await api("DELETE", "/repos/alice/pushed/tags/t1")).status).toBe(204)
    expect(of("PushCommits").map((e) => e.refs)).toEqual([
      [{ ref: "refs/heads/b1", before: ZERO_ID, after: main }],
      [
        { ref: "refs/heads/b2", before: ZERO_ID, after: main },
        { ref: "refs/heads/b1", before: main, after: ZERO_ID }
      ],
      [{ ref: "refs/heads/b2", before: main, after: ZERO_ID }],
      [{ ref: "refs/tags/t1", before: ZERO_ID, after: tag }],
      [{ ref: "refs/tags/t1", before: tag, after: ZERO_ID }]
    ])
    expect(tag).not.toBe(main) // an annotated tag: the ref names the tag object
  })

  it("a migration publishes MigrateRepository; its pull mirror's sync the refs it fetched (via mirror)", async () => {
    const migrated = await api("POST", "/repos/migrate", {
      clone_addr: `${hearth.base}/alice/made.git`,
      repo_name: "copy",
      mirror: true
    })
    expect(migrated.status).toBe(201)
    await eventually(async () => (of("MigrateRepository").length === 1 ? true : undefined), 30_000, "the migration")
    expect(of("MigrateRepository")[0]).toMatchObject({ repo: { ownerName: "alice", name: "copy" } })
    const before = await refOf("alice/copy", "refs/heads/main")
    const made = await api("POST", "/repos/alice/made/contents/new.txt", {
      content: Buffer.from("n").toString("base64")
    })
    expect(made.status).toBe(201)
    seen.length = 0
    expect((await api("POST", "/repos/alice/copy/mirror-sync")).status).toBe(200)
    const synced = await eventually(
      async () => of("PushCommits").find((e) => e.repo.name === "copy"),
      30_000,
      "the mirror's sync"
    )
    expect(synced).toMatchObject({
      via: "mirror",
      doer: { name: "alice" },
      refs: [{ ref: "refs/heads/main", before, after: made.body.commit.sha }]
    })
  })
})

describe("the hub", () => {
  const about = (id: number, n: number): Event => ({
    _tag: "PushCommits",
    repo: { id, name: "r", ownerId: 1, ownerName: "o", private: false },
    doer: { id: 1, name: "o" },
    via: "api",
    refs: [{ ref: `refs/heads/n${n}`, before: ZERO_ID, after: "1".repeat(40) }]
  })

  it("hands a durable subscriber the events of one repository one at a time, in the order they were published", async () => {
    const events = await hub()
    const log: Array<string> = []
    await hearth.run(
      events.subscribeDurable({
        name: "ordered",
        accepts: (event) => "repo" in event && event.repo.id >= 100_000,
        handle: (event) =>
          Effect.gen(function* () {
            if (!("repo" in event)) return
            const name = `${event.repo.id}:${event._tag === "PushCommits" ? event.refs[0]!.ref : ""}`
            log.push(`start ${name}`)
            yield* Effect.sleep(20)
            log.push(`end ${name}`)
          })
      })
    )
    await Promise.all(
      [1, 2, 3, 4].flatMap((n) => [
        hearth.run(events.publish(about(100_001, n))),
        hearth.run(events.publish(about(100_002, n)))
      ])
    )
    await eventually(async () => (log.length === 16 ? true : undefined), 30_000, "the events handled")
    for (const repo of ["100001", "100002"]) {
      expect(log.filter((line) => line.includes(`${repo}:`))).toEqual(
        [1, 2, 3, 4].flatMap((n) => [`start ${repo}:refs/heads/n${n}`, `end ${repo}:refs/heads/n${n}`])
      )
    }
  })

  it("hands durable subscribers their events through the delivery queue, retrying a failure", async () => {
    const events = await hub()
    const got: Array<string> = []
    let failFirst = true
    await hearth.run(
      events.subscribeDurable({
        name: "test",
        accepts: (event) => event._tag === "CreateRepository",
        handle: (event) =>
          Effect.suspend(() => {
            if (failFirst) {
              failFirst = false
              return Effect.fail("not yet")
            }
            if (event._tag === "CreateRepository") got.push(event.repo.name)
            return Effect.void
          }),
        retryDelayMs: 100
      })
    )
    expect((await api("POST", "/user/repos", { name: "durable" })).status).toBe(201)
    await eventually(async () => (got.length > 0 ? true : undefined), 30_000, "the durable event")
    expect(got).toEqual(["durable"])
    const jobs = (await api("GET", "/admin/jobs?limit=50")).body.filter(
      (j: { kind: string }) => j.kind === "events-test"
    )
    expect(jobs).toMatchObject([{ state: "succeeded", attempts: 2, last_error: "not yet" }])
  })
})

// The wiki as a git repository (issue 20 items 6–7): `{owner}/{repo}.wiki.git` cloned and pushed
// with the real git client over HTTP and SSH, under the repository's rules on the wiki unit
// (readers clone, writers push; 404 while the unit is off or the repository is hidden), pushes
// refused over the size:assets:wiki quota, pages pushed with git read back through the API, Wiki
// events for pushed pages, and the wiki following its repository's rename, transfer and deletion.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { gitRun } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const execFileP = promisify(execFile)

let hearth: Hearth
let sshPort: number
const work = mkdtempSync(join(tmpdir(), "hearth-wiki-git-"))
const alice = basic("alice")
const seen: Array<Event> = []
let sshKey = ""

const b64 = (text: string) => Buffer.from(text).toString("base64")
const decode = (text: string) => Buffer.from(text, "base64").toString("utf8")
const wikiDir = (owner: string, repo: string) => join(hearth.settings.repository.ROOT, owner, `${repo}.wiki.git`)

type Transport = "http" | "ssh"
/** `owner/repo.wiki.git` for git: as `user` over HTTP (null: anonymous), with alice's key over SSH. */
const remote = (transport: Transport, path: string, user: string | null = "alice") =>
  transport === "http"
    ? `${user === null ? hearth.base : hearth.base.replace("http://", `http://${user}:password123@`)}/${path}.wiki.git`
    : `ssh://git@127.0.0.1:${sshPort}/${path}.wiki.git`
const git = (transport: Transport, args: ReadonlyArray<string>, cwd = work) =>
  gitRun(
    cwd,
    args,
    transport === "ssh"
      ? {
          GIT_SSH_COMMAND:
            `ssh -i ${sshKey} -p ${sshPort} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null ` +
            "-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR",
          HOME: work
        }
      : {}
  )

let n = 0
const clone = async (transport: Transport, path: string, user: string | null = "alice") => {
  const dir = join(work, `clone-${++n}`)
  const cloned = await git(transport, ["clone", remote(transport, path, user), dir])
  return { dir, ...cloned }
}
const commitAll = async (dir: string, message: string) => {
  expect((await gitRun(dir, ["add", "-A"])).code).toBe(0)
  expect((await gitRun(dir, ["commit", "-q", "-m", message])).code).toBe(0)
}
const wikiEvents = () => seen.filter((e): e is Extract<Event, { _tag: "Wiki" }> => e._tag === "Wiki")
const page = (path: string, name: string, auth: string | undefined = alice) =>
  request(hearth, "GET", `/repos/${path}/wiki/page/${name}`, auth)

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    quota: { ENABLED: "true" },
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort)
    }
  })
  const events = await hearth.run(Effect.service(EventHub))
  await hearth.run(events.subscribe({ name: "wiki-git-test", handle: (e) => Effect.sync(() => void seen.push(e)) }))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["alice", "reader", "writer", "stranger"]) await createUser(hearth, { username })
  for (const [name, extra] of [
    ["docs", {}],
    ["secret", { private: true }]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", alice, { name, ...extra })).status).toBe(201)
    for (const [user, permission] of [
      ["reader", "read"],
      ["writer", "write"]
    ]) {
      const res = await request(hearth, "PUT", `/repos/alice/${name}/collaborators/${user}`, alice, { permission })
      expect(res.status).toBe(204)
    }
    const made = await request(hearth, "POST", `/repos/alice/${name}/wiki/new`, alice, {
      title: "Home",
      content_base64: b64("# Home\n")
    })
    expect(made.status).toBe(201)
  }
  sshKey = join(work, "id_ed25519")
  await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", sshKey])
  const pub = readFileSync(`${sshKey}.pub`, "utf8").trim()
  expect((await request(hearth, "POST", "/user/keys", alice, { title: "laptop", key: pub })).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("cloning and pushing the wiki", () => {
  for (const transport of ["http", "ssh"] as const) {
    it(`clones the wiki over ${transport} and pushes a page that the API then reads (Wiki events)`, async () => {
      const cloned = await clone(transport, "alice/docs")
      expect(cloned.code, cloned.stderr).toBe(0)
      expect(readFileSync(join(cloned.dir, "Home.md"), "utf8")).toMatch(/^# Home\n/)
      writeFileSync(join(cloned.dir, `Pushed-${transport}.md`), `over ${transport}\n`)
      writeFileSync(join(cloned.dir, "Home.md"), `# Home\n\nedited over ${transport}\n`)
      await commitAll(cloned.dir, `pages over ${transport}`)
      const pushed = await git(transport, ["push", "origin", "HEAD"], cloned.dir)
      expect(pushed.code, pushed.stderr).toBe(0)

      const res = await page("alice/docs", `Pushed-${transport}`)
      expect(res.status).toBe(200)
      const read = await json(res)
      expect(decode(read.content_base64)).toBe(`over ${transport}\n`)
      expect(read.last_commit.message).toBe(`pages over ${transport}\n`)
      expect(decode((await json(await page("alice/docs", "Home"))).content_base64)).toContain(transport)

      const events = wikiEvents().filter((e) => e.via === transport)
      expect(events).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            action: "created",
            page: `Pushed-${transport}`,
            comment: `pages over ${transport}`
          }),
          expect.objectContaining({ action: "edited", page: "Home", doer: expect.objectContaining({ name: "alice" }) })
        ])
      )
      // The code repository heard of no push.
      expect(seen.some((e) => e._tag === "PushCommits" && e.repo.name === "docs")).toBe(false)
    })
  }

  it("reports a page renamed and one deleted by a push", async () => {
    const cloned = await clone("http", "alice/docs", "writer")
    expect(cloned.code, cloned.stderr).toBe(0)
    expect((await gitRun(cloned.dir, ["mv", "Pushed-http.md", "Moved-page.md"])).code).toBe(0)
    expect((await gitRun(cloned.dir, ["rm", "-q", "Pushed-ssh.md"])).code).toBe(0)
    await commitAll(cloned.dir, "tidy")
    const pushed = await git("http", ["push", "origin", "HEAD"], cloned.dir)
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(wikiEvents().slice(-2)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ action: "renamed", page: "Moved-page", oldPage: "Pushed-http", via: "http" }),
        expect.objectContaining({
          action: "deleted",
          page: "Pushed-ssh",
          doer: expect.objectContaining({ name: "writer" })
        })
      ])
    )
    expect((await page("alice/docs", "Moved-page")).status).toBe(200)
    expect((await page("alice/docs", "Pushed-ssh")).status).toBe(404)
  })

  it("makes the wiki on its first clone, and the first push's page is read through the API", async () => {
    expect((await request(hearth, "POST", "/user/repos", alice, { name: "fresh" })).status).toBe(201)
    expect(existsSync(wikiDir("alice", "fresh"))).toBe(false)
    // Not by a reader: there is nothing to read yet.
    expect(
      (await request(hearth, "PUT", "/repos/alice/fresh/collaborators/reader", alice, { permission: "read" })).status
    ).toBe(204)
    const byReader = await clone("http", "alice/fresh", "reader")
    expect(byReader.code).not.toBe(0)
    expect(byReader.stderr).toMatch(/404|not found/i)
    expect(existsSync(wikiDir("alice", "fresh"))).toBe(false)
    const cloned = await clone("http", "alice/fresh")
    expect(cloned.code, cloned.stderr).toBe(0)
    expect(existsSync(wikiDir("alice", "fresh"))).toBe(true)
    writeFileSync(join(cloned.dir, "Start.md"), "first\n")
    await commitAll(cloned.dir, "first page")
    const pushed = await git("http", ["push", "origin", "HEAD:main"], cloned.dir)
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(decode((await json(await page("alice/fresh", "Start"))).content_base64)).toBe("first\n")
  })
})

describe("who may clone and push the wiki", () => {
  it("refuses a push from a reader (403) and from an anonymous caller, changing nothing", async () => {
    const before = await json(await page("alice/docs", "Home"))
    for (const user of ["reader", null]) {
      const cloned = await clone("http", "alice/docs", user)
      expect(cloned.code, cloned.stderr).toBe(0)
      writeFileSync(join(cloned.dir, "Home.md"), "vandalised\n")
      await commitAll(cloned.dir, "nope")
      const pushed = await git("http", ["push", "origin", "HEAD"], cloned.dir)
      expect(pushed.code).not.toBe(0)
      if (user === "reader") expect(pushed.stderr).toMatch(/403/)
    }
    expect((await json(await page("alice/docs", "Home"))).last_commit.sha).toBe(before.last_commit.sha)
  })

  it("hides a private repository's wiki from anonymous callers and strangers, not from its readers", async () => {
    expect((await clone("http", "alice/secret", null)).code).not.toBe(0)
    const stranger = await clone("http", "alice/secret", "stranger")
    expect(stranger.code).not.toBe(0)
    expect(stranger.stderr).toMatch(/not found|404/i)
    const reader = await clone("http", "alice/secret", "reader")
    expect(reader.code, reader.stderr).toBe(0)
    expect(readFileSync(join(reader.dir, "Home.md"), "utf8")).toBe("# Home\n")
  })

  it("answers 404 over HTTP and SSH while the wiki unit is off", async () => {
    expect((await request(hearth, "POST", "/user/repos", alice, { name: "closed" })).status).toBe(201)
    expect((await request(hearth, "PATCH", "/repos/alice/closed", alice, { has_wiki: false })).status).toBe(200)
    const http = await clone("http", "alice/closed")
    expect(http.code).not.toBe(0)
    expect(http.stderr).toMatch(/not found|404/i)
    const ssh = await clone("ssh", "alice/closed")
    expect(ssh.code).not.toBe(0)
    expect(ssh.stderr).toMatch(/does not exist/)
    expect(existsSync(wikiDir("alice", "closed"))).toBe(false)
  })

  it("refuses a push over the size:assets:wiki quota before any ref changes, with the reason", async () => {
    const root = basic("root")
    await createUser(hearth, { username: "quoted" })
    expect((await request(hearth, "POST", "/user/repos", basic("quoted"), { name: "q" })).status).toBe(201)
    const cloned = await clone("http", "quoted/q", "quoted")
    expect(cloned.code, cloned.stderr).toBe(0)
    const group = await request(hearth, "POST", "/admin/quota/groups", root, {
      name: "no-wiki",
      rules: [
        { name: "no-wiki", limit: 0, subjects: ["size:assets:wiki"] },
        { name: "rest", limit: -1, subjects: ["size:all"] }
      ]
    })
    expect(group.status).toBe(201)
    const joined = await request(hearth, "POST", "/admin/users/quoted/quota/groups", root, { groups: ["no-wiki"] })
    expect(joined.status).toBe(204)
    writeFileSync(join(cloned.dir, "Big.md"), "too much\n")
    await commitAll(cloned.dir, "over quota")
    const pushed = await git("http", ["push", "origin", "HEAD:main"], cloned.dir)
    expect(pushed.code).not.toBe(0)
    expect(pushed.stderr).toContain("quota exceeded: quoted may not store more wiki data (size:assets:wiki)")
    expect((await request(hearth, "GET", "/repos/quoted/q/wiki/pages", basic("quoted"))).status).toBe(404)
  })
})

describe("the wiki follows its repository", () => {
  it("moves with a rename and a transfer, and goes with a deletion", async () => {
    expect((await request(hearth, "POST", "/user/repos", alice, { name: "moving" })).status).toBe(201)
    const made = await request(hearth, "POST", "/repos/alice/moving/wiki/new", alice, {
      title: "Home",
      content_base64: b64("travels")
    })
    expect(made.status).toBe(201)

    expect((await request(hearth, "PATCH", "/repos/alice/moving", alice, { name: "moved" })).status).toBe(200)
    expect(existsSync(wikiDir("alice", "moving"))).toBe(false)
    expect(existsSync(wikiDir("alice", "moved"))).toBe(true)
    expect(decode((await json(await page("alice/moved", "Home"))).content_base64)).toBe("travels")
    const renamedClone = await clone("ssh", "alice/moved")
    expect(renamedClone.code, renamedClone.stderr).toBe(0)
    // The old name still reaches it over git, as the code repository's does.
    const oldName = await clone("http", "alice/moving")
    expect(oldName.code, oldName.stderr).toBe(0)
    expect(readFileSync(join(oldName.dir, "Home.md"), "utf8")).toBe("travels")

    expect((await request(hearth, "POST", "/orgs", alice, { username: "crew" })).status).toBe(201)
    const transferred = await request(hearth, "POST", "/repos/alice/moved/transfer", alice, { new_owner: "crew" })
    expect(transferred.status).toBe(202)
    expect(existsSync(wikiDir("alice", "moved"))).toBe(false)
    expect(existsSync(wikiDir("crew", "moved"))).toBe(true)
    expect(decode((await json(await page("crew/moved", "Home"))).content_base64)).toBe("travels")
    // Writes still go through after the move (the wiki's entity writes at the new place).
    const edited = await request(hearth, "PATCH", "/repos/crew/moved/wiki/page/Home", alice, {
      content_base64: b64("arrived")
    })
    expect(edited.status).toBe(200)

    expect((await request(hearth, "DELETE", "/repos/crew/moved", alice)).status).toBe(204)
    expect(existsSync(wikiDir("crew", "moved"))).toBe(false)
  })
})

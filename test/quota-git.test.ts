// Quotas and git pushes (issue 7 items 3–5): over HTTP and over SSH, a push to a repository whose
// owner is over quota (size:repos:all) is refused before any ref changes, with a message the git
// client prints; its objects are not kept; a push that only deletes refs still goes through; the
// owner is charged, not the pusher; what the owner uses is current after every push.

import { execFile } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"
import { gitRun } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { jail } from "./support/quota.ts"

const execFileP = promisify(execFile)

let hearth: Hearth
let sshPort: number
const work = mkdtempSync(join(tmpdir(), "hearth-quota-git-"))
const root = basic("root")

let sshKey = ""
const sshEnv = () => ({
  GIT_SSH_COMMAND:
    `ssh -i ${sshKey} -p ${sshPort} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null ` +
    "-o IdentitiesOnly=yes -o BatchMode=yes -o LogLevel=ERROR"
})

type Transport = "http" | "ssh"
/** Where git reaches `owner/repo` as `user` (password in the URL over HTTP; alice's key over SSH). */
const remote = (transport: Transport, repo: string, user = "alice") =>
  transport === "http"
    ? `${hearth.base.replace("http://", `http://${user}:password123@`)}/${repo}.git`
    : `ssh://git@127.0.0.1:${sshPort}/${repo}.git`
// ssh needs a home of its own (the clean environment's is /nonexistent).
const git = (transport: Transport, args: ReadonlyArray<string>, cwd = work) =>
  gitRun(cwd, args, transport === "ssh" ? { ...sshEnv(), HOME: work } : {})

let n = 0
/** A clone of `repo` with one new commit of incompressible bytes on top. */
const cloneWithCommit = async (transport: Transport, repo: string, user = "alice") => {
  const dir = join(work, `clone-${++n}`)
  const cloned = await git(transport, ["clone", remote(transport, repo, user), dir])
  expect(cloned.code, cloned.stderr).toBe(0)
  writeFileSync(
    join(dir, `file-${n}.bin`),
    Buffer.from(Array.from({ length: 48 * 1024 }, () => Math.floor(Math.random() * 256)))
  )
  expect((await git(transport, ["add", "."], dir)).code).toBe(0)
  expect((await git(transport, ["commit", "-m", `commit ${n}`], dir)).code).toBe(0)
  return { dir, head: (await git(transport, ["rev-parse", "HEAD"], dir)).stdout.trim() }
}

const lsRemote = async (transport: Transport, repo: string) => {
  const listed = await git(transport, ["ls-remote", remote(transport, repo)])
  expect(listed.code, listed.stderr).toBe(0)
  return listed.stdout
}

const bareDir = (owner: string, repo: string) => join(hearth.settings.repository.ROOT, owner, `${repo}.git`)
const hasObject = async (owner: string, repo: string, sha: string) =>
  (await gitRun(work, ["--git-dir", bareDir(owner, repo), "cat-file", "-e", sha])).code === 0

const setGroups = async (user: string, groups: ReadonlyArray<string>) =>
  expect((await request(hearth, "POST", `/admin/users/${user}/quota/groups`, root, { groups })).status).toBe(204)

const usedBy = async (user: string) =>
  (await json(await request(hearth, "GET", `/admin/users/${user}/quota`, root))).used.size.repos

const onDisk = (owner: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql<{ name: string; is_private: boolean }>`SELECT r.lower_name AS name, r.is_private
      FROM repositories r JOIN users u ON u.id = r.owner_id WHERE u.lower_name = ${owner}`
      const total = { public: 0, private: 0 }
      for (const row of rows)
        total[row.is_private ? "private" : "public"] += (yield* Git.sizeKiB(bareDir(owner, row.name))) * 1024
      return total
    })
  )

const REFUSAL =
  "remote: Hearth: quota exceeded: alice may not store more repository data (size:repos:all); " +
  "pushes that only delete branches or tags are still accepted"

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
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  expect(
    (
      await request(hearth, "POST", "/admin/quota/groups", root, {
        name: "deny",
        rules: [{ name: "deny-all", limit: 0, subjects: ["size:all"] }]
      })
    ).status
  ).toBe(201)
  for (const name of ["code", "shared"]) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name, auto_init: true })).status).toBe(201)
  }
  expect(
    (await request(hearth, "PUT", "/repos/alice/shared/collaborators/bob", basic("alice"), { permission: "write" }))
      .status
  ).toBe(204)
  sshKey = join(work, "id_ed25519")
  await execFileP("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "alice", "-f", sshKey])
  const pub = readFileSync(`${sshKey}.pub`, "utf8").trim()
  expect((await request(hearth, "POST", "/user/keys", basic("alice"), { title: "laptop", key: pub })).status).toBe(201)
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

for (const transport of ["http", "ssh"] as const) {
  describe(`git push over ${transport.toUpperCase()}`, () => {
    it("records the owner's usage after each push", async () => {
      const before = await usedBy("alice")
      const { dir } = await cloneWithCommit(transport, "alice/code")
      const pushed = await git(transport, ["push", "origin", "HEAD:main"], dir)
      expect(pushed.code, pushed.stderr).toBe(0)
      const after = await usedBy("alice")
      expect(after).toEqual(await onDisk("alice"))
      expect(after.public).toBeGreaterThan(before.public + 40 * 1024)
    })

    it("is refused over quota before any ref changes, with the reason printed by git, and keeps no objects", async () => {
      const { dir, head } = await cloneWithCommit(transport, "alice/code")
      await setGroups("alice", ["deny"])
      const refsBefore = await lsRemote(transport, "alice/code")
      const usedBefore = await usedBy("alice")
      for (const refspec of ["HEAD:main", "HEAD:refs/heads/new-branch", "HEAD:refs/tags/new-tag"]) {
        const pushed = await git(transport, ["push", "origin", refspec], dir)
        expect(pushed.code, refspec).not.toBe(0)
        expect(pushed.stderr).toContain(REFUSAL)
        expect(pushed.stderr).toContain("pre-receive hook declined")
      }
      expect(await lsRemote(transport, "alice/code")).toBe(refsBefore)
      expect(await hasObject("alice", "code", head)).toBe(false)
      expect(await usedBy("alice")).toEqual(usedBefore)
      // Fetching still works.
      expect((await git(transport, ["fetch", "origin"], dir)).code).toBe(0)
      await setGroups("alice", [])
      const retried = await git(transport, ["push", "origin", "HEAD:main"], dir)
      expect(retried.code, retried.stderr).toBe(0)
      expect(await lsRemote(transport, "alice/code")).toContain(`${head}\trefs/heads/main`)
    })

    it("lets a push that only deletes refs through, over quota", async () => {
      const { dir } = await cloneWithCommit(transport, "alice/code")
      const branch = `doomed-${transport}`
      expect(
        (await git(transport, ["push", "origin", `HEAD:refs/heads/${branch}`, `HEAD:refs/tags/${branch}`], dir)).code
      ).toBe(0)
      await setGroups("alice", ["deny"])
      const deleted = await git(transport, ["push", "origin", `:refs/heads/${branch}`, `:refs/tags/${branch}`], dir)
      expect(deleted.code, deleted.stderr).toBe(0)
      const refs = await lsRemote(transport, "alice/code")
      expect(refs).not.toContain(branch)
      // A deletion together with an update is refused as a whole.
      expect((await git(transport, ["push", "origin", "HEAD:main", ":refs/heads/nothing"], dir)).code).not.toBe(0)
      await setGroups("alice", [])
    })
  })
}

describe("who is charged for a push", () => {
  it("the repository's owner, not the pusher", async () => {
    // bob is over quota but alice is not: his push to her repository goes through.
    await setGroups("bob", ["deny"])
    const mine = await cloneWithCommit("http", "alice/shared", "bob")
    const pushed = await git("http", ["push", "origin", "HEAD:main"], mine.dir)
    expect(pushed.code, pushed.stderr).toBe(0)
    await setGroups("bob", [])
    // alice is over quota: bob's push is refused, naming her.
    await setGroups("alice", ["deny"])
    const theirs = await cloneWithCommit("http", "alice/shared", "bob")
    const refused = await git("http", ["push", "origin", "HEAD:main"], theirs.dir)
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(REFUSAL)
    await setGroups("alice", [])
  })
})

describe("with [quota] ENABLED = false", () => {
  let off: Hearth
  // Started in the hook (bounded at 120 s), not in the test (30 s): a server's start on a loaded
  // machine is not the test's subject (quota-enforce's twin test timed out once in CI).
  beforeAll(async () => {
    off = await startHearth({})
  })
  afterAll(async () => {
    await off?.close()
  })

  it("pushes go through whatever the stored rules say", async () => {
    const kim = await createUser(off, { username: "kim" })
    await jail(off, [kim.id])
    expect((await request(off, "POST", "/user/repos", basic("kim"), { name: "free", auto_init: true })).status).toBe(
      201
    )
    const dir = join(work, "off")
    const url = `${off.base.replace("http://", "http://kim:password123@")}/kim/free.git`
    expect((await gitRun(work, ["clone", url, dir])).code).toBe(0)
    writeFileSync(join(dir, "x.txt"), "x\n")
    expect((await gitRun(dir, ["add", "."])).code).toBe(0)
    expect((await gitRun(dir, ["commit", "-m", "x"])).code).toBe(0)
    const pushed = await gitRun(dir, ["push", "origin", "HEAD:main"])
    expect(pushed.code, pushed.stderr).toBe(0)
  })
})

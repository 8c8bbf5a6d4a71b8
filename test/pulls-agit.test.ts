// AGit pull requests (issue 19 item 2; CONTRACT-PULLS §2, §3.2; Forgejo's services/agit) with the
// real git client over HTTP and SSH: `git push origin HEAD:refs/for/main -o topic=… -o title=… -o
// description=…` (or `refs/for/main/<topic>`) by anyone who may read the repository opens a pull
// request with `flow` 1 whose commits live only in `refs/pull/{n}/head` (no branch is made, no
// `refs/for/…` ref either), the pusher is shown its address as Forgejo prints it; a second push of
// the same topic by the same user updates it (a non-fast-forward one only with `-o force-push`),
// and the title and description options edit it. Refused: pushes of readers to branches (with
// Forgejo's message), an unknown base, no topic, commits the base already has; a private
// repository stays invisible to strangers.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, freePort, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { gitSshCommand, keygen, sshUrl, type TestKey } from "./support/ssh.ts"

let hearth: Hearth
let sshPort: number
let work: string
let carolKey: TestKey
const seen: Array<Event> = []

const httpUrl = (repo: string, user: string) => {
  const u = new URL(`${hearth.base}/${repo}.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}
const bare = (repo: string) => join(hearth.settings.repository.ROOT, `${repo}.git`)
const refsOf = (repo: string) => gitIn(bare(repo), ["for-each-ref", "--format=%(refname) %(objectname)"])

/** A clone of `repo` by `user` over HTTP, in a directory of its own. */
const cloneAs = async (repo: string, user: string, name: string) => {
  const dir = join(work, name)
  await gitIn(work, ["clone", "-q", httpUrl(repo, user), dir])
  return dir
}
/** A new commit in `dir` writing `file`; its sha. */
const commit = async (dir: string, file: string, message: string) => {
  writeFileSync(join(dir, file), `${message}\n`)
  await gitIn(dir, ["add", file])
  await gitIn(dir, ["commit", "-q", "-m", message])
  return gitIn(dir, ["rev-parse", "HEAD"])
}
const push = (dir: string, args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
  gitRun(dir, ["push", ...args], env)
const pullOf = async (repo: string, index: number) =>
  json(await request(hearth, "GET", `/repos/${repo}/pulls/${index}`, basic("alice")))
const pullsOf = async (repo: string) =>
  (await json(await request(hearth, "GET", `/repos/${repo}/pulls?state=all`, basic("alice")))) as Array<{
    number: number
    head: { label: string; ref: string }
    user: { login: string }
  }>

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort),
      SSH_PORT: String(sshPort),
      DOMAIN: "127.0.0.1"
    }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-agit-"))
  await hearth.run(
    Effect.flatMap(EventHub, (hub) =>
      hub.subscribe({ name: "test collector", handle: (event) => Effect.sync(() => void seen.push(event)) })
    )
  )
  for (const username of ["alice", "carol", "dave"]) await createUser(hearth, { username })
  for (const [name, isPrivate] of [
    ["app", false],
    ["secret", true]
  ] as const) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), {
      name,
      auto_init: true,
      private: isPrivate
    })
    expect(res.status).toBe(201)
  }
  // carol may read alice/secret (a read collaborator); dave is a stranger to it.
  expect(
    (await request(hearth, "PUT", "/repos/alice/secret/collaborators/carol", basic("alice"), { permission: "read" }))
      .status
  ).toBe(204)
  carolKey = keygen(work, "carol")
  expect(
    (await request(hearth, "POST", "/user/keys", basic("carol"), { title: "carol", key: carolKey.pub })).status
  ).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})
beforeEach(() => {
  seen.length = 0
})

describe("git push HEAD:refs/for/<base> over HTTP", () => {
  let dir: string
  let first: string

  it("opens a pull request (flow 1) whose head lives only in refs/pull/{n}/head, and tells the pusher where", async () => {
    dir = await cloneAs("alice/app", "carol", "carol-app")
    const before = await refsOf("alice/app")
    first = await commit(dir, "feature.txt", "Add a feature")
    const pushed = await push(dir, [
      "origin",
      "HEAD:refs/for/main",
      "-o",
      "topic=feature",
      "-o",
      "title=A feature",
      "-o",
      "description=It does things."
    ])
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr).toContain("remote: Visit the existing pull request:")
    expect(pushed.stderr).toContain(`remote:   ${hearth.base}/alice/app/pulls/1`)
    expect(pushed.stderr).toMatch(/\* \[new reference\]\s+HEAD -> refs\/pull\/1\/head/)

    const pull = await pullOf("alice/app", 1)
    expect(pull).toMatchObject({
      number: 1,
      flow: 1,
      title: "A feature",
      body: "It does things.",
      state: "open",
      user: { login: "carol" },
      base: { ref: "main", label: "main" },
      head: { label: "", ref: "refs/pull/1/head", sha: first, repo: { full_name: "alice/app" } },
      additions: 0,
      changed_files: 0
    })
    // No branch and no refs/for ref: only refs/pull/1/head is new.
    const after = (await refsOf("alice/app")).split("\n")
    expect(after).toContain(`refs/pull/1/head ${first}`)
    expect(after.filter((line) => !before.split("\n").includes(line))).toEqual([`refs/pull/1/head ${first}`])
    // The head branch shown in lists and used for merges is `{pusher}/{topic}`.
    const listed = (await pullsOf("alice/app")).find((p) => p.number === 1)
    expect(listed?.head).toMatchObject({ label: "", ref: "refs/pull/1/head" })
    expect(
      seen.some((e) => e._tag === "Issues" && e.action === "opened" && e.issue.isPull && e.issue.index === 1)
    ).toBe(true)
    // The push of refs/pull/1/head is the pull request's, not a push to the repository.
    expect(seen.filter((e) => e._tag === "PushCommits")).toEqual([])
    const timeline = await json(await request(hearth, "GET", "/repos/alice/app/issues/1/timeline", basic("alice")))
    const pushes = timeline.filter((c: { type: string }) => c.type === "pull_push")
    expect(pushes).toHaveLength(1)
    expect(JSON.parse(pushes[0].body)).toEqual({ is_force_push: false, commit_ids: [first] })
  }, 60_000)

  it("updates the pull request of the same topic by the same pusher: new commits, title and description", async () => {
    const second = await commit(dir, "feature2.txt", "More of it")
    const pushed = await push(dir, [
      "origin",
      "HEAD:refs/for/main",
      "-o",
      "topic=feature",
      "-o",
      "title=A better feature",
      "-o",
      "description="
    ])
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr).toContain(`remote:   ${hearth.base}/alice/app/pulls/1`)
    expect(pushed.stderr).toMatch(
      new RegExp(`${first.slice(0, 7)}[0-9a-f]*\\.\\.${second.slice(0, 7)}[0-9a-f]*\\s+HEAD -> refs/pull/1/head`)
    )
    expect(await pullsOf("alice/app")).toHaveLength(1)
    const pull = await pullOf("alice/app", 1)
    expect(pull).toMatchObject({ title: "A better feature", body: "", head: { sha: second, ref: "refs/pull/1/head" } })
    expect(await gitIn(bare("alice/app"), ["rev-parse", "refs/pull/1/head"])).toBe(second)
    const synced = seen.filter((e) => e._tag === "PullRequestSynchronized")
    expect(synced).toHaveLength(1)
    expect(synced[0]).toMatchObject({ before: first, after: second, doer: { name: "carol" }, issue: { index: 1 } })
    expect(
      seen.some((e) => e._tag === "Issues" && e.action === "edited" && e.changes?.title?.from === "A feature")
    ).toBe(true)
    const timeline = await json(await request(hearth, "GET", "/repos/alice/app/issues/1/timeline", basic("alice")))
    const pushes = timeline.filter((c: { type: string }) => c.type === "pull_push")
    expect(JSON.parse(pushes.at(-1).body)).toEqual({ is_force_push: false, commit_ids: [second] })
    first = second
  }, 60_000)

  it("refuses a non-fast-forward update unless -o force-push, which then replaces the head", async () => {
    await gitIn(dir, ["commit", "-q", "--amend", "-m", "More of it, amended"])
    const amended = await gitIn(dir, ["rev-parse", "HEAD"])
    const refused = await push(dir, ["origin", "HEAD:refs/for/main", "-o", "topic=feature"])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(
      "Updates were rejected because the tip of your current branch is behind its remote counterpart."
    )
    expect(refused.stderr).toContain("-o force-push=true")
    expect((await pullOf("alice/app", 1)).head.sha).toBe(first)
    expect(seen.filter((e) => e._tag === "PullRequestSynchronized")).toEqual([])

    const forced = await push(dir, ["origin", "HEAD:refs/for/main", "-o", "topic=feature", "-o", "force-push"])
    expect(forced.code, forced.stderr).toBe(0)
    expect(forced.stderr).toContain("(forced update)")
    expect((await pullOf("alice/app", 1)).head.sha).toBe(amended)
    const timeline = await json(await request(hearth, "GET", "/repos/alice/app/issues/1/timeline", basic("alice")))
    const pushes = timeline.filter((c: { type: string }) => c.type === "pull_push")
    expect(JSON.parse(pushes.at(-1).body)).toEqual({ is_force_push: true, commit_ids: [first, amended] })
    first = amended
  }, 60_000)

  it("keeps users' topics apart: the same topic by another user is another pull request", async () => {
    const other = await cloneAs("alice/app", "dave", "dave-app")
    const sha = await commit(other, "dave.txt", "Dave's take")
    const pushed = await push(other, ["origin", "HEAD:refs/for/main", "-o", "topic=feature"])
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr).toContain(`${hearth.base}/alice/app/pulls/2`)
    expect(await pullOf("alice/app", 2)).toMatchObject({ user: { login: "dave" }, head: { sha }, flow: 1 })
    expect((await pullOf("alice/app", 1)).head.sha).toBe(first)
  }, 60_000)

  it("refuses what Forgejo refuses, changing nothing", async () => {
    const before = await refsOf("alice/app")
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["HEAD:refs/for/nope", "-o", "topic=x"], "(Unexpected ref: refs/for/nope)"],
      [["HEAD:refs/for/main"], "(The topic-branch option is not set)"],
      [["origin/main:refs/for/main", "-o", "topic=old"], "(The target branch already contains this commit)"]
    ]
    for (const [args, message] of cases) {
      const refused = await push(dir, ["origin", ...args])
      expect(refused.code, refused.stderr).not.toBe(0)
      expect(refused.stderr).toContain(message)
    }
    expect(await refsOf("alice/app")).toBe(before)
    expect(await pullsOf("alice/app")).toHaveLength(2)
  }, 60_000)

  it("refuses a reader's push to a branch with Forgejo's message, which points at AGit", async () => {
    const before = await refsOf("alice/app")
    const refused = await push(dir, ["origin", "HEAD:refs/heads/carols"])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(
      "remote: Hearth: User 'carol' is not allowed to push to branch 'carols' in 'alice/app'."
    )
    expect(refused.stderr).toContain("remote: git push origin HEAD:refs/for/carols/choose-a-descriptor")
    expect(refused.stderr).toContain("pre-receive hook declined")
    const tag = await push(dir, ["origin", "HEAD:refs/tags/v9"])
    expect(tag.code).not.toBe(0)
    expect(tag.stderr).toContain("remote: Hearth: User permission denied for writing.")
    expect(await refsOf("alice/app")).toBe(before)
  }, 60_000)

  it("is no branch: a branch named like its head neither moves it nor is deleted by its merge", async () => {
    // alice (a writer) pushes a branch named as the pull request's head shows itself.
    const owner = await cloneAs("alice/app", "alice", "alice-app")
    await commit(owner, "other.txt", "Someone else's branch")
    const pushed = await push(owner, ["origin", "HEAD:refs/heads/carol/feature"])
    expect(pushed.code, pushed.stderr).toBe(0)
    const branchSha = await gitIn(owner, ["rev-parse", "HEAD"])
    expect((await pullOf("alice/app", 1)).head).toMatchObject({ sha: first, ref: "refs/pull/1/head" })
    expect(seen.filter((e) => e._tag === "PullRequestSynchronized")).toEqual([])
    expect((await request(hearth, "POST", "/repos/alice/app/pulls/1/update", basic("alice"))).status).toBe(403)
    const merged = await request(hearth, "POST", "/repos/alice/app/pulls/1/merge", basic("alice"), {
      Do: "merge",
      delete_branch_after_merge: true
    })
    expect(merged.status, await merged.clone().text()).toBe(200)
    expect(await refsOf("alice/app")).toContain(`refs/heads/carol/feature ${branchSha}`)
    expect(await pullOf("alice/app", 1)).toMatchObject({ merged: true, head: { ref: "refs/pull/1/head", sha: first } })
  }, 60_000)

  it("after the merge, the same topic opens a new pull request", async () => {
    const sha = await commit(dir, "after.txt", "After the merge")
    const pushed = await push(dir, ["origin", "HEAD:refs/for/main", "-o", "topic=feature"])
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(await pullOf("alice/app", 3)).toMatchObject({ head: { sha }, title: "After the merge", flow: 1 })
  }, 60_000)
})

describe("git push HEAD:refs/for/<base>/<topic> over SSH", () => {
  it("opens a pull request titled and described from the commit, the topic from the ref", async () => {
    const dir = await cloneAs("alice/secret", "carol", "carol-secret")
    const sha = await commit(dir, "ssh.txt", "Over SSH\n\nThe body of it.")
    const env = { GIT_SSH_COMMAND: gitSshCommand(carolKey.file, sshPort) }
    const pushed = await push(dir, [sshUrl(sshPort, "alice/secret.git"), "HEAD:refs/for/main/ssh/topic"], env)
    expect(pushed.code, pushed.stderr).toBe(0)
    expect(pushed.stderr).toContain(`remote:   ${hearth.base}/alice/secret/pulls/1`)
    expect(await pullOf("alice/secret", 1)).toMatchObject({
      title: "Over SSH",
      body: "The body of it.",
      flow: 1,
      user: { login: "carol" },
      head: { sha, ref: "refs/pull/1/head" }
    })
    // The same ref again updates it.
    const next = await commit(dir, "ssh2.txt", "Again")
    const again = await push(dir, [sshUrl(sshPort, "alice/secret.git"), "HEAD:refs/for/main/ssh/topic"], env)
    expect(again.code, again.stderr).toBe(0)
    expect((await pullOf("alice/secret", 1)).head.sha).toBe(next)
    expect(await pullsOf("alice/secret")).toHaveLength(1)
  }, 60_000)

  it("keeps a private repository invisible to strangers (404), and asks anonymous pushers to sign in", async () => {
    const dir = await cloneAs("alice/app", "dave", "dave-secret")
    await commit(dir, "x.txt", "Stranger")
    const stranger = await push(dir, [httpUrl("alice/secret", "dave"), "HEAD:refs/for/main", "-o", "topic=x"])
    expect(stranger.code).not.toBe(0)
    expect(stranger.stderr).toMatch(/not found/i)
    const anonymous = await push(dir, [`${hearth.base}/alice/secret.git`, "HEAD:refs/for/main", "-o", "topic=x"])
    expect(anonymous.code).not.toBe(0)
    expect(anonymous.stderr).toMatch(/Authentication failed|could not read Username/)
    expect(await pullsOf("alice/secret")).toHaveLength(1)
  }, 60_000)
})

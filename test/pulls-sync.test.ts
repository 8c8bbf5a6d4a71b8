// Pull requests follow pushes (issue 19 items 1, 3, 10; CONTRACT-PULLS §2, §15): a push to the head
// branch (of the base repository or of a fork) moves refs/pull/{n}/head and the head commit, adds
// a pull_push timeline entry and publishes PullRequestSynchronized; a push to the head or the base
// queues the mergeability job again, whose result follows the branches. Events of the pull request
// (opened, edited, closed, merged) reach the event hub with Forgejo's names.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { PullsService } from "../src/pulls/Service.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
const seen: Array<Event> = []
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const bareOf = (owner: string) => join(hearth.settings.repository.ROOT, owner, "app.git")
const inBare = (owner: string, args: ReadonlyArray<string>) => gitIn(bareOf(owner), args, { GIT_DIR: bareOf(owner) })
const url = (owner: string, user: string) => {
  const u = new URL(`${hearth.base}/${owner}/app.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}

/** Writes `file` in `clone` on its current branch, commits and pushes it to `ref`; the new sha. */
const push = async (clone: string, file: string, text: string, ref: string, extra: Array<string> = []) => {
  writeFileSync(join(clone, file), text)
  await gitIn(clone, ["add", file])
  await gitIn(clone, ["commit", "-q", "-m", `${file}: ${text.trim()}`])
  await gitIn(clone, ["push", "-q", ...extra, "origin", `HEAD:${ref}`])
  return gitIn(clone, ["rev-parse", "HEAD"])
}

const statusOf = (index: number) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT p.status, p.head_sha FROM pull_requests p JOIN issues i ON i.id = p.issue_id
        WHERE i.index = ${index} AND i.repo_id = (SELECT r.id FROM repositories r JOIN users u ON u.id = r.owner_id
          WHERE u.lower_name = 'alice' AND r.lower_name = 'app')`
      return { status: Number(rows[0]!.status), headSha: String(rows[0]!.head_sha) }
    })
  )

/** Waits (bounded) for the background check to settle on something other than "checking". */
const settled = async (index: number) => {
  for (let i = 0; i < 400; i++) {
    const { status } = await statusOf(index)
    if (status !== 1) return json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, basic("alice")))
    await sleep(25)
  }
  throw new Error(`the check of #${index} never ran`)
}

let main: string
let fork: string

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-sync-"))
  await hearth.run(
    Effect.flatMap(EventHub, (hub) =>
      hub.subscribe({ name: "test collector", handle: (event) => Effect.sync(() => void seen.push(event)) })
    )
  )
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  main = join(work, "main")
  await gitIn(work, ["clone", "-q", url("alice", "alice"), main])
  expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("bob"), {})).status).toBe(202)
  for (let i = 0; i < 400; i++) {
    if ((await json(await request(hearth, "GET", "/repos/bob/app", basic("bob")))).empty === false) break
    await sleep(25)
  }
  fork = join(work, "fork")
  await gitIn(work, ["clone", "-q", url("bob", "bob"), fork])
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})
beforeEach(() => {
  seen.length = 0
})

const pullEvents = () =>
  seen.filter((e) => e._tag === "PullRequestSynchronized" || (e._tag === "Issues" && e.issue.isPull))

describe("a push to the head branch", () => {
  let index: number

  it("opens with an `opened` event of a pull request", async () => {
    await gitIn(main, ["checkout", "-q", "-b", "topic"])
    await push(main, "topic.txt", "one", "refs/heads/topic")
    seen.length = 0
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "topic",
      base: "main",
      title: "Topic"
    })
    expect(res.status).toBe(201)
    index = (await json(res)).number
    expect(pullEvents()).toMatchObject([{ _tag: "Issues", action: "opened", issue: { index, isPull: true } }])
    expect((await settled(index)).mergeable).toBe(true)
  })

  it("moves refs/pull/{n}/head and the head commit, adds pull_push and publishes PullRequestSynchronized", async () => {
    const before = await inBare("alice", ["rev-parse", `refs/pull/${index}/head`])
    const after = await push(main, "topic.txt", "two", "refs/heads/topic")
    // Done by the time the push is answered (an in-process subscriber).
    expect(await inBare("alice", ["rev-parse", `refs/pull/${index}/head`])).toBe(after)
    expect((await statusOf(index)).headSha).toBe(after)
    expect(seen.filter((e) => e._tag === "PullRequestSynchronized")).toMatchObject([
      { issue: { index, isPull: true }, before, after, doer: { name: "alice" } }
    ])
    const timeline = await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, undefined))
    const pushes = timeline.filter((c: { type: string }) => c.type === "pull_push")
    expect(JSON.parse(pushes.at(-1).body)).toEqual({ is_force_push: false, commit_ids: [after] })
    const pull = await settled(index)
    expect(pull.head.sha).toBe(after)
    expect(pull.mergeable).toBe(true)
  })

  it("keeps refs/pull/{n}/head Hearth's own: a push can neither update nor delete it; a fetch reads it", async () => {
    const update = await gitRun(main, ["push", "origin", `HEAD~1:refs/pull/${index}/head`])
    expect(update.code).not.toBe(0)
    expect(update.stderr).toContain("deny updating a hidden ref")
    const remove = await gitRun(main, ["push", "origin", `:refs/pull/${index}/head`])
    expect(remove.code).not.toBe(0)
    expect(remove.stderr).toContain("deny deleting a hidden ref")
    const head = await inBare("alice", ["rev-parse", `refs/pull/${index}/head`])
    await gitIn(main, ["fetch", "-q", "origin", `refs/pull/${index}/head:refs/remotes/origin/pr`])
    expect(await gitIn(main, ["rev-parse", "refs/remotes/origin/pr"])).toBe(head)
  })

  it("marks a force push as one", async () => {
    await gitIn(main, ["reset", "-q", "--hard", "HEAD~1"])
    const before = (await statusOf(index)).headSha
    const after = await push(main, "other.txt", "forced", "refs/heads/topic", ["--force"])
    const timeline = await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, undefined))
    const last = JSON.parse(timeline.filter((c: { type: string }) => c.type === "pull_push").at(-1).body)
    expect(last).toEqual({ is_force_push: true, commit_ids: [before, after] })
    expect(await inBare("alice", ["rev-parse", `refs/pull/${index}/head`])).toBe(after)
  })

  it("follows a fork's head branch: the commits are fetched into the base repository", async () => {
    await gitIn(fork, ["checkout", "-q", "-b", "forked"])
    await push(fork, "forked.txt", "one", "refs/heads/forked")
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("bob"), {
      head: "bob:forked",
      base: "main",
      title: "From the fork"
    })
    expect(res.status).toBe(201)
    const number = (await json(res)).number
    const after = await push(fork, "forked.txt", "two", "refs/heads/forked")
    expect(await inBare("alice", ["rev-parse", `refs/pull/${number}/head`])).toBe(after)
    expect(await inBare("alice", ["cat-file", "-t", after])).toBe("commit")
    expect(seen.filter((e) => e._tag === "PullRequestSynchronized")).toMatchObject([
      { issue: { index: number }, repo: { ownerName: "alice" }, after }
    ])
    expect((await settled(number)).head.sha).toBe(after)
  })
})

describe("a push to the base branch", () => {
  it("recomputes mergeability: a conflicting push makes the pull request unmergeable, a fix mergeable again", async () => {
    await gitIn(main, ["fetch", "-q", "origin"])
    await gitIn(main, ["checkout", "-q", "-B", "clash", "origin/main"])
    await push(main, "clash.txt", "head side", "refs/heads/clash")
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "clash",
      base: "main",
      title: "Clash"
    })
    const index = (await json(res)).number
    expect((await settled(index)).mergeable).toBe(true)

    await gitIn(main, ["checkout", "-q", "-B", "main", "origin/main"])
    await push(main, "clash.txt", "base side", "refs/heads/main")
    const conflicted = await settled(index)
    expect(conflicted.mergeable).toBe(false)
    expect((await statusOf(index)).status).toBe(0)

    // The head resolves it by taking the base's version.
    await gitIn(main, ["checkout", "-q", "clash"])
    await gitIn(main, ["merge", "-q", "-X", "theirs", "--no-edit", "origin/main"]).catch(async () => {
      await gitIn(main, ["fetch", "-q", "origin"])
      await gitIn(main, ["merge", "-q", "-X", "theirs", "--no-edit", "origin/main"])
    })
    await gitIn(main, ["push", "-q", "origin", "HEAD:refs/heads/clash"])
    expect((await settled(index)).mergeable).toBe(true)
  })
})

describe("after a crash", () => {
  it("checks again the pull requests left marked as being checked with no job queued", async () => {
    await gitIn(main, ["fetch", "-q", "origin"])
    await gitIn(main, ["checkout", "-q", "-B", "lost", "origin/main"])
    await push(main, "lost.txt", "lost", "refs/heads/lost")
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "lost",
      base: "main",
      title: "Lost"
    })
    const index = (await json(res)).number
    await settled(index)
    // What a crash between marking the pull request and queueing its job leaves.
    await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        yield* sql`UPDATE pull_requests SET status = 1, checked_base_sha = '', checked_head_sha = ''
          WHERE issue_id = (SELECT id FROM issues WHERE index = ${index} AND is_pull
            AND repo_id = (SELECT r.id FROM repositories r WHERE r.lower_name = 'app' AND r.owner_id =
              (SELECT id FROM users WHERE lower_name = 'alice')))`
      })
    )
    await hearth.run(Effect.flatMap(PullsService, (pulls) => pulls.resume))
    expect((await settled(index)).mergeable).toBe(true)
  })
})

describe("events of a pull request", () => {
  it("opens with labels, milestone and assignees: Forgejo's opened, label_updated, milestoned, assigned", async () => {
    await gitIn(main, ["fetch", "-q", "origin"])
    await gitIn(main, ["checkout", "-q", "-B", "meta", "origin/main"])
    await push(main, "meta.txt", "meta", "refs/heads/meta")
    const label = await json(
      await request(hearth, "POST", "/repos/alice/app/labels", basic("alice"), {
        name: "kind/feature",
        color: "00ff00"
      })
    )
    const milestone = await json(
      await request(hearth, "POST", "/repos/alice/app/milestones", basic("alice"), { title: "v1" })
    )
    seen.length = 0
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "meta",
      base: "main",
      title: "Meta",
      labels: [label.id],
      milestone: milestone.id,
      assignees: ["alice"]
    })
    expect(res.status).toBe(201)
    const pull = await json(res)
    expect(pull).toMatchObject({
      labels: [{ name: "kind/feature" }],
      milestone: { title: "v1" },
      assignee: { login: "alice" }
    })
    expect(pullEvents().map((e) => (e._tag === "Issues" ? [e.action, e.issue.isPull] : e._tag))).toEqual([
      ["opened", true],
      ["label_updated", true],
      ["milestoned", true],
      ["assigned", true]
    ])
  })

  it("publishes edited (with the old base), closed, reopened and the merge as closed with merged", async () => {
    await gitIn(main, ["fetch", "-q", "origin"])
    await gitIn(main, ["checkout", "-q", "-B", "ev", "origin/main"])
    await push(main, "ev.txt", "ev", "refs/heads/ev")
    await gitIn(main, ["push", "-q", "origin", "origin/main:refs/heads/stable"])
    const index = (
      await json(
        await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
          head: "ev",
          base: "main",
          title: "Ev"
        })
      )
    ).number
    seen.length = 0
    await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("alice"), { base: "stable" })
    await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("alice"), { state: "closed" })
    await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("alice"), { state: "open" })
    expect(
      (await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, basic("alice"), { Do: "merge" })).status
    ).toBe(200)
    expect(
      pullEvents().map((e) => (e._tag === "Issues" ? [e.action, e.changes ?? null, e.merged ?? false] : e._tag))
    ).toEqual([
      ["edited", { ref: { from: "main" } }, false],
      ["closed", null, false],
      ["reopened", null, false],
      ["closed", null, true]
    ])
    // The merge moved the base: a push event for it.
    expect(seen.some((e) => e._tag === "PushCommits" && e.refs.some((r) => r.ref === "refs/heads/stable"))).toBe(true)
  })
})

describe("updating a fork's head branch (POST /pulls/{index}/update)", () => {
  it("lets the base's maintainers update it only when the poster allows maintainer edits", async () => {
    await gitIn(fork, ["fetch", "-q", "origin"])
    await gitIn(fork, ["checkout", "-q", "-B", "maint", "origin/main"])
    const head = await push(fork, "maint.txt", "maint", "refs/heads/maint")
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("bob"), {
      head: "bob:maint",
      base: "main",
      title: "Maintainers welcome"
    })
    const index = (await json(res)).number
    await gitIn(main, ["fetch", "-q", "origin"])
    await gitIn(main, ["checkout", "-q", "-B", "main", "origin/main"])
    const base = await push(main, "main-maint.txt", "moved on", "refs/heads/main")
    const update = () => request(hearth, "POST", `/repos/alice/app/pulls/${index}/update`, basic("alice"))
    expect((await update()).status).toBe(403)
    expect(
      (await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("bob"), { allow_maintainer_edit: true }))
        .status
    ).toBe(201)
    expect((await update()).status).toBe(200)
    const tip = await inBare("bob", ["rev-parse", "refs/heads/maint"])
    expect(await inBare("bob", ["log", "-1", "--format=%P", tip])).toBe(`${head} ${base}`)
    // The push to the fork's branch moved the pull request's head in the base repository.
    expect(await inBare("alice", ["rev-parse", `refs/pull/${index}/head`])).toBe(tip)
    const pull = await settled(index)
    expect(pull.head.sha).toBe(tip)
    expect(pull.mergeable).toBe(true)
    // Two pushes, a fetch, an update merge and two mergeability checks: more than the default bound
    // on a loaded machine.
  }, 90_000)
})

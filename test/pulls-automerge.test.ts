// Scheduled merges (issue 19 item 8; CONTRACT-PULLS §9; src/pulls/AutoMerge.ts) with the real git
// client: `merge_when_checks_succeed` records the schedule (201, `pull_scheduled_merge`), a second
// one is 409, `DELETE /pulls/{i}/merge` cancels it (404 without one, 403 for who neither scheduled
// it nor may merge, 404 for who cannot see the repository); it fires when the base branch's
// required status succeeds on the head commit — as the user who scheduled it, with their
// permissions then, the stored title, message and branch deletion —, at once when nothing blocks
// it, on the new head after a push to the head, on an approval, on `AutoMerge.reconsider`; a conflict (or a
// scheduler no longer allowed to merge) cancels it with a timeline entry and a notification.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AutoMerge } from "../src/pulls/AutoMerge.ts"
import { AutoMergeStore } from "../src/pulls/AutoMergeStore.ts"
import { eventually } from "./support/federation.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let clone: string

const bare = () => join(hearth.settings.repository.ROOT, "alice", "app.git")
const inBare = (args: ReadonlyArray<string>) => gitIn(bare(), args, { GIT_DIR: bare() })
const git = (args: ReadonlyArray<string>) => gitIn(clone, args)
const api = (method: string, path: string, user = "alice", body?: unknown) =>
  request(hearth, method, `/repos/alice/app${path}`, basic(user), body)

/** A branch from `from` with one commit writing `file`, pushed with the git client; its sha. */
const branch = async (name: string, file: string, text: string, from = "origin/main") => {
  await git(["fetch", "-q", "origin"])
  await git(["checkout", "-q", "-B", name, from])
  writeFileSync(join(clone, file), text)
  await git(["add", file])
  await git(["commit", "-q", "-m", `${name}: ${file}`])
  await git(["push", "-q", "origin", `${name}:${name}`])
  return git(["rev-parse", "HEAD"])
}

const openPull = async (head: string, base = "main", title = `Pull ${head}`) => {
  const res = await api("POST", "/pulls", "alice", { head, base, title })
  expect(res.status, await res.clone().text()).toBe(201)
  const body = await json(res)
  return { index: body.number as number, id: body.id as number }
}

const schedule = (index: number, user = "carol", body: Record<string, unknown> = {}) =>
  api("POST", `/pulls/${index}/merge`, user, { Do: "merge", merge_when_checks_succeed: true, ...body })
const cancel = (index: number, user = "alice") => api("DELETE", `/pulls/${index}/merge`, user)
const status = (sha: string, state: string) => api("POST", `/statuses/${sha}`, "alice", { state, context: "ci" })
const pull = async (index: number) => json(await api("GET", `/pulls/${index}`))
const timeline = async (index: number): Promise<Array<{ type: string; body: string; user: { login: string } }>> =>
  json(await api("GET", `/issues/${index}/timeline`))
const types = async (index: number) => (await timeline(index)).map((c) => c.type)
const mainSha = () => inBare(["rev-parse", "refs/heads/main"])

/** Every queued evaluation of a scheduled merge has run (none is waiting, running or retrying). */
const settled = () =>
  eventually(
    async () => {
      const jobs = (await json(await api("GET", "/jobs?limit=50"))) as Array<{ kind: string; state: string }>
      return jobs.filter((j) => j.kind === "pull-automerge").every((j) => j.state === "succeeded") ? true : undefined
    },
    60_000,
    "the scheduled merges' evaluations"
  )
const merged = (index: number) =>
  eventually(async () => ((await pull(index)).merged === true ? true : undefined), 60_000, `#${index} merged`)

const setPermission = async (user: string, permission: string) =>
  expect((await api("PUT", `/collaborators/${user}`, "alice", { permission })).status).toBe(204)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-automerge-"))
  await createUser(hearth, { username: "alice" })
  await Promise.all(["carol", "dave", "eve"].map((username) => createUser(hearth, { username })))
  const created = await request(hearth, "POST", "/user/repos", basic("alice"), {
    name: "app",
    auto_init: true,
    private: true
  })
  expect(created.status).toBe(201)
  await setPermission("carol", "write")
  await setPermission("dave", "read")
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = "alice"
  u.password = "password123"
  clone = join(work, "clone")
  await gitIn(work, ["clone", "-q", u.toString(), clone])
  // `free` has no rule; `main` needs the `ci` status (pushes stay allowed).
  await branch("main", "conflict.txt", "base\n")
  await git(["push", "-q", "origin", "main:free"])
  const rule = await api("POST", "/branch_protections", "alice", {
    rule_name: "main",
    enable_push: true,
    enable_status_check: true,
    status_check_contexts: ["ci"]
  })
  expect(rule.status, await rule.clone().text()).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("scheduling and cancelling (POST and DELETE /pulls/{index}/merge)", () => {
  it("201 and a timeline entry; 409 for a second; 204 to cancel, with an entry; 404 without one", async () => {
    await branch("a1", "a1.txt", "a\n")
    const { index, id } = await openPull("a1")
    expect((await cancel(index)).status).toBe(404)
    const res = await schedule(index)
    expect(res.status, await res.clone().text()).toBe(201)
    expect(await res.text()).toBe("")
    const again = await schedule(index, "alice")
    expect(again.status).toBe(409)
    expect((await json(again)).message).toBe(
      `pull request is already scheduled to auto merge when checks succeed [pull_id: ${id}]`
    )
    await settled()
    // `ci` has not succeeded: it waits.
    expect((await pull(index)).merged).toBe(false)
    const scheduled = (await timeline(index)).filter((c) => c.type === "pull_scheduled_merge")
    expect(scheduled.map((c) => c.user.login)).toEqual(["carol"])
    expect((await cancel(index)).status).toBe(204)
    expect(await types(index)).toContain("pull_cancel_scheduled_merge")
    expect((await cancel(index)).status).toBe(404)
    // It can be scheduled again (and cancelled while `ci` still waits: once it has succeeded, a
    // schedule merges at once, before a cancel could come).
    expect((await schedule(index)).status).toBe(201)
    expect((await cancel(index, "carol")).status).toBe(204)
    // Nothing scheduled any more: a success does not merge it.
    expect((await status(await git(["rev-parse", "a1"]), "success")).status).toBe(201)
    await settled()
    expect((await pull(index)).merged).toBe(false)
  })

  it("refuses what the merge refuses first: a reader (405), work in progress (405), a merged pull request (405)", async () => {
    await branch("h1", "h1.txt", "h\n")
    const { index } = await openPull("h1", "main", "WIP: not yet")
    const reader = await schedule(index, "dave")
    expect(reader.status).toBe(405)
    expect((await json(reader)).message).toBe("User not allowed to merge PR")
    const wip = await schedule(index)
    expect(wip.status).toBe(405)
    expect((await json(wip)).message).toBe("Work in progress PRs cannot be merged")
    expect(await types(index)).not.toContain("pull_scheduled_merge")
    await branch("h2", "h2.txt", "h\n")
    const done = await openPull("h2", "free")
    expect((await api("POST", `/pulls/${done.index}/merge`, "alice", { Do: "merge" })).status).toBe(200)
    expect((await schedule(done.index)).status).toBe(405)
  })

  it("cancelling: 403 for a reader who did not schedule it, 404 for who cannot see the repository; the scheduler may, without write", async () => {
    await branch("c1", "c1.txt", "c\n")
    const { index } = await openPull("c1")
    expect((await schedule(index)).status).toBe(201)
    const reader = await cancel(index, "dave")
    expect(reader.status).toBe(403)
    expect((await json(reader)).message).toBe("user has no permission to cancel the scheduled auto merge")
    const stranger = await cancel(index, "eve")
    expect(stranger.status).toBe(404)
    expect(await stranger.text()).toBe("")
    expect((await types(index)).filter((t) => t === "pull_cancel_scheduled_merge")).toEqual([])
    // Someone else who may merge it may cancel it.
    expect((await cancel(index, "alice")).status).toBe(204)
    // Its scheduler may, even when no longer allowed to merge (nothing has evaluated it since).
    expect((await schedule(index)).status).toBe(201)
    await settled()
    await setPermission("carol", "read")
    try {
      expect((await cancel(index, "carol")).status).toBe(204)
    } finally {
      await setPermission("carol", "write")
    }
  })
})

// Each case waits for a merge the queue runs after status posts, pushes and reviews (up to 30 s
// for one of them alone): more than the suite's default 30 s per test under a loaded CI machine.
describe("firing", { timeout: 90_000 }, () => {
  it("merges once the required status succeeds on the head: as the scheduler, with the stored title, message and branch deletion", async () => {
    const head = await branch("b1", "b1.txt", "b\n")
    const { index } = await openPull("b1")
    const res = await schedule(index, "carol", {
      MergeTitleField: "Scheduled title",
      MergeMessageField: "Scheduled body",
      delete_branch_after_merge: true
    })
    expect(res.status).toBe(201)
    for (const state of ["pending", "failure"]) {
      expect((await status(head, state)).status).toBe(201)
      await settled()
      expect((await pull(index)).merged, state).toBe(false)
    }
    const before = await mainSha()
    expect((await status(head, "success")).status).toBe(201)
    await merged(index)
    const tip = await mainSha()
    expect(await inBare(["log", "-1", "--format=%P", tip])).toBe(`${before} ${head}`)
    expect(await inBare(["log", "-1", "--format=%B", tip])).toBe("Scheduled title\n\nScheduled body")
    expect(await inBare(["log", "-1", "--format=%cn", tip])).toBe("carol")
    const after = await pull(index)
    expect(after).toMatchObject({ merged: true, state: "closed", merge_commit_sha: tip, merged_by: { login: "carol" } })
    expect((await types(index)).filter((t) => t === "merge_pull")).toHaveLength(1)
    await eventually(
      async () => ((await api("GET", "/branches/b1")).status === 404 ? true : undefined),
      30_000,
      "the head branch deleted"
    )
    // The schedule went with the merge.
    expect((await cancel(index)).status).toBe(404)
  })

  it("merges at once when nothing blocks it (no required status on its base)", async () => {
    const head = await branch("d1", "d1.txt", "d\n", "origin/free")
    const { index } = await openPull("d1", "free")
    const res = await schedule(index)
    expect(res.status).toBe(201)
    await merged(index)
    const after = await pull(index)
    expect(after.merged_by.login).toBe("carol")
    expect(await inBare(["log", "-1", "--format=%P", "refs/heads/free"])).toContain(head)
  })

  it("a push to the head keeps the schedule, which is then judged on the new head", async () => {
    const first = await branch("f1", "f1.txt", "f\n")
    const { index } = await openPull("f1")
    expect((await schedule(index)).status).toBe(201)
    await git(["checkout", "-q", "f1"])
    writeFileSync(join(clone, "f1.txt"), "f, again\n")
    await git(["commit", "-q", "-am", "f1 again"])
    await git(["push", "-q", "origin", "f1:f1"])
    const second = await git(["rev-parse", "HEAD"])
    await eventually(async () => ((await pull(index)).head.sha === second ? true : undefined), 30_000, "the new head")
    // A success on the old head no longer counts.
    expect((await status(first, "success")).status).toBe(201)
    await settled()
    expect((await pull(index)).merged).toBe(false)
    expect(await types(index)).not.toContain("pull_cancel_scheduled_merge")
    expect((await status(second, "success")).status).toBe(201)
    await merged(index)
    expect(await inBare(["log", "-1", "--format=%P", "refs/heads/main"])).toContain(second)
  })

  it("AutoMerge.reconsider evaluates it again (what reviews call when approvals change)", async () => {
    await branch("i1", "i1.txt", "i\n")
    const { index, id } = await openPull("i1")
    expect((await schedule(index)).status).toBe(201)
    await settled()
    expect((await pull(index)).merged).toBe(false)
    // The rule stops requiring `ci`: nothing else tells the schedule.
    expect((await api("PATCH", "/branch_protections/main", "alice", { enable_status_check: false })).status).toBe(200)
    try {
      await settled()
      expect((await pull(index)).merged).toBe(false)
      await hearth.run(
        Effect.gen(function* () {
          yield* (yield* AutoMerge).reconsider(id)
        })
      )
      await merged(index)
    } finally {
      expect((await api("PATCH", "/branch_protections/main", "alice", { enable_status_check: true })).status).toBe(200)
    }
  })

  it("an approval the rule waits for fires it (a submitted review)", async () => {
    const sha = await branch("approved", "approved.txt", "approved\n")
    const { index } = await openPull("approved")
    expect((await api("PATCH", "/branch_protections/main", "alice", { required_approvals: 1 })).status).toBe(200)
    try {
      expect((await status(sha, "success")).status).toBe(201)
      expect((await schedule(index)).status).toBe(201)
      await settled()
      // `ci` succeeded, the approval is missing.
      expect((await pull(index)).merged).toBe(false)
      const review = await api("POST", `/pulls/${index}/reviews`, "carol", { event: "APPROVED", body: "ok" })
      expect(review.status, await review.clone().text()).toBe(200)
      await merged(index)
      expect((await pull(index)).merged_by.login).toBe("carol")
    } finally {
      expect((await api("PATCH", "/branch_protections/main", "alice", { required_approvals: 0 })).status).toBe(200)
    }
  })
})

describe("exactly once", () => {
  it("a merge a crash cut off after the base branch moved is finished, not made again", async () => {
    const head = await branch("j1", "j1.txt", "j\n")
    const { index, id } = await openPull("j1")
    expect((await schedule(index)).status).toBe(201)
    await settled()
    // What a crash leaves between moving the base branch and recording the merge: the commit
    // written on the schedule, the base branch at it, the pull request not merged.
    const before = await mainSha()
    const tree = (await inBare(["merge-tree", "--write-tree", before, head])).split("\n")[0]!
    const commit = await inBare(["commit-tree", tree, "-p", before, "-p", head, "-m", "The cut-off merge"])
    await hearth.run(
      Effect.gen(function* () {
        yield* (yield* AutoMergeStore).setIntent(id, commit, before)
      })
    )
    await inBare(["update-ref", "refs/heads/main", commit, before])
    await hearth.run(
      Effect.gen(function* () {
        yield* (yield* AutoMerge).reconsider(id)
      })
    )
    await merged(index)
    expect(await mainSha()).toBe(commit)
    expect(await pull(index)).toMatchObject({ merge_commit_sha: commit, merged_by: { login: "carol" } })
    expect((await types(index)).filter((t) => t === "merge_pull")).toHaveLength(1)
  })
})

describe("a scheduled merge that fails is cancelled, with a timeline entry and a notification", () => {
  it("a conflict with the base", async () => {
    const head = await branch("e1", "conflict.txt", "head side\n")
    const { index } = await openPull("e1")
    expect((await schedule(index)).status).toBe(201)
    await settled()
    // The base moves on with a conflicting change: the push re-evaluates it.
    await branch("main", "conflict.txt", "base side\n")
    const cancelled = await eventually(
      async () => (await timeline(index)).find((c) => c.type === "pull_cancel_scheduled_merge"),
      60_000,
      "the cancellation"
    )
    expect(cancelled.user.login).toBe("carol")
    expect(cancelled.body).toContain("conflict.txt")
    const threads = (await json(
      await request(hearth, "GET", "/notifications?subject-type=pull", basic("carol"))
    )) as Array<{ subject: { title: string } }>
    expect(threads.map((t) => t.subject.title)).toContain("Pull e1")
    expect((await cancel(index)).status).toBe(404)
    expect((await status(head, "success")).status).toBe(201)
    await settled()
    expect((await pull(index)).merged).toBe(false)
  })

  it("the scheduler no longer allowed to merge when it fires: it runs with their permissions then", async () => {
    const head = await branch("g1", "g1.txt", "g\n")
    const { index } = await openPull("g1")
    expect((await schedule(index)).status).toBe(201)
    await setPermission("carol", "read")
    try {
      expect((await status(head, "success")).status).toBe(201)
      const cancelled = await eventually(
        async () => (await timeline(index)).find((c) => c.type === "pull_cancel_scheduled_merge"),
        60_000,
        "the cancellation"
      )
      expect(cancelled.body).toContain("User not allowed to merge PR")
      expect((await pull(index)).merged).toBe(false)
    } finally {
      await setPermission("carol", "write")
    }
  })
})

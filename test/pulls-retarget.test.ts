// Retargeting child pull requests (issue 19 item 9; CONTRACT-PULLS §8.5, §11; SPEC's state-table
// row): when a pull request whose head is a branch of its base repository is merged with
// `delete_branch_after_merge`, the open pull requests of that repository based on the head branch
// move to the merged pull request's base — those whose head is in a fork too — with a
// `change_target_branch` timeline entry by the merger and an `edited` event (`changes.ref.from`).
// Pull requests of another repository, children of a pull request from a fork, children that would
// duplicate an open pull request, and every child of a repository that switched it off
// (`retarget_children_on_merge`) stay where they are.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { setTimeout as sleep } from "node:timers/promises"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let main: string
let fork: string
const seen: Array<Event> = []

const url = (owner: string, user: string) => {
  const u = new URL(`${hearth.base}/${owner}/app.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}

/** In `clone`, a branch `name` from `from` with one commit, pushed. */
const branch = async (clone: string, name: string, from: string) => {
  await gitIn(clone, ["fetch", "-q", "origin"])
  await gitIn(clone, ["checkout", "-q", "-B", name, from])
  writeFileSync(join(clone, `${name}.txt`), `${name}\n`)
  await gitIn(clone, ["add", `${name}.txt`])
  await gitIn(clone, ["commit", "-q", "-m", name])
  await gitIn(clone, ["push", "-q", "origin", `${name}:${name}`])
}

const open = async (repo: string, head: string, base: string, auth = basic("alice")) => {
  const res = await request(hearth, "POST", `/repos/${repo}/pulls`, auth, { head, base, title: `${head} into ${base}` })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)).number as number
}
const pull = async (repo: string, index: number) =>
  json(await request(hearth, "GET", `/repos/${repo}/pulls/${index}`, basic("alice")))
const timeline = async (index: number) =>
  (await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, basic("alice")))) as Array<{
    type: string
    old_ref: string
    new_ref: string
    user: { login: string }
  }>
const mergeDeleting = async (index: number, auth = basic("alice")) => {
  const res = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, auth, {
    Do: "merge",
    delete_branch_after_merge: true
  })
  expect(res.status, await res.clone().text()).toBe(200)
}
const branchExists = async (repo: string, name: string) =>
  (await request(hearth, "GET", `/repos/${repo}/branches/${name}`, basic("alice"))).status === 200
const retargeted = (index: number) =>
  seen.filter(
    (e) => e._tag === "Issues" && e.issue.index === index && e.action === "edited" && e.changes?.ref !== undefined
  )

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-retarget-"))
  await hearth.run(
    Effect.flatMap(EventHub, (hub) =>
      hub.subscribe({ name: "test collector", handle: (event) => Effect.sync(() => void seen.push(event)) })
    )
  )
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  // bob writes to alice/app (he merges his fork's pull request there).
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/bob", basic("alice"), { permission: "write" })).status
  ).toBe(204)
  main = join(work, "main")
  await gitIn(work, ["clone", "-q", url("alice", "alice"), main])
  await branch(main, "feature", "origin/main")
  await branch(main, "feature-child", "origin/feature")
  await branch(main, "fp", "origin/main")
  // The fork has alice's branches as they are now.
  expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("bob"), {})).status).toBe(202)
  for (let i = 0; i < 400; i++) {
    if ((await json(await request(hearth, "GET", "/repos/bob/app", basic("bob")))).empty === false) break
    await sleep(25)
  }
  fork = join(work, "fork")
  await gitIn(work, ["clone", "-q", url("bob", "bob"), fork])
  await branch(fork, "fchild", "origin/feature")
  await branch(fork, "fother", "origin/feature")
}, 180_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})
beforeEach(() => {
  seen.length = 0
})

describe("merging a pull request and deleting its head branch", () => {
  it("moves the open pull requests based on that branch to its base, the fork's too; another repository's stay", async () => {
    const parent = await open("alice/app", "feature", "main")
    const child = await open("alice/app", "feature-child", "feature")
    const fromFork = await open("alice/app", "bob:fchild", "feature", basic("bob"))
    const inFork = await open("bob/app", "fother", "feature", basic("bob"))
    await mergeDeleting(parent)
    expect(await branchExists("alice/app", "feature")).toBe(false)

    for (const index of [child, fromFork]) {
      const moved = await pull("alice/app", index)
      expect(moved).toMatchObject({ state: "open", merged: false, base: { ref: "main", label: "main" } })
      // Checked again at once against the new base: the parent's commits are in main now.
      expect(moved.mergeable).toBe(true)
      const entries = (await timeline(index)).filter((c) => c.type === "change_target_branch")
      expect(entries).toHaveLength(1)
      expect(entries[0]).toMatchObject({ old_ref: "feature", new_ref: "main", user: { login: "alice" } })
      expect(retargeted(index)).toHaveLength(1)
      expect(retargeted(index)[0]).toMatchObject({ changes: { ref: { from: "feature" } }, doer: { name: "alice" } })
    }
    // A pull request of bob's fork keeps its base there (its branch `feature` still exists).
    expect((await pull("bob/app", inFork)).base.ref).toBe("feature")
    expect(seen.filter((e) => e._tag === "Issues" && e.repo.ownerName === "bob" && e.action === "edited")).toEqual([])
  }, 120_000)

  it("leaves a child that would duplicate an open pull request into the new base (the merge still succeeds)", async () => {
    await branch(main, "p3", "origin/main")
    await branch(main, "x3", "origin/p3")
    const parent = await open("alice/app", "p3", "main")
    await open("alice/app", "x3", "main")
    const child = await open("alice/app", "x3", "p3")
    await mergeDeleting(parent)
    expect(await branchExists("alice/app", "p3")).toBe(false)
    expect((await pull("alice/app", child)).base.ref).toBe("p3")
    expect((await timeline(child)).map((c) => c.type)).not.toContain("change_target_branch")
    // Its base branch is gone: it is closed (CloseBranchPulls), as in Forgejo.
    expect((await pull("alice/app", child)).state).toBe("closed")
  }, 120_000)

  it("retargets nothing after a pull request from a fork", async () => {
    const parent = await open("alice/app", "bob:fp", "main", basic("bob"))
    // alice/app has a branch named like the fork's head: a child based on it stays.
    const onSameName = await open("alice/app", "feature-child", "fp")
    await mergeDeleting(parent, basic("bob"))
    expect(await branchExists("bob/app", "fp")).toBe(false)
    expect((await pull("alice/app", onSameName)).base.ref).toBe("fp")
    expect(retargeted(onSameName)).toEqual([])
  }, 120_000)

  it("retargets nothing in a repository that switched it off (retarget_children_on_merge)", async () => {
    const repo = await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))
    expect(repo.retarget_children_on_merge).toBe(true)
    const off = await request(hearth, "PATCH", "/repos/alice/app", basic("alice"), {
      retarget_children_on_merge: false
    })
    expect(off.status).toBe(200)
    expect((await json(off)).retarget_children_on_merge).toBe(false)
    try {
      await branch(main, "p4", "origin/main")
      await branch(main, "c4", "origin/p4")
      const parent = await open("alice/app", "p4", "main")
      const child = await open("alice/app", "c4", "p4")
      await mergeDeleting(parent)
      expect(await branchExists("alice/app", "p4")).toBe(false)
      expect((await pull("alice/app", child)).base.ref).toBe("p4")
      expect((await timeline(child)).map((c) => c.type)).not.toContain("change_target_branch")
      expect((await pull("alice/app", child)).state).toBe("closed")
      expect(retargeted(child)).toEqual([])
    } finally {
      await request(hearth, "PATCH", "/repos/alice/app", basic("alice"), { retarget_children_on_merge: true })
    }
  }, 120_000)
})

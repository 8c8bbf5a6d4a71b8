// Deleting a branch closes its pull requests (issue 19; CONTRACT-PULLS §11, Forgejo's
// `CloseBranchPulls`): a branch deleted by the branch API or by `git push --delete` (the real git
// client over HTTP) closes every open pull request of that repository whose head or base it was,
// in the deleter's name — a `close` timeline entry, `pull_request`/`closed` on the hub, and the
// notification that follows for the poster. A fork's head branch deleted in the fork closes the
// pull request into the base repository. Left alone: another repository's branch of the same name,
// an AGit pull request whose shown head (`{user}/{topic}`) is named like the branch, and a pull
// request with open dependencies (Forgejo's ErrDependenciesLeft, skipped).
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

const open = async (repo: string, head: string, base: string, user = "alice") => {
  const res = await request(hearth, "POST", `/repos/${repo}/pulls`, basic(user), {
    head,
    base,
    title: `${head} into ${base}`
  })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)).number as number
}
const pull = async (index: number) =>
  json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, basic("alice")))
const closes = async (index: number) =>
  (
    (await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, basic("alice")))) as Array<{
      type: string
      user: { login: string }
    }>
  ).filter((c) => c.type === "close")
const closedEvents = (index: number) =>
  seen.filter(
    (e) => e._tag === "Issues" && e.repo.ownerName === "alice" && e.issue.index === index && e.action === "closed"
  )

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-branch-delete-"))
  await hearth.run(
    Effect.flatMap(EventHub, (hub) =>
      hub.subscribe({ name: "test collector", handle: (event) => Effect.sync(() => void seen.push(event)) })
    )
  )
  await Promise.all(["alice", "bob", "carol"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  // carol writes to alice/app and opens pull requests there.
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/carol", basic("alice"), { permission: "write" }))
      .status
  ).toBe(204)
  main = join(work, "main")
  await gitIn(work, ["clone", "-q", url("alice", "alice"), main])
  for (const name of ["f1", "f2", "f3", "f4", "f5", "f6"]) await branch(main, name, "origin/main")
  await branch(main, "f1-child", "origin/f1")
  expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("bob"), {})).status).toBe(202)
  for (let i = 0; i < 400; i++) {
    if ((await json(await request(hearth, "GET", "/repos/bob/app", basic("bob")))).empty === false) break
    await sleep(25)
  }
  fork = join(work, "fork")
  await gitIn(work, ["clone", "-q", url("bob", "bob"), fork])
  await branch(fork, "fb", "origin/main")
  // The fork has alice's branches as they were (f3 among them).
}, 180_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})
beforeEach(() => {
  seen.length = 0
})

describe("deleting a branch closes the open pull requests of that repository whose head or base it is", () => {
  it("by the branch API: head and base alike, in the deleter's name, with notifications", async () => {
    const asHead = await open("alice/app", "f1", "main", "carol")
    const asBase = await open("alice/app", "f1-child", "f1", "carol")
    const elsewhere = await open("alice/app", "f5", "main", "carol")
    const deleted = await request(hearth, "DELETE", "/repos/alice/app/branches/f1", basic("alice"))
    expect(deleted.status).toBe(204)
    for (const index of [asHead, asBase]) {
      expect(await pull(index)).toMatchObject({ state: "closed", merged: false })
      const entries = await closes(index)
      expect(entries).toHaveLength(1)
      expect(entries[0]!.user.login).toBe("alice")
      expect(closedEvents(index)).toHaveLength(1)
      expect(closedEvents(index)[0]).toMatchObject({ doer: { name: "alice" }, issue: { isPull: true } })
    }
    // Another branch's pull request stays open.
    expect((await pull(elsewhere)).state).toBe("open")
    // The poster hears of it (the issues' close notification).
    const threads = (await json(await request(hearth, "GET", "/notifications?all=true", basic("carol")))) as Array<{
      subject: { title: string; state: string }
    }>
    expect(threads.find((t) => t.subject.title === "f1 into main")?.subject.state).toBe("closed")
    expect(threads.find((t) => t.subject.title === "f1-child into f1")?.subject.state).toBe("closed")
  }, 120_000)

  it("by git push --delete over HTTP", async () => {
    const index = await open("alice/app", "f2", "main", "carol")
    await gitIn(main, ["push", "-q", "origin", "--delete", "f2"])
    expect(await pull(index)).toMatchObject({ state: "closed", merged: false })
    expect((await closes(index))[0]?.user.login).toBe("alice")
    expect(closedEvents(index)).toHaveLength(1)
  }, 120_000)

  it("a fork's head branch deleted in the fork closes its pull request into the base repository", async () => {
    const fromFork = await open("alice/app", "bob:fb", "main", "bob")
    const sameName = await open("alice/app", "f3", "main", "carol")
    await gitIn(fork, ["push", "-q", "origin", "--delete", "fb"])
    expect(await pull(fromFork)).toMatchObject({ state: "closed", merged: false })
    expect((await closes(fromFork))[0]?.user.login).toBe("bob")
    expect(closedEvents(fromFork)[0]).toMatchObject({ doer: { name: "bob" } })
    // bob's own f3 going closes nothing of alice/app's f3.
    await gitIn(fork, ["push", "-q", "origin", "--delete", "f3"])
    expect((await pull(sameName)).state).toBe("open")
    expect(closedEvents(sameName)).toEqual([])
  }, 120_000)

  it("leaves open a pull request with open dependencies (Forgejo skips it)", async () => {
    const index = await open("alice/app", "f6", "main", "carol")
    const blocker = await json(
      await request(hearth, "POST", "/repos/alice/app/issues", basic("alice"), { title: "first this" })
    )
    const depends = await request(hearth, "POST", `/repos/alice/app/issues/${index}/dependencies`, basic("alice"), {
      owner: "alice",
      repo: "app",
      index: blocker.number
    })
    expect(depends.status).toBe(201)
    expect((await request(hearth, "DELETE", "/repos/alice/app/branches/f6", basic("alice"))).status).toBe(204)
    expect((await pull(index)).state).toBe("open")
    expect(await closes(index)).toEqual([])
  }, 120_000)

  it("leaves alone an AGit pull request whose shown head is named like the deleted branch", async () => {
    await gitIn(main, ["checkout", "-q", "-B", "agit", "origin/main"])
    writeFileSync(join(main, "agit.txt"), "agit\n")
    await gitIn(main, ["add", "agit.txt"])
    await gitIn(main, ["commit", "-q", "-m", "agit"])
    await gitIn(main, ["push", "-q", "origin", "HEAD:refs/for/main", "-o", "topic=t"])
    const agit = (
      (await json(await request(hearth, "GET", "/repos/alice/app/pulls?state=open", basic("alice")))) as Array<{
        number: number
        flow: number
      }>
    ).find((p) => p.flow === 1)!
    // A branch of the name it shows, made and deleted.
    await gitIn(main, ["push", "-q", "origin", "HEAD:refs/heads/alice/t"])
    await gitIn(main, ["push", "-q", "origin", "--delete", "alice/t"])
    expect((await pull(agit.number)).state).toBe("open")
  }, 120_000)

  it("leaves closed pull requests and a merge's own head alone (no second close)", async () => {
    const index = await open("alice/app", "f4", "main", "carol")
    const merged = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, basic("alice"), {
      Do: "merge",
      delete_branch_after_merge: true
    })
    expect(merged.status, await merged.clone().text()).toBe(200)
    expect(await pull(index)).toMatchObject({ state: "closed", merged: true })
    expect(await closes(index)).toEqual([])
    expect(seen.filter((e) => e._tag === "Issues" && e.action === "closed")).toHaveLength(1)
  }, 120_000)
})

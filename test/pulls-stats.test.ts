// A pull request's additions, deletions and changed_files (Forgejo's shortstat of merge base...head;
// issue 19 "Speed", migration 0033): the mergeability check stores them with the merge base and
// head they were counted for, the list and the pull request show the stored numbers, and a push to
// the head or a base that moves the merge base never shows numbers counted for other commits.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let clone: string
let index: number
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const url = () => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}

const commitFile = async (file: string, text: string) => {
  writeFileSync(join(clone, file), text)
  await gitIn(clone, ["add", file])
  await gitIn(clone, ["commit", "-q", "-m", `${file}`])
  return gitIn(clone, ["rev-parse", "HEAD"])
}

const rowOf = () =>
  hearth.sql((s) =>
    Effect.map(
      s`SELECT p.* FROM pull_requests p JOIN issues i ON i.id = p.issue_id WHERE i.index = ${index}
        AND i.repo_id = (SELECT id FROM repositories WHERE lower_name = 'app')`,
      (rows) => rows[0] as Record<string, any>
    )
  )

/** Waits (bounded) until the check has stored its counts for the head `sha` and merge base `base`. */
const counted = async (sha: string, base: string) => {
  for (let i = 0; i < 400; i++) {
    const row = await rowOf()
    if (Number(row.status) !== 1 && row.stats_head_sha === sha && row.stats_merge_base === base) return row
    await sleep(25)
  }
  throw new Error(`the counts for ${sha} were never stored`)
}

const numbers = (pr: any) => ({ additions: pr.additions, deletions: pr.deletions, changed_files: pr.changed_files })
const shown = async () => {
  const one = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, basic("alice")))
  const list = await json(await request(hearth, "GET", "/repos/alice/app/pulls?state=open", basic("alice")))
  const listed = list.find((p: any) => p.number === index)
  expect(numbers(listed)).toEqual(numbers(one))
  return numbers(one)
}
const pretend = (additions: number) => hearth.sql((s) => s`UPDATE pull_requests SET additions = ${additions}`)

let first: string
let root: string

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-stats-"))
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  clone = join(work, "app")
  await gitIn(work, ["clone", "-q", url(), clone])
  root = await gitIn(clone, ["rev-parse", "HEAD"])
  await gitIn(clone, ["checkout", "-q", "-b", "topic"])
  first = await commitFile("a.txt", "one\ntwo\nthree\n")
  await gitIn(clone, ["push", "-q", "origin", "HEAD:refs/heads/topic"])
  const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
    head: "topic",
    base: "main",
    title: "Topic"
  })
  expect(res.status).toBe(201)
  index = (await json(res)).number
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("a pull request's additions, deletions and changed_files", () => {
  it("are stored by the check with the commits they were counted for, and shown from there", async () => {
    const row = await counted(first, root)
    expect([row.additions, row.deletions, row.changed_files].map(Number)).toEqual([3, 0, 1])
    expect(await shown()).toEqual({ additions: 3, deletions: 0, changed_files: 1 })
    // The list and the pull request read the stored numbers (no `git diff` of their own).
    await pretend(999)
    expect((await shown()).additions).toBe(999)
  })

  it("follow a push to the head at once, and are stored again for the new head", async () => {
    // Still 999 stored for the old head: never shown for the new one.
    await commitFile("a.txt", "one\nTWO\nthree\n")
    const second = await commitFile("b.txt", "four\nfive\n")
    await gitIn(clone, ["push", "-q", "origin", "HEAD:refs/heads/topic"])
    expect(await shown()).toEqual({ additions: 5, deletions: 0, changed_files: 2 })
    const row = await counted(second, root)
    expect([row.additions, row.deletions, row.changed_files].map(Number)).toEqual([5, 0, 2])
    expect(await shown()).toEqual({ additions: 5, deletions: 0, changed_files: 2 })
  })

  it("are counted again when a push to the base moves the merge base", async () => {
    const head = await gitIn(clone, ["rev-parse", "HEAD"])
    const middle = await gitIn(clone, ["rev-parse", "HEAD~1"])
    await pretend(999)
    // main takes the head but its last commit: only b.txt is left to merge.
    await gitIn(clone, ["push", "-q", "origin", "HEAD~1:refs/heads/main"])
    const row = await counted(head, middle)
    expect(row.merge_base).toBe(middle)
    expect([row.additions, row.deletions, row.changed_files].map(Number)).toEqual([2, 0, 1])
    expect(await shown()).toEqual({ additions: 2, deletions: 0, changed_files: 1 })
  })
})

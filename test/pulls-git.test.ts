// Fewer git processes per merge and per mergeability check (issue 19, "Speed"): a `git` wrapper
// first on this process's PATH (the server runs in it) records every git command, and the tests
// say which the server no longer starts — the size of a repository read from its object directory
// (the same number as `git count-objects -v`), no branch listing after a change that moved only
// existing branches, the base tip read once per check, no ancestor test in a merge that needs none.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"
import * as Merge from "../src/git/Merge.ts"
import * as Readers from "../src/git/Readers.ts"
import { gitIn, recordGitProcesses } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let clone: string
let git: ReturnType<typeof recordGitProcesses>
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** The git commands started since `from` (a `logLength()`), one line each: `cwd|args`. */
const commandsSince = (from: number) => git.since(from)
const logLength = () => git.length()

const url = () => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}
const bare = () => join(hearth.settings.repository.ROOT, "alice", "app.git")

const commitFile = async (file: string, text: string) => {
  writeFileSync(join(clone, file), text)
  await gitIn(clone, ["add", file])
  await gitIn(clone, ["commit", "-q", "-m", file])
  return gitIn(clone, ["rev-parse", "HEAD"])
}

/** Waits (bounded) until every open pull request of alice/app has a check for the base tip `sha`. */
const checkedAgainst = async (sha: string, count: number) => {
  for (let i = 0; i < 800; i++) {
    const rows = (await hearth.sql(
      (s) => s`SELECT p.checked_base_sha, p.status FROM pull_requests p WHERE NOT p.has_merged`
    )) as ReadonlyArray<Record<string, any>>
    if (rows.length === count && rows.every((r) => r.checked_base_sha === sha && Number(r.status) !== 1)) return
    await sleep(25)
  }
  throw new Error(`the checks against ${sha} never ran`)
}

const openPull = async (branch: string, file: string) => {
  await gitIn(clone, ["checkout", "-q", "-b", branch, "main"])
  await commitFile(file, `${branch}\n`)
  await gitIn(clone, ["push", "-q", "origin", `HEAD:refs/heads/${branch}`])
  await gitIn(clone, ["checkout", "-q", "main"])
  const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
    head: branch,
    base: "main",
    title: branch
  })
  expect(res.status).toBe(201)
  return (await json(res)).number as number
}

const countObjectsKiB = async (dir: string) => {
  let total = 0
  for (const line of (await gitIn(dir, ["count-objects", "-v"])).split("\n")) {
    const [key, value] = line.split(": ")
    if (key === "size" || key === "size-pack") total += Number(value)
  }
  return total
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-git-"))
  git = recordGitProcesses(work)
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  clone = join(work, "app")
  await gitIn(work, ["clone", "-q", url(), clone])
})
afterAll(async () => {
  await hearth?.close()
  git?.stop()
  rmSync(work, { recursive: true, force: true })
})

describe("git processes per merge and per mergeability check", () => {
  it("the size is git count-objects' (loose and packed), read without starting git", async () => {
    const from = logLength()
    for (let i = 0; i < 5; i++) await commitFile(`f${i}.txt`, `${"x".repeat(5000 + i)}\n`)
    await gitIn(clone, ["push", "-q", "origin", "HEAD:refs/heads/main"])
    const repo = await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))
    expect(commandsSince(from).filter((c) => c.includes("|count-objects"))).toEqual([])
    const loose = await countObjectsKiB(bare())
    expect(await Effect.runPromise(Git.sizeKiB(bare()))).toBe(loose)
    expect(repo.size).toBe(loose)
    // Packed, with loose objects besides.
    await gitIn(bare(), ["repack", "-a", "-d", "-q"])
    await commitFile("g.txt", `${"y".repeat(9000)}\n`)
    await gitIn(clone, ["push", "-q", "origin", "HEAD:refs/heads/main"])
    const both = await countObjectsKiB(bare())
    expect(both).toBeGreaterThan(0)
    expect(await Effect.runPromise(Git.sizeKiB(bare()))).toBe(both)
    // Many loose objects (read in slices, the event loop let through between them): the same number.
    const many = join(work, "many")
    mkdirSync(many)
    const files = Array.from({ length: 600 }, (_, i) => join(many, `${i}.txt`))
    for (const [i, file] of files.entries()) writeFileSync(file, `loose ${i}\n`)
    await gitIn(bare(), ["hash-object", "-w", "--", ...files])
    const manyLoose = await countObjectsKiB(bare())
    expect(manyLoose).toBeGreaterThan(both)
    expect(await Effect.runPromise(Git.sizeKiB(bare()))).toBe(manyLoose)
  })

  it("a merge (Do: merge) whose check is current starts no git process: no merge-tree, commit-tree, update-ref, size count or branch listing", async () => {
    const index = await openPull("one", "one.txt")
    await checkedAgainst(await gitIn(clone, ["rev-parse", "main"]), 1)
    const openBefore = (await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))).open_pr_counter
    const from = logLength()
    const res = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, basic("alice"), { Do: "merge" })
    expect(res.status).toBe(200)
    // Recorded in one statement: merged, closed and counted, with its merge_pull comment.
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, basic("alice")))
    expect([pull.merged, pull.state, pull.closed_at === null, pull.merged_by?.login]).toEqual([
      true,
      "closed",
      false,
      "alice"
    ])
    expect(pull.merge_commit_sha).toBe(await gitIn(bare(), ["rev-parse", "main"], { GIT_DIR: bare() }))
    const timeline = await json(
      await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, basic("alice"))
    )
    expect(timeline.filter((e: { type: string }) => e.type === "merge_pull")).toHaveLength(1)
    const openAfter = (await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))).open_pr_counter
    expect(openAfter).toBe(openBefore - 1)
    const started = commandsSince(from).map((c) => c.slice(c.indexOf("|") + 1))
    expect(started.filter((c) => c.startsWith("merge-base --is-ancestor"))).toEqual([])
    expect(started.filter((c) => c.startsWith("count-objects"))).toEqual([])
    expect(started.filter((c) => c.startsWith("for-each-ref") && c.endsWith("refs/heads/"))).toEqual([])
    // The check computed this very merge (the base tip and head it checked): its tree is taken
    // as it wrote it; the commit is written in-process, the branch moved by the repository's
    // long-lived `update-ref --stdin` (opened when the pull request's ref was made): no git process.
    expect(started.filter((c) => c.startsWith("merge-tree"))).toEqual([])
    expect(started.filter((c) => c.startsWith("commit-tree"))).toEqual([])
    expect(started.filter((c) => c.startsWith("update-ref"))).toEqual([])
    await gitIn(bare(), ["fsck", "--strict", "--no-dangling"])
    // The base tip is read through the long-lived reader, not a `rev-parse` process.
    expect(started.filter((c) => c === "rev-parse --verify --quiet --end-of-options refs/heads/main")).toEqual([])
    // The branches did not change: the repository is still what it was.
    const repo = await json(await request(hearth, "GET", "/repos/alice/app", basic("alice")))
    expect([repo.empty, repo.default_branch, repo.size]).toEqual([false, "main", await countObjectsKiB(bare())])
  })

  it("a merge whose check is out of date reads the base tip without starting git", async () => {
    const index = await openPull("two", "two.txt")
    await checkedAgainst(await gitIn(bare(), ["rev-parse", "main"]), 1)
    // As after a push to the base whose check has not run yet.
    await hearth.sql((s) => s`UPDATE pull_requests SET checked_base_sha = '' WHERE NOT has_merged`)
    const from = logLength()
    const res = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, basic("alice"), {
      Do: "fast-forward-only"
    })
    // main has the merge of `one`, which `two` lacks: the stored check (made again) says so.
    expect(res.status).toBe(409)
    const reads = commandsSince(from).filter((c) =>
      c.endsWith("|rev-parse --verify --quiet --end-of-options refs/heads/main")
    )
    expect(reads).toEqual([])
  })

  it("a mergeability check starts no rev-parse and no diff-tree, and still tells an empty pull request", async () => {
    // `noop` adds a file and takes it away again: merged into main it changes nothing.
    // From the base as the server has it (earlier tests merged into it).
    await gitIn(clone, ["fetch", "-q", "origin", "main"])
    await gitIn(clone, ["checkout", "-q", "-b", "noop", "FETCH_HEAD"])
    await commitFile("noop.txt", "noop\n")
    await gitIn(clone, ["rm", "-q", "noop.txt"])
    await gitIn(clone, ["commit", "-q", "-m", "noop back"])
    await gitIn(clone, ["push", "-q", "origin", "HEAD:refs/heads/noop"])
    await gitIn(clone, ["checkout", "-q", "main"])
    const from = logLength()
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "noop",
      base: "main",
      title: "noop"
    })
    expect(res.status).toBe(201)
    const open = (await hearth.sql(
      (s) => s`SELECT count(*) AS n FROM pull_requests WHERE NOT has_merged`
    )) as ReadonlyArray<Record<string, any>>
    await checkedAgainst(await gitIn(bare(), ["rev-parse", "main"]), Number(open[0]!.n))
    const started = commandsSince(from).map((c) => c.slice(c.indexOf("|") + 1))
    expect(started.filter((c) => c.startsWith("merge-tree")).length).toBeGreaterThan(0)
    expect(started.filter((c) => c.startsWith("diff-tree"))).toEqual([])
    // The merge base and the counts come from one `rev-list --boundary` in a history with no merges of older branches.
    // (The one `merge-base` is the creation's, for the pull request's first commits.)
    expect(started.filter((c) => c.startsWith("merge-base --end-of-options"))).toHaveLength(1)
    expect(started.filter((c) => c.startsWith("rev-list --left-right --boundary")).length).toBeGreaterThan(0)
    expect(started.filter((c) => c === "rev-parse --verify --quiet --end-of-options refs/heads/main")).toEqual([])
    const rows = (await hearth.sql(
      (s) => s`SELECT p.status FROM pull_requests p JOIN issues i ON i.id = p.issue_id WHERE i.title = 'noop'`
    )) as ReadonlyArray<Record<string, any>>
    expect(Number(rows[0]!.status)).toBe(5) // PullStatus.empty
  })

  it("a push that creates or removes a branch still lists the branches", async () => {
    const from = logLength()
    await gitIn(clone, ["push", "-q", "origin", "main:refs/heads/other", ":refs/heads/two"])
    const started = commandsSince(from).map((c) => c.slice(c.indexOf("|") + 1))
    expect(started.filter((c) => c.startsWith("for-each-ref") && c.endsWith("refs/heads/")).length).toBe(1)
  })
})

describe("the merge base and counts of a check (Merge.compare)", () => {
  it("are git merge-base's and rev-list --count's, with merges of older branches and unrelated histories", {
    timeout: 120_000
  }, async () => {
    const dir = join(work, "compare")
    await gitIn(work, ["init", "-q", "-b", "main", dir])
    const repo = join(dir, ".git")
    const commit = async (message: string) => {
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", message])
      return gitIn(dir, ["rev-parse", "HEAD"])
    }
    await commit("a")
    const b = await commit("b")
    await gitIn(dir, ["checkout", "-q", "-b", "old", b])
    await commit("old 1")
    await gitIn(dir, ["checkout", "-q", "-b", "head", b])
    await commit("head 1")
    await gitIn(dir, ["merge", "-q", "--no-edit", "old"])
    const head = await commit("head 2")
    await gitIn(dir, ["checkout", "-q", "main"])
    await commit("c")
    // main merges `old` too: two boundary commits (b and old's tip), one merge base.
    await gitIn(dir, ["merge", "-q", "--no-edit", "old"])
    const main = await commit("d")
    await gitIn(dir, ["checkout", "-q", "--orphan", "alone"])
    const alone = await commit("alone")
    const cases: Array<[string, string]> = [
      [main, head],
      [head, main],
      [main, b],
      [b, main],
      [main, main],
      [main, alone]
    ]
    for (const [base, tip] of cases) {
      const got = await Effect.runPromise(Merge.compare(repo, base, tip))
      const expected = await gitIn(dir, ["merge-base", base, tip]).catch(() => undefined)
      const counts = (await gitIn(dir, ["rev-list", "--left-right", "--count", `${base}...${tip}`])).split(/\s+/)
      expect([got.mergeBase._tag === "Some" ? got.mergeBase.value : undefined, got.behind, got.ahead]).toEqual([
        expected,
        Number(counts[0]),
        Number(counts[1])
      ])
    }
  })
})

describe("the merge base and counts of a check after its base moved (Merge.compareSince)", () => {
  it("are compare's whenever it answers, and it leaves to compare a force push, a head the push reaches, and several merge bases", {
    timeout: 120_000
  }, async () => {
    const dir = join(work, "since")
    await gitIn(work, ["init", "-q", "-b", "main", dir])
    const repo = join(dir, ".git")
    const commit = async (message: string) => {
      await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", message])
      return gitIn(dir, ["rev-parse", "HEAD"])
    }
    const at = (ref: string) => gitIn(dir, ["checkout", "-q", ref])
    const branch = (name: string, from: string) => gitIn(dir, ["checkout", "-q", "-b", name, from])
    const merge = async (ref: string) => {
      await gitIn(dir, ["merge", "-q", "--no-ff", "--no-edit", ref])
      return gitIn(dir, ["rev-parse", "HEAD"])
    }
    const a = await commit("a")
    const b = await commit("b")
    const c = await commit("c") // the base as checked
    await branch("topic", b)
    await commit("topic 1")
    const topic = await commit("topic 2") // the head: two commits on b
    await branch("later", b)
    const early = await commit("later 1") // pushed to the base below, under `later`'s head
    const later = await commit("later 2")
    await branch("side", a)
    const side = await commit("side") // an older branch the base merges
    await at("main")
    const d = await commit("d")
    const e = await commit("e") // c..e: two commits pushed
    await branch("gotTopic", e)
    const withTopic = await merge(topic) // the head itself pushed
    await branch("gotEarly", e)
    const withEarly = await merge(early) // an ancestor of `later` pushed
    await branch("gotSide", e)
    const withSide = await merge(side)
    await branch("forced", b)
    const forced = await commit("forced") // c is not in it
    // Criss-cross: x and y each merge the other's parent; their merge bases are two.
    await branch("x", c)
    const x1 = await commit("x 1")
    await branch("y", c)
    const y1 = await commit("y 1")
    const y2 = await merge(x1)
    await at("x")
    const x2 = await merge(y1)
    await at("x")
    const x3 = await commit("x 3")

    const pool = new Readers.BatchPool(2)
    try {
      const compared = async (base: string, head: string) => {
        const got = await Effect.runPromise(Merge.compare(repo, base, head))
        return { mergeBase: Option.getOrElse(got.mergeBase, () => base), ahead: got.ahead, behind: got.behind }
      }
      const since = async (earlierBase: string, base: string, head: string) => {
        const earlier = { base: earlierBase, head, ...(await compared(earlierBase, head)) }
        const got = await Effect.runPromise(Merge.compareSince(pool, repo, earlier, base, head))
        return Option.getOrUndefined(got)
      }
      // Answered without git: the base moved forward past commits the head does not reach.
      for (const [earlier, base, head] of [
        [c, e, topic],
        [c, d, topic],
        [d, e, topic],
        [c, e, later],
        [c, e, b], // the head is in the base already: it stays the merge base
        [c, c, topic]
      ] as const) {
        const got = await since(earlier, base, head)
        expect(got, `${earlier}..${base} with ${head}`).toEqual(await compared(base, head))
      }
      expect((await since(c, e, topic))!.behind).toBe((await compared(c, topic)).behind + 2)
      // Left to `compare`: the head pushed, an ancestor of the head pushed, the push not a
      // fast-forward, an older branch merged (a walk that does not close), two merge bases.
      for (const [earlier, base, head] of [
        [c, withTopic, topic],
        [c, withEarly, later],
        [c, forced, topic],
        [c, withSide, topic],
        [y2, x3, y2],
        [x2, x3, y2]
      ] as const) {
        const got = await since(earlier, base, head)
        expect(got, `${earlier}..${base} with ${head}`).toBeUndefined()
      }
      // What compare says in those cases differs from the earlier answer (so an answer from it would be wrong).
      expect((await compared(withTopic, topic)).mergeBase).toBe(topic)
      expect((await compared(withEarly, later)).mergeBase).toBe(early)
    } finally {
      pool.close()
    }
  })
})

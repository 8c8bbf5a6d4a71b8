// What a read of pull requests costs (issue 19, "Speed": API reads under 20 ms p99 while 200
// checks run): a page of 50 and one pull request run a bounded number of statements whatever the
// page holds (labels, milestone, assignees, reviewers, a fork's head), and start no git process.
// Statements are counted by a tracer of the test's own (every statement is a span carrying its
// text); git processes by a `git` wrapper first on this process's PATH (the server runs in it).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { PullStatus, PullsRepo } from "../src/pulls/Repo.ts"
import { gitIn, recordGitProcesses } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { recordStatements } from "./support/statements.ts"

let hearth: Hearth
let work: string
let clone: string
let git: ReturnType<typeof recordGitProcesses>
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const { statements, layer: statementsLayer } = recordStatements()
/**
 * What runs beside a request whatever it is: the queue's polling (claims, waits), the users'
 * cache filling itself (its entries expire), the test's own statements (marked).
 */
const beside = (statement: string) =>
  /delivery_queue|FROM users WHERE/.test(statement) || statement.includes("/* test */")

/** The git commands started since `from` (a `logLength()`), one line each: `cwd|args`. */
const gitSince = (from: number) => git.since(from)
const logLength = () => git.length()

const url = (user: string, repo: string) => {
  const u = new URL(`${hearth.base}/${user}/${repo}.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}

const PULLS = 55 // more than the 50 a push marks in one statement

/** Waits (bounded) until no pull request is being checked. */
const settled = async () => {
  for (let i = 0; i < 1200; i++) {
    const rows = (await hearth.sql(
      (s) => s`SELECT /* test */ count(*)::int AS n FROM pull_requests WHERE status = 1`
    )) as ReadonlyArray<Record<string, any>>
    if (Number(rows[0]!.n) === 0) return
    await sleep(25)
  }
  throw new Error("the checks never ended")
}

/** The statements and git commands one GET runs, with its answer. */
const cost = async (path: string) => {
  const gitFrom = logLength()
  const from = statements.length
  const res = await request(hearth, "GET", path, basic("alice"))
  expect(res.status).toBe(200)
  const body = await json(res)
  return { body, statements: statements.slice(from).filter((t) => !beside(t)), git: gitSince(gitFrom) }
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-reads-"))
  git = recordGitProcesses(work)
  hearth = await startHearth({}, { layer: statementsLayer })
  for (const name of ["alice", "bob", "carol"]) await createUser(hearth, { username: name })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  for (const name of ["bob", "carol"])
    expect(
      (
        await request(hearth, "PUT", `/repos/alice/app/collaborators/${name}`, basic("alice"), {
          permission: "write"
        })
      ).status
    ).toBe(204)
  // A fork of bob's: some heads are in another repository.
  expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("bob"), {})).status).toBe(202)
  const labels: Array<number> = []
  for (const name of ["bug", "feature"]) {
    const res = await request(hearth, "POST", "/repos/alice/app/labels", basic("alice"), { name, color: "#ff0000" })
    labels.push((await json(res)).id)
  }
  const milestone = (
    await json(await request(hearth, "POST", "/repos/alice/app/milestones", basic("alice"), { title: "v1" }))
  ).id

  clone = join(work, "app")
  await gitIn(work, ["clone", "-q", url("alice", "app"), clone])
  const refspecs: Array<string> = []
  const forkRefspecs: Array<string> = []
  for (let i = 0; i < PULLS; i++) {
    await gitIn(clone, ["checkout", "-q", "-b", `topic${i}`, "main"])
    writeFileSync(join(clone, `f${i}.txt`), `topic ${i}\n`)
    await gitIn(clone, ["add", `f${i}.txt`])
    await gitIn(clone, ["commit", "-q", "-m", `topic ${i}`])
    ;(i % 5 === 4 ? forkRefspecs : refspecs).push(`refs/heads/topic${i}:refs/heads/topic${i}`)
  }
  await gitIn(clone, ["push", "-q", url("alice", "app"), ...refspecs])
  await gitIn(clone, ["push", "-q", url("bob", "app"), ...forkRefspecs])
  for (let i = 0; i < PULLS; i++) {
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic(i % 5 === 4 ? "bob" : "alice"), {
      head: i % 5 === 4 ? `bob:topic${i}` : `topic${i}`,
      base: "main",
      title: `topic ${i}`,
      labels: i % 2 === 0 ? labels : [labels[0]],
      milestone: i % 3 === 0 ? milestone : undefined,
      assignees: i % 2 === 0 ? ["bob", "carol"] : ["carol"]
    })
    expect(res.status).toBe(201)
    const number = (await json(res)).number
    if (i % 4 === 0)
      await request(hearth, "POST", `/repos/alice/app/pulls/${number}/requested_reviewers`, basic("alice"), {
        reviewers: i % 8 === 0 ? ["bob", "carol"] : ["carol"]
      })
  }
  await settled()
}, 240_000)
afterAll(async () => {
  await hearth?.close()
  git?.stop()
  rmSync(work, { recursive: true, force: true })
})

describe("reading pull requests", () => {
  it("a page of 50 runs 9 statements (as a page of 5 does) and starts no git process", async () => {
    await cost("/repos/alice/app/pulls?state=open&limit=50")
    const page = await cost("/repos/alice/app/pulls?state=open&limit=50")
    expect(page.body).toHaveLength(50)
    // Session 32: 16 statements (the issues and the count apart, three for the reviews) and a
    // `git for-each-ref` per repository (2 here: the fork's heads); session 33: 12 (labels,
    // assignees, milestones, attachments apart); now 9.
    expect(page.git).toEqual([])
    expect(page.statements.length, page.statements.join("\n")).toBeLessThanOrEqual(9)
    const small = await cost("/repos/alice/app/pulls?state=open&limit=5")
    expect(small.body).toHaveLength(5)
    expect(small.statements.length).toBe(page.statements.length)
    const bob = page.body.find((p: any) => p.head.repo?.owner?.login === "bob")
    expect(bob.head.repo.full_name).toBe("bob/app")
    expect(page.body.every((p: any) => p.labels.length >= 1 && p.assignees.length >= 1)).toBe(true)
    expect(page.body.some((p: any) => p.requested_reviewers.length === 2)).toBe(true)
    expect(page.body.some((p: any) => p.milestone?.title === "v1")).toBe(true)
  })

  it("one pull request runs 9 statements and starts no git process", async () => {
    await cost("/repos/alice/app/pulls/5")
    const one = await cost("/repos/alice/app/pulls/5")
    expect(one.body.head.repo.full_name).toBe("bob/app")
    expect(one.git).toEqual([])
    // Session 32: 14 statements and 2 git processes; session 33: 11 (labels, assignees,
    // attachments apart); now 9.
    expect(one.statements.length, one.statements.join("\n")).toBeLessThanOrEqual(9)
  })

  it("the tips are git's own, loose or packed, and a deleted head branch shows refs/pull/{n}/head", async () => {
    const bare = join(hearth.settings.repository.ROOT, "alice", "app.git")
    const fork = join(hearth.settings.repository.ROOT, "bob", "app.git")
    const tips = async (dir: string) =>
      new Map(
        (await gitIn(dir, ["for-each-ref", "--format=%(refname) %(objectname)"]))
          .split("\n")
          .filter(Boolean)
          .map((l) => l.split(" ") as [string, string])
      )
    const expectGits = async () => {
      const [ours, theirs] = [await tips(bare), await tips(fork)]
      const from = logLength()
      const page = await json(
        await request(hearth, "GET", "/repos/alice/app/pulls?state=open&limit=50", basic("alice"))
      )
      expect(gitSince(from)).toEqual([])
      for (const p of page) {
        expect(p.base.sha).toBe(ours.get("refs/heads/main"))
        const heads = p.head.repo?.full_name === "bob/app" ? theirs : ours
        expect(p.head.sha).toBe(heads.get(`refs/heads/${p.head.ref}`) ?? ours.get(`refs/pull/${p.number}/head`))
      }
      return page
    }
    await expectGits()
    // Every ref packed (`git gc` does this): read from packed-refs.
    await gitIn(bare, ["pack-refs", "--all"])
    await gitIn(fork, ["pack-refs", "--all"])
    await expectGits()
    // A head branch moved (loose again, over its packed line) and one deleted.
    await gitIn(clone, ["checkout", "-q", "topic52"])
    writeFileSync(join(clone, "more.txt"), "more\n")
    await gitIn(clone, ["add", "more.txt"])
    await gitIn(clone, ["commit", "-q", "-m", "more"])
    await gitIn(clone, ["push", "-q", url("alice", "app"), "HEAD:refs/heads/topic52", ":refs/heads/topic53"])
    await gitIn(clone, ["checkout", "-q", "main"])
    await settled()
    const page = await expectGits()
    expect(page.find((p: any) => p.head.ref === "topic52")?.head.sha).toBe(await gitIn(clone, ["rev-parse", "topic52"]))
    // The deleted branch's pull request was closed (Forgejo): not on the open page any more.
    expect(page.some((p: any) => p.head.ref === "topic53")).toBe(false)
  })
})

describe("checks after a push to the base", () => {
  it("run under 4 statements and one git process each, share the statements storing their results, and every pull request is checked against the new tip", async () => {
    await gitIn(clone, ["checkout", "-q", "main"])
    writeFileSync(join(clone, "base.txt"), "base\n")
    await gitIn(clone, ["add", "base.txt"])
    await gitIn(clone, ["commit", "-q", "-m", "base"])
    const tip = await gitIn(clone, ["rev-parse", "HEAD"])
    const from = statements.length
    const gitFrom = logLength()
    await gitIn(clone, ["push", "-q", url("alice", "app"), "HEAD:refs/heads/main"])
    let checked = 0
    for (let i = 0; ; i++) {
      const rows = (await hearth.sql(
        (s) => s`SELECT /* test */ p.checked_base_sha, p.status FROM pull_requests p JOIN issues i ON i.id = p.issue_id
          WHERE NOT i.is_closed AND NOT p.has_merged`
      )) as ReadonlyArray<Record<string, any>>
      if (rows.every((r) => r.checked_base_sha === tip && Number(r.status) !== 1)) {
        checked = rows.length
        break
      }
      if (i > 1200) throw new Error("the checks never ended")
      await sleep(25)
    }
    const open = await json(await request(hearth, "GET", "/repos/alice/app/pulls?state=open&limit=50", basic("alice")))
    expect(open.every((p: any) => p.mergeable === true && p.base.sha === tip)).toBe(true)
    // main: ~6 a check (the queue's claim, the pull request, its base repository, the result,
    // the queue row done); now the claims and the reads are shared by 10–25 checks. The push's
    // own statements are counted in too.
    const ran = statements.slice(from).filter((t) => !t.includes("/* test */"))
    expect(checked).toBeGreaterThan(50) // one was closed above
    expect(ran.length / checked, ran.join("\n")).toBeLessThan(4)
    // The results of checks that end within 50 ms of each other are stored by one statement (a
    // quiet machine: 19 for 50; a busy one, where checks end further apart, fewer share).
    const saves = ran.filter((t) => /^UPDATE pull_requests p? ?SET status = (v\.status|\$1, merge_base)/.test(t))
    expect(saves.length).toBeGreaterThan(0)
    expect(saves.length).toBeLessThan(checked)
    // The base moved forward past commits no head reaches: each check's merge base and counts
    // follow from its last check's, read through the long-lived reader; `merge-tree` is its one
    // process (main: a `rev-list --left-right --boundary` each besides).
    const started = gitSince(gitFrom).map((c) => c.slice(c.indexOf("|") + 1))
    expect(started.filter((c) => c.startsWith("rev-list") || c.startsWith("merge-base"))).toEqual([])
    expect(started.filter((c) => c.startsWith("merge-tree")).length).toBe(checked)
    // The push marked them in slices of 50 (one statement of every row held the embedded
    // database, and with it the server's thread, for 5–9 ms with 200), and each slice was checked.
    expect(ran.filter((t) => /^UPDATE pull_requests SET status = \$1\s+WHERE id = ANY/.test(t))).toHaveLength(
      Math.ceil(checked / 50)
    )
  })
})

describe("checks' results stored in one statement (PullsRepo.saveChecks)", () => {
  it("of two results for one pull request the later counts; none is stored for another head", async () => {
    const rows = (await hearth.sql(
      (s) => s`SELECT /* test */ p.id, p.head_sha, p.merge_base, p.checked_base_sha FROM pull_requests p
        JOIN issues i ON i.id = p.issue_id WHERE NOT i.is_closed AND NOT p.has_merged ORDER BY p.id LIMIT 3`
    )) as ReadonlyArray<Record<string, any>>
    const [one, two, three] = rows.map((r) => ({ id: Number(r.id), headSha: String(r.head_sha) }))
    const result = (headSha: string, status: PullStatus, behind: number) => ({
      status,
      mergeBase: String(rows[0]!.merge_base),
      conflictedFiles: status === PullStatus.conflict ? ["f.txt"] : [],
      commitsAhead: 1,
      commitsBehind: behind,
      baseSha: String(rows[0]!.checked_base_sha),
      headSha
    })
    const stored = await hearth.run(
      Effect.gen(function* () {
        const pulls = yield* PullsRepo
        return yield* pulls.saveChecks([
          { id: one!.id, result: result(one!.headSha, PullStatus.conflict, 7) },
          { id: two!.id, result: result(two!.headSha, PullStatus.mergeable, 8) },
          { id: one!.id, result: result(one!.headSha, PullStatus.mergeable, 9) },
          { id: three!.id, result: result("0".repeat(40), PullStatus.conflict, 10) }
        ])
      })
    )
    expect(stored).toEqual([false, true, true, false])
    const after = (await hearth.sql(
      (s) => s`SELECT /* test */ id, status, commits_behind, conflicted_files FROM pull_requests
        WHERE id IN ${s.in([one!.id, two!.id, three!.id])} ORDER BY id`
    )) as ReadonlyArray<Record<string, any>>
    expect(after.map((r) => [Number(r.status), Number(r.commits_behind), r.conflicted_files])).toEqual([
      [PullStatus.mergeable, 9, "[]"],
      [PullStatus.mergeable, 8, "[]"],
      [PullStatus.mergeable, Number(after[2]!.commits_behind), "[]"]
    ])
    expect(Number(after[2]!.commits_behind)).not.toBe(10)
  })
})

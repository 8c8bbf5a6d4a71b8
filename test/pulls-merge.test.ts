// Merging pull requests (issue 19 item 4; CONTRACT-PULLS §8, §10) with the real git client: every
// style of MergePullRequestOption and the graph, messages and identities it leaves, the refusals
// (conflicts, diverged fast-forward, stale head_commit_id, merged, closed, work in progress,
// style switched off, no right to merge), the compare-and-swap of the base branch, deleting the
// head branch after the merge, and updating a pull request's branch.
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let work: string
let clone: string

const bare = () => join(hearth.settings.repository.ROOT, "alice", "app.git")
const inBare = (args: ReadonlyArray<string>) => gitIn(bare(), args, { GIT_DIR: bare() })
const git = (args: ReadonlyArray<string>) => gitIn(clone, args)
const url = (user: string) => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}

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

/** A commit straight on main, pushed; its sha. */
const onMain = (file: string, text: string) => branch("main", file, text)

const openPull = async (head: string, title = `Pull ${head}`, auth = basic("alice")) => {
  const res = await request(hearth, "POST", "/repos/alice/app/pulls", auth, { head, base: "main", title })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)).number as number
}

const merge = (index: number, body: Record<string, unknown>, auth = basic("alice")) =>
  request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, auth, body)

const show = (rev: string, format: string) => inBare(["log", "-1", `--format=${format}`, rev])
const mainSha = () => inBare(["rev-parse", "refs/heads/main"])

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-pulls-merge-"))
  await createUser(hearth, { username: "alice", fullName: "Alice Liddell" })
  await Promise.all(["carol", "dave"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })).status).toBe(
    201
  )
  for (const [user, permission] of [
    ["carol", "write"],
    ["dave", "read"]
  ]) {
    const res = await request(hearth, "PUT", `/repos/alice/app/collaborators/${user}`, basic("alice"), { permission })
    expect(res.status).toBe(204)
  }
  clone = join(work, "clone")
  await gitIn(work, ["clone", "-q", url("alice"), clone])
})
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("POST /pulls/{index}/merge: the styles", () => {
  it("merge: a merge commit of base and head by the merger, with Forgejo's default title", async () => {
    const head = await branch("m1", "m1.txt", "one\n")
    const index = await openPull("m1", "Merge style")
    const before = await mainSha()
    const res = await merge(index, { Do: "merge" })
    expect(res.status, await res.clone().text()).toBe(200)
    expect(await res.text()).toBe("")
    const tip = await mainSha()
    expect(await show(tip, "%P")).toBe(`${before} ${head}`)
    expect(await show(tip, "%B")).toBe(`Merge pull request 'Merge style' (#${index}) from m1 into main`)
    expect(await show(tip, "%an <%ae>|%cn <%ce>")).toBe(
      "Alice Liddell <alice@example.com>|Alice Liddell <alice@example.com>"
    )
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, basic("alice")))
    expect(pull).toMatchObject({ merged: true, state: "closed", merge_commit_sha: tip, merged_by: { login: "alice" } })
    expect(pull.merged_at).not.toBeNull()
    expect((await request(hearth, "GET", `/repos/alice/app/pulls/${index}/merge`, undefined)).status).toBe(204)
    const byCommit = await request(hearth, "GET", `/repos/alice/app/commits/${tip}/pull`, undefined)
    expect(byCommit.status).toBe(200)
    expect((await json(byCommit)).number).toBe(index)
    expect((await request(hearth, "GET", `/repos/alice/app/commits/${head}/pull`, undefined)).status).toBe(404)
    const issue = await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}`, undefined))
    expect(issue.pull_request).toMatchObject({ merged: true })
    const timeline = await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, undefined))
    expect(timeline.map((c: { type: string }) => c.type)).toContain("merge_pull")
    expect(timeline.map((c: { type: string }) => c.type)).not.toContain("close")
  })

  it("merge with a title and message of the merger's own (keys matched as Go matches them)", async () => {
    await branch("m2", "m2.txt", "two\n")
    const index = await openPull("m2")
    const res = await merge(index, { do: "merge", MergeTitleField: " My title ", MergeMessageField: "Body text" })
    expect(res.status).toBe(200)
    expect(await show(await mainSha(), "%B")).toBe("My title\n\nBody text")
  })

  it("squash: one commit on the base, authored by the poster, committed by the merger", async () => {
    await branch("s1", "s1.txt", "squash\n")
    await git(["checkout", "-q", "s1"])
    writeFileSync(join(clone, "s1b.txt"), "more\n")
    await git(["add", "s1b.txt"])
    await git(["commit", "-q", "-m", "second"])
    await git(["push", "-q", "origin", "s1:s1"])
    const index = await openPull("s1", "Squash me", basic("carol"))
    const before = await mainSha()
    expect((await merge(index, { Do: "squash" })).status).toBe(200)
    const tip = await mainSha()
    expect(await show(tip, "%P")).toBe(before)
    expect(await show(tip, "%B")).toBe(`Squash me (#${index})`)
    expect(await show(tip, "%an|%cn")).toBe("carol|Alice Liddell")
    expect(await inBare(["ls-tree", "--name-only", tip])).toContain("s1b.txt")
  })

  it("rebase: the head's commits replayed on the base, keeping their authors, committed by the merger", async () => {
    await branch("r1", "r1.txt", "rebase\n")
    const index = await openPull("r1")
    await onMain("main-r1.txt", "moved on\n")
    const before = await mainSha()
    expect((await merge(index, { Do: "rebase", MergeTitleField: "ignored" })).status).toBe(200)
    const tip = await mainSha()
    expect(await show(tip, "%P")).toBe(before)
    expect(await show(tip, "%B")).toBe("r1: r1.txt")
    expect(await show(tip, "%an <%ae>|%cn")).toBe("T <t@example.com>|Alice Liddell")
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, undefined))
    expect(pull.merge_commit_sha).toBe(tip)
  })

  it("rebase-merge: replayed, then a merge commit of the base and the replayed head", async () => {
    await branch("rm1", "rm1.txt", "rebase-merge\n")
    const index = await openPull("rm1", "RM")
    await onMain("main-rm1.txt", "moved on\n")
    const before = await mainSha()
    expect((await merge(index, { Do: "rebase-merge" })).status).toBe(200)
    const tip = await mainSha()
    const [first, second] = (await show(tip, "%P")).split(" ")
    expect(first).toBe(before)
    expect(await show(second!, "%P")).toBe(before)
    expect(await show(second!, "%s|%cn")).toBe("rm1: rm1.txt|Alice Liddell")
    expect(await show(tip, "%s")).toBe(`Merge pull request 'RM' (#${index}) from rm1 into main`)
  })

  it("fast-forward-only: the base moves to the head; a diverged base is refused with 409", async () => {
    const head = await branch("ff1", "ff1.txt", "ff\n")
    const index = await openPull("ff1")
    expect((await merge(index, { Do: "fast-forward-only" })).status).toBe(200)
    expect(await mainSha()).toBe(head)

    await branch("ff2", "ff2.txt", "ff\n")
    const diverged = await openPull("ff2")
    await onMain("main-ff2.txt", "moved on\n")
    const before = await mainSha()
    const res = await merge(diverged, { Do: "fast-forward-only" })
    expect(res.status).toBe(409)
    expect((await json(res)).message).toMatch(/fast-forward-only merge is not possible/)
    expect(await mainSha()).toBe(before)
  })

  it("manually-merged: only where the repository allows it; records the given commit and its author date", async () => {
    const head = await branch("man1", "man1.txt", "manual\n")
    const index = await openPull("man1")
    const refused = await merge(index, { Do: "manually-merged", MergeCommitID: head })
    expect(refused.status).toBe(405)
    expect((await json(refused)).message).toBe("manually-merged is not an allowed merge style for this repository")
    expect(
      (await request(hearth, "PATCH", "/repos/alice/app", basic("alice"), { allow_manual_merge: true })).status
    ).toBe(200)
    // Not on the base branch yet: 409.
    expect((await merge(index, { Do: "manually-merged", MergeCommitID: head })).status).toBe(409)
    await git(["checkout", "-q", "main"])
    await git(["pull", "-q", "origin", "main"])
    await git(["merge", "-q", "--no-edit", "man1"])
    await git(["push", "-q", "origin", "main:main"])
    const res = await merge(index, { Do: "manually-merged", MergeCommitID: head })
    expect(res.status, await res.clone().text()).toBe(200)
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, undefined))
    expect(pull).toMatchObject({ merged: true, merge_commit_sha: head, state: "closed" })
    const authored = Number(await show(head, "%at")) * 1000
    expect(new Date(pull.merged_at).getTime()).toBe(authored)
  })
})

describe("POST /pulls/{index}/merge: refusals", () => {
  it("refuses a conflicting pull request with 409 naming the files; mergeable is false", async () => {
    await onMain("conflict.txt", "base side\n")
    await branch("c1", "conflict.txt", "head side\n", "origin/main~1")
    const index = await openPull("c1")
    const before = await mainSha()
    const res = await merge(index, { Do: "merge" })
    expect(res.status).toBe(409)
    expect((await json(res)).message).toMatch(/merge conflict in conflict\.txt/)
    expect(await mainSha()).toBe(before)
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, undefined))
    expect(pull.mergeable).toBe(false)
    expect((await merge(index, { Do: "squash" })).status).toBe(409)
    expect((await merge(index, { Do: "rebase" })).status).toBe(409)
  })

  it("finds nothing to merge in a head the base already contains: mergeable, but refused (405)", async () => {
    await git(["fetch", "-q", "origin"])
    await git(["push", "-q", "origin", "origin/main:refs/heads/behind"])
    await onMain("main-behind.txt", "ahead\n")
    const index = await openPull("behind")
    const res = await merge(index, { Do: "merge" })
    expect(res.status).toBe(405)
    expect((await json(res)).message).toMatch(/nothing to merge/)
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, undefined))
    expect(pull).toMatchObject({ mergeable: true, merged: false, additions: 0, changed_files: 0 })
  })

  it("checks the request: Do required and one of the styles (422)", async () => {
    await branch("bad1", "bad1.txt", "x\n")
    const index = await openPull("bad1")
    const missing = await merge(index, {})
    expect(missing.status).toBe(422)
    expect((await json(missing)).message).toBe("[Do]: Required")
    const unknown = await merge(index, { Do: "octopus" })
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).message).toBe("[Do]: In")
    expect((await merge(999, { Do: "merge" })).status).toBe(404)
  })

  it("refuses a stale head_commit_id with 409 and merges with the current one", async () => {
    const first = await branch("hc1", "hc1.txt", "one\n")
    const index = await openPull("hc1")
    await git(["checkout", "-q", "hc1"])
    writeFileSync(join(clone, "hc1.txt"), "two\n")
    await git(["commit", "-q", "-am", "again"])
    await git(["push", "-q", "origin", "hc1:hc1"])
    const current = await git(["rev-parse", "HEAD"])
    const before = await mainSha()
    const stale = await merge(index, { Do: "merge", head_commit_id: first })
    expect(stale.status).toBe(409)
    expect((await json(stale)).message).toBe("head out of date")
    expect(await mainSha()).toBe(before)
    expect((await merge(index, { Do: "merge", head_commit_id: current })).status).toBe(200)
    expect((await show(await mainSha(), "%P")).split(" ")[1]).toBe(current)
  })

  it("refuses who may not merge (405), anonymous callers (401), work in progress (405) and switched-off styles (405)", async () => {
    await branch("p1", "p1.txt", "x\n")
    const index = await openPull("p1", "WIP: not yet")
    const reader = await merge(index, { Do: "merge" }, basic("dave"))
    expect(reader.status).toBe(405)
    expect((await json(reader)).message).toBe("User not allowed to merge PR")
    expect(
      (await request(hearth, "POST", `/repos/alice/app/pulls/${index}/merge`, undefined, { Do: "merge" })).status
    ).toBe(401)
    const wip = await merge(index, { Do: "merge" }, basic("carol"))
    expect(wip.status).toBe(405)
    expect((await json(wip)).message).toBe("Work in progress PRs cannot be merged")
    await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("alice"), { title: "Ready" })
    expect(
      (await request(hearth, "PATCH", "/repos/alice/app", basic("alice"), { allow_squash_merge: false })).status
    ).toBe(200)
    const off = await merge(index, { Do: "squash" }, basic("carol"))
    expect(off.status).toBe(405)
    expect((await json(off)).message).toBe("squash is not an allowed merge style for this repository")
    expect((await merge(index, { Do: "merge" }, basic("carol"))).status).toBe(200)
  })

  it("refuses an already merged (405) or closed (405) pull request with a message", async () => {
    const merged = await json(await request(hearth, "GET", "/repos/alice/app/pulls/1", undefined))
    expect(merged.merged).toBe(true)
    const again = await merge(1, { Do: "merge" })
    expect(again.status).toBe(405)
    expect((await json(again)).message).toMatch(/already been merged/)
    expect((await request(hearth, "PATCH", "/repos/alice/app/pulls/1", basic("alice"), { state: "open" })).status).toBe(
      412
    )
    // Nor through the issue route: a merged pull request stays closed.
    const viaIssue = await request(hearth, "PATCH", "/repos/alice/app/issues/1", basic("alice"), { state: "open" })
    expect(viaIssue.status).toBe(412)
    expect((await json(viaIssue)).message).toBe("cannot change state of this pull request, it was already merged")
    expect((await json(await request(hearth, "GET", "/repos/alice/app/pulls/1", undefined))).state).toBe("closed")
    await branch("cl1", "cl1.txt", "x\n")
    const index = await openPull("cl1")
    await request(hearth, "PATCH", `/repos/alice/app/pulls/${index}`, basic("alice"), { state: "closed" })
    const closed = await merge(index, { Do: "merge" })
    expect(closed.status).toBe(405)
    expect((await json(closed)).message).toMatch(/closed/)
  })
})

describe("the base branch moves by compare-and-swap", () => {
  it("fails the merge with 409 while another writer holds the base branch, and changes nothing", async () => {
    await branch("cas1", "cas1.txt", "x\n")
    const index = await openPull("cas1")
    const before = await mainSha()
    // What a push in progress holds: git's lock on the ref (receive-pack takes it to update main).
    const lock = join(bare(), "refs", "heads", "main.lock")
    writeFileSync(lock, `${before}\n`)
    try {
      const res = await merge(index, { Do: "merge" })
      expect(res.status).toBe(409)
      expect((await json(res)).message).toMatch(/moved while the pull request was being merged/)
    } finally {
      unlinkSync(lock)
    }
    expect(await mainSha()).toBe(before)
    const pull = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${index}`, undefined))
    expect(pull.merged).toBe(false)
    expect((await merge(index, { Do: "merge" })).status).toBe(200)
  })

  it("never loses a commit the base got after the check: the merge is made on top of it", async () => {
    await branch("cas2", "cas2.txt", "x\n")
    const index = await openPull("cas2")
    // A commit on main written behind Hearth's back (no event): the stored check is now stale.
    const tree = await inBare(["rev-parse", "refs/heads/main^{tree}"])
    const before = await mainSha()
    const sneaked = await gitIn(bare(), ["commit-tree", "-p", before, "-m", "sneaked in", tree], { GIT_DIR: bare() })
    await inBare(["update-ref", "refs/heads/main", sneaked, before])
    expect((await merge(index, { Do: "merge" })).status).toBe(200)
    expect((await show(await mainSha(), "%P")).split(" ")[0]).toBe(sneaked)
  })
})

describe("delete_branch_after_merge", () => {
  it("deletes the head branch after the merge, with a delete_branch entry", async () => {
    await branch("del1", "del1.txt", "x\n")
    const index = await openPull("del1")
    expect((await merge(index, { Do: "merge", delete_branch_after_merge: true })).status).toBe(200)
    expect(await inBare(["for-each-ref", "refs/heads/del1"])).toBe("")
    // refs/pull/N/head stays.
    expect(await inBare(["rev-parse", `refs/pull/${index}/head`])).toMatch(/^[0-9a-f]{40}$/)
    const timeline = await json(await request(hearth, "GET", `/repos/alice/app/issues/${index}/timeline`, undefined))
    expect(timeline.find((c: { type: string }) => c.type === "delete_branch")).toMatchObject({ old_ref: "del1" })
  })

  it("keeps a head branch another open pull request still uses", async () => {
    await branch("del2", "del2.txt", "x\n")
    await branch("other-base", "ob.txt", "x\n")
    const index = await openPull("del2")
    const res = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "del2",
      base: "other-base",
      title: "same head"
    })
    expect(res.status).toBe(201)
    expect((await merge(index, { Do: "merge", delete_branch_after_merge: true })).status).toBe(200)
    expect(await inBare(["for-each-ref", "--format=%(refname)", "refs/heads/del2"])).toBe("refs/heads/del2")
  })
})

describe("POST /pulls/{index}/update", () => {
  it("merges the base into the head branch (merge style), pushed to the head", async () => {
    const head = await branch("u1", "u1.txt", "x\n")
    const index = await openPull("u1")
    await onMain("main-u1.txt", "moved on\n")
    const base = await mainSha()
    const res = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/update`, basic("carol"))
    expect(res.status, await res.clone().text()).toBe(200)
    const tip = await inBare(["rev-parse", "refs/heads/u1"])
    expect(await show(tip, "%P")).toBe(`${head} ${base}`)
    expect(await show(tip, "%B")).toBe("Merge branch 'main' into u1")
    expect(await inBare(["rev-parse", `refs/pull/${index}/head`])).toBe(tip)
    const again = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/update`, basic("carol"))
    expect(again.status).toBe(422)
    expect((await request(hearth, "POST", `/repos/alice/app/pulls/${index}/update`, basic("dave"))).status).toBe(403)
  })

  it("rebases the head branch on the base (rebase style)", async () => {
    await branch("u2", "u2.txt", "x\n")
    const index = await openPull("u2")
    await onMain("main-u2.txt", "moved on\n")
    const base = await mainSha()
    const res = await request(hearth, "POST", `/repos/alice/app/pulls/${index}/update?style=rebase`, basic("alice"))
    expect(res.status).toBe(200)
    const tip = await inBare(["rev-parse", "refs/heads/u2"])
    expect(await show(tip, "%P")).toBe(base)
    expect(await show(tip, "%s")).toBe("u2: u2.txt")
  })
})

describe("POST /pulls/{index}/merge: the base branch's protection", () => {
  it("needs the merge whitelist and the required status contexts; a success status lets it through", async () => {
    await branch("stable", "stable.txt", "s\n")
    const rule = await request(hearth, "POST", "/repos/alice/app/branch_protections", basic("alice"), {
      rule_name: "stable",
      enable_merge_whitelist: true,
      merge_whitelist_usernames: ["alice"],
      enable_status_check: true,
      status_check_contexts: ["ci/*"]
    })
    expect(rule.status).toBe(201)
    const head = await branch("guarded", "guarded.txt", "g\n", "origin/stable")
    const opened = await request(hearth, "POST", "/repos/alice/app/pulls", basic("alice"), {
      head: "guarded",
      base: "stable",
      title: "Guarded"
    })
    expect(opened.status).toBe(201)
    const index = (await json(opened)).number
    const stable = () => inBare(["rev-parse", "refs/heads/stable"])
    const before = await stable()
    // A writer outside the merge whitelist may not merge at all.
    const writer = await merge(index, { Do: "merge" }, basic("carol"))
    expect(writer.status).toBe(405)
    expect((await json(writer)).message).toBe("User not allowed to merge PR")
    // The owner is whitelisted, but no ci/* status has succeeded on the head yet.
    const waiting = await merge(index, { Do: "merge" })
    expect(waiting.status).toBe(405)
    expect((await json(waiting)).message).toMatch(/^not allowed to merge \[reason: /)
    expect(await stable()).toBe(before)
    const status = await request(hearth, "POST", `/repos/alice/app/statuses/${head}`, basic("alice"), {
      state: "success",
      context: "ci/build"
    })
    expect(status.status).toBe(201)
    expect((await merge(index, { Do: "merge" })).status).toBe(200)
    expect(await stable()).not.toBe(before)
  })
})

describe("GET /pulls after merges", () => {
  it("shows each pull request, merged or open, as its own GET does (times, merge, counts)", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/pulls?state=all&limit=50", basic("alice"))
    expect(res.status).toBe(200)
    const page: Array<any> = await json(res)
    expect(page.length).toBe(Number(res.headers.get("x-total-count")))
    expect(page.some((p) => p.merged && p.merged_at !== null && p.closed_at !== null)).toBe(true)
    expect(page.some((p) => p.state === "open")).toBe(true)
    for (const listed of page) {
      const one = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${listed.number}`, basic("alice")))
      expect(listed, `#${listed.number}`).toEqual(one)
    }
    // Newest first (Forgejo's default order).
    const created = page.map((p) => Date.parse(p.created_at))
    expect(created).toEqual([...created].sort((a, b) => b - a))
  })
})

// Pull requests, part 1 (issue 19 items 1, 3, 10; CONTRACT-PULLS §1–§7): create from a branch of
// the same repository or of a fork, list, get, get by base/head, edit, `.diff`/`.patch`, commits
// and files, the mergeability job, the issue routes' view of pull requests, and who may do what.
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth

/**
 * Against Forgejo's swagger: `merge_commit_sha` is a Go `*string`, null until merged (as Forgejo
 * answers), which the swagger types as a plain string.
 */
const expectPulls = (body: any, name: "PullRequest" | "PullRequest[]") => {
  const fill = (p: any) => ({ ...p, merge_commit_sha: p.merge_commit_sha ?? "" })
  expectSwagger(Array.isArray(body) ? body.map(fill) : fill(body), name)
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const dirOf = (owner: string, name: string) => join(hearth.settings.repository.ROOT, owner, `${name}.git`)
const revParse = (owner: string, name: string, ref: string) =>
  gitIn(dirOf(owner, name), ["rev-parse", "--verify", "--quiet", ref], { GIT_DIR: dirOf(owner, name) }).catch(
    () => undefined
  )

/** A commit on `branch` (made from `from` when it does not exist yet) through the contents API. */
const commitFile = async (owner: string, repo: string, path: string, text: string, branch: string, from?: string) => {
  const res = await request(hearth, "POST", `/repos/${owner}/${repo}/contents/${path}`, basic(owner), {
    content: Buffer.from(text).toString("base64"),
    ...(from === undefined ? { branch } : { branch: from, new_branch: branch }),
    message: `add ${path}`
  })
  expect(res.status, await res.clone().text()).toBe(201)
}

const createPull = (owner: string, repo: string, auth: string | undefined, body: Record<string, unknown>) =>
  request(hearth, "POST", `/repos/${owner}/${repo}/pulls`, auth, body)

/** The pull request once its mergeability job has run (a bounded wait on the background job). */
const checked = async (owner: string, repo: string, index: number) => {
  for (let i = 0; i < 400; i++) {
    if ((await statusOf(owner, repo, index)) !== 1) {
      return json(await request(hearth, "GET", `/repos/${owner}/${repo}/pulls/${index}`, basic(owner)))
    }
    await sleep(25)
  }
  throw new Error(`the mergeability of ${owner}/${repo}#${index} was never computed`)
}

const statusOf = async (owner: string, repo: string, index: number): Promise<number> => {
  return hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT p.status FROM pull_requests p JOIN issues i ON i.id = p.issue_id
        JOIN repositories r ON r.id = i.repo_id JOIN users u ON u.id = r.owner_id
        WHERE u.lower_name = ${owner} AND r.lower_name = ${repo} AND i.index = ${index}`
      return Number(rows[0]?.status)
    })
  )
}

let mainSha: string

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "carol", "dave", "erin"].map((username) => createUser(hearth, { username })))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const [name, extra] of [
    ["app", {}],
    ["secret", { private: true }],
    ["nopulls", {}]
  ] as const) {
    const res = await request(hearth, "POST", "/user/repos", basic("alice"), { name, auto_init: true, ...extra })
    expect(res.status).toBe(201)
  }
  expect(
    (await request(hearth, "PATCH", "/repos/alice/nopulls", basic("alice"), { has_pull_requests: false })).status
  ).toBe(200)
  // carol writes, dave reads (collaborators); erin is a stranger.
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/carol", basic("alice"), { permission: "write" }))
      .status
  ).toBe(204)
  expect(
    (await request(hearth, "PUT", "/repos/alice/app/collaborators/dave", basic("alice"), { permission: "read" })).status
  ).toBe(204)
  await commitFile("alice", "app", "feature.txt", "feature\n", "feature", "main")
  await commitFile("alice", "app", "second.txt", "second\n", "feature", "feature")
  await commitFile("alice", "app", "other.txt", "other\n", "other", "main")
  await commitFile("alice", "app", "dev.txt", "dev\n", "dev", "main")
  await commitFile("alice", "secret", "s.txt", "s\n", "feat", "main")
  await commitFile("alice", "nopulls", "n.txt", "n\n", "feat", "main")
  mainSha = (await revParse("alice", "app", "refs/heads/main"))!
  // bob's fork, with a branch of its own.
  expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("bob"), {})).status).toBe(202)
  for (let i = 0; i < 400; i++) {
    const repo = await json(await request(hearth, "GET", "/repos/bob/app", basic("bob")))
    if (repo.empty === false) break
    await sleep(25)
  }
  await commitFile("bob", "app", "fork.txt", "from the fork\n", "bobfeat", "main")
})
afterAll(() => hearth?.close())

describe("POST /repos/{o}/{r}/pulls", () => {
  let created: any

  it("opens a pull request from a branch of the same repository (201, every member of PullRequest)", async () => {
    const res = await createPull("alice", "app", basic("alice"), {
      head: "feature",
      base: "main",
      title: "Add the feature",
      body: "Please merge"
    })
    expect(res.status).toBe(201)
    created = await json(res)
    expectPulls(created, "PullRequest")
    expect(created).toMatchObject({
      number: 1,
      title: "Add the feature",
      body: "Please merge",
      state: "open",
      draft: false,
      merged: false,
      merged_at: null,
      merge_commit_sha: null,
      merged_by: null,
      allow_maintainer_edit: false,
      labels: [],
      assignees: null,
      requested_reviewers: [],
      requested_reviewers_teams: [],
      review_comments: 0,
      flow: 0,
      merge_base: mainSha,
      additions: 2,
      deletions: 0,
      changed_files: 2,
      user: { login: "alice" }
    })
    expect(created.html_url).toBe(`${hearth.settings.server.ROOT_URL}alice/app/pulls/1`)
    expect(created.url).toBe(created.html_url)
    expect(created.diff_url).toBe(`${created.html_url}.diff`)
    expect(created.base).toMatchObject({ label: "main", ref: "main", sha: mainSha, repo: { full_name: "alice/app" } })
    const featureSha = await revParse("alice", "app", "refs/heads/feature")
    expect(created.head).toMatchObject({ label: "feature", ref: "feature", sha: featureSha })
    expect(created.head.repo_id).toBe(created.base.repo_id)
  })

  it("writes refs/pull/{n}/head in the base repository", async () => {
    expect(await revParse("alice", "app", "refs/pull/1/head")).toBe(
      await revParse("alice", "app", "refs/heads/feature")
    )
  })

  it("records the pushed commits in a pull_push timeline entry", async () => {
    const timeline = await json(await request(hearth, "GET", "/repos/alice/app/issues/1/timeline", basic("alice")))
    const push = timeline.find((c: { type: string }) => c.type === "pull_push")
    expect(push).toBeDefined()
    const body = JSON.parse(push.body)
    expect(body.is_force_push).toBe(false)
    expect(body.commit_ids).toHaveLength(2)
    expect(body.commit_ids[1]).toBe(await revParse("alice", "app", "refs/heads/feature"))
  })

  it("computes mergeability in the background job: mergeable", async () => {
    const pull = await checked("alice", "app", 1)
    expect(pull.mergeable).toBe(true)
    expect(await statusOf("alice", "app", 1)).toBe(2)
  })

  it("refuses a second open pull request for the same head and base (409)", async () => {
    const res = await createPull("alice", "app", basic("carol"), { head: "feature", base: "main", title: "again" })
    expect(res.status).toBe(409)
    expect((await json(res)).message).toMatch(/^pull request already exists for these targets \[id: \d+, issue_id: 1,/)
  })

  it("answers bad input with 4xx and creates nothing", async () => {
    const cases: Array<[Record<string, unknown>, number, string?]> = [
      [{ base: "main", title: "t" }, 422, "[Head]: Required"],
      [{ head: "feature", title: "t" }, 422, "[Base]: Required"],
      [{ head: "feature", base: "main" }, 422, "[Title]: Required"],
      [
        { head: "main", base: "main", title: "t" },
        422,
        "Invalid PullRequest: There are no changes between the head and the base"
      ],
      [{ head: "nope", base: "main", title: "t" }, 404],
      [{ head: "feature", base: "nope", title: "t" }, 404],
      [{ head: "nobody:feature", base: "main", title: "t" }, 404],
      [{ head: "a:b:c", base: "main", title: "t" }, 404],
      // erin has no fork of alice/app.
      [{ head: "erin:feature", base: "main", title: "t" }, 404],
      [{ head: "other", base: "main", title: "t", milestone: 999 }, 404]
    ]
    for (const [body, status, message] of cases) {
      const res = await createPull("alice", "app", basic("alice"), body)
      expect(res.status, JSON.stringify(body)).toBe(status)
      if (message !== undefined) expect((await json(res)).message).toBe(message)
    }
    const all = await request(hearth, "GET", "/repos/alice/app/pulls?state=all", basic("alice"))
    expect(all.headers.get("x-total-count")).toBe("1")
  })

  it("opens a pull request from a fork (`owner:branch`), fetching its commits into the base repository", async () => {
    const res = await createPull("alice", "app", basic("bob"), { head: "bob:bobfeat", base: "main", title: "From bob" })
    expect(res.status).toBe(201)
    const pull = await json(res)
    expectPulls(pull, "PullRequest")
    const forkSha = await revParse("bob", "app", "refs/heads/bobfeat")
    expect(pull.head).toMatchObject({ label: "bobfeat", ref: "bobfeat", sha: forkSha, repo: { full_name: "bob/app" } })
    expect(pull.head.repo_id).not.toBe(pull.base.repo_id)
    expect(await revParse("alice", "app", `refs/pull/${pull.number}/head`)).toBe(forkSha)
    expect((await checked("alice", "app", pull.number)).mergeable).toBe(true)
  })

  it("lets a reader open one (no write access needed) but not anonymous callers (401)", async () => {
    const res = await createPull("alice", "app", basic("dave"), { head: "other", base: "main", title: "From dave" })
    expect(res.status).toBe(201)
    expect((await createPull("alice", "app", undefined, { head: "dev", base: "main", title: "x" })).status).toBe(401)
  })

  it("answers 404 where the caller may not see the repository or the pulls unit is off", async () => {
    expect(
      (await createPull("alice", "secret", basic("erin"), { head: "feat", base: "main", title: "x" })).status
    ).toBe(404)
    expect(
      (await createPull("alice", "nopulls", basic("alice"), { head: "feat", base: "main", title: "x" })).status
    ).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/nopulls/pulls", basic("alice"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/pulls", basic("erin"))).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/secret/pulls", undefined)).status).toBe(404)
  })
})

describe("GET /repos/{o}/{r}/pulls and /pulls/{index}", () => {
  it("lists them with X-Total-Count and Link, filtered by state and poster", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/pulls?limit=1", undefined)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("3")
    expect(res.headers.get("link")).toContain('rel="next"')
    const list = await json(res)
    expectPulls(list, "PullRequest[]")
    expect(list).toHaveLength(1)
    expect(list[0].number).toBe(3) // newest first
    const byBob = await json(await request(hearth, "GET", "/repos/alice/app/pulls?poster=bob", undefined))
    expect(byBob.map((p: { number: number }) => p.number)).toEqual([2])
    expect((await request(hearth, "GET", "/repos/alice/app/pulls?poster=nobody", undefined)).status).toBe(400)
    const oldest = await json(await request(hearth, "GET", "/repos/alice/app/pulls?sort=oldest", undefined))
    expect(oldest.map((p: { number: number }) => p.number)).toEqual([1, 2, 3])
    // Each state counted apart; a page past the end is empty and still carries the total.
    const closed = await request(hearth, "GET", "/repos/alice/app/pulls?state=closed", undefined)
    expect(closed.headers.get("x-total-count")).toBe("0")
    expect(await json(closed)).toEqual([])
    const all = await request(hearth, "GET", "/repos/alice/app/pulls?state=all&limit=2&page=2", undefined)
    expect(all.headers.get("x-total-count")).toBe("3")
    expect((await json(all)).map((p: { number: number }) => p.number)).toEqual([1])
    const past = await request(hearth, "GET", "/repos/alice/app/pulls?limit=2&page=3", undefined)
    expect(past.status).toBe(200)
    expect(past.headers.get("x-total-count")).toBe("3")
    expect(await json(past)).toEqual([])
  })

  it("gets one by number (anonymous on a public repository); 404 for an unknown or non-numeric number", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/pulls/1", undefined)
    expect(res.status).toBe(200)
    expectPulls(await json(res), "PullRequest")
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/99", undefined)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/abc", undefined)).status).toBe(404)
  })

  it("gets one by base and head (`branch` and `owner:branch`)", async () => {
    const same = await request(hearth, "GET", "/repos/alice/app/pulls/main/feature", undefined)
    expect(same.status).toBe(200)
    expect((await json(same)).number).toBe(1)
    const fork = await request(hearth, "GET", "/repos/alice/app/pulls/main/bob:bobfeat", undefined)
    expect(fork.status).toBe(200)
    expect((await json(fork)).number).toBe(2)
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/main/dev", undefined)).status).toBe(404)
  })
})

describe("GET /repos/{o}/{r}/pulls/pinned", () => {
  it("lists the pinned pull requests in pin order", async () => {
    expect(await json(await request(hearth, "GET", "/repos/alice/app/pulls/pinned", undefined))).toEqual([])
    expect((await request(hearth, "POST", "/repos/alice/app/issues/2/pin", basic("alice"))).status).toBe(204)
    const pinned = await json(await request(hearth, "GET", "/repos/alice/app/pulls/pinned", undefined))
    expectPulls(pinned, "PullRequest[]")
    expect(pinned.map((p: { number: number; pin_order: number }) => [p.number, p.pin_order])).toEqual([[2, 1]])
  })
})

describe("the issue routes and pull requests", () => {
  it("shows a pull request as an issue with its `pull_request` member; type=pulls lists them", async () => {
    const issue = await json(await request(hearth, "GET", "/repos/alice/app/issues/1", undefined))
    expect(issue.pull_request).toEqual({
      merged: false,
      merged_at: null,
      draft: false,
      html_url: `${hearth.settings.server.ROOT_URL}alice/app/pulls/1`
    })
    const pulls = await request(hearth, "GET", "/repos/alice/app/issues?type=pulls&state=all", undefined)
    expect(pulls.headers.get("x-total-count")).toBe("3")
    const onlyIssues = await request(hearth, "GET", "/repos/alice/app/issues?type=issues&state=all", undefined)
    expect(onlyIssues.headers.get("x-total-count")).toBe("0")
    const search = await json(await request(hearth, "GET", "/repos/issues/search?type=pulls&state=all", basic("alice")))
    expect(search.filter((i: any) => i.repository.full_name === "alice/app")).toHaveLength(3)
  })
})

describe("PATCH /repos/{o}/{r}/pulls/{index}", () => {
  it("changes title and body (201) with the poster's or a writer's rights; others get 403", async () => {
    const res = await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("dave"), { title: "Dave's title" })
    expect(res.status).toBe(201)
    expect((await json(res)).title).toBe("Dave's title")
    const byCarol = await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("carol"), {
      body: "carol was here"
    })
    expect(byCarol.status).toBe(201)
    expect((await json(byCarol)).body).toBe("carol was here")
    expect((await request(hearth, "PATCH", "/repos/alice/app/pulls/1", basic("dave"), { title: "x" })).status).toBe(403)
    expect((await request(hearth, "PATCH", "/repos/alice/app/pulls/1", basic("erin"), { title: "x" })).status).toBe(403)
  })

  it("retargets to another base branch: re-checked, a change_target_branch entry; unknown base 404, head as base 422", async () => {
    expect((await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("alice"), { base: "nope" })).status).toBe(
      404
    )
    expect((await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("alice"), { base: "other" })).status).toBe(
      422
    )
    const res = await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("alice"), { base: "dev" })
    expect(res.status).toBe(201)
    const pull = await json(res)
    expect(pull.base.ref).toBe("dev")
    expect(pull.mergeable).toBe(true)
    expect(pull.merge_base).toBe(mainSha)
    const timeline = await json(await request(hearth, "GET", "/repos/alice/app/issues/3/timeline", basic("alice")))
    expect(timeline.find((c: { type: string }) => c.type === "change_target_branch")).toMatchObject({
      old_ref: "main",
      new_ref: "dev"
    })
  })

  it("refuses a base that would duplicate another open pull request (409) and changes nothing", async () => {
    // #1 is feature → main; moving a second pull request of `feature` onto main duplicates it.
    const made = await createPull("alice", "app", basic("alice"), { head: "feature", base: "dev", title: "to dev" })
    expect(made.status).toBe(201)
    const number = (await json(made)).number
    const res = await request(hearth, "PATCH", `/repos/alice/app/pulls/${number}`, basic("alice"), {
      base: "main",
      title: "changed?"
    })
    expect(res.status).toBe(409)
    const after = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${number}`, basic("alice")))
    expect(after).toMatchObject({ title: "to dev", base: { ref: "dev" } })
    // Closing and retargeting at once: refused (Forgejo: the base of a closed pull request does not change), nothing changed.
    const both = await request(hearth, "PATCH", `/repos/alice/app/pulls/${number}`, basic("alice"), {
      state: "closed",
      base: "other"
    })
    expect(both.status).toBe(422)
    expect((await json(both)).message).toMatch(/^issue is closed/)
    expect((await json(await request(hearth, "GET", `/repos/alice/app/pulls/${number}`, undefined))).state).toBe("open")
    expect(
      (await request(hearth, "PATCH", `/repos/alice/app/pulls/${number}`, basic("alice"), { state: "closed" })).status
    ).toBe(201)
  })

  it("closes and reopens, with labels replaced by writers", async () => {
    const label = await json(
      await request(hearth, "POST", "/repos/alice/app/labels", basic("alice"), { name: "bug", color: "#ff0000" })
    )
    const closed = await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("carol"), {
      state: "closed",
      labels: [label.id]
    })
    expect(closed.status).toBe(201)
    const body = await json(closed)
    expect(body.state).toBe("closed")
    expect(body.closed_at).not.toBeNull()
    expect(body.labels.map((l: { name: string }) => l.name)).toEqual(["bug"])
    const reopened = await json(
      await request(hearth, "PATCH", "/repos/alice/app/pulls/3", basic("carol"), { state: "open" })
    )
    expect(reopened.state).toBe("open")
    const open = await request(hearth, "GET", "/repos/alice/app/pulls?state=open", undefined)
    expect(open.headers.get("x-total-count")).toBe("3")
    // The list's `labels` filter: any of the ids given (repeated parameter).
    const labelled = await json(
      await request(hearth, "GET", `/repos/alice/app/pulls?labels=${label.id}&labels=999`, undefined)
    )
    expect(labelled.map((p: { number: number }) => p.number)).toEqual([3])
    const single = await json(await request(hearth, "GET", `/repos/alice/app/pulls?labels=${label.id}`, undefined))
    expect(single.map((p: { number: number }) => p.number)).toEqual([3])
  })

  it("lets only the poster with write access to the head set allow_maintainer_edit", async () => {
    expect(
      (await request(hearth, "PATCH", "/repos/alice/app/pulls/2", basic("alice"), { allow_maintainer_edit: true }))
        .status
    ).toBe(403)
    const res = await request(hearth, "PATCH", "/repos/alice/app/pulls/2", basic("bob"), {
      allow_maintainer_edit: true
    })
    expect(res.status).toBe(201)
    expect((await json(res)).allow_maintainer_edit).toBe(true)
  })
})

describe(".diff, .patch, commits and files", () => {
  it("streams the diff and the patch of a pull request from its merge base", async () => {
    const diff = await request(hearth, "GET", "/repos/alice/app/pulls/1.diff", undefined)
    expect(diff.status).toBe(200)
    const text = await diff.text()
    expect(text).toContain("diff --git a/feature.txt b/feature.txt")
    expect(text).toContain("+second")
    const patch = await (await request(hearth, "GET", "/repos/alice/app/pulls/1.patch", undefined)).text()
    expect(patch.match(/^From [0-9a-f]{40} /gm)).toHaveLength(2)
    expect(patch).toContain("Subject: [PATCH 1/2] add feature.txt")
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/1.zip", undefined)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/99.diff", undefined)).status).toBe(404)
  })

  it("lists the commits newest first with Forgejo's paging headers", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/pulls/1/commits?limit=1", undefined)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    expect(res.headers.get("x-pagecount")).toBe("2")
    expect(res.headers.get("x-hasmore")).toBe("true")
    const commits = await json(res)
    expectSwagger(commits, "Commit[]")
    expect(commits[0].commit.message).toBe("add second.txt\n")
    expect(commits[0].stats).toMatchObject({ additions: 1 })
  })

  it("lists the changed files with URLs in the head repository", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/pulls/2/files", undefined)
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("1")
    expect(res.headers.get("x-hasmore")).toBe("false")
    const files = await json(res)
    expectSwagger(files, "ChangedFile[]")
    const sha = await revParse("bob", "app", "refs/heads/bobfeat")
    expect(files).toEqual([
      {
        filename: "fork.txt",
        status: "added",
        additions: 1,
        deletions: 0,
        changes: 1,
        html_url: `${hearth.settings.server.ROOT_URL}bob/app/src/commit/${sha}/fork.txt`,
        contents_url: `${hearth.settings.server.ROOT_URL}api/v1/repos/bob/app/contents/fork.txt?ref=${sha}`,
        raw_url: `${hearth.settings.server.ROOT_URL}bob/app/raw/commit/${sha}/fork.txt`
      }
    ])
  })

  it("compares two branches (GET /compare/{base}...{head}), a fork's with `owner:branch`", async () => {
    const res = await request(hearth, "GET", "/repos/alice/app/compare/main...feature", undefined)
    expect(res.status).toBe(200)
    const body = await json(res)
    expectSwagger(body, "Compare")
    expect(body.total_commits).toBe(2)
    expect(body.commits.map((c: any) => c.commit.message)).toEqual(["add second.txt\n", "add feature.txt\n"])
    expect(body.files).toEqual([
      { filename: "feature.txt", status: "added" },
      { filename: "second.txt", status: "added" }
    ])
    const fork = await json(await request(hearth, "GET", "/repos/alice/app/compare/main...bob:bobfeat", undefined))
    expect(fork.total_commits).toBe(1)
    for (const bad of ["main...nope", "nope...feature", "mainfeature", "main...erin:feature"]) {
      expect((await request(hearth, "GET", `/repos/alice/app/compare/${bad}`, undefined)).status, bad).toBe(404)
    }
  })

  it("answers GET /pulls/{index}/merge 404 while not merged", async () => {
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/1/merge", undefined)).status).toBe(404)
    expect((await request(hearth, "GET", "/repos/alice/app/pulls/99/merge", undefined)).status).toBe(404)
  })
})

describe("a head in a private fork", () => {
  it("answers 404 for a head in a fork the caller cannot read", async () => {
    expect((await request(hearth, "POST", "/repos/alice/app/forks", basic("erin"), {})).status).toBe(202)
    for (let i = 0; i < 400; i++) {
      if ((await json(await request(hearth, "GET", "/repos/erin/app", basic("erin")))).empty === false) break
      await sleep(25)
    }
    await commitFile("erin", "app", "hidden.txt", "hidden\n", "hidden", "main")
    expect((await request(hearth, "PATCH", "/repos/erin/app", basic("erin"), { private: true })).status).toBe(200)
    const body = { head: "erin:hidden", base: "main", title: "Hidden" }
    expect((await createPull("alice", "app", basic("dave"), body)).status).toBe(404)
    // Its owner can (and the pull request then shows the head repository only to who may read it).
    const made = await createPull("alice", "app", basic("erin"), body)
    expect(made.status).toBe(201)
    const number = (await json(made)).number
    const seen = await json(await request(hearth, "GET", `/repos/alice/app/pulls/${number}`, basic("dave")))
    expect(seen.head.repo).toBeNull()
    expect(
      (await request(hearth, "PATCH", `/repos/alice/app/pulls/${number}`, basic("erin"), { state: "closed" })).status
    ).toBe(201)
  })
})

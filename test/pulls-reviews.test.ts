// Pull request reviews (issue 19 items 5, 10; CONTRACT-PULLS §3.4, §12, §15): create (APPROVED,
// REQUEST_CHANGES, COMMENT, PENDING) with inline comments checked against the diff, submit a
// pending review, list, get, delete, review comments with `diff_hunk`, dismiss and undismiss,
// review requests of users and teams, the PullRequest JSON's review members, the timeline's
// review entries, notifications, and who may do what (anonymous, reader, poster, writer, admin,
// private repositories, the pulls unit switched off).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let index: number
let head: string

const call = (method: string, path: string, user?: string, body?: unknown) =>
  request(hearth, method, path, user === undefined ? undefined : basic(user), body)

const PULL = "/repos/alice/app/pulls"
const reviews = (suffix = "") => `${PULL}/${index}/reviews${suffix}`

/** A commit on `branch` (made from `from` when new) through the contents API. */
const commitFile = async (
  repo: string,
  path: string,
  text: string,
  branch: string,
  options: { from?: string; sha?: string } = {}
) => {
  const res = await call(options.sha === undefined ? "POST" : "PUT", `/repos/alice/${repo}/contents/${path}`, "alice", {
    content: Buffer.from(text).toString("base64"),
    ...(options.from === undefined ? { branch } : { branch: options.from, new_branch: branch }),
    ...(options.sha === undefined ? {} : { sha: options.sha }),
    message: `write ${path}`
  })
  expect(res.status, await res.clone().text()).toBeLessThan(300)
  return json(res)
}

const LINES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]

const countReviews = async () => json(await call("GET", reviews(), "alice")).then((list: Array<unknown>) => list.length)

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "carol", "wendy", "erin"].map((username) => createUser(hearth, { username })))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const [name, extra] of [
    ["app", {}],
    ["secret", { private: true }],
    ["nopulls", {}]
  ] as const) {
    expect((await call("POST", "/user/repos", "alice", { name, auto_init: true, ...extra })).status).toBe(201)
  }
  expect((await call("PATCH", "/repos/alice/nopulls", "alice", { has_pull_requests: false })).status).toBe(200)
  // bob and wendy write (bob posts the pull request); carol and erin only read the public repository.
  for (const user of ["bob", "wendy"]) {
    expect((await call("PUT", `/repos/alice/app/collaborators/${user}`, "alice", { permission: "write" })).status).toBe(
      204
    )
  }
  expect((await call("PUT", "/repos/alice/secret/collaborators/bob", "alice", { permission: "write" })).status).toBe(
    204
  )
  const file = await commitFile("app", "a.txt", `${LINES.join("\n")}\n`, "main")
  const changed = [...LINES.slice(0, 4), "FIVE", ...LINES.slice(5), "eleven"]
  await commitFile("app", "a.txt", `${changed.join("\n")}\n`, "topic", { from: "main", sha: file.content.sha })
  await commitFile("app", "b.txt", "b\n", "topic")
  const res = await call("POST", PULL, "bob", { head: "topic", base: "main", title: "Topic" })
  expect(res.status).toBe(201)
  const pull = await json(res)
  index = pull.number
  head = pull.head.sha
  await commitFile("secret", "s.txt", "s\n", "feat", { from: "main" })
  expect(
    (await call("POST", "/repos/alice/secret/pulls", "bob", { head: "feat", base: "main", title: "S" })).status
  ).toBe(201)
})
afterAll(() => hearth?.close())

describe("POST /pulls/{index}/reviews", () => {
  let approval: any

  it("approves with inline comments on the new and the old side (200, official for a writer, not stale)", async () => {
    const res = await call("POST", reviews(), "alice", {
      event: "APPROVED",
      body: "Looks good",
      comments: [
        { path: "a.txt", body: "capitals?", new_position: 5 },
        { path: "a.txt", body: "was lower case", old_position: 5 },
        { path: "b.txt", body: "new file", new_position: 1 }
      ]
    })
    expect(res.status, await res.clone().text()).toBe(200)
    approval = await json(res)
    expectSwagger(approval, "PullReview")
    expect(approval).toMatchObject({
      state: "APPROVED",
      body: "Looks good",
      commit_id: head,
      official: true,
      stale: false,
      dismissed: false,
      comments_count: 3,
      user: { login: "alice" },
      team: null,
      pull_request_url: `${hearth.base}/alice/app/pulls/${index}`
    })
    expect(approval.html_url).toMatch(new RegExp(`/alice/app/pulls/${index}#issuecomment-\\d+$`))
  })

  it("lists its comments in file and line order, each with the diff hunk cut around its line", async () => {
    const res = await call("GET", reviews(`/${approval.id}/comments`), undefined)
    expect(res.status).toBe(200)
    const list = await json(res)
    expectSwagger(list, "PullReviewComment[]")
    // The old side of a line before its new side.
    expect(list.map((c: any) => [c.path, c.position, c.original_position])).toEqual([
      ["a.txt", 0, 5],
      ["a.txt", 5, 0],
      ["b.txt", 1, 0]
    ])
    const [oldSide, newSide, added] = list
    expect(newSide).toMatchObject({ body: "capitals?", pull_request_review_id: approval.id, user: { login: "alice" } })
    // Forgejo's CutDiffAroundLine: the hunk up to the line; past CODE_COMMENT_LINES (4) lines, its
    // last 4 under a recomputed header.
    expect(newSide.diff_hunk).toBe("@@ -3,3 +3,3 @@\n three\n four\n-five\n+FIVE")
    expect(oldSide.diff_hunk).toBe("@@ -2,9 +2,10 @@ one\n two\n three\n four\n-five")
    expect(added.diff_hunk).toBe("@@ -0,0 +1 @@\n+b")
    // The new side's line is blamed: the commit that wrote it.
    expect(newSide.commit_id).toMatch(/^[0-9a-f]{40}$/)
    expect(newSide.html_url).toBe(`${hearth.base}/alice/app/pulls/${index}#issuecomment-${newSide.id}`)
    const one = await call("GET", reviews(`/${approval.id}/comments/${newSide.id}`), "carol")
    expect(one.status).toBe(200)
    const { user: _user, ...rest } = newSide
    expect(await json(one)).toMatchObject(rest)
  })

  it("refuses lines and paths that are not in the diff (422) and stores nothing", async () => {
    const before = await countReviews()
    for (const comment of [
      { path: "a.txt", body: "x", new_position: 1 },
      { path: "a.txt", body: "x", old_position: 11 },
      { path: "a.txt", body: "x", new_position: 99 },
      { path: "nope.txt", body: "x", new_position: 1 },
      { path: "a.txt", body: "x" },
      { body: "x", new_position: 5 }
    ]) {
      const res = await call("POST", reviews(), "carol", {
        event: "COMMENT",
        body: "see inline",
        comments: [{ path: "a.txt", body: "fine", new_position: 5 }, comment]
      })
      expect(res.status, JSON.stringify(comment)).toBe(422)
      expect((await json(res)).message).toBeTruthy()
    }
    expect(await countReviews()).toBe(before)
    // Nor as a comment added to an existing review.
    const added = await call("POST", reviews(`/${approval.id}/comments`), "carol", {
      path: "a.txt",
      body: "x",
      new_position: 1
    })
    expect(added.status).toBe(422)
    expect((await json(await call("GET", reviews(`/${approval.id}/comments`), "carol"))).length).toBe(3)
  })

  it("refuses the poster's own approval or rejection and events without the body they need (422)", async () => {
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ["bob", { event: "APPROVED" }, "approve your own pull is not allowed"],
      ["bob", { event: "REQUEST_CHANGES", body: "no" }, "reject your own pull is not allowed"],
      ["carol", { event: "REQUEST_CHANGES", body: "  " }, "review event REQUEST_CHANGES requires a body"],
      ["carol", { event: "COMMENT" }, "review event COMMENT requires a body or a comment"],
      ["carol", { event: "PENDING" }, "review event PENDING requires a body"]
    ]
    const before = await countReviews()
    for (const [user, body, message] of cases) {
      const res = await call("POST", reviews(), user, body)
      expect(res.status).toBe(422)
      expect((await json(res)).message).toBe(message)
    }
    expect(await countReviews()).toBe(before)
  })

  it("lets the poster comment, and anyone who reads request changes (not official for a reader)", async () => {
    const comment = await call("POST", reviews(), "bob", { event: "COMMENT", body: "answering" })
    expect(comment.status).toBe(200)
    expect(await json(comment)).toMatchObject({ state: "COMMENT", official: false, comments_count: 0 })
    const reject = await call("POST", reviews(), "erin", { event: "REQUEST_CHANGES", body: "please no" })
    expect(reject.status).toBe(200)
    expect(await json(reject)).toMatchObject({ state: "REQUEST_CHANGES", official: false, user: { login: "erin" } })
  })

  it("needs a signed-in caller (401) and hides the pull requests of private repositories and of a switched-off unit (404)", async () => {
    expect((await call("POST", reviews(), undefined, { event: "COMMENT", body: "x" })).status).toBe(401)
    expect((await call("GET", "/repos/alice/secret/pulls/1/reviews", undefined)).status).toBe(404)
    expect((await call("GET", "/repos/alice/secret/pulls/1/reviews", "carol")).status).toBe(404)
    expect(
      (await call("POST", "/repos/alice/secret/pulls/1/reviews", "carol", { event: "COMMENT", body: "x" })).status
    ).toBe(404)
    expect((await call("GET", "/repos/alice/secret/pulls/1/reviews", "bob")).status).toBe(200)
    expect((await call("GET", "/repos/alice/nopulls/pulls/1/reviews", "alice")).status).toBe(404)
    expect((await call("GET", `${PULL}/999/reviews`, "alice")).status).toBe(404)
    expect((await call("GET", reviews("/999999"), "alice")).status).toBe(404)
  })
})

describe("pending reviews", () => {
  let pending: any

  it("keeps a PENDING review and its inline comments to its reviewer until submitted", async () => {
    const res = await call("POST", reviews(), "carol", {
      event: "PENDING",
      body: "draft",
      comments: [{ path: "a.txt", body: "later", new_position: 11 }]
    })
    expect(res.status).toBe(200)
    pending = await json(res)
    expect(pending).toMatchObject({ state: "PENDING", comments_count: 1, html_url: "" })
    const comments = await json(await call("GET", reviews(`/${pending.id}/comments`), "carol"))
    expect(comments[0].html_url).toBe(`${hearth.base}/alice/app/pulls/${index}/files#issuecomment-${comments[0].id}`)
    for (const user of [undefined, "alice", "bob"]) {
      expect((await call("GET", reviews(`/${pending.id}`), user)).status).toBe(404)
      const listed = await json(await call("GET", reviews(), user))
      expect(listed.map((r: any) => r.id)).not.toContain(pending.id)
    }
    // Site admins see them listed.
    expect((await json(await call("GET", reviews(), "root"))).map((r: any) => r.id)).toContain(pending.id)
    expect((await call("GET", reviews(`/${pending.id}`), "carol")).status).toBe(200)
  })

  it("adds further inline comments to the same pending review", async () => {
    const res = await call("POST", reviews(), "carol", {
      event: "",
      body: "still a draft",
      comments: [{ path: "b.txt", body: "and this", new_position: 1 }]
    })
    expect(res.status).toBe(200)
    expect(await json(res)).toMatchObject({ id: pending.id, state: "PENDING", comments_count: 2 })
  })

  it("submits it (same id, its comments kept); only a pending review can be submitted", async () => {
    expect((await call("POST", reviews(`/${pending.id}`), "carol", { event: "PENDING", body: "x" })).status).toBe(422)
    const res = await call("POST", reviews(`/${pending.id}`), "carol", { event: "COMMENT", body: "done" })
    expect(res.status).toBe(200)
    expect(await json(res)).toMatchObject({ id: pending.id, state: "COMMENT", body: "done", comments_count: 2 })
    const again = await call("POST", reviews(`/${pending.id}`), "carol", { event: "COMMENT", body: "again" })
    expect(again.status).toBe(422)
    expect((await json(again)).message).toBe("only a pending review can be submitted")
    expect((await call("GET", reviews(`/${pending.id}`), undefined)).status).toBe(200)
  })
})

describe("DELETE /pulls/{index}/reviews/{id} and review comments", () => {
  it("lets only the reviewer or a site admin delete a review (403 for others), with its comments", async () => {
    const made = await json(
      await call("POST", reviews(), "wendy", {
        event: "COMMENT",
        body: "to delete",
        comments: [{ path: "a.txt", body: "gone soon", new_position: 6 }]
      })
    )
    expect((await call("DELETE", reviews(`/${made.id}`), "alice")).status).toBe(403)
    expect((await call("DELETE", reviews(`/${made.id}`), undefined)).status).toBe(401)
    expect((await call("DELETE", reviews(`/${made.id}`), "wendy")).status).toBe(204)
    expect((await call("GET", reviews(`/${made.id}`), "wendy")).status).toBe(404)
    const other = await json(await call("POST", reviews(), "wendy", { event: "COMMENT", body: "admin deletes" }))
    expect((await call("DELETE", reviews(`/${other.id}`), "root")).status).toBe(204)
  })

  it("adds a comment to a review (200) and deletes one: its poster or a writer, else 403", async () => {
    const review = await json(await call("POST", reviews(), "erin", { event: "COMMENT", body: "host" }))
    const res = await call("POST", reviews(`/${review.id}/comments`), "erin", {
      path: "a.txt",
      body: "one more",
      new_position: 4
    })
    expect(res.status).toBe(200)
    const comment = await json(res)
    expectSwagger(comment, "PullReviewComment")
    expect(comment).toMatchObject({ path: "a.txt", position: 4, pull_request_review_id: review.id })
    expect((await call("DELETE", reviews(`/${review.id}/comments/${comment.id}`), "carol")).status).toBe(403)
    expect((await call("DELETE", reviews(`/${review.id}/comments/${comment.id}`), "wendy")).status).toBe(204)
    expect((await call("GET", reviews(`/${review.id}/comments/${comment.id}`), "erin")).status).toBe(404)
  })
})

describe("dismissals", () => {
  let approval: any

  it("needs a repository admin (403 before the review is looked at)", async () => {
    approval = await json(await call("POST", reviews(), "wendy", { event: "APPROVED", body: "ok" }))
    for (const user of ["carol", "wendy", "bob"]) {
      const res = await call("POST", reviews(`/${approval.id}/dismissals`), user, { message: "no" })
      expect(res.status).toBe(403)
      expect((await json(res)).message).toBe("Must be repo admin")
    }
    expect((await call("POST", reviews("/999999/dismissals"), "carol", { message: "no" })).status).toBe(403)
  })

  it("dismisses an approval with a dismiss_review entry, and undismisses it", async () => {
    const res = await call("POST", reviews(`/${approval.id}/dismissals`), "alice", { message: "too early" })
    expect(res.status).toBe(200)
    expect(await json(res)).toMatchObject({ id: approval.id, dismissed: true, state: "APPROVED" })
    const timeline = await json(await call("GET", `/repos/alice/app/issues/${index}/timeline`, "alice"))
    expect(timeline.filter((c: any) => c.type === "dismiss_review").at(-1)).toMatchObject({
      body: "too early",
      review_id: approval.id,
      user: { login: "alice" }
    })
    const back = await call("POST", reviews(`/${approval.id}/undismissals`), "alice")
    expect(back.status).toBe(200)
    expect(await json(back)).toMatchObject({ dismissed: false })
  })

  it("with `priors`, dismisses the reviewer's earlier approvals and rejections too", async () => {
    const first = await json(await call("POST", reviews(), "wendy", { event: "APPROVED", body: "first" }))
    const second = await json(await call("POST", reviews(), "wendy", { event: "APPROVED", body: "second" }))
    // Only the latest one is official.
    expect((await json(await call("GET", reviews(`/${first.id}`), "alice"))).official).toBe(false)
    expect(second.official).toBe(true)
    const res = await call("POST", reviews(`/${second.id}/dismissals`), "alice", { message: "all", priors: true })
    expect(res.status).toBe(200)
    expect((await json(await call("GET", reviews(`/${first.id}`), "alice"))).dismissed).toBe(true)
    expect((await json(await call("GET", reviews(`/${approval.id}`), "alice"))).dismissed).toBe(true)
  })

  it("refuses to dismiss a review that neither approves nor requests changes (403)", async () => {
    const comment = await json(await call("POST", reviews(), "wendy", { event: "COMMENT", body: "meh" }))
    const res = await call("POST", reviews(`/${comment.id}/dismissals`), "alice", { message: "x" })
    expect(res.status).toBe(403)
    expect((await json(res)).message).toBe(
      "not need to dismiss this review because it's type is not Approve or change request"
    )
  })
})

describe("review requests", () => {
  it("lets the poster request readers (201 with REQUEST_REVIEW rows) and lists them on the pull request", async () => {
    const res = await call("POST", `${PULL}/${index}/requested_reviewers`, "bob", {
      reviewers: ["carol", "wendy@example.com"]
    })
    expect(res.status, await res.clone().text()).toBe(201)
    const made = await json(res)
    expectSwagger(made, "PullReview[]")
    expect(made.map((r: any) => [r.user.login, r.state])).toEqual([
      ["carol", "REQUEST_REVIEW"],
      ["wendy", "REQUEST_REVIEW"]
    ])
    // wendy writes: her request is official; carol only reads.
    expect(made.map((r: any) => r.official)).toEqual([false, true])
    // Asking again changes nothing.
    expect(
      await json(await call("POST", `${PULL}/${index}/requested_reviewers`, "bob", { reviewers: ["carol"] }))
    ).toEqual([])
    const pull = await json(await call("GET", `${PULL}/${index}`, "alice"))
    expect(pull.requested_reviewers.map((u: any) => u.login)).toEqual(expect.arrayContaining(["carol", "wendy"]))
    expect(pull.requested_reviewers_teams).toEqual([])
    const timeline = await json(await call("GET", `/repos/alice/app/issues/${index}/timeline`, "alice"))
    expect(timeline.filter((c: any) => c.type === "review_request").map((c: any) => c.assignee.login)).toEqual([
      "carol",
      "wendy"
    ])
  })

  it("notifies the requested reviewer, and the poster of a review", async () => {
    const carol = await json(await call("GET", "/notifications?all=true", "carol"))
    expect(carol.map((n: any) => n.subject.title)).toContain("Topic")
    const bob = await json(await call("GET", "/notifications?all=true", "bob"))
    expect(bob.map((n: any) => n.subject.html_url)).toContain(`${hearth.base}/alice/app/pulls/${index}`)
  })

  it("refuses the poster (422), unknown users (404), users who cannot read (422) and strangers choosing (422)", async () => {
    const poster = await call("POST", `${PULL}/${index}/requested_reviewers`, "alice", { reviewers: ["bob"] })
    expect(poster.status).toBe(422)
    expect((await json(poster)).message).toMatch(/^poster of pr can't be reviewer \[user_id: \d+, repo_id: \d+\]$/)
    expect(
      (await call("POST", `${PULL}/${index}/requested_reviewers`, "alice", { reviewers: ["nobody"] })).status
    ).toBe(404)
    const stranger = await call("POST", `${PULL}/${index}/requested_reviewers`, "erin", { reviewers: ["carol"] })
    expect(stranger.status).toBe(422)
    expect((await json(stranger)).message).toMatch(/^Doer can't choose reviewer/)
    const unreadable = await call("POST", "/repos/alice/secret/pulls/1/requested_reviewers", "alice", {
      reviewers: ["carol"]
    })
    expect(unreadable.status).toBe(422)
    expect((await json(unreadable)).message).toMatch(/^Reviewer can't read/)
    expect(
      (await call("POST", `${PULL}/${index}/requested_reviewers`, undefined, { reviewers: ["carol"] })).status
    ).toBe(401)
  })

  it("takes a request back (204), and a submitted review answers the reviewer's request", async () => {
    expect((await call("DELETE", `${PULL}/${index}/requested_reviewers`, "bob", { reviewers: ["carol"] })).status).toBe(
      204
    )
    // Removing what is not there is fine.
    expect((await call("DELETE", `${PULL}/${index}/requested_reviewers`, "bob", { reviewers: ["carol"] })).status).toBe(
      204
    )
    let pull = await json(await call("GET", `${PULL}/${index}`, "alice"))
    expect(pull.requested_reviewers.map((u: any) => u.login)).not.toContain("carol")
    // wendy's request stays listed once she rejected (Forgejo lists the latest approve/reject/request).
    await call("POST", reviews(), "wendy", { event: "REQUEST_CHANGES", body: "fix it" })
    pull = await json(await call("GET", `${PULL}/${index}`, "alice"))
    expect(pull.requested_reviewers.map((u: any) => u.login)).toContain("wendy")
    const rows = await json(await call("GET", reviews(), "alice"))
    const wendy = rows.filter(
      (r: any) => r.user?.login === "wendy" && ["REQUEST_REVIEW", "REQUEST_CHANGES"].includes(r.state)
    )
    // Only her latest one counts.
    expect(wendy.map((r: any) => [r.state, r.official])).toEqual([
      ["REQUEST_REVIEW", false],
      ["REQUEST_CHANGES", true]
    ])
  })
})

describe("the pull request and its timeline", () => {
  it("counts submitted reviews in review_comments and comments, and lists them in the timeline with their ids", async () => {
    const list = await json(await call("GET", reviews(), "alice"))
    const submitted = list.filter((r: any) => !["PENDING", "REQUEST_REVIEW"].includes(r.state))
    const pull = await json(await call("GET", `${PULL}/${index}`, "alice"))
    expect(pull.review_comments).toBe(submitted.length)
    const timeline = await json(await call("GET", `/repos/alice/app/issues/${index}/timeline`, "alice"))
    const entries = timeline.filter((c: any) => c.type === "review")
    expect(entries.map((c: any) => c.review_id).sort()).toEqual(submitted.map((r: any) => r.id).sort())
    // Inline comments are not timeline entries.
    expect(timeline.some((c: any) => c.type === "code")).toBe(false)
  })
})

describe("team review requests (an organisation's repository)", () => {
  const ORG_PULL = "/repos/acme/code/pulls/1"

  beforeAll(async () => {
    expect((await call("POST", "/orgs", "alice", { username: "acme" })).status).toBe(201)
    expect(
      (await call("POST", "/orgs/acme/repos", "alice", { name: "code", auto_init: true, private: true })).status
    ).toBe(201)
    for (const [name, includesAll] of [
      ["reviewers", true],
      ["outsiders", false]
    ] as const) {
      const res = await call("POST", "/orgs/acme/teams", "alice", {
        name,
        permission: "write",
        units: ["repo.code", "repo.pulls"],
        includes_all_repositories: includesAll
      })
      expect(res.status, await res.clone().text()).toBe(201)
      const team = await json(res)
      for (const user of name === "reviewers" ? ["wendy", "carol"] : ["erin"]) {
        expect((await call("PUT", `/teams/${team.id}/members/${user}`, "alice")).status).toBe(204)
      }
    }
    const res = await call("POST", "/repos/acme/code/contents/c.txt", "alice", {
      content: Buffer.from("c\n").toString("base64"),
      branch: "main",
      new_branch: "change",
      message: "c"
    })
    expect(res.status).toBe(201)
    expect(
      (await call("POST", "/repos/acme/code/pulls", "alice", { head: "change", base: "main", title: "Org pull" }))
        .status
    ).toBe(201)
  })

  it("requests a team (201, a REQUEST_REVIEW row with the team and no user) and notifies its members", async () => {
    const res = await call("POST", `${ORG_PULL}/requested_reviewers`, "alice", { team_reviewers: ["reviewers"] })
    expect(res.status, await res.clone().text()).toBe(201)
    const [made] = await json(res)
    expect(made).toMatchObject({ state: "REQUEST_REVIEW", user: null, team: { name: "reviewers" }, official: false })
    const pull = await json(await call("GET", ORG_PULL, "alice"))
    expect(pull.requested_reviewers_teams.map((t: any) => t.name)).toEqual(["reviewers"])
    const notes = await json(await call("GET", "/notifications?all=true", "wendy"))
    expect(notes.map((n: any) => n.subject.title)).toContain("Org pull")
  })

  it("refuses unknown teams (404) and teams that cannot read the private repository (422)", async () => {
    expect(
      (await call("POST", `${ORG_PULL}/requested_reviewers`, "alice", { team_reviewers: ["ghosts"] })).status
    ).toBe(404)
    const res = await call("POST", `${ORG_PULL}/requested_reviewers`, "alice", { team_reviewers: ["outsiders"] })
    expect(res.status).toBe(422)
    expect((await json(res)).message).toMatch(/^Reviewing team can't read repo/)
  })

  it("answers a team's request with a member's approval, and takes a request back (204)", async () => {
    expect((await call("POST", "/repos/acme/code/pulls/1/reviews", "wendy", { event: "APPROVED" })).status).toBe(200)
    expect((await json(await call("GET", ORG_PULL, "alice"))).requested_reviewers_teams).toEqual([])
    expect(
      (await call("POST", `${ORG_PULL}/requested_reviewers`, "alice", { team_reviewers: ["reviewers"] })).status
    ).toBe(201)
    expect(
      (await call("DELETE", `${ORG_PULL}/requested_reviewers`, "alice", { team_reviewers: ["reviewers"] })).status
    ).toBe(204)
    expect((await json(await call("GET", ORG_PULL, "alice"))).requested_reviewers_teams).toEqual([])
  })

  it("ignores team_reviewers outside organisations", async () => {
    const res = await call("POST", `${PULL}/${index}/requested_reviewers`, "bob", { team_reviewers: ["reviewers"] })
    expect(res.status).toBe(201)
    expect(await json(res)).toEqual([])
  })
})

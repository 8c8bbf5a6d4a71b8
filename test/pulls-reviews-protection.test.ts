// Reviews in branch protection (issue 19 items 5, 6, 10; CONTRACT-PULLS §12.7, §13.3, §15.2):
// merges blocked and allowed by required approvals (official: a code writer, or on the approvals
// whitelist), rejected reviews, official review requests, stale approvals after a real `git push`
// (`ignore_stale_approvals`, `dismiss_stale_approvals`); and the review webhooks delivered to a
// real receiver with Forgejo's payloads.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

let hearth: Hearth
let receiver: Receiver
let work: string
let clone: string

const call = (method: string, path: string, user?: string, body?: unknown) =>
  request(hearth, method, path, user === undefined ? undefined : basic(user), body)

const url = (user: string) => {
  const u = new URL(`${hearth.base}/alice/app.git`)
  u.username = user
  u.password = "password123"
  return u.toString()
}
const git = (args: ReadonlyArray<string>) => gitIn(clone, args)

/** Pushes a commit writing `file` to branch `name` (from main when new) with the real git client; its sha. */
const pushTo = async (name: string, file: string, text: string, fromMain = false) => {
  if (fromMain) {
    await git(["fetch", "-q", "origin", "main"])
    await git(["checkout", "-q", "-B", name, "origin/main"])
  } else await git(["checkout", "-q", name])
  writeFileSync(join(clone, file), text)
  await git(["add", file])
  await git(["commit", "-q", "-m", `${name}: ${file}`])
  await git(["push", "-q", "origin", `${name}:${name}`])
  return git(["rev-parse", "HEAD"])
}

/** A pull request by bob from a new branch `name`. */
const openPull = async (name: string) => {
  await pushTo(name, `${name}.txt`, `${name}\n`, true)
  const res = await call("POST", "/repos/alice/app/pulls", "bob", { head: name, base: "main", title: `Pull ${name}` })
  expect(res.status, await res.clone().text()).toBe(201)
  return (await json(res)).number as number
}

const review = async (index: number, user: string, event: string, body = "") => {
  const res = await call("POST", `/repos/alice/app/pulls/${index}/reviews`, user, { event, body })
  expect(res.status, await res.clone().text()).toBe(200)
  return json(res)
}

const merge = (index: number) => call("POST", `/repos/alice/app/pulls/${index}/merge`, "alice", { Do: "merge" })

const expectBlocked = async (index: number, reason: string) => {
  const res = await merge(index)
  expect(res.status, await res.clone().text()).toBe(405)
  expect((await json(res)).message).toBe(`not allowed to merge [reason: ${reason}]`)
}

const expectMerged = async (index: number) => {
  const res = await merge(index)
  expect(res.status, await res.clone().text()).toBe(200)
  expect((await json(await call("GET", `/repos/alice/app/pulls/${index}`, "alice"))).merged).toBe(true)
}

const rule = async (options: Record<string, unknown>) => {
  const res = await call("PATCH", "/repos/alice/app/branch_protections/main", "alice", options)
  expect(res.status, await res.clone().text()).toBe(200)
}

beforeAll(async () => {
  receiver = await startReceiver()
  hearth = await startHearth({ webhook: { ALLOWED_HOST_LIST: "loopback" } })
  work = mkdtempSync(join(tmpdir(), "hearth-reviews-protection-"))
  await Promise.all(["alice", "bob", "wendy", "carol", "rita"].map((username) => createUser(hearth, { username })))
  expect((await call("POST", "/user/repos", "alice", { name: "app", auto_init: true })).status).toBe(201)
  for (const [user, permission] of [
    ["bob", "write"],
    ["wendy", "write"],
    ["carol", "write"],
    ["rita", "read"]
  ]) {
    expect((await call("PUT", `/repos/alice/app/collaborators/${user}`, "alice", { permission })).status).toBe(204)
  }
  expect(
    (await call("POST", "/repos/alice/app/branch_protections", "alice", { rule_name: "main", required_approvals: 1 }))
      .status
  ).toBe(201)
  const hook = await call("POST", "/repos/alice/app/hooks", "alice", {
    type: "forgejo",
    config: { url: receiver.url("/reviews"), content_type: "json" },
    events: ["pull_request_review", "pull_request_comment", "pull_request_review_request"],
    active: true
  })
  expect(hook.status, await hook.clone().text()).toBe(201)
  clone = join(work, "clone")
  await gitIn(work, ["clone", "-q", url("bob"), clone])
})
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("required approvals", () => {
  it("blocks a merge until an official reviewer (a code writer) approves; a reader's approval does not count", async () => {
    const index = await openPull("approvals")
    await expectBlocked(index, "Does not have enough approvals")
    expect(await review(index, "rita", "APPROVED")).toMatchObject({ official: false })
    await expectBlocked(index, "Does not have enough approvals")
    // A comment is no approval.
    await review(index, "wendy", "COMMENT", "hmm")
    await expectBlocked(index, "Does not have enough approvals")
    expect(await review(index, "wendy", "APPROVED")).toMatchObject({ official: true })
    await expectMerged(index)
  })

  it("with an approvals whitelist, counts only the whitelisted reviewers", async () => {
    await rule({ enable_approvals_whitelist: true, approvals_whitelist_username: ["carol"] })
    const index = await openPull("whitelist")
    expect(await review(index, "wendy", "APPROVED")).toMatchObject({ official: false })
    await expectBlocked(index, "Does not have enough approvals")
    expect(await review(index, "carol", "APPROVED")).toMatchObject({ official: true })
    await expectMerged(index)
  })

  it("does not count a dismissed approval", async () => {
    await rule({ enable_approvals_whitelist: false })
    const index = await openPull("dismissed")
    const approval = await review(index, "wendy", "APPROVED")
    expect(
      (
        await call("POST", `/repos/alice/app/pulls/${index}/reviews/${approval.id}/dismissals`, "alice", {
          message: "no"
        })
      ).status
    ).toBe(200)
    await expectBlocked(index, "Does not have enough approvals")
    await review(index, "carol", "APPROVED")
    await expectMerged(index)
  })
})

describe("rejected reviews and official review requests", () => {
  it("blocks on an official request for changes until it is dismissed (block_on_rejected_reviews)", async () => {
    await rule({ required_approvals: 0, block_on_rejected_reviews: true })
    const index = await openPull("rejected")
    const rejection = await review(index, "wendy", "REQUEST_CHANGES", "not like this")
    expect(rejection.official).toBe(true)
    await expectBlocked(index, "There are requested changes")
    const dismissed = await call(
      "POST",
      `/repos/alice/app/pulls/${index}/reviews/${rejection.id}/dismissals`,
      "alice",
      {
        message: "overruled"
      }
    )
    expect(dismissed.status).toBe(200)
    await expectMerged(index)
  })

  it("ignores a reader's request for changes", async () => {
    const index = await openPull("reader-rejects")
    expect(await review(index, "rita", "REQUEST_CHANGES", "no")).toMatchObject({ official: false })
    await expectMerged(index)
  })

  it("blocks while an official review request is open, until the reviewer answers (block_on_official_review_requests)", async () => {
    await rule({ block_on_rejected_reviews: false, block_on_official_review_requests: true })
    const index = await openPull("requests")
    const asked = await call("POST", `/repos/alice/app/pulls/${index}/requested_reviewers`, "bob", {
      reviewers: ["wendy", "rita"]
    })
    expect(asked.status).toBe(201)
    expect((await json(asked)).map((r: any) => [r.user.login, r.official])).toEqual([
      ["wendy", true],
      ["rita", false]
    ])
    await expectBlocked(index, "There are official review requests")
    await review(index, "wendy", "APPROVED")
    await expectMerged(index)
  })
})

describe("stale approvals after a push to the head", () => {
  it("marks the approval stale; ignore_stale_approvals stops counting it", async () => {
    await rule({ block_on_official_review_requests: false, required_approvals: 1, ignore_stale_approvals: true })
    const index = await openPull("stale")
    const approval = await review(index, "wendy", "APPROVED")
    expect(approval.stale).toBe(false)
    const after = await pushTo("stale", "more.txt", "more\n")
    const reread = await json(await call("GET", `/repos/alice/app/pulls/${index}/reviews/${approval.id}`, "alice"))
    expect(reread).toMatchObject({ stale: true, dismissed: false, commit_id: approval.commit_id })
    expect(reread.commit_id).not.toBe(after)
    await expectBlocked(index, "Does not have enough approvals")
    // A new approval of the new head is fresh and counts.
    expect(await review(index, "carol", "APPROVED")).toMatchObject({ stale: false, commit_id: after })
    await expectMerged(index)
  })

  it("still counts a stale approval without ignore_stale_approvals", async () => {
    await rule({ ignore_stale_approvals: false })
    const index = await openPull("stale-counts")
    const approval = await review(index, "wendy", "APPROVED")
    await pushTo("stale-counts", "again.txt", "again\n")
    expect(
      (await json(await call("GET", `/repos/alice/app/pulls/${index}/reviews/${approval.id}`, "alice"))).stale
    ).toBe(true)
    await expectMerged(index)
  })

  it("keeps an approval fresh when the push leaves the diff as it was (the base merged into the head)", async () => {
    const index = await openPull("same-diff")
    const approval = await review(index, "wendy", "APPROVED")
    // The base moves on (another pull request merged), and the head takes it in.
    const other = await openPull("moves-base")
    await review(other, "wendy", "APPROVED")
    await expectMerged(other)
    await git(["checkout", "-q", "same-diff"])
    await git(["fetch", "-q", "origin", "main"])
    await git(["merge", "-q", "--no-edit", "origin/main"])
    await git(["push", "-q", "origin", "same-diff:same-diff"])
    const reread = await json(await call("GET", `/repos/alice/app/pulls/${index}/reviews/${approval.id}`, "alice"))
    expect(reread.stale).toBe(false)
  })

  it("dismisses the approvals with dismiss_stale_approvals, with Forgejo's timeline entry", async () => {
    await rule({ dismiss_stale_approvals: true })
    const index = await openPull("dismiss-stale")
    const approval = await review(index, "wendy", "APPROVED")
    const rejection = await review(index, "rita", "REQUEST_CHANGES", "no")
    await pushTo("dismiss-stale", "later.txt", "later\n")
    const list = await json(await call("GET", `/repos/alice/app/pulls/${index}/reviews`, "alice"))
    expect(list.find((r: any) => r.id === approval.id)).toMatchObject({ dismissed: true, stale: true })
    // Only approvals are dismissed.
    expect(list.find((r: any) => r.id === rejection.id)).toMatchObject({ dismissed: false, stale: true })
    const timeline = await json(await call("GET", `/repos/alice/app/issues/${index}/timeline`, "alice"))
    expect(timeline.filter((c: any) => c.type === "dismiss_review")).toMatchObject([
      {
        review_id: approval.id,
        body: "New commits pushed, approval review dismissed automatically according to repository settings",
        user: { login: "bob" }
      }
    ])
    await expectBlocked(index, "Does not have enough approvals")
  })
})

describe("review webhooks", () => {
  const deliveries = () =>
    receiver.at("/reviews").map((r) => ({ event: r.headers["x-forgejo-event-type"], body: JSON.parse(r.body) }))

  it("sends pull_request_review_approved, _rejected and _comment (action reviewed) and review requests", async () => {
    await rule({ required_approvals: 0, dismiss_stale_approvals: false })
    const index = await openPull("hooks")
    const before = receiver.at("/reviews").length
    await review(index, "wendy", "APPROVED", "yes")
    await review(index, "rita", "REQUEST_CHANGES", "no")
    await review(index, "carol", "COMMENT", "maybe")
    // A pending review sends nothing.
    await review(index, "alice", "PENDING", "draft")
    expect(
      (await call("POST", `/repos/alice/app/pulls/${index}/requested_reviewers`, "bob", { reviewers: ["carol"] }))
        .status
    ).toBe(201)
    expect(
      (await call("DELETE", `/repos/alice/app/pulls/${index}/requested_reviewers`, "bob", { reviewers: ["carol"] }))
        .status
    ).toBe(204)
    await receiver.wait("/reviews", before + 5)
    const got = deliveries().slice(before)
    expect(got.map((d) => d.event).sort()).toEqual([
      "pull_request_review_approved",
      "pull_request_review_comment",
      "pull_request_review_rejected",
      "pull_request_review_request",
      "pull_request_review_request"
    ])
    const approved = got.find((d) => d.event === "pull_request_review_approved")!.body
    expect(approved).toMatchObject({
      action: "reviewed",
      number: index,
      pull_request: { number: index },
      review: { type: "pull_request_review_approved", content: "yes" },
      requested_reviewer: { login: "wendy" },
      sender: { login: "wendy" },
      repository: { full_name: "alice/app" }
    })
    const coarse = receiver
      .at("/reviews")
      .slice(before)
      .map((r) => r.headers["x-forgejo-event"])
    expect(coarse).toEqual(
      expect.arrayContaining(["pull_request_approved", "pull_request_rejected", "pull_request_comment"])
    )
    const requests = got.filter((d) => d.event === "pull_request_review_request").map((d) => d.body)
    expect(requests.map((b) => [b.action, b.requested_reviewer.login, b.sender.login])).toEqual([
      ["review_requested", "carol", "bob"],
      ["review_request_removed", "carol", "bob"]
    ])
  })
})

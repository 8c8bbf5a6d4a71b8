// Issue 22 item 2, pull requests in the browser over plain HTTP (the browser test is
// web-pulls-browser.test.ts): the list (the issues list's filters, pull requests only), a pull
// request's index under /issues redirecting, the conversation (the header and tabs, the timeline's
// pushes, review events with their inline comments, review requests, merge events), the commits
// tab, the merge box (mergeability, required statuses, the protection rule and its approvals,
// the allowed styles only, each merging as it should: git log), a stale merge (base or head moved
// since the page) that merges nothing, the scheduled merge and its cancellation, update branch,
// delete branch after the merge, compare → new pull request (a branch of a fork; no commits; one
// open already, linked), who sees and does what (a private repository: 404; a reader: no controls,
// a forged merge 403), and the XSS corpus in titles, bodies and branch names.
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

const bare = (owner: string, repo: string) => join(hearth.settings.repository.ROOT, owner, `${repo}.git`)
const inBare = (owner: string, repo: string, args: ReadonlyArray<string>) =>
  gitIn(bare(owner, repo), args, { GIT_DIR: bare(owner, repo) })
const tipOf = (repo: string, branch: string) => inBare("alice", repo, ["rev-parse", `refs/heads/${branch}`])
const show = (repo: string, rev: string, format: string) =>
  inBare("alice", repo, ["log", "-1", `--format=${format}`, rev])

/** A commit writing `file` on `branch` (made from `from` when given) through the contents API. */
const commitFile = (owner: string, repo: string, file: string, text: string, branch: string, from?: string) =>
  api("POST", `/repos/${owner}/${repo}/contents/${encodeURIComponent(file)}`, owner, {
    content: Buffer.from(text).toString("base64"),
    ...(from === undefined ? { branch } : { branch: from, new_branch: branch }),
    message: `${branch}: ${file}`
  })

/** A branch from main with one commit, and a pull request of it into main; its index. */
const openPull = async (repo: string, branch: string, title = `Pull ${branch}`, user = "alice") => {
  await commitFile("alice", repo, `${branch}.txt`, `${branch}\n`, branch, "main")
  return (await api("POST", `/repos/alice/${repo}/pulls`, user, { head: branch, base: "main", title })).number as number
}

/** Waits (bounded) until the background jobs (mergeability check, push processing) show `wanted` on the page. */
const until = async (client: WebClient, path: string, wanted: (page: string) => boolean) => {
  for (let i = 0; i < 400; i++) {
    const page = await client.get(path)
    if (wanted(page.text)) return page
    await sleep(25)
  }
  throw new Error(`${path} never showed what the test waits for`)
}

const field = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1]

/** The merge box's form as the page shows it to `client`, sent with `fields` changed. */
const mergeWith = async (client: WebClient, repo: string, index: number, fields: Record<string, string>) => {
  const page = await client.get(`/alice/${repo}/pulls/${index}`)
  expect(page.text).toContain('data-testid="merge-form"')
  return client.post(
    `/alice/${repo}/pulls/${index}/merge`,
    {
      head_commit_id: field(page.text, "head_commit_id") ?? "",
      base_commit_id: field(page.text, "base_commit_id") ?? "",
      ...fields
    },
    csrfOf(page.text)
  )
}

const pullJson = async (repo: string, index: number) =>
  json(await request(hearth, "GET", `/repos/alice/${repo}/pulls/${index}`, basic("alice")))

let first = 0

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave", "eve"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/garden/collaborators/bob", "alice", { permission: "write" })
  await api("PUT", "/repos/alice/garden/collaborators/dave", "alice", { permission: "read" })
  // #1 a pull request with a second push, an issue (#2), a review request, an approval and a review with an inline comment.
  first = await openPull("garden", "feat1", "Add feature one")
  await commitFile("alice", "garden", "feat1-more.txt", "second file\n", "feat1")
  await api("POST", "/repos/alice/garden/issues", "alice", { title: "An issue, not a pull" })
  await api("POST", `/repos/alice/garden/pulls/${first}/requested_reviewers`, "alice", { reviewers: ["dave"] })
  await api("POST", `/repos/alice/garden/pulls/${first}/reviews`, "bob", {
    event: "COMMENT",
    body: "A few notes",
    comments: [{ path: "feat1-more.txt", body: "Why a **second** file?", new_position: 1 }]
  })
  await api("POST", `/repos/alice/garden/pulls/${first}/reviews`, "bob", { event: "APPROVED", body: "Looks good" })
  await api("POST", "/user/repos", "alice", { name: "vault", private: true, auto_init: true, readme: "Default" })
  await openPull("vault", "secret")
}, 180_000)

afterAll(async () => {
  await hearth?.close()
})

describe("the list", () => {
  it("lists the pull requests only, with the issues list's counts and filters", async () => {
    const page = await web().get("/alice/garden/pulls")
    expect(page.status).toBe(200)
    expect(page.text).toContain('href="/alice/garden/pulls/1"')
    expect(page.text).toContain("Add feature one")
    expect(page.text).not.toContain("An issue, not a pull")
    expect(page.text).toContain('data-testid="count-open">1<')
    expect(page.text).toContain('aria-label="Open"')
    expect(page.text).toContain('action="/alice/garden/pulls"')
    expect(page.text).not.toContain('data-testid="new-pull"')
    expect((await (await as("dave")).get("/alice/garden/pulls")).text).toContain('href="/alice/garden/compare"')
    expect((await web().get("/alice/garden/pulls?q=nothing-like-it")).text).toContain('data-testid="no-issues"')
    expect((await web().get("/alice/garden/issues")).text).not.toContain("Add feature one")
  })

  it("redirects a pull request's /issues/{index} to /pulls/{index}", async () => {
    const res = await web().get(`/alice/garden/issues/${first}`)
    expect(res.status).toBe(302)
    expect(res.location).toBe(`/alice/garden/pulls/${first}`)
  })
})

describe("the conversation", () => {
  it("shows the header, the tabs with their counts, and the timeline with pushes, reviews and requests", async () => {
    const page = await web().get(`/alice/garden/pulls/${first}`)
    expect(page.status).toBe(200)
    expect(page.text).toMatch(/data-testid="pull-title">Add feature one <span class="color-fg-muted">#1</)
    expect(page.text).toMatch(/data-testid="pull-state">[\s\S]*?Open</)
    expect(page.text).toMatch(
      /alice<\/a> wants to merge 2 commits into <a[^>]*>main<\/a> from <span data-testid="pull-head"><a[^>]*href="\/alice\/garden\/src\/branch\/feat1">feat1</
    )
    expect(page.text).toMatch(/data-testid="pull-tab-commits"[^>]*>[\s\S]*?Counter">2</)
    expect(page.text).toMatch(
      /href="\/alice\/garden\/pulls\/1\/files" data-testid="pull-tab-files"[^>]*>[\s\S]*?Counter">2</
    )
    // The pushes: the first commit, then the second.
    expect(page.text.match(/data-type="pull_push"/g)).toHaveLength(2)
    expect(page.text).toContain("requested a review from")
    // The reviews, their bodies, and the inline comment with its place and the code around it.
    expect(page.text).toMatch(/data-state="COMMENT"[\s\S]*?reviewed/)
    expect(page.text).toMatch(/data-state="APPROVED"[\s\S]*?approved these changes/)
    expect(page.text).toContain("Looks good")
    expect(page.text).toContain('data-testid="review-comment-place">feat1-more.txt:1<')
    expect(page.text).toMatch(/data-testid="review-comment-hunk">[\s\S]*?\+second file/)
    expect(page.text).toContain("Why a <strong>second</strong> file?")
    expect(page.text).toMatch(/data-testid="pull-reviewers">[\s\S]*?bob<\/a> <span class="color-fg-muted">approved/)
    // Anonymous: no merge controls, a sign-in link instead of the comment form.
    expect(page.text).not.toContain('data-testid="merge-form"')
    expect(page.text).toContain('data-testid="sign-in-to-comment"')
  })

  it("comments, and closes and reopens for the poster and writers, keeping a refused comment", async () => {
    const bob = await as("bob")
    const page = await bob.get(`/alice/garden/pulls/${first}`)
    const csrf = csrfOf(page.text)
    const empty = await bob.post(`/alice/garden/pulls/${first}/comments`, { content: " ", status: "" }, csrf)
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('data-testid="error-content"')
    const ok = await bob.post(`/alice/garden/pulls/${first}/comments`, { content: "Ship it", status: "" }, csrf)
    expect(ok.status).toBe(303)
    expect(ok.location).toBe(`/alice/garden/pulls/${first}`)
    expect((await web().get(`/alice/garden/pulls/${first}`)).text).toContain("Ship it")
    // A reader may comment, not close: refused with the comment kept.
    const dave = await as("dave")
    const refused = await dave.post(
      `/alice/garden/pulls/${first}/comments`,
      { content: "Close it?", status: "close" },
      csrfOf((await dave.get(`/alice/garden/pulls/${first}`)).text)
    )
    expect(refused.status).toBe(403)
    expect(refused.text).toContain("Close it?")
    expect((await pullJson("garden", first)).state).toBe("open")
    const closed = await bob.post(`/alice/garden/pulls/${first}/comments`, { content: "", status: "close" }, csrf)
    expect(closed.status).toBe(303)
    const shown = await web().get(`/alice/garden/pulls/${first}`)
    expect(shown.text).toMatch(/data-testid="pull-state">[\s\S]*?Closed</)
    expect(shown.text).toContain("This pull request is closed.")
    expect(
      (await bob.post(`/alice/garden/pulls/${first}/comments`, { content: "", status: "reopen" }, csrf)).status
    ).toBe(303)
    expect((await pullJson("garden", first)).state).toBe("open")
  })

  it("lists the commits on the commits tab, linked to their pages", async () => {
    const page = await web().get(`/alice/garden/pulls/${first}/commits`)
    expect(page.status).toBe(200)
    const head = await tipOf("garden", "feat1")
    expect(page.text).toContain(`href="/alice/garden/commit/${head}"`)
    expect(page.text).toContain("feat1: feat1.txt")
    expect(page.text).toMatch(/data-testid="pull-tab-commits" aria-current="page"/)
    expect((await web().get("/alice/garden/pulls/999")).status).toBe(404)
    expect((await web().get("/alice/garden/pulls/999/commits")).status).toBe(404)
  })
})

describe("who sees and does what", () => {
  it("a private repository's pull requests are 404 for strangers and anonymous", async () => {
    const eve = await as("eve")
    for (const path of ["/alice/vault/pulls", "/alice/vault/pulls/1", "/alice/vault/pulls/1/commits"]) {
      expect((await web().get(path)).status, path).toBe(404)
      expect((await eve.get(path)).status, path).toBe(404)
    }
    expect((await (await as("alice")).get("/alice/vault/pulls/1")).status).toBe(200)
    const forged = await eve.post(
      "/alice/vault/pulls/1/merge",
      { do: "merge" },
      csrfOf((await eve.get("/alice/garden/pulls")).text)
    )
    expect(forged.status).toBe(404)
    expect((await pullJson("vault", 1)).merged).toBe(false)
  })

  it("a reader sees the merge box without its controls, and a forged merge is 403 and merges nothing", async () => {
    const dave = await as("dave")
    const page = await dave.get(`/alice/garden/pulls/${first}`)
    expect(page.text).toContain('data-testid="merge-box"')
    expect(page.text).not.toContain('data-testid="merge-form"')
    expect(page.text).not.toContain('data-testid="update-form"')
    const before = await tipOf("garden", "main")
    const forged = await dave.post(
      `/alice/garden/pulls/${first}/merge`,
      { do: "merge", head_commit_id: await tipOf("garden", "feat1"), base_commit_id: before },
      csrfOf(page.text)
    )
    expect(forged.status).toBe(403)
    expect(await tipOf("garden", "main")).toBe(before)
    expect((await pullJson("garden", first)).merged).toBe(false)
    // Without a CSRF token: refused too; anonymous: to the sign-in page.
    expect((await dave.post(`/alice/garden/pulls/${first}/merge`, { do: "merge" }, undefined)).status).toBe(400)
    const anonymous = await web().post(`/alice/garden/pulls/${first}/merge`, { do: "merge" }, undefined)
    expect([303, 403]).toContain(anonymous.status)
  })
})

describe("the merge box", () => {
  it("shows mergeability, the protection rule's approvals and required statuses, and only the allowed styles", async () => {
    await api("POST", "/user/repos", "alice", { name: "guarded", auto_init: true, readme: "Default" })
    await api("POST", "/repos/alice/guarded/branch_protections", "alice", {
      rule_name: "main",
      required_approvals: 1,
      enable_status_check: true,
      status_check_contexts: ["ci/*"]
    })
    await api("PATCH", "/repos/alice/guarded", "alice", { allow_squash_merge: false, allow_rebase_explicit: false })
    const index = await openPull("guarded", "g1")
    await until(web(), `/alice/guarded/pulls/${index}`, (p) =>
      p.includes('data-testid="mergeability" data-state="mergeable"')
    )
    const pull = await pullJson("guarded", index)
    await api("POST", `/repos/alice/guarded/statuses/${pull.head.sha}`, "alice", {
      state: "pending",
      context: "ci/build",
      description: "Building <b>now</b>",
      target_url: "https://ci.example/1"
    })
    const page = await (await as("alice")).get(`/alice/guarded/pulls/${index}`)
    expect(page.text).toContain('data-testid="mergeability" data-state="mergeable"')
    expect(page.text).toMatch(/data-testid="approvals">0 of 1 required approval</)
    expect(page.text).toMatch(
      /data-testid="status" data-state="pending">[\s\S]*?ci\/build<\/strong> Building &lt;b&gt;now&lt;\/b&gt; <span class="Label">Required/
    )
    expect(page.text).toContain('href="https://ci.example/1"')
    expect(page.text).toContain('data-testid="merge-blockers"')
    expect(page.text).toContain('data-testid="merge-when-checks"')
    const styles = [...page.text.matchAll(/name="do" value="([^"]+)"/g)].map((m) => m[1])
    expect(styles).toEqual(["merge", "rebase", "fast-forward-only"])
    expect(page.text).toMatch(/name="do" value="merge" checked/)
    // Blocked: the merge is refused with the rule's reason in the box, nothing merged.
    const before = await tipOf("guarded", "main")
    const refused = await mergeWith(await as("alice"), "guarded", index, { do: "merge" })
    expect(refused.status).toBe(405)
    expect(refused.text).toContain('data-testid="form-error"')
    expect(refused.text).toContain("not allowed to merge")
    expect(await tipOf("guarded", "main")).toBe(before)
    // A style the repository does not allow, sent anyway: refused.
    const squash = await mergeWith(await as("alice"), "guarded", index, { do: "squash", force_merge: "on" })
    expect(squash.status).toBe(405)
    expect(squash.text).toContain("squash is not an allowed merge style")
    expect(await tipOf("guarded", "main")).toBe(before)
  })
})

describe("merging with each allowed style (the result in git)", () => {
  const pulls: Record<string, number> = {}
  let alice: WebClient
  beforeAll(async () => {
    alice = await as("alice")
    await api("POST", "/user/repos", "alice", { name: "styles", auto_init: true, readme: "Default" })
    await api("PATCH", "/repos/alice/styles", "alice", { allow_manual_merge: true })
    for (const style of ["merge", "squash", "rebase", "rebase-merge", "manual"])
      pulls[style] = await openPull("styles", style)
  }, 120_000)

  it("merge: a merge commit of the base and the head", async () => {
    const before = await tipOf("styles", "main")
    const head = await tipOf("styles", "merge")
    expect((await mergeWith(alice, "styles", pulls.merge!, { do: "merge" })).status).toBe(303)
    const tip = await tipOf("styles", "main")
    expect(await show("styles", tip, "%P")).toBe(`${before} ${head}`)
    expect((await web().get(`/alice/styles/pulls/${pulls.merge}`)).text).toMatch(
      /data-testid="pull-state">[\s\S]*?Merged</
    )
  })

  it("squash: one commit on the base, with the default title and the message typed", async () => {
    const before = await tipOf("styles", "main")
    const res = await mergeWith(alice, "styles", pulls.squash!, { do: "squash", merge_message_field: "Squashed body" })
    expect(res.status).toBe(303)
    const tip = await tipOf("styles", "main")
    expect(await show("styles", tip, "%P")).toBe(before)
    expect(await show("styles", tip, "%B")).toBe(`Pull squash (#${pulls.squash})\n\nSquashed body`)
  })

  it("rebase: the head's commit replayed on the base, no merge commit", async () => {
    const before = await tipOf("styles", "main")
    const head = await tipOf("styles", "rebase")
    expect((await mergeWith(alice, "styles", pulls.rebase!, { do: "rebase" })).status).toBe(303)
    const tip = await tipOf("styles", "main")
    expect(await show("styles", tip, "%P")).toBe(before)
    expect(tip).not.toBe(head)
    expect(await show("styles", tip, "%s")).toBe("rebase: rebase.txt")
  })

  it("rebase-merge: the head rebased, then a merge commit", async () => {
    const before = await tipOf("styles", "main")
    const head = await tipOf("styles", "rebase-merge")
    expect((await mergeWith(alice, "styles", pulls["rebase-merge"]!, { do: "rebase-merge" })).status).toBe(303)
    const [left, right] = (await show("styles", await tipOf("styles", "main"), "%P")).split(" ")
    expect(left).toBe(before)
    expect(right).not.toBe(head)
    expect(await show("styles", right!, "%P")).toBe(before)
  })

  it("fast-forward only: the base moves to the head", async () => {
    const ff = await openPull("styles", "ff")
    const head = await tipOf("styles", "ff")
    expect((await mergeWith(alice, "styles", ff, { do: "fast-forward-only" })).status).toBe(303)
    expect(await tipOf("styles", "main")).toBe(head)
  })

  it("manually merged: recorded with the commit given, the base untouched", async () => {
    const before = await tipOf("styles", "main")
    const manual = await mergeWith(alice, "styles", pulls.manual!, { do: "manually-merged", merge_commit_id: before })
    expect(manual.status).toBe(303)
    expect(await tipOf("styles", "main")).toBe(before)
    expect(await pullJson("styles", pulls.manual!)).toMatchObject({ merged: true, merge_commit_sha: before })
  })
})

describe("the merge box's other forms", () => {
  it("refuses a stale merge (the base or the head moved since the page) and merges nothing", async () => {
    const alice = await as("alice")
    await api("POST", "/user/repos", "alice", { name: "stale", auto_init: true, readme: "Default" })
    const index = await openPull("stale", "s1")
    const page = await alice.get(`/alice/stale/pulls/${index}`)
    const seen = {
      head_commit_id: field(page.text, "head_commit_id") ?? "",
      base_commit_id: field(page.text, "base_commit_id") ?? ""
    }
    expect(seen.base_commit_id).toBe(await tipOf("stale", "main"))
    // Nothing blocks it: no schedule offered (it would merge at once).
    expect(page.text).not.toContain('data-testid="merge-when-checks"')
    // Someone pushes to main meanwhile.
    await commitFile("alice", "stale", "other.txt", "other\n", "main")
    const moved = await tipOf("stale", "main")
    const refused = await alice.post(`/alice/stale/pulls/${index}/merge`, { ...seen, do: "merge" }, csrfOf(page.text))
    expect(refused.status).toBe(409)
    expect(refused.text).toContain("moved since the merge was asked for: nothing was merged")
    expect(await tipOf("stale", "main")).toBe(moved)
    expect((await pullJson("stale", index)).merged).toBe(false)
    // The head moved since the page: refused too.
    const again = await alice.get(`/alice/stale/pulls/${index}`)
    const seenAgain = {
      head_commit_id: field(again.text, "head_commit_id") ?? "",
      base_commit_id: field(again.text, "base_commit_id") ?? ""
    }
    await commitFile("alice", "stale", "s1b.txt", "more\n", "s1")
    const newHead = await tipOf("stale", "s1")
    const headMoved = await alice.post(
      `/alice/stale/pulls/${index}/merge`,
      { ...seenAgain, do: "merge" },
      csrfOf(again.text)
    )
    expect(headMoved.status).toBe(409)
    expect(headMoved.text).toContain("head out of date")
    expect(await tipOf("stale", "main")).toBe(moved)
    // A form without what the page saw merges nothing either.
    const blind = await alice.post(`/alice/stale/pulls/${index}/merge`, { do: "merge" }, csrfOf(again.text))
    expect(blind.status).toBe(422)
    expect(await tipOf("stale", "main")).toBe(moved)
    // Looked at again (once the push is processed), it merges.
    await until(alice, `/alice/stale/pulls/${index}`, (p) => field(p, "head_commit_id") === newHead)
    expect((await mergeWith(alice, "stale", index, { do: "merge" })).status).toBe(303)
    expect((await pullJson("stale", index)).merged).toBe(true)
  })

  it("schedules a merge for when checks succeed, shows it, and cancels it", async () => {
    const alice = await as("alice")
    await api("POST", "/user/repos", "alice", { name: "sched", auto_init: true, readme: "Default" })
    await api("POST", "/repos/alice/sched/branch_protections", "alice", {
      rule_name: "main",
      enable_status_check: true,
      status_check_contexts: ["ci"]
    })
    const index = await openPull("sched", "later")
    const before = await tipOf("sched", "main")
    const res = await mergeWith(alice, "sched", index, { do: "squash", merge_when_checks_succeed: "on" })
    expect(res.status).toBe(303)
    const page = await alice.get(`/alice/sched/pulls/${index}`)
    expect(page.text).toContain('data-testid="scheduled"')
    expect(page.text).toContain('data-testid="cancel-scheduled"')
    expect(page.text).not.toContain('data-testid="merge-form"')
    expect(page.text).toContain('data-type="pull_scheduled_merge"')
    // A reader sees that it is scheduled, without the button.
    await api("PUT", "/repos/alice/sched/collaborators/dave", "alice", { permission: "read" })
    const readers = await (await as("dave")).get(`/alice/sched/pulls/${index}`)
    expect(readers.text).toContain('data-testid="scheduled"')
    expect(readers.text).not.toContain('data-testid="cancel-scheduled"')
    const cancel = await alice.post(`/alice/sched/pulls/${index}/cancel_auto_merge`, {}, csrfOf(page.text))
    expect(cancel.status).toBe(303)
    const after = await alice.get(`/alice/sched/pulls/${index}`)
    expect(after.text).not.toContain('data-testid="scheduled"')
    expect(after.text).toContain('data-type="pull_cancel_scheduled_merge"')
    expect(after.text).toContain('data-testid="merge-form"')
    expect(await tipOf("sched", "main")).toBe(before)
    // Nothing to cancel any more: the refusal in the box.
    const twice = await alice.post(`/alice/sched/pulls/${index}/cancel_auto_merge`, {}, csrfOf(page.text))
    expect(twice.status).toBe(404)
  })

  it("updates a branch that is behind its base by merge", async () => {
    const bob = await as("bob")
    const index = await openPull("garden", "behind")
    await commitFile("alice", "garden", "main-moved.txt", "moved\n", "main")
    const page = await until(bob, `/alice/garden/pulls/${index}`, (p) => p.includes('data-testid="behind"'))
    expect(page.text).toMatch(/data-testid="behind">[\s\S]*?This branch is 1 commit behind main/)
    expect(page.text).toContain('data-testid="update-merge"')
    // A reader sees how far behind, without the buttons.
    expect((await (await as("dave")).get(`/alice/garden/pulls/${index}`)).text).not.toContain(
      'data-testid="update-merge"'
    )
    const head = await tipOf("garden", "behind")
    const main = await tipOf("garden", "main")
    const res = await bob.post(`/alice/garden/pulls/${index}/update`, { style: "merge" }, csrfOf(page.text))
    expect(res.status).toBe(303)
    const updated = await tipOf("garden", "behind")
    expect(await show("garden", updated, "%P")).toBe(`${head} ${main}`)
    // Up to date now: a second update is refused in the box.
    const again = await bob.post(`/alice/garden/pulls/${index}/update`, { style: "merge" }, csrfOf(page.text))
    expect(again.status).toBe(422)
    expect(again.text).toContain("already up to date")
  })

  it("offers to delete the head branch after the merge, and deletes it", async () => {
    const alice = await as("alice")
    const index = await openPull("garden", "gone")
    expect((await mergeWith(alice, "garden", index, { do: "merge" })).status).toBe(303)
    const page = await alice.get(`/alice/garden/pulls/${index}`)
    expect(page.text).toContain("This pull request was merged")
    expect(page.text).toContain('data-testid="delete-branch"')
    // A reader gets no button, and a forged form is refused.
    const dave = await as("dave")
    expect((await dave.get(`/alice/garden/pulls/${index}`)).text).not.toContain('data-testid="delete-branch"')
    const forged = await dave.post(
      `/alice/garden/pulls/${index}/cleanup`,
      {},
      csrfOf((await dave.get(`/alice/garden/pulls/${index}`)).text)
    )
    expect(forged.status).toBe(403)
    expect(await tipOf("garden", "gone")).toMatch(/^[0-9a-f]{40}$/)
    const res = await alice.post(`/alice/garden/pulls/${index}/cleanup`, {}, csrfOf(page.text))
    expect(res.status).toBe(303)
    expect((await request(hearth, "GET", "/repos/alice/garden/branches/gone", basic("alice"))).status).toBe(404)
    const after = await alice.get(`/alice/garden/pulls/${index}`)
    expect(after.text).toContain('data-type="delete_branch"')
    expect(after.text).not.toContain('data-testid="delete-branch"')
  })
})

describe("compare → new pull request", () => {
  it("opens a pull request from a fork's branch, and links the open one on a second try", async () => {
    expect((await request(hearth, "POST", "/repos/alice/garden/forks", basic("carol"), {})).status).toBe(202)
    for (let i = 0; i < 400; i++) {
      if ((await json(await request(hearth, "GET", "/repos/carol/garden", basic("carol")))).empty === false) break
      await sleep(25)
    }
    await commitFile("carol", "garden", "fork.txt", "from the fork\n", "carolfeat", "main")
    const carol = await as("carol")
    const page = await carol.get("/alice/garden/compare/main...carol:carolfeat")
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="new-pull-form"')
    expect(page.text).toContain("carolfeat: fork.txt")
    // Anonymous: the comparison, no form.
    expect((await web().get("/alice/garden/compare/main...carol:carolfeat")).text).not.toContain(
      'data-testid="new-pull-form"'
    )
    // No title: the form again, what was typed kept, the error next to the field.
    const untitled = await carol.post(
      "/alice/garden/compare/main...carol:carolfeat",
      { title: " ", content: "Kept body" },
      csrfOf(page.text)
    )
    expect(untitled.status).toBe(422)
    expect(untitled.text).toContain('data-testid="error-title"')
    expect(untitled.text).toContain("Kept body")
    const res = await carol.post(
      "/alice/garden/compare/main...carol/garden:carolfeat",
      { title: "From the fork", content: "Please *merge*" },
      csrfOf(page.text)
    )
    expect(res.status).toBe(303)
    const index = Number(/\/alice\/garden\/pulls\/(\d+)$/.exec(res.location ?? "")?.[1])
    const pull = await pullJson("garden", index)
    expect(pull).toMatchObject({
      title: "From the fork",
      body: "Please *merge*",
      head: { ref: "carolfeat", repo: { full_name: "carol/garden" } }
    })
    const shown = await web().get(`/alice/garden/pulls/${index}`)
    expect(shown.text).toMatch(
      /from <span data-testid="pull-head"><a[^>]*href="\/carol\/garden\/src\/branch\/carolfeat">carol:carolfeat</
    )
    // The compare page now links the open pull request; a second POST is refused with the link.
    expect((await carol.get("/alice/garden/compare/main...carol:carolfeat")).text).toContain(
      `href="/alice/garden/pulls/${index}" data-testid="existing-pull"`
    )
    const twice = await carol.post(
      "/alice/garden/compare/main...carol:carolfeat",
      { title: "Again", content: "" },
      csrfOf(page.text)
    )
    expect(twice.status).toBe(409)
    expect(twice.text).toContain('data-testid="error-head"')
    expect(twice.text).toContain(`href="/alice/garden/pulls/${index}" data-testid="existing-pull"`)
  })

  it("refuses a head without commits, next to the branches", async () => {
    await api("POST", "/repos/alice/garden/branches", "alice", { new_branch_name: "same", old_ref_name: "main" })
    const bob = await as("bob")
    const page = await bob.get("/alice/garden/compare/main...same")
    expect(page.text).toContain('data-testid="compare-same"')
    expect(page.text).not.toContain('data-testid="new-pull-form"')
    const res = await bob.post("/alice/garden/compare/main...same", { title: "Nothing" }, csrfOf(page.text))
    expect(res.status).toBe(422)
    expect(res.text).toContain('data-testid="error-head"')
    expect(res.text).toContain("There are no changes")
    // A reader of a private repository's stranger: 404.
    const eve = await as("eve")
    const csrf = csrfOf((await eve.get("/alice/garden/pulls")).text)
    expect((await eve.post("/alice/vault/compare/main...secret", { title: "x" }, csrf)).status).toBe(404)
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  const branches = ['x"><img/src=x/onerror=alert(1)>', "y<svg/onload=alert(1)>"]
  const indexes: Array<number> = []
  beforeAll(async () => {
    await api("POST", "/user/repos", "alice", { name: "hostile", auto_init: true, readme: "Default" })
    for (const [n, branch] of branches.entries()) {
      await commitFile("alice", "hostile", `f${n}.txt`, `${n}\n`, branch, "main")
      const made = await api("POST", "/repos/alice/hostile/pulls", "alice", {
        head: branch,
        base: "main",
        title: corpus[n * 7]!.slice(0, 200),
        body: corpus.slice(0, 40).join("\n\n")
      })
      indexes.push(made.number)
      await api("POST", `/repos/alice/hostile/issues/${made.number}/comments`, "alice", {
        body: corpus.slice(40).join("\n\n")
      })
      await api("POST", `/repos/alice/hostile/pulls/${made.number}/reviews`, "alice", {
        event: "COMMENT",
        body: corpus.slice(20, 60).join("\n\n"),
        comments: [{ path: `f${n}.txt`, body: corpus.slice(60).join("\n\n"), new_position: 1 }]
      })
    }
  }, 120_000)

  const clean = async (path: string) => {
    const page = await (await as("alice")).get(path)
    expect(page.status, path).toBe(200)
    expect(executableInRendered(page.text), path).toEqual([])
  }

  it("the list", () => clean("/alice/hostile/pulls"))
  it("the conversations (titles, bodies, comments, reviews, inline comments, branch names)", async () => {
    for (const i of indexes) await clean(`/alice/hostile/pulls/${i}`)
  })
  it("the commits tabs", async () => {
    for (const i of indexes) await clean(`/alice/hostile/pulls/${i}/commits`)
  })
  it("the compare pages with the new pull request form", async () => {
    for (const b of branches) await clean(`/alice/hostile/compare/main...${encodeURIComponent(b)}`)
  })
})

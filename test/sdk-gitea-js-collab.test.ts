// A real client against the second half's routes: the gitea-js SDK (1.23, npm), as a team's bot or
// CI would call it — labels, milestones, issues with comments and an attachment, a mention that
// notifies, a pull request from a branch with its diff, files and commits, a commit status and a
// branch protection that requires it, a squash merge, a release with an uploaded asset, a webhook
// that a real receiver hears, and wiki pages. gitea-js appends /api/v1 itself, sends
// `Authorization: Bearer`, and throws the response on any non-2xx answer.
import { giteaApi } from "gitea-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

let hearth: Hearth
let receiver: Receiver
let alice: ReturnType<typeof giteaApi>
let bob: ReturnType<typeof giteaApi>

const base64 = (content: string) => Buffer.from(content).toString("base64")
/** The status of what gitea-js threw (it throws the Response-like object of a non-2xx answer). */
const statusOf = (promise: Promise<{ status: number }>) =>
  promise.then(
    (r) => r.status,
    (e: { status: number }) => e.status
  )

beforeAll(async () => {
  receiver = await startReceiver()
  hearth = await startHearth({ webhook: { ALLOWED_HOST_LIST: "loopback" } })
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  alice = giteaApi(hearth.base, { token: await createToken(hearth, "alice") })
  bob = giteaApi(hearth.base, { token: await createToken(hearth, "bob") })
  const created = await request(hearth, "POST", "/user/repos", basic("alice"), { name: "app", auto_init: true })
  expect(created.status).toBe(201)
  await alice.repos.repoAddCollaborator("alice", "app", "bob", { permission: "write" })
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
})

describe("gitea-js on issues, pull requests, statuses, releases, webhooks and the wiki", () => {
  it("files an issue with a label and a milestone, comments with a mention, attaches a file, and closes it", async () => {
    const label = (await alice.repos.issueCreateLabel("alice", "app", { name: "bug", color: "#ee0701" })).data
    const milestone = (await alice.repos.issueCreateMilestone("alice", "app", { title: "v1" })).data
    const issue = (
      await alice.repos.issueCreateIssue("alice", "app", {
        title: "Crash on start",
        body: "It crashes.",
        labels: [label.id!],
        milestone: milestone.id!,
        assignees: ["bob"]
      })
    ).data
    expect(issue.number).toBe(1)
    expect(issue.labels?.map((l) => l.name)).toEqual(["bug"])
    expect(issue.milestone?.title).toBe("v1")
    expect(issue.assignees?.map((a) => a.login)).toEqual(["bob"])

    await alice.repos.issueCreateComment("alice", "app", 1, { body: "@bob can you look?" })
    const comments = (await alice.repos.issueGetComments("alice", "app", 1)).data
    expect(comments.map((c) => c.body)).toEqual(["@bob can you look?"])

    const attachment = (
      await alice.repos.issueCreateIssueAttachment(
        "alice",
        "app",
        1,
        { attachment: new File(["the log\n"], "crash.log", { type: "text/plain" }) },
        {}
      )
    ).data
    expect(attachment.name).toBe("crash.log")
    expect(attachment.size).toBe(8)
    const download = await fetch(attachment.browser_download_url!)
    expect(await download.text()).toBe("the log\n")

    const byLabel = (await alice.repos.issueListIssues("alice", "app", { labels: "bug", type: "issues" })).data
    expect(byLabel.map((i) => i.number)).toEqual([1])
    const found = (await bob.repos.issueSearchIssues({ q: "crash" })).data
    expect(found.map((i) => i.title)).toContain("Crash on start")

    // The mention and the assignment reached bob's notifications.
    const notified = (await bob.notifications.notifyGetList()).data
    expect(notified.map((n) => n.subject?.title)).toContain("Crash on start")

    const closed = (await alice.repos.issueEditIssue("alice", "app", 1, { state: "closed" })).data
    expect(closed.state).toBe("closed")
    // Ids and names mixed are refused (Forgejo's 400) and change nothing; unknown ids are ignored, as Forgejo does.
    const mixed = { labels: [label.id!, "bug"] as unknown as Array<number> }
    expect(await statusOf(alice.repos.issueAddLabel("alice", "app", 1, mixed))).toBe(400)
    expect((await alice.repos.issueAddLabel("alice", "app", 1, { labels: [9999] })).data.map((l) => l.name)).toEqual([
      "bug"
    ])
  })

  it("opens a pull request from a branch, reads its diff, files and commits, and squash-merges it once its required status succeeds", async () => {
    await alice.repos.repoChangeFiles("alice", "app", {
      files: [{ operation: "create", path: "src/main.ts", content: base64("export const answer = 42\n") }],
      message: "Add the answer",
      new_branch: "feature"
    })
    await alice.repos.repoCreateBranchProtection("alice", "app", {
      rule_name: "main",
      enable_status_check: true,
      status_check_contexts: ["ci/*"]
    })
    const pull = (
      await bob.repos.repoCreatePullRequest("alice", "app", { base: "main", head: "feature", title: "The answer" })
    ).data
    expect(pull.number).toBe(2)
    expect(pull.head?.ref).toBe("feature")
    expect(pull.base?.ref).toBe("main")

    const listed = (await alice.repos.repoListPullRequests("alice", "app", { state: "open" })).data
    expect(listed.map((p) => p.number)).toEqual([2])
    // gitea-js declares no response format for the diff: ask for text as its callers do.
    const diffText = (await alice.repos.repoDownloadPullDiffOrPatch("alice", "app", 2, "diff", {}, { format: "text" }))
      .data
    expect(diffText).toContain("+export const answer = 42")
    const files = (await alice.repos.repoGetPullRequestFiles("alice", "app", 2)).data
    expect(files.map((f) => f.filename)).toEqual(["src/main.ts"])
    const commits = (await alice.repos.repoGetPullRequestCommits("alice", "app", 2)).data
    expect(commits.map((c) => c.commit?.message?.trim())).toEqual(["Add the answer"])

    // The required `ci/*` context has not reported: the merge is refused and nothing moves.
    expect(await statusOf(alice.repos.repoMergePullRequest("alice", "app", 2, { Do: "squash" }))).toBe(405)
    expect(await statusOf(alice.repos.repoPullRequestIsMerged("alice", "app", 2))).toBe(404)

    await alice.repos.repoCreateStatus("alice", "app", pull.head!.sha!, {
      state: "success",
      context: "ci/build",
      target_url: "https://ci.example/1"
    })
    const combined = (await alice.repos.repoGetCombinedStatusByRef("alice", "app", "feature")).data
    expect(combined.state).toBe("success")
    expect(combined.statuses?.map((s) => s.context)).toEqual(["ci/build"])

    await alice.repos.repoMergePullRequest("alice", "app", 2, { Do: "squash", delete_branch_after_merge: true })
    expect(await statusOf(alice.repos.repoPullRequestIsMerged("alice", "app", 2))).toBe(204)
    const merged = (await alice.repos.repoGetPullRequest("alice", "app", 2)).data
    expect(merged.merged).toBe(true)
    expect(merged.state).toBe("closed")
    const main = (await alice.repos.repoGetSingleCommit("alice", "app", "main")).data
    expect(main.commit?.message).toContain("The answer (#2)")
    expect(await statusOf(alice.repos.repoGetBranch("alice", "app", "feature"))).toBe(404)
  })

  it("publishes a release with an uploaded asset, and a webhook tells a real receiver", async () => {
    const hook = (
      await alice.repos.repoCreateHook("alice", "app", {
        type: "gitea",
        config: { url: receiver.url("/release"), content_type: "json" },
        events: ["release"],
        active: true
      })
    ).data
    expect(hook.events).toEqual(["release"])
    expect((await alice.repos.repoListHooks("alice", "app")).data.map((h) => h.id)).toEqual([hook.id])

    const release = (
      await alice.repos.repoCreateRelease("alice", "app", {
        tag_name: "v1.0.0",
        name: "First",
        body: "Notes",
        target_commitish: "main"
      })
    ).data
    expect(release.tag_name).toBe("v1.0.0")
    const asset = (
      await alice.repos.repoCreateReleaseAttachment(
        "alice",
        "app",
        release.id!,
        { attachment: new File(["binary!"], "app-linux.tar.gz") },
        {}
      )
    ).data
    expect(asset.size).toBe(7)
    expect(await (await fetch(asset.browser_download_url!)).text()).toBe("binary!")

    expect((await bob.repos.repoGetLatestRelease("alice", "app")).data.id).toBe(release.id)
    const byTag = (await bob.repos.repoGetReleaseByTag("alice", "app", "v1.0.0")).data
    expect(byTag.assets?.map((a) => a.name)).toEqual(["app-linux.tar.gz"])
    expect((await bob.repos.repoGetTag("alice", "app", "v1.0.0")).data.name).toBe("v1.0.0")

    const [delivery] = await receiver.wait("/release", 1)
    expect(delivery!.headers["x-gitea-event"]).toBe("release")
    const payload = JSON.parse(delivery!.body)
    expect(payload.action).toBe("published")
    expect(payload.release.tag_name).toBe("v1.0.0")
    expect(payload.repository.full_name).toBe("alice/app")
    // bob (a writer, not an admin) may not read the hooks.
    expect(await statusOf(bob.repos.repoListHooks("alice", "app"))).toBe(403)
  })

  it("writes, lists, reads and revises wiki pages", async () => {
    const page = (
      await alice.repos.repoCreateWikiPage("alice", "app", {
        title: "Getting Started",
        content_base64: base64("# Hello\n\nSee [[Setup]].\n"),
        message: "First page"
      })
    ).data
    expect(page.title).toBe("Getting Started")
    await bob.repos.repoEditWikiPage("alice", "app", "Getting-Started", {
      content_base64: base64("# Hello again\n"),
      message: "Edited"
    })
    const read = (await alice.repos.repoGetWikiPage("alice", "app", "Getting-Started")).data
    expect(Buffer.from(read.content_base64!, "base64").toString()).toBe("# Hello again\n")
    const pages = (await alice.repos.repoGetWikiPages("alice", "app")).data
    expect(pages.map((p) => p.title)).toEqual(["Getting Started"])
    const revisions = (await alice.repos.repoGetWikiPageRevisions("alice", "app", "Getting-Started")).data
    expect(revisions.commits?.map((c) => c.message?.trim())).toEqual(["Edited", "First page"])
  })
})

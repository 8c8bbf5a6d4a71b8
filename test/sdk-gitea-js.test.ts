// A real client against this routes: the gitea-js SDK (1.23, npm), as a user of Hearth
// would call it — topics, languages, commits by ref and their paging headers, forks that answer
// once usable, auto-watch, the instance and user settings, assignees and reviewers. gitea-js appends /api/v1 itself, sends `Authorization: Bearer`, and
// throws the response on any non-2xx answer.
import { giteaApi } from "gitea-js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let alice: ReturnType<typeof giteaApi>
let bob: ReturnType<typeof giteaApi>

const file = (content: string) => Buffer.from(content).toString("base64")

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob"].map((username) => createUser(hearth, { username })))
  alice = giteaApi(hearth.base, { token: await createToken(hearth, "alice") })
  bob = giteaApi(hearth.base, { token: await createToken(hearth, "bob") })
  expect(
    (await request(hearth, "POST", "/user/repos", basic("alice"), { name: "tools", auto_init: true })).status
  ).toBe(201)
  const files = [
    { operation: "create", path: "main.go", content: file("package main\n") },
    { operation: "create", path: "lib/util.go", content: file("package lib\n\nfunc X() {}\n") },
    { operation: "create", path: "web/app.ts", content: file("export const x = 1\n") }
  ]
  const res = await request(hearth, "POST", "/repos/alice/tools/contents", basic("alice"), {
    files,
    message: "code",
    new_branch: "feature/x"
  })
  expect(res.status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("gitea-js", () => {
  it("replaces, adds, lists and searches topics; an invalid one is refused with Forgejo's body", async () => {
    await alice.repos.repoUpdateTopics("alice", "tools", { topics: ["Go", "cli"] })
    await alice.repos.repoAddTopic("alice", "tools", "forge")
    expect((await alice.repos.repoListTopics("alice", "tools")).data.topics).toEqual(["cli", "forge", "go"])
    expect((await alice.repos.repoGet("alice", "tools")).data.topics).toEqual(
      expect.arrayContaining(["cli", "forge", "go"])
    )
    const found = (await alice.topics.topicSearch({ q: "forg" })).data as unknown as {
      topics: Array<{ topic_name: string }>
    }
    expect(found.topics.map((t) => t.topic_name)).toEqual(["forge"])
    const refused = await alice.repos.repoAddTopic("alice", "tools", "-bad-").catch((e: { status: number }) => e)
    expect(refused.status).toBe(422)
    // bob may read, not change them.
    const denied = await bob.repos.repoAddTopic("alice", "tools", "mine").catch((e: { status: number }) => e)
    expect(denied.status).toBe(403)
    expect((await alice.repos.repoListTopics("alice", "tools")).data.topics).toEqual(["cli", "forge", "go"])
  })

  it("reads a commit by branch name (with a '/') and pages the commit list with Forgejo's headers", async () => {
    const byBranch = await alice.repos.repoGetSingleCommit("alice", "tools", "feature/x")
    expect(byBranch.data.commit?.message?.trim()).toBe("code")
    const page = await alice.repos.repoGetAllCommits("alice", "tools", { sha: "feature/x", limit: 1 })
    expect(page.data).toHaveLength(1)
    expect(page.headers.get("x-total")).toBe("2")
    expect(page.headers.get("x-hasmore")).toBe("true")
    expect(page.headers.get("x-pagecount")).toBe("2")
  })

  it("counts the bytes of each language of the default branch", async () => {
    const merged = await request(hearth, "POST", "/repos/alice/tools/contents", basic("alice"), {
      files: [{ operation: "create", path: "cmd.go", content: file("package cmd\n") }],
      message: "go on main"
    })
    expect(merged.status).toBe(201)
    expect((await alice.repos.repoGetLanguages("alice", "tools")).data).toEqual({ Go: 12 })
  })

  it("forks into an account that then watches it, and the fork is readable at once", async () => {
    const fork = await bob.repos.createFork("alice", "tools", {})
    expect(fork.status).toBe(202)
    expect(fork.data.full_name).toBe("bob/tools")
    const readme = await bob.repos.repoGetContents("bob", "tools", "README.md")
    expect(readme.status).toBe(200)
    const watchers = (await bob.repos.repoListSubscribers("bob", "tools")).data.map((u) => u.login)
    expect(watchers).toEqual(["bob"])
  })

  it("reads the instance's settings, changes the user's own, and lists assignees and reviewers (issue 23)", async () => {
    const api = (await alice.settings.getGeneralApiSettings()).data
    expect(api).toMatchObject({ default_paging_num: 30, max_response_items: 50 })
    expect((await alice.settings.getGeneralRepositorySettings()).data.lfs_disabled).toBe(true)
    const changed = (await alice.user.updateUserSettings({ location: "Lyon", theme: "dark" })).data
    expect(changed).toMatchObject({ location: "Lyon", theme: "dark" })
    expect((await alice.user.getUserSettings()).data.location).toBe("Lyon")
    await alice.repos.repoAddCollaborator("alice", "tools", "bob", { permission: "write" })
    const assignees = (await alice.repos.repoGetAssignees("alice", "tools")).data.map((u) => u.login)
    expect(assignees).toEqual(["alice", "bob"])
    const reviewers = (await alice.repos.repoGetReviewers("alice", "tools")).data.map((u) => u.login)
    expect(reviewers).toEqual(["bob"])
  })
})

// Notifications (src/notifications; Forgejo's routers/api/v1/notify, CONTRACT-ISSUES §16.2): who
// gets a thread for an issue's activity and who never does (the doer, someone who blocked the
// doer, someone who may not read the repository, a mention in a private repository), read and
// unread, the filters, the counts and the thread routes.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const as = (user: string) => basic(user)
const call = (user: string, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, as(user), body)

const threads = async (user: string, query = "") => {
  const res = await call(user, "GET", `/notifications${query}`)
  expect(res.status).toBe(200)
  return { list: (await json(res)) as Array<any>, total: Number(res.headers.get("x-total-count")) }
}
const titles = async (user: string, query = "") => (await threads(user, query)).list.map((t) => t.subject.title)

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["owner", "watcher", "commenter", "mentioned", "blocker", "outsider", "member", "reader"]) {
    await createUser(hearth, { username })
  }
  expect((await call("owner", "POST", "/user/repos", { name: "pub" })).status).toBe(201)
  expect((await call("owner", "POST", "/user/repos", { name: "priv", private: true })).status).toBe(201)
  expect((await call("owner", "PUT", "/repos/owner/priv/collaborators/member", { permission: "read" })).status).toBe(
    204
  )
  for (const user of ["watcher", "blocker"]) {
    expect((await call(user, "PUT", "/repos/owner/pub/subscription")).status).toBe(200)
  }
  // The blocker blocks the commenter: activity by the commenter never reaches them.
  expect((await call("blocker", "PUT", "/user/block/commenter")).status).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

describe("who is notified", () => {
  it("a new issue: the repository's watchers and the mentioned, never the doer", async () => {
    const res = await call("owner", "POST", "/repos/owner/pub/issues", { title: "first", body: "hi @mentioned" })
    expect(res.status).toBe(201)
    expect(await titles("watcher")).toEqual(["first"])
    expect(await titles("blocker")).toEqual(["first"])
    expect(await titles("mentioned")).toEqual(["first"])
    // The owner watches their own repository, but made the change.
    expect(await titles("owner")).toEqual([])
    expect(await titles("outsider")).toEqual([])
  })

  it("a comment: participants and watchers, never who blocked the commenter; the thread comes back unread", async () => {
    const issue = await json(await call("watcher", "POST", "/repos/owner/pub/issues", { title: "second" }))
    const thread = (await threads("owner")).list.find((t) => t.subject.title === "second")
    expect(thread).toMatchObject({ unread: true, pinned: false })
    expect((await call("owner", "PATCH", `/notifications/threads/${thread.id}`)).status).toBe(205)
    expect((await threads("owner")).list.map((t) => t.subject.title)).not.toContain("second")

    const comment = await call("commenter", "POST", `/repos/owner/pub/issues/${issue.number}/comments`, {
      body: "me too"
    })
    expect(comment.status).toBe(201)
    const commentId = (await json(comment)).id
    // The poster (a participant and watcher) and the owner (a watcher, read before) are notified again.
    const back = (await threads("owner")).list.find((t) => t.subject.title === "second")
    expect(back).toMatchObject({ id: thread.id, unread: true })
    expect(back.subject.latest_comment_url).toMatch(new RegExp(`/api/v1/repos/owner/pub/issues/comments/${commentId}$`))
    expect(await titles("watcher")).toContain("second")
    // The blocker watches the repository but blocked the commenter: only the issue's opening reached them.
    const blockerThread = (await threads("blocker")).list.find((t) => t.subject.title === "second")
    expect(blockerThread).toMatchObject({ unread: true })
    expect((await call("blocker", "PATCH", `/notifications/threads/${blockerThread.id}`)).status).toBe(205)
    await call("commenter", "POST", `/repos/owner/pub/issues/${issue.number}/comments`, { body: "again" })
    expect(await titles("blocker")).not.toContain("second")
    expect(await titles("commenter")).toEqual([])
  })

  it("a private repository notifies nobody outside it, even when mentioned", async () => {
    const res = await call("owner", "POST", "/repos/owner/priv/issues", {
      title: "secret",
      body: "@outsider @member look"
    })
    expect(res.status).toBe(201)
    expect(await titles("outsider")).toEqual([])
    expect(await titles("member")).toEqual(["secret"])
    expect((await call("outsider", "GET", "/repos/owner/priv/notifications")).status).toBe(404)
    // A watcher of a repository made private since keeps the watch but is notified no more.
    expect((await call("owner", "POST", "/user/repos", { name: "turned" })).status).toBe(201)
    expect((await call("outsider", "PUT", "/repos/owner/turned/subscription")).status).toBe(200)
    expect((await call("owner", "PATCH", "/repos/owner/turned", { private: true })).status).toBe(200)
    expect((await call("owner", "POST", "/repos/owner/turned/issues", { title: "hidden" })).status).toBe(201)
    expect(await titles("outsider")).toEqual([])
  })

  it("an assignment notifies the assignee", async () => {
    expect((await call("owner", "PUT", "/repos/owner/pub/collaborators/reader", { permission: "write" })).status).toBe(
      204
    )
    const issue = await json(await call("owner", "POST", "/repos/owner/pub/issues", { title: "assigned" }))
    expect(await titles("reader")).toEqual([])
    const edit = await call("owner", "PATCH", `/repos/owner/pub/issues/${issue.number}`, { assignees: ["reader"] })
    expect(edit.status).toBe(201)
    expect(await titles("reader")).toEqual(["assigned"])
  })
})

describe("reading them", () => {
  it("lists newest first with the thread's shape, and counts the unread", async () => {
    const { list, total } = await threads("watcher")
    expect(total).toBe(list.length)
    expect(list[0]).toMatchObject({
      subject: { type: "Issue", state: "open", title: expect.any(String) },
      repository: { full_name: "owner/pub" },
      url: expect.stringMatching(/\/api\/v1\/notifications\/threads\/\d+$/)
    })
    const times = list.map((t) => Date.parse(t.updated_at))
    expect([...times].sort((a, b) => b - a)).toEqual(times)
    const count = await json(await call("watcher", "GET", "/notifications/new"))
    expect(count).toEqual({ new: list.filter((t) => t.unread).length })
  })

  it("paging, status filters, subject types and since/before", async () => {
    const page = await threads("watcher", "?limit=1&page=1")
    expect(page.list).toHaveLength(1)
    expect(page.total).toBeGreaterThan(1)
    expect((await threads("watcher", "?subject-type=pull")).list).toEqual([])
    expect((await threads("watcher", "?subject-type=issue")).total).toBe(page.total)
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, "Z")
    expect((await threads("watcher", `?since=${future}`)).list).toEqual([])
    expect((await threads("watcher", `?before=${future}`)).total).toBe(page.total)
    expect((await call("watcher", "GET", "/notifications?since=yesterday")).status).toBe(422)
  })

  it("PUT marks them read (not those newer than last_read_at); read ones show with all=true or status-types=read", async () => {
    const before = (await threads("mentioned")).total
    expect(before).toBeGreaterThan(0)
    const past = "2000-01-01T00:00:00Z"
    // 205 Reset Content: fetch (as browsers) gives such a response no body, so the effect is read back.
    expect((await call("mentioned", "PUT", `/notifications?last_read_at=${past}`)).status).toBe(205)
    expect((await threads("mentioned")).total).toBe(before)
    expect((await call("mentioned", "PUT", "/notifications")).status).toBe(205)
    expect((await threads("mentioned")).list).toEqual([])
    const changed = (await threads("mentioned", "?all=true")).list
    expect(changed[0]).toMatchObject({ unread: false })
    expect((await threads("mentioned", "?all=true")).total).toBe(before)
    expect((await threads("mentioned", "?status-types=read&status-types=pinned")).total).toBe(before)
    expect(await json(await call("mentioned", "GET", "/notifications/new"))).toEqual({ new: 0 })
    // Pinned, then back to unread.
    const id = changed[0].id
    expect((await call("mentioned", "PATCH", `/notifications/threads/${id}?to-status=pinned`)).status).toBe(205)
    const pinned = await json(await call("mentioned", "GET", `/notifications/threads/${id}`))
    expect(pinned).toMatchObject({ id, pinned: true, unread: false })
    expect((await threads("mentioned")).list.map((t) => t.id)).toEqual([id])
    await call("mentioned", "PATCH", `/notifications/threads/${id}?to-status=unread`)
    expect(await json(await call("mentioned", "GET", "/notifications/new"))).toEqual({ new: 1 })
  })

  it("a thread is its user's: others get 403, unknown ids 404, anonymous 401", async () => {
    const id = (await threads("watcher")).list[0].id
    expect((await call("watcher", "GET", `/notifications/threads/${id}`)).status).toBe(200)
    expect((await call("outsider", "GET", `/notifications/threads/${id}`)).status).toBe(403)
    expect((await call("outsider", "PATCH", `/notifications/threads/${id}`)).status).toBe(403)
    expect((await call("watcher", "GET", "/notifications/threads/999999")).status).toBe(404)
    expect((await request(hearth, "GET", "/notifications")).status).toBe(401)
  })

  it("the repository routes list and mark only that repository's threads", async () => {
    const res = await call("member", "GET", "/repos/owner/priv/notifications")
    expect(res.status).toBe(200)
    expect((await json(res)).map((t: any) => t.subject.title)).toEqual(["secret"])
    expect(await call("member", "GET", "/repos/owner/pub/notifications").then(json)).toEqual([])
    expect((await call("member", "PUT", "/repos/owner/priv/notifications")).status).toBe(205)
    expect(await titles("member")).toEqual([])
  })
})

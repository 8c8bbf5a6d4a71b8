// Issue 22, notifications in the browser over plain HTTP: `/notifications` (unread/read/pinned
// tabs) of the signed-in account, marking a thread read, unread and pinned, marking all read, the
// unread count in the header of every page; someone else's thread is a 404 and changes nothing;
// a visitor is asked to sign in; the XSS corpus in the titles shown. Read back through the API.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { executable } from "./support/escaping.ts"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
const web = () => new WebClient(hearth.base)
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const threadsOf = async (user: string) =>
  (await api(
    "GET",
    "/notifications?all=true&status-types=unread&status-types=read&status-types=pinned&limit=50",
    user
  )) as Array<Record<string, any>>

const count = (text: string) => /data-testid="unread-count">(\d+)</.exec(text)?.[1]

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  for (const title of ["Weeds", "Roses", "Tulips"])
    await api("POST", "/repos/alice/garden/issues", "alice", { title, body: "Have a look, @bob." })
}, 120_000)

afterAll(async () => {
  await hearth?.close()
})

describe("notifications", () => {
  it("a visitor is asked to sign in", async () => {
    const res = await web().get("/notifications")
    expect(res.status).toBe(302)
    expect(res.location).toBe("/user/login?redirect_to=%2Fnotifications")
  })

  it("lists the unread threads and shows the unread count in the header of every page", async () => {
    const bob = await as("bob")
    const page = await bob.get("/notifications")
    expect(page.status).toBe(200)
    const titles = [...page.text.matchAll(/data-testid="notification-title">[\s\S]*?<\/svg> ([^<]*)</g)].map(
      (m) => m[1]
    )
    expect(titles.sort()).toEqual(["Roses", "Tulips", "Weeds"])
    expect(page.text).toMatch(/href="http:\/\/[^"]+\/alice\/garden\/issues\/1"/)
    for (const path of ["/notifications", "/explore/repos", "/alice/garden", "/alice/garden/labels"])
      expect(count((await bob.get(path)).text), path).toBe("3")
    // None for one without notifications.
    const dave = await as("dave")
    const none = await dave.get("/notifications")
    expect(none.text).toContain('data-testid="no-notifications"')
    expect(count(none.text)).toBeUndefined()
    expect(none.text).toContain('data-testid="notifications-link"')
  })

  it("marks a thread read, unread and pinned; unpinning marks it read", async () => {
    const bob = await as("bob")
    const weeds = (await threadsOf("bob")).find((t) => t.subject.title === "Weeds")!
    const read = await bob.submit(
      "/notifications",
      { notification_id: String(weeds.id), status: "read", type: "unread" },
      "/notifications/status"
    )
    expect(read.status).toBe(303)
    expect(read.location).toBe("/notifications")
    const after = await bob.get("/notifications")
    expect(count(after.text)).toBe("2")
    expect(after.text).not.toContain(`id="notification-${weeds.id}"`)
    const readTab = await bob.get("/notifications?type=read")
    expect(readTab.text).toContain(`id="notification-${weeds.id}"`)

    await bob.submit(
      "/notifications?type=read",
      { notification_id: String(weeds.id), status: "pinned", type: "read" },
      "/notifications/status"
    )
    expect((await threadsOf("bob")).find((t) => t.id === weeds.id)!.pinned).toBe(true)
    const pinned = await bob.get("/notifications?type=pinned")
    expect(pinned.text).toContain(`id="notification-${weeds.id}"`)
    expect(pinned.text).toContain('data-testid="mark-read"')

    await bob.submit(
      "/notifications?type=pinned",
      { notification_id: String(weeds.id), status: "read", type: "pinned" },
      "/notifications/status"
    )
    const unpinned = (await threadsOf("bob")).find((t) => t.id === weeds.id)!
    expect(unpinned).toMatchObject({ pinned: false, unread: false })

    await bob.submit(
      "/notifications?type=read",
      { notification_id: String(weeds.id), status: "unread", type: "read" },
      "/notifications/status"
    )
    expect(count((await bob.get("/notifications")).text)).toBe("3")
  })

  it("someone else's thread is a 404 and stays as it is; a bad status is a 400", async () => {
    const [thread] = await threadsOf("bob")
    const dave = await as("dave")
    const csrf = csrfOf((await dave.get("/notifications")).text)
    const res = await dave.post("/notifications/status", { notification_id: String(thread!.id), status: "read" }, csrf)
    expect(res.status).toBe(404)
    expect((await threadsOf("bob")).find((t) => t.id === thread!.id)!.unread).toBe(true)
    const bob = await as("bob")
    const bad = await bob.submit(
      "/notifications",
      { notification_id: String(thread!.id), status: "gone" },
      "/notifications/status"
    )
    expect(bad.status).toBe(400)
    expect((await threadsOf("bob")).find((t) => t.id === thread!.id)!.unread).toBe(true)
  })

  it("marks all read", async () => {
    const bob = await as("bob")
    const res = await bob.submit("/notifications", {}, "/notifications/purge")
    expect(res.status).toBe(303)
    const page = await bob.get("/notifications")
    expect(page.text).toContain('data-testid="no-notifications"')
    expect(count(page.text)).toBeUndefined()
    expect((await threadsOf("bob")).every((t) => !t.unread)).toBe(true)
  })

  it("shows hostile titles as text", async () => {
    for (const text of corpus)
      await api("POST", "/repos/alice/garden/issues", "alice", { title: text.slice(0, 255), body: "@carol" })
    const carol = await as("carol")
    for (let page = 1; page <= Math.ceil(corpus.length / 20); page++) {
      const res = await carol.get(`/notifications?page=${page}`)
      expect(res.status).toBe(200)
      expect(res.text).toContain('data-testid="notification"')
      expect(executable(res.text)).toEqual([])
    }
  }, 120_000)
})

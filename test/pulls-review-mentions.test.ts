// Mentions in reviews (issue 19; CONTRACT-PULLS §15.3; Forgejo's SubmitReview →
// notify.PullRequestReview and PullRequestCodeComment with the mentions of each text): `@user` in a
// review's body or in one of its inline comments notifies that user as an issue comment's mention
// does — when the review is submitted (a pending review's comments wait for it), and only users who
// may read the repository (a private repository's mention of a stranger notifies nobody). Review
// comment answers always carry `resolver` (null: nobody resolves through the API).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const index: Record<string, number> = {}

const call = (method: string, path: string, user?: string, body?: unknown) =>
  request(hearth, method, path, user === undefined ? undefined : basic(user), body)

/** The pull request threads `user` has (read or not), by title. */
const threadsOf = async (user: string) => {
  const res = await call("GET", "/notifications?all=true", user)
  expect(res.status).toBe(200)
  return ((await json(res)) as Array<{ subject: { title: string; type: string } }>)
    .filter((t) => t.subject.type === "Pull")
    .map((t) => t.subject.title)
}

const review = async (repo: string, body: unknown, user = "bob") => {
  const res = await call("POST", `/repos/alice/${repo}/pulls/${index[repo]}/reviews`, user, body)
  expect(res.status, await res.clone().text()).toBe(200)
  return json(res)
}

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(
    ["alice", "bob", "carol", "dave", "erin", "frank", "gina"].map((username) => createUser(hearth, { username }))
  )
  for (const [name, extra] of [
    ["app", {}],
    ["secret", { private: true }]
  ] as const) {
    expect((await call("POST", "/user/repos", "alice", { name, auto_init: true, ...extra })).status).toBe(201)
    const made = await call("POST", `/repos/alice/${name}/contents/f.txt`, "alice", {
      content: Buffer.from("one\ntwo\n").toString("base64"),
      branch: "main",
      new_branch: "topic",
      message: "add f.txt"
    })
    expect(made.status).toBe(201)
    const res = await call("POST", `/repos/alice/${name}/pulls`, "alice", {
      head: "topic",
      base: "main",
      title: `Topic of ${name}`
    })
    expect(res.status).toBe(201)
    index[name] = (await json(res)).number
  }
  // bob reviews the private repository; carol reads it; dave is a stranger to it.
  for (const [user, permission] of [
    ["bob", "read"],
    ["carol", "read"]
  ] as const) {
    expect((await call("PUT", `/repos/alice/secret/collaborators/${user}`, "alice", { permission })).status).toBe(204)
  }
}, 120_000)
afterAll(() => hearth?.close())

describe("mentions in reviews notify the mentioned readers", () => {
  it("in the body of a submitted review", async () => {
    expect(await threadsOf("carol")).toEqual([])
    await review("app", { event: "COMMENT", body: "@carol what do you think?" })
    expect(await threadsOf("carol")).toEqual(["Topic of app"])
    // Nobody else is told but the participants (alice, the poster).
    expect(await threadsOf("frank")).toEqual([])
    expect(await threadsOf("alice")).toEqual(["Topic of app"])
  })

  it("in an inline comment of a submitted review", async () => {
    await review("app", {
      event: "COMMENT",
      body: "",
      comments: [{ path: "f.txt", body: "@erin is this line right?", new_position: 2 }]
    })
    expect(await threadsOf("erin")).toEqual(["Topic of app"])
  })

  it("in a pending review's comments only once it is submitted", async () => {
    const pending = await review("app", {
      event: "PENDING",
      body: "to come",
      comments: [{ path: "f.txt", body: "cc @gina", new_position: 1 }]
    })
    expect(await threadsOf("gina")).toEqual([])
    const submitted = await call("POST", `/repos/alice/app/pulls/${index.app}/reviews/${pending.id}`, "bob", {
      event: "COMMENT",
      body: "done"
    })
    expect(submitted.status, await submitted.clone().text()).toBe(200)
    expect(await threadsOf("gina")).toEqual(["Topic of app"])
  })

  it("in a private repository, only those who may read it", async () => {
    await review("secret", {
      event: "COMMENT",
      body: "@carol and @dave, have a look",
      comments: [{ path: "f.txt", body: "@dave here", new_position: 1 }]
    })
    expect(await threadsOf("carol")).toContain("Topic of secret")
    expect(await threadsOf("dave")).toEqual([])
  })
})

describe("review comments carry resolver", () => {
  it("as null in every answer (list, get, add)", async () => {
    const made = await review("app", {
      event: "COMMENT",
      body: "",
      comments: [{ path: "f.txt", body: "a remark", new_position: 1 }]
    })
    const base = `/repos/alice/app/pulls/${index.app}/reviews/${made.id}/comments`
    const listed = (await json(await call("GET", base, "alice"))) as Array<Record<string, unknown>>
    expect(listed).toHaveLength(1)
    expect(listed[0]).toHaveProperty("resolver", null)
    const one = await json(await call("GET", `${base}/${listed[0]!.id}`, "alice"))
    expect(one).toHaveProperty("resolver", null)
    const added = await call("POST", base, "bob", { path: "f.txt", body: "another", new_position: 2 })
    expect(added.status).toBe(200)
    expect(await json(added)).toHaveProperty("resolver", null)
  })
})

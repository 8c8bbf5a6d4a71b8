// The tracker's events on the hub (src/events, CONTRACT-ISSUES §16.1): the service publishes an
// `Issues` event for each change with Forgejo's action names, and an `IssueComment` event for each
// comment created, edited or deleted, after the change committed; none for label or milestone CRUD.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
const seen: Array<Event> = []
const alice = basic("alice")
const api = (method: string, path: string, body?: unknown) =>
  request(hearth, method, `/repos/alice/ev${path}`, alice, body)

/** What was published since `from`, as `tag:action` (with the changes' keys for edits). */
const since = (from: number) =>
  seen.slice(from).flatMap((e) => {
    if (e._tag === "Issues") return [`issues:${e.action}${e.changes ? `:${Object.keys(e.changes).join(",")}` : ""}`]
    if (e._tag === "IssueComment") return [`comment:${e.action}`]
    return []
  })

beforeAll(async () => {
  hearth = await startHearth()
  const hub = await hearth.run(Effect.service(EventHub))
  await hearth.run(hub.subscribe({ name: "collector", handle: (event) => Effect.sync(() => void seen.push(event)) }))
  await Promise.all(["alice", "writer"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/user/repos", alice, { name: "ev" })).status).toBe(201)
  expect((await api("PUT", "/collaborators/writer", { permission: "write" })).status).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

describe("Issues and IssueComment events", () => {
  it("an issue's life: opened, label_updated, milestoned, assigned, closed, edited, reopened, label_cleared", async () => {
    const label = await json(await api("POST", "/labels", { name: "x", color: "123456" }))
    const milestone = await json(await api("POST", "/milestones", { title: "m" }))
    const from = seen.length
    const issue = await json(
      await api("POST", "/issues", {
        title: "t",
        labels: [label.id],
        milestone: milestone.id,
        assignees: ["writer"],
        closed: true
      })
    )
    expect(since(from)).toEqual([
      "issues:opened",
      "issues:label_updated",
      "issues:milestoned",
      "issues:assigned",
      "issues:closed"
    ])
    const opened = seen.slice(from).find((e) => e._tag === "Issues")!
    expect(opened).toMatchObject({
      repo: { name: "ev", ownerName: "alice", private: false },
      doer: { name: "alice" },
      issue: { index: issue.number, isPull: false }
    })
    const next = seen.length
    await api("PATCH", `/issues/${issue.number}`, {
      title: "t2",
      body: "b",
      state: "open",
      milestone: 0,
      assignees: []
    })
    expect(since(next)).toEqual([
      "issues:edited:title",
      "issues:edited:body",
      "issues:unassigned",
      "issues:demilestoned",
      "issues:reopened"
    ])
    const edited = seen.slice(next).find((e) => e._tag === "Issues" && e.action === "edited")
    expect(edited).toMatchObject({ changes: { title: { from: "t" } } })
    const last = seen.length
    await api("PUT", `/issues/${issue.number}/labels`, { labels: [label.id] })
    await api("DELETE", `/issues/${issue.number}/labels`)
    expect(since(last)).toEqual(["issues:label_updated", "issues:label_cleared"])
  })

  it("comments: created, edited (with the old body), deleted", async () => {
    const issue = await json(await api("POST", "/issues", { title: "c" }))
    const from = seen.length
    const comment = await json(await api("POST", `/issues/${issue.number}/comments`, { body: "one" }))
    await api("PATCH", `/issues/comments/${comment.id}`, { body: "two" })
    await api("DELETE", `/issues/comments/${comment.id}`)
    expect(since(from)).toEqual(["comment:created", "comment:edited", "comment:deleted"])
    const edited = seen.slice(from).find((e) => e._tag === "IssueComment" && e.action === "edited")
    expect(edited).toMatchObject({ comment: { id: comment.id }, changes: { body: { from: "one" } } })
  })

  it("nothing for label and milestone CRUD, a refused change or an issue delete", async () => {
    const issue = await json(await api("POST", "/issues", { title: "quiet" }))
    const from = seen.length
    const label = await json(await api("POST", "/labels", { name: "q", color: "123456" }))
    await api("PATCH", `/labels/${label.id}`, { name: "q2" })
    await api("POST", "/milestones", { title: "q" })
    const refused = await request(hearth, "PATCH", `/repos/alice/ev/issues/${issue.number}`, basic("writer"), {
      title: "no",
      updated_at: issue.created_at
    })
    expect(refused.status).toBe(403)
    await api("DELETE", `/issues/${issue.number}`)
    expect(since(from)).toEqual([])
  })
})

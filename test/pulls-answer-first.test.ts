// A merge is answered before the work its caller need not see (issue 19, "Speed": the merge within
// 1.5× of git by hand): the activity feed, the notifications, the push mirrors and the languages
// wait until the answer is written (src/lib/AfterAnswer.ts, the hub's `afterAnswer` subscribers),
// then follow. A subscriber of the test's own, in the request, sees that the feed has no row of the
// merge yet when the merged pull request's event goes by; one marked `afterAnswer` that does not
// return until the test lets it does not hold up the merge's answer, and still gets every event
// with the rows the merge holds. Other changes (here closing an issue) run such subscribers before
// their answer, as before.
import { Deferred, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { opNumber } from "../src/activities/Ops.ts"
import type { Event } from "../src/events/Events.ts"
import { EventHub, type Known } from "../src/events/Hub.ts"
import { eventually } from "./support/federation.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn } from "./support/web.ts"

let hearth: Hearth
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms))
const call = (method: string, path: string, user: string, body?: unknown) =>
  request(hearth, method, path, basic(user), body)

/** The feed's rows of merges in alice/app. */
const mergeRows = () =>
  hearth.sql(
    (sql) =>
      sql`SELECT a.id FROM actions a JOIN repositories r ON r.id = a.repo_id
        WHERE r.lower_name = 'app' AND a.op_type = ${opNumber("merge_pull_request")}`
  ) as Promise<ReadonlyArray<unknown>>

const isMerged = (event: Event) => event._tag === "Issues" && event.action === "closed" && event.merged === true

/** What the test's in-request subscriber found when the merged pull request's event went by. */
let feedRowsInRequest: number | undefined
/** Every event the late subscriber handled, with the rows it was given. */
const late: Array<{ readonly event: Event; readonly known: Known }> = []
/** While set, the late subscriber waits on it at a merged pull request's event. */
let gate: Deferred.Deferred<void> | undefined

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  expect((await call("POST", "/user/repos", "alice", { name: "app", auto_init: true })).status).toBe(201)
  expect((await call("PUT", "/repos/alice/app/collaborators/bob", "alice", { permission: "write" })).status).toBe(204)
  const hub = await hearth.run(Effect.service(EventHub))
  await hearth.run(
    hub.subscribe({
      name: "test: the feed in the request",
      handle: (event) =>
        isMerged(event)
          ? Effect.promise(async () => {
              feedRowsInRequest = (await mergeRows()).length
            })
          : Effect.void
    })
  )
  await hearth.run(
    hub.subscribe({
      name: "test: after the answer",
      afterAnswer: true,
      handle: (event, known) =>
        Effect.gen(function* () {
          late.push({ event, known })
          if (isMerged(event) && gate !== undefined) yield* Deferred.await(gate)
        })
    })
  )
}, 120_000)
afterAll(() => hearth?.close())

/** bob's pull request of a new branch of alice/app changing `file`. */
const openPull = async (branch: string, file: string) => {
  const made = await call("POST", `/repos/alice/app/contents/${file}`, "bob", {
    content: Buffer.from(`${branch}\n`).toString("base64"),
    branch: "main",
    new_branch: branch,
    message: `add ${file}`
  })
  expect(made.status).toBe(201)
  const res = await call("POST", "/repos/alice/app/pulls", "bob", { head: branch, base: "main", title: branch })
  expect(res.status).toBe(201)
  return (await json(res)).number as number
}

describe("a merge's answer comes before its feed, notifications and languages", () => {
  it("the feed's row is written after the answer, and a late subscriber does not hold the answer up", async () => {
    const index = await openPull("topic", "topic.txt")
    const gateOpen = await Effect.runPromise(Deferred.make<void>())
    gate = gateOpen
    late.length = 0
    try {
      const merging = call("POST", `/repos/alice/app/pulls/${index}/merge`, "alice", { Do: "merge" })
      const answer = await Promise.race([merging, sleep(10_000).then(() => "held up by the late subscriber")])
      expect(typeof answer === "string" ? answer : answer.status).toBe(200)
      // In the request the feed had nothing of the merge yet (on main it had its row).
      expect(feedRowsInRequest).toBe(0)
      // Answered while the late subscriber still waits at the merged pull request's event.
      await eventually(async () => late.some((l) => isMerged(l.event)) || undefined)
    } finally {
      await Effect.runPromise(Deferred.succeed(gateOpen, undefined))
      gate = undefined
    }
    // Then it all follows: the feed's row, bob's notification, the languages of the new tip.
    await eventually(async () => ((await mergeRows()).length === 1 ? true : undefined))
    await eventually(async () => {
      const threads = (await json(await call("GET", "/notifications?all=true", "bob"))) as Array<{
        subject: { title: string }
      }>
      return threads.some((t) => t.subject.title === "topic") || undefined
    })
    // The late subscriber got the push and the merged pull request, with the rows the merge holds.
    const push = late.find((l) => l.event._tag === "PushCommits")
    expect(push?.known.repo?.name).toBe("app")
    expect(push?.known.owner?.name).toBe("alice")
    const merged = late.find((l) => isMerged(l.event))
    expect(merged?.known.issue?.isClosed).toBe(true)
  })

  it("the web interface's merge button answers first too", async () => {
    const index = await openPull("web-topic", "web-topic.txt")
    const alice = await signedIn(hearth.base, "alice")
    const field = (page: string, name: string) => new RegExp(`name="${name}" value="([^"]*)"`).exec(page)?.[1] ?? ""
    // The merge box, once the pull request's check has run.
    const page = await eventually(async () => {
      const shown = await alice.get(`/alice/app/pulls/${index}`)
      return field(shown.text, "head_commit_id") !== "" && field(shown.text, "base_commit_id") !== ""
        ? shown
        : undefined
    })
    const gateOpen = await Effect.runPromise(Deferred.make<void>())
    gate = gateOpen
    late.length = 0
    try {
      const merging = alice.post(
        `/alice/app/pulls/${index}/merge`,
        {
          do: "merge",
          head_commit_id: field(page.text, "head_commit_id"),
          base_commit_id: field(page.text, "base_commit_id")
        },
        csrfOf(page.text)
      )
      const answer = await Promise.race([merging, sleep(10_000).then(() => "held up by the late subscriber")])
      expect(typeof answer === "string" ? answer : answer.status).toBe(303)
      await eventually(async () => late.some((l) => isMerged(l.event)) || undefined)
    } finally {
      await Effect.runPromise(Deferred.succeed(gateOpen, undefined))
      gate = undefined
    }
    expect((await json(await call("GET", `/repos/alice/app/pulls/${index}`, "alice"))).merged).toBe(true)
  })

  it("elsewhere such subscribers run before the answer, as before", async () => {
    const made = await call("POST", "/repos/alice/app/issues", "alice", { title: "an issue" })
    expect(made.status).toBe(201)
    const index = (await json(made)).number as number
    late.length = 0
    const res = await call("PATCH", `/repos/alice/app/issues/${index}`, "alice", { state: "closed" })
    expect(res.status).toBe(201)
    expect(late.map((l) => l.event._tag === "Issues" && l.event.action)).toContain("closed")
  })
})

// Time tracking over real HTTP (Forgejo's issue_tracked_time.go, issue_stopwatch.go): tracked times
// of an issue, a repository and the caller with their filters and X-Total-Count, manual times
// (`user_name` for admins), reset and delete, stopwatches (201/204, 409, 403) and
// /user/stopwatches, the internal tracker settings (off: 404/400; contributors only), the
// permission table (anonymous, reader, poster, writer, admin; private repositories 404), token
// scopes, and the timeline comments with their tracked time.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { secToTime } from "../src/issues/Times.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["owner", "writer", "reader", "poster", "stranger"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  for (const [name, priv] of [
    ["times", false],
    ["secret", true],
    ["off", false],
    ["open", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name, private: priv })).status).toBe(201)
    for (const [who, permission] of [
      ["writer", "write"],
      ["reader", "read"]
    ] as const) {
      expect(
        (await request(hearth, "PUT", `/repos/owner/${name}/collaborators/${who}`, basic("owner"), { permission }))
          .status
      ).toBe(204)
    }
  }
  expect(
    (
      await request(hearth, "PATCH", "/repos/owner/off", basic("owner"), {
        internal_tracker: { enable_time_tracker: false }
      })
    ).status
  ).toBe(200)
  expect(
    (
      await request(hearth, "PATCH", "/repos/owner/open", basic("owner"), {
        internal_tracker: { allow_only_contributors_to_track_time: false }
      })
    ).status
  ).toBe(200)
}, 90_000)
afterAll(() => hearth?.close())

const newIssue = async (repo = "times", who = "owner") => {
  const res = await request(hearth, "POST", `/repos/owner/${repo}/issues`, basic(who), { title: `work in ${repo}` })
  expect(res.status).toBe(201)
  return (await json(res)).number as number
}
const addTime = (n: number, body: unknown, who = "owner", repo = "times") =>
  request(hearth, "POST", `/repos/owner/${repo}/issues/${n}/times`, basic(who), body)
const timesOf = async (path: string, who = "owner") => {
  const res = await request(hearth, "GET", path, basic(who))
  expect(res.status).toBe(200)
  return {
    total: Number(res.headers.get("x-total-count")),
    rows: (await json(res)).map((t: any) => [t.user_name, t.time])
  }
}
const timeline = async (n: number, repo = "times") =>
  (await json(await request(hearth, "GET", `/repos/owner/${repo}/issues/${n}/timeline`, basic("owner")))).map(
    (t: any) => [t.type, t.body, t.tracked_time?.time ?? null]
  )

describe("tracked times", () => {
  it("adds, lists with filters and X-Total-Count, and shows the time in the timeline", async () => {
    const n = await newIssue()
    const added = await addTime(n, { time: 3600, created: "2026-01-02T03:04:05Z" })
    expect(added.status).toBe(200)
    const body = await json(added)
    expect(body).toMatchObject({
      time: 3600,
      created: "2026-01-02T03:04:05Z",
      user_name: "owner",
      issue_id: body.issue.id,
      issue: { number: n, repository: { full_name: "owner/times" } }
    })
    expect((await addTime(n, { time: 60 }, "writer")).status).toBe(200)
    expect(await timesOf(`/repos/owner/times/issues/${n}/times`)).toEqual({
      total: 2,
      rows: [
        ["owner", 3600],
        ["writer", 60]
      ]
    })
    expect((await timesOf(`/repos/owner/times/issues/${n}/times?user=writer`)).rows).toEqual([["writer", 60]])
    expect((await timesOf(`/repos/owner/times/issues/${n}/times?before=2026-06-01T00:00:00Z`)).rows).toEqual([
      ["owner", 3600]
    ])
    expect((await timesOf(`/repos/owner/times/issues/${n}/times?since=2026-06-01T00:00:00Z`)).rows).toEqual([
      ["writer", 60]
    ])
    const paged = await timesOf(`/repos/owner/times/issues/${n}/times?page=2&limit=1`)
    expect(paged).toEqual({ total: 2, rows: [["writer", 60]] })
    expect((await request(hearth, "GET", `/repos/owner/times/issues/${n}/times?since=x`, basic("owner"))).status).toBe(
      422
    )
    expect(
      (await request(hearth, "GET", `/repos/owner/times/issues/${n}/times?user=nobody`, basic("owner"))).status
    ).toBe(404)
    expect(await timeline(n)).toEqual([
      ["add_time_manual", "|3600", 3600],
      ["add_time_manual", "|60", 60]
    ])
    // Bad input changes nothing.
    expect((await addTime(n, { time: 0 })).status).toBe(422)
    expect((await addTime(n, { created: "2026-01-01T00:00:00Z" })).status).toBe(422)
    expect((await addTime(n, { time: 5, created: "yesterday" })).status).toBe(422)
    expect((await timesOf(`/repos/owner/times/issues/${n}/times`)).total).toBe(2)
  })

  it("lets readers see only their own times, and admins book time for others", async () => {
    const n = await newIssue()
    expect((await addTime(n, { time: 10 })).status).toBe(200)
    expect((await addTime(n, { time: 20 }, "writer")).status).toBe(200)
    // The reader (no write) lists only their own (none), and may not name someone else.
    expect(await timesOf(`/repos/owner/times/issues/${n}/times`, "reader")).toEqual({ total: 0, rows: [] })
    const named = await request(hearth, "GET", `/repos/owner/times/issues/${n}/times?user=owner`, basic("reader"))
    expect(named.status).toBe(403)
    expect((await json(named)).message).toBe("query by user not allowed; not enough rights")
    // A repository admin books for the writer; the writer's user_name is ignored.
    expect((await json(await addTime(n, { time: 30, user_name: "writer" }))).user_name).toBe("writer")
    expect((await json(await addTime(n, { time: 40, user_name: "owner" }, "writer"))).user_name).toBe("writer")
    expect((await json(await addTime(n, { time: 50, user_name: "reader" }, "siteadmin"))).user_name).toBe("reader")
    expect((await addTime(n, { time: 5, user_name: "nobody" })).status).toBe(422)
    expect((await timesOf(`/repos/owner/times/issues/${n}/times?user=writer`)).rows).toEqual([
      ["writer", 20],
      ["writer", 30],
      ["writer", 40]
    ])
  })

  it("follows CanUseTimetracker: contributors only by default, anyone who reads where that is off", async () => {
    const n = await newIssue()
    expect((await request(hearth, "POST", `/repos/owner/times/issues/${n}/times`, undefined, { time: 5 })).status).toBe(
      401
    )
    expect((await request(hearth, "GET", `/repos/owner/times/issues/${n}/times`)).status).toBe(401)
    const refused = await addTime(n, { time: 5 }, "reader")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toMatch(/only writers, the poster and assignees/)
    // The poster (no write access) may track time on their own issue.
    expect((await request(hearth, "POST", "/user/repos", basic("poster"), { name: "mine" })).status).toBe(201)
    const own = await newIssue("times", "poster")
    expect((await addTime(own, { time: 5 }, "poster")).status).toBe(200)
    // Where only contributors is off, any reader may.
    const m = await newIssue("open")
    expect((await addTime(m, { time: 5 }, "reader", "open")).status).toBe(200)
    // Private repositories are 404 to strangers.
    const s = await newIssue("secret")
    expect((await addTime(s, { time: 5 }, "stranger", "secret")).status).toBe(404)
    expect((await request(hearth, "GET", `/repos/owner/secret/issues/${s}/times`, basic("stranger"))).status).toBe(404)
    expect((await addTime(s, { time: 5 }, "writer", "secret")).status).toBe(200)
  })

  it("resets the caller's times and deletes one time (its user or a site admin)", async () => {
    const n = await newIssue()
    const mine = await json(await addTime(n, { time: 100 }))
    await addTime(n, { time: 200 })
    const theirs = await json(await addTime(n, { time: 300 }, "writer"))
    const other = await newIssue()
    const elsewhere = await json(await addTime(other, { time: 1 }))

    expect(
      (await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times/${theirs.id}`, basic("owner"))).status
    ).toBe(403)
    expect(
      (await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times/${elsewhere.id}`, basic("owner"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times/${mine.id}`, basic("owner"))).status
    ).toBe(204)
    expect(
      (await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times/${mine.id}`, basic("owner"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times/${theirs.id}`, basic("siteadmin"))).status
    ).toBe(204)
    await addTime(n, { time: 400 })
    expect((await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times`, basic("owner"))).status).toBe(204)
    expect((await request(hearth, "DELETE", `/repos/owner/times/issues/${n}/times`, basic("owner"))).status).toBe(404)
    expect((await timesOf(`/repos/owner/times/issues/${n}/times`)).total).toBe(0)
    expect((await timeline(n)).filter((t: any) => t[0] === "delete_time_manual").map((t: any) => t[1])).toEqual([
      "|100",
      "|300",
      "|600"
    ])
  })

  it("is off where the repository turned time tracking off (404 on the issue's list, 400 elsewhere)", async () => {
    const n = await newIssue("off")
    expect((await request(hearth, "GET", `/repos/owner/off/issues/${n}/times`, basic("owner"))).status).toBe(404)
    const refused = await addTime(n, { time: 5 }, "owner", "off")
    expect(refused.status).toBe(400)
    expect((await json(refused)).message).toBe("time tracking disabled")
    expect((await request(hearth, "GET", "/repos/owner/off/times", basic("owner"))).status).toBe(400)
    expect((await request(hearth, "POST", `/repos/owner/off/issues/${n}/stopwatch/start`, basic("owner"))).status).toBe(
      403
    )
    expect((await json(await request(hearth, "GET", "/repos/owner/off", basic("owner")))).internal_tracker).toEqual({
      enable_time_tracker: false,
      allow_only_contributors_to_track_time: true,
      enable_issue_dependencies: true
    })
  })

  it("lists a repository's times, a user's in a repository (deprecated) and the caller's own", async () => {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "lists" })).status).toBe(201)
    expect(
      (await request(hearth, "PUT", "/repos/owner/lists/collaborators/writer", basic("owner"), { permission: "write" }))
        .status
    ).toBe(204)
    const a = await newIssue("lists")
    const b = await newIssue("lists")
    await addTime(a, { time: 1 }, "owner", "lists")
    await addTime(b, { time: 2 }, "writer", "lists")
    expect(await timesOf("/repos/owner/lists/times")).toEqual({
      total: 2,
      rows: [
        ["owner", 1],
        ["writer", 2]
      ]
    })
    expect((await timesOf("/repos/owner/lists/times?user=writer")).rows).toEqual([["writer", 2]])
    expect((await json(await request(hearth, "GET", "/repos/owner/lists/times/writer", basic("owner")))).length).toBe(1)
    expect((await request(hearth, "GET", "/repos/owner/lists/times/owner", basic("writer"))).status).toBe(403)
    expect((await request(hearth, "GET", "/repos/owner/lists/times/writer", basic("writer"))).status).toBe(200)

    const mine = await request(hearth, "GET", "/user/times?page=1&limit=50", basic("writer"))
    expect(mine.status).toBe(200)
    const rows = await json(mine)
    expect(Number(mine.headers.get("x-total-count"))).toBe(rows.length)
    expect(rows.every((t: any) => t.user_name === "writer")).toBe(true)
    expect(rows.some((t: any) => t.issue?.repository.full_name === "owner/lists")).toBe(true)
    expect((await request(hearth, "GET", "/user/times")).status).toBe(401)

    // Scopes: read:issue reads an issue's times but may not add; /repos/…/times needs repository.
    const readIssue = `token ${await createToken(hearth, "owner", ["read:issue", "read:repository"])}`
    expect((await request(hearth, "GET", `/repos/owner/lists/issues/${a}/times`, readIssue)).status).toBe(200)
    expect((await request(hearth, "POST", `/repos/owner/lists/issues/${a}/times`, readIssue, { time: 1 })).status).toBe(
      403
    )
    const onlyIssue = `token ${await createToken(hearth, "owner", ["read:issue"])}`
    expect((await request(hearth, "GET", "/repos/owner/lists/times", onlyIssue)).status).toBe(403)
    const readUser = `token ${await createToken(hearth, "owner", ["read:user"])}`
    expect((await request(hearth, "GET", "/user/times", readUser)).status).toBe(200)
    expect((await request(hearth, "GET", "/user/stopwatches", readUser)).status).toBe(200)
  })
})

describe("stopwatches", () => {
  it("starts, refuses a second start (409), stops into a tracked time, cancels, and lists the caller's", async () => {
    const n = await newIssue()
    const path = `/repos/owner/times/issues/${n}/stopwatch`
    expect((await request(hearth, "POST", `${path}/start`, basic("owner"))).status).toBe(201)
    const again = await request(hearth, "POST", `${path}/start`, basic("owner"))
    expect(again.status).toBe(409)
    expect((await json(again)).message).toBe("cannot start a stopwatch again if it already exists")
    const listed = await request(hearth, "GET", "/user/stopwatches", basic("owner"))
    expect(listed.headers.get("x-total-count")).toBe("1")
    const [sw] = await json(listed)
    expect(sw).toMatchObject({
      issue_index: n,
      issue_title: "work in times",
      repo_owner_name: "owner",
      repo_name: "times"
    })
    expect(sw.seconds).toBeGreaterThanOrEqual(0)
    expect(typeof sw.duration).toBe("string")

    expect((await request(hearth, "POST", `${path}/stop`, basic("owner"))).status).toBe(201)
    const stopAgain = await request(hearth, "POST", `${path}/stop`, basic("owner"))
    expect(stopAgain.status).toBe(409)
    expect((await json(stopAgain)).message).toBe("cannot stop/cancel a non existent stopwatch")
    expect((await timesOf(`/repos/owner/times/issues/${n}/times`)).total).toBe(1)
    expect(await json(await request(hearth, "GET", "/user/stopwatches", basic("owner")))).toEqual([])

    expect((await request(hearth, "POST", `${path}/start`, basic("owner"))).status).toBe(201)
    expect((await request(hearth, "DELETE", `${path}/delete`, basic("owner"))).status).toBe(204)
    expect((await request(hearth, "DELETE", `${path}/delete`, basic("owner"))).status).toBe(409)
    expect((await timesOf(`/repos/owner/times/issues/${n}/times`)).total).toBe(1)

    const types = (await timeline(n)).map((t: any) => t[0])
    expect(types).toEqual(["start_tracking", "stop_tracking", "start_tracking", "cancel_tracking"])
    const stop = (await timeline(n)).find((t: any) => t[0] === "stop_tracking")
    expect(stop[1]).toMatch(/^\|\d+$/)
    expect(stop[2]).not.toBeNull()
  })

  it("stops the one running elsewhere when another starts, and when its issue is closed", async () => {
    const [a, b] = [await newIssue(), await newIssue()]
    expect(
      (await request(hearth, "POST", `/repos/owner/times/issues/${a}/stopwatch/start`, basic("writer"))).status
    ).toBe(201)
    expect(
      (await request(hearth, "POST", `/repos/owner/times/issues/${b}/stopwatch/start`, basic("writer"))).status
    ).toBe(201)
    expect(
      (await json(await request(hearth, "GET", "/user/stopwatches", basic("writer")))).map((s: any) => s.issue_index)
    ).toEqual([b])
    expect((await timesOf(`/repos/owner/times/issues/${a}/times`, "writer")).total).toBe(1)
    // Closing b stops the closer's stopwatch on it.
    expect(
      (await request(hearth, "PATCH", `/repos/owner/times/issues/${b}`, basic("writer"), { state: "closed" })).status
    ).toBe(201)
    expect(await json(await request(hearth, "GET", "/user/stopwatches", basic("writer")))).toEqual([])
    expect((await timesOf(`/repos/owner/times/issues/${b}/times`, "writer")).total).toBe(1)
  })

  it("is for writers only (403), 404 for a missing issue or an invisible repository", async () => {
    const n = await newIssue()
    const own = await newIssue("times", "poster")
    expect(
      (await request(hearth, "POST", `/repos/owner/times/issues/${n}/stopwatch/start`, basic("reader"))).status
    ).toBe(403)
    expect(
      (await request(hearth, "POST", `/repos/owner/times/issues/${own}/stopwatch/start`, basic("poster"))).status
    ).toBe(403)
    expect((await request(hearth, "POST", `/repos/owner/times/issues/${n}/stopwatch/start`)).status).toBe(401)
    expect(
      (await request(hearth, "POST", "/repos/owner/times/issues/9999/stopwatch/start", basic("owner"))).status
    ).toBe(404)
    const s = await newIssue("secret")
    expect(
      (await request(hearth, "POST", `/repos/owner/secret/issues/${s}/stopwatch/start`, basic("stranger"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "POST", `/repos/owner/secret/issues/${s}/stopwatch/start`, basic("siteadmin"))).status
    ).toBe(201)
  })
})

describe("StopWatch.duration", () => {
  it("is Forgejo's SecToTime: the two largest units", () => {
    expect(secToTime(0)).toBe("")
    expect(secToTime(66)).toBe("1 minute 6 seconds")
    expect(secToTime(3600)).toBe("1 hour")
    expect(secToTime(52410)).toBe("14 hours 33 minutes")
    expect(secToTime(563418)).toBe("6 days 12 hours")
    expect(secToTime(1563418)).toBe("2 weeks 4 days")
    expect(secToTime(3937125)).toBe("1 month 2 weeks")
  })
})

describe("[service] settings", () => {
  it("ENABLE_TIMETRACKING=false turns time tracking off everywhere; the DEFAULT_ keys set what a repository starts with", async () => {
    const other = await startHearth({
      service: {
        ENABLE_TIMETRACKING: "false",
        DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME: "false",
        DEFAULT_ENABLE_DEPENDENCIES: "false"
      }
    })
    try {
      await createUser(other, { username: "owner" })
      expect((await request(other, "POST", "/user/repos", basic("owner"), { name: "r" })).status).toBe(201)
      // Even a repository that asks for it does not track time while the forge does not.
      const patched = await request(other, "PATCH", "/repos/owner/r", basic("owner"), {
        internal_tracker: { enable_time_tracker: true }
      })
      expect((await json(patched)).internal_tracker).toEqual({
        enable_time_tracker: false,
        allow_only_contributors_to_track_time: false,
        enable_issue_dependencies: false
      })
      const issue = await json(await request(other, "POST", "/repos/owner/r/issues", basic("owner"), { title: "t" }))
      const add = await request(other, "POST", `/repos/owner/r/issues/${issue.number}/times`, basic("owner"), {
        time: 5
      })
      expect(add.status).toBe(400)
      expect(
        (await request(other, "GET", `/repos/owner/r/issues/${issue.number}/dependencies`, basic("owner"))).status
      ).toBe(404)
      // A repository may turn dependencies on for itself.
      await request(other, "PATCH", "/repos/owner/r", basic("owner"), {
        internal_tracker: { enable_issue_dependencies: true }
      })
      expect(
        (await request(other, "GET", `/repos/owner/r/issues/${issue.number}/dependencies`, basic("owner"))).status
      ).toBe(200)
    } finally {
      await other.close()
    }
  })
})

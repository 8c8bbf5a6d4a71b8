// Issue subscriptions (CONTRACT-ISSUES §12) over real HTTP: the automatic rule (poster, assignees,
// commenters, repository watchers), explicit subscribe/unsubscribe overriding it with Forgejo's
// 201/200, WatchInfo, who may change whose subscription, and private repositories.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["owner", "poster", "helper", "commenter", "other", "stranger"]) {
    await createUser(hearth, { username })
  }
  await createUser(hearth, { username: "siteadmin", isAdmin: true })
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "pub" })).status).toBe(201)
  expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "priv", private: true })).status).toBe(
    201
  )
  expect(
    (await request(hearth, "PUT", "/repos/owner/pub/collaborators/helper", basic("owner"), { permission: "write" }))
      .status
  ).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

const newIssue = async (repo = "pub", who = "poster", extra: object = {}) =>
  (await json(await request(hearth, "POST", `/repos/owner/${repo}/issues`, basic(who), { title: "t", ...extra })))
    .number as number
const check = async (n: number, who: string, repo = "pub") => {
  const res = await request(hearth, "GET", `/repos/owner/${repo}/issues/${n}/subscriptions/check`, basic(who))
  expect(res.status).toBe(200)
  return json(res)
}
const subscribers = async (n: number) =>
  (await json(await request(hearth, "GET", `/repos/owner/pub/issues/${n}/subscriptions`))).map((u: any) => u.login)

describe("issue subscriptions", () => {
  it("poster, assignees, commenters and repository watchers are subscribed automatically", async () => {
    const n = await newIssue("pub", "owner", { assignees: ["helper"] })
    await request(hearth, "POST", `/repos/owner/pub/issues/${n}/comments`, basic("commenter"), { body: "hi" })
    // The owner watches its new repository (AUTO_WATCH_NEW_REPOS).
    for (const who of ["owner", "helper", "commenter"]) expect((await check(n, who)).subscribed).toBe(true)
    const info = await check(n, "other")
    expect(info.subscribed).toBe(false)
    expect(info.ignored).toBe(true)
    expect(info.reason).toBeNull()
    const issue = await json(await request(hearth, "GET", `/repos/owner/pub/issues/${n}`))
    expect(info.created_at).toBe(issue.created_at)
    expect(info.url).toBe(`${issue.url}/subscriptions`)
    expect(info.repository_url).toMatch(/\/api\/v1\/repos\/owner\/pub$/)
    expect((await subscribers(n)).sort()).toEqual(["commenter", "helper", "owner"])
  })

  it("PUT gives 201 then 200; DELETE gives 201 then 200; the explicit choice wins", async () => {
    const n = await newIssue()
    const path = (user: string) => `/repos/owner/pub/issues/${n}/subscriptions/${user}`
    expect((await request(hearth, "PUT", path("other"), basic("other"))).status).toBe(201)
    expect((await request(hearth, "PUT", path("other"), basic("other"))).status).toBe(200)
    expect((await check(n, "other")).subscribed).toBe(true)
    expect(await subscribers(n)).toContain("other")
    // The poster unsubscribes: the automatic rule no longer applies.
    expect((await request(hearth, "DELETE", path("poster"), basic("poster"))).status).toBe(201)
    expect((await request(hearth, "DELETE", path("poster"), basic("poster"))).status).toBe(200)
    expect((await check(n, "poster")).subscribed).toBe(false)
    expect(await subscribers(n)).not.toContain("poster")
    // Commenting later does not undo an explicit unsubscription.
    await request(hearth, "POST", `/repos/owner/pub/issues/${n}/comments`, basic("poster"), { body: "again" })
    expect((await check(n, "poster")).subscribed).toBe(false)
    const list = await request(hearth, "GET", `/repos/owner/pub/issues/${n}/subscriptions`)
    expect(list.headers.get("x-total-count")).toBe(String((await json(list)).length))
  })

  it("only the user themself or a site admin may change a subscription", async () => {
    const n = await newIssue()
    const path = `/repos/owner/pub/issues/${n}/subscriptions/other`
    const refused = await request(hearth, "PUT", path, basic("poster"))
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("poster is not permitted to change subscriptions for other")
    expect((await check(n, "other")).subscribed).toBe(false)
    expect((await request(hearth, "PUT", path, basic("siteadmin"))).status).toBe(201)
    expect((await check(n, "other")).subscribed).toBe(true)
    expect((await request(hearth, "PUT", path, undefined)).status).toBe(401)
    expect((await request(hearth, "GET", `/repos/owner/pub/issues/${n}/subscriptions/check`)).status).toBe(401)
    expect(
      (await request(hearth, "PUT", `/repos/owner/pub/issues/${n}/subscriptions/nobody`, basic("siteadmin"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "PUT", `/repos/owner/pub/issues/9999/subscriptions/other`, basic("other"))).status
    ).toBe(404)
  })

  it("a private repository's subscriptions are 404 to outsiders", async () => {
    const n = await newIssue("priv", "owner")
    expect(
      (await request(hearth, "GET", `/repos/owner/priv/issues/${n}/subscriptions`, basic("stranger"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "GET", `/repos/owner/priv/issues/${n}/subscriptions/check`, basic("stranger"))).status
    ).toBe(404)
    expect(
      (await request(hearth, "PUT", `/repos/owner/priv/issues/${n}/subscriptions/stranger`, basic("stranger"))).status
    ).toBe(404)
    expect((await check(n, "owner", "priv")).subscribed).toBe(true)
  })
})

// Comments, the timeline and cross-references (CONTRACT-ISSUES §5, §6, §7): per-issue and
// repository-wide lists with since/before, create with the lock and block rules, get/edit/delete
// by id (this repository's only), generated comment types, and references written only into
// issues the author may read.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const alice = basic("alice")
const bob = basic("bob")

const newIssue = async (repo: string, title: string, auth = alice, owner = "alice") => {
  const res = await request(hearth, "POST", `/repos/${owner}/${repo}/issues`, auth, { title })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const comment = async (repo: string, index: number, body: string, auth = alice, owner = "alice") => {
  const res = await request(hearth, "POST", `/repos/${owner}/${repo}/issues/${index}/comments`, auth, { body })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}
const timeline = async (repo: string, index: number, auth?: string, owner = "alice") => {
  const res = await request(hearth, "GET", `/repos/${owner}/${repo}/issues/${index}/timeline`, auth)
  expect(res.status).toBe(200)
  return (await json(res)) as Array<any>
}

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "carol", "writer"].map((username) => createUser(hearth, { username })))
  for (const [name, priv] of [
    ["talk", false],
    ["other", false],
    ["private", true]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", alice, { name, private: priv })).status).toBe(201)
  }
  expect((await request(hearth, "POST", "/user/repos", bob, { name: "bobs", private: false })).status).toBe(201)
  const put = await request(hearth, "PUT", "/repos/alice/talk/collaborators/writer", alice, { permission: "write" })
  expect(put.status).toBe(204)
}, 60_000)
afterAll(() => hearth?.close())

describe("comments", () => {
  it("creates (201, Forgejo's shape), counts, lists per issue and repository-wide", async () => {
    const issue = await newIssue("talk", "commented")
    const first = await comment("talk", issue.number, "hello", bob)
    expectSwagger(first, "Comment")
    expect(first).toMatchObject({
      body: "hello",
      user: { login: "bob" },
      pull_request_url: "",
      assets: []
    })
    expect(first.html_url).toBe(`${issue.html_url}#issuecomment-${first.id}`)
    expect(first.issue_url).toBe(issue.html_url)
    await comment("talk", issue.number, "second")
    const got = await json(await request(hearth, "GET", `/repos/alice/talk/issues/${issue.number}`))
    expect(got.comments).toBe(2)
    expect(Date.parse(got.updated_at)).toBeGreaterThanOrEqual(Date.parse(issue.updated_at))
    const listed = await request(hearth, "GET", `/repos/alice/talk/issues/${issue.number}/comments`)
    expect(listed.headers.get("x-total-count")).toBe("2")
    const bodies = (await json(listed)).map((c: any) => c.body)
    expect(bodies).toEqual(["hello", "second"])
    const repoWide = await request(hearth, "GET", "/repos/alice/talk/issues/comments?page=1&limit=1")
    expect(await json(repoWide)).toHaveLength(1)
    expect(Number(repoWide.headers.get("x-total-count"))).toBeGreaterThanOrEqual(2)
    expect(
      (await json(await request(hearth, "GET", "/repos/alice/talk/issues/comments?since=2999-01-01T00:00:00Z"))).length
    ).toBe(0)
    expect((await request(hearth, "GET", "/repos/alice/talk/issues/comments?before=nope")).status).toBe(422)
  })

  it("requires a body, a signed-in caller and an existing issue", async () => {
    const issue = await newIssue("talk", "strict")
    const empty = await request(hearth, "POST", `/repos/alice/talk/issues/${issue.number}/comments`, alice, {})
    expect(empty.status).toBe(422)
    expect((await json(empty)).message).toBe("[Body]: Required")
    const anonymous = await request(hearth, "POST", `/repos/alice/talk/issues/${issue.number}/comments`, undefined, {
      body: "x"
    })
    expect(anonymous.status).toBe(401)
    expect((await request(hearth, "POST", "/repos/alice/talk/issues/999/comments", alice, { body: "x" })).status).toBe(
      404
    )
    expect((await request(hearth, "GET", "/repos/alice/talk/issues/999/comments")).status).toBe(404)
  })

  it("is refused to a user the poster or the repository owner blocked (403)", async () => {
    const issue = await newIssue("talk", "blocking", basic("writer"))
    expect((await request(hearth, "PUT", "/user/block/carol", basic("writer"))).status).toBe(204)
    const refused = await request(hearth, "POST", `/repos/alice/talk/issues/${issue.number}/comments`, basic("carol"), {
      body: "hi"
    })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user is blocked by the poster or repository owner")
    // Blocked by the repository owner: no new issues either.
    expect((await request(hearth, "PUT", "/user/block/carol", alice)).status).toBe(204)
    const open = await request(hearth, "POST", "/repos/alice/talk/issues", basic("carol"), { title: "x" })
    expect(open.status).toBe(403)
    expect((await json(open)).message).toBe("user is blocked by the poster or repository owner")
    expect((await request(hearth, "PUT", "/user/unblock/carol", alice)).status).toBe(204)
    expect((await request(hearth, "PUT", "/user/unblock/carol", basic("writer"))).status).toBe(204)
  })

  it("gets, edits and deletes by id: the poster or a writer; 403 for others; 404 from another repository", async () => {
    const issue = await newIssue("talk", "editable")
    const mine = await comment("talk", issue.number, "bob says", bob)
    const path = `/repos/alice/talk/issues/comments/${mine.id}`
    expectSwagger(await json(await request(hearth, "GET", path)), "Comment")
    expect((await request(hearth, "PATCH", path, basic("carol"), { body: "x" })).status).toBe(403)
    const edited = await request(hearth, "PATCH", path, bob, { body: "bob says more" })
    expect(edited.status).toBe(200)
    expect((await json(edited)).body).toBe("bob says more")
    // The deprecated route ignores its index.
    const deprecated = await request(
      hearth,
      "PATCH",
      `/repos/alice/talk/issues/999/comments/${mine.id}`,
      basic("writer"),
      {
        body: "edited by a writer"
      }
    )
    expect(deprecated.status).toBe(200)
    expect((await request(hearth, "GET", `/repos/alice/other/issues/comments/${mine.id}`)).status).toBe(404)
    expect(
      (await request(hearth, "PATCH", `/repos/alice/other/issues/comments/${mine.id}`, alice, { body: "x" })).status
    ).toBe(404)
    expect((await request(hearth, "DELETE", path, basic("carol"))).status).toBe(403)
    expect((await request(hearth, "DELETE", path, bob)).status).toBe(204)
    expect((await request(hearth, "GET", path)).status).toBe(404)
    const after = await json(await request(hearth, "GET", `/repos/alice/talk/issues/${issue.number}`))
    expect(after.comments).toBe(0)
  })

  it("answers 204 for a generated comment on GET, PATCH and DELETE, and keeps it", async () => {
    const issue = await newIssue("talk", "generated")
    await request(hearth, "PATCH", `/repos/alice/talk/issues/${issue.number}`, alice, { state: "closed" })
    const [close] = await timeline("talk", issue.number)
    expect(close.type).toBe("close")
    const path = `/repos/alice/talk/issues/comments/${close.id}`
    expect((await request(hearth, "GET", path)).status).toBe(204)
    expect((await request(hearth, "PATCH", path, alice, { body: "x" })).status).toBe(204)
    expect((await request(hearth, "DELETE", path, alice)).status).toBe(204)
    expect((await timeline("talk", issue.number)).map((c) => c.type)).toEqual(["close"])
  })

  it("refuses comments on an archived repository (423)", async () => {
    const issue = await newIssue("other", "archived soon")
    expect((await request(hearth, "PATCH", "/repos/alice/other", alice, { archived: true })).status).toBe(200)
    const res = await request(hearth, "POST", `/repos/alice/other/issues/${issue.number}/comments`, alice, {
      body: "x"
    })
    expect(res.status).toBe(423)
    expect((await request(hearth, "POST", "/repos/alice/other/issues", alice, { title: "x" })).status).toBe(423)
    expect((await request(hearth, "PATCH", "/repos/alice/other", alice, { archived: false })).status).toBe(200)
  })
})

describe("the timeline", () => {
  it("lists every generated type in order with Forgejo's names and shapes", async () => {
    const label = await json(
      await request(hearth, "POST", "/repos/alice/talk/labels", alice, { name: "kind/bug", color: "ee0701" })
    )
    const milestone = await json(await request(hearth, "POST", "/repos/alice/talk/milestones", alice, { title: "m1" }))
    const issue = await newIssue("talk", "busy")
    const path = `/repos/alice/talk/issues/${issue.number}`
    await comment("talk", issue.number, "a comment")
    await request(hearth, "POST", `${path}/labels`, alice, { labels: [label.id] })
    await request(hearth, "DELETE", `${path}/labels/${label.id}`, alice)
    await request(hearth, "PATCH", path, alice, { milestone: milestone.id, assignees: ["writer"], title: "busier" })
    await request(hearth, "PATCH", path, alice, { ref: "refs/heads/x", state: "closed" })
    const items = await timeline("talk", issue.number)
    expectSwagger(items, "TimelineComment[]")
    expect(items.map((c) => c.type)).toEqual([
      "comment",
      "label",
      "label",
      "change_title",
      "assignees",
      "milestone",
      "change_issue_ref",
      "close"
    ])
    expect(items[1]).toMatchObject({ body: "1", label: { id: label.id, name: "kind/bug" } })
    expect(items[2]).toMatchObject({ body: "", label: { id: label.id } })
    expect(items[4]).toMatchObject({ assignee: { login: "writer" }, removed_assignee: false })
    expect(items[5]).toMatchObject({ milestone: { id: milestone.id }, old_milestone: null })
    expect(items[6]).toMatchObject({ old_ref: "", new_ref: "refs/heads/x" })
    expect(items[0].ref_action).toBe("none")
    const paged = await request(hearth, "GET", `${path}/timeline?page=2&limit=3`)
    expect((await json(paged)).map((c: any) => c.type)).toEqual(["change_title", "assignees", "milestone"])
    expect((await request(hearth, "GET", "/repos/alice/talk/issues/999/timeline")).status).toBe(404)
    const future = await request(hearth, "GET", `${path}/timeline?since=2999-01-01T00:00:00Z`)
    expect(await json(future)).toEqual([])
    expect((await request(hearth, "GET", `${path}/timeline?before=bad`)).status).toBe(422)
  })
})

describe("cross-references", () => {
  it("writes an issue_ref / comment_ref into the referenced issue, neutered when the mention goes", async () => {
    const target = await newIssue("talk", "target")
    const source = await json(
      await request(hearth, "POST", "/repos/alice/talk/issues", alice, {
        title: "source",
        body: `see #${target.number}`
      })
    )
    let refs = await timeline("talk", target.number)
    expect(refs.map((c) => [c.type, c.ref_action])).toEqual([["issue_ref", "none"]])
    expect(refs[0].ref_issue).toMatchObject({ number: source.number, title: "source" })
    const remark = await comment(
      "talk",
      source.number,
      `also alice/talk#${target.number} and ${hearth.base}/alice/talk/issues/${target.number}`
    )
    refs = await timeline("talk", target.number)
    expect(refs.map((c) => c.type)).toEqual(["issue_ref", "comment_ref"])
    expect(refs[1].ref_comment).toMatchObject({ id: remark.id })
    await request(hearth, "PATCH", `/repos/alice/talk/issues/comments/${remark.id}`, alice, { body: "never mind" })
    refs = await timeline("talk", target.number)
    expect(refs.map((c) => [c.type, c.ref_action])).toEqual([
      ["issue_ref", "none"],
      ["comment_ref", "neutered"]
    ])
    // A self-reference and an unknown number are ignored.
    await request(hearth, "PATCH", `/repos/alice/talk/issues/${source.number}`, alice, {
      body: `#${source.number} #9999 #${target.number}`
    })
    expect((await timeline("talk", source.number)).filter((c) => c.type.endsWith("_ref"))).toEqual([])
  })

  it("references another repository only when the author may read it, and shows them only to who may read the source", async () => {
    const publicTarget = await newIssue("bobs", "bob's target", bob, "bob")
    const privateTarget = await newIssue("private", "private target")
    // bob cannot read alice/private: his mention of it writes nothing there.
    const bobIssue = await newIssue("bobs", `mentions alice/private#${privateTarget.number}`, bob, "bob")
    void bobIssue
    expect(await timeline("private", privateTarget.number, alice)).toEqual([])
    // alice references bob's public issue from her private repository.
    await request(hearth, "POST", "/repos/alice/private/issues", alice, {
      title: "from private",
      body: `bob/bobs#${publicTarget.number}`
    })
    const asAlice = await timeline("bobs", publicTarget.number, alice, "bob")
    expect(asAlice.map((c) => c.type)).toEqual(["issue_ref"])
    expect(asAlice[0].ref_issue.repository.full_name).toBe("alice/private")
    // bob cannot read the source: the reference is left out of his timeline.
    expect(await timeline("bobs", publicTarget.number, bob, "bob")).toEqual([])
    expect(await timeline("bobs", publicTarget.number, undefined, "bob")).toEqual([])
  })
})

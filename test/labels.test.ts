// Labels (CONTRACT-ISSUES §8): repository and organization CRUD with the colour rules, archived
// labels (an edit that leaves `is_archived` out keeps the label archived: Forgejo's un-archiving is
// a bug), issue labels add/replace/remove/clear by id or name (organization labels too),
// exclusive scopes, and who may change them.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
const alice = basic("alice")
const bob = basic("bob")

const repoApi = (method: string, path: string, auth?: string, body?: unknown) =>
  request(hearth, method, `/repos/acme/work${path}`, auth, body)
const names = (labels: Array<any>) => labels.map((l) => l.name)
const newIssue = async () => {
  const res = await repoApi("POST", "/issues", alice, { title: "t" })
  expect(res.status).toBe(201)
  return (await json(res)).number as number
}
const label = async (name: string, extra: Record<string, unknown> = {}) => {
  const res = await repoApi("POST", "/labels", alice, { name, color: "123456", ...extra })
  expect(res.status, await res.clone().text()).toBe(201)
  return json(res)
}

let orgLabel: any

beforeAll(async () => {
  hearth = await startHearth()
  await Promise.all(["alice", "bob", "writer"].map((username) => createUser(hearth, { username })))
  expect((await request(hearth, "POST", "/orgs", alice, { username: "acme" })).status).toBe(201)
  expect((await request(hearth, "POST", "/orgs/acme/repos", alice, { name: "work" })).status).toBe(201)
  expect((await repoApi("PUT", "/collaborators/writer", alice, { permission: "write" })).status).toBe(204)
  const res = await request(hearth, "POST", "/orgs/acme/labels", alice, { name: "org-wide", color: "abcdef" })
  expect(res.status).toBe(201)
  orgLabel = await json(res)
}, 60_000)
afterAll(() => hearth?.close())

describe("repository labels", () => {
  it("creates with the colour normalised (201), lists by name, gets by id or name, edits, deletes", async () => {
    const created = await repoApi("POST", "/labels", alice, { name: "zeta", color: " #ABC ", description: "d" })
    expect(created.status).toBe(201)
    const body = await json(created)
    expectSwagger(body, "Label")
    expect(body).toMatchObject({
      name: "zeta",
      color: "aabbcc",
      description: "d",
      exclusive: false,
      is_archived: false
    })
    expect(body.url).toMatch(new RegExp(`/api/v1/repos/acme/work/labels/${body.id}$`))
    await label("alpha")
    const listed = await repoApi("GET", "/labels")
    expect(listed.headers.get("x-total-count")).toBe("2")
    expect(names(await json(listed))).toEqual(["alpha", "zeta"])
    expect(names(await json(await repoApi("GET", "/labels?sort=reversealphabetically")))).toEqual(["zeta", "alpha"])
    expect((await json(await repoApi("GET", `/labels/${body.id}`))).name).toBe("zeta")
    expect((await json(await repoApi("GET", "/labels/zeta"))).id).toBe(body.id)
    expect((await repoApi("GET", "/labels/nothing")).status).toBe(404)
    const edited = await json(await repoApi("PATCH", `/labels/${body.id}`, alice, { color: "09876A", name: "omega" }))
    expect(edited).toMatchObject({ name: "omega", color: "09876a", description: "d" })
    expect((await repoApi("DELETE", `/labels/${body.id}`, alice)).status).toBe(204)
    expect((await repoApi("GET", `/labels/${body.id}`)).status).toBe(404)
    // Forgejo answers 204 for a label that does not exist, changing nothing.
    expect((await repoApi("DELETE", "/labels/999999", alice)).status).toBe(204)
  })

  it("refuses bad colours and missing names with 422 and Forgejo's messages", async () => {
    const bad = await repoApi("POST", "/labels", alice, { name: "x", color: "#12345g" })
    expect(bad.status).toBe(422)
    expect((await json(bad)).message).toBe("bad color code: #12345g")
    const noName = await repoApi("POST", "/labels", alice, { color: "123456" })
    expect((await json(noName)).message).toBe("[Name]: Required")
    const l = await label("colour")
    const badEdit = await repoApi("PATCH", `/labels/${l.id}`, alice, { color: "09g76a" })
    expect(badEdit.status).toBe(422)
    expect((await json(await repoApi("GET", `/labels/${l.id}`))).color).toBe("123456")
  })

  it("keeps an archived label archived through an edit that leaves is_archived out", async () => {
    const archived = await label("old", { is_archived: true })
    expect(archived.is_archived).toBe(true)
    const edited = await json(await repoApi("PATCH", `/labels/${archived.id}`, alice, { description: "still old" }))
    expect(edited.is_archived).toBe(true)
    const unarchived = await json(await repoApi("PATCH", `/labels/${archived.id}`, alice, { is_archived: false }))
    expect(unarchived.is_archived).toBe(false)
  })

  it("is changed by writers only: 403 for a reader, 401 anonymous", async () => {
    const refused = await repoApi("POST", "/labels", bob, { name: "x", color: "123456" })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user should have a permission to write to a repo")
    expect((await repoApi("POST", "/labels", undefined, { name: "x", color: "123456" })).status).toBe(401)
    expect((await repoApi("POST", "/labels", basic("writer"), { name: "by-writer", color: "123456" })).status).toBe(201)
  })
})

describe("label templates", () => {
  it("a repository created with issue_labels gets that set's labels; the set is listed at /label/templates", async () => {
    const created = await request(hearth, "POST", "/user/repos", alice, { name: "templated", issue_labels: "Advanced" })
    expect(created.status).toBe(201)
    const template = await json(await request(hearth, "GET", "/label/templates/Advanced"))
    const labels = await json(await request(hearth, "GET", "/repos/alice/templated/labels"))
    expectSwagger(labels, "Label[]")
    expect(labels.map((l: any) => [l.name, l.exclusive]).sort()).toEqual(
      template.map((l: any) => [l.name, l.exclusive]).sort()
    )
    expect(labels.every((l: any) => /^[0-9a-f]{6}$/.test(l.color))).toBe(true)
  })
})

describe("organization labels", () => {
  it("are made by the organization's owners (403 otherwise) and listed without sign-in", async () => {
    expectSwagger(orgLabel, "Label")
    expect(orgLabel.url).toMatch(new RegExp(`/api/v1/orgs/acme/labels/${orgLabel.id}$`))
    const refused = await request(hearth, "POST", "/orgs/acme/labels", bob, { name: "x", color: "123456" })
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("Must be an organization owner")
    expect(names(await json(await request(hearth, "GET", "/orgs/acme/labels")))).toEqual(["org-wide"])
    expect((await request(hearth, "GET", `/orgs/acme/labels/${orgLabel.id}`)).status).toBe(401)
    expect((await json(await request(hearth, "GET", "/orgs/acme/labels/org-wide", bob))).id).toBe(orgLabel.id)
    expect((await request(hearth, "GET", "/orgs/alice/labels")).status).toBe(404)
    // A private organization's labels are not shown to those who may not see it (Forgejo shows them).
    expect((await request(hearth, "POST", "/orgs", alice, { username: "hush", visibility: "private" })).status).toBe(
      201
    )
    expect((await request(hearth, "POST", "/orgs/hush/labels", alice, { name: "h", color: "123456" })).status).toBe(201)
    expect((await request(hearth, "GET", "/orgs/hush/labels")).status).toBe(404)
    expect((await request(hearth, "GET", "/orgs/hush/labels", bob)).status).toBe(404)
    expect(names(await json(await request(hearth, "GET", "/orgs/hush/labels", alice)))).toEqual(["h"])
    // A repository's list does not include them.
    expect(names(await json(await repoApi("GET", "/labels")))).not.toContain("org-wide")
    const edited = await request(hearth, "PATCH", `/orgs/acme/labels/${orgLabel.id}`, alice, { description: "all" })
    expect((await json(edited)).description).toBe("all")
  })
})

describe("issue labels", () => {
  it("adds by id or name (repository and organization labels), answering every label of the issue", async () => {
    const n = await newIssue()
    const bug = await label("bug")
    const added = await repoApi("POST", `/issues/${n}/labels`, alice, { labels: [bug.id] })
    expect(added.status).toBe(200)
    expectSwagger(await json(added.clone()), "Label[]")
    expect(names(await json(added))).toEqual(["bug"])
    const byName = await json(await repoApi("POST", `/issues/${n}/labels`, alice, { labels: ["org-wide", "unknown"] }))
    expect(names(byName)).toEqual(["bug", "org-wide"])
    expect(names(await json(await repoApi("GET", `/issues/${n}/labels`)))).toEqual(["bug", "org-wide"])
    // The list filter and the search find issues by the organization label's name.
    const listed = await json(await repoApi("GET", "/issues?labels=org-wide"))
    expect(listed.map((i: any) => i.number)).toEqual([n])
    const searched = await json(await request(hearth, "GET", "/repos/issues/search?labels=org-wide"))
    expect(searched.map((i: any) => i.number)).toEqual([n])
  })

  it("replaces, removes one (by name or id; 422 when unknown) and clears", async () => {
    const n = await newIssue()
    const one = await label("one")
    const two = await label("two")
    await repoApi("POST", `/issues/${n}/labels`, alice, { labels: [one.id] })
    expect(
      names(await json(await repoApi("PUT", `/issues/${n}/labels`, alice, { labels: ["two", "org-wide"] })))
    ).toEqual(["org-wide", "two"])
    expect((await repoApi("DELETE", `/issues/${n}/labels/two`, alice)).status).toBe(204)
    expect((await repoApi("DELETE", `/issues/${n}/labels/${orgLabel.id}`, alice)).status).toBe(204)
    expect(await json(await repoApi("GET", `/issues/${n}/labels`))).toEqual([])
    const unknown = await repoApi("DELETE", `/issues/${n}/labels/nosuch`, alice)
    expect(unknown.status).toBe(422)
    expect((await json(unknown)).message).toMatch(/^label does not exist \[label_id: 0, org_id: \d+\]$/)
    const unknownId = await repoApi("DELETE", `/issues/${n}/labels/999999`, alice)
    expect((await json(unknownId)).message).toBe("label does not exist [label_id: 0]")
    await repoApi("PUT", `/issues/${n}/labels`, alice, { labels: [one.id, two.id] })
    expect((await repoApi("DELETE", `/issues/${n}/labels`, alice)).status).toBe(204)
    expect(await json(await repoApi("GET", `/issues/${n}/labels`))).toEqual([])
    // A PUT naming only unknown labels clears the issue.
    await repoApi("PUT", `/issues/${n}/labels`, alice, { labels: [one.id] })
    expect(await json(await repoApi("PUT", `/issues/${n}/labels`, alice, { labels: [999999] }))).toEqual([])
  })

  it("refuses mixed or odd label lists with 400 before the writer check; 403 for non-writers", async () => {
    const n = await newIssue()
    const mixed = await repoApi("POST", `/issues/${n}/labels`, bob, { labels: [1, "x"] })
    expect(mixed.status).toBe(400)
    expect((await json(mixed)).message).toBe("labels should be an array of strings or integers")
    const odd = await repoApi("POST", `/issues/${n}/labels`, bob, { labels: [true] })
    expect(odd.status).toBe(400)
    expect((await json(odd)).message).toBe("a label must be an integer or a string")
    expect((await repoApi("POST", `/issues/${n}/labels`, bob, { labels: [1] })).status).toBe(403)
    expect((await repoApi("DELETE", `/issues/${n}/labels`, bob)).status).toBe(403)
  })

  it("keeps one exclusive label per scope: adding one removes the others, the last by name wins", async () => {
    const n = await newIssue()
    const high = await label("priority/high", { exclusive: true })
    const low = await label("priority/low", { exclusive: true })
    const plain = await label("priority/any")
    await repoApi("POST", `/issues/${n}/labels`, alice, { labels: [high.id, plain.id] })
    const after = await json(await repoApi("POST", `/issues/${n}/labels`, alice, { labels: [low.id] }))
    expect(names(after)).toEqual(["priority/any", "priority/low"])
    const both = await json(await repoApi("PUT", `/issues/${n}/labels`, alice, { labels: [low.id, high.id] }))
    expect(names(both)).toEqual(["priority/low"])
    const timeline = await json(await repoApi("GET", `/issues/${n}/timeline`))
    expect(timeline.map((c: any) => `${c.label.name}:${c.body}`)).toEqual([
      "priority/any:1",
      "priority/high:1",
      "priority/high:",
      "priority/low:1",
      "priority/any:"
    ])
  })

  it("deleting a label takes it off its issues and removes its label comments", async () => {
    const n = await newIssue()
    const gone = await label("gone")
    await repoApi("POST", `/issues/${n}/labels`, alice, { labels: [gone.id] })
    expect((await repoApi("DELETE", `/labels/${gone.id}`, alice)).status).toBe(204)
    expect(await json(await repoApi("GET", `/issues/${n}/labels`))).toEqual([])
    expect(await json(await repoApi("GET", `/issues/${n}/timeline`))).toEqual([])
  })
})

// Migration 0046: a label keeps its counts of open and closed issues and pull requests, and a
// repository's list filtered by one of its labels takes its X-Total-Count from them. Every change
// that moves an issue in or out of a label's counts is checked against the list's own rows.
describe("label counts", () => {
  const counted = (method: string, path: string, body?: unknown) =>
    request(hearth, method, `/repos/acme/counted${path}`, alice, body)
  /** The labels checked, by name (the list filters by name). */
  const labelled = new Set<string>()

  /** Every state and kind: the count the list announces is the number of rows it lists. */
  const expectCountsExact = async () => {
    for (const name of labelled)
      for (const state of ["open", "closed", "all"])
        for (const type of ["", "&type=issues", "&type=pulls"]) {
          const res = await counted("GET", `/issues?labels=${name}&state=${state}${type}&limit=50`)
          const rows = await json(res)
          expect(res.headers.get("x-total-count"), `${name} ${state}${type}`).toBe(String(rows.length))
        }
  }
  const openIssue = async (labels: Array<number>) => {
    const res = await counted("POST", "/issues", { title: "counted", labels })
    expect(res.status).toBe(201)
    return (await json(res)).number as number
  }

  it("stay exact through labels added, replaced, removed and cleared, closes, reopens and deletions", async () => {
    expect(
      (await request(hearth, "POST", "/orgs/acme/repos", alice, { name: "counted", auto_init: true })).status
    ).toBe(201)
    const mine = await json(await counted("POST", "/labels", { name: "mine", color: "123456" }))
    const other = await json(await counted("POST", "/labels", { name: "other", color: "654321" }))
    for (const name of ["mine", "other", "org-wide"]) labelled.add(name)

    const a = await openIssue([mine.id, orgLabel.id])
    const b = await openIssue([mine.id])
    const c = await openIssue([other.id])
    await openIssue([])
    const first = await counted("GET", `/issues?labels=mine&state=open&type=issues`)
    expect(first.headers.get("x-total-count")).toBe("2")
    await expectCountsExact()

    expect((await counted("PATCH", `/issues/${a}`, { state: "closed" })).status).toBe(201)
    await expectCountsExact()
    expect((await counted("POST", `/issues/${c}/labels`, { labels: [mine.id] })).status).toBe(200)
    expect((await counted("PUT", `/issues/${b}/labels`, { labels: [other.id, orgLabel.id] })).status).toBe(200)
    await expectCountsExact()
    expect((await counted("PATCH", `/issues/${a}`, { state: "open" })).status).toBe(201)
    expect((await counted("DELETE", `/issues/${c}/labels/${other.id}`)).status).toBe(204)
    await expectCountsExact()
    expect((await counted("DELETE", `/issues/${b}/labels`)).status).toBe(204)
    await expectCountsExact()

    // A pull request counts as one, apart from the issues.
    expect((await counted("POST", "/branches", { new_branch_name: "feature" })).status).toBe(201)
    const file = { content: Buffer.from("change\n").toString("base64"), branch: "feature", message: "change" }
    expect((await counted("POST", "/contents/change.txt", file)).status).toBe(201)
    const pull = await counted("POST", "/pulls", { title: "p", head: "feature", base: "main", labels: [mine.id] })
    expect(pull.status, await pull.clone().text()).toBe(201)
    const pullNumber = (await json(pull)).number as number
    await expectCountsExact()
    expect((await counted("PATCH", `/pulls/${pullNumber}`, { state: "closed" })).status).toBe(201)
    await expectCountsExact()

    // Deleting an issue takes it out of its labels' counts; deleting another label changes nothing here.
    expect((await counted("DELETE", `/issues/${a}`)).status).toBe(204)
    expect((await counted("DELETE", `/labels/${other.id}`)).status).toBe(204)
    labelled.delete("other")
    await expectCountsExact()
    const all = await counted("GET", `/issues?labels=mine&state=all`)
    expect(all.headers.get("x-total-count")).toBe("2")
    expect((await json(all)).map((i: any) => i.number).sort()).toEqual([c, pullNumber].sort())

    // The label list's issue counts (sort=mostissues) come from the same counts.
    const sorted = await json(await counted("GET", "/labels?sort=mostissues"))
    expect(names(sorted)).toEqual(["mine"])

    // With another filter as well, the matches are counted.
    const mentioned = await counted("GET", `/issues?labels=mine&state=all&q=nothing-matches`)
    expect(mentioned.headers.get("x-total-count")).toBe("0")
  }, 60_000)
})

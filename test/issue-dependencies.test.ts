// Issue dependencies and blocks (CONTRACT-ISSUES §13) over real HTTP: both directions, across
// repositories within what the caller may see, the permission table (anonymous, reader, poster,
// writer, admin; private repositories 404), `internal_tracker.enable_issue_dependencies`,
// `[service] ALLOW_CROSS_REPOSITORY_DEPENDENCIES`, refusals (self, duplicate, circular, missing),
// closing with open dependencies (412), the timeline comments in both issues, token scopes.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let noCross: Hearth

const setup = async (h: Hearth) => {
  for (const username of ["owner", "writer", "reader", "poster"]) await createUser(h, { username })
  await createUser(h, { username: "siteadmin", isAdmin: true })
  for (const [name, priv] of [
    ["deps", false],
    ["other", false],
    ["secret", true],
    ["nodeps", false]
  ] as const) {
    expect((await request(h, "POST", "/user/repos", basic("owner"), { name, private: priv })).status).toBe(201)
  }
  for (const repo of ["deps", "other", "nodeps"]) {
    expect(
      (await request(h, "PUT", `/repos/owner/${repo}/collaborators/writer`, basic("owner"), { permission: "write" }))
        .status
    ).toBe(204)
    expect(
      (await request(h, "PUT", `/repos/owner/${repo}/collaborators/reader`, basic("owner"), { permission: "read" }))
        .status
    ).toBe(204)
  }
  const off = await request(h, "PATCH", "/repos/owner/nodeps", basic("owner"), {
    internal_tracker: { enable_issue_dependencies: false }
  })
  expect(off.status).toBe(200)
  expect((await json(off)).internal_tracker).toEqual({
    enable_time_tracker: true,
    allow_only_contributors_to_track_time: true,
    enable_issue_dependencies: false
  })
}

beforeAll(async () => {
  hearth = await startHearth()
  await setup(hearth)
  noCross = await startHearth({ service: { ALLOW_CROSS_REPOSITORY_DEPENDENCIES: "false" } })
  await setup(noCross)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await noCross?.close()
})

const newIssue = async (repo = "deps", who = "owner", h = hearth) => {
  const res = await request(h, "POST", `/repos/owner/${repo}/issues`, basic(who), { title: `in ${repo}` })
  expect(res.status).toBe(201)
  return (await json(res)).number as number
}
const meta = (index: number, repo = "deps") => ({ owner: "owner", repo, index })
const depsOf = async (n: number, repo = "deps", auth: string | undefined = basic("owner")) =>
  (await json(await request(hearth, "GET", `/repos/owner/${repo}/issues/${n}/dependencies`, auth))).map(
    (i: any) => `${i.repository.name}#${i.number}`
  )
const blocksOf = async (n: number, repo = "deps", auth: string | undefined = basic("owner")) =>
  (await json(await request(hearth, "GET", `/repos/owner/${repo}/issues/${n}/blocks`, auth))).map(
    (i: any) => `${i.repository.name}#${i.number}`
  )

describe("dependencies and blocks", () => {
  it("links both ways, lists both directions, removes, and writes the timeline comments in both issues", async () => {
    const [a, b, c] = [await newIssue(), await newIssue(), await newIssue()]
    const added = await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, basic("owner"), meta(b))
    expect(added.status).toBe(201)
    expect((await json(added)).number).toBe(a)
    // c blocks a, written from c's side.
    const blocking = await request(hearth, "POST", `/repos/owner/deps/issues/${c}/blocks`, basic("owner"), meta(a))
    expect(blocking.status).toBe(201)
    expect((await json(blocking)).number).toBe(c)
    expect(await depsOf(a)).toEqual([`deps#${b}`, `deps#${c}`])
    expect(await blocksOf(b)).toEqual([`deps#${a}`])
    expect(await blocksOf(c)).toEqual([`deps#${a}`])
    expect(await blocksOf(a)).toEqual([])

    // Page and limit.
    const page2 = await json(
      await request(hearth, "GET", `/repos/owner/deps/issues/${a}/dependencies?page=2&limit=1`, basic("owner"))
    )
    expect(page2.map((i: any) => i.number)).toEqual([c])

    const removed = await request(
      hearth,
      "DELETE",
      `/repos/owner/deps/issues/${a}/dependencies`,
      basic("owner"),
      meta(b)
    )
    expect(removed.status).toBe(201)
    expect(await depsOf(a)).toEqual([`deps#${c}`])
    const unblocked = await request(hearth, "DELETE", `/repos/owner/deps/issues/${c}/blocks`, basic("owner"), meta(a))
    expect(unblocked.status).toBe(201)
    expect(await depsOf(a)).toEqual([])

    // Removing a link that is not there: 404 (Forgejo: 500).
    expect(
      (await request(hearth, "DELETE", `/repos/owner/deps/issues/${a}/dependencies`, basic("owner"), meta(b))).status
    ).toBe(404)

    const timeline = async (n: number) =>
      (await json(await request(hearth, "GET", `/repos/owner/deps/issues/${n}/timeline`, basic("owner")))).map(
        (t: any) => [t.type, t.dependent_issue?.number ?? null, t.user.login]
      )
    expect(await timeline(a)).toEqual([
      ["add_dependency", b, "owner"],
      ["add_dependency", c, "owner"],
      ["remove_dependency", b, "owner"],
      ["remove_dependency", c, "owner"]
    ])
    expect(await timeline(b)).toEqual([
      ["add_dependency", a, "owner"],
      ["remove_dependency", a, "owner"]
    ])
  })

  it("refuses self, duplicate and circular links (422) and missing issues (404), changing nothing", async () => {
    const [a, b, c] = [await newIssue(), await newIssue(), await newIssue()]
    const post = (n: number, body: unknown) =>
      request(hearth, "POST", `/repos/owner/deps/issues/${n}/dependencies`, basic("owner"), body)
    const self = await post(a, meta(a))
    expect(self.status).toBe(422)
    expect((await json(self)).message).toMatch(/cannot depend on itself/)
    expect((await post(a, meta(b))).status).toBe(201)
    const again = await post(a, meta(b))
    expect(again.status).toBe(422)
    expect((await json(again)).message).toMatch(/already exists/)
    // b → c → a would close a cycle (a depends on b).
    expect((await post(b, meta(c))).status).toBe(201)
    const circular = await post(c, meta(a))
    expect(circular.status).toBe(422)
    expect((await json(circular)).message).toMatch(/circular/)
    expect(await depsOf(c)).toEqual([])
    expect((await post(a, meta(9999))).status).toBe(404)
    expect((await post(a, { owner: "owner", repo: "nope", index: 1 })).status).toBe(404)
    expect((await post(a, { owner: "nobody", repo: "deps", index: 1 })).status).toBe(404)
    expect((await post(9999, meta(a))).status).toBe(404)
    expect((await post(a, "{oops")).status).toBe(422)
  })

  it("refuses to close an issue with open dependencies (412) until they are closed; reopening is never checked", async () => {
    const [a, b] = [await newIssue(), await newIssue()]
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, basic("owner"), meta(b))).status
    ).toBe(201)
    const refused = await request(hearth, "PATCH", `/repos/owner/deps/issues/${a}`, basic("owner"), { state: "closed" })
    expect(refused.status).toBe(412)
    expect((await json(refused)).message).toBe("cannot close this issue because it still has open dependencies")
    expect((await json(await request(hearth, "GET", `/repos/owner/deps/issues/${a}`))).state).toBe("open")
    const closeB = await request(hearth, "PATCH", `/repos/owner/deps/issues/${b}`, basic("owner"), { state: "closed" })
    expect(closeB.status).toBe(201)
    const closeA = await request(hearth, "PATCH", `/repos/owner/deps/issues/${a}`, basic("owner"), { state: "closed" })
    expect(closeA.status).toBe(201)
    // Reopening b (a blocker of the closed a) is fine.
    expect(
      (await request(hearth, "PATCH", `/repos/owner/deps/issues/${b}`, basic("owner"), { state: "open" })).status
    ).toBe(201)
  })

  it("follows the permission table: write on the blocked issue, read on the other; 401/404 otherwise", async () => {
    const [a, b] = [await newIssue(), await newIssue()]
    const path = `/repos/owner/deps/issues/${a}/dependencies`
    // Anonymous: 401 on a public repository; reads are open.
    expect((await request(hearth, "POST", path, undefined, meta(b))).status).toBe(401)
    expect((await request(hearth, "GET", path)).status).toBe(200)
    // A reader and the poster who is not a writer may not link (404, as Forgejo).
    expect((await request(hearth, "POST", path, basic("reader"), meta(b))).status).toBe(404)
    const own = await newIssue("deps", "poster")
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${own}/dependencies`, basic("poster"), meta(b))).status
    ).toBe(404)
    // A writer and a site admin may.
    expect((await request(hearth, "POST", path, basic("writer"), meta(b))).status).toBe(201)
    expect((await request(hearth, "DELETE", path, basic("siteadmin"), meta(b))).status).toBe(201)
    // Blocks are written on the body's issue: the reader may not make a block b.
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${b}/blocks`, basic("reader"), meta(a))).status
    ).toBe(404)
    // Private repositories are 404 to those who cannot see them, also as the other side of a link.
    const s = await newIssue("secret")
    expect((await request(hearth, "GET", `/repos/owner/secret/issues/${s}/dependencies`)).status).toBe(404)
    expect((await request(hearth, "GET", `/repos/owner/secret/issues/${s}/dependencies`, basic("writer"))).status).toBe(
      404
    )
    expect((await request(hearth, "POST", path, basic("writer"), meta(s, "secret"))).status).toBe(404)
    // (Anonymous writes are 401 before the repository is looked at, as on every Hearth issue route.)
    expect(
      (await request(hearth, "POST", `/repos/owner/secret/issues/${s}/dependencies`, undefined, meta(a))).status
    ).toBe(401)
    expect(
      (await request(hearth, "POST", `/repos/owner/secret/issues/${s}/dependencies`, basic("poster"), meta(a))).status
    ).toBe(404)
  })

  it("links across repositories; unreadable dependencies are reduced, unreadable blocks left out", async () => {
    const a = await newIssue()
    const o = await newIssue("other")
    const s = await newIssue("secret")
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, basic("owner"), meta(o, "other")))
        .status
    ).toBe(201)
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, basic("owner"), meta(s, "secret")))
        .status
    ).toBe(201)
    expect(await blocksOf(o, "other")).toEqual([`deps#${a}`])
    expect(await depsOf(a)).toEqual([`other#${o}`, `secret#${s}`])
    // A writer of a who cannot read the private repository sees title, number and repository only.
    const forWriter = await json(
      await request(hearth, "GET", `/repos/owner/deps/issues/${a}/dependencies`, basic("writer"))
    )
    expect(forWriter[1]).toMatchObject({ number: s, title: "in secret", body: "", repository: { name: "secret" } })
    // Anyone else sees HIDDEN.
    const forAnonymous = await json(await request(hearth, "GET", `/repos/owner/deps/issues/${a}/dependencies`))
    expect(forAnonymous.map((i: any) => i.title)).toEqual(["in other", "HIDDEN"])
    expect(forAnonymous[1]).toMatchObject({ number: 0, repository: { name: "" } })
    // From the private side, the public blocked issue is listed.
    expect(
      (await json(await request(hearth, "GET", `/repos/owner/secret/issues/${s}/blocks`, basic("owner")))).map(
        (i: any) => i.number
      )
    ).toEqual([a])
    // The timeline of a shows the secret issue only to who may read it.
    const tl = async (auth?: string) =>
      (await json(await request(hearth, "GET", `/repos/owner/deps/issues/${a}/timeline`, auth))).map(
        (t: any) => t.dependent_issue?.repository.name ?? null
      )
    expect(await tl(basic("owner"))).toEqual(["other", "secret"])
    expect(await tl()).toEqual(["other", null])
  })

  it("is off where the repository disabled dependencies (404), and cross-repository links can be refused (400)", async () => {
    const n = await newIssue("nodeps")
    const d = await newIssue()
    expect((await request(hearth, "GET", `/repos/owner/nodeps/issues/${n}/dependencies`, basic("owner"))).status).toBe(
      404
    )
    expect(
      (await request(hearth, "POST", `/repos/owner/nodeps/issues/${n}/dependencies`, basic("owner"), meta(n, "nodeps")))
        .status
    ).toBe(404)
    // A link whose blocked issue is in nodeps is refused from the other side too.
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${d}/blocks`, basic("owner"), meta(n, "nodeps"))).status
    ).toBe(404)
    // Blocks are still listed there.
    expect((await request(hearth, "GET", `/repos/owner/nodeps/issues/${n}/blocks`, basic("owner"))).status).toBe(200)

    const x = await newIssue("deps", "owner", noCross)
    const y = await newIssue("other", "owner", noCross)
    const refused = await request(noCross, "POST", `/repos/owner/deps/issues/${x}/dependencies`, basic("owner"), {
      owner: "owner",
      repo: "other",
      index: y
    })
    expect(refused.status).toBe(400)
    expect((await json(refused)).message).toBe("CrossRepositoryDependencies not enabled")
    const z = await newIssue("deps", "owner", noCross)
    expect(
      (await request(noCross, "POST", `/repos/owner/deps/issues/${x}/dependencies`, basic("owner"), meta(z))).status
    ).toBe(201)
  })

  it("refuses dependency changes on an archived repository (423) and writes with a read:issue token (403)", async () => {
    const [a, b] = [await newIssue(), await newIssue()]
    const readToken = `token ${await createToken(hearth, "owner", ["read:issue", "read:repository"])}`
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, readToken, meta(b))).status
    ).toBe(403)
    expect((await request(hearth, "GET", `/repos/owner/deps/issues/${a}/dependencies`, readToken)).status).toBe(200)
    const writeToken = `token ${await createToken(hearth, "owner", ["write:issue", "read:repository"])}`
    expect(
      (await request(hearth, "POST", `/repos/owner/deps/issues/${a}/dependencies`, writeToken, meta(b))).status
    ).toBe(201)

    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name: "frozen" })).status).toBe(201)
    const [f, g] = [await newIssue("frozen"), await newIssue("frozen")]
    expect((await request(hearth, "PATCH", "/repos/owner/frozen", basic("owner"), { archived: true })).status).toBe(200)
    expect(
      (await request(hearth, "POST", `/repos/owner/frozen/issues/${f}/dependencies`, basic("owner"), meta(g, "frozen")))
        .status
    ).toBe(423)
  })
})

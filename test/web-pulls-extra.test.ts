// The rest of issue 22's pull requests in the browser, over plain HTTP: the /pulls dashboard's
// "Review requests" and "Reviewed by you" tabs (a user asked directly or through a team; a review
// given answers the request; the API's `review_requested`/`reviewed` search alike), review
// comments a later push made outdated (folded in an "Outdated" block at their file with the hunk
// they were made on, marked in the conversation), the merge box's commit title and message
// prefilled per merge style (the API's default title; a squash's body lists the commits), and the
// comment preview under the pull requests unit (issues off: the pull request's preview works, the
// issues' one is a 404; pulls off: the other way round).
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { csrfOf, signedIn } from "./support/web.ts"

let hearth: Hearth
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)
const b64 = (text: string) => Buffer.from(text).toString("base64")
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const unentity = (s: string) =>
  s
    .replace(/&#39;|&#x27;/g, "'")
    .replace(/&quot;/g, '"')
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&amp;/g, "&")

/** A branch from main with one commit writing `file`, and a pull request of it into main; its index. */
const openPull = async (repo: string, branch: string, title: string, file = `${branch}.txt`, text = `${branch}\n`) => {
  const [owner, name] = repo.split("/") as [string, string]
  await api("POST", `/repos/${owner}/${name}/contents/${file}`, "alice", {
    content: b64(text),
    branch: "main",
    new_branch: branch,
    message: `${branch}: ${file}`
  })
  return (await api("POST", `/repos/${owner}/${name}/pulls`, "alice", { head: branch, base: "main", title }))
    .number as number
}

const titlesOf = (page: string) => [...page.matchAll(/data-testid="issue-title">([^<]*)</g)].map((m) => m[1])

const pulls: Record<string, number> = {}

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "garden", auto_init: true, readme: "Default" })
  await api("PUT", "/repos/alice/garden/collaborators/bob", "alice", { permission: "write" })
  pulls.asked = await openPull("alice/garden", "asked", "Asks bob")
  await api("POST", `/repos/alice/garden/pulls/${pulls.asked}/requested_reviewers`, "alice", { reviewers: ["bob"] })
  pulls.answered = await openPull("alice/garden", "answered", "Answered by bob")
  await api("POST", `/repos/alice/garden/pulls/${pulls.answered}/requested_reviewers`, "alice", { reviewers: ["bob"] })
  await api("POST", `/repos/alice/garden/pulls/${pulls.answered}/reviews`, "bob", { event: "APPROVED", body: "Yes" })
  pulls.nobody = await openPull("alice/garden", "nobody", "Nobody asked")
  // A team's request: carol is in acme's team "reviewers".
  await api("POST", "/orgs", "alice", { username: "acme" })
  await api("POST", "/orgs/acme/repos", "alice", { name: "tools", auto_init: true, private: true })
  const team = await api("POST", "/orgs/acme/teams", "alice", {
    name: "reviewers",
    permission: "write",
    units: ["repo.code", "repo.pulls"],
    includes_all_repositories: true
  })
  await api("PUT", `/teams/${team.id}/members/carol`, "alice")
  pulls.team = await openPull("acme/tools", "hammer", "Asks the team")
  await api("POST", `/repos/acme/tools/pulls/${pulls.team}/requested_reviewers`, "alice", {
    team_reviewers: ["reviewers"]
  })
}, 180_000)

afterAll(async () => {
  await hearth?.close()
})

describe("the dashboard's review tabs", () => {
  it("lists the pull requests asking the user for a review, not those answered since", async () => {
    const bob = await as("bob")
    const page = await bob.get("/pulls?type=review_requested")
    expect(page.status).toBe(200)
    expect(page.text).toMatch(
      /data-testid="tab-review_requested" aria-current="page"|aria-current="page" data-testid="tab-review_requested"/
    )
    expect(titlesOf(page.text)).toEqual(["Asks bob"])
    expect(page.text).toContain(`href="/alice/garden/pulls/${pulls.asked}"`)
    expect(titlesOf((await bob.get("/pulls?type=reviewed_by")).text)).toEqual(["Answered by bob"])
    // Forgejo shows the review tabs on the pull requests' dashboard only.
    expect((await bob.get("/pulls")).text).toContain("Review requests")
    expect((await bob.get("/issues")).text).not.toContain('data-testid="tab-review_requested"')
  })

  it("lists a request to one of the user's teams; nothing for those not asked", async () => {
    expect(titlesOf((await (await as("carol")).get("/pulls?type=review_requested")).text)).toEqual(["Asks the team"])
    expect(titlesOf((await (await as("dave")).get("/pulls?type=review_requested")).text)).toEqual([])
    expect(titlesOf((await (await as("alice")).get("/pulls?type=review_requested")).text)).toEqual([])
  })

  it("answers the API's search with review_requested and reviewed as well", async () => {
    const search = async (user: string, query: string) =>
      (await json(await request(hearth, "GET", `/repos/issues/search?type=pulls&${query}`, basic(user)))).map(
        (i: { title: string }) => i.title
      )
    expect(await search("bob", "review_requested=true")).toEqual(["Asks bob"])
    expect(await search("carol", "review_requested=true")).toEqual(["Asks the team"])
    expect(await search("bob", "reviewed=true")).toEqual(["Answered by bob"])
  })
})

describe("outdated review comments", () => {
  let index = 0

  beforeAll(async () => {
    index = await openPull("alice/garden", "notes", "Notes", "notes.txt", "one\ntwo\nthree\n")
    await api("POST", `/repos/alice/garden/pulls/${index}/reviews`, "bob", {
      event: "COMMENT",
      body: "",
      comments: [
        { path: "notes.txt", body: "Spell **two** out?", new_position: 2 },
        { path: "notes.txt", body: "Three stays", new_position: 3 }
      ]
    })
    // A push changing line 2: its comment is outdated, line 3's is not.
    const file = await api("GET", "/repos/alice/garden/contents/notes.txt?ref=notes", "alice")
    const pushed = await api("PUT", "/repos/alice/garden/contents/notes.txt", "alice", {
      content: b64("one\nTWO\nthree\n"),
      sha: file.sha,
      branch: "notes",
      message: "Shout two"
    })
    for (let i = 0; i < 400; i++) {
      const pull = await api("GET", `/repos/alice/garden/pulls/${index}`, "alice")
      if (pull.head.sha === pushed.commit.sha) break
      await sleep(25)
    }
  }, 60_000)

  it("folds a comment whose line changed into the file's Outdated block, with its hunk", async () => {
    const page = await (await as("bob")).get(`/alice/garden/pulls/${index}/files`)
    expect(page.status).toBe(200)
    const block =
      /<details class="Box mb-3 hearth-outdated" data-testid="outdated">([\s\S]*?)<\/details>\s*(?:<\/details>)?/.exec(
        page.text
      )
    expect(block).not.toBeNull()
    expect(block![0]).not.toMatch(/<details class="Box mb-3 hearth-outdated"[^>]* open/)
    expect(block![0]).toContain("Outdated")
    expect(block![0]).toContain("notes.txt:2")
    expect(block![0]).toContain("<strong>two</strong>")
    expect(block![0]).toMatch(/data-testid="outdated-hunk">[\s\S]*\+two/)
    expect(block![0]).not.toContain("Three stays")
    // Line 3's comment stays on its line; the outdated one is not shown there too.
    expect(page.text.match(/Three stays/g)).toHaveLength(1)
    expect(page.text.match(/<strong>two<\/strong>/g)).toHaveLength(1)
  })

  it("marks it outdated in the conversation, with the hunk it was made on", async () => {
    const page = await (await as("bob")).get(`/alice/garden/pulls/${index}`)
    const places = [...page.text.matchAll(/data-testid="review-comment-place">([\s\S]*?)<\/div>/g)].map((m) => m[1]!)
    expect(places).toHaveLength(2)
    expect(places.find((p) => p.startsWith("notes.txt:2"))).toContain('data-testid="outdated-label"')
    expect(places.find((p) => p.startsWith("notes.txt:3"))).not.toContain("outdated-label")
  })
})

describe("the merge box's commit message", () => {
  let index = 0

  beforeAll(async () => {
    index = await openPull("alice/garden", "prefill", "Prefill <it>", "a.txt", "a\n")
    await api("POST", "/repos/alice/garden/contents/b.txt", "alice", {
      content: b64("b\n"),
      branch: "prefill",
      message: "Second step\n\nWith a body"
    })
    for (let i = 0; i < 400; i++) {
      const pull = await api("GET", `/repos/alice/garden/pulls/${index}`, "alice")
      if (
        pull.mergeable === true &&
        (await api("GET", `/repos/alice/garden/pulls/${index}/commits`, "alice")).length === 2
      )
        break
      await sleep(25)
    }
  }, 60_000)

  const fieldsOf = (page: string) => ({
    title: unentity(/name="merge_title_field" value="([^"]*)"/.exec(page)?.[1] ?? "?"),
    body: unentity(/name="merge_message_field"[^>]*>([^<]*)<\/textarea>/.exec(page)?.[1] ?? "?")
  })

  it("prefills the default style's title, and each style's when switched (htmx)", async () => {
    const alice = await as("alice")
    const page = await alice.get(`/alice/garden/pulls/${index}`)
    expect(page.text).toMatch(/id="merge-style-merge" name="do" value="merge" checked/)
    expect(fieldsOf(page.text)).toEqual({
      title: `Merge pull request 'Prefill <it>' (#${index}) from prefill into main`,
      body: ""
    })
    expect(page.text).toContain(`hx-get="/alice/garden/pulls/${index}/merge_message"`)
    const squash = await alice.get(`/alice/garden/pulls/${index}/merge_message?do=squash`)
    expect(squash.status).toBe(200)
    expect(fieldsOf(squash.text)).toEqual({
      title: `Prefill <it> (#${index})`,
      body: "* prefill: a.txt\n\n* Second step\n\nWith a body"
    })
    for (const style of ["rebase", "fast-forward-only"]) {
      expect(fieldsOf((await alice.get(`/alice/garden/pulls/${index}/merge_message?do=${style}`)).text)).toEqual({
        title: "",
        body: ""
      })
    }
    expect((await alice.get(`/alice/garden/pulls/${index}/merge_message?do=octopus`)).status).toBe(404)
  })
})

describe("the comment preview", () => {
  it("is the pull requests unit's for a pull request: issues off, it works and the issues' one is a 404", async () => {
    await api("POST", "/user/repos", "alice", { name: "noissues", auto_init: true, readme: "Default" })
    const index = await openPull("alice/noissues", "change", "A change")
    await api("PATCH", "/repos/alice/noissues", "alice", { has_issues: false })
    const alice = await as("alice")
    const page = await alice.get(`/alice/noissues/pulls/${index}`)
    expect(page.status).toBe(200)
    expect(page.text).toContain('hx-post="/alice/noissues/pulls/markup"')
    const csrf = csrfOf(page.text)
    const preview = await alice.post("/alice/noissues/pulls/markup", { content: "Some **bold**" }, csrf)
    expect(preview.status).toBe(200)
    expect(preview.text).toContain("<strong>bold</strong>")
    expect((await alice.post("/alice/noissues/markup", { content: "Some **bold**" }, csrf)).status).toBe(404)
  })

  it("pulls off: the pull requests' preview is a 404, the issues' one works", async () => {
    await api("POST", "/user/repos", "alice", { name: "nopulls", auto_init: true, readme: "Default" })
    await api("PATCH", "/repos/alice/nopulls", "alice", { has_pull_requests: false })
    const alice = await as("alice")
    const csrf = csrfOf((await alice.get("/alice/nopulls/issues/new")).text)
    expect((await alice.post("/alice/nopulls/pulls/markup", { content: "x" }, csrf)).status).toBe(404)
    const preview = await alice.post("/alice/nopulls/markup", { content: "Some **bold**" }, csrf)
    expect(preview.status).toBe(200)
    expect(preview.text).toContain("<strong>bold</strong>")
  })
})

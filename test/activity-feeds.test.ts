// Activity feeds (issue 23 item 4, src/activities): actions recorded from the event hub with
// Forgejo's op_type and content (real pushes over git HTTP, issues, comments, a merged pull
// request, a release, a rename), the user, organization, team and repository feeds with what each
// reader may see (private repositories, keep_activity_private, team membership), paging and the
// `date` filter, the heatmap, and the RSS/Atom documents (well-formed, hostile text escaped).
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn, remoteAs } from "./support/git.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let work: string
const call = (user: string | undefined, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, user === undefined ? undefined : basic(user), body)
const feed = async (user: string | undefined, path: string) => {
  const res = await call(user, "GET", path)
  expect(res.status, `${path} as ${user}`).toBe(200)
  return (await json(res)) as Array<any>
}
const ops = (list: ReadonlyArray<any>) => list.map((a) => a.op_type)

/** Waits (bounded) until the repository feed has an action `op` matching `where` (pushes are recorded in a fiber of their own). */
const eventually = async (path: string, op: string, where: (a: any) => boolean = () => true) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const found = (await feed("root", `${path}?limit=50`)).find((a) => a.op_type === op && where(a))
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`no ${op} action in ${path}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

const git = (args: ReadonlyArray<string>) => gitIn(join(work, "code"), args)
const commit = async (file: string, message: string) => {
  writeFileSync(join(work, "code", file), `${Math.random()}\n`)
  await git(["add", file])
  await git(["commit", "-q", "-m", message])
  return git(["rev-parse", "HEAD"])
}

// A hostile commit message and issue title: every corpus entry, on one line each.
const HOSTILE = corpus
  .slice(0, 12)
  .map((s) => s.replace(/\n/g, " "))
  .join(" ")
  .slice(0, 250)

beforeAll(async () => {
  hearth = await startHearth()
  work = mkdtempSync(join(tmpdir(), "hearth-feeds-"))
  for (const username of ["alice", "bob", "carol", "dave"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })
  await apiAs(hearth, "POST", "/user/repos", "alice", { name: "code", auto_init: true })
  await apiAs(hearth, "POST", "/user/repos", "alice", { name: "secret", private: true, auto_init: true })
  await apiAs(hearth, "PUT", "/repos/alice/secret/collaborators/bob", "alice", { permission: "read" })
  await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "alice", "alice/code"), "code"])
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("recording", () => {
  it("records a push over git HTTP with its commits (Forgejo's PushCommits JSON), tags and branch deletion", async () => {
    const sha = await commit("a.txt", HOSTILE)
    await git(["push", "-q", "origin", "HEAD:main"])
    const pushed = await eventually("/repos/alice/code/activities/feeds", "commit_repo", (a) => a.content.includes(sha))
    expect(pushed).toMatchObject({ ref_name: "refs/heads/main", is_private: false, act_user: { login: "alice" } })
    expect(pushed.repo.full_name).toBe("alice/code")
    const content = JSON.parse(pushed.content)
    expect(content.Len).toBe(1)
    expect(content.Commits).toHaveLength(1)
    expect(content.Commits[0]).toMatchObject({ Sha1: sha, AuthorName: "T", AuthorEmail: "t@example.com" })
    expect(content.Commits[0].Message.trim()).toBe(HOSTILE)
    expect(content.HeadCommit.Sha1).toBe(sha)
    expect(content.CompareURL).toMatch(/^alice\/code\/compare\/[0-9a-f]{40}\.\.\.[0-9a-f]{40}$/)

    await git(["tag", "v0.1"])
    await git(["push", "-q", "origin", "v0.1"])
    await eventually("/repos/alice/code/activities/feeds", "push_tag", (a) => a.ref_name === "refs/tags/v0.1")
    await git(["push", "-q", "origin", ":refs/tags/v0.1"])
    await eventually("/repos/alice/code/activities/feeds", "delete_tag", (a) => a.ref_name === "refs/tags/v0.1")
    await git(["push", "-q", "origin", "HEAD:refs/heads/gone"])
    await git(["push", "-q", "origin", ":refs/heads/gone"])
    await eventually("/repos/alice/code/activities/feeds", "delete_branch", (a) => a.ref_name === "refs/heads/gone")
  })

  it("records issues, comments, closing, a merged pull request, a release, a rename and a new repository", async () => {
    const created = await eventually("/repos/alice/code/activities/feeds", "create_repo")
    expect(created.act_user.login).toBe("alice")

    const issue = await apiAs(hearth, "POST", "/repos/alice/code/issues", "bob", { title: HOSTILE })
    const comment = await apiAs(hearth, "POST", `/repos/alice/code/issues/${issue.number}/comments`, "bob", {
      body: "first line\nsecond line"
    })
    await apiAs(hearth, "PATCH", `/repos/alice/code/issues/${issue.number}`, "alice", { state: "closed" })
    const list = await feed("root", "/repos/alice/code/activities/feeds?limit=50")
    const opened = list.find((a) => a.op_type === "create_issue")
    expect(opened).toMatchObject({ content: `${issue.number}|${HOSTILE}`, act_user: { login: "bob" } })
    const commented = list.find((a) => a.op_type === "comment_issue")
    expect(commented).toMatchObject({ comment_id: comment.id, content: `${issue.number}|first line\nsecond line` })
    expect(commented.comment).toMatchObject({ id: comment.id, body: "first line\nsecond line" })
    expect(list.find((a) => a.op_type === "close_issue")).toMatchObject({
      content: `${issue.number}|`,
      act_user: { login: "alice" }
    })

    await commit("b.txt", "feature work")
    await git(["push", "-q", "origin", "HEAD:refs/heads/feature"])
    const pull = await apiAs(hearth, "POST", "/repos/alice/code/pulls", "alice", {
      head: "feature",
      base: "main",
      title: "Add feature"
    })
    expect((await call("alice", "POST", `/repos/alice/code/pulls/${pull.number}/merge`, { Do: "merge" })).status).toBe(
      200
    )
    const merged = await eventually("/repos/alice/code/activities/feeds", "merge_pull_request")
    expect(merged.content).toBe(`${pull.number}|Add feature`)
    await eventually(
      "/repos/alice/code/activities/feeds",
      "create_pull_request",
      (a) => a.content === `${pull.number}|Add feature`
    )

    await apiAs(hearth, "POST", "/repos/alice/code/releases", "alice", {
      tag_name: "v1.0",
      name: "First <b>release</b>"
    })
    const released = await eventually("/repos/alice/code/activities/feeds", "publish_release")
    expect(released).toMatchObject({ ref_name: "v1.0", content: "First <b>release</b>" })

    await apiAs(hearth, "POST", "/user/repos", "alice", { name: "old-name" })
    await apiAs(hearth, "PATCH", "/repos/alice/old-name", "alice", { name: "new-name" })
    expect(await eventually("/repos/alice/new-name/activities/feeds", "rename_repo")).toMatchObject({
      content: "old-name"
    })
  })

  it("records a pull request marked ready for review, a dismissed review and a scheduled merge", async () => {
    // A base branch that needs the `ci` status, so that a merge can wait for it.
    await git(["push", "-q", "origin", "HEAD:refs/heads/stable"])
    expect(
      (
        await call("alice", "POST", "/repos/alice/code/branch_protections", {
          rule_name: "stable",
          enable_push: true,
          enable_status_check: true,
          status_check_contexts: ["ci"]
        })
      ).status
    ).toBe(201)
    const head = (await commit("d.txt", "polish")).trim()
    await git(["push", "-q", "origin", "HEAD:refs/heads/polish"])
    const pull = await apiAs(hearth, "POST", "/repos/alice/code/pulls", "alice", {
      head: "polish",
      base: "stable",
      title: "WIP: polish"
    })
    const path = "/repos/alice/code/activities/feeds"

    // Forgejo's IssueChangeTitle: the work-in-progress prefix goes.
    expect((await call("alice", "PATCH", `/repos/alice/code/pulls/${pull.number}`, { title: "polish" })).status).toBe(
      201
    )
    expect(await eventually(path, "pull_request_ready_for_review")).toMatchObject({
      content: `${pull.number}|polish`,
      act_user: { login: "alice" }
    })

    // Forgejo's PullReviewDismiss: "index|reviewer|message", by the one who dismissed it.
    const review = await apiAs(hearth, "POST", `/repos/alice/code/pulls/${pull.number}/reviews`, "bob", {
      event: "APPROVED",
      body: "fine"
    })
    expect(
      (
        await call("alice", "POST", `/repos/alice/code/pulls/${pull.number}/reviews/${review.id}/dismissals`, {
          message: "out of date"
        })
      ).status
    ).toBe(200)
    expect(await eventually(path, "pull_review_dismissed")).toMatchObject({
      content: `${pull.number}|bob|out of date`,
      act_user: { login: "alice" }
    })

    // A merge scheduled until `ci` succeeds: Forgejo's AutoMergePullRequest, not a plain merge.
    const scheduled = await call("alice", "POST", `/repos/alice/code/pulls/${pull.number}/merge`, {
      Do: "merge",
      merge_when_checks_succeed: true
    })
    expect(scheduled.status, await scheduled.clone().text()).toBe(201)
    await call("alice", "POST", `/repos/alice/code/statuses/${head}`, { state: "success", context: "ci" })
    expect(await eventually(path, "auto_merge_pull_request")).toMatchObject({ content: `${pull.number}|polish` })
    const list = await feed("root", `${path}?limit=50`)
    expect(list.filter((a) => a.op_type === "merge_pull_request" && a.content === `${pull.number}|polish`)).toEqual([])
  })

  it("does not record a star (Forgejo's feed notifier has none)", async () => {
    const before = (await feed("root", "/repos/alice/code/activities/feeds?limit=50")).length
    await apiAs(hearth, "PUT", "/user/starred/alice/code", "carol")
    expect(ops(await feed("root", "/repos/alice/code/activities/feeds?limit=50"))).not.toContain("star_repo")
    expect((await feed("root", "/repos/alice/code/activities/feeds?limit=50")).length).toBe(before)
  })
})

describe("who sees what", () => {
  beforeAll(async () => {
    await apiAs(hearth, "POST", "/repos/alice/secret/issues", "alice", { title: "secret plans" })
  })

  it("shows a private repository's actions to the user, its collaborators and site admins, not to others", async () => {
    const secret = (list: ReadonlyArray<any>) => list.filter((a) => a.repo.full_name === "alice/secret")
    expect(secret(await feed("alice", "/users/alice/activities/feeds?limit=50")).length).toBeGreaterThan(0)
    expect(secret(await feed("root", "/users/alice/activities/feeds?limit=50")).length).toBeGreaterThan(0)
    expect(secret(await feed("carol", "/users/alice/activities/feeds?limit=50"))).toEqual([])
    expect(secret(await feed(undefined, "/users/alice/activities/feeds?limit=50"))).toEqual([])
    // The repository's own feed: its readers only.
    expect(ops(await feed("bob", "/repos/alice/secret/activities/feeds"))).toContain("create_issue")
    expect((await call("carol", "GET", "/repos/alice/secret/activities/feeds")).status).toBe(404)
    expect((await call(undefined, "GET", "/repos/alice/secret/activities/feeds")).status).toBe(404)
    // An action in someone's feed shows only `is_private` rows to its owner.
    const mine = await feed("alice", "/users/alice/activities/feeds?limit=50")
    expect(secret(mine).every((a) => a.is_private)).toBe(true)
  })

  it("puts a watched repository's actions in the watcher's feed, not with only-performed-by", async () => {
    await apiAs(hearth, "PUT", "/repos/alice/code/subscription", "carol")
    await apiAs(hearth, "POST", "/repos/alice/code/issues", "alice", { title: "for watchers" })
    const watched = await feed("carol", "/users/carol/activities/feeds?limit=50")
    expect(watched.find((a) => a.content.endsWith("|for watchers"))).toMatchObject({ act_user: { login: "alice" } })
    const own = await feed("carol", "/users/carol/activities/feeds?limit=50&only-performed-by=true")
    expect(own.every((a) => a.act_user.login === "carol")).toBe(true)
    expect(own.some((a) => a.content.endsWith("|for watchers"))).toBe(false)
    // An issue's action appears once in the repository's feed, however many feeds hold it.
    const inRepo = await feed("root", "/repos/alice/code/activities/feeds?limit=50")
    expect(inRepo.filter((a) => a.content.endsWith("|for watchers"))).toHaveLength(1)
  })

  it("hides the feed and heatmap of a user who keeps activity private, except from themself and site admins", async () => {
    await apiAs(hearth, "POST", "/user/repos", "dave", { name: "diary" })
    await apiAs(hearth, "POST", "/repos/dave/diary/issues", "dave", { title: "day one" })
    await apiAs(hearth, "PATCH", "/user/settings", "dave", { hide_activity: true })
    expect(await feed("carol", "/users/dave/activities/feeds")).toEqual([])
    expect(await feed(undefined, "/users/dave/activities/feeds")).toEqual([])
    expect(await feed("carol", "/users/dave/heatmap")).toEqual([])
    expect(ops(await feed("dave", "/users/dave/activities/feeds"))).toContain("create_issue")
    expect(ops(await feed("root", "/users/dave/activities/feeds"))).toContain("create_issue")
    expect((await feed("dave", "/users/dave/heatmap")).length).toBeGreaterThan(0)
    expect((await feed("root", "/users/dave/heatmap")).length).toBeGreaterThan(0)
    // The repository's feed is not the user's: readers of the repository still see it.
    expect(ops(await feed("carol", "/repos/dave/diary/activities/feeds"))).toContain("create_issue")
    await apiAs(hearth, "PATCH", "/user/settings", "dave", { hide_activity: false })
    expect(ops(await feed("carol", "/users/dave/activities/feeds"))).toContain("create_issue")
  })

  it("answers 404 for an unknown user, organization or team", async () => {
    expect((await call("alice", "GET", "/users/nobody/activities/feeds")).status).toBe(404)
    expect((await call("alice", "GET", "/users/nobody/heatmap")).status).toBe(404)
    expect((await call("alice", "GET", "/orgs/nobody/activities/feeds")).status).toBe(404)
    expect((await call("alice", "GET", "/teams/999999/activities/feeds")).status).toBe(404)
  })
})

describe("organization and team feeds", () => {
  let teamId: number
  let otherTeamId: number
  beforeAll(async () => {
    await apiAs(hearth, "POST", "/orgs", "alice", { username: "acme" })
    await apiAs(hearth, "POST", "/orgs/acme/repos", "alice", { name: "tools" })
    await apiAs(hearth, "POST", "/orgs/acme/repos", "alice", { name: "vault", private: true })
    const team = await apiAs(hearth, "POST", "/orgs/acme/teams", "alice", {
      name: "devs",
      permission: "read",
      units: ["repo.code", "repo.issues"]
    })
    teamId = team.id
    await apiAs(hearth, "PUT", `/teams/${teamId}/members/bob`, "alice")
    await apiAs(hearth, "PUT", `/teams/${teamId}/repos/acme/vault`, "alice")
    const other = await apiAs(hearth, "POST", "/orgs/acme/teams", "alice", { name: "others", permission: "read" })
    otherTeamId = other.id
    await apiAs(hearth, "PUT", `/teams/${otherTeamId}/members/dave`, "alice")
    await apiAs(hearth, "POST", "/repos/acme/tools/issues", "alice", { title: "tool issue" })
    await apiAs(hearth, "POST", "/repos/acme/vault/issues", "alice", { title: "vault issue" })
  })

  it("shows an organization's actions, its private repositories' only to members and site admins", async () => {
    const repos = (list: ReadonlyArray<any>) => new Set(list.map((a) => a.repo.full_name))
    expect(repos(await feed("bob", "/orgs/acme/activities/feeds?limit=50"))).toEqual(
      new Set(["acme/tools", "acme/vault"])
    )
    expect(repos(await feed("root", "/orgs/acme/activities/feeds?limit=50"))).toEqual(
      new Set(["acme/tools", "acme/vault"])
    )
    expect(repos(await feed("carol", "/orgs/acme/activities/feeds?limit=50"))).toEqual(new Set(["acme/tools"]))
    expect(repos(await feed(undefined, "/orgs/acme/activities/feeds?limit=50"))).toEqual(new Set(["acme/tools"]))
  })

  it("shows a team's repositories' actions to its members, refuses other members and hides it from outsiders", async () => {
    const list = await feed("bob", `/teams/${teamId}/activities/feeds?limit=50`)
    expect(new Set(list.map((a) => a.repo.full_name))).toEqual(new Set(["acme/vault"]))
    expect(ops(list)).toContain("create_issue")
    expect((await call("dave", "GET", `/teams/${teamId}/activities/feeds`)).status).toBe(403)
    expect((await call("carol", "GET", `/teams/${teamId}/activities/feeds`)).status).toBe(404)
    expect((await call(undefined, "GET", `/teams/${teamId}/activities/feeds`)).status).toBe(401)
    expect((await feed("root", `/teams/${teamId}/activities/feeds?limit=50`)).length).toBe(list.length)
  })

  it("keeps a private organization's public repositories out of an outsider's view of a member's feed", async () => {
    await apiAs(hearth, "POST", "/orgs", "alice", { username: "hush", visibility: "private" })
    await apiAs(hearth, "POST", "/orgs/hush/repos", "alice", { name: "open" })
    await apiAs(hearth, "POST", "/repos/hush/open/issues", "alice", { title: "quiet" })
    const seen = (list: ReadonlyArray<any>) => list.some((a) => a.repo.full_name === "hush/open")
    expect(seen(await feed("alice", "/users/alice/activities/feeds?limit=50"))).toBe(true)
    expect(seen(await feed("carol", "/users/alice/activities/feeds?limit=50"))).toBe(false)
    expect(seen(await feed(undefined, "/users/alice/activities/feeds?limit=50"))).toBe(false)
  })

  it("counts a private repository given to a reader's team among those it may see (the search too)", async () => {
    const found = (await json(await call("bob", "GET", "/repos/search?q=vault"))) as { data: Array<any> }
    expect(found.data.map((r) => r.full_name)).toEqual(["acme/vault"])
    const outsider = (await json(await call("carol", "GET", "/repos/search?q=vault"))) as { data: Array<any> }
    expect(outsider.data).toEqual([])
  })
})

describe("paging, dates and the heatmap", () => {
  it("pages with X-Total-Count and Link", async () => {
    const all = await feed("alice", "/repos/alice/code/activities/feeds?limit=50")
    expect(all.length).toBeGreaterThan(3)
    const res = await call("alice", "GET", "/repos/alice/code/activities/feeds?limit=2&page=2")
    expect(res.headers.get("x-total-count")).toBe(String(all.length))
    expect(res.headers.get("link")).toContain('rel="next"')
    expect(res.headers.get("link")).toContain('rel="prev"')
    const second = (await json(res)) as Array<any>
    expect(second.map((a) => a.id)).toEqual(all.slice(2, 4).map((a) => a.id))
    // Newest first.
    const times = all.map((a) => a.created)
    expect([...times].sort().reverse()).toEqual(times)
  })

  it("filters by day and refuses a date that is not one (422, nothing else changes)", async () => {
    const today = new Date().toISOString().slice(0, 10)
    const all = await feed("alice", "/repos/alice/code/activities/feeds?limit=50")
    expect((await feed("alice", `/repos/alice/code/activities/feeds?limit=50&date=${today}`)).length).toBe(all.length)
    expect(await feed("alice", "/repos/alice/code/activities/feeds?date=2001-02-03")).toEqual([])
    for (const bad of ["yesterday", "2024-02-30", "2024-1-1"]) {
      const res = await call("alice", "GET", `/users/alice/activities/feeds?date=${bad}`)
      expect(res.status, bad).toBe(422)
      expect(((await json(res)) as { message: string }).message).toContain("YYYY-MM-DD")
    }
    expect((await call("alice", "GET", "/orgs/acme/activities/feeds?date=nope")).status).toBe(422)
    expect((await call("alice", "GET", "/repos/alice/code/activities/feeds?date=nope")).status).toBe(422)
  })

  it("counts a user's own actions per 15 minutes, only those the reader may see", async () => {
    const own = await feed("alice", "/users/alice/heatmap")
    expect(own.length).toBeGreaterThan(0)
    for (const point of own) expect(point.timestamp % 900).toBe(0)
    const sum = (list: ReadonlyArray<any>) => list.reduce((n, p) => n + p.contributions, 0)
    const performed = await feed("alice", "/users/alice/activities/feeds?only-performed-by=true&limit=50")
    expect(sum(own)).toBe(performed.length)
    // carol may not see alice/secret, acme/vault, nor anything of the private organization hush.
    const hidden = performed.filter((a) => a.repo.private || a.repo.owner.login === "hush").length
    expect(hidden).toBeGreaterThan(0)
    expect(sum(await feed("carol", "/users/alice/heatmap"))).toBe(performed.length - hidden)
  })
})

/**
 * A strict XML 1.0 well-formedness check (no parser is a dependency here): one root, balanced
 * elements, quoted attributes without `<`, only the predefined and numeric entities, no stray `<`
 * or `&`. Returns each element with its decoded text.
 */
const parseXml = (doc: string) => {
  const prolog = '<?xml version="1.0" encoding="UTF-8"?>\n'
  expect(doc.startsWith(prolog)).toBe(true)
  const body = doc.slice(prolog.length)
  const entity = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/
  const decode = (s: string) => {
    if (entity.test(s)) throw new Error(`a bare & in ${JSON.stringify(s)}`)
    return s
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&apos;/g, "'")
      .replace(/&#(\d+);/g, (_, n) => String.fromCodePoint(Number(n)))
      .replace(/&amp;/g, "&")
  }
  const tag = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[\w:.-]+="[^"<]*")*)\s*(\/?)>/y
  const stack: Array<{ name: string; text: string; attrs: string }> = []
  const elements: Array<{ name: string; text: string; attrs: string }> = []
  let roots = 0
  let i = 0
  while (i < body.length) {
    const lt = body.indexOf("<", i)
    const text = body.slice(i, lt === -1 ? body.length : lt)
    if (stack.length === 0 && text.trim() !== "") throw new Error(`text outside the root: ${text}`)
    if (stack.length > 0) stack[stack.length - 1]!.text += decode(text)
    if (lt === -1) break
    tag.lastIndex = lt
    const m = tag.exec(body)
    if (m === null) throw new Error(`not a tag at ${body.slice(lt, lt + 40)}`)
    const [whole, closing, name, attrs, selfClosing] = m as unknown as [string, string, string, string, string]
    decode(attrs)
    if (closing === "/") {
      const open = stack.pop()
      if (open?.name !== name) throw new Error(`</${name}> closes <${open?.name}>`)
      elements.push(open)
    } else {
      if (stack.length === 0) roots++
      const element = { name, text: "", attrs }
      if (selfClosing === "/") elements.push(element)
      else stack.push(element)
    }
    i = lt + whole.length
  }
  expect(stack).toEqual([])
  expect(roots).toBe(1)
  return elements
}

describe("RSS and Atom", () => {
  const get = (path: string, user?: string) =>
    fetch(`${hearth.base}${path}`, user === undefined ? {} : { headers: { authorization: basic(user) } })

  it("serves a user's and a repository's feeds as well-formed RSS and Atom with Forgejo's titles, hostile text escaped", async () => {
    for (const [path, type] of [
      ["/alice.rss", "application/rss+xml"],
      ["/alice.atom", "application/atom+xml"],
      ["/alice/code.rss", "application/rss+xml"],
      ["/alice/code.atom", "application/atom+xml"]
    ] as const) {
      const res = await get(path)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("content-type")).toContain(type)
      const doc = await res.text()
      expect(doc).not.toContain("<script")
      expect(doc).not.toContain("<img")
      const elements = parseXml(doc)
      const titles = elements.filter((e) => e.name === "title").map((e) => e.text)
      expect(titles).toContain("alice pushed to main at alice/code")
      const texts = elements.map((e) => e.text)
      // The hostile commit message comes back exactly once decoded (control characters aside).
      expect(texts.some((t) => t.includes(HOSTILE))).toBe(true)
      if (path.startsWith("/alice/code")) {
        expect(titles.some((t) => t.startsWith("bob opened issue alice/code#"))).toBe(true)
        expect(titles).toContain("alice merged pull request alice/code#2")
      }
    }
  })

  it("keeps private repositories and their actions out of others' feeds", async () => {
    expect((await get("/alice/secret.rss")).status).toBe(404)
    expect((await get("/alice/secret.atom", "carol")).status).toBe(404)
    expect((await get("/alice/secret.atom", "bob")).status).toBe(200)
    expect(await (await get("/alice.rss")).text()).not.toContain("alice/secret")
    expect((await get("/nobody.rss")).status).toBe(404)
  })

  it("links the feed from the profile and the repository home", async () => {
    expect(await (await get("/alice")).text()).toContain(
      '<link rel="alternate" type="application/atom+xml" title="alice" href="/alice.atom">'
    )
    expect(await (await get("/alice/code")).text()).toContain(
      'type="application/atom+xml" title="alice/code" href="/alice/code.atom"'
    )
  })
})

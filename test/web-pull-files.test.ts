// Issue 22 item 2, a pull request's files changed in the browser over plain HTTP (the browser test is
// web-pull-files-browser.test.ts): the diff from the merge base to the head, unified and split,
// each file folding (details/summary), the file list, whitespace ignored on request, "viewed"
// markers (set, and shown as changed after a push changing the file), a comment on a line joining
// the viewer's pending review (seen by its author only) and submitted with "Finish review"
// (comment, approve, request changes; approving one's own pull request refused with the message),
// replies and resolving; who may see and do what (a private repository's stranger: 404; a reader
// blocked by the owner: no forms and a forged POST 403; anonymous: no forms); the XSS corpus in
// file names, file contents and review comment bodies.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { get } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { apiAs, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { executableInRendered } from "./support/rendered.ts"
import { csrfOf, signedIn, WebClient } from "./support/web.ts"
import { corpus } from "./support/xss.ts"

let hearth: Hearth
let work: string
let pull: number
let vaultPull: number

const web = () => new WebClient(hearth.base)
const as = (username: string) => signedIn(hearth.base, username)
const api = (method: string, path: string, user: string, body?: unknown) => apiAs(hearth, method, path, user, body)

const FILES = "/alice/app/pulls"
const filesOf = (n: number, query = "") => `${FILES}/${n}/files${query}`

const cloneUrl = (repo: string) => {
  const u = new URL(`${hearth.base}/alice/${repo}.git`)
  u.username = "alice"
  u.password = "password123"
  return u.toString()
}

/** Writes files in the clone of `repo`, commits and pushes to `branch`. */
const push = async (dir: string, branch: string, files: Record<string, string>, message = "change") => {
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text)
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["commit", "-q", "-m", message])
  await gitIn(dir, ["push", "-q", "origin", `HEAD:refs/heads/${branch}`])
}

const LINES = ["one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
const HOSTILE_NAME = `<img src=x onerror=alert(1)>.txt`

/** The HTML of the file box whose header names `path` (escaped as the page escapes it). */
const boxOf = (page: string, path: string) => {
  const boxes = page.split('<div class="Box mb-3 hearth-diff-file"').slice(1)
  return boxes.find((b) => b.includes(`>${path}</h3>`)) ?? ""
}

beforeAll(async () => {
  hearth = await startHearth()
  for (const username of ["alice", "bob", "carol", "dave", "erin"]) await createUser(hearth, { username })
  await api("POST", "/user/repos", "alice", { name: "app", auto_init: true })
  await api("POST", "/user/repos", "alice", { name: "vault", auto_init: true, private: true })
  await api("PUT", "/repos/alice/app/collaborators/bob", "alice", { permission: "write" })
  await api("PUT", "/repos/alice/vault/collaborators/carol", "alice", { permission: "read" })
  // alice blocks erin: erin still reads the public repository but may not comment there.
  await api("PUT", "/user/block/erin", "alice")

  work = mkdtempSync(join(tmpdir(), "hearth-web-pull-files-"))
  const app = join(work, "app")
  await gitIn(work, ["clone", "-q", cloneUrl("app"), app])
  await push(app, "main", { "a.txt": `${LINES.join("\n")}\n`, "spaces.txt": "alpha beta\n" }, "base")
  await gitIn(app, ["checkout", "-q", "-b", "topic"])
  const changed = [...LINES.slice(0, 4), "FIVE", ...LINES.slice(5), "eleven"]
  await push(
    app,
    "topic",
    {
      "a.txt": `${changed.join("\n")}\n`,
      "b.txt": "b\n",
      "spaces.txt": "alpha  beta\n",
      [HOSTILE_NAME]: `${corpus.join("\n")}\n`
    },
    "topic"
  )
  const made = await api("POST", "/repos/alice/app/pulls", "bob", { head: "topic", base: "main", title: "Topic" })
  pull = made.number

  const vault = join(work, "vault")
  await gitIn(work, ["clone", "-q", cloneUrl("vault"), vault])
  await gitIn(vault, ["checkout", "-q", "-b", "feat"])
  await push(vault, "feat", { "s.txt": "s\n" })
  vaultPull = (await api("POST", "/repos/alice/vault/pulls", "alice", { head: "feat", base: "main", title: "S" }))
    .number
}, 180_000)

afterAll(async () => {
  await hearth?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("the files changed page", () => {
  it("shows the diff unified by default, with the header, the file list and folding boxes", async () => {
    const page = await web().get(filesOf(pull))
    expect(page.status).toBe(200)
    expect(page.headers.get("content-type")).toContain("text/html")
    // Streamed: sent in chunks as the files are rendered, no length known up front.
    expect(page.headers.get("transfer-encoding")).toBe("chunked")
    expect(page.headers.get("content-length")).toBeNull()
    expect(page.text.trimEnd()).toMatch(/<\/html>$/)
    expect(page.text).toContain('data-testid="pull-title">Topic <span class="color-fg-muted">#')
    expect(page.text).toMatch(/data-testid="pull-tab-files" aria-current="page">.*Files changed</)
    expect(page.text).toContain("Showing <strong>4 changed files</strong>")
    // The file list links to each box.
    const list = page.text.split('data-testid="file-list"')[1]!.split("</details>")[0]!
    // git's order: the hostile name's `<` sorts first.
    expect(list).toMatch(/href="#diff-2">a\.txt<\/a>/)
    expect(list).toContain(">b.txt</a>")
    // Boxes fold without script: details/summary, open until viewed.
    const a = boxOf(page.text, "a.txt")
    expect(a).toMatch(/<details class="hearth-diff-fold" open>\s*<summary class="Box-header/)
    // Unified: one table of four columns per row, the deleted and the added line.
    expect(a).toContain('<table class="hearth-code highlight">')
    expect(a).toMatch(
      /<tr class="hearth-del"><td class="hearth-num">5<\/td><td class="hearth-num"><\/td><td class="hearth-sign">-<\/td><td class="hearth-text">five<\/td><\/tr>/
    )
    expect(a).toMatch(
      /<tr class="hearth-add"><td class="hearth-num"><\/td><td class="hearth-num">5<\/td><td class="hearth-sign">\+<\/td><td class="hearth-text">FIVE<\/td><\/tr>/
    )
    expect(page.text).toMatch(/href="[^"]*style=unified" aria-current="true"/)
  })

  it("streams gzipped to a client that accepts it, flushed chunk by chunk, and plain to one that does not", async () => {
    const raw = (encoding: string | undefined) =>
      new Promise<{ headers: Record<string, unknown>; body: Buffer }>((done, fail) =>
        get(
          `${hearth.base}${filesOf(pull)}`,
          { headers: encoding === undefined ? {} : { "accept-encoding": encoding } },
          (res) => {
            const chunks: Array<Buffer> = []
            res.on("data", (c: Buffer) => chunks.push(c))
            res.on("end", () => done({ headers: res.headers, body: Buffer.concat(chunks) }))
          }
        ).on("error", fail)
      )
    const zipped = await raw("br, gzip")
    expect(zipped.headers["content-encoding"]).toBe("gzip")
    expect(zipped.headers["transfer-encoding"]).toBe("chunked")
    const text = gunzipSync(zipped.body).toString("utf8")
    expect(text).toContain(">b.txt</h3>")
    expect(text.trimEnd()).toMatch(/<\/html>$/)
    const plain = await raw(undefined)
    expect(plain.headers["content-encoding"]).toBeUndefined()
    expect(plain.body.toString("utf8")).toContain(">b.txt</h3>")
    expect(plain.body.toString("utf8").trimEnd()).toMatch(/<\/html>$/)
  })

  it("shows the diff split with ?style=split, and keeps the style in its links", async () => {
    const page = await web().get(filesOf(pull, "?style=split"))
    expect(page.status).toBe(200)
    const a = boxOf(page.text, "a.txt")
    expect(a).toContain('<table class="hearth-code hearth-split highlight">')
    // The deleted line faces the added one.
    expect(a).toMatch(
      /<td class="hearth-num hearth-del-cell">5<\/td><td class="hearth-text hearth-del-cell">five<\/td><td class="hearth-num hearth-add-cell">5<\/td><td class="hearth-text hearth-add-cell">FIVE<\/td>/
    )
    expect(page.text).toMatch(/href="[^"]*style=split" aria-current="true"/)
    // The whitespace form keeps the style.
    expect(page.text.split('data-testid="whitespace-form"')[1]!.split("</form>")[0]).toContain(
      '<input type="hidden" name="style" value="split">'
    )
  })

  it("remembers a signed-in reader's style as their diff view setting (Forgejo's SetDiffViewStyle)", async () => {
    const dave = await as("dave")
    expect(boxOf((await dave.get(filesOf(pull))).text, "a.txt")).toContain('<table class="hearth-code highlight">')
    await dave.get(filesOf(pull, "?style=split"))
    expect((await api("GET", "/user/settings", "dave")).diff_view_style).toBe("split")
    // Without ?style= the setting decides.
    expect(boxOf((await dave.get(filesOf(pull))).text, "a.txt")).toContain(
      '<table class="hearth-code hearth-split highlight">'
    )
    await dave.get(filesOf(pull, "?style=unified"))
    expect((await api("GET", "/user/settings", "dave")).diff_view_style).toBe("unified")
    expect(boxOf((await dave.get(filesOf(pull))).text, "a.txt")).toContain('<table class="hearth-code highlight">')
    // An anonymous visitor has the query only.
    expect(boxOf((await web().get(filesOf(pull))).text, "a.txt")).toContain('<table class="hearth-code highlight">')
  })

  it("ignores whitespace changes with ?whitespace=ignore-all (Forgejo's values)", async () => {
    const all = await web().get(filesOf(pull))
    expect(all.text).toContain(">spaces.txt</h3>")
    const ignoring = await web().get(filesOf(pull, "?whitespace=ignore-all"))
    expect(ignoring.status).toBe(200)
    expect(ignoring.text).toContain('<option value="ignore-all" selected>')
    // Its only change was whitespace: nothing left to show.
    expect(boxOf(ignoring.text, "spaces.txt")).not.toContain("hearth-add")
    expect(boxOf(all.text, "spaces.txt")).toContain("hearth-add")
  })

  it("answers 404 for an unknown pull request and for a stranger of a private repository", async () => {
    expect((await web().get(filesOf(999))).status).toBe(404)
    expect((await web().get(`/alice/vault/pulls/${vaultPull}/files`)).status).toBe(404)
    const dave = await as("dave")
    expect((await dave.get(`/alice/vault/pulls/${vaultPull}/files`)).status).toBe(404)
    const carol = await as("carol")
    const page = await carol.get(`/alice/vault/pulls/${vaultPull}/files`)
    expect(page.status).toBe(200)
    expect(page.text).toContain(">s.txt</h3>")
  })

  it("shows no comment forms to anonymous readers and to a reader blocked by the owner; a forged POST is refused", async () => {
    const anonymous = await web().get(filesOf(pull))
    expect(anonymous.text).not.toContain('data-testid="add-comment"')
    expect(anonymous.text).not.toContain('data-testid="finish-review"')
    expect(anonymous.text).not.toContain('data-testid="viewed-toggle"')
    const erin = await as("erin")
    const page = await erin.get(filesOf(pull))
    expect(page.status).toBe(200)
    expect(page.text).not.toContain('data-testid="add-comment"')
    expect(page.text).not.toContain('data-testid="finish-review"')
    // Even with the line's form asked for.
    expect((await erin.get(filesOf(pull, "?comment=a.txt:new:5"))).text).not.toContain('data-testid="comment-form"')
    const csrf = csrfOf(page.text)
    const forged = await erin.post(
      `${FILES}/${pull}/files/reviews/comments`,
      { path: "a.txt", side: "new", line: "5", content: "sneaky" },
      csrf
    )
    expect(forged.status).toBe(403)
    const review = await erin.post(`${FILES}/${pull}/files/reviews/submit`, { type: "comment", content: "x" }, csrf)
    expect(review.status).toBe(403)
    // Nothing was stored.
    const reviews = await api("GET", `/repos/alice/app/pulls/${pull}/reviews`, "alice")
    expect(reviews.filter((r: any) => r.user.login === "erin")).toEqual([])
    // Without a session, a POST asks to sign in.
    const anon = web()
    const shown = await anon.get("/user/login")
    const post = await anon.post(`${FILES}/${pull}/files/reviews/comments`, { path: "a.txt" }, csrfOf(shown.text))
    expect(post.status).toBe(303)
    expect(post.location).toMatch(/^\/user\/login/)
  })
})

describe("comments on lines and reviews", () => {
  it("opens the form on a line (?comment=), keeps the text of a refused comment, and adds it to the pending review", async () => {
    const carol = await as("carol")
    const page = await carol.get(filesOf(pull, "?comment=a.txt:new:5"))
    expect(page.status).toBe(200)
    expect(page.text).toContain('data-testid="add-comment"')
    const form = page.text.split('data-testid="comment-form"')[1]!.split("</form>")[0]!
    expect(form).toContain('name="path" value="a.txt"')
    expect(form).toContain('name="line" value="5"')
    // The htmx fragment of the same form is a table row.
    const fragment = await carol.get(`${FILES}/${pull}/files/reviews/new_comment?path=a.txt&side=new&line=5`)
    expect(fragment.status).toBe(200)
    expect(fragment.text).toMatch(/^<tr class="hearth-line-extra"><td colspan="4"><form/)
    const csrf = csrfOf(page.text)
    // A line the diff does not show: refused, the text kept, the error next to the field.
    const refused = await carol.post(
      `${FILES}/${pull}/files/reviews/comments`,
      { path: "b.txt", side: "new", line: "40", content: "kept text" },
      csrf
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain("kept text</textarea>")
    expect(refused.text).toContain(
      'data-testid="field-error">line 40 of the new side of b.txt is not in the pull request&#39;s diff'
    )
    const empty = await carol.post(
      `${FILES}/${pull}/files/reviews/comments`,
      { path: "a.txt", side: "new", line: "5", content: "  " },
      csrf
    )
    expect(empty.status).toBe(422)
    expect(empty.text).toContain("a comment cannot be empty")

    const added = await carol.post(
      `${FILES}/${pull}/files/reviews/comments`,
      { path: "a.txt", side: "new", line: "5", content: "Why **capitals**?", style: "split" },
      csrf
    )
    expect(added.status).toBe(303)
    expect(added.location).toMatch(new RegExp(`^${FILES}/${pull}/files\\?style=split#issuecomment-\\d+$`))
    // Pending: shown inline to carol with the label and counted on "Finish review", to nobody else.
    const mine = await carol.get(filesOf(pull))
    const a = boxOf(mine.text, "a.txt")
    expect(a).toContain("Why <strong>capitals</strong>?")
    expect(a).toContain('data-testid="pending-label"')
    expect(mine.text).toMatch(/data-testid="pending-count">1</)
    expect((await web().get(filesOf(pull))).text).not.toContain("capitals")
    expect((await (await as("bob")).get(filesOf(pull))).text).not.toContain("capitals")
    // An old-side line: the deleted line 5.
    expect(
      (
        await carol.post(
          `${FILES}/${pull}/files/reviews/comments`,
          { path: "a.txt", side: "old", line: "5", content: "was lower case" },
          csrf
        )
      ).status
    ).toBe(303)
  })

  it("submits the pending review with its comments: visible to everyone, with replies and resolving", async () => {
    const carol = await as("carol")
    const page = await carol.get(filesOf(pull))
    const submitted = await carol.post(
      `${FILES}/${pull}/files/reviews/submit`,
      { type: "comment", content: "" },
      csrfOf(page.text)
    )
    expect(submitted.status).toBe(303)
    const reviews = await api("GET", `/repos/alice/app/pulls/${pull}/reviews`, "alice")
    const carols = reviews.filter((r: any) => r.user.login === "carol")
    expect(carols.map((r: any) => [r.state, r.comments_count])).toEqual([["COMMENT", 2]])
    // Everyone sees both comments now, without the pending label.
    const anonymous = await web().get(filesOf(pull))
    const a = boxOf(anonymous.text, "a.txt")
    expect(a).toContain("Why <strong>capitals</strong>?")
    expect(a).toContain("was lower case")
    expect(a).not.toContain('data-testid="pending-label"')
    // Neither reply nor resolve for an anonymous reader.
    expect(a).not.toContain('data-testid="reply-form"')
    expect(a).not.toContain('data-testid="resolve"')

    // bob (the poster, a writer) replies and resolves.
    const bob = await as("bob")
    const bobs = await bob.get(filesOf(pull))
    const box = boxOf(bobs.text, "a.txt")
    expect(box).toContain('data-testid="reply-form"')
    const review = /name="reply" value="(\d+)"/.exec(box)![1]!
    const replied = await bob.post(
      `${FILES}/${pull}/files/reviews/comments`,
      { path: "a.txt", side: "new", line: "5", content: "Because it is loud.", reply: review },
      csrfOf(bobs.text)
    )
    expect(replied.status).toBe(303)
    const thread = boxOf((await web().get(filesOf(pull))).text, "a.txt")
    expect(thread).toMatch(/Why <strong>capitals<\/strong>\?[\s\S]*Because it is loud\./)
    const commentId = /name="comment_id" value="(\d+)"/.exec(boxOf((await bob.get(filesOf(pull))).text, "a.txt"))![1]!
    // carol, a reader who is neither the poster nor a writer, may not resolve: no button, 403.
    const carolPage = await carol.get(filesOf(pull))
    expect(boxOf(carolPage.text, "a.txt")).not.toContain('data-testid="resolve"')
    expect(
      (
        await carol.post(
          `${FILES}/${pull}/files/reviews/resolve`,
          { comment_id: commentId, action: "resolve" },
          csrfOf(carolPage.text)
        )
      ).status
    ).toBe(403)
    const resolved = await bob.post(
      `${FILES}/${pull}/files/reviews/resolve`,
      { comment_id: commentId, action: "resolve" },
      csrfOf(bobs.text)
    )
    expect(resolved.status).toBe(303)
    const after = boxOf((await web().get(filesOf(pull))).text, "a.txt")
    expect(after).toContain('data-testid="resolved-label"')
    const listed = await api("GET", `/repos/alice/app/pulls/${pull}/reviews/${review}/comments`, "alice")
    expect(listed.find((c: any) => String(c.id) === commentId).resolver.login).toBe("bob")
  })

  it("refuses approving or requesting changes on one's own pull request, with the message, and keeps the text", async () => {
    const bob = await as("bob")
    const page = await bob.get(filesOf(pull))
    // The choices are disabled for the poster.
    expect(page.text).toMatch(/value="approve" disabled/)
    const refused = await bob.post(
      `${FILES}/${pull}/files/reviews/submit`,
      { type: "approve", content: "self-approval" },
      csrfOf(page.text)
    )
    expect(refused.status).toBe(422)
    expect(refused.text).toContain("approve your own pull is not allowed")
    expect(refused.text).toContain("self-approval</textarea>")
    const rejected = await bob.post(
      `${FILES}/${pull}/files/reviews/submit`,
      { type: "reject", content: "self" },
      csrfOf(page.text)
    )
    expect(rejected.status).toBe(422)
    expect(rejected.text).toContain("reject your own pull is not allowed")
    const reviews = await api("GET", `/repos/alice/app/pulls/${pull}/reviews`, "alice")
    expect(reviews.filter((r: any) => r.user.login === "bob")).toEqual([])
  })

  it("approves, and requests changes only with a body", async () => {
    const alice = await as("alice")
    const page = await alice.get(filesOf(pull))
    const csrf = csrfOf(page.text)
    const noBody = await alice.post(`${FILES}/${pull}/files/reviews/submit`, { type: "reject", content: "" }, csrf)
    expect(noBody.status).toBe(422)
    expect(noBody.text).toContain("review event REQUEST_CHANGES requires a body")
    expect(
      (await alice.post(`${FILES}/${pull}/files/reviews/submit`, { type: "reject", content: "Not yet." }, csrf)).status
    ).toBe(303)
    expect(
      (await alice.post(`${FILES}/${pull}/files/reviews/submit`, { type: "approve", content: "" }, csrf)).status
    ).toBe(303)
    const reviews = await api("GET", `/repos/alice/app/pulls/${pull}/reviews`, "alice")
    expect(reviews.filter((r: any) => r.user.login === "alice").map((r: any) => r.state)).toEqual([
      "REQUEST_CHANGES",
      "APPROVED"
    ])
    // A comment review needs a body when nothing is pending.
    const empty = await alice.post(`${FILES}/${pull}/files/reviews/submit`, { type: "comment", content: "" }, csrf)
    expect(empty.status).toBe(422)
    expect(empty.text).toContain("review event COMMENT requires a body or a comment")
  })
})

describe("viewed markers", () => {
  it("folds a file marked viewed, per user, and shows it as changed after a push changing it", async () => {
    const dave = await as("dave")
    const page = await dave.get(filesOf(pull))
    const box = boxOf(page.text, "b.txt")
    const head = /name="head" value="([0-9a-f]{40})"/.exec(box)![1]!
    const marked = await dave.post(
      `${FILES}/${pull}/files/reviews/viewed-files`,
      { path: "b.txt", head, viewed: "true", anchor: "diff-2" },
      csrfOf(page.text)
    )
    expect(marked.status).toBe(303)
    expect(marked.location).toBe(`${FILES}/${pull}/files#diff-2`)
    const after = await dave.get(filesOf(pull))
    expect(boxOf(after.text, "b.txt")).toContain('<details class="hearth-diff-fold">')
    expect(boxOf(after.text, "b.txt")).toContain('aria-pressed="true"')
    expect(boxOf(after.text, "a.txt")).toMatch(/<details class="hearth-diff-fold" open>/)
    expect(after.text).toContain('data-testid="viewed-count">1 / 4 files viewed')
    // Someone else's page is not folded.
    expect(boxOf((await (await as("carol")).get(filesOf(pull))).text, "b.txt")).toMatch(
      /<details class="hearth-diff-fold" open>/
    )

    // A push changing b.txt (and not a.txt): b.txt is unfolded and marked as changed.
    const app = join(work, "app")
    await push(app, "topic", { "b.txt": "b\nmore\n" }, "more b")
    let changed = ""
    for (let i = 0; i < 50; i++) {
      changed = (await dave.get(filesOf(pull))).text
      if (boxOf(changed, "b.txt").includes("more")) break
      await new Promise((r) => setTimeout(r, 200))
    }
    const b = boxOf(changed, "b.txt")
    expect(b).toContain('data-testid="changed-since"')
    expect(b).toMatch(/<details class="hearth-diff-fold" open>/)
    expect(b).toContain('aria-pressed="false"')
    expect(changed).toContain('data-testid="viewed-count">0 / 4 files viewed')
    // It stays changed on the next visit, until viewed again.
    expect(boxOf((await dave.get(filesOf(pull))).text, "b.txt")).toContain('data-testid="changed-since"')
    const newHead = /name="head" value="([0-9a-f]{40})"/.exec(b)![1]!
    expect(newHead).not.toBe(head)
    await dave.post(
      `${FILES}/${pull}/files/reviews/viewed-files`,
      { path: "b.txt", head: newHead, viewed: "true" },
      csrfOf(changed)
    )
    const again = boxOf((await dave.get(filesOf(pull))).text, "b.txt")
    expect(again).not.toContain('data-testid="changed-since"')
    expect(again).toContain('aria-pressed="true"')
    // Unmarking unfolds it.
    await dave.post(
      `${FILES}/${pull}/files/reviews/viewed-files`,
      { path: "b.txt", head: newHead, viewed: "false" },
      csrfOf(changed)
    )
    expect(boxOf((await dave.get(filesOf(pull))).text, "b.txt")).toMatch(/<details class="hearth-diff-fold" open>/)
  })
})

describe("HTML escaping (the XSS corpus)", () => {
  it("escapes file names and contents, and sanitizes review comment bodies", async () => {
    const carol = await as("carol")
    const page = await carol.get(filesOf(pull))
    const csrf = csrfOf(page.text)
    for (let i = 0; i < corpus.length; i += 12) {
      const res = await carol.post(
        `${FILES}/${pull}/files/reviews/comments`,
        { path: HOSTILE_NAME, side: "new", line: String(i + 1), content: corpus.slice(i, i + 12).join("\n\n") },
        csrf
      )
      expect(res.status, res.text.slice(0, 300)).toBe(303)
    }
    // Pending (carol's page), then submitted (everyone's).
    const pending = await carol.get(filesOf(pull))
    expect(pending.text).toContain("&lt;img src=x onerror=alert(1)&gt;.txt")
    expect(executableInRendered(pending.text)).toEqual([])
    expect(
      (await carol.post(`${FILES}/${pull}/files/reviews/submit`, { type: "comment", content: corpus[0]! }, csrf)).status
    ).toBe(303)
    for (const query of ["", "?style=split", `?comment=${encodeURIComponent(`${HOSTILE_NAME}:new:2`)}`]) {
      const shown = await carol.get(filesOf(pull, query))
      expect(shown.status).toBe(200)
      expect(executableInRendered(shown.text), query).toEqual([])
    }
    expect(executableInRendered((await web().get(filesOf(pull))).text)).toEqual([])
  })
})

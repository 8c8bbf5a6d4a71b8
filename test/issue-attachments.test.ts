// Attachments of issues and comments (issue 18 item 5; CONTRACT-ISSUES §10, §4.3, §16): multipart
// uploads streamed into the blob storage, `[attachment] MAX_SIZE` (413) and `ALLOWED_TYPES` (422)
// refused before anything is kept, the quota `size:assets:attachments:issues` of the repository's
// owner, list/get/edit/delete, `assets` in Issue and Comment JSON, downloads at
// `/attachments/{uuid}` for whoever may read the issue (404 otherwise) with safe headers, blobs
// released when an attachment, its comment or its issue goes, `updated_at`, events, and the
// token scopes of the tracker's extras routes (item 3).
import { existsSync, readdirSync } from "node:fs"
import { join } from "node:path"
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Event } from "../src/events/Events.ts"
import { EventHub } from "../src/events/Hub.ts"
import { BlobStorage } from "../src/storage/Service.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"
import { WebClient } from "./support/web.ts"

let hearth: Hearth
const seen: Array<Event> = []
const ids: Record<string, number> = {}
const MB = 1024 * 1024
const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex"
)

beforeAll(async () => {
  // API bodies up to 64 KiB: attachments are bounded by [attachment] MAX_SIZE alone.
  hearth = await startHearth({
    attachment: { MAX_SIZE: "1" },
    quota: { ENABLED: "true" },
    server: { MAX_REQUEST_BODY: String(64 * 1024) }
  })
  const hub = await hearth.run(Effect.service(EventHub))
  await hearth.run(hub.subscribe({ name: "collector", handle: (event) => Effect.sync(() => void seen.push(event)) }))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["owner", "poster", "writer", "reader", "other", "tight"]) {
    ids[username] = (await createUser(hearth, { username })).id
  }
  for (const [name, isPrivate] of [
    ["public", false],
    ["private", true],
    ["archived", false]
  ] as const) {
    expect((await request(hearth, "POST", "/user/repos", basic("owner"), { name, private: isPrivate })).status).toBe(
      201
    )
    for (const [who, permission] of [
      ["writer", "write"],
      ["reader", "read"],
      ["poster", "read"]
    ] as const) {
      const put = await request(hearth, "PUT", `/repos/owner/${name}/collaborators/${who}`, basic("owner"), {
        permission
      })
      expect(put.status).toBe(204)
    }
  }
  // `tight` may store 1 KiB of issue attachments, and anything else.
  expect(
    (
      await request(hearth, "POST", "/admin/quota/groups", basic("root"), {
        name: "tight",
        rules: [
          { name: "tight-attachments", limit: 1024, subjects: ["size:assets:attachments:issues"] },
          { name: "tight-rest", limit: -1, subjects: ["size:all"] }
        ]
      })
    ).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/admin/users/tight/quota/groups", basic("root"), { groups: ["tight"] })).status
  ).toBe(204)
  expect((await request(hearth, "POST", "/user/repos", basic("tight"), { name: "small" })).status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

const newIssue = async (repo: string, who = "poster", owner = "owner") => {
  const res = await request(hearth, "POST", `/repos/${owner}/${repo}/issues`, basic(who), { title: `t ${who}` })
  expect(res.status).toBe(201)
  return (await json(res)) as { number: number; id: number; updated_at: string }
}
const newComment = async (repo: string, index: number, who = "poster") => {
  const res = await request(hearth, "POST", `/repos/owner/${repo}/issues/${index}/comments`, basic(who), {
    body: "a comment"
  })
  expect(res.status).toBe(201)
  return (await json(res)) as { id: number; updated_at: string }
}

/** A multipart upload of `bytes` as file `filename` in field `field` (default `attachment`). */
const upload = (
  path: string,
  auth: string | undefined,
  bytes: Uint8Array | string,
  filename: string,
  options: { field?: string; fields?: Record<string, string>; fieldsAfter?: Record<string, string> } = {}
) => {
  const form = new FormData()
  for (const [k, v] of Object.entries(options.fields ?? {})) form.append(k, v)
  form.append(options.field ?? "attachment", new Blob([bytes]), filename)
  for (const [k, v] of Object.entries(options.fieldsAfter ?? {})) form.append(k, v)
  return fetch(hearth.api(path), {
    method: "POST",
    headers: auth === undefined ? {} : { authorization: auth },
    body: form
  })
}

/** Files in the blob store (not its tmp or trash directories). */
const storedFiles = () => {
  const root = hearth.settings.storage.PATH
  const out: Array<string> = []
  for (const a of readdirSync(root)) {
    if (a === "tmp" || a === "trash") continue
    for (const b of readdirSync(join(root, a))) out.push(...readdirSync(join(root, a, b)))
  }
  return out.sort()
}
const tmpFiles = () => readdirSync(join(hearth.settings.storage.PATH, "tmp"))
const blobPath = (sha256: string) => join(hearth.settings.storage.PATH, sha256.slice(0, 2), sha256.slice(2, 4), sha256)
const sha256Of = async (uuid: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const rows = yield* sql`SELECT sha256 FROM attachments WHERE uuid = ${uuid}`
      return rows[0]?.sha256 as string | undefined
    })
  )
const refcount = async (sha256: string) =>
  Option.getOrUndefined(await hearth.run(BlobStorage.use((s) => s.stat(sha256))))?.refcount
const sweep = () => hearth.run(BlobStorage.use((s) => s.sweep))
const blobRows = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return Number((yield* sql`SELECT count(*) AS n FROM blobs`)[0]!.n)
    })
  )
const unique = (text: string) => `${text} ${Math.random().toString(36).slice(2)}`

describe("issue attachments", () => {
  it("uploads a file to an issue: 201, listed, fetched, in the issue's assets, and downloadable", async () => {
    const issue = await newIssue("public")
    const before = Date.parse(issue.updated_at)
    const body = unique("hello attachment")
    const res = await upload(`/repos/owner/public/issues/${issue.number}/assets`, basic("poster"), body, "notes.txt")
    expect(res.status).toBe(201)
    const created = await json(res)
    expectSwagger(created, "Attachment")
    expect(created).toMatchObject({
      name: "notes.txt",
      size: Buffer.byteLength(body),
      download_count: 0,
      type: "attachment",
      browser_download_url: `${hearth.base}/attachments/${created.uuid}`
    })
    const listed = await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets`))
    expect(listed).toEqual([created])
    const got = await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets/${created.id}`)
    expect(await json(got)).toEqual(created)
    const shown = await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}`))
    expect(shown.assets).toEqual([created])
    expectSwagger(shown, "Issue")
    // Forgejo re-saves the issue: its updated_at moves.
    expect(Date.parse(shown.updated_at)).toBeGreaterThanOrEqual(before)
    const download = await fetch(created.browser_download_url)
    expect(download.status).toBe(200)
    expect(await download.text()).toBe(body)
    expect(download.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(download.headers.get("x-content-type-options")).toBe("nosniff")
    expect(download.headers.get("content-disposition")).toContain("filename*=UTF-8''notes.txt")
    const counted = await json(
      await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets/${created.id}`)
    )
    expect(counted.download_count).toBe(1)
  })

  it("takes the name from the `name` query or form field, and answers a missing file or a non-multipart body with 422", async () => {
    const issue = await newIssue("public")
    const path = `/repos/owner/public/issues/${issue.number}/assets`
    const byQuery = await upload(`${path}?name=renamed.txt`, basic("poster"), "x", "orig.txt")
    expect((await json(byQuery)).name).toBe("renamed.txt")
    const byForm = await upload(path, basic("poster"), "y", "orig.txt", { fields: { name: "form.txt" } })
    expect((await json(byForm)).name).toBe("form.txt")
    const noFile = new FormData()
    noFile.append("name", "x.txt")
    const missing = await fetch(hearth.api(path), {
      method: "POST",
      headers: { authorization: basic("poster") },
      body: noFile
    })
    expect(missing.status).toBe(422)
    expect((await json(missing)).message).toContain('"attachment"')
    const notMultipart = await request(hearth, "POST", path, basic("poster"), { attachment: "x" })
    expect(notMultipart.status).toBe(422)
    expect((await json(notMultipart)).message).toContain("multipart/form-data")
  })

  it("renames (201; an empty name changes nothing) and deletes (204): the blob's reference goes with the row", async () => {
    const issue = await newIssue("public")
    const body = unique("to delete")
    const created = await json(
      await upload(`/repos/owner/public/issues/${issue.number}/assets`, basic("poster"), body, "a.txt")
    )
    const path = `/repos/owner/public/issues/${issue.number}/assets/${created.id}`
    const renamed = await request(hearth, "PATCH", path, basic("poster"), { name: "b.txt" })
    expect(renamed.status).toBe(201)
    expect((await json(renamed)).name).toBe("b.txt")
    const same = await request(hearth, "PATCH", path, basic("poster"), { name: "" })
    expect((await json(same)).name).toBe("b.txt")
    const sha = (await sha256Of(created.uuid))!
    expect(await refcount(sha)).toBe(1)
    expect(existsSync(blobPath(sha))).toBe(true)
    expect((await request(hearth, "DELETE", path, basic("poster"))).status).toBe(204)
    expect((await request(hearth, "GET", path)).status).toBe(404)
    expect((await fetch(created.browser_download_url)).status).toBe(404)
    expect(await refcount(sha)).toBe(0)
    await sweep()
    expect(await refcount(sha)).toBeUndefined()
    expect(existsSync(blobPath(sha))).toBe(false)
  })

  it("stores the same bytes once, counting one reference per attachment", async () => {
    const issue = await newIssue("public")
    const body = unique("twice")
    const path = `/repos/owner/public/issues/${issue.number}/assets`
    const a = await json(await upload(path, basic("poster"), body, "one.txt"))
    const b = await json(await upload(path, basic("poster"), body, "two.txt"))
    const sha = (await sha256Of(a.uuid))!
    expect(await sha256Of(b.uuid)).toBe(sha)
    expect(await refcount(sha)).toBe(2)
    expect((await request(hearth, "DELETE", `${path}/${a.id}`, basic("poster"))).status).toBe(204)
    expect(await refcount(sha)).toBe(1)
    expect(await (await fetch(b.browser_download_url)).text()).toBe(body)
  })

  it("refuses a file over [attachment] MAX_SIZE with 413 and keeps nothing of it", async () => {
    const issue = await newIssue("public")
    await sweep()
    const files = storedFiles()
    const rows = await blobRows()
    const res = await upload(
      `/repos/owner/public/issues/${issue.number}/assets`,
      basic("poster"),
      Buffer.alloc(MB + 1, 7),
      "big.txt"
    )
    expect(res.status).toBe(413)
    expect((await json(res)).message).toContain("larger than the limit of 1 MiB")
    expect(storedFiles()).toEqual(files)
    expect(await blobRows()).toBe(rows)
    expect(tmpFiles()).toEqual([])
    expect(await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets`))).toEqual([])
    // Exactly the limit is accepted ([server] MAX_REQUEST_BODY, 64 KiB here, does not apply).
    const fits = await upload(
      `/repos/owner/public/issues/${issue.number}/assets`,
      basic("poster"),
      Buffer.alloc(MB, 8),
      "fits.txt"
    )
    expect(fits.status).toBe(201)
    const stored = await json(fits)
    expect(stored.size).toBe(MB)
    expect((await (await fetch(stored.browser_download_url)).arrayBuffer()).byteLength).toBe(MB)
  })

  it("refuses a type [attachment] ALLOWED_TYPES does not list with 422 (Forgejo's message) and keeps nothing", async () => {
    const issue = await newIssue("public")
    const rows = await blobRows()
    const files = storedFiles()
    const res = await upload(`/repos/owner/public/issues/${issue.number}/assets`, basic("poster"), PNG, "file.bad")
    expect(res.status).toBe(422)
    expect(await json(res)).toEqual({
      message: "This file extension or type is not allowed to be uploaded.",
      url: `${hearth.base}/api/swagger`
    })
    expect(await blobRows()).toBe(rows)
    expect(storedFiles()).toEqual(files)
    expect(tmpFiles()).toEqual([])
  })

  it("charges the repository owner's quota size:assets:attachments:issues: 413 naming the owner once over", async () => {
    const issue = await newIssue("small", "tight", "tight")
    const path = `/repos/tight/small/issues/${issue.number}/assets`
    expect((await upload(path, basic("tight"), Buffer.alloc(2048, 1), "first.txt")).status).toBe(201)
    const rows = await blobRows()
    const res = await upload(path, basic("tight"), unique("second"), "second.txt")
    expect(res.status).toBe(413)
    expect(await json(res)).toEqual({
      message: "quota exceeded",
      url: `${hearth.base}/api/swagger`,
      user_id: ids.tight,
      username: "tight"
    })
    expect(await blobRows()).toBe(rows)
    const used = await json(await request(hearth, "GET", "/user/quota", basic("tight")))
    expect(used.used.size.assets.attachments.issues).toBe(2048)
  })
})

describe("comment attachments", () => {
  it("uploads to a comment: in the comment's assets, not in the issue's, reachable only through the comment", async () => {
    const issue = await newIssue("public")
    const comment = await newComment("public", issue.number)
    const path = `/repos/owner/public/issues/comments/${comment.id}/assets`
    const res = await upload(path, basic("poster"), PNG, "dot.png")
    expect(res.status).toBe(201)
    const created = await json(res)
    expect(await json(await request(hearth, "GET", path))).toEqual([created])
    expect(await json(await request(hearth, "GET", `${path}/${created.id}`))).toEqual(created)
    const shown = await json(await request(hearth, "GET", `/repos/owner/public/issues/comments/${comment.id}`))
    expect(shown.assets).toEqual([created])
    expectSwagger(shown, "Comment")
    const listed = await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/comments`))
    expect(listed.find((c: any) => c.id === comment.id).assets).toEqual([created])
    expect(await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets`))).toEqual([])
    expect(
      (await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}/assets/${created.id}`)).status
    ).toBe(404)
    // Another comment's id does not reach it.
    const unrelated = await newComment("public", issue.number)
    expect(
      (await request(hearth, "GET", `/repos/owner/public/issues/comments/${unrelated.id}/assets/${created.id}`)).status
    ).toBe(404)
    const download = await fetch(created.browser_download_url)
    expect(download.headers.get("content-type")).toBe("image/png")
    expect(download.headers.get("content-disposition")).toMatch(/^inline;/)
    expect(Buffer.from(await download.arrayBuffer())).toEqual(PNG)
  })

  it("deleting a comment or an issue releases the blobs of its attachments", async () => {
    const issue = await newIssue("public")
    const comment = await newComment("public", issue.number)
    const onComment = await json(
      await upload(`/repos/owner/public/issues/comments/${comment.id}/assets`, basic("poster"), unique("c"), "c.txt")
    )
    const onIssue = await json(
      await upload(`/repos/owner/public/issues/${issue.number}/assets`, basic("poster"), unique("i"), "i.txt")
    )
    const commentSha = (await sha256Of(onComment.uuid))!
    const issueSha = (await sha256Of(onIssue.uuid))!
    expect(await refcount(commentSha)).toBe(1)
    expect(
      (await request(hearth, "DELETE", `/repos/owner/public/issues/comments/${comment.id}`, basic("poster"))).status
    ).toBe(204)
    expect(await refcount(commentSha)).toBe(0)
    expect(await refcount(issueSha)).toBe(1)
    expect((await request(hearth, "DELETE", `/repos/owner/public/issues/${issue.number}`, basic("owner"))).status).toBe(
      204
    )
    expect(await refcount(issueSha)).toBe(0)
    await sweep()
    expect(existsSync(blobPath(commentSha))).toBe(false)
    expect(existsSync(blobPath(issueSha))).toBe(false)
  })
})

describe("who may upload, edit and delete (CONTRACT-ISSUES §1.3, §10)", () => {
  it("the poster or a writer; a reader gets 403 with Forgejo's message; anonymous 401; 423 when archived", async () => {
    const issue = await newIssue("public")
    const path = `/repos/owner/public/issues/${issue.number}/assets`
    expect((await upload(path, undefined, "x", "x.txt")).status).toBe(401)
    const refused = await upload(path, basic("reader"), "x", "x.txt")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe("user should have permission to write issue")
    expect((await upload(path, basic("writer"), "w", "w.txt")).status).toBe(201)
    const mine = await json(await upload(path, basic("poster"), "p", "p.txt"))
    expect((await request(hearth, "PATCH", `${path}/${mine.id}`, basic("reader"), { name: "z" })).status).toBe(403)
    expect((await request(hearth, "DELETE", `${path}/${mine.id}`, basic("reader"))).status).toBe(403)
    // Readers still read.
    expect((await request(hearth, "GET", path, basic("reader"))).status).toBe(200)
    // A comment's attachments: its poster or a writer.
    const comment = await newComment("public", issue.number, "writer")
    const commentPath = `/repos/owner/public/issues/comments/${comment.id}/assets`
    const notYours = await upload(commentPath, basic("poster"), "x", "x.txt")
    expect(notYours.status).toBe(403)
    expect((await json(notYours)).message).toBe("user should have permission to edit comment")
    expect((await upload(commentPath, basic("writer"), "x", "x.txt")).status).toBe(201)
    // Archived: 423 for changes.
    const archivedIssue = await newIssue("archived")
    expect((await request(hearth, "PATCH", "/repos/owner/archived", basic("owner"), { archived: true })).status).toBe(
      200
    )
    expect(
      (await upload(`/repos/owner/archived/issues/${archivedIssue.number}/assets`, basic("owner"), "x", "x.txt")).status
    ).toBe(423)
  })

  it("a private repository's attachments are 404 to those who cannot see it", async () => {
    const issue = await newIssue("private")
    const path = `/repos/owner/private/issues/${issue.number}/assets`
    expect((await upload(path, basic("other"), "x", "x.txt")).status).toBe(404)
    expect((await request(hearth, "GET", path, basic("other"))).status).toBe(404)
    expect((await request(hearth, "GET", path)).status).toBe(404)
    expect((await request(hearth, "GET", `/repos/owner/private/issues/999/assets`, basic("owner"))).status).toBe(404)
  })
})

describe("downloads at /attachments/{uuid}", () => {
  it("honour the repository's visibility: 404 for anonymous and strangers, 200 for readers (Basic, token, web session)", async () => {
    const issue = await newIssue("private")
    const body = unique("secret")
    const created = await json(
      await upload(`/repos/owner/private/issues/${issue.number}/assets`, basic("poster"), body, "s.txt")
    )
    const url = created.browser_download_url
    const anonymous = await fetch(url)
    expect(anonymous.status).toBe(404)
    expect(await anonymous.text()).toBe("")
    expect((await fetch(url, { headers: { authorization: basic("other") } })).status).toBe(404)
    const asReader = await fetch(url, { headers: { authorization: basic("reader") } })
    expect(asReader.status).toBe(200)
    expect(await asReader.text()).toBe(body)
    const token = await createToken(hearth, "reader", ["read:issue", "read:repository"])
    expect((await fetch(url, { headers: { authorization: `token ${token}` } })).status).toBe(200)
    const publicOnly = await createToken(hearth, "owner", ["public-only", "read:issue"])
    expect((await fetch(url, { headers: { authorization: `token ${publicOnly}` } })).status).toBe(404)
    // Signed in on the web.
    const browser = new WebClient(hearth.base)
    expect((await browser.signIn("reader")).status).toBe(303)
    const seenOnWeb = await browser.get(url.replace(hearth.base, ""))
    expect(seenOnWeb.status).toBe(200)
    expect(seenOnWeb.text).toBe(body)
    // Unknown and malformed ids.
    expect((await fetch(`${hearth.base}/attachments/00000000-0000-4000-8000-000000000000`)).status).toBe(404)
    expect((await fetch(`${hearth.base}/attachments/not-a-uuid`)).status).toBe(404)
  })

  it("never serve an upload as a page: HTML as plain text, other binaries downloaded; byte ranges", async () => {
    const issue = await newIssue("public")
    const path = `/repos/owner/public/issues/${issue.number}/assets`
    const html = await json(await upload(path, basic("poster"), "<html><script>alert(1)</script></html>", "page.txt"))
    const served = await fetch(html.browser_download_url)
    expect(served.headers.get("content-type")).toBe("text/plain; charset=utf-8")
    expect(served.headers.get("x-content-type-options")).toBe("nosniff")
    expect(served.headers.get("content-security-policy")).toContain("sandbox")
    const zip = await json(
      await upload(path, basic("poster"), Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(64, 1)]), "a.zip")
    )
    const download = await fetch(zip.browser_download_url)
    expect(download.headers.get("content-type")).toBe("application/octet-stream")
    expect(download.headers.get("content-disposition")).toMatch(/^attachment;/)
    const ranged = await fetch(html.browser_download_url, { headers: { range: "bytes=0-5" } })
    expect(ranged.status).toBe(206)
    expect(await ranged.text()).toBe("<html>")
    expect(ranged.headers.get("content-range")).toBe("bytes 0-5/38")
  })
})

describe("updated_at and events (CONTRACT-ISSUES §4.3, §16)", () => {
  it("a repository admin's updated_at dates the attachment and the issue; others get 403 and nothing is stored", async () => {
    const issue = await newIssue("public")
    const path = `/repos/owner/public/issues/${issue.number}/assets`
    const at = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z")
    const rows = await blobRows()
    const refused = await upload(`${path}?updated_at=${at}`, basic("poster"), unique("x"), "x.txt")
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toBe(
      "user needs to have admin or repository owner right to set an update date"
    )
    const early = await upload(path, basic("owner"), unique("x"), "x.txt", {
      fields: { updated_at: "2001-01-01T00:00:00Z" }
    })
    expect(early.status).toBe(403)
    expect(await blobRows()).toBe(rows)
    const ok = await upload(`${path}?updated_at=${at}`, basic("owner"), unique("x"), "x.txt")
    expect(ok.status).toBe(201)
    expect((await json(ok)).created_at).toBe(at)
    expect((await json(await request(hearth, "GET", `/repos/owner/public/issues/${issue.number}`))).updated_at).toBe(at)
    const comment = await newComment("public", issue.number)
    const onComment = await upload(
      `/repos/owner/public/issues/comments/${comment.id}/assets?updated_at=${at}`,
      basic("owner"),
      unique("c"),
      "c.txt"
    )
    expect(onComment.status).toBe(201)
    const shown = await json(await request(hearth, "GET", `/repos/owner/public/issues/comments/${comment.id}`))
    expect(shown.updated_at).toBe(at)
  })

  it("publishes issues/edited for an issue's attachment and issue_comment/edited for a comment's, with the unchanged body", async () => {
    const issue = await newIssue("public")
    const comment = await newComment("public", issue.number)
    const from = seen.length
    await upload(`/repos/owner/public/issues/${issue.number}/assets`, basic("poster"), unique("e"), "e.txt")
    await upload(`/repos/owner/public/issues/comments/${comment.id}/assets`, basic("poster"), unique("f"), "f.txt")
    const events = seen.slice(from)
    expect(events).toMatchObject([
      {
        _tag: "Issues",
        action: "edited",
        issue: { id: issue.id },
        doer: { name: "poster" },
        changes: { body: { from: "" } }
      },
      { _tag: "IssueComment", action: "edited", comment: { id: comment.id }, changes: { body: { from: "a comment" } } }
    ])
  })
})

describe("the OpenAPI document", () => {
  it("documents the uploads' multipart body with its `attachment` file", async () => {
    const doc = await json(await fetch(`${hearth.base}/api/swagger.v1.json`))
    for (const path of [
      "/api/v1/repos/{owner}/{repo}/issues/{index}/assets",
      "/api/v1/repos/{owner}/{repo}/issues/comments/{id}/assets"
    ]) {
      const body = doc.paths[path].post.requestBody.content["multipart/form-data"].schema
      expect(body.properties.attachment).toMatchObject({ type: "string", format: "binary" })
      expect(body.required).toEqual(["attachment"])
    }
  })
})

describe("token scopes on the tracker's extras routes (issue 18 item 3)", () => {
  it("read:issue reads but does not write (403); a token without an issue scope gets 403", async () => {
    const issue = await newIssue("public")
    const comment = await newComment("public", issue.number)
    const read = `token ${await createToken(hearth, "owner", ["read:issue"])}`
    const none = `token ${await createToken(hearth, "owner", ["read:repository"])}`
    const write = `token ${await createToken(hearth, "owner", ["write:issue"])}`
    const base = `/repos/owner/public/issues/${issue.number}`
    const reads = [
      `${base}/reactions`,
      `/repos/owner/public/issues/comments/${comment.id}/reactions`,
      `${base}/subscriptions`,
      `${base}/subscriptions/check`,
      `${base}/assets`,
      `/repos/owner/public/issues/comments/${comment.id}/assets`,
      "/repos/owner/public/issues/pinned"
    ]
    for (const path of reads) {
      expect((await request(hearth, "GET", path, read)).status, path).toBe(200)
      const refused = await request(hearth, "GET", path, none)
      expect(refused.status, path).toBe(403)
      expect((await json(refused)).message, path).toBe(
        "token does not have at least one of required scope(s): [read:issue]"
      )
    }
    const writes: ReadonlyArray<readonly [string, string, unknown?]> = [
      ["POST", `${base}/reactions`, { content: "+1" }],
      ["POST", `/repos/owner/public/issues/comments/${comment.id}/reactions`, { content: "+1" }],
      ["PUT", `${base}/subscriptions/owner`],
      ["DELETE", `${base}/subscriptions/owner`],
      ["POST", `${base}/pin`],
      ["DELETE", `${base}/pin`]
    ]
    for (const [method, path, body] of writes) {
      for (const auth of [read, none]) {
        const refused = await request(hearth, method, path, auth, body)
        expect(refused.status, `${method} ${path}`).toBe(403)
        expect((await json(refused)).message, `${method} ${path}`).toBe(
          "token does not have at least one of required scope(s): [write:issue]"
        )
      }
      expect((await request(hearth, method, path, write, body)).status, `${method} ${path}`).toBeLessThan(300)
    }
    const uploadRefused = await upload(`${base}/assets`, read, "x", "x.txt")
    expect(uploadRefused.status).toBe(403)
    expect((await json(uploadRefused)).message).toBe(
      "token does not have at least one of required scope(s): [write:issue]"
    )
    expect((await upload(`${base}/assets`, write, "x", "x.txt")).status).toBe(201)
  })
})

// Release assets (CONTRACT-WEBHOOKS §3.7, §3.9): uploaded as multipart (part `attachment`) or as
// the raw body, or linked by external URL; listed, renamed, deleted, counted in the Release
// object; downloaded at `browser_download_url` (`/attachments/{uuid}`) and at
// `/{owner}/{repo}/releases/download/{tag}/{name}` by whoever may read the release (drafts: its
// writers); `[repository.release] ALLOWED_TYPES` and FILE_MAX_SIZE; the owner's quota
// `size:assets:attachments:releases`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { expectSwagger } from "./support/swagger.ts"

let hearth: Hearth
let work: string
const ids: Record<string, number> = {}
const releases: Record<string, number> = {}

const PNG = Buffer.from(
  "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082",
  "hex"
)

const call = (method: string, path: string, who: string | undefined, body?: unknown) =>
  request(hearth, method, path, who === undefined ? undefined : basic(who), body)

/** A multipart upload of `bytes` as file `filename`, with form fields before it. */
const upload = (
  path: string,
  who: string | undefined,
  bytes: Uint8Array | string,
  filename: string,
  fields: Record<string, string> = {}
) => {
  const form = new FormData()
  for (const [k, v] of Object.entries(fields)) form.append(k, v)
  form.append("attachment", new Blob([bytes]), filename)
  return fetch(hearth.api(path), {
    method: "POST",
    headers: who === undefined ? {} : { authorization: basic(who) },
    body: form
  })
}
/** The raw body as the file (any content type but multipart). */
const uploadRaw = (path: string, who: string, bytes: Uint8Array | string | undefined) =>
  fetch(hearth.api(path), {
    method: "POST",
    headers: { authorization: basic(who), "content-type": "application/octet-stream" },
    ...(bytes === undefined ? {} : { body: bytes })
  })
const get = (url: string, who?: string) =>
  fetch(url, { headers: who === undefined ? {} : { authorization: basic(who) }, redirect: "manual" })

const assetsOf = (repo: string, tag: string) => `/repos/${repo}/releases/${releases[`${repo}@${tag}`]}/assets`

beforeAll(async () => {
  hearth = await startHearth({
    quota: { ENABLED: "true" },
    "repository.release": { ALLOWED_TYPES: ".bin,.txt,.tar.gz,image/png", FILE_MAX_SIZE: "1" },
    server: { MAX_REQUEST_BODY: String(64 * 1024) }
  })
  work = mkdtempSync(join(tmpdir(), "hearth-release-assets-"))
  await createUser(hearth, { username: "root", isAdmin: true })
  for (const username of ["alice", "rita", "will", "tight"]) ids[username] = (await createUser(hearth, { username })).id
  const local = join(work, "src")
  await gitIn(work, ["init", "--quiet", "--initial-branch=main", local])
  writeFileSync(join(local, "README.md"), "one\n")
  await gitIn(local, ["add", "README.md"])
  await gitIn(local, ["commit", "--quiet", "-m", "first"])
  for (const [owner, name, priv] of [
    ["alice", "proj", false],
    ["alice", "secret", true],
    ["tight", "small", false]
  ] as const) {
    expect((await call("POST", "/user/repos", owner, { name, private: priv })).status).toBe(201)
    const remote = new URL(`${hearth.base}/${owner}/${name}.git`)
    remote.username = owner
    remote.password = "password123"
    await gitIn(local, ["push", "--quiet", remote.toString(), "main"])
    if (owner === "alice") {
      for (const [who, permission] of [
        ["rita", "read"],
        ["will", "write"]
      ] as const)
        expect((await call("PUT", `/repos/alice/${name}/collaborators/${who}`, "alice", { permission })).status).toBe(
          204
        )
    }
  }
  for (const [repo, tag, draft] of [
    ["alice/proj", "v1", false],
    ["alice/proj", "v2-draft", true],
    ["alice/proj", "release/v3", false],
    ["alice/secret", "s1", false],
    ["tight/small", "t1", false]
  ] as const) {
    const owner = repo.split("/")[0]!
    const res = await call("POST", `/repos/${repo}/releases`, owner, { tag_name: tag, draft })
    expect(res.status).toBe(201)
    releases[`${repo}@${tag}`] = (await json(res)).id
  }
  expect(
    (
      await call("POST", "/admin/quota/groups", "root", {
        name: "tight",
        rules: [
          { name: "tight-releases", limit: 1024, subjects: ["size:assets:attachments:releases"] },
          { name: "tight-rest", limit: -1, subjects: ["size:all"] }
        ]
      })
    ).status
  ).toBe(201)
  expect((await call("POST", "/admin/users/tight/quota/groups", "root", { groups: ["tight"] })).status).toBe(204)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(work, { recursive: true, force: true })
})

describe("uploading", () => {
  it("stores a multipart file, answers Forgejo's Attachment, and serves it at browser_download_url", async () => {
    const res = await upload(assetsOf("alice/proj", "v1"), "will", PNG, "dot.png")
    expect(res.status).toBe(201)
    const asset = await json(res)
    expectSwagger(asset, "Attachment")
    expect(asset).toMatchObject({ name: "dot.png", size: PNG.length, type: "attachment", download_count: 0 })
    expect(asset.browser_download_url).toBe(`${hearth.base}/attachments/${asset.uuid}`)
    const served = await get(asset.browser_download_url)
    expect(served.status).toBe(200)
    expect(Buffer.from(await served.arrayBuffer())).toEqual(PNG)
    expect(served.headers.get("content-type")).toBe("image/png")
    expect(served.headers.get("x-content-type-options")).toBe("nosniff")
    // And by tag and name, counted as downloads.
    const byName = await get(`${hearth.base}/alice/proj/releases/download/v1/dot.png`)
    expect(byName.status).toBe(200)
    expect(Buffer.from(await byName.arrayBuffer())).toEqual(PNG)
    const again = await json(await call("GET", `${assetsOf("alice/proj", "v1")}/${asset.id}`, undefined))
    expect(again.download_count).toBe(2)
    // In the Release object.
    const release = await json(await call("GET", "/repos/alice/proj/releases/tags/v1", undefined))
    expectSwagger(release, "Release")
    expect(release.assets.map((a: any) => a.id)).toContain(asset.id)
  })

  it("downloads by tag and name when the tag has / (release/v3): the name is the last segment", async () => {
    const asset = await json(await upload(assetsOf("alice/proj", "release/v3"), "will", "slashed\n", "notes.txt"))
    const byName = await get(`${hearth.base}/alice/proj/releases/download/release/v3/notes.txt`)
    expect(byName.status).toBe(200)
    expect(await byName.text()).toBe("slashed\n")
    expect((await get(`${hearth.base}/alice/proj/releases/download/release/v3/other.txt`)).status).toBe(404)
    expect((await get(`${hearth.base}/alice/proj/releases/download/release/v9/notes.txt`)).status).toBe(404)
    expect(
      (await json(await call("GET", `${assetsOf("alice/proj", "release/v3")}/${asset.id}`, undefined))).download_count
    ).toBe(1)
  })

  it("takes ?name over the file's name, and the raw body as the file", async () => {
    const renamed = await json(await upload(`${assetsOf("alice/proj", "v1")}?name=named.bin`, "will", "abc", "x.bin"))
    expect(renamed.name).toBe("named.bin")
    const raw = await uploadRaw(`${assetsOf("alice/proj", "v1")}?name=stream.bin`, "will", "raw bytes")
    expect(raw.status).toBe(201)
    const asset = await json(raw)
    expect(asset).toMatchObject({ name: "stream.bin", size: 9, type: "attachment" })
    expect(await (await get(asset.browser_download_url)).text()).toBe("raw bytes")
    const nameless = await uploadRaw(assetsOf("alice/proj", "v1"), "will", "raw bytes")
    expect(nameless.status).toBe(400)
    expect((await json(nameless)).message).toBe("Missing 'name' parameter")
  })

  it("links an external URL: no bytes, the URL as browser_download_url, downloads redirect", async () => {
    const res = await uploadRaw(
      `${assetsOf("alice/proj", "v1")}?external_url=${encodeURIComponent("https://example.com/dl/tool-1.0.tar.gz")}`,
      "will",
      undefined
    )
    expect(res.status).toBe(201)
    const asset = await json(res)
    expectSwagger(asset, "Attachment")
    expect(asset).toMatchObject({
      name: "tool-1.0.tar.gz",
      size: 0,
      type: "external",
      browser_download_url: "https://example.com/dl/tool-1.0.tar.gz"
    })
    const redirect = await get(`${hearth.base}/attachments/${asset.uuid}`)
    expect(redirect.status).toBe(302)
    expect(redirect.headers.get("location")).toBe("https://example.com/dl/tool-1.0.tar.gz")
    // A URL with no path is named by its host; a form field works as the query does.
    const form = new FormData()
    form.append("external_url", "https://downloads.example.org")
    const byForm = await fetch(hearth.api(assetsOf("alice/proj", "v1")), {
      method: "POST",
      headers: { authorization: basic("will") },
      body: form
    })
    expect(byForm.status).toBe(201)
    expect((await json(byForm)).name).toBe("downloads.example.org")
  })

  it("refuses both, neither, a bad URL, a type not allowed and a file too large, storing nothing", async () => {
    const before = (await json(await call("GET", assetsOf("alice/proj", "v1"), "alice"))).length
    const cases: Array<[Promise<Response>, number, string | undefined]> = [
      [
        upload(`${assetsOf("alice/proj", "v1")}?external_url=https://example.com/x`, "will", "abc", "a.bin"),
        400,
        "'attachment' and 'external_url' are mutually exclusive"
      ],
      [
        uploadRaw(`${assetsOf("alice/proj", "v1")}?name=a.bin&external_url=https://example.com/x`, "will", "abc"),
        400,
        "'attachment' and 'external_url' are mutually exclusive"
      ],
      [
        uploadRaw(`${assetsOf("alice/proj", "v1")}?name=x`, "will", undefined),
        400,
        "One of 'attachment' or 'external_url' is required"
      ],
      [
        uploadRaw(`${assetsOf("alice/proj", "v1")}?external_url=ftp://example.com/x`, "will", undefined),
        400,
        "invalid external URL: 'ftp://example.com/x'"
      ],
      [
        upload(assetsOf("alice/proj", "v1"), "will", "MZ not allowed", "tool.exe"),
        400,
        "This file extension or type is not allowed to be uploaded."
      ],
      [
        uploadRaw(`${assetsOf("alice/proj", "v1")}?name=tool.exe`, "will", "MZ"),
        400,
        "This file extension or type is not allowed to be uploaded."
      ],
      // [repository.release] FILE_MAX_SIZE = 1 (MB).
      [upload(assetsOf("alice/proj", "v1"), "will", Buffer.alloc(1024 * 1024 + 1, 7), "big.bin"), 413, undefined],
      [
        uploadRaw(`${assetsOf("alice/proj", "v1")}?name=big.bin`, "will", Buffer.alloc(1024 * 1024 + 1, 7)),
        413,
        undefined
      ]
    ]
    for (const [pending, status, message] of cases) {
      const res = await pending
      expect(res.status).toBe(status)
      if (message !== undefined) expect((await json(res)).message).toBe(message)
    }
    expect((await json(await call("GET", assetsOf("alice/proj", "v1"), "alice"))).length).toBe(before)
  })

  it("is for writers: readers 403, anonymous 401; a missing release 404", async () => {
    expect((await upload(assetsOf("alice/proj", "v1"), "rita", "abc", "r.txt")).status).toBe(403)
    expect((await upload(assetsOf("alice/proj", "v1"), undefined, "abc", "r.txt")).status).toBe(401)
    expect((await upload("/repos/alice/proj/releases/999999/assets", "will", "abc", "r.txt")).status).toBe(404)
  })
})

describe("reading, editing and deleting", () => {
  it("lists, gets, renames (201) and deletes an asset; another release's asset is 404", async () => {
    const path = assetsOf("alice/proj", "v1")
    const made = await json(await upload(path, "will", "to edit", "edit.txt"))
    const list = await json(await call("GET", path, "rita"))
    expectSwagger(list, "Attachment[]")
    expect(list.map((a: any) => a.id)).toContain(made.id)
    const renamed = await call("PATCH", `${path}/${made.id}`, "will", { name: "edited.txt" })
    expect(renamed.status).toBe(201)
    expect((await json(renamed)).name).toBe("edited.txt")
    const notExternal = await call("PATCH", `${path}/${made.id}`, "will", { browser_download_url: "https://x.org/a" })
    expect(notExternal.status).toBe(400)
    expect((await json(notExternal)).message).toBe("existing attachment is not external")
    expect((await call("GET", `${assetsOf("alice/secret", "s1")}/${made.id}`, "alice")).status).toBe(404)
    expect((await call("DELETE", `${path}/${made.id}`, "rita")).status).toBe(403)
    expect((await call("DELETE", `${path}/${made.id}`, "will")).status).toBe(204)
    expect((await call("GET", `${path}/${made.id}`, "will")).status).toBe(404)
    expect((await get(made.browser_download_url)).status).toBe(404)
  })

  it("changes an external asset's URL (saved, unlike Forgejo)", async () => {
    const path = assetsOf("alice/proj", "v1")
    const made = await json(await uploadRaw(`${path}?external_url=https://example.com/a.bin`, "will", undefined))
    const bad = await call("PATCH", `${path}/${made.id}`, "will", { browser_download_url: "not a url" })
    expect(bad.status).toBe(400)
    expect((await json(bad)).message).toBe("invalid external URL: 'not a url'")
    const edited = await call("PATCH", `${path}/${made.id}`, "will", {
      browser_download_url: "https://example.com/b.bin"
    })
    expect(edited.status).toBe(201)
    const seen = await json(await call("GET", `${path}/${made.id}`, "rita"))
    expect(seen.browser_download_url).toBe("https://example.com/b.bin")
  })

  it("a draft's assets are its writers' only; a private repository's hidden from strangers", async () => {
    const draftPath = assetsOf("alice/proj", "v2-draft")
    const made = await upload(draftPath, "will", "draft bytes", "d.txt")
    expect(made.status).toBe(201)
    const asset = await json(made)
    expect((await call("GET", draftPath, "rita")).status).toBe(404)
    expect((await call("GET", `${draftPath}/${asset.id}`, "rita")).status).toBe(404)
    expect((await get(asset.browser_download_url, "rita")).status).toBe(404)
    expect((await get(asset.browser_download_url)).status).toBe(404)
    expect((await get(`${hearth.base}/alice/proj/releases/download/v2-draft/d.txt`, "rita")).status).toBe(404)
    expect((await get(asset.browser_download_url, "will")).status).toBe(200)

    const secret = await json(await upload(assetsOf("alice/secret", "s1"), "alice", "secret bytes", "s.txt"))
    expect((await get(secret.browser_download_url)).status).toBe(404)
    expect((await get(`${hearth.base}/alice/secret/releases/download/s1/s.txt`)).status).toBe(404)
    const forReader = await get(`${hearth.base}/alice/secret/releases/download/s1/s.txt`, "rita")
    expect(forReader.status).toBe(200)
    expect(await forReader.text()).toBe("secret bytes")
  })

  it("deleting the release deletes its assets", async () => {
    const made = await json(await call("POST", "/repos/alice/proj/releases", "alice", { tag_name: "gone" }))
    const asset = await json(await upload(`/repos/alice/proj/releases/${made.id}/assets`, "alice", "bye", "bye.txt"))
    expect((await get(asset.browser_download_url)).status).toBe(200)
    expect((await call("DELETE", `/repos/alice/proj/releases/${made.id}`, "alice")).status).toBe(204)
    expect((await get(asset.browser_download_url)).status).toBe(404)
  })
})

describe("quota", () => {
  it("charges the owner's size:assets:attachments:releases: 413 naming the owner once over", async () => {
    const path = assetsOf("tight/small", "t1")
    const bytes = Buffer.alloc(2048, 3)
    expect((await upload(path, "tight", bytes, "first.bin")).status).toBe(201)
    const res = await upload(path, "tight", "more", "second.bin")
    expect(res.status).toBe(413)
    expect(await json(res)).toEqual({
      message: "quota exceeded",
      url: `${hearth.base}/api/swagger`,
      user_id: ids.tight,
      username: "tight"
    })
    const used = await json(await call("GET", "/user/quota", "tight"))
    expect(used.used.size.assets.attachments.releases).toBe(2048)
  })
})

// Avatars (Forgejo's userUpdateAvatar, orgUpdateAvatar, repoUpdateAvatar and their deletes) over
// real HTTP: an upload is cropped to a square PNG of at most 290 pixels, stored in the blob storage
// and served at `/avatars/{hash}` or `/repo-avatars/{hash}`, where `avatar_url` points; deleting
// it gives the identicon back and frees the blob; what is no picture, or too big, is a 422 that
// changes nothing; org owners and repository admins only.
import { Readable } from "node:stream"
import { Effect, Option } from "effect"
import sharp from "sharp"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { BlobStorage } from "../src/storage/Service.ts"
import { apiAs, basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

const png = (width: number, height: number, color = "#3366cc") =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .png()
    .toBuffer()
const jpeg = (width: number, height: number, color = "#cc6633") =>
  sharp({ create: { width, height, channels: 3, background: color } })
    .jpeg()
    .toBuffer()
const body = (bytes: Uint8Array) => ({ image: Buffer.from(bytes).toString("base64") })

/** GETs a URL of the instance (an absolute avatar_url). */
const fetchImage = async (url: string) => {
  const res = await fetch(url)
  const bytes = Buffer.from(await res.arrayBuffer())
  return { res, bytes }
}
const sizeOf = async (bytes: Uint8Array) => {
  const meta = await sharp(bytes).metadata()
  return { format: meta.format, width: meta.width, height: meta.height }
}
const refcount = (sha256: string) =>
  hearth.run(
    Effect.gen(function* () {
      const info = yield* (yield* BlobStorage).stat(sha256)
      return Option.isSome(info) ? info.value.refcount : 0
    })
  )
const hashOf = (url: string) => url.slice(url.lastIndexOf("/") + 1)

beforeAll(async () => {
  // Small limits, so that a too-big picture is small to send.
  hearth = await startHearth({
    picture: { AVATAR_MAX_FILE_SIZE: "65536", AVATAR_MAX_WIDTH: "1000", AVATAR_MAX_HEIGHT: "800" }
  })
  for (const username of ["alice", "bob", "member", "stranger", "pic", "leaver"]) await createUser(hearth, { username })
  await createUser(hearth, { username: "root", isAdmin: true })
  await apiAs(hearth, "POST", "/orgs", "alice", { username: "studio" })
  await apiAs(hearth, "POST", "/orgs", "alice", { username: "hidden", visibility: "private" })
  const team = await apiAs(hearth, "POST", "/orgs/studio/teams", "alice", {
    name: "writers",
    permission: "write",
    units: ["repo.code"]
  })
  await apiAs(hearth, "PUT", `/teams/${team.id}/members/member`, "alice")
  await apiAs(hearth, "POST", "/user/repos", "alice", { name: "public" })
  await apiAs(hearth, "POST", "/user/repos", "alice", { name: "secret", private: true })
  await apiAs(hearth, "PUT", "/repos/alice/public/collaborators/bob", "alice", { permission: "write" })
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("user avatars", () => {
  it("an upload is stored as a square PNG of at most 290 pixels, where avatar_url points", async () => {
    const before = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect(before).toBe(`${hearth.base}/avatars/identicon/alice`)

    const res = await request(hearth, "POST", "/user/avatar", basic("alice"), body(await png(400, 300)))
    expect(res.status).toBe(204)
    const url: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect(url).toMatch(new RegExp(`^${hearth.base}/avatars/[0-9a-f]{64}$`))
    expect((await apiAs(hearth, "GET", "/user", "alice")).avatar_url).toBe(url)
    // Anonymous readers see the same.
    expect((await json(await request(hearth, "GET", "/users/alice"))).avatar_url).toBe(url)

    const { res: served, bytes } = await fetchImage(url)
    expect(served.status).toBe(200)
    expect(served.headers.get("content-type")).toBe("image/png")
    expect(served.headers.get("cache-control")).toBe("public, max-age=31536000, immutable")
    expect(await sizeOf(bytes)).toEqual({ format: "png", width: 290, height: 290 })
    // A smaller one on demand, never a larger one.
    expect(await sizeOf((await fetchImage(`${url}?size=48`)).bytes)).toEqual({ format: "png", width: 48, height: 48 })
    expect(await sizeOf((await fetchImage(`${url}?size=2000`)).bytes)).toMatchObject({ width: 290 })
    expect(await refcount(hashOf(url))).toBe(1)
  })

  it("every other place that shows the account points at it too", async () => {
    const url: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    // A repository's owner, as a list of starred repositories shows it (joined, not looked up).
    await apiAs(hearth, "PUT", "/user/starred/alice/public", "bob")
    const starred = await apiAs(hearth, "GET", "/user/starred", "bob")
    expect(starred[0].owner.avatar_url).toBe(url)
    // The ActivityPub actor's icon and the WebFinger avatar link.
    const actor = await fetch(`${hearth.base}/api/v1/activitypub/user/alice`, {
      headers: { accept: "application/activity+json" }
    })
    expect((await json(actor)).icon).toMatchObject({ type: "Image", mediaType: "image/png", url })
    const host = new URL(hearth.settings.server.ROOT_URL).host
    const finger = await json(await fetch(`${hearth.base}/.well-known/webfinger?resource=acct:alice@${host}`))
    expect(finger.links.find((l: { rel: string }) => l.rel === "http://webfinger.net/rel/avatar").href).toBe(url)
  })

  it("a JPEG replaces it (a small picture keeps its size), and the old file goes", async () => {
    const old: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect((await request(hearth, "POST", "/user/avatar", basic("alice"), body(await jpeg(100, 120)))).status).toBe(204)
    const url: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect(url).not.toBe(old)
    expect(await sizeOf((await fetchImage(url)).bytes)).toEqual({ format: "png", width: 100, height: 100 })
    expect(await refcount(hashOf(old))).toBe(0)
    expect((await fetch(old)).status).toBe(404)
  })

  it("deleting it gives the identicon back, a PNG", async () => {
    const old: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect((await request(hearth, "DELETE", "/user/avatar", basic("alice"))).status).toBe(204)
    const url: string = (await apiAs(hearth, "GET", "/users/alice", "bob")).avatar_url
    expect(url).toBe(`${hearth.base}/avatars/identicon/alice`)
    expect(await refcount(hashOf(old))).toBe(0)
    expect((await fetch(old)).status).toBe(404)
    const { res, bytes } = await fetchImage(url)
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("image/png")
    expect(await sizeOf(bytes)).toEqual({ format: "png", width: 290, height: 290 })
    expect(await sizeOf((await fetchImage(`${url}?size=40`)).bytes)).toEqual({ format: "png", width: 40, height: 40 })
    // Deleting none is no error (Forgejo's DeleteAvatar).
    expect((await request(hearth, "DELETE", "/user/avatar", basic("alice"))).status).toBe(204)
  })

  it("refuses what is no picture, or too big, with 422 and changes nothing", async () => {
    expect((await request(hearth, "POST", "/user/avatar", basic("pic"), body(await png(64, 64)))).status).toBe(204)
    const kept: string = (await apiAs(hearth, "GET", "/users/pic", "pic")).avatar_url
    const svg = Buffer.from(
      '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>'
    )
    const noise = await sharp(Buffer.from(Array.from({ length: 200 * 200 * 3 }, (_, i) => (i * 7919) % 251)), {
      raw: { width: 200, height: 200, channels: 3 }
    })
      .png({ compressionLevel: 0 })
      .toBuffer()
    expect(noise.length).toBeGreaterThan(65536)
    const cases: Array<[string, unknown, RegExp]> = [
      ["text", body(Buffer.from("hello, this is no picture")), /not a PNG, JPEG, GIF or WebP image/],
      ["svg", body(svg), /not a PNG, JPEG, GIF or WebP image/],
      ["empty", { image: "" }, /not a PNG, JPEG, GIF or WebP image/],
      ["no image", {}, /not a PNG, JPEG, GIF or WebP image/],
      ["bytes", body(noise), /too large: \d+ bytes, at most 65536/],
      ["width", body(await png(1001, 10)), /too wide: 1001 pixels, at most 1000/],
      ["height", body(await png(10, 801)), /too high: 801 pixels, at most 800/]
    ]
    for (const [name, payload, message] of cases) {
      const res = await request(hearth, "POST", "/user/avatar", basic("pic"), payload)
      expect(res.status, name).toBe(422)
      expect((await json(res)).message, name).toMatch(message)
    }
    const invalid = await request(hearth, "POST", "/user/avatar", basic("pic"), { image: "not base64!" })
    expect(invalid.status).toBe(400)
    expect((await json(invalid)).message).toMatch(/not valid base64/)
    expect((await apiAs(hearth, "GET", "/users/pic", "pic")).avatar_url).toBe(kept)
    expect(await refcount(hashOf(kept))).toBe(1)
  })

  it("needs a signed-in caller", async () => {
    expect((await request(hearth, "POST", "/user/avatar", undefined, body(await png(8, 8)))).status).toBe(401)
    expect((await request(hearth, "DELETE", "/user/avatar")).status).toBe(401)
  })

  it("serves only blobs that are avatars, and identicons for any name", async () => {
    const red = await png(20, 20, "#ff0000")
    const other = await hearth.run(
      Effect.gen(function* () {
        const storage = yield* BlobStorage
        const blob = yield* Effect.orDie(storage.put(Readable.from([red]), { maxSize: 1 << 20 }))
        yield* Effect.orDie(storage.acquire(blob))
        return blob.sha256
      })
    )
    expect((await fetch(`${hearth.base}/avatars/${other}`)).status).toBe(404)
    expect((await fetch(`${hearth.base}/repo-avatars/${other}`)).status).toBe(404)
    expect((await fetch(`${hearth.base}/avatars/not-a-hash`)).status).toBe(404)
  })
})

describe("organization avatars", () => {
  it("an owner uploads and deletes it; avatar_url follows", async () => {
    const res = await request(
      hearth,
      "POST",
      "/orgs/studio/avatar",
      basic("alice"),
      body(await png(300, 300, "#00aa00"))
    )
    expect(res.status).toBe(204)
    const url: string = (await apiAs(hearth, "GET", "/orgs/studio", "bob")).avatar_url
    expect(url).toMatch(new RegExp(`^${hearth.base}/avatars/[0-9a-f]{64}$`))
    // The organization as an account (GET /users/{org}) shows the same.
    expect((await apiAs(hearth, "GET", "/users/studio", "bob")).avatar_url).toBe(url)
    expect(await sizeOf((await fetchImage(url)).bytes)).toEqual({ format: "png", width: 290, height: 290 })
    expect((await request(hearth, "DELETE", "/orgs/studio/avatar", basic("alice"))).status).toBe(204)
    expect((await apiAs(hearth, "GET", "/orgs/studio", "bob")).avatar_url).toBe(
      `${hearth.base}/avatars/identicon/studio`
    )
    expect(await refcount(hashOf(url))).toBe(0)
  })

  it("members who are no owners get 403, outsiders of a private one 404, anonymous 401", async () => {
    const picture = body(await png(16, 16))
    for (const [user, org, status] of [
      ["member", "studio", 403],
      ["stranger", "studio", 403],
      ["stranger", "hidden", 404],
      ["alice", "nothing", 404]
    ] as const) {
      const post = await request(hearth, "POST", `/orgs/${org}/avatar`, basic(user), picture)
      expect(post.status, `${user} ${org}`).toBe(status)
      const del = await request(hearth, "DELETE", `/orgs/${org}/avatar`, basic(user))
      expect(del.status, `${user} ${org}`).toBe(status)
    }
    expect((await request(hearth, "POST", "/orgs/studio/avatar", undefined, picture)).status).toBe(401)
    expect((await apiAs(hearth, "GET", "/orgs/studio", "bob")).avatar_url).toBe(
      `${hearth.base}/avatars/identicon/studio`
    )
  })
})

describe("repository avatars", () => {
  it("an admin uploads and deletes it; avatar_url is empty without one", async () => {
    expect((await apiAs(hearth, "GET", "/repos/alice/public", "bob")).avatar_url).toBe("")
    const res = await request(
      hearth,
      "POST",
      "/repos/alice/public/avatar",
      basic("alice"),
      body(await jpeg(500, 400, "#123456"))
    )
    expect(res.status).toBe(204)
    const url: string = (await apiAs(hearth, "GET", "/repos/alice/public", "bob")).avatar_url
    expect(url).toMatch(new RegExp(`^${hearth.base}/repo-avatars/[0-9a-f]{64}$`))
    const { res: served, bytes } = await fetchImage(url)
    expect(served.status).toBe(200)
    expect(await sizeOf(bytes)).toEqual({ format: "png", width: 290, height: 290 })
    // A repository's avatar is not an account's.
    expect((await fetch(`${hearth.base}/avatars/${hashOf(url)}`)).status).toBe(404)
    // Lists show it too.
    const found = await apiAs(hearth, "GET", "/repos/search?q=public", "bob")
    expect(found.data.find((r: { name: string }) => r.name === "public").avatar_url).toBe(url)

    expect((await request(hearth, "DELETE", "/repos/alice/public/avatar", basic("alice"))).status).toBe(204)
    expect((await apiAs(hearth, "GET", "/repos/alice/public", "bob")).avatar_url).toBe("")
    expect(await refcount(hashOf(url))).toBe(0)
    expect((await fetch(url)).status).toBe(404)
  })

  it("a writer gets 403, who may not see the repository 404, anonymous 401; bad input 422", async () => {
    const picture = body(await png(16, 16))
    for (const [user, repo, status] of [
      ["bob", "public", 403],
      ["stranger", "public", 403],
      ["stranger", "secret", 404]
    ] as const) {
      const post = await request(hearth, "POST", `/repos/alice/${repo}/avatar`, basic(user), picture)
      expect(post.status, `${user} ${repo}`).toBe(status)
      const del = await request(hearth, "DELETE", `/repos/alice/${repo}/avatar`, basic(user))
      expect(del.status, `${user} ${repo}`).toBe(status)
    }
    expect((await request(hearth, "POST", "/repos/alice/public/avatar", undefined, picture)).status).toBe(401)
    const bad = await request(
      hearth,
      "POST",
      "/repos/alice/public/avatar",
      basic("alice"),
      body(Buffer.from("GIF89a?"))
    )
    expect(bad.status).toBe(422)
    expect((await apiAs(hearth, "GET", "/repos/alice/public", "bob")).avatar_url).toBe("")
  })
})

describe("deleting what has an avatar", () => {
  it("frees the picture with the repository or the account (the sweep then removes the file)", async () => {
    await apiAs(hearth, "POST", "/user/repos", "leaver", { name: "short-lived" })
    const picture = body(await png(64, 64, "#aa00aa"))
    expect((await request(hearth, "POST", "/repos/leaver/short-lived/avatar", basic("leaver"), picture)).status).toBe(
      204
    )
    const repoUrl: string = (await apiAs(hearth, "GET", "/repos/leaver/short-lived", "leaver")).avatar_url
    expect(await refcount(hashOf(repoUrl))).toBe(1)
    expect((await request(hearth, "DELETE", "/repos/leaver/short-lived", basic("leaver"))).status).toBe(204)
    expect(await refcount(hashOf(repoUrl))).toBe(0)

    const own = body(await png(64, 64, "#00aaaa"))
    expect((await request(hearth, "POST", "/user/avatar", basic("leaver"), own)).status).toBe(204)
    const userUrl: string = (await apiAs(hearth, "GET", "/users/leaver", "root")).avatar_url
    expect(await refcount(hashOf(userUrl))).toBe(1)
    expect((await request(hearth, "DELETE", "/admin/users/leaver", basic("root"))).status).toBe(204)
    expect(await refcount(hashOf(userUrl))).toBe(0)
  })
})

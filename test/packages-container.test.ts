// The container registry (OCI distribution spec at /v2/, Forgejo's routers/api/packages/container)
// used by Debian's skopeo — copy of hand-written OCI layouts to Hearth and back (one image, and a
// multi-arch index), inspect, list-tags, delete — and the protocol rules skopeo does not reach by
// itself, over plain HTTP: the token handshake, monolithic, chunked and mounted blob uploads,
// digest checks, manifests naming missing blobs, tags paging, names, access and limits, and the
// cleanup of abandoned uploads. Every refusal stores nothing.
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdtempSync, readdirSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import {
  layoutTag,
  OCI_LAYER,
  OCI_MANIFEST,
  randomLayer,
  readBlob,
  writeBlob,
  writeImage,
  writeIndex,
  writeLayout
} from "./support/oci.ts"

const run = promisify(execFile)
let hearth: Hearth
let aliceToken: string
let readOnlyToken: string
let host: string
const dir = mkdtempSync(join(tmpdir(), "hearth-container-"))
const MiB = 1024 * 1024
const skopeoMissing = (() => {
  try {
    return existsSync("/usr/bin/skopeo") ? undefined : "skopeo is not installed (apt-get install skopeo)"
  } catch {
    return "skopeo is not installed"
  }
})()

/** skopeo with a private HOME and no TLS; stdout, or the failure's stderr. */
const skopeo = async (...args: Array<string>) => {
  const home = join(dir, "home")
  try {
    const { stdout } = await run("skopeo", args, {
      env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, REGISTRY_AUTH_FILE: join(home, "auth.json") },
      maxBuffer: 16 * MiB
    })
    return { ok: true, out: stdout }
  } catch (e) {
    return { ok: false, out: String((e as { stderr?: string }).stderr ?? e) }
  }
}

const count = (table: string) =>
  hearth.sql((s) => Effect.map(s`SELECT count(*) AS n FROM ${s(table)}`, (rows) => Number(rows[0]!.n)))
const digestOf = (bytes: Buffer) => `sha256:${createHash("sha256").update(bytes).digest("hex")}`

/** A registry request with a header set (fetch follows no redirects here). */
const v2 = (method: string, path: string, auth: string | undefined, body?: Buffer | string, headers = {}) =>
  fetch(`${hearth.base}/v2/${path}`, {
    method,
    redirect: "manual",
    headers: { ...(auth === undefined ? {} : { authorization: auth }), ...headers },
    ...(body === undefined ? {} : { body })
  })
const alice = () => basic("alice", aliceToken)
const errorCode = async (res: Response) => (await json(res)).errors[0].code as string

beforeAll(async () => {
  hearth = await startHearth({ packages: { LIMIT_SIZE_CONTAINER: "2 MiB" }, quota: { ENABLED: "true" } })
  host = hearth.base.replace(/^http:\/\//, "")
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  await createUser(hearth, { username: "tight" })
  // `tight` may store no package bytes at all.
  expect(
    (
      await request(hearth, "POST", "/admin/quota/groups", basic("root"), {
        name: "nopackages",
        rules: [{ name: "nopackages", limit: 0, subjects: ["size:assets:packages:all"] }]
      })
    ).status
  ).toBe(201)
  expect(
    (await request(hearth, "POST", "/admin/users/tight/quota/groups", basic("root"), { groups: ["nopackages"] })).status
  ).toBe(204)
  aliceToken = await createToken(hearth, "alice", ["write:package"])
  readOnlyToken = await createToken(hearth, "alice", ["read:package"])
}, 60_000)
afterAll(() => hearth?.close())

describe("skopeo", () => {
  it.skipIf(skopeoMissing !== undefined)(
    "copies an image to Hearth and back, inspects it, lists tags, deletes it",
    async () => {
      const src = join(dir, "src")
      const layer1 = writeBlob(src, randomLayer(300_000), OCI_LAYER)
      const layer2 = writeBlob(src, randomLayer(1000), OCI_LAYER)
      const image = writeImage(src, { arch: "amd64", layers: [layer1, layer2] })
      writeLayout(src, { v1: image })

      const push = await skopeo(
        "copy",
        "--dest-creds",
        `alice:${aliceToken}`,
        "--dest-tls-verify=false",
        `oci:${src}:v1`,
        `docker://${host}/alice/tools/app:v1`
      )
      expect(push.out).toContain("Writing manifest")
      expect(push.ok).toBe(true)
      // A second tag by password: the blobs are there already.
      const again = await skopeo(
        "copy",
        "--dest-creds",
        "alice:password123",
        "--dest-tls-verify=false",
        `oci:${src}:v1`,
        `docker://${host}/alice/tools/app:v2`
      )
      expect(again.ok, again.out).toBe(true)

      const back = join(dir, "back")
      const pull = await skopeo(
        "copy",
        "--src-creds",
        `alice:${aliceToken}`,
        "--src-tls-verify=false",
        `docker://${host}/alice/tools/app:v1`,
        `oci:${back}:v1`
      )
      expect(pull.ok, pull.out).toBe(true)
      // The same manifest, byte for byte, and the same layers.
      expect(layoutTag(back, "v1").digest).toBe(image.digest)
      expect(readBlob(back, layer1.digest).equals(readBlob(src, layer1.digest))).toBe(true)

      const inspect = await skopeo(
        "inspect",
        "--creds",
        `alice:${aliceToken}`,
        "--tls-verify=false",
        `docker://${host}/alice/tools/app:v1`
      )
      expect(inspect.ok, inspect.out).toBe(true)
      const inspected = JSON.parse(inspect.out)
      expect(inspected.Digest).toBe(image.digest)
      expect(inspected.Architecture).toBe("amd64")
      expect(inspected.Layers).toEqual([layer1.digest, layer2.digest])
      expect([...inspected.RepoTags].sort()).toEqual(["v1", "v2"])

      const tags = await skopeo(
        "list-tags",
        "--creds",
        `alice:${aliceToken}`,
        "--tls-verify=false",
        `docker://${host}/alice/tools/app`
      )
      expect(JSON.parse(tags.out).Tags).toEqual(["v1", "v2"])

      // The management API shows the tags as versions of a container package.
      const listed = await json(await request(hearth, "GET", "/packages/alice?type=container", basic("alice")))
      expect(listed.map((p: { name: string; version: string }) => `${p.name}:${p.version}`).sort()).toEqual([
        "tools/app:v1",
        "tools/app:v2"
      ])

      // Deleting by digest removes every tag of that manifest.
      const deleted = await skopeo(
        "delete",
        "--creds",
        `alice:${aliceToken}`,
        "--tls-verify=false",
        `docker://${host}/alice/tools/app:v1`
      )
      expect(deleted.ok, deleted.out).toBe(true)
      expect((await v2("GET", `alice/tools/app/manifests/v1`, alice())).status).toBe(404)
      expect((await v2("GET", `alice/tools/app/manifests/${image.digest}`, alice())).status).toBe(404)
    },
    120_000
  )

  it.skipIf(skopeoMissing !== undefined)(
    "copies a multi-arch index with --all and back",
    async () => {
      const src = join(dir, "multi")
      const amd = writeImage(src, { arch: "amd64", layers: [writeBlob(src, randomLayer(5000), OCI_LAYER)] })
      const arm = writeImage(src, { arch: "arm64", layers: [writeBlob(src, randomLayer(6000), OCI_LAYER)] })
      const index = writeIndex(src, [amd, arm])
      writeLayout(src, { latest: index })
      const push = await skopeo(
        "copy",
        "--all",
        "--dest-creds",
        `alice:${aliceToken}`,
        "--dest-tls-verify=false",
        `oci:${src}:latest`,
        `docker://${host}/alice/multi:latest`
      )
      expect(push.ok, push.out).toBe(true)
      const raw = await skopeo(
        "inspect",
        "--raw",
        "--creds",
        `alice:${aliceToken}`,
        "--tls-verify=false",
        `docker://${host}/alice/multi:latest`
      )
      expect(digestOf(Buffer.from(raw.out))).toBe(index.digest)
      const arm64 = await skopeo(
        "inspect",
        "--override-arch",
        "arm64",
        "--creds",
        `alice:${aliceToken}`,
        "--tls-verify=false",
        `docker://${host}/alice/multi:latest`
      )
      // skopeo resolves the index to the arm64 image (Digest stays the index's).
      expect(JSON.parse(arm64.out).Architecture).toBe("arm64")
      expect(JSON.parse(arm64.out).Digest).toBe(index.digest)
      const back = join(dir, "multi-back")
      const pull = await skopeo(
        "copy",
        "--all",
        "--src-creds",
        `alice:${aliceToken}`,
        "--src-tls-verify=false",
        `docker://${host}/alice/multi:latest`,
        `oci:${back}:latest`
      )
      expect(pull.ok, pull.out).toBe(true)
      expect(layoutTag(back, "latest").digest).toBe(index.digest)
      expect(readBlob(back, arm.digest).equals(readBlob(src, arm.digest))).toBe(true)
      // Untagged platform manifests are no tags.
      const tags = await json(await v2("GET", "alice/multi/tags/list", alice()))
      expect(tags).toEqual({ name: "alice/multi", tags: ["latest"] })
    },
    120_000
  )
})

/** Pushes a blob in one POST; the response. */
const pushBlob = (image: string, bytes: Buffer, auth = alice(), digest = digestOf(bytes)) =>
  v2("POST", `${image}/blobs/uploads/?digest=${digest}`, auth, bytes, { "content-type": "application/octet-stream" })
/** Pushes a manifest naming `blobs` (config first); the response and the manifest's bytes. */
const pushManifest = async (image: string, reference: string, blobs: ReadonlyArray<Buffer>, auth = alice()) => {
  const [config, ...layers] = blobs.map((b) => ({ mediaType: OCI_LAYER, digest: digestOf(b), size: b.length }))
  const bytes = Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: OCI_MANIFEST, config, layers }))
  const res = await v2("PUT", `${image}/manifests/${reference}`, auth, bytes, { "content-type": OCI_MANIFEST })
  return { res, bytes }
}
const blobs = () => count("blobs")
const sessions = () => count("container_uploads")

describe("token handshake and access", () => {
  it("answers /v2/ with the bearer challenge to anonymous callers, 200 with credentials", async () => {
    const anonymous = await v2("GET", "", undefined)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toBe(
      `Bearer realm="${hearth.settings.server.ROOT_URL}v2/token",service="container_registry",scope="*"`
    )
    expect(await errorCode(anonymous)).toBe("UNAUTHORIZED")
    expect((await v2("GET", "", alice())).status).toBe(200)
    expect((await v2("GET", "", basic("alice", "wrong"))).status).toBe(401)
  })

  it("trades Basic credentials for a bearer token; a wrong password gets none", async () => {
    const res = await v2("GET", "token?service=container_registry&scope=repository:alice/x:push,pull", alice())
    expect(res.status).toBe(200)
    const { token, expires_in } = await json(res)
    expect(expires_in).toBeGreaterThan(0)
    const bytes = randomBytes(100)
    expect((await pushBlob("alice/tokened", bytes, `Bearer ${token}`)).status).toBe(201)
    expect((await v2("GET", "token", basic("alice", "wrong"))).status).toBe(401)
    // A forged or altered token is refused (401 with the challenge), not taken as anonymous.
    const forged = await v2("GET", "alice/tokened/tags/list", `Bearer ${token.slice(0, -4)}AAAA`)
    expect(forged.status).toBe(401)
    expect(forged.headers.get("www-authenticate")).toContain("Bearer realm=")
  })

  it("reads a registry token's account again after a change to it: one whose sign-in is prohibited is refused at once", async () => {
    await createUser(hearth, { username: "dave" })
    const { token } = await json(await v2("GET", "token", basic("dave")))
    const probe = () => v2("HEAD", `dave/x/blobs/${digestOf(randomBytes(8))}`, `Bearer ${token}`)
    expect((await probe()).status).toBe(404) // allowed: the blob is unknown
    expect((await request(hearth, "PATCH", "/admin/users/dave", basic("root"), { prohibit_login: true })).status).toBe(
      200
    )
    expect((await probe()).status).toBe(403)
  })

  it("lets anonymous callers pull public images with an anonymous token, never private ones", async () => {
    const layer = randomBytes(200)
    const config = Buffer.from("{}")
    expect((await pushBlob("alice/public", layer)).status).toBe(201)
    expect((await pushBlob("alice/public", config)).status).toBe(201)
    expect((await pushManifest("alice/public", "v1", [config, layer])).res.status).toBe(201)
    const { token } = await json(await v2("GET", "token", undefined))
    expect((await v2("GET", "alice/public/manifests/v1", `Bearer ${token}`)).status).toBe(200)
    expect((await v2("GET", "alice/public/manifests/v1", undefined)).status).toBe(200)
    // The anonymous token may not push.
    const push = await pushBlob("alice/public", randomBytes(10), `Bearer ${token}`)
    expect(push.status).toBe(401)
    expect(await errorCode(push)).toBe("UNAUTHORIZED")

    // carol is private: anonymous → 401 (sign in), bob → 404 (he may not know she exists), carol → 200.
    expect((await pushBlob("carol/secret", layer, basic("carol"))).status).toBe(201)
    expect((await pushBlob("carol/secret", config, basic("carol"))).status).toBe(201)
    expect((await pushManifest("carol/secret", "v1", [config, layer], basic("carol"))).res.status).toBe(201)
    expect((await v2("GET", "carol/secret/manifests/v1", `Bearer ${token}`)).status).toBe(401)
    const bob = await v2("GET", "carol/secret/manifests/v1", basic("bob"))
    expect(bob.status).toBe(404)
    expect(await errorCode(bob)).toBe("NAME_UNKNOWN")
    expect((await v2("GET", "carol/secret/manifests/v1", basic("carol"))).status).toBe(200)
  })

  it("refuses pushes by readers (403 DENIED) and stores nothing", async () => {
    const before = await blobs()
    const readOnly = await pushBlob("alice/app", randomBytes(50), basic("alice", readOnlyToken))
    expect(readOnly.status).toBe(403)
    expect(await errorCode(readOnly)).toBe("DENIED")
    const bob = await pushBlob("alice/app", randomBytes(50), basic("bob"))
    expect(bob.status).toBe(403)
    expect(await errorCode(bob)).toBe("DENIED")
    expect(await blobs()).toBe(before)
  })
})

describe("blob uploads", () => {
  it("takes a monolithic upload whose digest matches; a mismatch is DIGEST_INVALID and stores nothing", async () => {
    const bytes = randomBytes(4000)
    const ok = await pushBlob("alice/blobs", bytes)
    expect(ok.status).toBe(201)
    expect(ok.headers.get("docker-content-digest")).toBe(digestOf(bytes))
    expect(ok.headers.get("location")).toBe(`/v2/alice/blobs/blobs/${digestOf(bytes)}`)
    const head = await v2("HEAD", `alice/blobs/blobs/${digestOf(bytes)}`, alice())
    expect(head.status).toBe(200)
    expect(head.headers.get("content-length")).toBe("4000")
    expect(head.headers.get("docker-content-digest")).toBe(digestOf(bytes))
    const ranged = await v2("GET", `alice/blobs/blobs/${digestOf(bytes)}`, alice(), undefined, { range: "bytes=10-19" })
    expect(ranged.status).toBe(206)
    expect(Buffer.from(await ranged.arrayBuffer()).equals(bytes.subarray(10, 20))).toBe(true)

    const before = await blobs()
    const wrong = await pushBlob("alice/blobs", randomBytes(4000), alice(), digestOf(bytes).replace(/.$/, "0"))
    expect(wrong.status).toBe(400)
    expect(await errorCode(wrong)).toBe("DIGEST_INVALID")
    expect(await blobs()).toBe(before)
    const unknown = await v2("GET", `alice/blobs/blobs/${digestOf(randomBytes(8))}`, alice())
    expect(unknown.status).toBe(404)
    expect(await errorCode(unknown)).toBe("BLOB_UNKNOWN")
  })

  it("takes a chunked upload (POST, PATCH with Content-Range, status, PUT ?digest=)", async () => {
    const bytes = randomBytes(3000)
    const start = await v2("POST", "alice/chunks/blobs/uploads/", alice())
    expect(start.status).toBe(202)
    const location = start.headers.get("location")!
    expect(location).toMatch(/^\/v2\/alice\/chunks\/blobs\/uploads\/[0-9a-f-]{36}$/)
    expect(start.headers.get("docker-upload-uuid")).toBe(location.split("/").at(-1))
    const path = location.slice("/v2/".length)
    const first = await v2("PATCH", path, alice(), bytes.subarray(0, 1000), { "content-range": "0-999" })
    expect(first.status).toBe(202)
    expect(first.headers.get("range")).toBe("0-999")
    // A chunk that does not continue the upload: 416, the upload unchanged.
    const gap = await v2("PATCH", path, alice(), bytes.subarray(1500, 2000), { "content-range": "1500-1999" })
    expect(gap.status).toBe(416)
    expect(await errorCode(gap)).toBe("BLOB_UPLOAD_INVALID")
    const second = await v2("PATCH", path, alice(), bytes.subarray(1000, 2000), { "content-range": "1000-1999" })
    expect(second.status).toBe(202)
    expect(second.headers.get("range")).toBe("0-1999")
    const status = await v2("GET", path, alice())
    expect(status.status).toBe(204)
    expect(status.headers.get("range")).toBe("0-1999")
    // The last chunk comes with the PUT.
    const done = await v2("PUT", `${path}?digest=${digestOf(bytes)}`, alice(), bytes.subarray(2000))
    expect(done.status).toBe(201)
    expect(done.headers.get("docker-content-digest")).toBe(digestOf(bytes))
    const got = await v2("GET", `alice/chunks/blobs/${digestOf(bytes)}`, alice())
    expect(Buffer.from(await got.arrayBuffer()).equals(bytes)).toBe(true)
    // The session is over.
    expect((await v2("GET", path, alice())).status).toBe(404)
    expect(readdirSync(hearth.settings.packages.CHUNKED_UPLOAD_PATH)).toEqual([])
  })

  it("refuses a chunked upload whose digest does not match, keeping neither blob nor session", async () => {
    const before = { blobs: await blobs(), sessions: await sessions() }
    for (const chunks of [1, 2]) {
      const bytes = randomBytes(2000)
      const path = (await v2("POST", "alice/chunks/blobs/uploads/", alice())).headers.get("location")!.slice(4)
      if (chunks === 2) await v2("PATCH", path, alice(), bytes.subarray(0, 1000), { "content-range": "0-999" })
      await v2("PATCH", path, alice(), bytes.subarray(chunks === 2 ? 1000 : 0))
      const done = await v2("PUT", `${path}?digest=${digestOf(randomBytes(5))}`, alice())
      expect(done.status).toBe(400)
      expect(await errorCode(done)).toBe("DIGEST_INVALID")
    }
    expect({ blobs: await blobs(), sessions: await sessions() }).toEqual(before)
  })

  it("finishes a one-chunk upload once: the blob is the image's and its hold ends; the session is over after", async () => {
    const bytes = randomBytes(1200)
    const sha256 = digestOf(bytes).slice(7)
    const start = async () => (await v2("POST", "alice/once/blobs/uploads/", alice())).headers.get("location")!.slice(4)
    const path = await start()
    expect((await v2("PATCH", path, alice(), bytes)).status).toBe(202)
    const done = await v2("PUT", `${path}?digest=${digestOf(bytes)}`, alice())
    expect(done.status).toBe(201)
    expect(done.headers.get("location")).toBe(`/v2/alice/once/blobs/${digestOf(bytes)}`)
    expect((await v2("HEAD", `alice/once/blobs/${digestOf(bytes)}`, alice())).status).toBe(200)
    const holds = () =>
      hearth.sql((q) =>
        Effect.map(q`SELECT count(*) AS n FROM blob_holds WHERE sha256 = ${sha256}`, (r) => Number(r[0]!.n))
      )
    const refs = () =>
      hearth.sql((q) =>
        Effect.map(q`SELECT refcount FROM blobs WHERE sha256 = ${sha256}`, (r) => Number(r[0]!.refcount))
      )
    expect(await holds()).toBe(0)
    expect(await refs()).toBe(1)
    for (const [method, body] of [
      ["PUT", undefined],
      ["PATCH", randomBytes(10)],
      ["GET", undefined]
    ] as const) {
      const again = await v2(method, method === "PUT" ? `${path}?digest=${digestOf(bytes)}` : path, alice(), body)
      expect(again.status).toBe(404)
      expect(await errorCode(again)).toBe("BLOB_UPLOAD_UNKNOWN")
    }
    // The same bytes again in another session: the image has them already; that put's hold ends too.
    const second = await start()
    expect((await v2("PATCH", second, alice(), bytes)).status).toBe(202)
    expect((await v2("PUT", `${second}?digest=${digestOf(bytes)}`, alice())).status).toBe(201)
    expect(await holds()).toBe(0)
    expect(await refs()).toBe(1)
    // A refused finish (another digest) is over as well: the right digest after it finds no session.
    const third = await start()
    expect((await v2("PATCH", third, alice(), randomBytes(300))).status).toBe(202)
    expect((await v2("PUT", `${third}?digest=${digestOf(bytes)}`, alice())).status).toBe(400)
    expect((await v2("PUT", `${third}?digest=${digestOf(bytes)}`, alice())).status).toBe(404)
    expect(await sessions()).toBe(0)
  })

  it("cancels an upload (DELETE): its bytes go, the session is unknown after", async () => {
    const before = await blobs()
    const path = (await v2("POST", "alice/chunks/blobs/uploads/", alice())).headers.get("location")!.slice(4)
    expect((await v2("PATCH", path, alice(), randomBytes(700))).status).toBe(202)
    expect((await v2("DELETE", path, alice())).status).toBe(204)
    const after = await v2("PATCH", path, alice(), randomBytes(7))
    expect(after.status).toBe(404)
    expect(await errorCode(after)).toBe("BLOB_UPLOAD_UNKNOWN")
    expect(await blobs()).toBe(before)
  })

  it("cleans up an abandoned chunked upload with the package cleanup (no blob, no file left)", async () => {
    const before = await blobs()
    const path = (await v2("POST", "alice/chunks/blobs/uploads/", alice())).headers.get("location")!.slice(4)
    expect((await v2("PATCH", path, alice(), randomBytes(700), { "content-range": "0-699" })).status).toBe(202)
    expect((await v2("PATCH", path, alice(), randomBytes(300), { "content-range": "700-999" })).status).toBe(202)
    const id = path.split("/").at(-1)!
    expect(readdirSync(hearth.settings.packages.CHUNKED_UPLOAD_PATH)).toContain(id)
    // Left for two days.
    await hearth.sql((s) => s`UPDATE container_uploads SET updated_at = now() - interval '2 days' WHERE id = ${id}`)
    expect((await request(hearth, "POST", "/admin/packages/cleanup-rules/-/run", basic("root"))).status).toBe(200)
    expect(await sessions()).toBe(0)
    expect(readdirSync(hearth.settings.packages.CHUNKED_UPLOAD_PATH)).not.toContain(id)
    expect(await blobs()).toBe(before)
    expect((await v2("GET", path, alice())).status).toBe(404)
  })

  it("drops pushed blobs no manifest took within a day, with the package cleanup; referenced ones stay", async () => {
    const loose = randomBytes(400)
    const config = Buffer.from('{"stale":true}')
    for (const blob of [loose, config]) expect((await pushBlob("alice/stale", blob)).status).toBe(201)
    expect((await pushManifest("alice/stale", "v1", [config])).res.status).toBe(201)
    await hearth.sql(
      (s) => s`UPDATE package_files SET created_at = now() - interval '2 days'
        WHERE version_id IN (SELECT v.id FROM package_versions v JOIN packages p ON p.id = v.package_id
          WHERE p.lower_name = 'stale' AND v.is_internal)`
    )
    expect((await request(hearth, "POST", "/admin/packages/cleanup-rules/-/run", basic("root"))).status).toBe(200)
    expect((await v2("HEAD", `alice/stale/blobs/${digestOf(loose)}`, alice())).status).toBe(404)
    expect((await v2("HEAD", `alice/stale/blobs/${digestOf(config)}`, alice())).status).toBe(200)
    expect((await v2("GET", "alice/stale/manifests/v1", alice())).status).toBe(200)
    // Nothing refers to the loose blob any more: the storage's sweep removes it.
    const refcount = (digest: string) =>
      hearth.sql((s) =>
        Effect.map(s`SELECT refcount FROM blobs WHERE sha256 = ${digest.slice(7)}`, (rows) => Number(rows[0]!.refcount))
      )
    expect(await refcount(digestOf(loose))).toBe(0)
    expect(await refcount(digestOf(config))).toBeGreaterThan(0)
  })

  it("mounts a blob from another image the caller may read; from one it may not, it starts an upload", async () => {
    const bytes = randomBytes(900)
    expect((await pushBlob("alice/source", bytes)).status).toBe(201)
    const mounted = await v2("POST", `alice/target/blobs/uploads/?mount=${digestOf(bytes)}&from=alice/source`, alice())
    expect(mounted.status).toBe(201)
    expect(mounted.headers.get("docker-content-digest")).toBe(digestOf(bytes))
    expect((await v2("HEAD", `alice/target/blobs/${digestOf(bytes)}`, alice())).status).toBe(200)
    // carol's blob cannot be mounted by bob.
    const secret = randomBytes(900)
    expect((await pushBlob("carol/secret", secret, basic("carol"))).status).toBe(201)
    const refused = await v2(
      "POST",
      `bob/stolen/blobs/uploads/?mount=${digestOf(secret)}&from=carol/secret`,
      basic("bob")
    )
    expect(refused.status).toBe(202)
    expect((await v2("HEAD", `bob/stolen/blobs/${digestOf(secret)}`, basic("bob"))).status).toBe(404)
    await v2("DELETE", refused.headers.get("location")!.slice(4), basic("bob"))
  })

  it("deletes an unreferenced blob (202); then it is unknown", async () => {
    const bytes = randomBytes(321)
    expect((await pushBlob("alice/deleting", bytes)).status).toBe(201)
    expect((await v2("DELETE", `alice/deleting/blobs/${digestOf(bytes)}`, alice())).status).toBe(202)
    expect((await v2("HEAD", `alice/deleting/blobs/${digestOf(bytes)}`, alice())).status).toBe(404)
    expect((await v2("DELETE", `alice/deleting/blobs/${digestOf(bytes)}`, alice())).status).toBe(404)
  })

  it("refuses a blob over LIMIT_SIZE_CONTAINER (403 DENIED), monolithic or chunked, storing nothing", async () => {
    const before = { blobs: await blobs(), sessions: await sessions() }
    const big = randomBytes(3 * MiB)
    const mono = await pushBlob("alice/big", big)
    expect(mono.status).toBe(403)
    expect(await errorCode(mono)).toBe("DENIED")
    const path = (await v2("POST", "alice/big/blobs/uploads/", alice())).headers.get("location")!.slice(4)
    const chunk = await v2("PATCH", path, alice(), big)
    expect(chunk.status).toBe(403)
    // In pieces: the second piece, which goes to the session's file, passes the limit.
    const pieces = (await v2("POST", "alice/big/blobs/uploads/", alice())).headers.get("location")!.slice(4)
    expect((await v2("PATCH", pieces, alice(), big.subarray(0, MiB), { "content-range": `0-${MiB - 1}` })).status).toBe(
      202
    )
    const second = await v2("PATCH", pieces, alice(), big.subarray(MiB), { "content-range": `${MiB}-${3 * MiB - 1}` })
    expect(second.status).toBe(403)
    expect(await errorCode(second)).toBe("DENIED")
    expect((await v2("GET", pieces, alice())).status).toBe(404)
    expect(readdirSync(hearth.settings.packages.CHUNKED_UPLOAD_PATH)).toEqual([])
    expect({ blobs: await blobs(), sessions: await sessions() }).toEqual(before)
  })

  it("refuses uploads of an owner over its quota (413 DENIED), storing nothing", async () => {
    const before = { blobs: await blobs(), sessions: await sessions() }
    const mono = await pushBlob("tight/app", randomBytes(10), basic("tight"))
    expect(mono.status).toBe(413)
    expect(await errorCode(mono)).toBe("DENIED")
    const path = (await v2("POST", "tight/app/blobs/uploads/", basic("tight"))).headers.get("location")!.slice(4)
    expect((await v2("PATCH", path, basic("tight"), randomBytes(10))).status).toBe(413)
    expect({ blobs: await blobs(), sessions: await sessions() }).toEqual(before)
  })
})

describe("manifests and tags", () => {
  it("refuses manifests that are malformed, name missing blobs or mismatch their digest, storing nothing", async () => {
    const config = Buffer.from('{"architecture":"amd64"}')
    const layer = randomBytes(500)
    expect((await pushBlob("alice/strict", config)).status).toBe(201)
    const before = await count("package_versions")
    const missing = await pushManifest("alice/strict", "v1", [config, layer])
    expect(missing.res.status).toBe(400)
    expect(await errorCode(missing.res)).toBe("MANIFEST_BLOB_UNKNOWN")
    for (const body of [
      "{not json",
      JSON.stringify({ schemaVersion: 1 }),
      JSON.stringify({ schemaVersion: 2, config: {} })
    ]) {
      const res = await v2("PUT", "alice/strict/manifests/v1", alice(), body, { "content-type": OCI_MANIFEST })
      expect(res.status).toBe(400)
      expect(await errorCode(res)).toBe("MANIFEST_INVALID")
    }
    expect((await pushBlob("alice/strict", layer)).status).toBe(201)
    const good = JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_LAYER, digest: digestOf(config), size: config.length },
      layers: [{ mediaType: OCI_LAYER, digest: digestOf(layer), size: layer.length }]
    })
    const wrongDigest = await v2("PUT", `alice/strict/manifests/${digestOf(randomBytes(3))}`, alice(), good, {
      "content-type": OCI_MANIFEST
    })
    expect(wrongDigest.status).toBe(400)
    expect(await errorCode(wrongDigest)).toBe("DIGEST_INVALID")
    const badTag = await v2("PUT", "alice/strict/manifests/-bad", alice(), good, { "content-type": OCI_MANIFEST })
    expect(badTag.status).toBe(400)
    // An index naming a manifest the image does not have.
    const index = JSON.stringify({
      schemaVersion: 2,
      mediaType: "application/vnd.oci.image.index.v1+json",
      manifests: [{ mediaType: OCI_MANIFEST, digest: digestOf(randomBytes(4)), size: 10 }]
    })
    const orphan = await v2("PUT", "alice/strict/manifests/all", alice(), index, {
      "content-type": "application/vnd.oci.image.index.v1+json"
    })
    expect(orphan.status).toBe(400)
    expect(await errorCode(orphan)).toBe("MANIFEST_BLOB_UNKNOWN")
    expect(await count("package_versions")).toBe(before)
    // The good one by digest: 201, served with its media type and digest.
    const byDigest = await v2("PUT", `alice/strict/manifests/${digestOf(Buffer.from(good))}`, alice(), good, {
      "content-type": OCI_MANIFEST
    })
    expect(byDigest.status).toBe(201)
    const got = await v2("GET", `alice/strict/manifests/${digestOf(Buffer.from(good))}`, alice())
    expect(got.headers.get("content-type")).toBe(OCI_MANIFEST)
    expect(got.headers.get("docker-content-digest")).toBe(digestOf(Buffer.from(good)))
    expect(await got.text()).toBe(good)
    // A blob the image has, named with another size: refused, nothing stored.
    const versions = await count("package_versions")
    const wrongSize = await pushManifest("alice/strict", "v2", [config, Buffer.concat([layer, Buffer.from("x")])])
    expect(wrongSize.res.status).toBe(400)
    expect(await errorCode(wrongSize.res)).toBe("MANIFEST_BLOB_UNKNOWN")
    const sized = JSON.stringify({
      schemaVersion: 2,
      config: { mediaType: OCI_LAYER, digest: digestOf(config), size: config.length },
      layers: [{ mediaType: OCI_LAYER, digest: digestOf(layer), size: layer.length + 1 }]
    })
    const res = await v2("PUT", "alice/strict/manifests/v2", alice(), sized, { "content-type": OCI_MANIFEST })
    expect(res.status).toBe(400)
    expect((await json(res)).errors[0]).toMatchObject({
      code: "MANIFEST_BLOB_UNKNOWN",
      detail: { digest: digestOf(layer) }
    })
    expect(await count("package_versions")).toBe(versions)
  })

  it("a manifest's version holds one reference to each blob it names (a blob named twice: once), given back with the tag", async () => {
    const config = Buffer.from('{"architecture":"arm64"}')
    const layer = randomBytes(700)
    for (const b of [config, layer]) expect((await pushBlob("alice/refs", b)).status).toBe(201)
    const refs = (b: Buffer) =>
      hearth.sql((q) =>
        Effect.map(q`SELECT refcount FROM blobs WHERE sha256 = ${digestOf(b).slice(7)}`, (r) => Number(r[0]!.refcount))
      )
    expect([await refs(config), await refs(layer)]).toEqual([1, 1])
    const twice = JSON.stringify({
      schemaVersion: 2,
      mediaType: OCI_MANIFEST,
      config: { mediaType: OCI_LAYER, digest: digestOf(config), size: config.length },
      layers: [layer, layer].map((b) => ({ mediaType: OCI_LAYER, digest: digestOf(b), size: b.length }))
    })
    const pushed = await v2("PUT", "alice/refs/manifests/v1", alice(), twice, { "content-type": OCI_MANIFEST })
    expect(pushed.status).toBe(201)
    expect([await refs(config), await refs(layer)]).toEqual([2, 2])
    expect((await v2("DELETE", "alice/refs/manifests/v1", alice())).status).toBe(202)
    expect([await refs(config), await refs(layer)]).toEqual([1, 1])
  })

  it("moves a tag to a new manifest; Docker media types are kept", async () => {
    const config = Buffer.from("{}")
    const a = randomBytes(100)
    const b = randomBytes(100)
    for (const blob of [config, a, b]) expect((await pushBlob("alice/moving", blob)).status).toBe(201)
    const docker = "application/vnd.docker.distribution.manifest.v2+json"
    const manifest = (layer: Buffer) =>
      JSON.stringify({
        schemaVersion: 2,
        mediaType: docker,
        config: { mediaType: "application/vnd.docker.container.image.v1+json", digest: digestOf(config), size: 2 },
        layers: [{ mediaType: "application/vnd.docker.image.rootfs.diff.tar.gzip", digest: digestOf(layer), size: 100 }]
      })
    expect(
      (await v2("PUT", "alice/moving/manifests/latest", alice(), manifest(a), { "content-type": docker })).status
    ).toBe(201)
    expect(
      (await v2("PUT", "alice/moving/manifests/latest", alice(), manifest(b), { "content-type": docker })).status
    ).toBe(201)
    const got = await v2("GET", "alice/moving/manifests/latest", alice())
    expect(got.headers.get("content-type")).toBe(docker)
    expect(got.headers.get("docker-content-digest")).toBe(digestOf(Buffer.from(manifest(b))))
  })

  it("lists tags in order, n at a time after last, with a Link to the next page", async () => {
    const config = Buffer.from("{}")
    expect((await pushBlob("alice/tagged", config)).status).toBe(201)
    for (const tag of ["b", "a", "c", "1.0"])
      expect((await pushManifest("alice/tagged", tag, [config])).res.status).toBe(201)
    expect(await json(await v2("GET", "alice/tagged/tags/list", alice()))).toEqual({
      name: "alice/tagged",
      tags: ["1.0", "a", "b", "c"]
    })
    const page = await v2("GET", "alice/tagged/tags/list?n=2&last=1.0", alice())
    expect((await json(page)).tags).toEqual(["a", "b"])
    expect(page.headers.get("link")).toBe('</v2/alice/tagged/tags/list?n=2&last=b>; rel="next"')
    const unknown = await v2("GET", "alice/nothing-here/tags/list", alice())
    expect(unknown.status).toBe(404)
    expect(await errorCode(unknown)).toBe("NAME_UNKNOWN")
  })

  it("chooses by Accept: an index to a client that takes indexes, its linux/amd64 manifest to one that does not", async () => {
    const config = Buffer.from("{}")
    expect((await pushBlob("alice/multi", config)).status).toBe(201)
    const amd = await pushManifest("alice/multi", "amd", [config])
    expect(amd.res.status).toBe(201)
    const armLayer = randomBytes(50)
    expect((await pushBlob("alice/multi", armLayer)).status).toBe(201)
    const arm = await pushManifest("alice/multi", "arm", [config, armLayer])
    expect(arm.res.status).toBe(201)
    const OCI_INDEX = "application/vnd.oci.image.index.v1+json"
    const entry = (bytes: Buffer, architecture: string) => ({
      mediaType: OCI_MANIFEST,
      digest: digestOf(bytes),
      size: bytes.length,
      platform: { os: "linux", architecture }
    })
    const index = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: OCI_INDEX,
        manifests: [entry(arm.bytes, "arm64"), entry(amd.bytes, "amd64")]
      })
    )
    expect(
      (await v2("PUT", "alice/multi/manifests/latest", alice(), index, { "content-type": OCI_INDEX })).status
    ).toBe(201)
    const get = (accept: string | undefined, reference = "latest", method = "GET") =>
      v2(method, `alice/multi/manifests/${reference}`, alice(), undefined, accept === undefined ? {} : { accept })
    // No Accept, a wildcard, or one naming index types: the index.
    for (const accept of [undefined, "*/*", `${OCI_MANIFEST}, ${OCI_INDEX}`]) {
      const res = await get(accept)
      expect(res.headers.get("content-type")).toBe(OCI_INDEX)
      expect(res.headers.get("docker-content-digest")).toBe(digestOf(index))
    }
    // Image manifests only: the index's linux/amd64 manifest, GET and HEAD alike.
    for (const method of ["GET", "HEAD"]) {
      const res = await get(OCI_MANIFEST, "latest", method)
      expect(res.status).toBe(200)
      expect(res.headers.get("content-type")).toBe(OCI_MANIFEST)
      expect(res.headers.get("docker-content-digest")).toBe(digestOf(amd.bytes))
      if (method === "GET") expect(Buffer.from(await res.arrayBuffer()).equals(amd.bytes)).toBe(true)
    }
    // No amd64 entry of a type the client takes: MANIFEST_UNKNOWN.
    const docker = await get("application/vnd.docker.distribution.manifest.v2+json")
    expect(docker.status).toBe(404)
    expect(await errorCode(docker)).toBe("MANIFEST_UNKNOWN")
    // By digest, the bytes the digest names whatever the Accept; an image manifest as it is.
    expect((await get(OCI_MANIFEST, digestOf(index))).headers.get("content-type")).toBe(OCI_INDEX)
    expect((await get(OCI_INDEX, "arm")).headers.get("docker-content-digest")).toBe(digestOf(arm.bytes))
  })

  it("lists the images the caller may read in /v2/_catalog, n at a time after last", async () => {
    const config = Buffer.from("{}")
    for (const image of ["carol/secret", "bob/zeta", "bob/alpha/nested"]) {
      const owner = image.split("/")[0]!
      const auth = basic(owner, "password123")
      expect((await pushBlob(image, config, auth)).status).toBe(201)
      expect((await pushManifest(image, "v1", [config], auth)).res.status).toBe(201)
    }
    // A blob alone makes no image.
    expect((await pushBlob("bob/blobonly", config, basic("bob", "password123"))).status).toBe(201)
    const catalog = async (auth: string | undefined, query = "") => {
      const res = await v2("GET", `_catalog${query}`, auth)
      expect(res.status).toBe(200)
      return { names: (await json(res)).repositories as Array<string>, link: res.headers.get("link") }
    }
    const all = (await catalog(alice())).names
    expect(all).toEqual([...all].sort())
    expect(all).toEqual(expect.arrayContaining(["alice/multi", "bob/alpha/nested", "bob/zeta"]))
    expect(all).not.toContain("carol/secret")
    expect(all).not.toContain("bob/blobonly")
    expect((await catalog(basic("carol", "password123"))).names).toContain("carol/secret")
    expect((await catalog(undefined)).names).not.toContain("carol/secret")
    const first = await catalog(alice(), "?n=2")
    expect(first.names).toEqual(all.slice(0, 2))
    expect(first.link).toBe(`</v2/_catalog?n=2&last=${encodeURIComponent(all[1]!)}>; rel="next"`)
    const next = await catalog(alice(), first.link!.slice("</v2/_catalog".length, first.link!.indexOf(">")))
    expect(next.names).toEqual(all.slice(2, 4))
    // The last page: what the caller may not read (carol's) is skipped, and no Link follows.
    const last = await catalog(alice(), "?n=2&last=bob%2Falpha%2Fnested")
    expect(last).toEqual({ names: ["bob/zeta"], link: null })
    const noScope = await createToken(hearth, "alice", ["read:repository"])
    const denied = await v2("GET", "_catalog", basic("alice", noScope))
    expect(denied.status).toBe(403)
    expect(await errorCode(denied)).toBe("DENIED")
    expect((await v2("GET", "_catalog?n=x", alice())).status).toBe(400)
  })

  it("deletes a tag (202), then it is unknown", async () => {
    const config = Buffer.from("{}")
    expect((await pushBlob("alice/gone", config)).status).toBe(201)
    expect((await pushManifest("alice/gone", "v1", [config])).res.status).toBe(201)
    expect((await v2("DELETE", "alice/gone/manifests/v1", alice())).status).toBe(202)
    const after = await v2("GET", "alice/gone/manifests/v1", alice())
    expect(after.status).toBe(404)
    expect(await errorCode(after)).toBe("MANIFEST_UNKNOWN")
  })

  it("refuses names that are not image names (upper case, `..`) with NAME_INVALID", async () => {
    expect(await errorCode(await v2("GET", "alice/Bad/tags/list", alice()))).toBe("NAME_INVALID")
    // Paths sent as written (fetch would resolve dot segments, even encoded ones).
    const raw = (path: string) =>
      new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpRequest(`${hearth.base}${path}`, { headers: { authorization: alice() } }, (res) => {
          let body = ""
          res.on("data", (chunk) => {
            body += chunk
          })
          res.on("end", () => resolve({ status: res.statusCode!, body }))
        })
        req.on("error", reject)
        req.end()
      })
    // Dot segments never reach a name: the URL is resolved first (a/../b is b), literal or encoded.
    for (const path of ["/v2/alice/a/../b/tags/list", "/v2/alice/a/%2e%2e/b/tags/list"]) {
      const res = await raw(path)
      expect(res.status).toBe(404)
      expect(res.body).toContain("alice/b has no image")
    }
    // `..` inside a name is no name.
    expect(await errorCode(await v2("GET", "alice/a..b/tags/list", alice()))).toBe("NAME_INVALID")
    const push = await pushBlob("alice/a..b", randomBytes(10))
    expect(push.status).toBe(400)
    expect(await errorCode(push)).toBe("NAME_INVALID")
  })
})

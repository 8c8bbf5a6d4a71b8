// The container registry (OCI distribution spec at /v2/, Forgejo's routers/api/packages/container)
// used by Debian's skopeo — copy of hand-written OCI layouts to Hearth and back (one image, and a
// multi-arch index), inspect, list-tags, delete — and the protocol rules skopeo does not reach by
// itself, over plain HTTP: the token handshake, monolithic, chunked and mounted blob uploads,
// digest checks, manifests naming missing blobs, tags paging, names, access and limits, and the
// cleanup of abandoned uploads. Every refusal stores nothing.
import { execFile } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { createHash, randomBytes } from "node:crypto"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import {
  type Descriptor,
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

const sql = <A>(f: (sql: SqlClient) => Effect.Effect<A, unknown>) =>
  hearth.run(
    Effect.gen(function* () {
      return yield* f(yield* SqlClient)
    })
  )
const count = (table: string) =>
  sql((s) => Effect.map(s`SELECT count(*) AS n FROM ${s(table)}`, (rows) => Number(rows[0]!.n)))
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
  hearth = await startHearth({ packages: { LIMIT_SIZE_CONTAINER: "2 MiB" } })
  host = hearth.base.replace(/^http:\/\//, "")
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  aliceToken = await createToken(hearth, "alice", ["write:package"])
  readOnlyToken = await createToken(hearth, "alice", ["read:package"])
}, 60_000)
afterAll(() => hearth?.close())

describe("skopeo", () => {
  it.skipIf(skopeoMissing !== undefined)("copies an image to Hearth and back, inspects it, lists tags, deletes it", async () => {
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

    const inspect = await skopeo("inspect", "--creds", `alice:${aliceToken}`, "--tls-verify=false", `docker://${host}/alice/tools/app:v1`)
    expect(inspect.ok, inspect.out).toBe(true)
    const inspected = JSON.parse(inspect.out)
    expect(inspected.Digest).toBe(image.digest)
    expect(inspected.Architecture).toBe("amd64")
    expect(inspected.Layers).toEqual([layer1.digest, layer2.digest])
    expect([...inspected.RepoTags].sort()).toEqual(["v1", "v2"])

    const tags = await skopeo("list-tags", "--creds", `alice:${aliceToken}`, "--tls-verify=false", `docker://${host}/alice/tools/app`)
    expect(JSON.parse(tags.out).Tags).toEqual(["v1", "v2"])

    // The management API shows the tags as versions of a container package.
    const listed = await json(await request(hearth, "GET", "/packages/alice?type=container", basic("alice")))
    expect(listed.map((p: { name: string; version: string }) => `${p.name}:${p.version}`).sort()).toEqual([
      "tools/app:v1",
      "tools/app:v2"
    ])

    // Deleting by digest removes every tag of that manifest.
    const deleted = await skopeo("delete", "--creds", `alice:${aliceToken}`, "--tls-verify=false", `docker://${host}/alice/tools/app:v1`)
    expect(deleted.ok, deleted.out).toBe(true)
    expect((await v2("GET", `alice/tools/app/manifests/v1`, alice())).status).toBe(404)
    expect((await v2("GET", `alice/tools/app/manifests/${image.digest}`, alice())).status).toBe(404)
  }, 120_000)

  it.skipIf(skopeoMissing !== undefined)("copies a multi-arch index with --all and back", async () => {
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
    const raw = await skopeo("inspect", "--raw", "--creds", `alice:${aliceToken}`, "--tls-verify=false", `docker://${host}/alice/multi:latest`)
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
  }, 120_000)
})

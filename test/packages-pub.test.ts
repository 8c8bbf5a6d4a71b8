// The Pub registry (CONTRACT-PACKAGES §4) driven by a client that sends `dart pub publish`'s and
// `dart pub get`'s exact requests (test/support/dart-pub.ts): publish, the version list (`latest`
// the highest release, `archive_sha256` that matches the download), get resolving the highest,
// the deprecated spec paths, Pub's errors and challenges (401 only for missing or wrong
// credentials), bad archives and pubspecs refused with 400 storing nothing, a private owner's
// packages, the size limit and the owner's quota.
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compareSemver, parseSemver } from "../src/lib/Semver.ts"
import { scanTarGz } from "../src/packages/TarGz.ts"
import { DartPub, pubspec, SDK_VERSION, tarGz } from "./support/dart-pub.ts"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const MEDIA = "application/vnd.pub.v2+json"
let hearth: Hearth
let aliceToken: string
const hosted = (owner: string) => `${hearth.base}/api/packages/${owner}/pub`

const count = (table: "blobs" | "packages" | "package_versions") =>
  hearth.sql((s) => Effect.map(s`SELECT count(*) AS n FROM ${s(table)}`, (rows) => Number(rows[0]!.n)))
const stored = async () => ({
  blobs: await count("blobs"),
  packages: await count("packages"),
  versions: await count("package_versions")
})

/** A package archive as `dart pub publish` makes it. */
const archive = (name: string, version: string, owner = "alice", extra: Record<string, string | Buffer> = {}) =>
  tarGz({
    "pubspec.yaml": pubspec(name, version, hosted(owner)),
    "README.md": `# ${name}\n\nVersion ${version}.\n`,
    "lib/main.dart": `void main() => print('${name} ${version}');\n`,
    ...extra
  })

beforeAll(async () => {
  hearth = await startHearth({
    quota: { ENABLED: "true" },
    packages: { LIMIT_SIZE_PUB: "64 KiB" }
  })
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  await createUser(hearth, { username: "tight" })
  aliceToken = await createToken(hearth, "alice", ["write:package"])
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
}, 60_000)
afterAll(() => hearth?.close())

describe("dart pub publish, then dart pub get", () => {
  it("publishes with dart pub's exact requests: versions/new → multipart upload → Location → finalize", async () => {
    const pub = new DartPub(hosted("alice"), aliceToken)
    const outcome = await pub.publish(archive("hearth_demo", "1.1.0"))
    expect(outcome).toEqual({ ok: true, message: "hearth_demo 1.1.0 is published." })
    const api = `${hosted("alice")}/api/packages`
    const ua = `Dart pub ${SDK_VERSION}`
    const bearer = `Bearer ${aliceToken}`
    expect(pub.sent.map((r) => [r.method, r.url, r.status])).toEqual([
      ["GET", `${api}/versions/new`, 200],
      ["POST", `${api}/versions/new/upload`, 204],
      ["GET", `${api}/versions/new/finalize/hearth_demo/1.1.0`, 200]
    ])
    expect(pub.sent[0]!.headers).toEqual({ "user-agent": ua, accept: MEDIA, authorization: bearer })
    expect(pub.sent[1]!.headers).toMatchObject({ "user-agent": ua, authorization: bearer })
    expect(pub.sent[1]!.headers.accept).toBeUndefined()
    expect(pub.sent[1]!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
    expect(pub.sent[2]!.headers).toEqual({ "user-agent": ua, accept: MEDIA, authorization: bearer })

    // A lower version after, and a pre-release above: neither is `latest`.
    expect((await pub.publish(archive("hearth_demo", "1.0.0"))).ok).toBe(true)
    expect((await pub.publish(archive("hearth_demo", "2.0.0-dev.1"))).ok).toBe(true)
  })

  it("lists versions ascending, latest the highest release, with archive_url, archive_sha256, pubspec, published", async () => {
    const res = await fetch(`${hosted("alice")}/api/packages/hearth_demo`, { headers: { accept: MEDIA } })
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe(MEDIA)
    const doc = await json(res)
    expect(doc.name).toBe("hearth_demo")
    expect(doc.versions.map((v: any) => v.version)).toEqual(["1.0.0", "1.1.0", "2.0.0-dev.1"])
    // Forgejo answers the lowest (1.0.0) here.
    expect(doc.latest.version).toBe("1.1.0")
    const v = doc.versions[1]
    expect(v.archive_url).toBe(`${hosted("alice")}/api/packages/hearth_demo/files/1.1.0.tar.gz`)
    expect(v.archive_sha256).toMatch(/^[0-9a-f]{64}$/)
    expect(v.pubspec).toMatchObject({ name: "hearth_demo", version: "1.1.0", publish_to: hosted("alice") })
    expect(v.pubspec.environment).toEqual({ sdk: ">=3.0.0 <4.0.0" })
    expect(new Date(v.published).getTime()).toBeGreaterThan(Date.now() - 600_000)
    expect(doc.latest).toEqual(v)
    // Names are matched case-insensitively.
    expect((await fetch(`${hosted("alice")}/api/packages/HEARTH_DEMO`)).status).toBe(200)
  })

  it("get resolves the highest allowed version; the archive matches archive_sha256", async () => {
    const pub = new DartPub(hosted("alice"))
    const got = await pub.get("hearth_demo", "^1.0.0")
    if (!got.ok) throw new Error(JSON.stringify(got))
    expect(got.version).toBe("1.1.0")
    expect(readFileSync(join(got.dir, "lib/main.dart"), "utf8")).toContain("hearth_demo 1.1.0")
    expect(existsSync(join(got.dir, "pubspec.yaml"))).toBe(true)
    expect(pub.sent.map((r) => [r.method, r.url, r.status, r.headers.accept])).toEqual([
      ["GET", `${hosted("alice")}/api/packages/hearth_demo`, 200, MEDIA],
      ["GET", `${hosted("alice")}/api/packages/hearth_demo/files/1.1.0.tar.gz`, 200, undefined]
    ])
    // The same bytes as published, served as an attachment.
    const res = await fetch(`${hosted("alice")}/api/packages/hearth_demo/files/1.1.0.tar.gz`)
    expect(Buffer.from(await res.arrayBuffer())).toEqual(got.archive)
    expect(res.headers.get("content-type")).toBe("application/octet-stream")
    expect(res.headers.get("content-disposition")).toMatch(/filename="1\.1\.0\.tar\.gz"/)
    // HEAD on every read route (a download manager, a proxy's check): GET's headers, no body.
    for (const path of [
      "api/packages/hearth_demo/files/1.1.0.tar.gz",
      "packages/hearth_demo/versions/1.1.0.tar.gz",
      "api/packages/hearth_demo",
      "api/packages/hearth_demo/1.1.0"
    ]) {
      const get = await fetch(`${hosted("alice")}/${path}`)
      const head = await fetch(`${hosted("alice")}/${path}`, { method: "HEAD" })
      expect(head.status, path).toBe(200)
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"))
      expect(head.headers.get("content-length"), path).toBe(String((await get.arrayBuffer()).byteLength))
      expect(await head.text(), path).toBe("")
    }
    expect(
      (await fetch(`${hosted("alice")}/api/packages/hearth_demo/files/9.9.9.tar.gz`, { method: "HEAD" })).status
    ).toBe(404)
    // A pre-release only when asked for one and no release matches.
    const dev = await new DartPub(hosted("alice")).get("hearth_demo", "^2.0.0-dev.1")
    expect(dev.ok && dev.version).toBe("2.0.0-dev.1")
  })

  it("keeps the README and the pubspec's links; the management API lists the versions", async () => {
    const metadata = await hearth.sql((s) =>
      Effect.map(
        s`SELECT v.metadata_json FROM package_versions v JOIN packages p ON p.id = v.package_id
          WHERE p.lower_name = 'hearth_demo' AND v.version = '1.1.0'`,
        (rows) => JSON.parse(String(rows[0]!.metadata_json))
      )
    )
    expect(metadata).toMatchObject({
      description: "hearth_demo, a package for tests.",
      project_url: "https://example.com/hearth_demo",
      readme: "# hearth_demo\n\nVersion 1.1.0.\n",
      pubspec: { name: "hearth_demo" }
    })
    const listed = await json(await request(hearth, "GET", "/packages/alice?type=pub", basic("alice")))
    expect(listed.map((p: any) => p.version).sort()).toEqual(["1.0.0", "1.1.0", "2.0.0-dev.1"])
    const files = await json(
      await request(hearth, "GET", "/packages/alice/pub/hearth_demo/1.1.0/files", basic("alice"))
    )
    expect(files.map((f: any) => f.name)).toEqual(["1.1.0.tar.gz"])
  })

  it("serves the spec's deprecated paths and Forgejo's", async () => {
    for (const path of ["api/packages/hearth_demo/versions/1.0.0", "api/packages/hearth_demo/1.0.0"]) {
      const res = await fetch(`${hosted("alice")}/${path}`)
      expect(res.status, path).toBe(200)
      expect(res.headers.get("content-type")).toBe(MEDIA)
      const v = await json(res)
      expect(v.version).toBe("1.0.0")
      expect(v.pubspec.version).toBe("1.0.0")
      expect(v.archive_url).toBe(`${hosted("alice")}/api/packages/hearth_demo/files/1.0.0.tar.gz`)
    }
    const old = await fetch(`${hosted("alice")}/packages/hearth_demo/versions/1.0.0.tar.gz`)
    expect(old.status).toBe(200)
    expect(old.headers.get("content-type")).toBe("application/octet-stream")
    const missing = await fetch(`${hosted("alice")}/api/packages/hearth_demo/versions/9.9.9`)
    expect(missing.status).toBe(404)
    expect(await json(missing)).toEqual({ error: { code: "Not Found", message: "package does not exist" } })
    const none = await fetch(`${hosted("alice")}/api/packages/nothing_here`)
    expect(none.status).toBe(404)
    expect(none.headers.get("content-type")).toBe(MEDIA)
  })

  it("refuses a version that exists (409) and keeps nothing of it", async () => {
    const before = await stored()
    const pub = new DartPub(hosted("alice"), aliceToken)
    const again = await pub.publish(archive("hearth_demo", "1.0.0", "alice", { "lib/other.dart": "// other\n" }))
    expect(again).toMatchObject({
      ok: false,
      status: 409,
      message: "package version already exists",
      contentType: MEDIA
    })
    expect(JSON.parse((again as { body: string }).body).error.code).toBe("Conflict")
    expect(await stored()).toEqual(before)
  })
})

describe("archives and versions as other tools make them", () => {
  it("semver precedence (semver.org §11), build metadata only breaking ties", () => {
    const ordered = [
      "0.9.0",
      "1.0.0-alpha",
      "1.0.0-alpha.1",
      "1.0.0-alpha.beta",
      "1.0.0-beta",
      "1.0.0-beta.2",
      "1.0.0-beta.11",
      "1.0.0-rc.1",
      "1.0.0",
      "1.0.0+1",
      "1.0.0+2",
      "1.2.0",
      "1.10.0",
      "2.0.0"
    ]
    const shuffled = [...ordered].reverse()
    shuffled.sort((a, b) => compareSemver(parseSemver(a)!, parseSemver(b)!))
    expect(shuffled).toEqual(ordered)
    for (const bad of ["1.0", "v1.0.0", "01.0.0", "1.0.0-01", "1.0.0-", "1.0.0+", "1..0", " 1.0.0"])
      expect(parseSemver(bad), bad).toBeUndefined()
  })

  it("GNU tar's archive (./ entries, a long PAX path) publishes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-pub-tar-"))
    const root = join(dir, "pkg")
    const deep = join(root, "lib", "a".repeat(60), "b".repeat(60))
    mkdirSync(deep, { recursive: true })
    writeFileSync(join(root, "pubspec.yaml"), pubspec("gnu_made", "0.2.0", hosted("alice")))
    writeFileSync(join(root, "readme.md"), "made by tar\n")
    writeFileSync(join(deep, "c".repeat(40)), "long path\n")
    await promisify(execFile)("tar", ["--format=pax", "-czf", join(dir, "pkg.tar.gz"), "-C", root, "."])
    const outcome = await new DartPub(hosted("alice"), aliceToken).publish(readFileSync(join(dir, "pkg.tar.gz")))
    expect(outcome).toEqual({ ok: true, message: "gnu_made 0.2.0 is published." })
    const readme = await hearth.sql((s) =>
      Effect.map(
        s`SELECT v.metadata_json FROM package_versions v JOIN packages p ON p.id = v.package_id
          WHERE p.lower_name = 'gnu_made'`,
        (rows) => JSON.parse(String(rows[0]!.metadata_json)).readme
      )
    )
    expect(readme).toBe("made by tar\n")
  })
})

describe("the tar.gz reader", () => {
  /** One raw tar entry: a ustar header (checksum right unless `badSum`), the body, its padding. */
  const entry = (name: string, body: string | Buffer, type = "0", badSum = false) => {
    const bytes = typeof body === "string" ? Buffer.from(body) : body
    const h = Buffer.alloc(512)
    h.write(name, 0, 100)
    h.write("0000644\0", 100)
    h.write(`${bytes.length.toString(8).padStart(11, "0")}\0`, 124)
    h.write("        ", 148)
    h.write(type, 156)
    h.write("ustar\0", 257)
    h.write("00", 263)
    let sum = badSum ? 1 : 0
    for (const b of h) sum += b
    h.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148)
    return Buffer.concat([h, bytes, Buffer.alloc((512 - (bytes.length % 512)) % 512)])
  }
  const pax = (path: string) => {
    const record = ` path=${path}\n`
    let length = record.length
    length += String(length + String(length).length).length
    return `${length}${record}`
  }
  const scan = async (archive: Buffer, maxUnpacked = 1024 * 1024, chunk = archive.length) => {
    const reader = scanTarGz({
      want: (path) => (path === "pubspec.yaml" || path === "readme.md" ? 64 : undefined),
      maxUnpacked
    })
    for (let at = 0; at < archive.length; at += chunk) await reader.write(archive.subarray(at, at + chunk))
    return reader.end()
  }
  const gz = (...entries: Array<Buffer>) => gzipSync(Buffer.concat([...entries, Buffer.alloc(1024)]))

  it("takes names from PAX and GNU long-name headers, and bytes in any chunks", async () => {
    const archive = gz(
      entry("PaxHeaders/x", pax("pubspec.yaml"), "x"),
      entry("junk", "name: a\n"),
      entry("././@LongLink", "readme.md\0", "L"),
      entry("other", "# read me\n"),
      entry("lib/", "", "5"),
      entry("big.bin", randomBytes(3000))
    )
    for (const chunk of [archive.length, 7, 1]) {
      const result = await scan(archive, 1024 * 1024, chunk)
      expect(result.ok, String(chunk)).toBe(true)
      if (!result.ok) continue
      expect(Object.fromEntries([...result.files].map(([k, v]) => [k, v.toString()]))).toEqual({
        "pubspec.yaml": "name: a\n",
        "readme.md": "# read me\n"
      })
    }
  })

  it("refuses a wrong checksum, a bomb, a cut archive; marks a wanted file over its bound", async () => {
    expect(await scan(gz(entry("pubspec.yaml", "x", "0", true)))).toMatchObject({ ok: false, reason: /checksum/ })
    expect(await scan(gz(entry("a.bin", Buffer.alloc(200_000))), 100_000)).toMatchObject({
      ok: false,
      reason: /unpacks to more than/
    })
    expect(await scan(gzipSync(entry("pubspec.yaml", "name: a\n").subarray(0, 600)))).toMatchObject({
      ok: false,
      reason: /ends in the middle/
    })
    const over = await scan(gz(entry("pubspec.yaml", "x".repeat(65))))
    expect(over.ok && [...over.tooLarge]).toEqual(["pubspec.yaml"])
  })
})

describe("bad archives and pubspecs: 400 in Pub's format, nothing stored", () => {
  const cases: Array<[string, Buffer, RegExp]> = []
  beforeAll(() => {
    const good = archive("fine_pkg", "1.0.0")
    const spec = (text: string) => tarGz({ "pubspec.yaml": text })
    cases.push(
      ["not gzip", randomBytes(2000), /not a gzip-compressed file/],
      [
        "gzip but not tar",
        gzipSync(Buffer.from("just some text, not a tar archive\n".repeat(40))),
        /not a tar archive/
      ],
      ["cut short", good.subarray(0, Math.floor(good.length / 2)), /cannot be read/],
      ["no pubspec", tarGz({ "README.md": "# nothing\n" }), /no pubspec\.yaml/],
      ["pubspec in a folder only", tarGz({ "sub/pubspec.yaml": "name: a\nversion: 1.0.0\n" }), /no pubspec\.yaml/],
      ["pubspec too large", spec(`name: big\nversion: 1.0.0\n# ${"x".repeat(140 * 1024)}\n`), /larger than 128 KiB/],
      ["pubspec not YAML", spec("name: [unclosed\nversion: 1.0.0\n"), /not valid YAML/],
      ["pubspec not a mapping", spec("- a\n- b\n"), /not a YAML mapping/],
      ["empty pubspec", spec(""), /not a YAML mapping/],
      ["name starting with a digit", spec("name: 123abc\nversion: 1.0.0\n"), /package name "123abc" is invalid/],
      ["name with a dash", spec("name: ab-cd\nversion: 1.0.0\n"), /package name "ab-cd" is invalid/],
      ["upper-case name", spec("name: Hearth\nversion: 1.0.0\n"), /package name "Hearth" is invalid/],
      ["reserved word", spec("name: class\nversion: 1.0.0\n"), /reserved word/],
      ["name with ..", spec("name: ../evil\nversion: 1.0.0\n"), /package name "\.\.\/evil" is invalid/],
      ["name with /", spec("name: a/b\nversion: 1.0.0\n"), /package name "a\/b" is invalid/],
      ["no name", spec("version: 1.0.0\n"), /has no name/],
      ["version not semver", spec("name: ok_name\nversion: invalid\n"), /version "invalid" is invalid/],
      ["version 1.0 (a number)", spec("name: ok_name\nversion: 1.0\n"), /version 1 is invalid/],
      ["version with v", spec("name: ok_name\nversion: v1.0.0\n"), /version "v1\.0\.0" is invalid/],
      ["version with a leading zero", spec("name: ok_name\nversion: 01.0.0\n"), /version "01\.0\.0" is invalid/],
      ["version with a path", spec("name: ok_name\nversion: 1.0.0/../x\n"), /is invalid/]
    )
  })

  it("each is refused with its reason, as JSON the client shows", async () => {
    const before = await stored()
    for (const [what, bytes, reason] of cases) {
      const pub = new DartPub(hosted("alice"), aliceToken)
      const outcome = await pub.publish(bytes)
      expect(outcome.ok, what).toBe(false)
      if (outcome.ok) continue
      expect(outcome.status, what).toBe(400)
      expect(outcome.contentType, what).toBe(MEDIA)
      expect(JSON.parse(outcome.body).error.code, what).toBe("Bad Request")
      expect(outcome.message, what).toMatch(reason)
    }
    expect(await stored()).toEqual(before)
    // The refused uploads' blobs are gone from the disk too (only what is stored is left).
  })

  it("a body that is not multipart (400), has no file part (400), or a second file (422): nothing kept", async () => {
    const before = await stored()
    const url = `${hosted("alice")}/api/packages/versions/new/upload`
    const plain = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${aliceToken}`, "content-type": "application/octet-stream" },
      body: archive("raw_pkg", "1.0.0")
    })
    expect(plain.status).toBe(400)
    expect(plain.headers.get("content-type")).toBe(MEDIA)
    expect((await json(plain)).error.message).toMatch(/multipart\/form-data/)
    const form = new FormData()
    form.set("other", "value")
    const noFile = await fetch(url, { method: "POST", headers: { authorization: `Bearer ${aliceToken}` }, body: form })
    expect(noFile.status).toBe(400)
    expect((await json(noFile)).error.message).toMatch(/no "file" part/)
    // A second file after the archive: refused once the archive is stored, which is given back.
    const twoFiles = new FormData()
    twoFiles.set("file", new Blob([archive("two_files", "1.0.0")]), "package.tar.gz")
    twoFiles.set("extra", new Blob(["more"]), "extra.bin")
    const refused = await fetch(url, {
      method: "POST",
      headers: { authorization: `Bearer ${aliceToken}` },
      body: twoFiles
    })
    expect(refused.status).toBe(422)
    expect(refused.headers.get("content-type")).toBe(MEDIA)
    expect((await json(refused)).error.message).toMatch(/only one file/)
    expect(await stored()).toEqual(before)
  })
})

describe("who may", () => {
  it("401 with Pub's challenge only without or with a wrong token; the client then forgets it", async () => {
    const anonymous = new DartPub(hosted("alice"))
    const refused = await anonymous.publish(archive("anon_pkg", "1.0.0"))
    expect(refused).toMatchObject({ ok: false, status: 401, contentType: MEDIA })
    expect((refused as { challenge?: string }).challenge).toMatch(/sign in/)
    const wrong = new DartPub(hosted("alice"), "0123456789abcdef0123456789abcdef01234567")
    expect(await wrong.publish(archive("anon_pkg", "1.0.0"))).toMatchObject({ ok: false, status: 401 })
    expect(wrong.token).toBeUndefined()
    const res = await fetch(`${hosted("alice")}/api/packages/versions/new`)
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer realm="pub", message="/)
    expect(await json(res)).toMatchObject({ error: { code: "Unauthorized" } })
  })

  it("403 for a valid token without permission: the client keeps its token and shows why", async () => {
    const bobToken = await createToken(hearth, "bob", ["write:package"])
    const bob = new DartPub(hosted("alice"), bobToken)
    const outcome = await bob.publish(archive("bobs_pkg", "1.0.0"))
    expect(outcome).toMatchObject({ ok: false, status: 403, contentType: MEDIA })
    expect((outcome as { challenge?: string }).challenge).toBe("bob may read but not write the packages of alice")
    expect(bob.token).toBe(bobToken)
    const readOnly = await createToken(hearth, "alice", ["read:package"])
    const reader = new DartPub(hosted("alice"), readOnly)
    expect(await reader.publish(archive("ro_pkg", "1.0.0"))).toMatchObject({ ok: false, status: 403 })
    expect(reader.token).toBe(readOnly)
    // The read-only token reads.
    const got = await reader.get("hearth_demo")
    expect(got.ok).toBe(true)
  })

  it("a private owner's packages: 401 for anonymous, 404 for others, served to the owner (token on archive_url)", async () => {
    const carolToken = await createToken(hearth, "carol", ["write:package"])
    const carol = new DartPub(hosted("carol"), carolToken)
    expect((await carol.publish(archive("secret_pkg", "0.1.0", "carol"))).ok).toBe(true)
    const anonymous = await new DartPub(hosted("carol")).get("secret_pkg")
    expect(anonymous).toMatchObject({ ok: false, status: 401 })
    const bobToken = await createToken(hearth, "bob", ["read:package"])
    const bob = await new DartPub(hosted("carol"), bobToken).get("secret_pkg")
    expect(bob).toMatchObject({ ok: false, status: 404, contentType: MEDIA })
    const owner = new DartPub(hosted("carol"), carolToken)
    const got = await owner.get("secret_pkg")
    expect(got.ok && got.version).toBe("0.1.0")
    expect(owner.sent[1]!.headers.authorization).toBe(`Bearer ${carolToken}`)
    // The archive itself is not served to others either.
    expect((await fetch(`${hosted("carol")}/api/packages/secret_pkg/files/0.1.0.tar.gz`)).status).toBe(401)
  })
})

describe("limits and quota", () => {
  it("LIMIT_SIZE_PUB: 403 in Pub's format, nothing stored; admins are not limited", async () => {
    const before = await stored()
    const big = archive("big_pkg", "1.0.0", "alice", { "lib/blob.bin": randomBytes(80 * 1024) })
    const outcome = await new DartPub(hosted("alice"), aliceToken).publish(big)
    expect(outcome).toMatchObject({
      ok: false,
      status: 403,
      message: "maximum allowed package type size exceeded",
      contentType: MEDIA
    })
    expect(await stored()).toEqual(before)
    const rootToken = await createToken(hearth, "root", ["write:package"])
    expect((await new DartPub(hosted("alice"), rootToken).publish(big)).ok).toBe(true)
  })

  it("the owner's quota (size:assets:packages:all): 413 in Pub's format", async () => {
    const before = await stored()
    const token = await createToken(hearth, "tight", ["write:package"])
    const outcome = await new DartPub(hosted("tight"), token).publish(archive("q_pkg", "1.0.0", "tight"))
    expect(outcome).toMatchObject({ ok: false, status: 413, contentType: MEDIA })
    expect(await stored()).toEqual(before)
  })
})

describe("an aborted upload", () => {
  it("leaves no version, no blob and no temporary file", async () => {
    const before = await stored()
    const body = archive("aborted_pkg", "1.0.0", "alice", { "lib/blob.bin": randomBytes(40 * 1024) })
    const boundary = "dart-http-boundary-aborted"
    const head = Buffer.from(
      `--${boundary}\r\ncontent-type: application/octet-stream\r\n` +
        `content-disposition: form-data; name="file"; filename="package.tar.gz"\r\n\r\n`
    )
    const length = head.length + body.length + boundary.length + 8
    const port = Number(new URL(hearth.base).port)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `POST /api/packages/alice/pub/api/packages/versions/new/upload HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: Bearer ${aliceToken}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\n` +
            `Content-Length: ${length}\r\n\r\n`
        )
        socket.write(Buffer.concat([head, body.subarray(0, body.length / 2)]), () => {
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, 100)
        })
      })
      socket.on("error", reject)
    })
    // Bounded wait for the server to notice the closed connection and clean up.
    const tmp = join(hearth.settings.storage.PATH, "tmp")
    const list = (path: string) => (existsSync(path) ? readdirSync(path) : [])
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && list(tmp).length > 0) await new Promise((r) => setTimeout(r, 50))
    expect(list(tmp)).toEqual([])
    expect(await stored()).toEqual(before)
    expect((await fetch(`${hosted("alice")}/api/packages/aborted_pkg`)).status).toBe(404)
  })
})

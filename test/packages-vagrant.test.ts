// The Vagrant registry (Forgejo's routers/api/packages/vagrant; CONTRACT-PACKAGES §3): boxes
// published with curl, their metadata (versions ascending, providers, URLs, sha512 checksums, the
// description of the highest version from its info.json), downloads, Vagrant's error JSON; bad
// boxes, names, versions and providers refused with a 400 that stores nothing; and Debian's
// `vagrant box add` installing a box from Hearth with a token (Bearer, and in the query).
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { compareVersions, invalidVersion, readBoxInfo } from "../src/packages/vagrant/Metadata.ts"
import { createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"

const run = promisify(execFile)
let hearth: Hearth
let aliceToken: string
let carolToken: string
let readToken: string
const dir = mkdtempSync(join(tmpdir(), "hearth-vagrant-"))
const MiB = 1024 * 1024

const url = (path: string) => `${hearth.base}/api/packages/${path}`

const count = (table: string) =>
  hearth.sql((s) => Effect.map(s`SELECT count(*) AS n FROM ${s(table)}`, (rows) => Number(rows[0]!.n)))
const stored = async () => ({
  blobs: await count("blobs"),
  versions: await count("package_versions"),
  files: await count("package_files")
})

let boxes = 0
/**
 * A box made with tar and gzip: metadata.json (the provider), a Vagrantfile, a "disk" of `disk`
 * random bytes, and `info` as info.json when given. `dotSlash`: entries named ./x (tar -C dir .).
 */
const makeBox = async (
  options: { provider?: string; info?: unknown; disk?: number; dotSlash?: boolean; gzip?: boolean } = {}
) => {
  const content = join(dir, `box-${++boxes}`)
  mkdirSync(content)
  writeFileSync(join(content, "metadata.json"), JSON.stringify({ provider: options.provider ?? "virtualbox" }))
  writeFileSync(join(content, "Vagrantfile"), "Vagrant.configure('2') { |config| }\n")
  // Random: a large disk must stay large once compressed.
  writeFileSync(join(content, "box-disk1.vmdk"), randomBytes(options.disk ?? 1024))
  const files = ["metadata.json", "Vagrantfile", "box-disk1.vmdk"]
  if (options.info !== undefined) {
    writeFileSync(
      join(content, "info.json"),
      typeof options.info === "string" ? options.info : JSON.stringify(options.info)
    )
    files.push("info.json")
  }
  const file = join(dir, `box-${boxes}.box`)
  const gzip = options.gzip ?? true
  await run("tar", [gzip ? "-czf" : "-cf", file, "-C", content, ...(options.dotSlash === true ? ["."] : files)])
  return { file, bytes: readFileSync(file) }
}

/** A PUT of `body` with `token` (null: anonymous). */
const put = (path: string, body: Uint8Array | string, token: string | null = aliceToken, headers = {}) =>
  fetch(url(path), {
    method: "PUT",
    headers: { ...(token === null ? {} : { authorization: `token ${token}` }), ...headers },
    body
  })

const sha512 = (bytes: Uint8Array) => createHash("sha512").update(bytes).digest("hex")

beforeAll(async () => {
  hearth = await startHearth({ packages: { LIMIT_SIZE_VAGRANT: "1 MiB" } })
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  aliceToken = await createToken(hearth, "alice", ["write:package"])
  carolToken = await createToken(hearth, "carol", ["write:package"])
  readToken = await createToken(hearth, "bob", ["read:package"])
}, 60_000)
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe("versions", () => {
  it("takes what both go-version and Vagrant's Gem::Version read, and orders them as semver", () => {
    for (const ok of ["1", "1.0", "1.0.0", "2.10.3", "1.0.0-beta.1", "1.0.0-rc-2", "1.2.3.4"])
      expect(invalidVersion(ok), ok).toBeUndefined()
    for (const bad of ["v1.0.0", "1.0.0+build", "abc", "1..0", "1.0.", "-1", "1.0.0-", "1.0 ", "1/0", ".."])
      expect(invalidVersion(bad), bad).toMatch(/^Malformed version/)
    const sorted = ["1.10.0", "1.9.0", "1.0.0", "1.0.0-beta.2", "1.0.0-beta.10", "1.0.0-alpha", "1", "0.9"].sort(
      compareVersions
    )
    // Equal ones ("1.0.0" and "1") keep their order.
    expect(sorted).toEqual(["0.9", "1.0.0-alpha", "1.0.0-beta.2", "1.0.0-beta.10", "1.0.0", "1", "1.9.0", "1.10.0"])
  })
})

describe("reading a box", () => {
  it("unpacks at most its limit (a decompression bomb is refused, not unpacked for ever)", async () => {
    const box = await makeBox({ disk: 0 })
    writeFileSync(join(dir, `box-${boxes}`, "box-disk1.vmdk"), Buffer.alloc(8 * MiB))
    await run("tar", ["-czf", box.file, "-C", join(dir, `box-${boxes}`), "."])
    const bomb = readFileSync(box.file)
    expect(bomb.length).toBeLessThan(MiB / 8)
    const unpack = (limit: number) => readBoxInfo(Readable.from([bomb]), limit)
    await expect(unpack(4 * MiB)).rejects.toThrow(/decompression bomb/)
    await expect(unpack(16 * MiB)).resolves.toBeUndefined()
  })
})

describe("authenticate", () => {
  it("answers 200 to a caller with credentials, 401 in Vagrant's JSON to anonymous ones", async () => {
    const anonymous = await fetch(url("alice/vagrant/authenticate"))
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("content-type")).toMatch(/^application\/json/)
    expect(await anonymous.json()).toEqual({ errors: ["Invalid access token"] })
    const signedIn = await fetch(url("alice/vagrant/authenticate"), {
      headers: { authorization: `Bearer ${readToken}` }
    })
    expect(signedIn.status).toBe(200)
    // The token in the query (Vagrant's VAGRANT_SERVER_ACCESS_TOKEN_BY_URL).
    expect((await fetch(url(`alice/vagrant/authenticate?access_token=${readToken}`))).status).toBe(200)
    expect((await fetch(url("alice/vagrant/authenticate?access_token=wrong"))).status).toBe(401)
    // A private owner: anonymous 401 (the realm), another user 404 (cannot see it at all).
    const hidden = await fetch(url("carol/vagrant/authenticate"))
    expect(hidden.status).toBe(401)
    expect(hidden.headers.get("www-authenticate")).toBe('Basic realm="Gitea Package API"')
    expect(await hidden.json()).toEqual({ errors: [expect.stringMatching(/sign in/)] })
    expect(
      (await fetch(url("carol/vagrant/authenticate"), { headers: { authorization: `token ${readToken}` } })).status
    ).toBe(404)
  })
})

describe("upload, metadata, download", () => {
  it("publishes a box (201), refuses it again (409), answers HEAD with JSON for Vagrant", async () => {
    expect((await fetch(url("alice/vagrant/focal"), { method: "HEAD" })).status).toBe(404)
    const box = await makeBox({
      info: { Description: "Ubuntu Focal", author: "Alice", website: "https://example.com" }
    })
    const anonymous = await put("alice/vagrant/focal/1.0.0/virtualbox.box", box.bytes, null)
    expect(anonymous.status).toBe(401)
    expect(await anonymous.json()).toEqual({ errors: [expect.any(String)] })
    // bob may read alice's packages, not publish them: 403.
    expect((await put("alice/vagrant/focal/1.0.0/virtualbox.box", box.bytes, readToken)).status).toBe(403)

    // As curl --upload-file sends it.
    const { stdout } = await run("curl", [
      "-s",
      "-w",
      "%{http_code}",
      "--upload-file",
      box.file,
      "-H",
      `Authorization: token ${aliceToken}`,
      url("alice/vagrant/focal/1.0.0/virtualbox.box")
    ])
    expect(stdout).toBe("201")
    const before = await stored()
    const again = await put("alice/vagrant/Focal/1.0.0/VirtualBox.box", box.bytes)
    expect(again.status).toBe(409)
    expect(await again.json()).toEqual({ errors: ["package file already exists"] })
    expect(await stored()).toEqual(before)

    const head = await fetch(url("alice/vagrant/focal"), { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-type")).toBe("application/json;charset=utf-8")
    const version = await hearth.sql(
      (s) =>
        s`SELECT p.name, p.semver_compatible, v.metadata_json FROM packages p
      JOIN package_versions v ON v.package_id = p.id WHERE p.type = 'vagrant' AND p.lower_name = 'focal'`
    )
    expect(version).toEqual([
      {
        name: "focal",
        semver_compatible: true,
        metadata_json: JSON.stringify({
          author: "Alice",
          description: "Ubuntu Focal",
          project_url: "https://example.com"
        })
      }
    ])
  })

  it("lists versions ascending with every provider, the highest version's description, sha512 checksums", async () => {
    const newer = await makeBox({ info: { description: "Bionic 1.10", repository: "not a url" }, dotSlash: true })
    const older = await makeBox({ info: { short_description: "Bionic 1.9" } })
    const libvirt = await makeBox({ provider: "libvirt" })
    expect((await put("alice/vagrant/Bionic/1.10.0/VirtualBox.box", newer.bytes)).status).toBe(201)
    expect((await put("alice/vagrant/bionic/1.9.0/virtualbox.box", older.bytes)).status).toBe(201)
    // A second provider joins the version and changes nothing of its metadata.
    const noInfo = await put("alice/vagrant/bionic/1.10.0/libvirt.box", libvirt.bytes)
    expect(noInfo.status).toBe(201)

    const res = await fetch(url("alice/vagrant/bionic"))
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toBe("application/json;charset=utf-8")
    const base = `${hearth.base}/api/packages/alice/vagrant/Bionic`
    expect(await res.json()).toEqual({
      name: "Bionic",
      description: "Bionic 1.10",
      versions: [
        {
          version: "1.9.0",
          status: "active",
          providers: [
            {
              name: "virtualbox",
              url: `${base}/1.9.0/virtualbox.box`,
              checksum: sha512(older.bytes),
              checksum_type: "sha512"
            }
          ]
        },
        {
          version: "1.10.0",
          status: "active",
          providers: [
            {
              name: "VirtualBox",
              url: `${base}/1.10.0/virtualbox.box`,
              checksum: sha512(newer.bytes),
              checksum_type: "sha512"
            },
            {
              name: "libvirt",
              url: `${base}/1.10.0/libvirt.box`,
              checksum: sha512(libvirt.bytes),
              checksum_type: "sha512"
            }
          ]
        }
      ]
    })

    // Downloads: the bytes uploaded; unknown version or provider in Vagrant's JSON.
    const box = await fetch(`${base}/1.10.0/virtualbox.box`)
    expect(box.status).toBe(200)
    expect(Buffer.from(await box.arrayBuffer()).equals(newer.bytes)).toBe(true)
    expect(box.headers.get("content-disposition")).toMatch(/^attachment; filename="virtualbox.box"/)
    const noVersion = await fetch(`${base}/2.0.0/virtualbox.box`)
    expect(noVersion.status).toBe(404)
    expect(await noVersion.json()).toEqual({ errors: ["package does not exist"] })
    const noProvider = await fetch(`${base}/1.9.0/libvirt.box`)
    expect(noProvider.status).toBe(404)
    expect(await noProvider.json()).toEqual({ errors: ["package file does not exist"] })
    const none = await fetch(url("alice/vagrant/nothing"))
    expect(none.status).toBe(404)
    expect(await none.json()).toEqual({ errors: ["package does not exist"] })
  })

  it("keeps a private owner's boxes from those who may not see it", async () => {
    const box = await makeBox()
    expect((await put("carol/vagrant/secret/1.0.0/virtualbox.box", box.bytes, carolToken)).status).toBe(201)
    expect((await fetch(url("carol/vagrant/secret"))).status).toBe(401)
    expect(
      (
        await fetch(url("carol/vagrant/secret/1.0.0/virtualbox.box"), {
          headers: { authorization: `token ${readToken}` }
        })
      ).status
    ).toBe(404)
    expect((await fetch(url(`carol/vagrant/secret?access_token=${carolToken}`))).status).toBe(200)
  })
})

describe("bad input: a 400 in Vagrant's JSON, and nothing stored", () => {
  it("refuses names, versions and provider files Vagrant could not use", async () => {
    const box = await makeBox()
    const before = await stored()
    const cases: Array<[string, RegExp]> = [
      ["alice/vagrant/ok/v1.0.0/virtualbox.box", /^Malformed version: v1\.0\.0/],
      ["alice/vagrant/ok/1.0.0+build/virtualbox.box", /^Malformed version/],
      ["alice/vagrant/ok/latest/virtualbox.box", /^Malformed version: latest/],
      ["alice/vagrant/ok/1.0.0/virtualbox", /^invalid provider file name: virtualbox /],
      ["alice/vagrant/ok/1.0.0/.box", /^invalid provider file name/],
      ["alice/vagrant/ok/1.0.0/%2E%2E.box", /^invalid provider file name/],
      ["alice/vagrant/a..b/1.0.0/virtualbox.box", /^invalid box name/],
      ["alice/vagrant/%2E%2E/1.0.0/virtualbox.box", /^invalid box name/],
      ["alice/vagrant/a%2Fb/1.0.0/virtualbox.box", /^invalid box name/],
      ["alice/vagrant/authenticate/1.0.0/virtualbox.box", /reserved/]
    ]
    for (const [path, message] of cases) {
      const res = await put(path, box.bytes)
      // An encoded dot segment may be undone before routing: then no route matches (404).
      if (path.includes("%2E%2E/") && res.status === 404) continue
      expect(res.status, path).toBe(400)
      const body = await json(res)
      expect(body.errors, path).toEqual([expect.stringMatching(message)])
    }
    expect(await stored()).toEqual(before)
  })

  it("refuses a body that is no readable box, a broken info.json, a form", async () => {
    const good = await makeBox({ info: { description: "x" } })
    const before = await stored()
    const gzippedJunk = gzipSync(Buffer.alloc(4096, 7))
    const cases: Array<[string, Uint8Array | string, RegExp, Record<string, string>?]> = [
      ["not gzip nor tar", "just some text that is no box at all", /not a tar archive/],
      ["gzip of no tar", gzippedJunk, /not a tar archive/],
      ["truncated gzip", good.bytes.subarray(0, good.bytes.length - 40), /not a readable gzip-compressed tar/],
      // The tar is whole; only the gzip's trailer (its CRC and length) is cut: Vagrant could not unpack it.
      ["gzip trailer cut", good.bytes.subarray(0, good.bytes.length - 4), /not a readable gzip-compressed tar/],
      ["empty", "", /empty/],
      ["info.json not JSON", (await makeBox({ info: "{nope" })).bytes, /info\.json is not valid JSON/],
      ["info.json not strings", (await makeBox({ info: { description: 3 } })).bytes, /only strings/],
      ["info.json an array", (await makeBox({ info: ["a"] })).bytes, /must be a JSON object/],
      ["a form without a boundary", good.bytes, /no multipart boundary/, { "content-type": "multipart/form-data" }],
      [
        "a form with no file",
        '--x\r\ncontent-disposition: form-data; name="a"\r\n\r\nb\r\n--x--\r\n',
        /has no file/,
        { "content-type": "multipart/form-data; boundary=x" }
      ],
      ["a urlencoded form", "a=b", /request body/, { "content-type": "application/x-www-form-urlencoded" }]
    ]
    for (const [what, body, message, headers] of cases) {
      const res = await put(
        `alice/vagrant/broken/1.0.${cases.findIndex((c) => c[0] === what)}/virtualbox.box`,
        body,
        aliceToken,
        headers
      )
      expect(res.status, what).toBe(400)
      expect((await json(res)).errors, what).toEqual([expect.stringMatching(message)])
    }
    expect(await stored()).toEqual(before)
    expect((await fetch(url("alice/vagrant/broken"))).status).toBe(404)
  })

  it("takes the box as the file of a multipart form (curl -F), as Forgejo", async () => {
    const box = await makeBox({ info: { description: "from a form" } })
    const { stdout } = await run("curl", [
      "-s",
      "-w",
      "%{http_code}",
      "-X",
      "PUT",
      "-F",
      "note=first a field",
      "-F",
      `box=@${box.file}`,
      "-H",
      `Authorization: token ${aliceToken}`,
      url("alice/vagrant/formed/1.0.0/virtualbox.box")
    ])
    expect(stdout).toBe("201")
    const metadata = await json(await fetch(url("alice/vagrant/formed")))
    expect(metadata.description).toBe("from a form")
    expect(metadata.versions[0].providers[0].checksum).toBe(sha512(box.bytes))
  })

  it("takes a plain tar too (Vagrant unpacks both); refuses a box over LIMIT_SIZE_VAGRANT (403)", async () => {
    const plain = await makeBox({ gzip: false, info: { description: "plain" } })
    expect((await put("alice/vagrant/plain/1.0.0/virtualbox.box", plain.bytes)).status).toBe(201)
    expect((await json(await fetch(url("alice/vagrant/plain")))).description).toBe("plain")
    const before = await stored()
    const big = await makeBox({ disk: 2 * MiB })
    const res = await put("alice/vagrant/big/1.0.0/virtualbox.box", big.bytes)
    expect(res.status).toBe(403)
    expect(await res.json()).toEqual({ errors: ["maximum allowed package type size exceeded"] })
    expect(await stored()).toEqual(before)
    // Site administrators are not limited.
    const rootToken = await createToken(hearth, "root", ["write:package"])
    expect((await put("alice/vagrant/big/1.0.0/virtualbox.box", big.bytes, rootToken)).status).toBe(201)
  })
})

describe("the real client: vagrant box add", () => {
  /** Debian's vagrant, with its home in a temp dir; undefined (and why) when it cannot run here. */
  const vagrant = async (env: Record<string, string>, ...args: Array<string>) => {
    const home = mkdtempSync(join(dir, "home-"))
    const result = await run("vagrant", args, {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        VAGRANT_HOME: join(home, ".vagrant.d"),
        VAGRANT_CHECKPOINT_DISABLE: "1",
        VAGRANT_NO_COLOR: "1",
        ...env
      },
      maxBuffer: 16 * MiB
    }).catch((error: { stdout?: string; stderr?: string; message: string }) => {
      throw new Error(`vagrant ${args.join(" ")} failed:\n${error.stdout ?? ""}\n${error.stderr ?? error.message}`)
    })
    return { ...result, home: join(home, ".vagrant.d") }
  }
  const available = async () => {
    try {
      await run("vagrant", ["--version"], { env: { PATH: process.env.PATH ?? "", HOME: dir } })
      return true
    } catch (error) {
      console.log(`vagrant cannot run here, so the real client's part is skipped: ${(error as Error).message}`)
      return false
    }
  }

  it("installs a private owner's box with VAGRANT_CLOUD_TOKEN (Bearer), then with the token in the query", async () => {
    if (!(await available())) return
    const box = await makeBox({ info: { description: "for vagrant" } })
    expect((await put("carol/vagrant/devbox/2.1.0/virtualbox.box", box.bytes, carolToken)).status).toBe(201)
    const older = await makeBox()
    expect((await put("carol/vagrant/devbox/2.0.0/virtualbox.box", older.bytes, carolToken)).status).toBe(201)
    const metadataUrl = url("carol/vagrant/devbox")
    // Vagrant adds the token for the host of VAGRANT_SERVER_URL only.
    const bearer = await vagrant(
      { VAGRANT_SERVER_URL: hearth.base, VAGRANT_CLOUD_TOKEN: carolToken },
      "box",
      "add",
      "--provider",
      "virtualbox",
      metadataUrl
    )
    expect(bearer.stdout).toMatch(/Successfully added box 'devbox' \(v2\.1\.0\) for 'virtualbox'/)
    const installed = join(bearer.home, "boxes", "devbox", "2.1.0", "virtualbox")
    expect(readdirSync(installed).sort()).toEqual(["Vagrantfile", "box-disk1.vmdk", "info.json", "metadata.json"])
    expect(readFileSync(join(installed, "box-disk1.vmdk"))).toEqual(
      readFileSync(join(dir, `box-${boxes - 1}`, "box-disk1.vmdk"))
    )

    const query = await vagrant(
      { VAGRANT_SERVER_URL: hearth.base, VAGRANT_CLOUD_TOKEN: carolToken, VAGRANT_SERVER_ACCESS_TOKEN_BY_URL: "1" },
      "box",
      "add",
      "--box-version",
      "2.0.0",
      metadataUrl
    )
    expect(query.stdout).toMatch(/Successfully added box 'devbox' \(v2\.0\.0\) for 'virtualbox'/)
    expect(existsSync(join(query.home, "boxes", "devbox", "2.0.0", "virtualbox", "metadata.json"))).toBe(true)

    // Without a token, Vagrant is refused and says so.
    await expect(vagrant({}, "box", "add", metadataUrl)).rejects.toThrow(/401|could not be found|denied/i)
  }, 120_000)
})

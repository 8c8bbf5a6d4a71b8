// The npm registry (Forgejo's routers/api/packages/npm; issue 21) used by the real npm CLI with a
// `.npmrc` holding the registry and the token: publish (unscoped and scoped, a second version,
// dist-tags), install (the abbreviated document), view, dist-tag add/rm, unpublish, search; the
// cached document follows every change; bad publishes (names, versions, integrity, base64, size)
// are refused in npm's `{"error"}` format and store nothing; a private owner's packages are unseen.
import { execFile } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scanPublish } from "../src/packages/npm/Publish.ts"
import { apiAs, basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const run = promisify(execFile)
let hearth: Hearth
let aliceToken: string
let bobToken: string
let carolToken: string
const dir = mkdtempSync(join(tmpdir(), "hearth-npm-"))
const KiB = 1024

/** npm's own answer (stdout, stderr) when it succeeds, else the error with both (`.stderr`). */
let npmWorks = true
const npm = async (cwd: string, user: string, ...args: Array<string>) => {
  // The test runner's npm settings (npm_config_*) must not leak into the client under test.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.toLowerCase().startsWith("npm_")))
  return run("npm", args, {
    cwd,
    env: {
      ...env,
      HOME: join(dir, `home-${user}`),
      npm_config_userconfig: join(dir, `home-${user}`, ".npmrc"),
      npm_config_cache: join(dir, `home-${user}`, "cache"),
      npm_config_update_notifier: "false",
      npm_config_audit: "false",
      npm_config_fund: "false",
      npm_config_loglevel: "error"
    },
    maxBuffer: 16 * 1024 * 1024
  })
}

const registry = (owner: string) => `${hearth.base}/api/packages/${owner}/npm/`
const url = (path: string) => `${hearth.base}/api/packages/${path}`

/** A home whose `.npmrc` points at `owner`'s registry with `token`. */
const home = (user: string, owner: string, token: string) => {
  const path = join(dir, `home-${user}`)
  mkdirSync(path, { recursive: true })
  const nerf = registry(owner).replace(/^http:/, "")
  writeFileSync(join(path, ".npmrc"), `registry=${registry(owner)}\n${nerf}:_authToken=${token}\n`)
}

/** A package directory with a package.json and an index.js. */
const packageDir = (name: string, version: string, extra: Record<string, unknown> = {}) => {
  const path = join(dir, "src", `${name.replace("/", "__")}-${version}`)
  mkdirSync(path, { recursive: true })
  writeFileSync(
    join(path, "package.json"),
    JSON.stringify({ name, version, description: `${name} for tests`, main: "index.js", license: "MIT", ...extra })
  )
  writeFileSync(join(path, "index.js"), `module.exports = ${JSON.stringify(`${name}@${version}`)}\n`)
  writeFileSync(join(path, "README.md"), `# ${name}\n\nversion ${version}\n`)
  return path
}

const count = (table: string) =>
  hearth.sql((s) => Effect.map(s`SELECT count(*) AS n FROM ${s(table)}`, (rows) => Number(rows[0]!.n)))
const stored = async () => ({ blobs: await count("blobs"), versions: await count("package_versions") })

/** A publish document as libnpmpublish builds it, for `tarball`; `edit` changes it before it is sent. */
const document = (name: string, version: string, tarball: Buffer, edit: (doc: any) => void = () => {}): any => {
  const file = `${name}-${version}.tgz`
  const doc: any = {
    _id: name,
    name,
    description: "crafted",
    "dist-tags": { latest: version },
    versions: {
      [version]: {
        name,
        version,
        _id: `${name}@${version}`,
        dist: {
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          tarball: `${registry("alice")}${name}/-/${file}`
        }
      }
    },
    access: null,
    _attachments: {
      [file]: { content_type: "application/octet-stream", data: tarball.toString("base64"), length: tarball.length }
    }
  }
  edit(doc)
  return doc
}

/** A PUT of a publish document; the path is sent as written (fetch would resolve `%2e%2e`). */
const publishRaw = (path: string, body: unknown, token = aliceToken) =>
  new Promise<Response>((resolve, reject) => {
    const payload = Buffer.from(typeof body === "string" ? body : JSON.stringify(body))
    const req = httpRequest(
      {
        host: "127.0.0.1",
        port: new URL(hearth.base).port,
        path: `/api/packages/${path}`,
        method: "PUT",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          "content-length": String(payload.length)
        }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () =>
          resolve(
            new Response(res.statusCode === 204 ? null : Buffer.concat(chunks), {
              status: res.statusCode!,
              headers: res.headers as Record<string, string>
            })
          )
        )
      }
    )
    req.on("error", reject)
    req.end(payload)
  })

const getDoc = (path: string, accept = "application/json", token?: string) =>
  fetch(url(path), { headers: { accept, ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) } })

beforeAll(async () => {
  hearth = await startHearth({ packages: { LIMIT_SIZE_NPM: "256 KiB" } })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  aliceToken = await createToken(hearth, "alice", ["write:package"])
  bobToken = await createToken(hearth, "bob", ["write:package"])
  carolToken = await createToken(hearth, "carol", ["write:package"])
  home("alice", "alice", aliceToken)
  home("carol", "carol", carolToken)
  try {
    await run("npm", ["--version"])
  } catch (e) {
    npmWorks = false
    console.log(`npm cannot run here (${(e as Error).message}): the parts using the npm CLI are skipped`)
  }
}, 60_000)
afterAll(() => hearth?.close())

describe("the publish document is read as a stream", () => {
  it("gives the tarball's bytes whatever the chunking, and keeps the rest of the document", async () => {
    const tarball = randomBytes(10_000)
    const text = JSON.stringify(document("streamed", "1.0.0", tarball))
    for (const size of [1, 3, 7, 4096]) {
      const chunks = async function* () {
        for (let i = 0; i < text.length; i += size) yield Buffer.from(text.slice(i, i + size))
      }
      const scan = scanPublish(chunks())
      const out: Array<Uint8Array> = []
      for await (const bytes of scan.tarball) out.push(bytes)
      expect(Buffer.concat(out).equals(tarball)).toBe(true)
      const { document: doc, tarballBytes } = scan.result()
      expect(tarballBytes).toBe(10_000)
      expect((doc as any)._attachments["streamed-1.0.0.tgz"].data).toBe("")
      expect((doc as any).versions["1.0.0"].name).toBe("streamed")
    }
  })
})

describe("with the npm CLI", () => {
  it("publishes an unscoped package, then a second version that becomes latest; npm view shows both", async () => {
    if (!npmWorks) return
    await npm(packageDir("hello-hearth", "1.0.0"), "alice", "publish")
    await npm(packageDir("hello-hearth", "1.1.0"), "alice", "publish")
    const { stdout } = await npm(dir, "alice", "view", "hello-hearth", "--json")
    const view = JSON.parse(stdout)
    expect(view.name).toBe("hello-hearth")
    expect(view.versions).toEqual(["1.0.0", "1.1.0"])
    expect(view["dist-tags"]).toEqual({ latest: "1.1.0" })
    expect(view.description).toBe("hello-hearth for tests")
    expect(view.dist.tarball).toBe(`${registry("alice")}hello-hearth/-/hello-hearth-1.1.0.tgz`)
    // The management API sees the versions, as npm packages of alice.
    const listed = await json(await request(hearth, "GET", "/packages/alice?type=npm", basic("alice")))
    expect(listed.map((p: any) => p.version).sort()).toEqual(["1.0.0", "1.1.0"])
  }, 120_000)

  it("installs the latest version from the abbreviated document, tarball integrity checked by npm", async () => {
    if (!npmWorks) return
    const consumer = join(dir, "consumer")
    mkdirSync(consumer, { recursive: true })
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "consumer", version: "0.0.0", private: true }))
    await npm(consumer, "alice", "install", "hello-hearth")
    const installed = JSON.parse(readFileSync(join(consumer, "node_modules/hello-hearth/package.json"), "utf8"))
    expect(installed.version).toBe("1.1.0")
    const res = await getDoc(
      "alice/npm/hello-hearth",
      "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*",
      aliceToken
    )
    expect(res.status).toBe(200)
    expect(res.headers.get("content-type")).toContain("application/vnd.npm.install-v1+json")
    const short = await json(res)
    expect(Object.keys(short).sort()).toEqual(["dist-tags", "modified", "name", "versions"])
    expect(short.versions["1.1.0"].dist.integrity).toMatch(/^sha512-/)
    expect(short.versions["1.1.0"].description).toBeUndefined()
    // npm install -E pins an older version: both tarballs are served.
    await npm(consumer, "alice", "install", "hello-hearth@1.0.0")
    expect(JSON.parse(readFileSync(join(consumer, "node_modules/hello-hearth/package.json"), "utf8")).version).toBe(
      "1.0.0"
    )
  }, 120_000)

  it("publishes and installs a scoped package (@scope%2fname and @scope/name both answer)", async () => {
    if (!npmWorks) return
    await npm(packageDir("@hearth/util", "0.1.0"), "alice", "publish")
    const escaped = await getDoc("alice/npm/@hearth%2futil", "application/json", aliceToken)
    expect(escaped.status).toBe(200)
    const doc = await json(escaped)
    expect(doc.name).toBe("@hearth/util")
    expect(doc.versions["0.1.0"].dist.tarball).toBe(`${registry("alice")}@hearth/util/-/util-0.1.0.tgz`)
    expect((await getDoc("alice/npm/@hearth/util", "application/json", aliceToken)).status).toBe(200)
    const consumer = join(dir, "scoped-consumer")
    mkdirSync(consumer, { recursive: true })
    writeFileSync(join(consumer, "package.json"), JSON.stringify({ name: "c2", version: "0.0.0", private: true }))
    await npm(consumer, "alice", "install", "@hearth/util")
    expect(readFileSync(join(consumer, "node_modules/@hearth/util/index.js"), "utf8")).toContain("@hearth/util@0.1.0")
  }, 120_000)

  it("publishes with --tag, adds and removes dist-tags; latest stays where it was", async () => {
    if (!npmWorks) return
    await npm(packageDir("hello-hearth", "2.0.0-beta.1"), "alice", "publish", "--tag", "beta")
    const tags = async () => JSON.parse((await npm(dir, "alice", "view", "hello-hearth", "dist-tags", "--json")).stdout)
    expect(await tags()).toEqual({ latest: "1.1.0", beta: "2.0.0-beta.1" })
    await npm(dir, "alice", "dist-tag", "add", "hello-hearth@1.0.0", "stable")
    expect(await tags()).toEqual({ latest: "1.1.0", beta: "2.0.0-beta.1", stable: "1.0.0" })
    // Moving a tag takes it from the version it was on.
    await npm(dir, "alice", "dist-tag", "add", "hello-hearth@1.1.0", "stable")
    expect(await tags()).toEqual({ latest: "1.1.0", beta: "2.0.0-beta.1", stable: "1.1.0" })
    await npm(dir, "alice", "dist-tag", "rm", "hello-hearth", "stable")
    const listed = await json(
      await getDoc("alice/npm/-/package/hello-hearth/dist-tags", "application/json", aliceToken)
    )
    expect(listed).toEqual({ latest: "1.1.0", beta: "2.0.0-beta.1" })
  }, 120_000)

  it("searches the owner's packages (npm search and /-/v1/search)", async () => {
    if (!npmWorks) return
    const { stdout } = await npm(dir, "alice", "search", "hearth", "--json")
    const names = JSON.parse(stdout).map((p: any) => p.name)
    expect(names.sort()).toEqual(["@hearth/util", "hello-hearth"])
    const res = await json(await getDoc("alice/npm/-/v1/search?text=util&size=5", "application/json", aliceToken))
    expect(res.total).toBe(1)
    expect(res.objects[0].package).toMatchObject({ name: "@hearth/util", version: "0.1.0", scope: "hearth" })
  }, 120_000)

  it("unpublishes one version, then the whole package", async () => {
    if (!npmWorks) return
    await npm(packageDir("gone-soon", "1.0.0"), "alice", "publish")
    await npm(packageDir("gone-soon", "1.0.1"), "alice", "publish")
    await npm(dir, "alice", "unpublish", "gone-soon@1.0.1", "--force")
    const doc = await json(await getDoc("alice/npm/gone-soon", "application/json", aliceToken))
    expect(Object.keys(doc.versions)).toEqual(["1.0.0"])
    // latest named the deleted version: the highest remaining release takes its place.
    expect(doc["dist-tags"]).toEqual({ latest: "1.0.0" })
    expect(
      (
        await fetch(url("alice/npm/gone-soon/-/gone-soon-1.0.1.tgz"), {
          headers: { authorization: `Bearer ${aliceToken}` }
        })
      ).status
    ).toBe(404)
    await npm(dir, "alice", "unpublish", "gone-soon", "--force")
    const after = await getDoc("alice/npm/gone-soon", "application/json", aliceToken)
    expect(after.status).toBe(404)
    expect(await json(after)).toEqual({ error: 'package "gone-soon" does not exist' })
  }, 120_000)
})

describe("npm whoami and HEAD", () => {
  it("npm whoami names the token's user; anonymous, it is asked to sign in (401)", async () => {
    if (!npmWorks) return
    const { stdout } = await npm(dir, "alice", "whoami")
    expect(stdout.trim()).toBe("alice")
    const anonymous = await fetch(url("alice/npm/-/whoami"))
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Basic /)
    expect(((await anonymous.json()) as { error: string }).error).toMatch(/sign in/)
    expect((await fetch(url("alice/npm/-/whoami"), { method: "PUT" })).status).toBe(405)
  })

  it("answers HEAD on the document and the tarball with GET's headers and no body", async () => {
    const auth = { authorization: `Bearer ${aliceToken}` }
    const tarball = randomBytes(1000)
    expect((await publishRaw("alice/npm/headed", document("headed", "1.0.0", tarball))).status).toBe(201)
    for (const path of ["alice/npm/headed", "alice/npm/headed/-/headed-1.0.0.tgz"]) {
      const get = await fetch(url(path), { headers: auth })
      const head = await fetch(url(path), { method: "HEAD", headers: auth })
      expect(head.status, path).toBe(200)
      expect(head.headers.get("content-type"), path).toBe(get.headers.get("content-type"))
      expect(head.headers.get("content-length"), path).toBe(String((await get.arrayBuffer()).byteLength))
      expect(await head.text(), path).toBe("")
    }
  })
})

describe("the cached document follows every change", () => {
  it("a version deleted through the management API, and a tag set over HTTP, show at once", async () => {
    const tarball = randomBytes(2000)
    expect((await publishRaw("alice/npm/cached", document("cached", "1.0.0", tarball))).status).toBe(201)
    expect((await publishRaw("alice/npm/cached", document("cached", "1.1.0", randomBytes(100)))).status).toBe(201)
    const first = await getDoc("alice/npm/cached", "application/json", aliceToken)
    const etag = first.headers.get("etag")!
    expect(Object.keys((await json(first)).versions)).toEqual(["1.0.0", "1.1.0"])
    // Unchanged: 304 for npm's revalidation.
    const again = await fetch(url("alice/npm/cached"), {
      headers: { authorization: `Bearer ${aliceToken}`, "if-none-match": etag }
    })
    expect(again.status).toBe(304)
    expect((await request(hearth, "DELETE", "/packages/alice/npm/cached/1.1.0", basic("alice"))).status).toBe(204)
    const after = await json(await getDoc("alice/npm/cached", "application/json", aliceToken))
    expect(Object.keys(after.versions)).toEqual(["1.0.0"])
    expect(after["dist-tags"]).toEqual({ latest: "1.0.0" })
    const put = await fetch(url("alice/npm/-/package/cached/dist-tags/next"), {
      method: "PUT",
      headers: { authorization: `Bearer ${aliceToken}`, "content-type": "application/json" },
      body: JSON.stringify("1.0.0")
    })
    expect(put.status).toBe(200)
    expect(
      (await json(await getDoc("alice/npm/cached", "application/vnd.npm.install-v1+json", aliceToken)))["dist-tags"]
    ).toEqual({
      latest: "1.0.0",
      next: "1.0.0"
    })
  })
})

describe("addresses", () => {
  it("an owner named npm has its registry at /api/packages/npm/npm/", async () => {
    await createUser(hearth, { username: "npm" })
    const token = await createToken(hearth, "npm", ["write:package"])
    expect((await publishRaw("npm/npm/tool", document("tool", "1.0.0", randomBytes(10)), token)).status).toBe(201)
    const doc = await json(await getDoc("npm/npm/tool", "application/json", token))
    expect(doc.versions["1.0.0"].dist.tarball).toBe(`${registry("npm")}tool/-/tool-1.0.0.tgz`)
  })
})

describe("the manifest's repository", () => {
  it("links the package to the owner's repository it names (Forgejo does so); another forge's is ignored", async () => {
    await apiAs(hearth, "POST", "/user/repos", "alice", { name: "lib" })
    const withRepository = (url: string) => (d: any) => {
      d.versions["1.0.0"].repository = { type: "git", url }
    }
    expect(
      (
        await publishRaw(
          "alice/npm/linked",
          document("linked", "1.0.0", randomBytes(10), withRepository(`git+${hearth.base}/alice/lib.git`))
        )
      ).status
    ).toBe(201)
    const linked = await json(await request(hearth, "GET", "/packages/alice/npm/linked/1.0.0", basic("alice")))
    expect(linked.repository?.full_name).toBe("alice/lib")
    expect(
      (
        await publishRaw(
          "alice/npm/elsewhere",
          document("elsewhere", "1.0.0", randomBytes(10), withRepository("git+https://github.com/alice/lib.git"))
        )
      ).status
    ).toBe(201)
    const other = await json(await request(hearth, "GET", "/packages/alice/npm/elsewhere/1.0.0", basic("alice")))
    expect(other.repository).toBeNull()
  })
})

describe("bad publishes are refused in npm's format and store nothing", () => {
  const tarball = randomBytes(1000)
  const refused = async (path: string, body: unknown, status: number, error: RegExp, token = aliceToken) => {
    const before = await stored()
    const res = await publishRaw(path, body, token)
    expect(res.status).toBe(status)
    expect(res.headers.get("content-type")).toContain("application/json")
    expect((await json(res)).error).toMatch(error)
    expect(await stored()).toEqual(before)
  }

  it("a name with .. or a slash, or one that differs from the address", async () => {
    await refused("alice/npm/%2e%2e", document("..", "1.0.0", tarball), 400, /not a valid npm package name/)
    await refused("alice/npm/..%2fevil", document("../evil", "1.0.0", tarball), 400, /not a valid npm package name/)
    await refused("alice/npm/ok", document("../evil", "1.0.0", tarball), 400, /not a valid npm package name/)
    await refused("alice/npm/Upper", document("Upper", "1.0.0", tarball), 400, /not a valid npm package name/)
    await refused("alice/npm/one", document("other", "1.0.0", tarball), 400, /sent to the address of "one"/)
  })

  it("a version that is not semver", async () => {
    await refused("alice/npm/badver", document("badver", "1.0", tarball), 400, /not a semantic version/)
    await refused("alice/npm/badver", document("badver", "v1.0.0", tarball), 400, /not a semantic version/)
  })

  it("a tarball that does not match the declared integrity, shasum or length", async () => {
    const other = createHash("sha512").update("other").digest("base64")
    await refused(
      "alice/npm/tampered",
      document("tampered", "1.0.0", tarball, (d) => {
        d.versions["1.0.0"].dist.integrity = `sha512-${other}`
      }),
      400,
      /does not match the declared dist.integrity/
    )
    await refused(
      "alice/npm/tampered",
      document("tampered", "1.0.0", tarball, (d) => {
        d.versions["1.0.0"].dist.shasum = "0".repeat(40)
      }),
      400,
      /not the declared dist.shasum/
    )
    await refused(
      "alice/npm/tampered",
      document("tampered", "1.0.0", tarball, (d) => {
        d._attachments["tampered-1.0.0.tgz"].length = 5
      }),
      400,
      /declares a length of 5/
    )
    await refused(
      "alice/npm/tampered",
      document("tampered", "1.0.0", tarball, (d) => {
        delete d.versions["1.0.0"].dist
      }),
      400,
      /neither `integrity` nor `shasum`/
    )
  })

  it("data that is not base64, a document that is not JSON, no tarball, a bad dist-tag", async () => {
    await refused(
      "alice/npm/broken",
      document("broken", "1.0.0", tarball, (d) => {
        d._attachments["broken-1.0.0.tgz"].data = "not base64!"
      }),
      400,
      /not base64/
    )
    const text = JSON.stringify(document("broken", "1.0.0", tarball))
    await refused("alice/npm/broken", text.slice(0, text.length - 20), 400, /ends too early|not JSON/)
    await refused("alice/npm/broken", text.replace('"versions"', '"versions" "x"'), 400, /not JSON/)
    await refused(
      "alice/npm/broken",
      document("broken", "1.0.0", tarball, (d) => {
        d._attachments = {}
      }),
      400,
      /exactly one tarball/
    )
    await refused(
      "alice/npm/broken",
      document("broken", "1.0.0", tarball, (d) => {
        d["dist-tags"] = { "1.x": "1.0.0" }
      }),
      400,
      /not a valid dist-tag/
    )
  })

  it("a tarball over LIMIT_SIZE_NPM (403), a version published twice (409)", async () => {
    await refused(
      "alice/npm/huge",
      document("huge", "1.0.0", randomBytes(300 * KiB)),
      403,
      /maximum allowed package type size/
    )
    expect((await publishRaw("alice/npm/twice", document("twice", "1.0.0", tarball))).status).toBe(201)
    await refused("alice/npm/twice", document("twice", "1.0.0", randomBytes(10)), 409, /already exists/)
  })

  it("a publish cut off half-way through its tarball leaves no version, no blob, no temp file", async () => {
    const before = await stored()
    const text = JSON.stringify(document("cutoff", "1.0.0", randomBytes(150 * KiB)))
    const port = Number(new URL(hearth.base).port)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `PUT /api/packages/alice/npm/cutoff HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
            `Authorization: Bearer ${aliceToken}\r\nContent-Length: ${text.length}\r\n\r\n`
        )
        socket.write(text.slice(0, text.length / 2), () => {
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, 100)
        })
      })
      socket.on("error", reject)
    })
    // Bounded wait for the server to notice the closed connection and clean up its temp file.
    const tmp = join(hearth.settings.storage.PATH, "tmp")
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline && readdirSync(tmp).length > 0) await new Promise((r) => setTimeout(r, 50))
    expect(readdirSync(tmp)).toEqual([])
    expect(await stored()).toEqual(before)
    expect((await getDoc("alice/npm/cutoff", "application/json", aliceToken)).status).toBe(404)
  })

  it("a reader may not publish (403), an anonymous caller must sign in (401)", async () => {
    await refused("alice/npm/theirs", document("theirs", "1.0.0", tarball), 403, /may read but not write/, bobToken)
    const before = await stored()
    const res = await fetch(url("alice/npm/theirs"), {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(document("theirs", "1.0.0", tarball))
    })
    expect(res.status).toBe(401)
    expect(await stored()).toEqual(before)
  })
})

describe("a private owner's packages", () => {
  it("are invisible to other users (404) and ask anonymous callers to sign in (401)", async () => {
    if (npmWorks) await npm(packageDir("secret-thing", "1.0.0"), "carol", "publish")
    else
      expect(
        (await publishRaw("carol/npm/secret-thing", document("secret-thing", "1.0.0", randomBytes(10)), carolToken))
          .status
      ).toBe(201)
    expect((await getDoc("carol/npm/secret-thing", "application/json", carolToken)).status).toBe(200)
    for (const path of [
      "carol/npm/secret-thing",
      "carol/npm/secret-thing/-/secret-thing-1.0.0.tgz",
      "carol/npm/-/v1/search?text=secret",
      "carol/npm/-/package/secret-thing/dist-tags"
    ]) {
      const asBob = await getDoc(path, "application/json", bobToken)
      expect(asBob.status).toBe(404)
      expect(await json(asBob)).toEqual({ error: "Not found." })
      expect((await getDoc(path)).status).toBe(401)
    }
  })
})

// The generic registry (Forgejo's routers/api/packages/generic; CONTRACT-PACKAGES §2, §7, §8) used
// with curl: upload, download (Range, 304, headers), delete; names refused; limits (403) and the
// owner's quota (413); an upload aborted half-way leaves nothing; the `package` webhook reaches a
// real receiver.
import { execFile } from "node:child_process"
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import { connect } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

const run = promisify(execFile)
let hearth: Hearth
let aliceToken: string
let readOnlyToken: string
const dir = mkdtempSync(join(tmpdir(), "hearth-generic-"))
const MiB = 1024 * 1024

/** curl with its status code and body (`-w` appends the code on a line of its own). */
const curl = async (...args: Array<string>) => {
  const { stdout } = await run("curl", ["-s", "-w", "\n%{http_code}", ...args], { maxBuffer: 16 * MiB })
  const cut = stdout.lastIndexOf("\n")
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) }
}
const url = (path: string) => `${hearth.base}/api/packages/${path}`

const blobCount = () => hearth.sql((s) => Effect.map(s`SELECT count(*) AS n FROM blobs`, (rows) => Number(rows[0]!.n)))

beforeAll(async () => {
  hearth = await startHearth({
    quota: { ENABLED: "true" },
    packages: { LIMIT_SIZE_GENERIC: "1 MiB", LIMIT_TOTAL_OWNER_SIZE: "2 MiB" },
    webhook: { ALLOWED_HOST_LIST: "loopback" }
  })
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "bob" })
  await createUser(hearth, { username: "carol", visibility: "private" })
  await createUser(hearth, { username: "filler" })
  await createUser(hearth, { username: "tight" })
  aliceToken = await createToken(hearth, "alice", ["write:package"])
  readOnlyToken = await createToken(hearth, "alice", ["read:package"])
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
  writeFileSync(join(dir, "hello.txt"), "hello, packages\n")
}, 60_000)
afterAll(() => hearth?.close())

describe("upload, download, delete with curl", () => {
  it("stores a file (201), refuses it again (409), serves it with Forgejo's headers", async () => {
    const put = await curl(
      "-T",
      join(dir, "hello.txt"),
      "-u",
      `alice:${aliceToken}`,
      url("alice/generic/Tool/1.0.0/hello.txt")
    )
    expect(put.status).toBe(201)
    const again = await curl(
      "-T",
      join(dir, "hello.txt"),
      "-H",
      `Authorization: token ${aliceToken}`,
      url("alice/generic/tool/1.0.0/HELLO.txt")
    )
    expect(again).toEqual({ status: 409, body: "package file already exists\n" })
    // Other bytes under a name that exists: refused once stored, and given back at once.
    const blobs = await blobCount()
    const other = await fetch(url("alice/generic/tool/1.0.0/hello.txt"), {
      method: "PUT",
      headers: { authorization: `token ${aliceToken}` },
      body: "other bytes"
    })
    expect(other.status).toBe(409)
    expect(await blobCount()).toBe(blobs)

    const res = await fetch(url("alice/generic/tool/1.0.0/hello.txt"))
    expect(res.status).toBe(200)
    expect(await res.text()).toBe("hello, packages\n")
    expect(res.headers.get("content-type")).toBe("application/octet-stream")
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="hello.txt"; filename*=UTF-8''hello.txt`)
    expect(res.headers.get("access-control-expose-headers")).toBe("Content-Disposition")
    expect(res.headers.get("cache-control")).toBe("private, max-age=300")
    expect(res.headers.get("x-content-type-options")).toBe("nosniff")
    const lastModified = res.headers.get("last-modified")!
    expect(lastModified).toMatch(/GMT$/)

    const range = await curl("-r", "7-14", url("alice/generic/tool/1.0.0/hello.txt"))
    expect(range).toEqual({ status: 206, body: "packages" })
    const unchanged = await fetch(url("alice/generic/tool/1.0.0/hello.txt"), {
      headers: { "if-modified-since": lastModified }
    })
    expect(unchanged.status).toBe(304)
    // HEAD (a client checking the file) answers the same headers and is no download.
    const head = await fetch(url("alice/generic/tool/1.0.0/hello.txt"), { method: "HEAD" })
    expect(head.status).toBe(200)
    expect(head.headers.get("content-length")).toBe("16")

    // The package keeps the case of its first upload; downloads (GET, not HEAD) are counted.
    const listed = await json(await request(hearth, "GET", "/packages/alice?type=generic", `token ${readOnlyToken}`))
    expect(listed.map((p: any) => [p.name, p.version])).toEqual([["Tool", "1.0.0"]])
    const count = await hearth.sql((s) =>
      Effect.map(s`SELECT download_count FROM package_versions WHERE version = '1.0.0'`, (rows) =>
        Number(rows[0]!.download_count)
      )
    )
    expect(count).toBe(2)
  })

  it("deletes a file, then the version with its last file; the blob goes with its last reference", async () => {
    const before = await blobCount()
    const body = `unique ${Math.random()}`
    for (const name of ["a.bin", "b.bin"]) {
      const put = await fetch(url(`alice/generic/del/2.0/${name}`), {
        method: "PUT",
        headers: { authorization: `token ${aliceToken}` },
        body
      })
      expect(put.status).toBe(201)
    }
    // Deduplicated: two files, one blob.
    expect(await blobCount()).toBe(before + 1)
    const del = await curl("-X", "DELETE", "-u", `alice:${aliceToken}`, url("alice/generic/del/2.0/a.bin"))
    expect(del.status).toBe(204)
    expect((await fetch(url("alice/generic/del/2.0/a.bin"))).status).toBe(404)
    expect((await fetch(url("alice/generic/del/2.0/b.bin"))).status).toBe(200)
    const version = await curl("-X", "DELETE", "-u", `alice:${aliceToken}`, url("alice/generic/del/2.0"))
    expect(version.status).toBe(204)
    expect((await curl("-X", "DELETE", "-u", `alice:${aliceToken}`, url("alice/generic/del/2.0"))).status).toBe(404)
    const refs = await hearth.sql((s) =>
      Effect.map(
        s`SELECT coalesce(sum(refcount), 0) AS n FROM blobs WHERE sha256 NOT IN (SELECT sha256 FROM package_files)
        AND sha256 IN (SELECT sha256 FROM blobs ORDER BY created_at DESC LIMIT 1)`,
        (rows) => Number(rows[0]!.n)
      )
    )
    expect(refs).toBe(0)
  })

  it("refuses names and versions that are paths (400), and stores nothing", async () => {
    const before = await blobCount()
    for (const path of [
      "alice/generic/../1/x",
      "alice/generic/a%2Fb/1/x",
      "alice/generic/ok/%2E%2E/x",
      "alice/generic/ok/1/%2E%2E",
      "alice/generic/ok/a%2Fb/x"
    ]) {
      const res = await fetch(url(path), {
        method: "PUT",
        headers: { authorization: `token ${aliceToken}` },
        body: "x"
      })
      expect([400, 404], path).toContain(res.status)
    }
    const bad = await curl(
      "-X",
      "PUT",
      "--data-binary",
      "x",
      "-u",
      `alice:${aliceToken}`,
      url("alice/generic/ok/%20v1/x")
    )
    expect(bad).toEqual({ status: 400, body: "invalid package version\n" })
    expect(
      (await curl("-X", "PUT", "--data-binary", "x", "-u", `alice:${aliceToken}`, url("alice/generic/ok/1/..%20")))
        .status
    ).toBe(400)
    expect(await blobCount()).toBe(before)
  })
})

describe("who may", () => {
  it("401 with the realm only without or with wrong credentials; 403 for valid ones without permission", async () => {
    const anonymous = await curl("-i", "-T", join(dir, "hello.txt"), url("alice/generic/x/1/f"))
    expect(anonymous.status).toBe(401)
    expect(anonymous.body).toMatch(/www-authenticate: Basic realm="Gitea Package API"/i)
    const wrong = await curl("-T", join(dir, "hello.txt"), "-u", "alice:nope", url("alice/generic/x/1/f"))
    expect(wrong.status).toBe(401)
    // bob reads alice's packages but may not write them; a read-only token may not write.
    const bob = await curl("-i", "-T", join(dir, "hello.txt"), "-u", "bob:password123", url("alice/generic/x/1/f"))
    expect(bob.status).toBe(403)
    expect(bob.body).not.toMatch(/www-authenticate/i)
    expect(
      (await curl("-T", join(dir, "hello.txt"), "-u", `alice:${readOnlyToken}`, url("alice/generic/x/1/f"))).status
    ).toBe(403)
    // A token without a package scope is refused (403), even for reading.
    const repoToken = await createToken(hearth, "alice", ["read:repository"])
    expect(
      (await curl("-H", `Authorization: token ${repoToken}`, url("alice/generic/tool/1.0.0/hello.txt"))).status
    ).toBe(403)
  })

  it("a private user's packages: 401 for anonymous, 404 for others, served to the owner", async () => {
    const token = await createToken(hearth, "carol", ["write:package"])
    expect(
      (await curl("-T", join(dir, "hello.txt"), "-u", `carol:${token}`, url("carol/generic/p/1/hello.txt"))).status
    ).toBe(201)
    expect((await curl(url("carol/generic/p/1/hello.txt"))).status).toBe(401)
    expect((await curl("-u", "bob:password123", url("carol/generic/p/1/hello.txt"))).status).toBe(404)
    expect((await curl("-u", `carol:${token}`, url("carol/generic/p/1/hello.txt"))).status).toBe(200)
    expect((await curl("-u", "root:password123", url("carol/generic/p/1/hello.txt"))).status).toBe(200)
    const publicOnly = await createToken(hearth, "carol", ["read:package", "public-only"])
    expect((await curl("-u", `carol:${publicOnly}`, url("carol/generic/p/1/hello.txt"))).status).toBe(403)
  })
})

describe("limits and quota", () => {
  it("LIMIT_SIZE_GENERIC: 403 over it for users, streamed and stopped; admins are not limited", async () => {
    const before = await blobCount()
    const big = Buffer.alloc(MiB + 1, 7)
    writeFileSync(join(dir, "big.bin"), big)
    const res = await curl("-T", join(dir, "big.bin"), "-u", "filler:password123", url("filler/generic/big/1/big.bin"))
    expect(res).toEqual({ status: 403, body: "maximum allowed package type size exceeded\n" })
    expect(await blobCount()).toBe(before)
    expect(
      (await curl("-T", join(dir, "big.bin"), "-u", "root:password123", url("filler/generic/big/1/big.bin"))).status
    ).toBe(201)
  })

  it("LIMIT_TOTAL_OWNER_SIZE: 403 once the owner's files would pass it", async () => {
    // filler holds MiB+1 (uploaded by the admin) and may hold 2 MiB in all.
    for (const n of [1, 2]) {
      writeFileSync(join(dir, `part${n}.bin`), Buffer.alloc(MiB - 10, n))
      const put = await curl(
        "-T",
        join(dir, `part${n}.bin`),
        "-u",
        "filler:password123",
        url(`filler/generic/parts/1/p${n}`)
      )
      expect(put.status, put.body).toBe(n === 1 ? 201 : 403)
      if (n === 2) expect(put.body).toBe("maximum allowed package storage quota exceeded\n")
    }
  })

  it("the owner's quota (size:assets:packages:all): 413 before the upload is read", async () => {
    const res = await curl("-T", join(dir, "hello.txt"), "-u", "tight:password123", url("tight/generic/q/1/hello.txt"))
    expect(res.status).toBe(413)
    // Reads and deletes are never blocked; the quota list shows the owner's package files.
    const used = await json(await request(hearth, "GET", "/user/quota/packages", basic("filler")))
    expect(used.map((u: any) => [u.name, u.type, u.version, u.size])).toEqual([
      ["big", "generic", "1", MiB + 1],
      ["parts", "generic", "1", MiB - 10]
    ])
    expect(used[0].html_url).toBe(`${hearth.base}/filler/-/packages/generic/big/1`)
  })

  it("an upload aborted half-way leaves no version and no blob", async () => {
    const before = await blobCount()
    const port = Number(new URL(hearth.base).port)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(port, "127.0.0.1", () => {
        socket.write(
          `PUT /api/packages/alice/generic/aborted/1/file.bin HTTP/1.1\r\nHost: 127.0.0.1\r\n` +
            `Authorization: token ${aliceToken}\r\nContent-Length: ${512 * 1024}\r\n\r\n`
        )
        socket.write(Buffer.alloc(200 * 1024, 1), () => {
          setTimeout(() => {
            socket.destroy()
            resolve()
          }, 100)
        })
      })
      socket.on("error", reject)
    })
    // Bounded waits: for the server to reach the body (its temp file appears: it may not have
    // by now on a busy machine, and an empty directory before it does proves nothing), then for it
    // to notice the closed connection and clean up.
    const tmp = join(hearth.settings.storage.PATH, "tmp")
    const wait = async (ms: number, until: () => Promise<boolean>) => {
      const deadline = Date.now() + ms
      while (Date.now() < deadline && !(await until())) await new Promise((r) => setTimeout(r, 20))
    }
    await wait(5_000, async () => readdirSafe(tmp).length > 0)
    await wait(10_000, async () => readdirSafe(tmp).length === 0 && (await blobCount()) === before)
    expect(readdirSafe(tmp)).toEqual([])
    expect(await blobCount()).toBe(before)
    expect(
      (await fetch(url("alice/generic/aborted/1/file.bin"), { headers: { authorization: `token ${aliceToken}` } }))
        .status
    ).toBe(404)
    const versions = await hearth.sql((s) =>
      Effect.map(s`SELECT count(*) AS n FROM packages WHERE lower_name = 'aborted'`, (rows) => Number(rows[0]!.n))
    )
    expect(versions).toBe(0)
  })
})

const readdirSafe = (path: string): Array<string> => {
  try {
    return readdirSync(path)
  } catch {
    return []
  }
}

describe("the package webhook", () => {
  let receiver: Server
  const received: Array<{ event: string | undefined; coarse: string | undefined; body: any }> = []
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let text = ""
      req.on("data", (chunk) => {
        text += chunk
      })
      req.on("end", () => {
        received.push({
          event: req.headers["x-forgejo-event-type"] as string | undefined,
          coarse: req.headers["x-forgejo-event"] as string | undefined,
          body: JSON.parse(text)
        })
        res.end("ok")
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  })
  afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())))

  it("created and deleted reach the owner's hook, with Forgejo's payload", async () => {
    const port = (receiver.address() as { port: number }).port
    const hook = await request(hearth, "POST", "/user/hooks", basic("bob"), {
      type: "forgejo",
      config: { url: `http://127.0.0.1:${port}/hook`, content_type: "json" },
      events: ["package"],
      active: true
    })
    expect(hook.status, await hook.clone().text()).toBe(201)
    const token = await createToken(hearth, "bob", ["write:package"])
    expect(
      (await curl("-T", join(dir, "hello.txt"), "-u", `bob:${token}`, url("bob/generic/hooked/1.2/hello.txt"))).status
    ).toBe(201)
    // A second file of the same version is no new version: no second event.
    expect(
      (await curl("-T", join(dir, "hello.txt"), "-u", `bob:${token}`, url("bob/generic/hooked/1.2/other.txt"))).status
    ).toBe(201)
    expect((await curl("-X", "DELETE", "-u", `bob:${token}`, url("bob/generic/hooked/1.2"))).status).toBe(204)
    const deadline = Date.now() + 15_000
    while (Date.now() < deadline && received.length < 2) await new Promise((r) => setTimeout(r, 50))
    // X-Forgejo-Event names the event too (Forgejo leaves it empty for packages).
    expect(received.map((r) => [r.event, r.coarse, r.body.action])).toEqual([
      ["package", "package", "created"],
      ["package", "package", "deleted"]
    ])
    const payload = received[0]!.body
    expect(payload.repository).toBeNull()
    expect(payload.organization).toBeNull()
    expect(payload.sender.login).toBe("bob")
    expect(payload.package).toMatchObject({ type: "generic", name: "hooked", version: "1.2", repository: null })
    expect(payload.package.owner.login).toBe("bob")
  }, 30_000)
})

// Bad input never causes a 500 (issue 15, item 6): what no request may carry is refused at the
// edge with a message (src/http/Input.ts, Edge.ts) and logged as one line; pages beyond any list
// are clamped; names are bounded; a database's error text never reaches a client. Each case here
// was a 500 (or a leak) before.

import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basicUserNameProblem, jsonBodyProblem, requestTargetProblem } from "../src/http/Input.ts"
import { type Activity, type RemoteServer, startRemote } from "./support/activitypub.ts"
import { basic, createToken, createUser, type Hearth, json, startHearth } from "./support/hearth.ts"
import { captureLogs, hasStackTrace } from "./support/logs.ts"

let hearth: Hearth
let remote: RemoteServer
let token: string
let errorUrl: string
const keyDir = mkdtempSync(join(tmpdir(), "hearth-bad-input-"))

beforeAll(async () => {
  ;[hearth, remote] = await Promise.all([
    startHearth({
      log: { LEVEL: "Info" },
      quota: { ENABLED: "true" },
      federation: { USE_INSECURE_HTTP: "true", ALLOW_LOCALNETWORKS: "true" }
    }),
    startRemote()
  ])
  errorUrl = `${hearth.base}/api/swagger`
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  token = await createToken(hearth, "root")
  const created = await call("POST", "/user/repos", { name: "proj", auto_init: true })
  expect(created.status).toBe(201)
}, 120_000)
afterAll(async () => {
  await Promise.all([hearth?.close(), remote?.close()])
  rmSync(keyDir, { recursive: true, force: true })
})

/** A request with the path sent exactly as written (fetch would resolve `..` and re-encode). */
const raw = (method: string, path: string, headers: Record<string, string> = {}, body?: string | Buffer) =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(hearth.base)
    const req = httpRequest({ host: url.hostname, port: url.port, method, path, headers }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (c: Buffer) => chunks.push(c))
      res.on("end", () => resolve({ status: res.statusCode!, body: Buffer.concat(chunks).toString("utf8") }))
    })
    req.on("error", reject)
    req.end(body)
  })

const call = (method: string, path: string, body?: unknown) =>
  fetch(hearth.api(path), {
    method,
    headers: { authorization: `token ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const rowCount = (table: string) =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const [row] = yield* sql.unsafe<{ n: string }>(`SELECT count(*) AS n FROM ${table}`)
      return Number(row!.n)
    })
  )

describe("the rules, as functions", () => {
  it("refuses request targets that do not decode to text, or hold control characters", () => {
    const refused = [
      "/api/v1/users/a%00b",
      "/api/v1/users/%ff%fe",
      "/api/v1/users/100%",
      "/api/v1/users/a%0Ab",
      "/api/v1/users/a%7F",
      "/api/v1/users/search?q=a%00",
      "/api/v1/users/search?q=%ed%a0%80",
      "/api/v1/users/search?q=%zz",
      "/api/v1/users/search?a%00=1",
      "/alice/proj.git/info/refs?service=git-upload-pack%00"
    ]
    for (const url of refused) expect(requestTargetProblem(url), url).toBeDefined()
    const accepted = [
      "/api/v1/users/alice",
      "/api/v1/repos/alice/proj/contents/dir%2Ffile%20name.md",
      "/api/v1/repos/alice/proj/contents/caf%C3%A9",
      "/api/v1/users/search?q=a+b&page=2",
      "/api/v1/users/search?q=%25&limit=",
      "/.well-known/webfinger?resource=acct%3Aalice%40example.org",
      "/api/v1/users/search?flag"
    ]
    for (const url of accepted) expect(requestTargetProblem(url), url).toBeUndefined()
    expect(requestTargetProblem("/api/v1/users/search?q=a%00")).toBe(
      'the query parameter "q" contains a NUL or control character'
    )
    expect(requestTargetProblem("/api/v1/users/a%00b")).toBe("the URL path contains a NUL or control character")
  })

  it("refuses a Basic user name with a NUL, a control character or bytes that are not UTF-8", () => {
    const header = (name: Buffer | string, password = "secret") =>
      `Basic ${Buffer.concat([Buffer.from(name), Buffer.from(`:${password}`)]).toString("base64")}`
    expect(basicUserNameProblem(header("a\u0000b"))).toMatch(/NUL or control character/)
    expect(basicUserNameProblem(header("a\nb"))).toMatch(/NUL or control character/)
    expect(basicUserNameProblem(header(Buffer.from([0x61, 0xff])))).toMatch(/not valid UTF-8/)
    expect(basicUserNameProblem(header("alice", "pass\u0000word"))).toBeUndefined()
    expect(basicUserNameProblem(header("renée"))).toBeUndefined()
    expect(basicUserNameProblem("token 0123456789abcdef")).toBeUndefined()
    expect(basicUserNameProblem(undefined)).toBeUndefined()
  })

  it("names the JSON field holding a NUL or a lone surrogate, and refuses bytes that are not UTF-8", () => {
    const problem = (text: string | Buffer) => jsonBodyProblem(Buffer.from(text), Buffer.from(text).toString("utf8"))
    expect(problem('{"name":"a\\u0000b"}')).toBe("[name]: must not contain a NUL character")
    expect(problem('{"files":[{"path":"x"},{"path":"\\ud800"}]}')).toBe(
      "[files.1.path]: is not valid Unicode text (a lone surrogate)"
    )
    expect(problem('{"units_map":{"a\\u0000":"read"}}')).toBe(
      "[units_map]: has a key that must not contain a NUL character"
    )
    expect(problem('"\\u0000"')).toBe("request body: must not contain a NUL character")
    expect(problem(Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]))).toBe(
      "request body is not valid UTF-8"
    )
    // Fine: escaped backslashes, a surrogate pair, control characters in free text, and not JSON at all.
    for (const text of ['{"a":"\\\\u0000"}', '{"a":"\\ud83d\\ude00"}', '{"a":"line\\nline"}', "{", ""]) {
      expect(problem(text), text).toBeUndefined()
    }
  })
})

describe("at the edge", () => {
  it("answers a NUL or an undecodable escape in a path, query or Basic user name with 422 and a message, on every kind of route", async () => {
    const nulName = `Basic ${Buffer.from("ali\u0000ce:password123").toString("base64")}`
    const cases: Array<[string, string, Record<string, string>?]> = [
      ["GET", "/api/v1/users/a%00b"],
      ["GET", "/api/v1/users/a%ff"],
      ["GET", "/api/v1/repos/root/proj/commits?sha=ma%00in"],
      ["GET", "/api/v1/users/search?q=a%00"],
      ["GET", "/api/v1/repos/search?q=%ff%fe"],
      ["DELETE", "/api/v1/repos/root/pr%00oj"],
      ["GET", "/api/v1/user", { authorization: nulName }],
      ["GET", "/root/pr%00oj.git/info/refs?service=git-upload-pack"],
      ["GET", "/root/proj.git/info/refs?service=git-upload-pack", { authorization: nulName }],
      ["GET", "/.well-known/webfinger?resource=acct:a%00b@x"],
      ["GET", "/api/v1/activitypub/user/a%00b"],
      ["GET", "/no%00such/route"]
    ]
    for (const [method, path, headers] of cases) {
      const res = await raw(method, path, { authorization: `token ${token}`, ...headers })
      expect(res.status, path).toBe(422)
      const body = JSON.parse(res.body)
      expect(body.url, path).toBe(errorUrl)
      expect(body.message, path).toMatch(/NUL or control character|not valid (percent-encoded )?UTF-8/)
    }
    // The repository is still there.
    expect((await call("GET", "/repos/root/proj")).status).toBe(200)
  })

  it("logs a refused request as one line, without a stack trace", async () => {
    const logs = captureLogs()
    try {
      expect((await raw("GET", "/api/v1/users/a%00b?token=0123456789abcdef0123456789abcdef01234567")).status).toBe(422)
      expect((await raw("GET", "/api/v1/users/search?q=a%00")).status).toBe(422)
    } finally {
      logs.restore()
    }
    const refusals = logs.lines.filter((line) => line.includes("refused a malformed request"))
    expect(refusals).toHaveLength(2)
    expect(refusals[0]).toContain("GET /api/v1/users/a%00b: the URL path contains a NUL or control character")
    // The query is not logged: it may carry a token.
    expect(refusals.join("\n")).not.toContain("0123456789abcdef")
    expect(logs.lines.filter(hasStackTrace)).toEqual([])
  })

  it("answers a JSON body with a NUL, a lone surrogate or bytes that are not UTF-8 with 422 naming the field, and writes nothing", async () => {
    const before = await rowCount("repositories")
    const bodies: Array<[string | Buffer, string]> = [
      ['{"name":"a\\u0000b"}', "[name]: must not contain a NUL character"],
      ['{"name":"ok","description":"\\udfff"}', "[description]: is not valid Unicode text (a lone surrogate)"],
      [
        Buffer.concat([Buffer.from('{"name":"x'), Buffer.from([0xff]), Buffer.from('"}')]),
        "request body is not valid UTF-8"
      ]
    ]
    for (const [body, message] of bodies) {
      const res = await raw(
        "POST",
        "/api/v1/user/repos",
        { authorization: `token ${token}`, "content-type": "application/json" },
        body
      )
      expect(res.status, String(body)).toBe(422)
      expect(JSON.parse(res.body)).toEqual({ message, url: errorUrl })
    }
    expect(await rowCount("repositories")).toBe(before)
    // Authentication still comes first.
    expect(
      (await raw("POST", "/api/v1/user/repos", { "content-type": "application/json" }, '{"name":"a\\u0000"}')).status
    ).toBe(401)
  })

  it("a tag named with a lone surrogate is refused, not created under another name", async () => {
    const res = await raw(
      "POST",
      "/api/v1/repos/root/proj/tags",
      {
        authorization: `token ${token}`,
        "content-type": "application/json"
      },
      '{"tag_name":"\\ud800","target":"main"}'
    )
    expect(res.status).toBe(422)
    expect(await json(await call("GET", "/repos/root/proj/tags"))).toEqual([])
  })
})

describe("pages", () => {
  it("clamps a page beyond what an offset can hold: an empty page, not a 500", async () => {
    for (const path of [
      "/users/search",
      "/repos/search",
      "/orgs",
      "/users/root/tokens",
      "/admin/users",
      "/repos/root/proj/commits"
    ]) {
      const res = await call("GET", `${path}?page=99999999999999999999&limit=99999999999999999999`)
      expect(res.status, path).toBe(200)
      const body = await json(res)
      expect(Array.isArray(body) ? body : body.data, path).toEqual([])
    }
  })

  it("reads page and limit as Forgejo's FormInt does: anything but an integer is 0", async () => {
    await createToken(hearth, "alice")
    await createToken(hearth, "alice")
    const names = async (query: string) =>
      (
        await json(
          await fetch(hearth.api(`/users/alice/tokens?${query}`), { headers: { authorization: basic("alice") } })
        )
      ).map((t: { name: string }) => t.name)
    const all = await names("")
    expect(all).toHaveLength(2)
    expect(await names("limit=1&page=2")).toEqual([all[1]])
    // "2abc" is not an integer: page 1 (Go's strconv.Atoi refuses it; parseInt would have read 2).
    expect(await names("limit=1&page=2abc")).toEqual([all[0]])
    expect(await names("limit=1&page=1e400")).toEqual([all[0]])
  })
})

describe("paths and names", () => {
  it("answers a commits path outside the repository with 422", async () => {
    for (const path of ["../../x", "..%2f..", "a/../../b"]) {
      const res = await raw("GET", `/api/v1/repos/root/proj/commits?path=${path}`, { authorization: `token ${token}` })
      expect(res.status, path).toBe(422)
      expect(JSON.parse(res.body).message).toMatch(/^\[path\]: .* is not a path inside the repository$/)
    }
    expect((await call("GET", "/repos/root/proj/commits?path=README.md")).status).toBe(200)
  })

  it("bounds names with 422 and Forgejo's MaxSize message, before they reach an index", async () => {
    const long = (n: number) =>
      Array.from({ length: n }, (_, i) => "abcdefghijklmnopqrstuvwxyz0123456789"[(i * 7919) % 36]).join("")
    let keys = 0
    const key = () => {
      const file = join(keyDir, `k${++keys}`)
      execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", file])
      return readFileSync(`${file}.pub`, "utf8").trim()
    }
    const cases: Array<[string, string, unknown, string]> = [
      ["POST", "/admin/quota/groups", { name: long(1024 * 1024) }, "[Name]: MaxSize (255)"],
      ["POST", "/admin/quota/rules", { name: long(256), limit: 1, subjects: ["size:all"] }, "[Name]: MaxSize (255)"],
      [
        "POST",
        "/admin/quota/groups",
        { name: "g", rules: [{ name: long(300), limit: 1, subjects: ["size:all"] }] },
        "[Name]: MaxSize (255)"
      ],
      ["POST", "/user/keys", { title: long(256), key: key() }, "[Title]: MaxSize (255)"],
      ["POST", "/repos/root/proj/keys", { title: long(4000), key: key() }, "[Title]: MaxSize (255)"],
      ["POST", "/repos/root/proj/tags", { tag_name: long(256), target: "main" }, "[TagName]: MaxSize (255)"],
      ["POST", "/repos/root/proj/branches", { new_branch_name: long(101) }, "[BranchName]: MaxSize (100)"],
      [
        "POST",
        "/repos/root/proj/branches",
        { new_branch_name: "x", old_ref_name: long(101) },
        "[OldRefName]: MaxSize (100)"
      ],
      [
        "POST",
        "/repos/migrate",
        { clone_addr: "https://example.org/x.git", repo_name: long(101) },
        "[RepoName]: MaxSize (100)"
      ],
      ["POST", "/repos/root/proj/forks", { name: long(101) }, "[Name]: MaxSize (100)"],
      ["POST", "/orgs", { username: long(41) }, "[UserName]: MaxSize (40)"]
    ]
    const before = await Promise.all(["quota_groups", "quota_rules", "public_keys", "deploy_keys"].map(rowCount))
    for (const [method, path, body, message] of cases) {
      const res = await call(method, path, body)
      expect(res.status, `${path} ${message}`).toBe(422)
      expect(await json(res), path).toEqual({ message, url: errorUrl })
    }
    expect(await Promise.all(["quota_groups", "quota_rules", "public_keys", "deploy_keys"].map(rowCount))).toEqual(
      before
    )
    expect(await json(await call("GET", "/repos/root/proj/tags"))).toEqual([])
    // The bound is shown in the OpenAPI document.
    const document = await json(await fetch(`${hearth.base}/api/swagger.v1.json`))
    const schemas = document.components.schemas
    expect(schemas.CreateQuotaGroupOptions.properties.name.maxLength).toBe(255)
    expect(schemas.CreateRepoOption.properties.name.maxLength).toBe(100)
  })

  it("refuses a tag whose name has a component longer than a file name may be (it was a misleading 409)", async () => {
    const res = await call("POST", "/repos/root/proj/tags", { tag_name: "é".repeat(200), target: "main" })
    expect(res.status).toBe(422)
    expect((await json(res)).message).toContain("at most 255 bytes")
  })
})

describe("no database text in answers", () => {
  it("a failed search answers Forgejo's shape with a generic error, and logs the cause", async () => {
    const rename = (from: string, to: string) =>
      hearth.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
        })
      )
    const logs = captureLogs()
    await rename("repositories", "repositories_away")
    try {
      const res = await fetch(hearth.api("/repos/search?q=x"))
      expect(res.status).toBe(500)
      expect(await json(res)).toEqual({ ok: false, error: "internal server error" })
    } finally {
      await rename("repositories_away", "repositories")
      logs.restore()
    }
    expect(logs.lines.some((line) => line.includes("repository search failed") && line.includes("repositories"))).toBe(
      true
    )
    expect((await fetch(hearth.api("/repos/search?q=x"))).status).toBe(200)
  })
})

describe("federation", () => {
  it("WebFinger answers 404 for a name that does not decode or decodes to a NUL", async () => {
    const host = new URL(hearth.base).host
    for (const name of ["a%2500b", "100%25", "%25ff"]) {
      const res = await raw("GET", `/.well-known/webfinger?resource=acct:${name}@${host}`)
      expect(res.status, name).toBe(404)
      const page = await raw(
        "GET",
        `/.well-known/webfinger?resource=${encodeURIComponent(`${hearth.base}/`)}${name}%2Fproj`
      )
      expect(page.status, name).toBe(404)
    }
  })

  it("refuses a signed activity holding a NUL with 400, and records nothing", async () => {
    const sender = await remote.actor("nul-sender")
    const recorded = () =>
      Promise.all(["federation_followers", "federation_handled", "federation_received"].map(rowCount))
    const before = await recorded()
    const follow: Activity = sender.activity("Follow", `${hearth.base}/api/v1/activitypub/user/alice`)
    const answer = await sender.post(`${hearth.base}/api/v1/activitypub/user/alice/inbox`, {
      ...follow,
      id: `${String(follow.id)}\u0000x`
    })
    expect(answer.status).toBe(400)
    expect(answer.body).toContain("[id]: must not contain a NUL character")
    expect(await recorded()).toEqual(before)
  })
})

describe("found by the fuzz guard", () => {
  it("transfers of one repository at once: one moves it, the others are refused, and nothing is counted twice", async () => {
    expect((await call("POST", "/orgs", { username: "dest" })).status).toBe(201)
    expect((await call("POST", "/user/repos", { name: "moving", auto_init: true })).status).toBe(201)
    const counts = () =>
      hearth.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const rows = yield* sql<{
            n: number
          }>`SELECT num_repos AS n FROM users WHERE lower_name IN ('dest', 'root') ORDER BY lower_name`
          return rows.map((r) => Number(r.n))
        })
      )
    const [dest, root] = await counts()
    const answers = await Promise.all(
      [[], null, [], null].map((team_ids) =>
        call("POST", "/repos/root/moving/transfer", { new_owner: "dest", team_ids })
      )
    )
    const statuses = answers.map((a) => a.status)
    expect(
      statuses.filter((s) => s === 202),
      String(statuses)
    ).toHaveLength(1)
    // The others find it moved meanwhile (409) or already there (422), never a 500.
    for (const s of statuses.filter((s) => s !== 202)) expect([409, 422], String(statuses)).toContain(s)
    // Moved once: the files are where the row says, and each owner's count changed by one.
    expect((await call("GET", "/repos/dest/moving/contents/README.md")).status).toBe(200)
    expect(await counts()).toEqual([dest! + 1, root! - 1])
  })

  it("a transfer whose move fails is 500 without the server's directories in the message, and is undone", async () => {
    expect((await call("POST", "/orgs", { username: "blocked" })).status).toBe(201)
    expect((await call("POST", "/user/repos", { name: "stays", auto_init: true })).status).toBe(201)
    // A file where the organization's directory of repositories would go: the move cannot happen.
    writeFileSync(join(hearth.settings.repository.ROOT, "blocked"), "")
    const res = await call("POST", "/repos/root/stays/transfer", { new_owner: "blocked" })
    expect(res.status).toBe(500)
    expect(await json(res)).toEqual({ message: "the repository could not be moved", url: errorUrl })
    expect((await call("GET", "/repos/root/stays/contents/README.md")).status).toBe(200)
  })
})

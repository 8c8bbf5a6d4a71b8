// A standing guard against bad input (issue 15, items 6 and 9): every operation of the served
// OpenAPI document — so every route added later too — and the routes outside it (git smart HTTP,
// WebFinger, ActivityPub, key exports) get a bounded set of malformed values in each path
// parameter, query parameter and JSON body field, as a site administrator, a plain user and
// anonymously. No answer may be a 5xx, carry a stack trace or a database's error text, and the
// server may log no stack trace meanwhile. Path parameters that are not being fuzzed name real
// things (fixtures built once), so the values reach deep code; operations that destroy or move
// things run last, against throw-away fixtures.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { Agent, request as httpRequest } from "node:http"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createToken, createUser, type Hearth, startHearth } from "./support/hearth.ts"
import { type CapturedLogs, captureLogs, hasStackTrace } from "./support/logs.ts"

// ---------------------------------------------------------------------------------------------
// The malformed values

/** A value placed as it is (already percent-encoded) in a path segment or a query value. */
interface UrlValue {
  readonly label: string
  readonly raw: string
  /** Sent as the parameter repeated (`?p=a&p=b`): an array where one value is expected. */
  readonly repeated?: boolean
}

/** Letters and digits that do not compress (a repeated letter would, and then fit in an index). */
const noise = (length: number) => {
  let seed = 42
  let out = ""
  while (out.length < length) {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
    out += "abcdefghijklmnopqrstuvwxyz0123456789"[(seed >>> 16) % 36]
  }
  return out
}
const KIB64 = noise(64 * 1024)
const KIB4 = noise(4000)

const URL_VALUES: ReadonlyArray<UrlValue> = [
  { label: "NUL", raw: "fz%00x" },
  { label: "double-encoded NUL", raw: "fz%2500x" },
  { label: "huge number", raw: "99999999999999999999" },
  { label: "-1", raw: "-1" },
  { label: "1e400", raw: "1e400" },
  { label: "4000 chars", raw: KIB4 },
  { label: "64 KiB", raw: KIB64 },
  { label: "traversal", raw: "../../x" },
  { label: "encoded traversal", raw: "..%2f.." },
  { label: "invalid UTF-8", raw: "%ff%fe" },
  { label: "bad percent-encoding", raw: "100%" },
  { label: "control character", raw: "a%0Ab" },
  { label: "not a number", raw: "abc" },
  { label: "array", raw: "a", repeated: true }
]

/** A JSON value as raw text (bytes for invalid UTF-8), put where one body field goes. */
interface JsonValue {
  readonly label: string
  readonly raw: string | Buffer
}

const JSON_VALUES: ReadonlyArray<JsonValue> = [
  { label: "NUL", raw: '"fz\\u0000x"' },
  { label: "huge number", raw: "99999999999999999999" },
  { label: "-1", raw: "-1" },
  { label: "1e400", raw: "1e400" },
  { label: "64 KiB", raw: JSON.stringify(KIB64) },
  { label: "traversal", raw: '"../../x"' },
  { label: "invalid UTF-8", raw: Buffer.concat([Buffer.from('"fz'), Buffer.from([0xff, 0xfe]), Buffer.from('"')]) },
  { label: "lone surrogate", raw: '"\\ud800"' },
  { label: "control character", raw: '"a\\nb"' },
  { label: "string", raw: '"x"' },
  { label: "object", raw: "{}" },
  { label: "array", raw: "[]" },
  { label: "null", raw: "null" },
  { label: "boolean", raw: "true" }
]

/** Whole bodies for operations whose body is not JSON (text/plain). */
const TEXT_VALUES: ReadonlyArray<JsonValue> = [
  { label: "NUL", raw: "fz\u0000x" },
  { label: "64 KiB", raw: KIB64 },
  { label: "invalid UTF-8", raw: Buffer.from([0x66, 0xff, 0xfe]) }
]

// What no answer may contain: a stack trace, or the database's own words.
const LEAKS: ReadonlyArray<readonly [string, RegExp]> = [
  ["stack trace", /\n\s+at \S|\s{4}at \S+ \(|\.ts:\d+/],
  [
    "database error text",
    /syntax error|invalid byte sequence|violates|relation "|column "|SqlError|PGlite|postgres|out of range for type|bigint out of range|index row/i
  ]
]

// ---------------------------------------------------------------------------------------------
// Raw HTTP: node:http sends the path exactly as given (fetch would resolve `../` and re-encode).

const agent = new Agent({ keepAlive: true, maxSockets: 4 })
let base: URL

interface Answer {
  readonly status: number
  readonly body: string
  readonly networkError?: string
}

/**
 * One request. A kept-alive socket the server closes (KEEP_ALIVE_TIMEOUT) just as the agent reuses
 * it resets the request before the server read it: that one is sent again, as Node's documentation
 * advises (`request.reusedSocket`); a reset on a fresh connection is the server's and counts.
 */
const send = async (method: string, path: string, headers: Record<string, string>, body?: Buffer): Promise<Answer> => {
  const first = await sendOnce(method, path, headers, body)
  return first.resetOnReusedSocket ? sendOnce(method, path, headers, body) : first
}

const sendOnce = (
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer
): Promise<Answer & { readonly resetOnReusedSocket?: boolean }> =>
  new Promise((resolve) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method,
        path,
        headers: { ...headers, ...(body === undefined ? {} : { "content-length": String(body.length) }) }
      },
      (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (chunk: Buffer) => chunks.push(chunk))
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }))
        res.on("error", (e) => resolve({ status: 0, body: "", networkError: String(e) }))
      }
    )
    req.on("error", (e: NodeJS.ErrnoException) =>
      resolve({
        status: 0,
        body: "",
        networkError: String(e),
        resetOnReusedSocket: req.reusedSocket && e.code === "ECONNRESET"
      })
    )
    req.end(body)
  })

/** Runs `tasks` with `width` at a time. */
const pool = async (tasks: ReadonlyArray<() => Promise<void>>, width: number) => {
  let next = 0
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < tasks.length) await tasks[next++]!()
    })
  )
}

// ---------------------------------------------------------------------------------------------
// The OpenAPI document: operations, their parameters and a minimal valid body.

type Schema = { readonly [key: string]: any }

interface Operation {
  readonly method: string
  /** The document's path, e.g. /api/v1/repos/{owner}/{repo}/contents/{filepath} */
  readonly path: string
  readonly pathParams: ReadonlyArray<string>
  readonly queryParams: ReadonlyArray<string>
  readonly body?: { readonly contentType: string; readonly schema: Schema } | undefined
}

let components: Record<string, Schema> = {}
const resolve = (schema: Schema): Schema => {
  let s = schema
  while (typeof s.$ref === "string") s = components[s.$ref.split("/").pop()!]!
  if (Array.isArray(s.anyOf)) {
    const concrete = s.anyOf.map(resolve).find((branch: Schema) => branch.type !== "null")
    if (concrete !== undefined) return concrete
  }
  return s
}

const operationsOf = (document: Schema): Array<Operation> => {
  components = document.components?.schemas ?? {}
  const out: Array<Operation> = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Schema>)) {
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue
      const parameters: Array<Schema> = op.parameters ?? []
      const content = op.requestBody?.content as Record<string, { schema: Schema }> | undefined
      const [contentType, media] = Object.entries(content ?? {})[0] ?? []
      out.push({
        method: method.toUpperCase(),
        path,
        pathParams: parameters.filter((p) => p.in === "path").map((p) => p.name),
        queryParams: parameters.filter((p) => p.in === "query").map((p) => p.name),
        body: contentType === undefined ? undefined : { contentType, schema: media!.schema }
      })
    }
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// Fixtures

let hearth: Hearth
let logs: CapturedLogs
const keyDir = mkdtempSync(join(tmpdir(), "hearth-fuzz-"))
let unique = 0
const fresh = (prefix = "fz") => `${prefix}${++unique}`

const sshKey = () => {
  const file = join(keyDir, `k${++unique}`)
  execFileSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", `k${unique}@fuzz`, "-f", file])
  return readFileSync(`${file}.pub`, "utf8").trim()
}

interface Fixtures {
  adminToken: string
  userToken: string
  commit: string
  tree: string
  blob: string
  readmeSha: string
  repoId: number
  teamId: number
  scratchTeamId: number
  userKeyId: number
  scratchKeyId: number
  deployKeyId: number
  scratchDeployKeyId: number
  oauthAppId: number
  scratchOauthAppId: number
  scratchTokenName: string
}
const f = {} as Fixtures

type Identity = "admin" | "user" | "anonymous"
const IDENTITIES: ReadonlyArray<Identity> = ["admin", "user", "anonymous"]
const authOf = (identity: Identity): Record<string, string> =>
  identity === "admin"
    ? { authorization: `token ${f.adminToken}` }
    : identity === "user"
      ? { authorization: `token ${f.userToken}` }
      : {}

/** A fixture request that must succeed. */
const must = async (method: string, path: string, body?: unknown, identity: Identity = "admin"): Promise<any> => {
  const answer = await send(
    method,
    `/api/v1${path}`,
    {
      ...authOf(identity),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    body === undefined ? undefined : Buffer.from(JSON.stringify(body))
  )
  if (answer.status >= 300) throw new Error(`fixture ${method} ${path}: ${answer.status} ${answer.body}`)
  return answer.body === "" ? undefined : JSON.parse(answer.body)
}

const buildFixtures = async () => {
  await createUser(hearth, { username: "fzadmin", isAdmin: true })
  await createUser(hearth, { username: "fzuser" })
  await createUser(hearth, { username: "fzvictim" })
  f.adminToken = await createToken(hearth, "fzadmin")
  f.userToken = await createToken(hearth, "fzuser")
  const scratch = await fetch(hearth.api("/users/fzadmin/tokens"), {
    method: "POST",
    headers: { authorization: basic("fzadmin"), "content-type": "application/json" },
    body: JSON.stringify({ name: "fzscratchtoken", scopes: ["read:user"] })
  })
  if (scratch.status !== 201) throw new Error(`fixture token: ${scratch.status}`)
  f.scratchTokenName = "fzscratchtoken"

  await must("POST", "/orgs", { username: "fzorg" })
  await must("POST", "/orgs", { username: "fzorgx" })
  f.teamId = (await must("POST", "/orgs/fzorg/teams", { name: "fzteam", permission: "read", units: ["repo.code"] })).id
  f.scratchTeamId = (
    await must("POST", "/orgs/fzorg/teams", { name: "fzteamx", permission: "read", units: ["repo.code"] })
  ).id

  // Private, with the plain user as a read collaborator: the user's reads reach as deep as the
  // administrator's, its writes stop at the permission check (403), anonymous requests at the
  // visibility check (404).
  const repo = await must("POST", "/user/repos", { name: "fzrepo", auto_init: true, readme: "Default", private: true })
  f.repoId = repo.id
  await must("POST", "/user/repos", { name: "fzscratch", auto_init: true, private: true })
  await must("POST", "/repos/fzadmin/fzscratch/branches", { new_branch_name: "scratch", old_branch_name: "main" })
  await must("POST", "/repos/fzadmin/fzrepo/tags", { tag_name: "v1", target: "main" })
  await must("POST", "/repos/fzadmin/fzscratch/tags", { tag_name: "vscratch", target: "main" })
  f.commit = (await must("GET", "/repos/fzadmin/fzrepo/branches/main")).commit.id
  const tree = await must("GET", `/repos/fzadmin/fzrepo/git/trees/${f.commit}`)
  f.tree = tree.sha
  f.blob = tree.tree[0].sha
  f.readmeSha = (await must("GET", "/repos/fzadmin/fzrepo/contents/README.md")).sha
  await must("PUT", "/repos/fzadmin/fzrepo/collaborators/fzuser", { permission: "read" })
  await must("PUT", "/repos/fzadmin/fzscratch/collaborators/fzuser", { permission: "read" })

  f.userKeyId = (await must("POST", "/user/keys", { title: "fzkey", key: sshKey() })).id
  f.scratchKeyId = (await must("POST", "/user/keys", { title: "fzkeyx", key: sshKey() })).id
  f.deployKeyId = (await must("POST", "/repos/fzadmin/fzrepo/keys", { title: "fzdeploy", key: sshKey() })).id
  f.scratchDeployKeyId = (await must("POST", "/repos/fzadmin/fzscratch/keys", { title: "fzdeployx", key: sshKey() })).id
  const app = { redirect_uris: ["https://example.com/callback"] }
  f.oauthAppId = (await must("POST", "/user/applications/oauth2", { name: "fzapp", ...app })).id
  f.scratchOauthAppId = (await must("POST", "/user/applications/oauth2", { name: "fzappx", ...app })).id

  for (const name of ["fzrule", "fzrulex"]) {
    await must("POST", "/admin/quota/rules", { name, limit: 1_000_000_000_000, subjects: ["size:all"] })
  }
  for (const name of ["fzgroup", "fzgroupx"]) await must("POST", "/admin/quota/groups", { name })
  await must("PUT", "/admin/quota/groups/fzgroup/rules/fzrule")
  await must("PUT", "/admin/quota/groups/fzgroup/users/fzuser")
}

// ---------------------------------------------------------------------------------------------
// Real values for parameters that are not being fuzzed

/** Operations that destroy, move or rename what they name: run last, against throw-away fixtures. */
const isDestructive = (op: Operation) =>
  op.method === "DELETE" ||
  /\/transfer/.test(op.path) ||
  (op.method === "PATCH" &&
    /^\/api\/v1\/(repos\/\{owner\}\/\{repo\}(\/branches\/\{branch\})?|admin\/users\/\{username\})$/.test(op.path))

const realValue = (op: Operation, name: string): string => {
  const scratch = isDestructive(op)
  const p = op.path
  switch (name) {
    case "username":
      return scratch ? "fzvictim" : "fzuser"
    case "org":
      return scratch ? "fzorgx" : "fzorg"
    case "owner":
      return "fzadmin"
    case "repo":
      return scratch ? "fzscratch" : "fzrepo"
    case "collaborator":
      return "fzuser"
    case "target":
      return "fzadmin"
    case "branch":
      return scratch ? "scratch" : "main"
    case "tag":
      return scratch ? "vscratch" : "v1"
    case "ref":
      return p.includes("/git/refs/") ? "heads/main" : "main"
    case "archive":
      return "main.zip"
    case "sha":
      return p.includes("/git/blobs/") ? f.blob : p.includes("/git/trees/") ? f.tree : f.commit
    // A path of several segments (a router wildcard, named as Forgejo names it).
    case "filepath":
    case "pageName":
      return "README.md"
    case "token":
      return f.scratchTokenName
    case "quotagroup":
      return scratch ? "fzgroupx" : "fzgroup"
    case "quotarule":
      return scratch ? "fzrulex" : "fzrule"
    case "name":
      return p.includes("gitignore")
        ? "Go"
        : p.includes("licenses")
          ? "MIT"
          : p.includes("label")
            ? "Default"
            : "fzmirror"
    case "id":
      if (p.startsWith("/api/v1/teams/")) return String(scratch ? f.scratchTeamId : f.teamId)
      if (p.includes("/oauth2/")) return String(scratch ? f.scratchOauthAppId : f.oauthAppId)
      if (p.includes("/user/keys/")) return String(scratch ? f.scratchKeyId : f.userKeyId)
      if (p.includes("/keys/")) return String(scratch ? f.scratchDeployKeyId : f.deployKeyId)
      if (p.includes("/repositories/")) return String(f.repoId)
      return "1"
    default:
      return "x"
  }
}

/** A minimal valid value for a body schema, so that each fuzzed field is the only thing wrong. */
const validValue = (schema: Schema, field: string): unknown => {
  const s = resolve(schema)
  if (Array.isArray(s.enum)) return s.enum[0]
  if (s.type === "integer" || s.type === "number") return 1
  if (s.type === "boolean") return false
  if (s.type === "array") return []
  if (s.type === "object") {
    const out: Record<string, unknown> = {}
    for (const key of s.required ?? []) out[key] = validValue(s.properties?.[key] ?? {}, key)
    return out
  }
  if (/e?mail/i.test(field)) return `${fresh()}@example.com`
  if (/password/i.test(field)) return "password123"
  if (/^(name|username|title|repo_name|new_branch_name|tag_name)$/i.test(field)) return fresh()
  if (/addr|remote_address/i.test(field)) return "http://127.0.0.1:9/none.git"
  if (field === "content") return "Zno="
  return "fz"
}

/** Bodies that reach the deep paths of an operation; the rest are built from the schema. */
const minimalBody = (op: Operation): Record<string, unknown> | undefined => {
  const key = `${op.method} ${op.path}`
  const base = "/api/v1/repos/{owner}/{repo}"
  switch (key) {
    case "POST /api/v1/users/{username}/tokens":
      return { name: fresh(), scopes: ["read:user"] }
    case "POST /api/v1/orgs/{org}/teams":
      return { name: fresh(), permission: "read", units: ["repo.code"] }
    case "POST /api/v1/user/repos":
    case "POST /api/v1/orgs/{org}/repos":
    case "POST /api/v1/org/{org}/repos":
      return { name: fresh(), auto_init: true }
    case `POST ${base}/branches`:
      return { new_branch_name: fresh(), old_branch_name: "main" }
    case `POST ${base}/tags`:
      return { tag_name: fresh(), target: "main" }
    case `POST ${base}/contents/{filepath}`:
      return { content: "Zno=", message: "fuzz" }
    case `PUT ${base}/contents/{filepath}`:
    case `DELETE ${base}/contents/{filepath}`:
      return { content: "Zno=", sha: f.readmeSha, message: "fuzz" }
    case `POST ${base}/forks`:
      return { name: fresh() }
    case `POST ${base}/transfer`:
      return { new_owner: "fzorgx" }
    case `PUT ${base}/collaborators/{collaborator}`:
      return { permission: "read" }
    case "POST /api/v1/repos/migrate":
      return { clone_addr: "http://127.0.0.1:9/none.git", repo_name: fresh() }
    case `POST ${base}/push_mirrors`:
      return { remote_address: "http://127.0.0.1:9/none.git", interval: "8h" }
    case "POST /api/v1/user/emails":
    case "DELETE /api/v1/user/emails":
      return { emails: [`${fresh()}@example.com`] }
    case "POST /api/v1/user/applications/oauth2":
    case "PATCH /api/v1/user/applications/oauth2/{id}":
      return { name: fresh(), redirect_uris: ["https://example.com/callback"] }
    case "POST /api/v1/user/keys":
    case `POST ${base}/keys`:
      return { title: fresh(), key: sshKey() }
    case "POST /api/v1/admin/quota/rules":
      return { name: fresh(), limit: 1_000_000_000_000, subjects: ["size:all"] }
    case "POST /api/v1/admin/quota/groups":
      return { name: fresh() }
    case "POST /api/v1/admin/users/{username}/quota/groups":
      return { groups: ["fzgroup"] }
    case "POST /api/v1/markdown":
    case "POST /api/v1/markup":
      return { text: "fz", mode: "gfm" }
    default:
      return undefined
  }
}

// ---------------------------------------------------------------------------------------------
// One request per (operation, identity, position, value)

interface Case {
  readonly op: string
  readonly identity: Identity
  readonly where: string
  readonly value: string
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: Buffer | undefined
  /**
   * Cases that are equivalent to the administrator's are skipped: those of an identity whose
   * `probe` (the same request with every value real) is answered with one of `skipOn`. Such a
   * refusal is decided from the caller and the things the path names before the handler uses the
   * rest, and the administrator, never refused, runs the same decoding and handler code up to that
   * point and past it. A query or body value is skipped on 401, 403 or 404 (user, anonymous); a
   * path value on 401 only (anonymous: the handler asks for a signed-in caller before it reads
   * anything), except the traversal values, which may reach another route.
   */
  readonly probe?: Probe | undefined
  readonly skipOn?: ReadonlyArray<number> | undefined
}

/** The request of one (operation, identity) with every value real. */
interface Probe {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  readonly body?: Buffer | undefined
}

/** Sends each probe once; the cases left to send, and how many probes were sent. */
const withoutEquivalent = async (cases: ReadonlyArray<Case>, width: number) => {
  const probes = new Set<Probe>()
  for (const c of cases) if (c.probe !== undefined) probes.add(c.probe)
  const status = new Map<Probe, number>()
  await pool(
    [...probes].map((p) => async () => {
      status.set(p, (await send(p.method, p.path, p.headers, p.body)).status)
    }),
    width
  )
  const left = cases.filter((c) => c.probe === undefined || !(c.skipOn ?? []).includes(status.get(c.probe)!))
  return { left, probes: probes.size }
}

const REFUSED = [401, 403, 404]
const UNAUTHENTICATED = [401]

/** Query parameters that can carry credentials (Forgejo's `token`, `access_token`): always sent. */
const CREDENTIAL_PARAMS = new Set(["token", "access_token", "sudo"])

const SENTINEL = '"__fuzz_value__"'

/** The body with `raw` at `position` (a path of keys into the minimal body). */
const bodyWith = (
  minimal: Record<string, unknown>,
  position: ReadonlyArray<string | number>,
  raw: string | Buffer
): Buffer => {
  const copy = structuredClone(minimal) as any
  let at = copy
  position.slice(0, -1).forEach((key, i) => {
    if (typeof at[key] !== "object" || at[key] === null) at[key] = typeof position[i + 1] === "number" ? [] : {}
    at = at[key]
  })
  at[position.at(-1)!] = "__fuzz_value__"
  const [before, after] = JSON.stringify(copy).split(SENTINEL) as [string, string]
  return Buffer.concat([Buffer.from(before), typeof raw === "string" ? Buffer.from(raw) : raw, Buffer.from(after)])
}

/** Every place in a body a value can go: each field, and one level into objects and arrays. */
const bodyPositions = (schema: Schema, minimal: Record<string, unknown>): Array<Array<string | number>> => {
  const s = resolve(schema)
  const out: Array<Array<string | number>> = []
  for (const [key, property] of Object.entries((s.properties ?? {}) as Record<string, Schema>)) {
    out.push([key])
    const inner = resolve(property)
    if (inner.type === "array") {
      const item = resolve(inner.items ?? {})
      const example = validValue(item, key)
      if (item.type === "object") {
        minimal[key] ??= [example]
        for (const sub of Object.keys(item.properties ?? {})) out.push([key, 0, sub])
      } else {
        out.push([key, 0])
      }
    } else if (inner.type === "object" && inner.properties !== undefined) {
      for (const sub of Object.keys(inner.properties)) out.push([key, sub])
    }
  }
  return out
}

/** Path parameters that take several segments (`heads/main`, `docs/a.md`). */
const MULTI_SEGMENT = new Set(["filepath", "pageName", "ref"])

const casesOf = (op: Operation): Array<Case> => {
  const cases: Array<Case> = []
  const opName = `${op.method} ${op.path}`
  const pathWith = (fuzzed: string | undefined, raw: string) =>
    op.path.replace(/\{([^}]+)\}/g, (_match, param: string) => {
      if (param === fuzzed) return raw
      const real = realValue(op, param)
      return MULTI_SEGMENT.has(param) ? real.split("/").map(encodeURIComponent).join("/") : encodeURIComponent(real)
    })
  // Query switches that only add work (per-commit stats, files, signatures) stay off unless they
  // are the parameter being fuzzed: the rest of the request is as cheap as it can be.
  const baseQuery = (fuzzed: string) =>
    op.queryParams.filter((q) => q !== fuzzed && ["stat", "verification", "files"].includes(q)).map((q) => `${q}=false`)
  const withQuery = (fuzzed: string, query: string) => [query, ...baseQuery(fuzzed)].filter((q) => q !== "").join("&")
  const minimal =
    op.body?.contentType === "application/json"
      ? (minimalBody(op) ?? (validValue(op.body.schema, "") as Record<string, unknown>))
      : undefined
  const realBody = minimal === undefined ? undefined : Buffer.from(JSON.stringify(minimal))
  const bodyHeaders = op.body === undefined ? {} : { "content-type": op.body.contentType }

  const realPath = (() => {
    const query = withQuery("", "")
    return `${pathWith(undefined, "")}${query === "" ? "" : `?${query}`}`
  })()
  const probeBody = op.body?.contentType === "text/plain" ? Buffer.from("fz") : realBody

  for (const identity of IDENTITIES) {
    const headers = { ...authOf(identity), ...bodyHeaders }
    const probe: Probe | undefined =
      identity === "admin" ? undefined : { method: op.method, path: realPath, headers, body: probeBody }
    const add = (where: string, value: string, path: string, body: Buffer | undefined) => {
      const skipOn = where.startsWith("path ")
        ? identity === "anonymous" && !value.includes("traversal")
          ? UNAUTHENTICATED
          : undefined
        : CREDENTIAL_PARAMS.has(where.replace(/^query /, ""))
          ? undefined
          : REFUSED
      cases.push({
        op: opName,
        identity,
        where,
        value,
        method: op.method,
        path,
        headers,
        body,
        ...(skipOn === undefined ? {} : { probe, skipOn })
      })
    }
    for (const param of op.pathParams) {
      for (const value of URL_VALUES) {
        if (value.repeated) continue
        const query = withQuery(param, "")
        add(`path ${param}`, value.label, `${pathWith(param, value.raw)}${query === "" ? "" : `?${query}`}`, realBody)
      }
    }
    for (const param of op.queryParams) {
      for (const value of URL_VALUES) {
        const query = value.repeated ? `${param}=${value.raw}&${param}=${value.raw}` : `${param}=${value.raw}`
        add(`query ${param}`, value.label, `${pathWith(undefined, "")}?${withQuery(param, query)}`, realBody)
      }
    }
    if (op.body?.contentType === "text/plain") {
      for (const value of TEXT_VALUES) {
        add(
          "body",
          value.label,
          pathWith(undefined, ""),
          typeof value.raw === "string" ? Buffer.from(value.raw) : value.raw
        )
      }
    } else if (minimal !== undefined && op.body !== undefined) {
      const positions = bodyPositions(op.body.schema, minimal)
      for (const position of positions) {
        for (const value of JSON_VALUES) {
          add(
            `body ${position.join(".")}`,
            value.label,
            pathWith(undefined, ""),
            bodyWith(minimal, position, value.raw)
          )
        }
      }
      for (const value of JSON_VALUES) add("body (whole)", value.label, pathWith(undefined, ""), Buffer.from(value.raw))
    }
  }
  return cases
}

/** Routes outside the OpenAPI document, with `{v}` where the malformed value goes. */
const OTHER_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ["GET", "/.well-known/webfinger?resource=acct:{v}@HOST"],
  ["GET", "/.well-known/webfinger?resource={v}"],
  ["GET", "/.well-known/webfinger?resource=ROOT{v}/fzrepo"],
  ["GET", "/api/v1/activitypub/user/{v}"],
  ["GET", "/api/v1/activitypub/user/{v}/outbox?page={v}"],
  ["GET", "/api/v1/activitypub/user/fzadmin/outbox?page={v}"],
  ["GET", "/api/v1/activitypub/user/fzadmin/activities/{v}"],
  ["POST", "/api/v1/activitypub/user/{v}/inbox"],
  ["GET", "/api/v1/activitypub/user-id/{v}"],
  ["GET", "/api/v1/activitypub/repository-id/{v}"],
  ["GET", "/api/v1/activitypub/repository-id/{v}/outbox"],
  ["GET", "/{v}/fzrepo.git/info/refs?service=git-upload-pack"],
  ["GET", "/fzadmin/{v}/info/refs?service=git-upload-pack"],
  ["GET", "/fzadmin/fzrepo.git/info/refs?service={v}"],
  ["POST", "/fzadmin/{v}/git-upload-pack"],
  ["GET", "/{v}.gpg"],
  ["GET", "/{v}.keys"]
]

const otherCases = (): Array<Case> => {
  const cases: Array<Case> = []
  for (const [method, template] of OTHER_ROUTES) {
    for (const identity of IDENTITIES) {
      for (const value of URL_VALUES) {
        if (value.repeated) continue
        const path = template
          .replaceAll("{v}", value.raw)
          .replace("HOST", base.host)
          .replace("ROOT", encodeURIComponent(`${base.origin}/fzadmin`))
        cases.push({
          op: `${method} ${template}`,
          identity,
          where: "{v}",
          value: value.label,
          method,
          path,
          headers: authOf(identity)
        })
      }
    }
  }
  // A Basic user name (a header used as a name) with a NUL, a control character, invalid UTF-8.
  for (const [label, name] of [
    ["NUL", "fz\u0000x"],
    ["control character", "a\nb"],
    ["invalid UTF-8", Buffer.from([0x66, 0xff])]
  ] as const) {
    const credentials = Buffer.concat([
      typeof name === "string" ? Buffer.from(name) : name,
      Buffer.from(":password123")
    ])
    const authorization = `Basic ${credentials.toString("base64")}`
    for (const path of [
      "/api/v1/user",
      "/api/v1/repos/fzadmin/fzrepo",
      "/fzadmin/fzrepo.git/info/refs?service=git-upload-pack"
    ]) {
      cases.push({
        op: `GET ${path}`,
        identity: "anonymous",
        where: "Basic user name",
        value: label,
        method: "GET",
        path,
        headers: { authorization }
      })
    }
  }
  return cases
}

// ---------------------------------------------------------------------------------------------

beforeAll(async () => {
  hearth = await startHearth({ quota: { ENABLED: "true" } })
  base = new URL(hearth.base)
  await buildFixtures()
}, 120_000)

afterAll(async () => {
  logs?.restore()
  agent.destroy()
  await hearth?.close()
  rmSync(keyDir, { recursive: true, force: true })
})

describe("bad input", () => {
  it("never gets a 5xx, a stack trace or database text, on any route, and logs no stack trace", async () => {
    const document = JSON.parse((await send("GET", "/api/swagger.v1.json", {})).body)
    const operations = operationsOf(document)
    expect(operations.length).toBeGreaterThan(150)
    // Reads first, then writes, then what destroys or moves fixtures.
    const rank = (op: Operation) => (isDestructive(op) ? 2 : op.method === "GET" ? 0 : 1)
    const ordered = [...operations].sort((a, b) => rank(a) - rank(b))
    const phases: Array<Array<Case>> = [[], [], []]
    // FUZZ_ONLY=<regex> narrows the run to matching operations (while fixing what it found).
    const only = process.env.FUZZ_ONLY === undefined ? undefined : new RegExp(process.env.FUZZ_ONLY)
    for (const op of ordered) phases[rank(op)]!.push(...casesOf(op).filter((c) => only?.test(c.op) ?? true))
    phases[0]!.push(...otherCases().filter((c) => only?.test(c.op) ?? true))

    const failures: Array<string> = []
    const check = (c: Case, answer: Answer) => {
      const problems: Array<string> = []
      if (answer.networkError !== undefined) {
        // Node refuses a request line over its header limit and may close before reading it all.
        if (!(c.path.length > 16 * 1024 || (c.body?.length ?? 0) > 16 * 1024)) problems.push(answer.networkError)
      } else if (answer.status >= 500 || answer.status === 0) {
        problems.push(`status ${answer.status}`)
      }
      for (const [what, pattern] of LEAKS) if (pattern.test(answer.body)) problems.push(what)
      if (answer.body.includes(hearth.settings.server.APP_DATA_PATH)) problems.push("the server's directories")
      if (problems.length > 0) {
        const excerpt = answer.body.slice(0, 160).replace(/\s+/g, " ")
        failures.push(
          `${c.op} [${c.identity}] ${c.where} = ${c.value}: ${problems.join(", ")} (${answer.status}) ${excerpt}`
        )
      }
    }

    logs = captureLogs()
    const started = Date.now()
    let total = 0
    const verbose = process.env.FUZZ_VERBOSE !== undefined
    const spent = new Map<string, { ms: number; n: number }>()
    for (const all of phases) {
      const { left: phase, probes } = await withoutEquivalent(all, 4)
      total += probes + phase.length
      if (verbose) process.stderr.write(`phase: ${phase.length} requests (${all.length - phase.length} skipped)\n`)
      await pool(
        phase.map((c) => async () => {
          const t0 = Date.now()
          const answer = await send(c.method, c.path, c.headers, c.body)
          const entry = spent.get(c.op) ?? { ms: 0, n: 0 }
          entry.ms += Date.now() - t0
          if (verbose && Date.now() - t0 > 500)
            process.stderr.write(
              `  slow ${Date.now() - t0} ms: ${c.op} [${c.identity}] ${c.where} = ${c.value} -> ${answer.status}\n`
            )
          entry.n++
          spent.set(c.op, entry)
          check(c, answer)
        }),
        4
      )
      if (verbose) process.stderr.write(`  done at ${((Date.now() - started) / 1000).toFixed(1)} s\n`)
    }
    if (verbose) {
      const top = [...spent].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25)
      for (const [op, { ms, n }] of top) process.stderr.write(`  ${(ms / 1000).toFixed(1)} s ${n} ${op}\n`)
    }
    const seconds = (Date.now() - started) / 1000
    logs.restore()
    // The server is still answering.
    expect((await send("GET", "/api/v1/version", {})).status).toBe(200)

    const traces = logs.lines.filter(hasStackTrace).map((line) => line.slice(0, 400).replace(/\s+/g, " "))
    const report = [
      `${total} requests over ${operations.length} operations in ${seconds.toFixed(1)} s`,
      `${failures.length} bad answers:`,
      ...failures,
      `${traces.length} stack traces logged:`,
      ...traces
    ].join("\n")
    console.log(`fuzz guard: ${total} requests over ${operations.length} operations in ${seconds.toFixed(1)} s`)
    expect(failures.length + traces.length, report).toBe(0)
  }, 600_000)
})

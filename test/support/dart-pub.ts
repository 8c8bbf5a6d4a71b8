// A Pub client written from the hosted Pub repository spec v2 (dart-lang/pub
// doc/repository-spec-v2.md) and from what `dart pub` sends (lib/src/command/lish.dart,
// lib/src/source/hosted.dart, lib/src/http.dart, lib/src/authentication/client.dart), since no Dart
// SDK installs here. Its requests are `dart pub`'s, headers included:
// - every request: `User-Agent: Dart pub <sdk>`; API requests (not the multipart POST, not the
//   archive download): `Accept: application/vnd.pub.v2+json`;
// - `Authorization: Bearer <token>` only on URLs under the hosted URL the token was added for
//   (`dart pub token add <hosted-url>`); the X-Pub-* metadata headers go to pub.dev only;
// - publish: GET versions/new → multipart POST of `fields` + `file` (`package.tar.gz`,
//   application/octet-stream, redirects not followed) → GET the `Location` → `{"success":…}`;
// - get: GET api/packages/<name> → the highest version allowed by the constraint (releases before
//   pre-releases) → GET its `archive_url` following redirects → SHA-256 checked against
//   `archive_sha256` when sent → unpacked into the cache.
// Like `dart pub`, a 401 deletes the stored token and a 403 keeps it.
import { execFile } from "node:child_process"
import { createHash, randomUUID } from "node:crypto"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { gzipSync } from "node:zlib"
import { afterAll } from "vitest"

const run = promisify(execFile)
export const SDK_VERSION = "3.5.4"
const USER_AGENT = `Dart pub ${SDK_VERSION}`
const ACCEPT = "application/vnd.pub.v2+json"

/** One request the client made, as sent (for asserting the exact sequence). */
export interface SentRequest {
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly status: number
}

export type Outcome =
  | { readonly ok: true; readonly message: string }
  | {
      readonly ok: false
      readonly status: number
      /** The `error.message` of Pub's error JSON, or undefined when the body was not Pub's. */
      readonly message: string | undefined
      /** The `message` of `WWW-Authenticate: Bearer realm="pub", message="…"` on a 401/403. */
      readonly challenge: string | undefined
      readonly contentType: string | null
      readonly body: string
    }

/** A ustar archive as pub's createTarGz writes it: directories, then files; mode 644/755; gzip. */
export const tarGz = (files: Record<string, string | Buffer>): Buffer => {
  const blocks: Array<Buffer> = []
  const header = (name: string, size: number, type: "0" | "5") => {
    const block = Buffer.alloc(512)
    block.write(name, 0, 100, "utf8")
    block.write(type === "5" ? "0000755\0" : "0000644\0", 100, "ascii")
    block.write("0000000\0", 108, "ascii")
    block.write("0000000\0", 116, "ascii")
    block.write(`${size.toString(8).padStart(11, "0")}\0`, 124, "ascii")
    block.write(`${"0".padStart(11, "0")}\0`, 136, "ascii")
    block.write("        ", 148, "ascii")
    block.write(type, 156, "ascii")
    block.write("ustar\0", 257, "ascii")
    block.write("00", 263, "ascii")
    block.write("pub", 265, "ascii")
    block.write("pub", 297, "ascii")
    let sum = 0
    for (const b of block) sum += b
    block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii")
    return block
  }
  const dirs = new Set<string>()
  for (const name of Object.keys(files)) {
    const parts = name.split("/")
    for (let i = 1; i < parts.length; i++) dirs.add(`${parts.slice(0, i).join("/")}/`)
  }
  for (const dir of [...dirs].sort()) blocks.push(header(dir, 0, "5"))
  for (const [name, content] of Object.entries(files)) {
    const bytes = typeof content === "string" ? Buffer.from(content) : content
    blocks.push(header(name, bytes.length, "0"), bytes, Buffer.alloc((512 - (bytes.length % 512)) % 512))
  }
  blocks.push(Buffer.alloc(1024))
  return gzipSync(Buffer.concat(blocks))
}

/** A pubspec.yaml for `name` at `version`, published to `hostedUrl`. */
export const pubspec = (name: string, version: string, hostedUrl: string, extra = "") =>
  `name: ${name}\nversion: ${version}\ndescription: ${name}, a package for tests.\npublish_to: ${hostedUrl}\n` +
  `homepage: https://example.com/${name}\nenvironment:\n  sdk: ">=3.0.0 <4.0.0"\n${extra}`

// Version ordering as pub_semver's (releases above their pre-releases), for choosing what to get.
const parse = (v: string) => {
  const m = /^(\d+)\.(\d+)\.(\d+)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/.exec(v)
  if (m === null) throw new Error(`not a version: ${v}`)
  return { core: [Number(m[1]), Number(m[2]), Number(m[3])], pre: m[4]?.split(".") ?? [] }
}
const compare = (a: string, b: string): number => {
  const x = parse(a)
  const y = parse(b)
  for (let i = 0; i < 3; i++) if (x.core[i] !== y.core[i]) return x.core[i]! - y.core[i]!
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const p = x.pre[i]!
    const q = y.pre[i]!
    if (p === q) continue
    const pn = /^\d+$/.test(p)
    const qn = /^\d+$/.test(q)
    if (pn && qn) return Number(p) - Number(q)
    if (pn !== qn) return pn ? -1 : 1
    return p < q ? -1 : 1
  }
  return x.pre.length - y.pre.length
}
/** `any`, an exact version, or `^x.y.z` (as pub reads a caret). */
const allows = (constraint: string, version: string): boolean => {
  if (constraint === "any") return true
  if (!constraint.startsWith("^")) return compare(constraint, version) === 0
  const low = constraint.slice(1)
  const [major, minor] = parse(low).core as [number, number, number]
  const high = major > 0 ? `${major + 1}.0.0` : `0.${minor + 1}.0`
  return compare(version, low) >= 0 && compare(version, high) < 0
}

let root: string | undefined
/** One directory for every client's cache in the test file, removed after its tests. */
const cacheRoot = () => {
  root ??= mkdtempSync(join(tmpdir(), "hearth-pub-cache-"))
  return root
}
afterAll(() => {
  if (root !== undefined) rmSync(root, { recursive: true, force: true })
  root = undefined
})

export class DartPub {
  /** Every request made, in order. */
  readonly sent: Array<SentRequest> = []
  /** The token `dart pub token add <hostedUrl>` stored (deleted by a 401, as dart pub does). */
  token: string | undefined
  #cache: string | undefined
  /** pub's cache of this client (made when first used, removed with the test's process). */
  get cache(): string {
    this.#cache ??= mkdtempSync(join(cacheRoot(), "pub-"))
    return this.#cache
  }

  /** The hosted URL, as the user configures it (`…/api/packages/{owner}/pub`). */
  readonly hostedUrl: string

  constructor(hostedUrl: string, token?: string) {
    this.hostedUrl = hostedUrl
    this.token = token
  }

  private async send(
    method: string,
    url: string,
    options: { api: boolean; body?: Buffer; contentType?: string; redirect?: "follow" | "manual" }
  ) {
    const headers: Record<string, string> = { "user-agent": USER_AGENT }
    if (options.api) headers.accept = ACCEPT
    // credential.canAuthenticate: the URL is under the hosted URL the token was added for.
    const under = (u: string) => (u.endsWith("/") ? u : `${u}/`).toLowerCase()
    if (this.token !== undefined && under(url).startsWith(under(this.hostedUrl)))
      headers.authorization = `Bearer ${this.token}`
    if (options.contentType !== undefined) headers["content-type"] = options.contentType
    const res = await fetch(url, {
      method,
      headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
      redirect: options.redirect ?? "follow"
    })
    this.sent.push({ method, url, headers, status: res.status })
    return res
  }

  /** What the client makes of a refusal; a 401 deletes the token, as withAuthenticatedClient does. */
  private async refusal(res: Response): Promise<Outcome> {
    const body = await res.text()
    let message: string | undefined
    try {
      const parsed = JSON.parse(body) as { error?: { message?: unknown } }
      if (typeof parsed.error?.message === "string") message = parsed.error.message
    } catch {
      message = undefined
    }
    const header = res.headers.get("www-authenticate") ?? ""
    const challenge = /realm="pub"/.test(header) ? /message="([^"]*)"/.exec(header)?.[1] : undefined
    if (res.status === 401) this.token = undefined
    return { ok: false, status: res.status, message, challenge, contentType: res.headers.get("content-type"), body }
  }

  /** `dart pub publish --force` of an archive (the package's files, `pubspec.yaml` among them). */
  async publish(archive: Buffer): Promise<Outcome> {
    const base = this.hostedUrl.replace(/\/$/, "")
    const start = await this.send("GET", `${base}/api/packages/versions/new`, { api: true })
    if (start.status !== 200) return this.refusal(start)
    const parameters = (await start.json()) as { url?: unknown; fields?: unknown }
    if (typeof parameters.url !== "string" || typeof parameters.fields !== "object" || parameters.fields === null)
      throw new Error(`invalid server response: ${JSON.stringify(parameters)}`)
    // http.MultipartRequest: the fields, then the file.
    const boundary = `dart-http-boundary-${randomUUID().replace(/-/g, "").slice(0, 24)}`
    const parts: Array<Buffer> = []
    for (const [key, value] of Object.entries(parameters.fields as Record<string, string>))
      parts.push(
        Buffer.from(
          `--${boundary}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-disposition: form-data; name="${key}"\r\n\r\n${value}\r\n`
        )
      )
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-type: application/octet-stream\r\n` +
          `content-disposition: form-data; name="file"; filename="package.tar.gz"\r\n\r\n`
      ),
      archive,
      Buffer.from(`\r\n--${boundary}--\r\n`)
    )
    const uploaded = await this.send("POST", parameters.url, {
      api: false,
      body: Buffer.concat(parts),
      contentType: `multipart/form-data; boundary=${boundary}`,
      redirect: "manual"
    })
    const location = uploaded.headers.get("location")
    if (uploaded.status < 200 || uploaded.status >= 400 || location === null) return this.refusal(uploaded)
    await uploaded.arrayBuffer()
    const finalized = await this.send("GET", location, { api: true })
    if (finalized.status !== 200) return this.refusal(finalized)
    const success = (await finalized.json()) as { success?: { message?: unknown } }
    if (typeof success.success?.message !== "string") throw new Error("invalid server response to finalize")
    return { ok: true, message: success.success.message }
  }

  /**
   * `dart pub get` of one hosted dependency `name: {hosted: hostedUrl, version: constraint}`: the
   * version chosen, where it was unpacked, and the archive's bytes.
   */
  async get(
    name: string,
    constraint = "any"
  ): Promise<
    | { readonly ok: true; readonly version: string; readonly dir: string; readonly archive: Buffer }
    | (Outcome & { readonly ok: false })
  > {
    const base = this.hostedUrl.replace(/\/$/, "")
    const listing = await this.send("GET", `${base}/api/packages/${encodeURIComponent(name)}`, { api: true })
    if (listing.status !== 200) return (await this.refusal(listing)) as Outcome & { ok: false }
    const doc = (await listing.json()) as {
      versions?: Array<{ version: string; archive_url: string; archive_sha256?: string; pubspec: any }>
    }
    if (!Array.isArray(doc.versions)) throw new Error("invalid server response: no versions")
    for (const v of doc.versions) {
      if (typeof v.archive_url !== "string" || typeof v.pubspec !== "object")
        throw new Error(`invalid version entry ${JSON.stringify(v)}`)
      // Pubspec.fromMap(expectedName): the listing must be of this package.
      if (v.pubspec.name !== name || v.pubspec.version !== v.version)
        throw new Error(`version entry does not describe ${name} ${v.version}`)
    }
    const candidates = doc.versions.filter((v) => allows(constraint, v.version))
    const releases = candidates.filter((v) => parse(v.version).pre.length === 0)
    const pool = releases.length > 0 ? releases : candidates
    const chosen = pool.sort((a, b) => compare(a.version, b.version)).at(-1)
    if (chosen === undefined) throw new Error(`no version of ${name} matches ${constraint}`)
    const download = await this.send("GET", chosen.archive_url, { api: false })
    if (download.status !== 200) return (await this.refusal(download)) as Outcome & { ok: false }
    const archive = Buffer.from(await download.arrayBuffer())
    if (chosen.archive_sha256 !== undefined) {
      const actual = createHash("sha256").update(archive).digest("hex")
      if (actual !== chosen.archive_sha256.toLowerCase())
        throw new Error(`Downloaded archive for ${name}-${chosen.version} had wrong content-hash.`)
    }
    const host = new URL(this.hostedUrl)
    const dir = join(
      this.cache,
      "hosted",
      `localhost%58${host.port}${host.pathname.replace(/\/$/, "").replace(/\//g, "%47")}`,
      `${name}-${chosen.version}`
    )
    mkdirSync(dir, { recursive: true })
    writeFileSync(join(this.cache, "archive.tar.gz"), archive)
    await run("tar", ["-xzf", join(this.cache, "archive.tar.gz"), "-C", dir])
    return { ok: true, version: chosen.version, dir, archive }
  }
}

// The npm registry (Forgejo's routers/api/packages/npm), at `/api/packages/{owner}/npm/`, for the
// npm CLI with `registry=` (or `@scope:registry=`) pointing there and `:_authToken=` a token:
//   PUT    /{name}                          publish (the JSON document with the base64 tarball)
//   GET    /{name}                          the package document, full or abbreviated (Accept)
//   GET    /{name}/-/{file}                 the tarball
//   DELETE /{name}/-rev/{rev}               unpublish the whole package
//   PUT    /{name}/-rev/{rev}               unpublish's rewrite of the document: accepted, ignored
//   DELETE /{name}/-/{file}/-rev/{rev}      unpublish one version (what follows that rewrite)
//   GET    /-/package/{name}/dist-tags      PUT/DELETE …/dist-tags/{tag}
//   GET    /-/v1/search?text=&size=&from=
// A publish whose manifest names a repository of the owner here links the package to it (Forgejo).
// A scoped name comes as `@scope%2fname` (npm's escaping) or `@scope/name`. Errors are npm's
// `{"error": "…"}`. Where Forgejo answers 400 to a version published twice, Hearth answers 409.
//
// The package document is built once and cached: `npm install` asks for it for every package it
// resolves, and a package with many versions is costly to rebuild. A cached document is checked
// against its stamp (Repo.ts: counts and highest ids of the versions and tags), one small query,
// so a publish, an unpublish or a dist-tag change — through this registry, the management API or
// a cleanup rule — is seen at once; this registry also drops the entry when it changes a package.
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { SqlClient } from "effect/sql/SqlClient"
import { Settings } from "../../config/Settings.ts"
import * as Errors from "../../http/Errors.ts"
import { requestBody } from "../../storage/Http.ts"
import { BlobStorage } from "../../storage/Service.ts"
import type { UserRow } from "../../users/Repo.ts"
import { makeRegistryRoute, REALM, type RegistryWork, servePackageFile } from "../Registry.ts"
import { PackagesService } from "../Service.ts"
import { ABBREVIATED_TYPE, buildPackument, type Packument, searchObject, type VersionEntry } from "./Metadata.ts"
import {
  integrityMismatch,
  invalidName,
  invalidTag,
  type PublishRefused,
  readPublish,
  scanPublish,
  tarballName
} from "./Publish.ts"
import { makeNpmRepo, TYPE } from "./Repo.ts"

/** npm's error body, `{"error": "…"}` (the realm on a 401, as the other registries). */
export const npmError = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.jsonUnsafe(
    { error: message },
    { status, headers: status === 401 ? { "www-authenticate": REALM } : {} }
  )

/** How many bytes of documents the cache keeps (least recently used go first). */
const CACHE_BYTES = 64 * 1024 * 1024

interface Cached {
  /** The package's name as first published. */
  readonly name: string
  readonly stamp: string
  readonly ownerName: string
  readonly packument: Packument
  readonly etag: string
  readonly bytes: number
}

/** A least-recently-used map of package documents, bounded in bytes. */
class DocumentCache {
  private readonly entries = new Map<string, Cached>()
  private bytes = 0
  get(key: string): Cached | undefined {
    const found = this.entries.get(key)
    if (found !== undefined) {
      this.entries.delete(key)
      this.entries.set(key, found)
    }
    return found
  }
  set(key: string, value: Cached) {
    this.drop(key)
    if (value.bytes > CACHE_BYTES) return
    this.entries.set(key, value)
    this.bytes += value.bytes
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= CACHE_BYTES) break
      this.entries.delete(oldest)
      this.bytes -= entry.bytes
    }
  }
  drop(key: string) {
    const found = this.entries.get(key)
    if (found === undefined) return
    this.entries.delete(key)
    this.bytes -= found.bytes
  }
}

/** What a path under `/api/packages/{owner}/npm/` asks for. */
type Target =
  | { readonly kind: "search" }
  | { readonly kind: "whoami" }
  | { readonly kind: "tags"; readonly name: string; readonly tag: string | undefined }
  | { readonly kind: "package"; readonly name: string }
  | { readonly kind: "revision"; readonly name: string }
  | { readonly kind: "tarball"; readonly name: string; readonly file: string; readonly revision: boolean }
  | { readonly kind: "invalid"; readonly message: string }

/** Reads the path after `/api/packages/{owner}/npm/` (raw, as sent: a `%2f` inside a name is not a separator). */
export const parseTarget = (url: string): Target | undefined => {
  // "", "api", "packages", owner, "npm", then the registry's own path (an owner may be named npm).
  const raw = url.split("?")[0]!.split("/").slice(5)
  let segments: Array<string>
  try {
    segments = raw.map(decodeURIComponent)
  } catch {
    return { kind: "invalid", message: "the path is not valid percent-encoding" }
  }
  /** A name at `i` (one segment, or `@scope` and `name`): the name and the next index. */
  const nameAt = (i: number): { readonly name: string; readonly next: number } | undefined => {
    const first = segments[i]
    if (first === undefined || first === "") return undefined
    if (first.startsWith("@") && !first.includes("/")) {
      const second = segments[i + 1]
      return second === undefined ? undefined : { name: `${first}/${second}`, next: i + 2 }
    }
    return { name: first, next: i + 1 }
  }
  const checked = <T extends Target>(name: string, target: T): T | Target => {
    const invalid = invalidName(name)
    return invalid === undefined ? target : { kind: "invalid", message: invalid }
  }
  if (segments[0] === "-") {
    if (segments.length === 3 && segments[1] === "v1" && segments[2] === "search") return { kind: "search" }
    if (segments.length === 2 && segments[1] === "whoami") return { kind: "whoami" }
    if (segments[1] !== "package") return undefined
    const named = nameAt(2)
    if (named === undefined || segments[named.next] !== "dist-tags") return undefined
    const rest = segments.slice(named.next + 1)
    if (rest.length > 1) return undefined
    return checked(named.name, { kind: "tags", name: named.name, tag: rest[0] })
  }
  const named = nameAt(0)
  if (named === undefined) return undefined
  const rest = segments.slice(named.next)
  const name = named.name
  if (rest.length === 0) return checked(name, { kind: "package", name })
  if (rest.length === 2 && rest[0] === "-rev") return checked(name, { kind: "revision", name })
  if (rest[0] === "-" && rest[1] !== undefined && rest[1] !== "") {
    if (rest.length === 2) return checked(name, { kind: "tarball", name, file: rest[1], revision: false })
    if (rest.length === 4 && rest[2] === "-rev")
      return checked(name, { kind: "tarball", name, file: rest[1], revision: true })
  }
  return undefined
}

/** Whether the client asks for the abbreviated document (npm install's Accept). */
const wantsAbbreviated = (accept: string | undefined) => accept?.includes(ABBREVIATED_TYPE) === true

/**
 * The name of the owner's repository on this forge that a manifest's `repository` names
 * (`git+https://forge/owner/repo.git`, `https://forge/owner/repo`, or `{ url }`), if it names one.
 */
export const repositoryOf = (repository: unknown, root: string, ownerName: string): string | undefined => {
  const raw =
    typeof repository === "string"
      ? repository
      : typeof repository === "object" && repository !== null
        ? (repository as { url?: unknown }).url
        : undefined
  if (typeof raw !== "string") return undefined
  const url = raw.replace(/^git\+/, "")
  if (!url.toLowerCase().startsWith(root.toLowerCase())) return undefined
  const m = /^([^/]+)\/([^/]+?)(?:\.git)?\/?$/.exec(url.slice(root.length))
  return m !== null && m[1]!.toLowerCase() === ownerName.toLowerCase() ? m[2] : undefined
}

const SMALL_BODY = 4096

/** A short request body as text (a dist-tag's version), or undefined past SMALL_BODY bytes. */
const smallBody = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.promise(async () => {
    const chunks: Array<Buffer> = []
    let size = 0
    try {
      for await (const chunk of requestBody(request)) {
        size += (chunk as Buffer).length
        if (size > SMALL_BODY) return undefined
        chunks.push(chunk as Buffer)
      }
    } catch {
      return undefined // the client went away
    }
    return Buffer.concat(chunks).toString("utf8")
  })

const refusal = (e: PublishRefused) =>
  e.status === 413 ? Errors.payloadTooLarge(e.message) : Errors.badRequest(e.message)

export const NpmRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.packages.ENABLED) return Layer.empty
    const packages = yield* PackagesService
    const storage = yield* BlobStorage
    const repo = makeNpmRepo(yield* SqlClient)
    const registryRoute = yield* makeRegistryRoute(npmError)
    const cache = new DocumentCache()
    const root = settings.server.ROOT_URL
    const registryOf = (owner: UserRow) => `${root}api/packages/${encodeURIComponent(owner.name)}/npm`
    const keyOf = (owner: UserRow, name: string) => `${owner.id}/${name.toLowerCase()}`

    /** The package's documents, from the cache while its stamp holds; none for a package without versions. */
    const documents = (owner: UserRow, name: string) =>
      Effect.gen(function* () {
        const found = yield* repo.stamp(owner.id, name.toLowerCase())
        if (Option.isNone(found) || found.value.versions === 0) return Option.none<Cached>()
        const { packageId, stamp } = found.value
        const key = keyOf(owner, name)
        const hit = cache.get(key)
        if (hit !== undefined && hit.stamp === stamp && hit.ownerName === owner.name) return Option.some(hit)
        const entries: Array<VersionEntry> = yield* Effect.forEach(yield* repo.entries(packageId), (entry) =>
          entry.sha1 !== null && entry.sha512 !== null
            ? Effect.succeed({ ...entry, sha1: entry.sha1, sha512: entry.sha512 })
            : Effect.map(Effect.orDie(storage.digests(entry.sha256)), (d) => ({
                ...entry,
                sha1: d.sha1,
                sha512: d.sha512
              }))
        )
        if (entries.length === 0) return Option.none<Cached>()
        const rev = `${entries.length}-${Buffer.from(stamp).toString("hex").slice(0, 32)}`
        const packument = buildPackument(registryOf(owner), owner.name, found.value.name, rev, entries)
        const cached: Cached = {
          name: found.value.name,
          stamp,
          ownerName: owner.name,
          packument,
          etag: `"${packageId}-${stamp}"`,
          bytes: packument.full.byteLength + packument.abbreviated.byteLength
        }
        cache.set(key, cached)
        return Option.some(cached)
      })

    const missing = (name: string) => npmError(404, `package "${name}" does not exist`)

    const metadata: RegistryWork = (request, { owner }) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string }
        const found = yield* documents(owner, target.name)
        if (Option.isNone(found)) return missing(target.name)
        const abbreviated = wantsAbbreviated(request.headers["accept"])
        const etag = `${found.value.etag.slice(0, -1)}${abbreviated ? "-a" : ""}"`
        const headers = { etag, vary: "Accept", "cache-control": "private, max-age=0, must-revalidate" }
        if (request.headers["if-none-match"]?.split(",").some((t) => t.trim() === etag))
          return HttpServerResponse.empty({ status: 304, headers })
        const body = abbreviated ? found.value.packument.abbreviated : found.value.packument.full
        const contentType = abbreviated ? ABBREVIATED_TYPE : "application/json"
        if (request.method === "HEAD")
          return HttpServerResponse.empty({
            status: 200,
            headers: { ...headers, "content-type": contentType, "content-length": String(body.byteLength) }
          })
        return HttpServerResponse.uint8Array(body, { contentType, headers })
      })

    const publish: RegistryWork = (request, { owner, caller }) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string }
        const scan = scanPublish(requestBody(request))
        // sha1 and sha512 on the way: the declared shasum and integrity are checked before the answer.
        const stored = yield* packages
          .store({ owner, caller: caller!, type: TYPE }, scan.tarball, undefined, ["sha1", "sha512"])
          .pipe(
            Effect.mapError((e) => {
              const failure = scan.failure()
              return failure === undefined ? e : refusal(failure)
            })
          )
        const checked = yield* Effect.try({
          try: () => {
            const { document } = scan.result()
            const publish = readPublish(document, target.name)
            const { sha256, sha1, sha512, size } = stored.blob
            const mismatch = integrityMismatch(publish, { sha256, sha1: sha1!, sha512: sha512! }, size)
            if (mismatch !== undefined) throw Errors.badRequest(mismatch)
            return publish
          },
          catch: (e) => (e instanceof Errors.BadRequest ? e : refusal(e as PublishRefused))
        }).pipe(Effect.tapError(() => stored.discard))
        const { row } = yield* packages.create(
          {
            owner,
            caller: caller!,
            type: TYPE,
            name: checked.name,
            version: checked.version,
            semverCompatible: true,
            mode: "strict",
            metadataJson: JSON.stringify({ manifest: checked.manifest, readme: checked.readme }),
            file: { name: tarballName(checked.name, checked.version), isLead: true }
          },
          stored
        )
        for (const tag of checked.tags) yield* repo.setTag(row.pkg.id, row.version.id, tag)
        // Forgejo links the package to the repository its manifest names, when that is one of the
        // owner's here; where the link is not allowed (or exists already) the publish still stands.
        const linked = repositoryOf(checked.manifest.repository, root, owner.name)
        if (linked !== undefined && row.pkg.repoId === null)
          yield* Effect.ignore(packages.link(caller!, owner, TYPE, checked.name, linked))
        cache.drop(keyOf(owner, checked.name))
        return yield* HttpServerResponse.json({ ok: true, id: checked.name, rev: row.version.id }, { status: 201 })
      })

    /** The version a tarball's address names (by its file: npm's names need not hold the version), or the 404. */
    const tarballVersion = (request: HttpServerRequest.HttpServerRequest, owner: UserRow) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string; readonly file: string }
        const found = yield* repo.stamp(owner.id, target.name.toLowerCase())
        if (Option.isNone(found)) return { refused: missing(target.name) } as const
        const version = yield* repo.versionOfFile(found.value.packageId, target.file.toLowerCase())
        if (Option.isNone(version))
          return { refused: npmError(404, `"${target.file}" is not a tarball of ${target.name}`) } as const
        return { target, row: yield* packages.version(owner, TYPE, target.name, version.value) } as const
      })

    const tarball: RegistryWork = (request, { owner }) =>
      Effect.gen(function* () {
        const found = yield* tarballVersion(request, owner)
        if ("refused" in found) return found.refused
        const file = yield* packages.file(found.row, found.target.file)
        return yield* servePackageFile(request, file, packages.countDownload(found.row))
      })

    /** Unpublish of one version: the DELETE of its tarball (with a revision, as npm sends it). */
    const unpublishVersion: RegistryWork = (request, { owner, caller }) =>
      Effect.gen(function* () {
        const found = yield* tarballVersion(request, owner)
        if ("refused" in found) return found.refused
        yield* packages.removeVersion(caller!, owner, found.row)
        cache.drop(keyOf(owner, found.target.name))
        return yield* HttpServerResponse.json({ ok: true })
      })

    const unpublishPackage: RegistryWork = (request, { owner, caller }) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string }
        const found = yield* documents(owner, target.name)
        if (Option.isNone(found)) return missing(target.name)
        for (const version of found.value.packument.versions) {
          const row = yield* Effect.option(packages.version(owner, TYPE, target.name, version))
          if (Option.isSome(row)) yield* packages.removeVersion(caller!, owner, row.value)
        }
        cache.drop(keyOf(owner, target.name))
        return yield* HttpServerResponse.json({ ok: true })
      })

    /**
     * `npm unpublish name@version` first PUTs the document without that version, then DELETEs the
     * version's tarball; the DELETE does the work (as in Forgejo), so the PUT is read and accepted.
     */
    const revision: RegistryWork = (request) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string }
        yield* Effect.promise(async () => {
          try {
            for await (const _ of requestBody(request)) {
              // Drained: the answer does not depend on it.
            }
          } catch {
            // The client went away: nothing to answer.
          }
        })
        return yield* HttpServerResponse.json({ ok: true, id: target.name })
      })

    const listTags: RegistryWork = (request, { owner }) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string }
        const found = yield* documents(owner, target.name)
        if (Option.isNone(found)) return missing(target.name)
        return yield* HttpServerResponse.json(found.value.packument.distTags)
      })

    const changeTag: RegistryWork = (request, { owner }) =>
      Effect.gen(function* () {
        const target = parseTarget(request.url) as { readonly name: string; readonly tag: string }
        const refused = invalidTag(target.tag)
        if (refused !== undefined) return npmError(400, refused)
        const found = yield* repo.stamp(owner.id, target.name.toLowerCase())
        if (Option.isNone(found) || found.value.versions === 0) return missing(target.name)
        if (request.method === "DELETE") {
          if (!(yield* repo.removeTag(found.value.packageId, target.tag)))
            return npmError(404, `"${target.tag}" is not a dist-tag of ${target.name}`)
        } else {
          const text = yield* smallBody(request)
          if (text === undefined) return npmError(413, `the body must be a version, under ${SMALL_BODY} bytes`)
          let version: unknown
          try {
            version = JSON.parse(text)
          } catch {
            version = undefined
          }
          if (typeof version !== "string")
            return npmError(400, `the body must be the version the tag names, as a JSON string (such as "1.2.3")`)
          const row = yield* Effect.option(packages.version(owner, TYPE, target.name, version))
          if (Option.isNone(row)) return npmError(404, `version ${version} of ${target.name} does not exist`)
          yield* repo.setTag(found.value.packageId, row.value.version.id, target.tag)
        }
        cache.drop(keyOf(owner, target.name))
        return yield* HttpServerResponse.json({ ok: true })
      })

    const search: RegistryWork = (request, { owner }) =>
      Effect.gen(function* () {
        const query = new URL(request.url, "http://x").searchParams
        const number = (key: string, fallback: number, max: number) => {
          const n = Number(query.get(key) ?? "")
          return Number.isInteger(n) && n >= 0 ? Math.min(n, max) : fallback
        }
        const size = number("size", 20, 250) || 20
        const from = number("from", 0, Number.MAX_SAFE_INTEGER)
        const text = (query.get("text") ?? "").trim()
        const { names, total } = yield* repo.search(owner.id, text, size, from)
        const objects = []
        for (const name of names) {
          const found = yield* documents(owner, name)
          if (Option.isNone(found)) continue
          const page = `${root}${encodeURIComponent(owner.name)}/-/packages/npm/${encodeURIComponent(name)}`
          objects.push(searchObject(page, owner.name, found.value.name, found.value.packument))
        }
        return yield* HttpServerResponse.json({ objects, total, time: new Date().toUTCString() })
      })

    const routes = {
      metadata: registryRoute("read", metadata),
      publish: registryRoute("write", publish),
      tarball: registryRoute("read", tarball),
      unpublishVersion: registryRoute("write", unpublishVersion),
      unpublishPackage: registryRoute("write", unpublishPackage),
      revision: registryRoute("write", revision),
      listTags: registryRoute("read", listTags),
      changeTag: registryRoute("write", changeTag),
      search: registryRoute("read", search),
      // `npm whoami` (npm-registry-fetch GET /-/whoami): the signed-in user's name. Forgejo has no
      // such route (npm reports a 404 as a failure), so the CLI could not check its credentials.
      whoami: registryRoute("read", (_request, { caller }) =>
        caller === undefined
          ? Effect.succeed(npmError(401, "sign in (a token with read:package) to see who you are"))
          : HttpServerResponse.json({ username: caller.user.name })
      ),
      invalid: registryRoute("read", (request) =>
        Effect.succeed(npmError(400, (parseTarget(request.url) as { readonly message: string }).message))
      )
    }

    const dispatch = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const target = parseTarget(request.url)
      const method = request.method
      const read = method === "GET" || method === "HEAD"
      const route = (() => {
        switch (target?.kind) {
          case "package":
            return read ? routes.metadata : method === "PUT" ? routes.publish : undefined
          case "tarball":
            return target.revision
              ? method === "DELETE"
                ? routes.unpublishVersion
                : undefined
              : read
                ? routes.tarball
                : undefined
          case "revision":
            return method === "DELETE" ? routes.unpublishPackage : method === "PUT" ? routes.revision : undefined
          case "tags":
            return target.tag === undefined
              ? read
                ? routes.listTags
                : undefined
              : method === "PUT" || method === "DELETE"
                ? routes.changeTag
                : undefined
          case "search":
            return read ? routes.search : undefined
          case "whoami":
            return read ? routes.whoami : undefined
          case "invalid":
            return routes.invalid
          default:
            return undefined
        }
      })()
      if (route !== undefined) return yield* route
      return target === undefined
        ? npmError(404, "not an npm registry address")
        : npmError(405, `${method} is not allowed here`)
    })

    return HttpRouter.add("*", "/api/packages/:owner/npm/*", dispatch)
  })
)

// The container registry: the OCI distribution spec at `/v2/` (Forgejo's
// routers/api/packages/container), used by skopeo, podman and docker. Images are
// `/v2/{owner}/{image}` (the image may be nested, `a/b`); tags and untagged manifests are versions
// of the image's package (see Repo.ts). Errors are the spec's JSON,
// `{"errors":[{"code","message","detail"}]}`, and a 401 carries the bearer challenge pointing at
// `/v2/token`, where clients trade their credentials for a registry token (Token.ts).
//
// Blobs are stored as they arrive and checked against the digest the client names: a mismatch
// gives the bytes back at once. A chunked upload is a session (migration 0035): its first chunk
// streams straight into the blob storage (skopeo sends a whole blob in one PATCH); a later chunk
// moves the bytes to a file under [packages] CHUNKED_UPLOAD_PATH and appends there. A manifest is
// refused unless every blob (or, for an index, every manifest) it names is in the image already.
import { createHash, randomUUID } from "node:crypto"
import { createReadStream, createWriteStream } from "node:fs"
import { mkdir, rm } from "node:fs/promises"
import { join } from "node:path"
import { Readable, Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { accountRefusal } from "../../auth/AccountState.ts"
import { parseAuthorization } from "../../auth/Authentication.ts"
import { Authenticator } from "../../auth/Authenticator.ts"
import { missingScopeMessage } from "../../auth/Scopes.ts"
import { Settings } from "../../config/Settings.ts"
import type { Principal } from "../../http/Caller.ts"
import * as Errors from "../../http/Errors.ts"
import { atLeast } from "../../lib/AccessMode.ts"
import { contentLength, parseRange, requestBody } from "../../storage/Http.ts"
import { blobBody } from "../../storage/Serve.ts"
import { BlobStorage, type StoredBlob } from "../../storage/Service.ts"
import { type UserRow, UsersRepo } from "../../users/Repo.ts"
import { PackagePolicy } from "../Policy.ts"
import { makeRegistryGate, makeRegistryRoute, type RegistryCaller, statusAndMessage } from "../Registry.ts"
import { PackagesRepo } from "../Repo.ts"
import { PackagesService, type Stored, TYPE_SIZE_EXCEEDED } from "../Service.ts"
import { type FoundManifest, MANIFEST_FILE, makeContainerRepo, TYPE, type UploadSession } from "./Repo.ts"
import { makeContainerTokens, TOKEN_LIFETIME_SECONDS } from "./Token.ts"

// Forgejo's patterns (routers/api/packages/container, modules/packages/container/oci).
const IMAGE = /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?:\/[a-z0-9]+(?:[._-][a-z0-9]+)*)*$/
const TAG = /^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$/
const DIGEST = /^sha256:([a-f0-9]{64})$/
/** The most images one catalog page lists (and the page size when the client names none). */
const CATALOG_PAGE = 1000
/** The largest manifest accepted (the spec asks registries to take at least 4 MiB). */
const MAX_MANIFEST = 4 * 1024 * 1024

export const MEDIA_TYPES = {
  ociManifest: "application/vnd.oci.image.manifest.v1+json",
  ociIndex: "application/vnd.oci.image.index.v1+json",
  dockerManifest: "application/vnd.docker.distribution.manifest.v2+json",
  dockerList: "application/vnd.docker.distribution.manifest.list.v2+json"
} as const
const IMAGE_MANIFESTS: ReadonlyArray<string> = [MEDIA_TYPES.ociManifest, MEDIA_TYPES.dockerManifest]
const INDEXES: ReadonlyArray<string> = [MEDIA_TYPES.ociIndex, MEDIA_TYPES.dockerList]

/**
 * The media types an Accept header names (q=0 excluded), or undefined when it takes any (no
 * header, or a wildcard: `*\/*`, `application/*`).
 */
export const acceptedTypes = (accept: string | undefined): ReadonlySet<string> | undefined => {
  if (accept === undefined || accept.trim() === "") return undefined
  const types = new Set<string>()
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";").map((p) => p.trim().toLowerCase())
    if (type === undefined || type === "") continue
    if (params.some((p) => /^q=0(\.0*)?$/.test(p))) continue
    if (type === "*/*" || type === "application/*") return undefined
    types.add(type)
  }
  return types
}

const API_VERSION = { "docker-distribution-api-version": "registry/2.0" }

/** An error as the distribution spec writes it. */
export const ociError = (
  status: number,
  code: string,
  message: string,
  detail: unknown = null,
  headers: Record<string, string> = {}
) =>
  HttpServerResponse.jsonUnsafe(
    { errors: [{ code, message, detail }] },
    { status, headers: { ...API_VERSION, ...headers } }
  )

const codeOf = (status: number) =>
  status === 401
    ? "UNAUTHORIZED"
    : status === 403 || status === 413
      ? "DENIED"
      : status === 404
        ? "NAME_UNKNOWN"
        : status === 429
          ? "TOOMANYREQUESTS"
          : status === 400
            ? "SIZE_INVALID"
            : "UNKNOWN"

type Op =
  | { readonly kind: "uploads"; readonly image: string; readonly uuid: string }
  | { readonly kind: "blob"; readonly image: string; readonly digest: string }
  | { readonly kind: "manifest"; readonly image: string; readonly reference: string }
  | { readonly kind: "tags"; readonly image: string }

const decode = (segment: string) => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return segment
  }
}

/** What `/v2/{owner}/…` asks for: the image (nested names allowed) and the operation. */
export const parseOp = (rest: string): Op | undefined => {
  const path = rest.split("/").map(decode).join("/")
  let m = /^(.+)\/blobs\/uploads\/?([^/]*)$/.exec(path)
  if (m !== null) return { kind: "uploads", image: m[1]!, uuid: m[2]! }
  m = /^(.+)\/blobs\/([^/]+)$/.exec(path)
  if (m !== null) return { kind: "blob", image: m[1]!, digest: m[2]! }
  m = /^(.+)\/manifests\/([^/]+)$/.exec(path)
  if (m !== null) return { kind: "manifest", image: m[1]!, reference: m[2]! }
  m = /^(.+)\/tags\/list$/.exec(path)
  if (m !== null) return { kind: "tags", image: m[1]! }
  return undefined
}

interface Descriptor {
  readonly mediaType: string
  readonly digest: string
  readonly size: number
}

const isDescriptor = (d: unknown): d is Descriptor =>
  typeof d === "object" &&
  d !== null &&
  typeof (d as Descriptor).mediaType === "string" &&
  typeof (d as Descriptor).digest === "string" &&
  Number.isSafeInteger((d as Descriptor).size) &&
  (d as Descriptor).size >= 0

/** A manifest's media type and what it references, or why it is refused (MANIFEST_INVALID). */
export const readManifest = (
  bytes: Uint8Array,
  contentType: string | undefined
):
  | { readonly mediaType: string; readonly blobs: Array<Descriptor>; readonly manifests: Array<Descriptor> }
  | string => {
  let doc: Record<string, unknown>
  try {
    doc = JSON.parse(Buffer.from(bytes).toString("utf8"))
  } catch {
    return "the manifest is not JSON"
  }
  if (typeof doc !== "object" || doc === null || Array.isArray(doc)) return "the manifest is not a JSON object"
  if (doc.schemaVersion !== 2) return "schemaVersion must be 2"
  const declared = typeof doc.mediaType === "string" ? doc.mediaType : undefined
  const header = contentType?.split(";")[0]?.trim().toLowerCase()
  const known = (t: string | undefined) => t !== undefined && (IMAGE_MANIFESTS.includes(t) || INDEXES.includes(t))
  const mediaType = known(header)
    ? header!
    : known(declared)
      ? declared!
      : doc.manifests !== undefined
        ? MEDIA_TYPES.ociIndex
        : MEDIA_TYPES.ociManifest
  if (declared !== undefined && declared !== mediaType)
    return `the manifest's mediaType ${declared} is not its Content-Type ${mediaType}`
  const sha256Only = (d: Descriptor) => DIGEST.test(d.digest)
  if (INDEXES.includes(mediaType)) {
    const manifests = doc.manifests
    if (!Array.isArray(manifests) || !manifests.every(isDescriptor))
      return "an index needs manifests: descriptors with mediaType, digest and size"
    if (!manifests.every(sha256Only)) return "only sha256 digests are supported"
    return { mediaType, blobs: [], manifests }
  }
  const config = doc.config
  const layers = doc.layers ?? []
  if (!isDescriptor(config)) return "an image manifest needs a config descriptor (mediaType, digest, size)"
  if (!Array.isArray(layers) || !layers.every(isDescriptor))
    return "an image manifest's layers must be descriptors (mediaType, digest, size)"
  const blobs = [config, ...layers]
  if (!blobs.every(sha256Only)) return "only sha256 digests are supported"
  return { mediaType, blobs, manifests: [] }
}

/** Reads a request body of at most `max` bytes; undefined when it is larger. */
const readBody = (request: HttpServerRequest.HttpServerRequest, max: number) =>
  Effect.promise(async () => {
    const chunks: Array<Buffer> = []
    let size = 0
    for await (const chunk of requestBody(request)) {
      const buffer = typeof chunk === "string" ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array)
      size += buffer.length
      if (size > max) return undefined
      chunks.push(buffer)
    }
    return Buffer.concat(chunks)
  })

/** Whether the request carries a body (a PUT that ends an upload may or may not). */
const hasBody = (request: HttpServerRequest.HttpServerRequest) => {
  const length = contentLength(request)
  return length !== undefined ? length > 0 : request.headers["transfer-encoding"] !== undefined
}

export const ContainerRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    if (!settings.packages.ENABLED) return Layer.empty
    const packages = yield* PackagesService
    const packagesRepo = yield* PackagesRepo
    const storage = yield* BlobStorage
    const authenticator = yield* Authenticator
    const users = yield* UsersRepo
    const policy = yield* PackagePolicy
    const repo = yield* makeContainerRepo
    const tokens = yield* makeContainerTokens
    const chunkDir = settings.packages.CHUNKED_UPLOAD_PATH
    const challenge = `Bearer realm="${settings.server.ROOT_URL}v2/token",service="container_registry",scope="*"`

    const render = (status: number, message: string) =>
      ociError(status, codeOf(status), message, null, status === 401 ? { "www-authenticate": challenge } : {})
    const registryRoute = yield* makeRegistryRoute(render, tokens.resolve)
    const gate = yield* makeRegistryGate

    const base = (owner: UserRow, image: string) => `/v2/${owner.name.toLowerCase()}/${image}`
    const sessionFile = (id: string) => join(chunkDir, id)

    /** Gives a held blob back (a refused or abandoned upload): nothing is left behind. */
    const giveBack = (sha256: string, hold: number) =>
      packagesRepo
        .transaction(Effect.andThen(storage.acquire({ sha256, hold } as StoredBlob), storage.release(sha256)))
        .pipe(Effect.ignoreCause({ log: "Warn", message: "could not give back a refused container blob" }))

    /**
     * Makes a blob part of the image: a file of its upload version, in the caller's transaction.
     * `blob` is a put's result or a finished session's blob (its hold ends) or the sha256 of a
     * blob another file holds (a mount). An existing file: the hold is given back. Whether the
     * file is new.
     */
    const keep = (
      owner: UserRow,
      image: string,
      blob: { readonly sha256: string; readonly size: number; readonly hold?: number }
    ) =>
      Effect.gen(function* () {
        const file = yield* repo.keepUploaded(owner.id, image, blob.sha256, blob.size)
        const held = blob.hold === undefined ? undefined : ({ ...blob, hold: blob.hold } as StoredBlob)
        if (Option.isSome(file)) {
          yield* storage.acquire(held ?? blob.sha256)
          return true
        }
        // The hold ends, and the blob stays (the existing file holds it).
        if (held !== undefined) yield* Effect.andThen(storage.acquire(held), storage.release(blob.sha256))
        return false
      })
    const keepBlob = (owner: UserRow, image: string, blob: Parameters<typeof keep>[2]) =>
      packagesRepo.transaction(keep(owner, image, blob))

    /** Stores a body under the owner's limits and quota (Service.store). */
    const store = (owner: UserRow, caller: Principal, body: Readable, length: number | undefined) =>
      packages.store({ owner, caller, type: TYPE }, body, length)

    /** The 201 of a stored blob. */
    const blobCreated = (owner: UserRow, image: string, digest: string) =>
      HttpServerResponse.empty({
        status: 201,
        headers: {
          ...API_VERSION,
          location: `${base(owner, image)}/blobs/${digest}`,
          "docker-content-digest": digest,
          "content-length": "0"
        }
      })

    const uploadAccepted = (owner: UserRow, image: string, session: UploadSession, status = 202) =>
      HttpServerResponse.empty({
        status,
        headers: {
          ...API_VERSION,
          location: `${base(owner, image)}/blobs/uploads/${session.id}`,
          range: `0-${Math.max(0, session.size - 1)}`,
          "docker-upload-uuid": session.id,
          "content-length": "0"
        }
      })

    const refusedUpload = (error: unknown) => {
      const { status, message } = statusAndMessage(error)
      return ociError(status, status === 400 ? "SIZE_INVALID" : "DENIED", message)
    }

    /** Ends a session: its row, its held blob, its file. */
    const dropSession = (session: UploadSession) =>
      Effect.gen(function* () {
        if (!(yield* repo.deleteSession(session.id))) return
        if (session.sha256 !== null && session.hold !== null) yield* giveBack(session.sha256, session.hold)
        yield* Effect.promise(() => rm(sessionFile(session.id), { force: true }))
      })

    /** Appends a request's body to a session; the session after, or the refusal. */
    const append = (
      request: HttpServerRequest.HttpServerRequest,
      { owner, caller }: RegistryCaller,
      session: UploadSession
    ) =>
      Effect.gen(function* () {
        if (session.size === 0 && session.sha256 === null) {
          // The whole blob in one request (skopeo, docker): straight into the blob storage.
          const stored = yield* store(owner, caller!, requestBody(request), contentLength(request))
          yield* repo.updateSession(session.id, stored.blob.size, stored.blob.sha256, stored.blob.hold)
          return { ...session, size: stored.blob.size, sha256: stored.blob.sha256, hold: stored.blob.hold }
        }
        const path = sessionFile(session.id)
        yield* Effect.promise(() => mkdir(chunkDir, { recursive: true }))
        if (session.sha256 !== null) {
          // A second chunk: the first one's bytes move to the session's file.
          const sha256 = session.sha256
          const opened = yield* Effect.orDie(storage.open(sha256))
          yield* Effect.promise(() => pipeline(opened.readable(), createWriteStream(path)))
          if (session.hold !== null) yield* giveBack(sha256, session.hold)
          yield* repo.updateSession(session.id, session.size, null, null)
        }
        // The file is bounded as the blob will be (LIMIT_SIZE_CONTAINER; site admins are not limited).
        const limit = caller!.user.isAdmin ? -1 : settings.packages.LIMIT_SIZE_CONTAINER
        let written = 0
        const bounded = new Transform({
          transform(chunk: Buffer, _encoding, next) {
            written += chunk.length
            if (limit > -1 && session.size + written > limit) next(new Error(TYPE_SIZE_EXCEEDED))
            else next(null, chunk)
          }
        })
        yield* Effect.tryPromise({
          try: () => pipeline(requestBody(request), bounded, createWriteStream(path, { flags: "a" })),
          catch: (e) =>
            (e as Error).message === TYPE_SIZE_EXCEEDED
              ? Errors.forbidden(TYPE_SIZE_EXCEEDED)
              : Errors.badRequest(`the chunk stopped part-way: ${(e as Error).message}`)
        })
        const size = session.size + written
        yield* repo.updateSession(session.id, size, null, null)
        return { ...session, size, sha256: null, hold: null }
      })

    const findSession = (owner: UserRow, image: string, uuid: string) =>
      uuid === "" ? Effect.succeed(Option.none<UploadSession>()) : repo.session(uuid, owner.id, image)
    const uploadUnknown = () => ociError(404, "BLOB_UPLOAD_UNKNOWN", "no such upload: start a new one")

    // ---- blob uploads -------------------------------------------------------------------------

    const startUpload = (request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, image: string) =>
      Effect.gen(function* () {
        const { owner, caller } = allowed
        const query = new URL(request.url, "http://x").searchParams
        const mount = query.get("mount")?.trim() ?? ""
        const from = query.get("from")?.trim() ?? ""
        if (mount !== "" && DIGEST.test(mount) && from.includes("/")) {
          // Cross-repository mount: only from an image the caller may read.
          const [fromOwner, ...rest] = from.split("/")
          const fromImage = rest.join("/")
          const source = yield* Effect.option(gate(request, fromOwner!, "read", tokens.resolve))
          if (Option.isSome(source) && IMAGE.test(fromImage)) {
            const found = yield* repo.blob(source.value.owner.id, fromImage, mount.slice(7))
            if (Option.isSome(found)) {
              const kept = yield* Effect.option(keepBlob(owner, image, found.value))
              if (Option.isSome(kept)) return blobCreated(owner, image, mount)
            }
          }
        }
        const digest = query.get("digest")?.trim() ?? ""
        if (digest !== "") {
          // Monolithic upload: the body is the blob.
          if (!DIGEST.test(digest))
            return ociError(400, "DIGEST_INVALID", `${digest} is no sha256 digest (sha256:<64 hex>)`)
          const stored = yield* Effect.result(store(owner, caller!, requestBody(request), contentLength(request)))
          if (stored._tag === "Failure") return refusedUpload(stored.failure)
          const blob = stored.success.blob
          if (`sha256:${blob.sha256}` !== digest) {
            yield* stored.success.discard
            return ociError(400, "DIGEST_INVALID", `the blob's digest is sha256:${blob.sha256}, not ${digest}`, {
              digest
            })
          }
          yield* keepBlob(owner, image, blob)
          return blobCreated(owner, image, digest)
        }
        const session: UploadSession = {
          id: randomUUID(),
          ownerId: owner.id,
          image,
          size: 0,
          sha256: null,
          hold: null
        }
        yield* repo.insertSession(session.id, owner.id, image)
        return uploadAccepted(owner, image, session)
      })

    const patchUpload = (request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "uploads") return uploadUnknown()
        const found = yield* findSession(allowed.owner, op.image, op.uuid)
        if (Option.isNone(found)) return uploadUnknown()
        const session = found.value
        const range = request.headers["content-range"]
        if (range !== undefined) {
          const m = /^(?:bytes )?(\d+)-(\d+)$/.exec(range.trim())
          if (m === null) return ociError(400, "BLOB_UPLOAD_INVALID", `unreadable Content-Range "${range}"`)
          if (Number(m[1]) !== session.size)
            return ociError(
              416,
              "BLOB_UPLOAD_INVALID",
              `this chunk starts at ${m[1]}, but the upload has ${session.size} bytes so far`,
              null,
              { range: `0-${Math.max(0, session.size - 1)}` }
            )
        }
        const appended = yield* Effect.result(append(request, allowed, session))
        if (appended._tag === "Failure") {
          yield* dropSession(session)
          return refusedUpload(appended.failure)
        }
        return uploadAccepted(allowed.owner, op.image, appended.success)
      })

    const finishUpload = (request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "uploads") return uploadUnknown()
        const { owner, caller } = allowed
        const digest = new URL(request.url, "http://x").searchParams.get("digest")?.trim() ?? ""
        if (op.uuid !== "" && DIGEST.test(digest) && !hasBody(request)) {
          // The session's one chunk went straight into the storage (skopeo): the session ends and
          // its blob becomes the image's in one transaction, so that a finished upload is over
          // (finishing it again, or another chunk, finds no session) and a failed one is not.
          const ended = yield* packagesRepo.transaction(
            Effect.gen(function* () {
              const taken = yield* repo.takeStoredSession(op.uuid, owner.id, op.image)
              if (Option.isNone(taken)) return undefined
              const { sha256, size, hold } = taken.value
              if (`sha256:${sha256}` === digest) yield* keep(owner, op.image, { sha256: sha256!, size, hold: hold! })
              return taken.value
            })
          )
          if (ended !== undefined) {
            if (`sha256:${ended.sha256}` === digest) return blobCreated(owner, op.image, digest)
            yield* giveBack(ended.sha256!, ended.hold!)
            return ociError(400, "DIGEST_INVALID", `the blob's digest is sha256:${ended.sha256}, not ${digest}`, {
              digest
            })
          }
        }
        const found = yield* findSession(owner, op.image, op.uuid)
        if (Option.isNone(found)) return uploadUnknown()
        let session = found.value
        if (!DIGEST.test(digest)) {
          yield* dropSession(session)
          return ociError(400, "DIGEST_INVALID", `digest=${digest} is no sha256 digest (sha256:<64 hex>)`)
        }
        if (hasBody(request)) {
          const appended = yield* Effect.result(append(request, allowed, session))
          if (appended._tag === "Failure") {
            yield* dropSession(session)
            return refusedUpload(appended.failure)
          }
          session = appended.success
        }
        // A blob the session already holds (its first chunk went straight to storage, then came
        // the PUT's body), or one stored now.
        let stored: { readonly sha256: string; readonly size: number; readonly hold: number } | Stored
        if (session.sha256 !== null && session.hold !== null) {
          stored = { sha256: session.sha256, size: session.size, hold: session.hold }
        } else {
          const path = sessionFile(session.id)
          const body = session.size === 0 ? Readable.from([]) : createReadStream(path)
          const result = yield* Effect.result(store(owner, caller!, body, session.size))
          if (result._tag === "Failure") {
            yield* dropSession(session)
            return refusedUpload(result.failure)
          }
          stored = result.success
        }
        const blob = "blob" in stored ? stored.blob : stored
        if (`sha256:${blob.sha256}` !== digest) {
          if ("blob" in stored) yield* stored.discard
          yield* dropSession(session)
          return ociError(400, "DIGEST_INVALID", `the blob's digest is sha256:${blob.sha256}, not ${digest}`, {
            digest
          })
        }
        // The session's hold passes to the blob's file.
        if (yield* repo.deleteSession(session.id)) {
          yield* keepBlob(owner, op.image, blob)
          yield* Effect.promise(() => rm(sessionFile(session.id), { force: true }))
        } else if ("blob" in stored) yield* stored.discard
        return blobCreated(owner, op.image, digest)
      })

    const uploadStatus = (_request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "uploads") return uploadUnknown()
        const found = yield* findSession(allowed.owner, op.image, op.uuid)
        if (Option.isNone(found)) return uploadUnknown()
        return uploadAccepted(allowed.owner, op.image, found.value, 204)
      })

    const cancelUpload = (_request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "uploads") return uploadUnknown()
        const found = yield* findSession(allowed.owner, op.image, op.uuid)
        if (Option.isNone(found)) return uploadUnknown()
        yield* dropSession(found.value)
        return HttpServerResponse.empty({ status: 204, headers: API_VERSION })
      })

    // ---- blobs --------------------------------------------------------------------------------

    const blobUnknown = (digest: string) => ociError(404, "BLOB_UNKNOWN", `blob ${digest} is unknown`, { digest })

    const getBlob = (request: HttpServerRequest.HttpServerRequest, { owner }: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "blob") return blobUnknown("")
        const m = DIGEST.exec(op.digest)
        if (m === null) return blobUnknown(op.digest)
        const found = yield* repo.blob(owner.id, op.image, m[1]!)
        if (Option.isNone(found)) return blobUnknown(op.digest)
        const size = found.value.size
        const headers = {
          ...API_VERSION,
          "docker-content-digest": op.digest,
          etag: `"${op.digest}"`,
          "accept-ranges": "bytes",
          "cache-control": "private, max-age=31536000, immutable"
        }
        const range = parseRange(request.headers["range"], size)
        if (range === "unsatisfiable")
          return HttpServerResponse.empty({ status: 416, headers: { ...headers, "content-range": `bytes */${size}` } })
        const opened = yield* Effect.option(storage.open(m[1]!, range))
        if (Option.isNone(opened)) return blobUnknown(op.digest)
        const blob = opened.value
        const status = range === undefined ? 200 : 206
        const withRange =
          range === undefined
            ? headers
            : { ...headers, "content-range": `bytes ${blob.range.start}-${blob.range.end}/${blob.size}` }
        if (request.method === "HEAD")
          return HttpServerResponse.empty({
            status,
            headers: { ...withRange, "content-type": "application/octet-stream", "content-length": String(blob.length) }
          })
        // Read into reused buffers and piped to the socket, as every stored file (storage/Serve.ts).
        return HttpServerResponse.raw(blobBody(request, blob), {
          status,
          contentType: "application/octet-stream",
          contentLength: blob.length,
          headers: withRange
        })
      })

    const deleteBlob = (_request: HttpServerRequest.HttpServerRequest, { owner }: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "blob") return blobUnknown("")
        const m = DIGEST.exec(op.digest)
        if (m === null || !(yield* repo.deleteUploadedBlob(owner.id, op.image, m[1]!))) return blobUnknown(op.digest)
        return HttpServerResponse.empty({ status: 202, headers: API_VERSION })
      })

    // ---- manifests ----------------------------------------------------------------------------

    const manifestUnknown = (reference: string) =>
      ociError(404, "MANIFEST_UNKNOWN", `manifest ${reference} is unknown`, { reference })

    const findManifest = (owner: UserRow, image: string, reference: string) => {
      const m = DIGEST.exec(reference)
      if (m !== null) return repo.manifestByDigest(owner.id, image, m[1]!)
      if (TAG.test(reference)) return repo.manifestByTag(owner.id, image, reference)
      return Effect.succeed(Option.none())
    }

    /** The media type a stored manifest was pushed with. */
    const mediaTypeOf = (manifest: FoundManifest): string => {
      try {
        return (JSON.parse(manifest.metadataJson) as { mediaType?: string }).mediaType ?? MEDIA_TYPES.ociManifest
      } catch {
        return MEDIA_TYPES.ociManifest
      }
    }

    /**
     * The manifest to answer a GET by tag with, by the client's Accept (as Docker's registry does):
     * the tagged one when its type is accepted or when it is an image manifest; for an index the
     * client does not accept, the index's linux/amd64 image manifest when that one's type is
     * accepted, else none (404). By digest, the manifest itself: its bytes are what the digest names.
     */
    const negotiate = (
      owner: UserRow,
      image: string,
      manifest: FoundManifest,
      byTag: boolean,
      accept: string | undefined
    ) =>
      Effect.gen(function* () {
        const mediaType = mediaTypeOf(manifest)
        const accepted = acceptedTypes(accept)
        const takes = (type: string) => accepted === undefined || accepted.has(type)
        // An image manifest has nothing else to offer: served as it is.
        if (!byTag || takes(mediaType) || !INDEXES.includes(mediaType)) return { manifest, mediaType }
        const opened = yield* Effect.option(storage.open(manifest.sha256))
        if (Option.isNone(opened)) return undefined
        const chosen = yield* Effect.promise(async () => {
          const chunks: Array<Buffer> = []
          for await (const chunk of opened.value.readable()) chunks.push(chunk as Buffer)
          try {
            const index = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
              manifests?: Array<{
                mediaType?: string
                digest?: string
                platform?: { os?: string; architecture?: string }
              }>
            }
            return (index.manifests ?? []).find(
              (m) =>
                m.platform?.os === "linux" &&
                m.platform.architecture === "amd64" &&
                typeof m.mediaType === "string" &&
                takes(m.mediaType) &&
                typeof m.digest === "string" &&
                DIGEST.test(m.digest)
            )
          } catch {
            return undefined
          }
        })
        if (chosen === undefined) return undefined
        const found = yield* repo.manifestByDigest(owner.id, image, chosen.digest!.slice(7))
        return Option.isNone(found) ? undefined : { manifest: found.value, mediaType: mediaTypeOf(found.value) }
      })

    const getManifest = (request: HttpServerRequest.HttpServerRequest, { owner }: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "manifest") return manifestUnknown("")
        const found = yield* findManifest(owner, op.image, op.reference)
        if (Option.isNone(found)) return manifestUnknown(op.reference)
        const byTag = DIGEST.exec(op.reference) === null
        const chosen = yield* negotiate(owner, op.image, found.value, byTag, request.headers["accept"])
        if (chosen === undefined)
          return ociError(
            404,
            "MANIFEST_UNKNOWN",
            `manifest ${op.reference} is an index (${mediaTypeOf(found.value)}), which the request's Accept does ` +
              "not take, and it names no linux/amd64 image manifest of a type the Accept takes",
            { reference: op.reference }
          )
        const { manifest, mediaType } = chosen
        const digest = `sha256:${manifest.sha256}`
        const headers = { ...API_VERSION, "docker-content-digest": digest, etag: `"${digest}"`, vary: "Accept" }
        if (request.method === "HEAD")
          return HttpServerResponse.empty({
            status: 200,
            headers: { ...headers, "content-type": mediaType, "content-length": String(manifest.size) }
          })
        const opened = yield* Effect.option(storage.open(manifest.sha256))
        if (Option.isNone(opened)) return manifestUnknown(op.reference)
        yield* packagesRepo.countDownload(manifest.versionId)
        return HttpServerResponse.stream(opened.value.stream, {
          status: 200,
          contentType: mediaType,
          contentLength: manifest.size,
          headers
        })
      })

    const putManifest = (request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "manifest") return manifestUnknown("")
        const { owner, caller } = allowed
        const reference = op.reference
        const byDigest = DIGEST.exec(reference)
        if (byDigest === null && !TAG.test(reference))
          return ociError(400, "MANIFEST_INVALID", `"${reference}" is neither a tag nor a sha256 digest`)
        const bytes = yield* readBody(request, MAX_MANIFEST)
        if (bytes === undefined)
          return ociError(413, "SIZE_INVALID", `a manifest may have at most ${MAX_MANIFEST} bytes`)
        const read = readManifest(bytes, request.headers["content-type"])
        if (typeof read === "string") return ociError(400, "MANIFEST_INVALID", read)
        const sha256 = createHash("sha256").update(bytes).digest("hex")
        const digest = `sha256:${sha256}`
        if (byDigest !== null && byDigest[1] !== sha256)
          return ociError(400, "DIGEST_INVALID", `the manifest's digest is ${digest}, not ${reference}`, {
            digest: reference
          })
        // Everything it names must be in the image already.
        const inImage = yield* repo.blobs(
          owner.id,
          op.image,
          read.blobs.map((d) => d.digest.slice(7))
        )
        const referenced = new Map<string, number>()
        for (const d of read.blobs) {
          const size = inImage.get(d.digest.slice(7))
          if (size === undefined || size !== d.size)
            return ociError(
              400,
              "MANIFEST_BLOB_UNKNOWN",
              size === undefined
                ? `blob ${d.digest} is not in ${op.image}: push it first`
                : `blob ${d.digest} has ${size} bytes, not ${d.size}`,
              { digest: d.digest }
            )
          referenced.set(d.digest.slice(7), size)
        }
        for (const d of read.manifests) {
          const found = yield* repo.manifestByDigest(owner.id, op.image, d.digest.slice(7))
          if (Option.isNone(found))
            return ociError(400, "MANIFEST_BLOB_UNKNOWN", `manifest ${d.digest} is not in ${op.image}: push it first`, {
              digest: d.digest
            })
        }
        const created = HttpServerResponse.empty({
          status: 201,
          headers: {
            ...API_VERSION,
            location: `${base(owner, op.image)}/manifests/${reference}`,
            "docker-content-digest": digest,
            "content-length": "0"
          }
        })
        // The same manifest again: nothing to do. Another one under the tag: the tag moves (once
        // the new manifest is stored, so that a refused one leaves the tag where it was).
        const existing = yield* findManifest(owner, op.image, reference)
        if (Option.isSome(existing) && existing.value.sha256 === sha256) return created
        const stored = yield* Effect.result(store(owner, caller!, Readable.from([bytes]), bytes.length))
        if (stored._tag === "Failure") return refusedUpload(stored.failure)
        if (Option.isSome(existing)) {
          const old = yield* Effect.option(packages.version(owner, TYPE, op.image, reference))
          if (Option.isSome(old)) yield* packages.removeVersion(caller!, owner, old.value)
        }
        const saved = yield* Effect.result(
          packages.create(
            {
              owner,
              caller: caller!,
              type: TYPE,
              name: op.image,
              version: reference,
              mode: "strict",
              metadataJson: JSON.stringify({ mediaType: read.mediaType, digest }),
              file: { name: MANIFEST_FILE, isLead: true }
            },
            stored.success,
            // The version holds its own references to its blobs (they outlive the upload
            // version's), written in the version's transaction.
            (row) =>
              Effect.gen(function* () {
                const inserted = yield* packagesRepo.insertFiles(
                  [...referenced].map(([blobSha, size]) => ({
                    versionId: row.version.id,
                    sha256: blobSha,
                    size,
                    name: `sha256:${blobSha}`,
                    compositeKey: "",
                    isLead: false
                  }))
                )
                yield* Effect.orDie(storage.acquireAll(inserted))
              })
          )
        )
        if (saved._tag === "Failure") return refusedUpload(saved.failure)
        return created
      })

    const deleteManifest = (_request: HttpServerRequest.HttpServerRequest, allowed: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "manifest") return manifestUnknown("")
        const { owner, caller } = allowed
        const m = DIGEST.exec(op.reference)
        const versions =
          m !== null
            ? yield* repo.versionsOfManifest(owner.id, op.image, m[1]!)
            : TAG.test(op.reference)
              ? [op.reference]
              : []
        let removed = 0
        for (const version of versions) {
          const row = yield* Effect.option(packages.version(owner, TYPE, op.image, version))
          if (Option.isNone(row)) continue
          yield* packages.removeVersion(caller!, owner, row.value)
          removed++
        }
        if (removed === 0) return manifestUnknown(op.reference)
        return HttpServerResponse.empty({ status: 202, headers: API_VERSION })
      })

    // ---- tags ---------------------------------------------------------------------------------

    const listTags = (request: HttpServerRequest.HttpServerRequest, { owner }: RegistryCaller, op: Op) =>
      Effect.gen(function* () {
        if (op.kind !== "tags" || !(yield* repo.imageExists(owner.id, op.image)))
          return ociError(404, "NAME_UNKNOWN", `${owner.name}/${op.image} has no image`)
        const query = new URL(request.url, "http://x").searchParams
        const nText = query.get("n")
        const last = query.get("last") ?? ""
        if (nText !== null && !/^\d+$/.test(nText))
          return ociError(400, "UNSUPPORTED", `n=${nText}: expected a whole number`)
        const n = nText === null ? 10_000 : Math.min(Number(nText), 10_000)
        const tags = n === 0 ? [] : yield* repo.tags(owner.id, op.image, last, n)
        const name = `${owner.name.toLowerCase()}/${op.image}`
        const headers: Record<string, string> = { ...API_VERSION }
        if (nText !== null && n > 0 && tags.length === n)
          headers.link = `<${base(owner, op.image)}/tags/list?n=${n}&last=${encodeURIComponent(tags.at(-1)!)}>; rel="next"`
        return HttpServerResponse.jsonUnsafe({ name, tags }, { status: 200, headers })
      })

    // ---- routing ------------------------------------------------------------------------------

    type Work = (
      request: HttpServerRequest.HttpServerRequest,
      allowed: RegistryCaller,
      op: Op
    ) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, BlobStorage>
    const route = (need: "read" | "write", work: Work) =>
      registryRoute(need, (request, allowed, params) => {
        const op = parseOp(params["*"] ?? "")
        return op === undefined
          ? Effect.succeed(ociError(404, "NAME_UNKNOWN", "no such route"))
          : work(request, allowed, op)
      })
    const table: Record<string, Record<Op["kind"], ReturnType<typeof route> | undefined>> = {
      GET: {
        uploads: route("write", uploadStatus),
        blob: route("read", getBlob),
        manifest: route("read", getManifest),
        tags: route("read", listTags)
      },
      POST: {
        uploads: route("write", (request, allowed, op) => startUpload(request, allowed, op.image)),
        blob: undefined,
        manifest: undefined,
        tags: undefined
      },
      PATCH: { uploads: route("write", patchUpload), blob: undefined, manifest: undefined, tags: undefined },
      PUT: {
        uploads: route("write", finishUpload),
        blob: undefined,
        manifest: route("write", putManifest),
        tags: undefined
      },
      DELETE: {
        uploads: route("write", cancelUpload),
        blob: route("write", deleteBlob),
        manifest: route("write", deleteManifest),
        tags: undefined
      }
    }

    const dispatch = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const op = parseOp(params["*"] ?? "")
      if (op === undefined) return ociError(404, "NAME_UNKNOWN", "no such registry route")
      if (!IMAGE.test(op.image))
        return ociError(
          400,
          "NAME_INVALID",
          `"${op.image}" is no image name: lower-case letters and digits, separated by one of . _ - or /`
        )
      if (op.kind === "uploads" && request.method === "POST" && op.uuid !== "")
        return ociError(404, "BLOB_UPLOAD_UNKNOWN", "POST starts an upload at …/blobs/uploads/")
      const method = request.method === "HEAD" ? "GET" : request.method
      const handler = table[method]?.[op.kind]
      if (handler === undefined) return ociError(405, "UNSUPPORTED", `${request.method} is not supported here`)
      return yield* handler
    })

    /** `GET /v2/`: whether the registry is there, and who calls (401 with the challenge for nobody). */
    const callerOf = (request: HttpServerRequest.HttpServerRequest) => {
      const credentials = parseAuthorization(request.headers["authorization"])
      if (credentials.kind === "none") return Effect.succeed(undefined)
      if (credentials.kind === "token")
        return tokens.resolve(credentials.token) ?? authenticator.byToken(credentials.token)
      return authenticator.byBasic(
        credentials.username,
        credentials.password,
        request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
      )
    }
    const unauthorized = (message: string) =>
      ociError(401, "UNAUTHORIZED", message, null, { "www-authenticate": challenge })

    const support = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      if (parseAuthorization(request.headers["authorization"]).kind === "none")
        return unauthorized("sign in: get a token at /v2/token with your user name and a password or access token")
      const caller = yield* Effect.result(callerOf(request))
      if (caller._tag === "Failure") return unauthorized(caller.failure.message)
      return HttpServerResponse.jsonUnsafe({}, { status: 200, headers: API_VERSION })
    })

    /**
     * `GET /v2/_catalog` (the Docker registry API's catalog; the OCI distribution spec leaves it
     * out): the images the caller may read, `owner/image` in byte order, paged with `n` and `last`
     * as the tags list is (a `Link` to the next page when the page is full).
     */
    const catalog = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const resolved = yield* Effect.result(callerOf(request))
      if (resolved._tag === "Failure") return unauthorized(resolved.failure.message)
      const caller = resolved.success
      if (caller !== undefined) {
        const refused = accountRefusal(caller.user, settings.server.ROOT_URL)
        if (refused !== undefined) return ociError(403, "DENIED", refused)
        if (caller.scopes !== undefined) {
          const missing = missingScopeMessage(caller.scopes, "read", ["package"])
          if (missing !== undefined) return ociError(403, "DENIED", missing)
        }
      }
      const query = new URL(request.url, "http://x").searchParams
      const nText = query.get("n")
      if (nText !== null && !/^\d+$/.test(nText))
        return ociError(400, "UNSUPPORTED", `n=${nText}: expected a whole number`)
      const n = nText === null ? CATALOG_PAGE : Math.min(Number(nText), CATALOG_PAGE)
      let after = query.get("last") ?? ""
      const names: Array<string> = []
      const readable = new Map<number, boolean>()
      const mayRead = (ownerId: number) =>
        Effect.gen(function* () {
          const known = readable.get(ownerId)
          if (known !== undefined) return known
          const owner = yield* users.findById(ownerId)
          let allowed = false
          if (Option.isSome(owner)) {
            allowed = atLeast(yield* policy.accessMode(caller, owner.value), "read")
            // A public-only token reaches no private owner (as the registry gate).
            if (caller?.scopes?.publicOnly === true && owner.value.visibility === "private") allowed = false
          }
          readable.set(ownerId, allowed)
          return allowed
        })
      // Pages of the table until `n` visible names (what the caller may not read is skipped).
      while (names.length < n) {
        const batch = yield* repo.catalog(after, Math.max(n - names.length, 100))
        for (const row of batch) {
          if (names.length === n) break
          if (yield* mayRead(row.ownerId)) names.push(row.name)
        }
        if (batch.length === 0) break
        after = batch.at(-1)!.name
        if (names.length === n) break
      }
      const headers: Record<string, string> = { ...API_VERSION }
      if (nText !== null && n > 0 && names.length === n)
        headers.link = `</v2/_catalog?n=${n}&last=${encodeURIComponent(names.at(-1)!)}>; rel="next"`
      return HttpServerResponse.jsonUnsafe({ repositories: names }, { status: 200, headers })
    })

    /** `GET /v2/token`: a registry token for the caller (anonymous callers get one too). */
    const token = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const caller = yield* Effect.result(callerOf(request))
      if (caller._tag === "Failure") return unauthorized(caller.failure.message)
      if (caller.success !== undefined) {
        const refused = accountRefusal(caller.success.user, settings.server.ROOT_URL)
        if (refused !== undefined) return ociError(403, "DENIED", refused)
      }
      const minted = tokens.mint(caller.success)
      return HttpServerResponse.jsonUnsafe(
        {
          token: minted,
          access_token: minted,
          expires_in: TOKEN_LIFETIME_SECONDS,
          issued_at: new Date().toISOString()
        },
        { status: 200, headers: { ...API_VERSION, "cache-control": "no-store" } }
      )
    })

    const withErrors = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
      Effect.catch(effect, (error) => {
        const { status, message } =
          error instanceof Errors.TooManyRequests ? { status: 429, message: error.message } : statusAndMessage(error)
        return Effect.succeed(render(status, message))
      })

    return Layer.mergeAll(
      HttpRouter.add("GET", "/v2/", withErrors(support)),
      HttpRouter.add("GET", "/v2/token", withErrors(token)),
      HttpRouter.add("GET", "/v2/_catalog", withErrors(catalog)),
      ...(["GET", "POST", "PATCH", "PUT", "DELETE"] as const).map((method) =>
        HttpRouter.add(method, "/v2/:owner/*", dispatch)
      )
    )
  })
)

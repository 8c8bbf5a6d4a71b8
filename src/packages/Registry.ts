// What every registry under /api/packages/{owner}/<type>/… shares (Forgejo's
// routers/api/packages/api.go, services/context/package.go; CONTRACT-PACKAGES §2): who calls,
// whose packages, with which access, and serving a stored file. Registries answer in their own
// formats, so these are raw routes; the checks here answer in plain text, as Forgejo's middleware.
//
// Where Forgejo's answers are quirks, Hearth answers as HTTP means them: 401 (with
// `WWW-Authenticate`) only when credentials are missing or wrong, 403 for a caller whose valid
// credentials do not allow what it asks (a token without the package scope, a reader writing),
// and 404 for an owner the caller may not see at all (Forgejo: 401 for all of these).
import { Data, Effect, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { accountRefusal } from "../auth/AccountState.ts"
import { parseAuthorization, queryToken } from "../auth/Authentication.ts"
import { Authenticator } from "../auth/Authenticator.ts"
import { missingScopeMessage } from "../auth/Scopes.ts"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { type AccessMode, atLeast } from "../lib/AccessMode.ts"
import { contentDisposition } from "../storage/ContentType.ts"
import { parseRange } from "../storage/Http.ts"
import { blobBody } from "../storage/Serve.ts"
import { BlobStorage } from "../storage/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { PackagePolicy } from "./Policy.ts"
import type { FileRow } from "./Repo.ts"

/** Forgejo's realm, kept: clients show it when they ask for credentials. */
export const REALM = 'Basic realm="Gitea Package API"'

/** A refusal of the shared checks: plain text, as Forgejo's package middleware answers. */
export class RegistryDenied extends Data.TaggedError("RegistryDenied")<{
  readonly status: number
  readonly message: string
}> {}

export interface RegistryCaller {
  readonly owner: UserRow
  readonly caller: Principal | undefined
  readonly mode: AccessMode
}

/** A plain-text answer (`text/plain; charset=utf-8`, nosniff), with the realm on a 401. */
export const plainText = (status: number, message: string): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.text(`${message}\n`, {
    status,
    contentType: "text/plain; charset=utf-8",
    headers: {
      "x-content-type-options": "nosniff",
      ...(status === 401 ? { "www-authenticate": REALM } : {})
    }
  })

/** The status and message of an error a service returned (NotFound has no message). */
export const statusAndMessage = (error: unknown): { readonly status: number; readonly message: string } => {
  const status = Errors.statusOf(error) ?? 500
  const message =
    status === 404
      ? "package does not exist"
      : typeof (error as { message?: unknown }).message === "string"
        ? (error as { message: string }).message
        : "internal error"
  return { status, message }
}

/**
 * A registry's own bearer tokens (the container registry's `/v2/token`): the caller a token names
 * (undefined: anonymous), or `undefined` instead of an effect when the token is not one of its own
 * (then it is an access token).
 */
export type BearerResolver = (token: string) => Effect.Effect<Principal | undefined, Errors.Unauthorized> | undefined

/** Builds the gate once the services are at hand. */
export const makeRegistryGate = Effect.gen(function* () {
  const settings = yield* Settings
  const authenticator = yield* Authenticator
  const users = yield* UsersRepo
  const policy = yield* PackagePolicy

  const callerOf = (request: HttpServerRequest.HttpServerRequest, bearer: BearerResolver | undefined) => {
    let credentials = parseAuthorization(request.headers["authorization"])
    if (credentials.kind === "none") {
      // `?token=` or `?access_token=`: Forgejo takes them on registries too.
      const token = queryToken(request.url)
      if (token !== "" && settings.security.DISABLE_QUERY_AUTH_TOKEN)
        return Effect.fail(
          new RegistryDenied({
            status: 401,
            message:
              "tokens in the query string are disabled on this server ([security] DISABLE_QUERY_AUTH_TOKEN): " +
              "send the token in the Authorization header instead"
          })
        )
      if (token !== "") credentials = { kind: "token", token }
    }
    const resolved: Effect.Effect<Principal | undefined, Errors.Unauthorized | Errors.TooManyRequests> =
      credentials.kind === "none"
        ? Effect.succeed(undefined)
        : credentials.kind === "token"
          ? (bearer?.(credentials.token) ?? authenticator.byToken(credentials.token))
          : authenticator.byBasic(
              credentials.username,
              credentials.password,
              request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
            )
    return Effect.mapError(
      resolved,
      (e) =>
        new RegistryDenied({
          status: e instanceof Errors.TooManyRequests ? 429 : 401,
          message: e instanceof Errors.TooManyRequests ? "too many failed sign-ins, try again later" : e.message
        })
    )
  }

  /** The caller, the owner of the path and the caller's access, or why not (`need` of the route). */
  return (
    request: HttpServerRequest.HttpServerRequest,
    ownerName: string,
    need: "read" | "write",
    bearer?: BearerResolver
  ): Effect.Effect<RegistryCaller, RegistryDenied> =>
    Effect.gen(function* () {
      const caller = yield* callerOf(request, bearer)
      if (caller !== undefined) {
        const refused = accountRefusal(caller.user, settings.server.ROOT_URL)
        if (refused !== undefined) return yield* new RegistryDenied({ status: 403, message: refused })
      }
      const found = yield* users.findByName(ownerName)
      if (Option.isNone(found)) return yield* new RegistryDenied({ status: 404, message: "Not found." })
      const owner = found.value
      const mode = yield* policy.accessMode(caller, owner)
      if (!atLeast(mode, need)) {
        if (caller === undefined)
          return yield* new RegistryDenied({
            status: 401,
            message: `sign in (a password or a token with ${need}:package) to ${need} the packages of ${owner.name}`
          })
        if (mode === "none") return yield* new RegistryDenied({ status: 404, message: "Not found." })
        return yield* new RegistryDenied({
          status: 403,
          message: `${caller.user.name} may ${mode === "read" ? "read but not write" : "not use"} the packages of ${owner.name}`
        })
      }
      if (caller?.scopes !== undefined) {
        const missing = missingScopeMessage(caller.scopes, need, ["package"])
        if (missing !== undefined) return yield* new RegistryDenied({ status: 403, message: missing })
        // Forgejo: only a private owner is out of a public-only token's reach (limited is not).
        if (caller.scopes.publicOnly && owner.visibility === "private")
          return yield* new RegistryDenied({ status: 403, message: "token scope is limited to public packages" })
      }
      return { owner, caller, mode }
    })
})

/** How a registry answers a refusal or an error, in its own format (plain text, Pub's or npm's JSON, OCI's errors…). */
export type RenderError = (status: number, message: string) => HttpServerResponse.HttpServerResponse

/** A registry route's work, given the request, the allowed caller and the path's parameters. */
export type RegistryWork = (
  request: HttpServerRequest.HttpServerRequest,
  allowed: RegistryCaller,
  params: Readonly<Record<string, string | undefined>>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, BlobStorage>

/**
 * The one wrapper of every registry route: the gate (`need` on the path's `:owner`), then the work;
 * the gate's refusals and the services' errors are rendered by the registry's `render`.
 */
export const makeRegistryRoute = (render: RenderError, bearer?: BearerResolver) =>
  Effect.gen(function* () {
    const gate = yield* makeRegistryGate
    const storage = yield* BlobStorage
    return (need: "read" | "write", work: RegistryWork) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const params = yield* HttpRouter.params
        const allowed = yield* gate(request, params.owner ?? "", need, bearer)
        return yield* work(request, allowed, params)
      }).pipe(
        Effect.catch((error) => {
          const { status, message } = error instanceof RegistryDenied ? error : statusAndMessage(error)
          return Effect.succeed(render(status, message))
        }),
        Effect.provideService(BlobStorage, storage)
      )
  })

/** An HTTP date, as Last-Modified and If-Modified-Since carry it (whole seconds). */
const httpDate = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000).toUTCString()

/**
 * Serves a stored package file (Forgejo's helper.ServePackageFile, CONTRACT-PACKAGES §2.7):
 * `application/octet-stream` as an attachment, private caching, Last-Modified the file's creation,
 * one byte range (206/416), 304 for an unchanged If-Modified-Since or If-None-Match. `counted`
 * runs when bytes are served (a lead file's download count): not for a HEAD, a 304 or a 416.
 */
export const servePackageFile = (
  request: HttpServerRequest.HttpServerRequest,
  file: FileRow,
  counted: Effect.Effect<void>
) =>
  Effect.gen(function* () {
    const storage = yield* BlobStorage
    const lastModified = httpDate(file.createdAt)
    const etag = `"${file.sha256}"`
    const headers = {
      "content-disposition": contentDisposition(file.name, false),
      "access-control-expose-headers": "Content-Disposition",
      "x-content-type-options": "nosniff",
      "accept-ranges": "bytes",
      "cache-control": "private, max-age=300",
      "last-modified": lastModified,
      etag
    }
    const noneMatch = request.headers["if-none-match"]
    const modifiedSince = request.headers["if-modified-since"]
    const unchanged =
      noneMatch !== undefined
        ? noneMatch.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*")
        : modifiedSince !== undefined &&
          !Number.isNaN(Date.parse(modifiedSince)) &&
          Date.parse(modifiedSince) >= Date.parse(lastModified)
    if (unchanged) return HttpServerResponse.empty({ status: 304, headers })
    const range = parseRange(request.headers["range"], file.size)
    if (range === "unsatisfiable") {
      return HttpServerResponse.empty({ status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } })
    }
    const opened = yield* Effect.option(storage.open(file.sha256, range))
    if (Option.isNone(opened)) return plainText(404, "package file does not exist")
    const blob = opened.value
    if (request.method === "HEAD") {
      // Only what sends the bytes is a download: a client checking a file's headers before it
      // fetches it would otherwise count twice.
      return HttpServerResponse.empty({
        status: range === undefined ? 200 : 206,
        headers: { ...headers, "content-type": "application/octet-stream", "content-length": String(blob.length) }
      })
    }
    yield* counted
    // The file read into reused buffers and piped to the socket (a `raw` body), as src/storage/Serve.ts: the
    // Effect stream cost a fiber step per 64 KiB chunk, more than twice a bare server's CPU
    // (infra/bench/README.md, "Issue 21: bench:packages").
    return HttpServerResponse.raw(blobBody(request, blob), {
      status: range === undefined ? 200 : 206,
      contentType: "application/octet-stream",
      contentLength: blob.length,
      headers:
        range === undefined
          ? headers
          : { ...headers, "content-range": `bytes ${blob.range.start}-${blob.range.end}/${blob.size}` }
    })
  })

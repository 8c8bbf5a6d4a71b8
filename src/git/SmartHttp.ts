// Git smart HTTP (the protocol `git http-backend` speaks), served by running
// `git upload-pack|receive-pack --stateless-rpc` per request. It knows nothing about users or the
// database: a resolver decides whether a request may use a repository, where it lives on disk,
// and what environment git runs with there (e.g. one that refuses a push, src/git/Refusal.ts).
//
// Both directions are streamed (the request body is piped into git's stdin, git's stdout into the
// response), so a pack of any size passes through without being held in memory, and the git
// process is killed as soon as the client goes away.

import { PassThrough, Readable } from "node:stream"
import { createGunzip } from "node:zlib"
import { toIncomingMessage, toServerResponse } from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import { Data, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { REASON_STATUS } from "../http/Errors.ts"
import { run, spawnStream } from "./Git.ts"

export type Service = "upload-pack" | "receive-pack"

/** Why a request may not use a repository; each maps to one HTTP status. */
export class Denied extends Data.TaggedError("Denied")<{
  /** A refusal (Errors.REASON_STATUS; unauthorized with a Basic challenge), or moved: a 307 to `message`. */
  readonly reason: "not-found" | "unauthorized" | "forbidden" | "moved"
  readonly message?: string | undefined
}> {
  /** The repository lives at another URL now (renamed or transferred); git follows a 307. */
  static moved = (location: string) => new Denied({ reason: "moved", message: location })
  static notFound = (message?: string) => new Denied({ reason: "not-found", message })
  static unauthorized = (message?: string) => new Denied({ reason: "unauthorized", message })
  static forbidden = (message?: string) => new Denied({ reason: "forbidden", message })
}

export type Resolver<R = never> = (
  owner: string,
  repo: string,
  service: Service,
  request: HttpServerRequest.HttpServerRequest
) => Effect.Effect<
  {
    readonly path: string
    readonly pusher?: string | undefined
    readonly env?: Record<string, string> | undefined
    /** Where the push's post-receive hook reports the refs it moved (src/git/PushLog.ts), if anywhere. */
    readonly pushLog?: string | undefined
  },
  Denied,
  R
>

export interface Options<R = never, R2 = never> {
  readonly resolve: Resolver<R>
  /**
   * Called after receive-pack exited successfully (refs may have changed), before the response
   * ends; `pusher` and `pushLog` are what the resolver named, if anything.
   */
  readonly onPushed?:
    | ((
        owner: string,
        repo: string,
        pusher: string | undefined,
        pushLog: string | undefined
      ) => Effect.Effect<void, never, R2>)
    | undefined
  /** Realm of the Basic challenge; "Hearth" unless told. */
  readonly realm?: string | undefined
}

// The headers `git http-backend` sends on every dynamic response: never cache.
const noCache = {
  "cache-control": "no-cache, max-age=0, must-revalidate",
  pragma: "no-cache",
  expires: "Fri, 01 Jan 1980 00:00:00 GMT"
}

/** One pkt-line: four hex digits of length (header included), then the payload. */
export const pktLine = (payload: string): string => (payload.length + 4).toString(16).padStart(4, "0") + payload

const serviceOf = (name: string | null): Service | undefined =>
  name === "git-upload-pack" ? "upload-pack" : name === "git-receive-pack" ? "receive-pack" : undefined

// The client's `Git-Protocol` header becomes GIT_PROTOCOL for git, as http-backend does; only the
// characters of `key=value:key=value` lists pass, so nothing odd reaches git's environment.
const protocolEnv = (request: HttpServerRequest.HttpServerRequest): Record<string, string> => {
  const value = request.headers["git-protocol"]
  return value !== undefined && /^[A-Za-z0-9=:._-]{1,256}$/.test(value) ? { GIT_PROTOCOL: value } : {}
}

const plain = (status: number, message: string, headers: Record<string, string> = {}) =>
  HttpServerResponse.text(`${message}\n`, { status, headers: { ...noCache, ...headers } })

// Statuses as the API's (Errors.REASON_STATUS); the body is plain text for git clients.
const deniedResponse = (denied: Denied, realm: string) => {
  switch (denied.reason) {
    case "not-found":
      return plain(REASON_STATUS["not-found"], denied.message ?? "Repository not found")
    case "unauthorized":
      return plain(REASON_STATUS.unauthorized, denied.message ?? "Authentication required", {
        "www-authenticate": `Basic realm="${realm}"`
      })
    case "forbidden":
      return plain(REASON_STATUS.forbidden, denied.message ?? "Forbidden")
    case "moved":
      return HttpServerResponse.empty({ status: 307, headers: { ...noCache, location: denied.message ?? "/" } })
  }
}

// `{name}.git` or `{name}`: both address the same repository, as in Forgejo.
const repoName = (segment: string) => (segment.endsWith(".git") ? segment.slice(0, -4) : segment)

/**
 * Handlers for the three smart HTTP endpoints, as an `HttpRouter` layer:
 * `GET /:owner/:repo/info/refs?service=…`, `POST /:owner/:repo/git-upload-pack`,
 * `POST /:owner/:repo/git-receive-pack` (`:repo` with or without `.git`).
 */
export const layer = <R, R2>(options: Options<R, R2>) =>
  Layer.mergeAll(
    HttpRouter.add("GET", "/:owner/:repo/info/refs", infoRefs(options)),
    HttpRouter.add("POST", "/:owner/:repo/git-upload-pack", rpc(options, "upload-pack")),
    HttpRouter.add("POST", "/:owner/:repo/git-receive-pack", rpc(options, "receive-pack"))
  )

const target = <R>(options: Options<R, any>, service: Service) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const params = yield* HttpRouter.params
    const owner = params.owner ?? ""
    const repo = repoName(params.repo ?? "")
    const resolved = yield* options.resolve(owner, repo, service, request)
    return {
      request,
      owner,
      repo,
      path: resolved.path,
      pusher: resolved.pusher,
      env: resolved.env,
      pushLog: resolved.pushLog
    }
  })

/** The ref advertisement, framed as http-backend frames it. */
export const infoRefs = <R, R2>(options: Options<R, R2>) =>
  Effect.gen(function* () {
    const request = yield* HttpServerRequest.HttpServerRequest
    const service = serviceOf(new URL(request.url, "http://x").searchParams.get("service"))
    // Without `?service=` a client asks for the "dumb" protocol, which Hearth does not serve.
    if (service === undefined) return plain(403, "Only the smart HTTP protocol is supported")
    const found = yield* target(options, service)
    const env = protocolEnv(request)
    const result = yield* run([service, "--stateless-rpc", "--advertise-refs", "--", found.path], { env })
    // Protocol v2 starts with its capability advertisement, without the service header
    // (git http-backend does the same).
    const header = env.GIT_PROTOCOL?.split(":").includes("version=2")
      ? ""
      : `${pktLine(`# service=git-${service}\n`)}0000`
    return HttpServerResponse.uint8Array(Buffer.concat([Buffer.from(header), result.stdout]), {
      contentType: `application/x-git-${service}-advertisement`,
      headers: noCache
    })
  }).pipe(
    Effect.catchTag("Denied", (denied) => Effect.succeed(deniedResponse(denied, options.realm ?? "Hearth"))),
    Effect.catchTag("GitError", (error) =>
      Effect.as(Effect.logWarning("git advertisement failed", error.message), plain(500, "git failed"))
    )
  )

/** `POST …/git-upload-pack|git-receive-pack`: one stateless RPC round, streamed both ways. */
export const rpc = <R, R2>(options: Options<R, R2>, service: Service) =>
  Effect.gen(function* () {
    const found = yield* target(options, service)
    const { request } = found
    if (request.headers["content-type"] !== `application/x-git-${service}-request`) {
      return plain(415, "Unsupported Media Type")
    }
    const encoding = request.headers["content-encoding"]
    if (encoding !== undefined && encoding !== "gzip" && encoding !== "x-gzip" && encoding !== "identity") {
      return plain(415, `Unsupported Content-Encoding ${encoding}`)
    }
    const context = yield* Effect.context<R2>()
    const onPushed =
      service === "receive-pack" && options.onPushed !== undefined
        ? () => Effect.runPromiseWith(context)(options.onPushed!(found.owner, found.repo, found.pusher, found.pushLog))
        : undefined

    const child = yield* spawnStream([service, "--stateless-rpc", "--", found.path], {
      env: { ...protocolEnv(request), ...found.env }
    })
    let exited = false
    let killed = false
    const kill = () => {
      if (exited || killed) return
      killed = true
      child.kill("SIGKILL")
    }
    const stderr: Array<Buffer> = []
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderr.length < 64) stderr.push(chunk)
    })

    // Request body → (gunzip) → git's stdin; `pipe` applies backpressure in both hops.
    const source = requestBody(request)
    child.stdin.on("error", () => {}) // git may stop reading early (e.g. it rejected the request)
    if (encoding === "gzip" || encoding === "x-gzip") {
      const gunzip = createGunzip()
      // A corrupt body: git must not act on a truncated request.
      gunzip.on("error", kill)
      source.pipe(gunzip).pipe(child.stdin)
    } else {
      source.pipe(child.stdin)
    }
    source.on("error", kill)

    // git's stdout → the response. The body ends only once git has exited (and, after a push,
    // once `onPushed` ran), so the client sees the database already updated when its push returns.
    const body = new PassThrough()
    child.stdout.pipe(body, { end: false })
    child.on("error", (error) => body.destroy(error))
    child.on("close", (code, signal) => {
      exited = true
      if (code !== 0) {
        if (killed) return body.end()
        const message = Buffer.concat(stderr).toString("utf8").trim()
        Effect.runFork(Effect.logWarning(`git ${service} exited with ${code ?? signal}`, message))
        body.end()
        return
      }
      if (onPushed === undefined) return body.end()
      onPushed().then(
        () => body.end(),
        (error) => body.destroy(error)
      )
    })
    // The response is gone (client disconnected or the write failed): stop git now.
    body.on("close", kill)
    const nodeResponse = nodeResponseOf(request)
    nodeResponse?.on("close", kill)

    return HttpServerResponse.raw(body, {
      contentType: `application/x-git-${service}-result`,
      headers: noCache
    })
  }).pipe(Effect.catchTag("Denied", (denied) => Effect.succeed(deniedResponse(denied, options.realm ?? "Hearth"))))

// The Node request itself when there is one (no copy, native backpressure); otherwise the
// platform's body stream adapted to a Node stream.
const requestBody = (request: HttpServerRequest.HttpServerRequest): Readable => {
  const source = toIncomingMessage(request) as unknown
  return source instanceof Readable ? source : NodeStream.toReadableNever(request.stream)
}

const nodeResponseOf = (request: HttpServerRequest.HttpServerRequest) => {
  try {
    const response = toServerResponse(request) as unknown
    return response !== null && typeof response === "object" && "on" in response
      ? (response as NodeJS.EventEmitter)
      : undefined
  } catch {
    return undefined
  }
}

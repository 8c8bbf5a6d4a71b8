// The HTTP server: the API routes, the OpenAPI document and its docs page, and the
// response rules every route shares. Routes are built completely before the port is opened, so
// no request is accepted that nothing would answer. Slow and idle clients are bounded here
// ([server] READ_HEADER_TIMEOUT, BODY_IDLE_TIMEOUT, KEEP_ALIVE_*, MAX_CONNECTIONS), and so are
// the answers no single route gives: 405 with `Allow` for a known path, 503 while the database
// is down.

import { createServer, type IncomingMessage, type Server, ServerResponse } from "node:http"
import type { Socket } from "node:net"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer } from "effect"
import * as ByteSize from "effect/ByteSize"
import {
  FindMyWay,
  HttpIncomingMessage,
  HttpMiddleware,
  HttpRouter,
  HttpServer,
  HttpServerError,
  HttpServerResponse
} from "effect/http"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { FederationHttp } from "../federation/Http.ts"
import { federationPaths } from "../federation/Operations.ts"
import { FederationRoutes } from "../federation/Routes.ts"
import { HearthApi } from "./Api.ts"
import { ActivitiesHttp } from "./activities/Http.ts"
import { AdminHttp, AdminUsersHttp } from "./admin/Http.ts"
import { AssigneesHttp } from "./assignees/Http.ts"
import { AuthenticationLive } from "./auth/Authentication.ts"
import { AvatarsHttp } from "./avatars/Http.ts"
import { AvatarRoutes } from "./avatars/Routes.ts"
import { BlocksHttp } from "./blocks/Http.ts"
import { BranchesHttp } from "./branches/Http.ts"
import { resolveSettings, Settings, type SettingsShape } from "./config/Settings.ts"
import { ContentsHttp } from "./contents/Http.ts"
import { EmailsHttp } from "./emails/Http.ts"
import { FlagsHttp } from "./flags/Http.ts"
import { FollowsHttp } from "./follows/Http.ts"
import { ForksHttp } from "./forks/Http.ts"
import { GitDataHttp } from "./gitdata/Http.ts"
import { GpgExportRoutes, GpgHttp } from "./gpg/Http.ts"
import { answerOutage } from "./health/Database.ts"
import { HealthRoutes } from "./health/Http.ts"
import { JsonBodyCheckLive, RequestTargetCheck } from "./http/Edge.ts"
import { narrowGroups } from "./http/Group.ts"
import { ErrorResponsesLive } from "./http/Middleware.ts"
import { InstanceHttp } from "./instance/Http.ts"
import { AttachmentDownloadRoutes, IssueAttachmentsHttp } from "./issues/AttachmentsHttp.ts"
import { IssueDepsHttp } from "./issues/DepsHttp.ts"
import { IssueExtrasHttp } from "./issues/ExtrasHttp.ts"
import { IssuesHttp, LabelsHttp, MilestonesHttp } from "./issues/Http.ts"
import { IssueTemplatesHttp } from "./issues/TemplatesHttp.ts"
import { IssueTimesHttp } from "./issues/TimesHttp.ts"
import { JobsHttp } from "./jobs/Http.ts"
import { KeysHttp } from "./keys/Http.ts"
import { LanguagesHttp } from "./languages/Http.ts"
import { MarkdownHttp } from "./markdown/Http.ts"
import { MirrorsHttp } from "./mirrors/Http.ts"
import { MiscHttp } from "./misc/Http.ts"
import { NotificationsHttp } from "./notifications/Http.ts"
import { OAuth2Http } from "./oauth2/Http.ts"
import { OrgsHttp } from "./orgs/Http.ts"
import { ContainerRoutes } from "./packages/container/Routes.ts"
import { GenericRoutes } from "./packages/generic/Routes.ts"
import { PackageCleanupHttp, PackagesHttp } from "./packages/Http.ts"
import { NpmRoutes } from "./packages/npm/Routes.ts"
import { PubRoutes } from "./packages/pub/Routes.ts"
import { VagrantRoutes } from "./packages/vagrant/Routes.ts"
import { ProtectionHttp } from "./protection/Http.ts"
import { PullsHttp } from "./pulls/Http.ts"
import { QuotaHttp } from "./quota/Http.ts"
import { ReleaseDownloadRoutes } from "./releases/Download.ts"
import { ReleasesHttp } from "./releases/Http.ts"
import { RepoAssignmentLive } from "./repos/Assignment.ts"
import { GitHttpRoutes } from "./repos/GitHttp.ts"
import { ReposHttp } from "./repos/Http.ts"
import { ReviewsHttp } from "./reviews/Http.ts"
import { SocialHttp } from "./social/Http.ts"
import { StatusesHttp } from "./statuses/Http.ts"
import { TemplatesHttp } from "./templates/Http.ts"
import { TokensHttp } from "./tokens/Http.ts"
import { TopicsHttp } from "./topics/Http.ts"
import { TransfersHttp } from "./transfers/Http.ts"
import { TwoFactorHttp } from "./twofa/Http.ts"
import { AccountRedirectLive } from "./users/Assignment.ts"
import { UsersHttp } from "./users/Http.ts"
import { UserSettingsHttp } from "./usersettings/Http.ts"
import { WebRoutes } from "./web/Routes.ts"
import { WebhooksHttp } from "./webhooks/Http.ts"
import { WikiHttp } from "./wiki/Http.ts"

const securitySchemes = {
  BasicAuth: { type: "http", scheme: "basic", description: "The account's password, or an access token as password." },
  AuthorizationHeaderToken: {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: 'API tokens must be prepended with "token" followed by a space ("Bearer" works too).'
  },
  TOTPHeader: {
    type: "apiKey",
    in: "header",
    name: "X-FORGEJO-OTP",
    description: "The current two-factor passcode, with Basic password authentication when two-factor is on."
  },
  // Forgejo's descriptions (src/auth/Authentication.ts applies them).
  SudoParam: {
    type: "apiKey",
    in: "query",
    name: "sudo",
    description: "Sudo API request as the user provided as the key. Admin privileges are required."
  },
  SudoHeader: {
    type: "apiKey",
    in: "header",
    name: "Sudo",
    description: "Sudo API request as the user provided as the key. Admin privileges are required."
  }
} as const

/**
 * A router wildcard (`…/contents/*`) as an OpenAPI path parameter named as Forgejo names it
 * (`{filepath}`, `{ref}`, `{pageName}`): `*` is no valid parameter name for OpenAPI tools. A
 * wildcard route also answers its bare path (`/contents`): where Forgejo documents that path as an
 * operation of its own, it is listed so, under Forgejo's operationId.
 */
const WILDCARD_NAMES: Record<string, string> = { refs: "ref", page: "pageName", revisions: "pageName" }
const BARE_OPERATIONS: Record<string, Record<string, string>> = {
  contents: { get: "repoGetContentsList", post: "repoChangeFiles" },
  refs: { get: "repoListAllGitRefs" }
}
type PathItem = Record<string, { readonly operationId?: string; readonly parameters?: ReadonlyArray<{ name: string }> }>
const namedWildcards = (paths: OpenApi.OpenAPISpec["paths"]): OpenApi.OpenAPISpec["paths"] => {
  const named: Record<string, PathItem> = {}
  for (const [path, item] of Object.entries(paths as Record<string, PathItem>)) {
    const match = /\/([^/]+)\/\*$/.exec(path)
    if (match === null) {
      named[path] = item
      continue
    }
    const segment = match[1]!
    const name = WILDCARD_NAMES[segment] ?? "filepath"
    const rename = (method: string, bare: boolean) => {
      const operation = item[method]!
      const parameters = (operation.parameters ?? []).flatMap((p) =>
        p.name !== "*" ? [p] : bare ? [] : [{ ...p, name }]
      )
      return bare
        ? { ...operation, parameters, operationId: BARE_OPERATIONS[segment]![method] }
        : { ...operation, parameters }
    }
    named[`${path.slice(0, -1)}{${name}}`] = Object.fromEntries(Object.keys(item).map((m) => [m, rename(m, false)]))
    const bare = Object.keys(item).filter((method) => BARE_OPERATIONS[segment]?.[method] !== undefined)
    if (bare.length > 0) named[path.slice(0, -2)] = Object.fromEntries(bare.map((m) => [m, rename(m, true)]))
  }
  return named as OpenApi.OpenAPISpec["paths"]
}

/**
 * The OpenAPI 3.1 document, with the scheme in use listed first; the federation's routes (served
 * beside HttpApi) are listed too when federation is on.
 */
export const openApiDocument = (rootUrl: string, federation = false) => {
  const spec = OpenApi.fromApi(HearthApi)
  const url = new URL(rootUrl)
  const other = url.protocol === "https:" ? "http:" : "https:"
  const base = rootUrl.replace(/\/$/, "")
  return {
    ...spec,
    paths: { ...namedWildcards(spec.paths), ...(federation ? federationPaths() : {}) },
    servers: [{ url: base }, { url: base.replace(url.protocol, other) }],
    // The credentials every route accepts (the authentication middleware reads them itself).
    components: { ...spec.components, securitySchemes },
    security: [
      { BasicAuth: [] },
      { AuthorizationHeaderToken: [] },
      { BasicAuth: [], TOTPHeader: [] },
      { SudoParam: [] },
      { SudoHeader: [] }
    ]
  }
}

// The browsable docs page bundles a 3 MB viewer; it is loaded on its first request rather than
// at start, which keeps ~14 MB out of every server that never shows it.
// It shows the served document itself (credentials included, so that "try it" can send them).
const docsPage = (rootUrl: string, federation: boolean) => {
  let docsHandler: ((request: Request) => Promise<Response>) | undefined
  return Effect.gen(function* () {
    const documented = HearthApi.annotate(OpenApi.Transform, () => openApiDocument(rootUrl, federation))
    docsHandler ??= HttpRouter.toWebHandler(
      HttpApiScalar.layer(documented, { path: "/api/swagger" }).pipe(Layer.provide(HttpServer.layerServices)),
      { disableLogger: true }
    ).handler
    const handler = docsHandler
    const response = yield* Effect.promise(() => handler(new Request("http://hearth.internal/api/swagger")))
    return HttpServerResponse.fromWeb(response)
  })
}

const DocsRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    // Generated on the first request, not at start: it takes ~0.2 s that start-up should not wait for.
    let document: string | undefined
    return Layer.mergeAll(
      HttpRouter.add(
        "GET",
        "/api/swagger.v1.json",
        Effect.sync(() => {
          document ??= JSON.stringify(openApiDocument(settings.server.ROOT_URL, settings.federation.ENABLED))
          return HttpServerResponse.text(document, { contentType: "application/json" })
        })
      ),
      HttpRouter.add("GET", "/api/swagger", docsPage(settings.server.ROOT_URL, settings.federation.ENABLED))
    )
  })
)

export const ApiHandlers = Layer.mergeAll(
  MiscHttp,
  InstanceHttp,
  UsersHttp,
  TokensHttp,
  TwoFactorHttp,
  AdminUsersHttp,
  AdminHttp,
  OrgsHttp,
  ReposHttp,
  SocialHttp,
  BranchesHttp,
  ContentsHttp,
  GitDataHttp,
  TemplatesHttp,
  ForksHttp,
  JobsHttp,
  TransfersHttp,
  MirrorsHttp,
  FollowsHttp,
  ActivitiesHttp,
  BlocksHttp,
  EmailsHttp,
  UserSettingsHttp,
  OAuth2Http,
  GpgHttp,
  KeysHttp,
  LanguagesHttp,
  MarkdownHttp,
  FederationHttp,
  QuotaHttp,
  TopicsHttp,
  AssigneesHttp,
  FlagsHttp,
  AvatarsHttp,
  IssueExtrasHttp,
  IssueDepsHttp,
  IssueTimesHttp,
  IssueTemplatesHttp,
  IssueAttachmentsHttp,
  IssuesHttp,
  LabelsHttp,
  MilestonesHttp,
  NotificationsHttp,
  StatusesHttp,
  ProtectionHttp,
  WikiHttp,
  PullsHttp,
  ReviewsHttp,
  WebhooksHttp,
  ReleasesHttp,
  PackagesHttp,
  PackageCleanupHttp
)

/**
 * What API handlers read while they run (paging reads Settings: src/http/Pagination.ts); every other
 * service at build. The server starts each request with them (`requestContext`), so that no route
 * adds them per request.
 */
const API_PER_REQUEST = [Settings] as const

const ApiRoutes = HttpApiBuilder.layer(HearthApi).pipe(
  Layer.provide(narrowGroups(HearthApi, ApiHandlers, API_PER_REQUEST, "server")),
  Layer.provide([JsonBodyCheckLive, AccountRedirectLive, RepoAssignmentLive, AuthenticationLive, ErrorResponsesLive])
)

export const AppRoutes = Layer.mergeAll(
  ApiRoutes,
  DocsRoutes,
  HealthRoutes,
  GitHttpRoutes,
  GpgExportRoutes,
  AttachmentDownloadRoutes,
  ReleaseDownloadRoutes,
  AvatarRoutes,
  GenericRoutes,
  ContainerRoutes,
  PubRoutes,
  NpmRoutes,
  VagrantRoutes,
  FederationRoutes,
  WebRoutes,
  RequestTargetCheck
)

/** How long and how many: the bounds on slow, idle and numerous clients, in milliseconds. */
export interface ClientLimits {
  /** READ_HEADER_TIMEOUT: from the connection (or the previous request) to the end of the headers. */
  readonly headerTimeoutMs: number
  /** BODY_IDLE_TIMEOUT: longest pause of a client while a request body arrives or a response leaves. */
  readonly idleTimeoutMs: number
  readonly keepAliveTimeoutMs: number
  /** 0: no limit. */
  readonly keepAliveMaxRequests: number
  readonly maxConnections: number
}

const millis = (seconds: number): number => Math.round(seconds * 1000)

/** The `[server]` settings as `ClientLimits`. */
export const clientLimits = (server: SettingsShape["server"]): ClientLimits => ({
  headerTimeoutMs: millis(server.READ_HEADER_TIMEOUT),
  idleTimeoutMs: millis(server.BODY_IDLE_TIMEOUT),
  keepAliveTimeoutMs: millis(server.KEEP_ALIVE_TIMEOUT),
  keepAliveMaxRequests: server.KEEP_ALIVE_MAX_REQUESTS,
  maxConnections: server.MAX_CONNECTIONS
})

const clamp = (ms: number, low: number, high: number) => Math.min(high, Math.max(low, Math.round(ms)))

/**
 * What moves on a socket as its client sends or reads: bytes read, and the send queue. A response
 * written in one piece (a blob held in memory) is counted in `bytesWritten` at once and stays in
 * `writableLength` until the last byte leaves; only libuv's queue (`writeQueueSize`, the accessor
 * Node's own net module reads) shrinks while the client reads it.
 */
const movement = (socket: Socket): string => {
  const queued = (socket as { _handle?: { writeQueueSize?: number } })._handle?.writeQueueSize ?? 0
  return `${socket.bytesRead}/${socket.bytesWritten}/${socket.writableLength}/${queued}`
}

/** What the sweep last saw of a connection: its movement, and since when it has not changed. */
interface Watched {
  seen: string
  since: number
}

/**
 * The request a connection is on, or was last on: its parser's current message (Node's
 * `parser.incoming`, set when the request's headers complete, kept until the next request's or the
 * connection's end). Read by the sweep only, so that no request pays for being watched.
 */
const currentRequest = (socket: Socket): IncomingMessage | undefined =>
  (socket as { parser?: { incoming?: IncomingMessage | null } | null }).parser?.incoming ?? undefined

/**
 * BODY_IDLE_TIMEOUT: a request whose client stalls — sends no byte of a body it has not finished,
 * or reads nothing of a response waiting to be sent — for longer than `idleMs` has its connection
 * closed. Only the gap is bounded, never the total: a push or clone that keeps moving is never cut.
 * A pause that is Hearth's own (the body is not being read yet, or git is still working) is not
 * the client's and does not count. A reader is seen to move when the system's send buffer drains,
 * which it does in bursts (the kernel wakes the writer once much of the buffer is free): the limit
 * must stay well above the time a slow client takes to read that much, as the default's minute is.
 * One sweep over the open connections every quarter of the limit: no timer, listener or entry per
 * request (they were a few per cent of the CPU of the cheapest requests, infra/bench/README.md
 * "Issue 16: per-request cost, session 29"); a connection is watched from its start to its close,
 * and waits for its client only while its current request's body is unfinished or its response's
 * bytes are queued.
 */
const watchStalledClients = (server: Server, idleMs: number) => {
  const open = new Map<Socket, Watched>()
  const sweep = () => {
    const now = Date.now()
    for (const [socket, entry] of open) {
      if (socket.destroyed) {
        open.delete(socket)
        continue
      }
      const request = currentRequest(socket)
      const seen = movement(socket)
      // Waiting for the client: for body bytes nobody holds back (nothing unread is buffered and
      // reading is not paused), or to take response bytes that are queued on the socket.
      const awaitingBody =
        request !== undefined &&
        !request.complete &&
        request.readableLength === 0 &&
        request.readableFlowing !== false &&
        !socket.isPaused()
      const awaitingReader = socket.writableLength > 0
      if (entry.since === 0 || seen !== entry.seen || !(awaitingBody || awaitingReader)) {
        entry.seen = seen
        entry.since = now
      } else if (now - entry.since >= idleMs) {
        open.delete(socket)
        socket.destroy()
      }
    }
  }
  const timer = setInterval(sweep, clamp(idleMs / 4, 25, 5_000))
  timer.unref()
  server.once("close", () => clearInterval(timer))
  const forget = function (this: Socket) {
    open.delete(this)
  }
  server.on("connection", (socket: Socket) => {
    // Closed at once by Node when over the cap (maxConnections): nothing to watch.
    if (socket.destroyed) return
    open.set(socket, { seen: "", since: 0 })
    socket.once("close", forget)
  })
  /** The open connections. */
  return () => open.keys()
}

/** `X-Content-Type-Options: nosniff` on every response, errors and 404s included. */
const NOSNIFF = "x-content-type-options"

/**
 * Node's response, adding `nosniff` to the headers `writeHead` is given (a route's own value wins,
 * as it did when set earlier). Setting it on each response up front instead made Node merge every
 * header of the response through `setHeader`, one validation each (its "progressive" path).
 */
class HearthResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  override writeHead(statusCode: number, ...rest: Array<any>): this {
    // Node's own reading: `(status, message?, headers?)`, the message only when it is a string.
    const message: string | undefined = typeof rest[0] === "string" ? rest[0] : undefined
    const given = rest[1] ?? (typeof rest[0] === "string" ? undefined : rest[0])
    if (Array.isArray(given) || this.hasHeader(NOSNIFF)) {
      if (!this.hasHeader(NOSNIFF) && !(given as Array<unknown>).some((h) => isNosniff(h))) {
        this.setHeader(NOSNIFF, "nosniff")
      }
      return super.writeHead(statusCode, message as string, given)
    }
    return super.writeHead(
      statusCode,
      message as string,
      given === undefined ? NOSNIFF_ONLY : { [NOSNIFF]: "nosniff", ...given }
    )
  }
}
const NOSNIFF_ONLY = Object.freeze({ [NOSNIFF]: "nosniff" })
const isNosniff = (header: unknown) =>
  (Array.isArray(header) ? header[0] : header)?.toString().toLowerCase() === NOSNIFF

/**
 * The Node server, with the client bounds (`ClientLimits`) and two guards effect's adapter lacks:
 * - effect's `NodeHttpServer.make` listens before the app's `request` handler is attached, and a
 *   request arriving in between would never be answered: such requests are held here and handed
 *   to the handler as soon as it is attached.
 * - `close()` only stops accepting and closes the connections idle at that moment; a keep-alive
 *   connection whose request finishes later would hold shutdown until its keepAliveTimeout
 *   (5 s). Once closing, each connection is closed as soon as its response is done.
 */
export const makeNodeServer = (limits: ClientLimits = clientLimits(resolveSettings({}).server)) => {
  const server = createServer({
    ServerResponse: HearthResponse,
    // No overall request deadline: a large push or clone may take longer than Node's default 300 s;
    // slow senders are bounded by the gaps they leave instead (watchStalledClients).
    requestTimeout: 0,
    // Set explicitly: Node derives its default from requestTimeout, and 0 there turned it off.
    headersTimeout: limits.headerTimeoutMs,
    // How often Node looks for connections past headersTimeout (its default, 30 s, is coarser
    // than a short limit).
    connectionsCheckingInterval: clamp(limits.headerTimeoutMs / 4, 25, 30_000),
    keepAliveTimeout: limits.keepAliveTimeoutMs
  })
  // Connections beyond the cap are closed as soon as they are accepted; open ones are unaffected.
  server.maxConnections = limits.maxConnections
  server.maxRequestsPerSocket = limits.keepAliveMaxRequests
  const connections = watchStalledClients(server, limits.idleTimeoutMs)
  // Once closing (and only then): each response done closes the connections left idle.
  const closeIdle = () => setImmediate(() => server.closeIdleConnections())
  const closeWhenDone = (response: ServerResponse) => response.once("finish", closeIdle)
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    // The responses in progress (Node's `_httpMessage`: a connection's response being written),
    // then every request that still arrives on an open connection.
    for (const socket of connections()) {
      const response = (socket as { _httpMessage?: ServerResponse | null })._httpMessage
      if (response instanceof ServerResponse && !response.writableFinished) closeWhenDone(response)
    }
    server.on("request", (_request: IncomingMessage, response: ServerResponse) => closeWhenDone(response))
    return close(callback)
  }) as typeof server.close
  const early: Array<readonly [IncomingMessage, ServerResponse]> = []
  let handler: ((request: IncomingMessage, response: ServerResponse) => void) | undefined
  const hold = (request: IncomingMessage, response: ServerResponse) => {
    if (handler === undefined) early.push([request, response])
  }
  server.on("request", hold)
  const onNewListener = (event: string | symbol, listener: (...args: Array<any>) => void) => {
    if (event !== "request") return
    server.off("newListener", onNewListener)
    handler = listener
    // Replayed once the handler is in place (it is added right after this event).
    queueMicrotask(() => {
      server.off("request", hold)
      for (const [request, response] of early.splice(0)) listener(request, response)
    })
  }
  server.on("newListener", onNewListener)
  return server
}

export interface ListenOptions {
  readonly host: string
  readonly port: number
}

// Every request's fiber starts from the context the server was started in, and effect copies that
// context, twice, each time it merges into it (an API route merges its group's few per-request
// services, src/http/Group.ts). The routes captured the services they use when they were built
// (the routes' types say a request needs only HttpServerRequest and Scope), so the requests start
// without the application's (~100) or those only its layers use: the command line's, the
// database client, the cluster and workflow engine that run durable jobs (22 → 9 entries). What
// effect's HTTP machinery reads while a request runs stays: loggers and log level, the body limit,
// HttpPlatform and Etag, and FileSystem and Path (multipart bodies are written to temp files); and
// what the API's handlers read per request (`API_PER_REQUEST`).
const BUILD_ONLY = [
  "hearth/",
  "effect/cli/",
  "~effect/cli/",
  "effect/sql/",
  "@effect/sql-pg/",
  "effect/cluster/",
  "effect/workflow/",
  "effect/process/",
  "effect/Terminal",
  "~effect/Stdio",
  "effect/Layer/CurrentMemoMap"
]

/** The server's context less what only building the application needed (exported for a test). */
export const requestContext = <A>(context: Context.Context<A>): Context.Context<A> =>
  Context.makeUnsafe(
    new Map(
      [...context.mapUnsafe].filter(
        ([key]) => PER_REQUEST_KEYS.has(key) || !BUILD_ONLY.some((prefix) => key.startsWith(prefix))
      )
    )
  )
const PER_REQUEST_KEYS: ReadonlySet<string> = new Set(API_PER_REQUEST.map((service) => service.key))

const STANDARD_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "QUERY"] as const

/**
 * Which methods each route path accepts, for 405 (the router itself only knows "no route"): filled
 * by `recording`, which every route layer registers through.
 */
const makeRouteMethods = (config: Partial<FindMyWay.RouterConfig>) => {
  // Noted while the routes are registered, put in a table of their own on the first request that
  // needs it (no route answered it): registering every route a second time took ~35 ms of start-up.
  const noted: Array<readonly [string, string]> = []
  const note = (method: string, path: string) => {
    noted.push([method, path])
  }
  let built: { readonly table: FindMyWay.Router<true>; readonly methods: ReadonlySet<string> } | undefined
  const build = () => {
    const table = FindMyWay.make<true>(config)
    const methods = new Set<string>()
    for (const [method, path] of noted) {
      // As the router registers a trailing `/*`: for the prefix alone too.
      for (const p of path.endsWith("/*") ? [path, path.slice(0, -2) || "/"] : [path]) {
        try {
          if (method === "*") {
            for (const m of STANDARD_METHODS) methods.add(m)
            table.all(p as FindMyWay.PathInput, true)
          } else {
            methods.add(method)
            table.on(method, p as FindMyWay.PathInput, true)
          }
        } catch {
          // Registered twice (e.g. `/x/*` and `/x`): already known.
        }
      }
    }
    return { table, methods }
  }
  const recording = (router: HttpRouter.HttpRouter, prefix = ""): HttpRouter.HttpRouter =>
    HttpRouter.HttpRouter.of({
      ...router,
      prefixed: (more) => recording(router.prefixed(more), `${prefix}${more.replace(/\/$/, "")}`),
      add: ((method, path, handler, options) => {
        note(method, `${prefix}${path}`)
        return router.add(method, path, handler, options)
      }) as HttpRouter.HttpRouter["add"],
      addAll: ((routes) => {
        for (const route of routes) note(route.method, `${prefix}${route.path}`)
        return router.addAll(routes)
      }) as HttpRouter.HttpRouter["addAll"]
    })
  /** The methods `url` accepts other than `method` (empty: the path is unknown). */
  const allowed = (method: string, url: string): Array<string> => {
    const { table, methods } = (built ??= build())
    return [...methods].filter((m) => m !== method && table.find(m, url) !== undefined)
  }
  return { recording, allowed }
}

const isRouteNotFound = (error: unknown): error is HttpServerError.HttpServerError =>
  HttpServerError.isHttpServerError(error) && error.reason._tag === "RouteNotFound"

/** Serves `AppRoutes` on host:port; closes gracefully (open requests finish) when the scope ends. */
export const serverLayer = (listen: ListenOptions) =>
  Layer.unwrap(
    Effect.gen(function* () {
      const settings = yield* Settings
      const errorUrl = `${settings.server.ROOT_URL}api/swagger`
      const routes = makeRouteMethods(yield* HttpRouter.RouterConfig)
      // Every route layer adds its routes through the recording router, which hands them on to the
      // real one (the router `toHttpEffect` creates and serves).
      const Recording = Layer.effect(
        HttpRouter.HttpRouter,
        Effect.map(HttpRouter.HttpRouter, (router: HttpRouter.HttpRouter) => routes.recording(router))
      )
      const routed = yield* HttpRouter.toHttpEffect(AppRoutes.pipe(Layer.provide(Recording)))
      const app = routed.pipe(
        // One place for what no route answers: a known path with another method is 405 with the
        // methods it accepts (as Forgejo's router, chi, answers); an unknown path stays 404.
        Effect.catchIf(isRouteNotFound, (error) => {
          const request = error.reason.request
          const allow = routes.allowed(request.method, request.url)
          if (allow.length === 0) return Effect.fail(error)
          return Effect.succeed(
            HttpServerResponse.jsonUnsafe(
              {
                message: `method ${request.method} is not allowed here; this path accepts ${allow.join(", ")}`,
                url: errorUrl
              },
              { status: 405, headers: { allow: allow.join(", ") } }
            )
          )
        }),
        // Routes outside the API (git over HTTP, key exports) whose database is down: 503, not 500.
        Effect.catchCause((cause) => answerOutage(cause, errorUrl) ?? Effect.failCause(cause))
      )
      const maxBody = ByteSize.bytes(settings.server.MAX_REQUEST_BODY)
      const logRequests = settings.log.LEVEL === "Debug" || settings.log.LEVEL === "Trace"
      const serving = Effect.flatMap(HttpServer.HttpServer, (server) =>
        logRequests ? server.serve(app, HttpMiddleware.logger) : server.serve(app)
      )
      const serve = Layer.effectDiscard(Effect.updateContext(serving, requestContext<Effect.Services<typeof serving>>))
      return serve.pipe(
        // In the server's own context, so that no request pays for a context update.
        Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, maxBody)),
        Layer.provideMerge(
          NodeHttpServer.layer(() => makeNodeServer(clientLimits(settings.server)), {
            ...listen,
            gracefulShutdownTimeout: "10 seconds"
          })
        )
      )
    })
  ).pipe(Layer.provide(NodeHttpServer.layerHttpServices))

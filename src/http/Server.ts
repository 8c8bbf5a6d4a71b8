// The HTTP server: the API routes, the OpenAPI document and its docs page, and the
// response rules every route shares. Routes are built completely before the port is opened, so
// no request is accepted that nothing would answer.
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpMiddleware, HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiScalar, OpenApi } from "effect/http-api"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { FederationHttp } from "../../federation/Http.ts"
import { FederationRoutes } from "../../federation/Routes.ts"
import { AdminUsersHttp } from "../admin/Http.ts"
import { BranchesHttp } from "../branches/Http.ts"
import { Settings } from "../config/Settings.ts"
import { ContentsHttp } from "../contents/Http.ts"
import { EmailsHttp } from "../emails/Http.ts"
import { FollowsHttp } from "../follows/Http.ts"
import { ForksHttp } from "../forks/Http.ts"
import { GpgExportRoutes, GpgHttp } from "../gpg/Http.ts"
import { JobsHttp } from "../jobs/Http.ts"
import { KeysHttp } from "../keys/Http.ts"
import { MarkdownHttp } from "../markdown/Http.ts"
import { MirrorsHttp } from "../mirrors/Http.ts"
import { MiscHttp } from "../misc/Http.ts"
import { OAuth2Http } from "../oauth2/Http.ts"
import { OrgsHttp } from "../orgs/Http.ts"
import { QuotaHttp } from "../quota/Http.ts"
import { GitHttpRoutes } from "../repos/GitHttp.ts"
import { ReposHttp } from "../repos/Http.ts"
import { SocialHttp } from "../social/Http.ts"
import { TemplatesHttp } from "../templates/Http.ts"
import { TokensHttp } from "../tokens/Http.ts"
import { TransfersHttp } from "../transfers/Http.ts"
import { TwoFactorHttp } from "../twofa/Http.ts"
import { UsersHttp } from "../users/Http.ts"
import { HearthApi } from "./Api.ts"
import { AuthenticationLive } from "./Authentication.ts"
import { JsonBodyCheckLive, RequestTargetCheck } from "./Edge.ts"
import { ErrorResponsesLive } from "./Middleware.ts"

const securitySchemes = {
  BasicAuth: { type: "http", scheme: "basic", description: "The account's password, or an access token as password." },
  AuthorizationHeaderToken: {
    type: "apiKey",
    in: "header",
    name: "Authorization",
    description: "API tokens must be prepended with \"token\" followed by a space (\"Bearer\" works too)."
  },
  TOTPHeader: {
    type: "apiKey",
    in: "header",
    name: "X-FORGEJO-OTP",
    description: "The current two-factor passcode, with Basic password authentication when two-factor is on."
  }
} as const

/** The OpenAPI 3.1 document, with the scheme in use listed first (SPEC "Versioning"). */
export const openApiDocument = (rootUrl: string) => {
  const spec = OpenApi.fromApi(HearthApi)
  const url = new URL(rootUrl)
  const other = url.protocol === "https:" ? "http:" : "https:"
  const base = rootUrl.replace(/\/$/, "")
  return {
    ...spec,
    servers: [{ url: base }, { url: base.replace(url.protocol, other) }],
    // The credentials every route accepts (the authentication middleware reads them itself).
    components: { ...spec.components, securitySchemes },
    security: [{ BasicAuth: [] }, { AuthorizationHeaderToken: [] }, { BasicAuth: [], TOTPHeader: [] }]
  }
}

// The browsable docs page bundles a 3 MB viewer; it is loaded on its first request rather than
// at start, which keeps ~14 MB out of every server that never shows it.
let docsHandler: ((request: Request) => Promise<Response>) | undefined
const docsPage = Effect.gen(function*() {
  docsHandler ??= HttpRouter.toWebHandler(
    HttpApiScalar.layer(HearthApi, { path: "/api/swagger" }).pipe(Layer.provide(HttpServer.layerServices)),
    { disableLogger: true }
  ).handler
  const handler = docsHandler
  const response = yield* Effect.promise(() => handler(new Request("http://hearth.internal/api/swagger")))
  return HttpServerResponse.fromWeb(response)
})

const DocsRoutes = Layer.unwrap(Effect.gen(function*() {
  const settings = yield* Settings
  // Generated on the first request, not at start: it takes ~0.2 s that start-up should not wait for.
  let document: string | undefined
  return Layer.mergeAll(
    HttpRouter.add(
      "GET",
      "/api/swagger.v1.json",
      Effect.sync(() => {
        document ??= JSON.stringify(openApiDocument(settings.server.ROOT_URL))
        return HttpServerResponse.text(document, { contentType: "application/json" })
      })
    ),
    HttpRouter.add("GET", "/api/swagger", docsPage)
  )
}))

export const ApiHandlers = Layer.mergeAll(MiscHttp, UsersHttp, TokensHttp, TwoFactorHttp, AdminUsersHttp, OrgsHttp, ReposHttp, SocialHttp, BranchesHttp, ContentsHttp, TemplatesHttp, ForksHttp, JobsHttp, TransfersHttp, MirrorsHttp, FollowsHttp, EmailsHttp, OAuth2Http, GpgHttp, KeysHttp, MarkdownHttp, FederationHttp, QuotaHttp)

const ApiRoutes = HttpApiBuilder.layer(HearthApi).pipe(
  Layer.provide(ApiHandlers),
  Layer.provide([JsonBodyCheckLive, AuthenticationLive, ErrorResponsesLive])
)

export const AppRoutes = Layer.mergeAll(ApiRoutes, DocsRoutes, GitHttpRoutes, GpgExportRoutes, FederationRoutes, RequestTargetCheck)

/**
 * The Node server, with two guards effect's adapter lacks:
 * - It listens before the app's `request` handler is attached (EFFECT4-GUIDE §4.9), and a
 *   request arriving in between would never be answered: such requests are held here and handed
 *   to the handler as soon as it is attached.
 * - `close()` only stops accepting and closes the connections idle at that moment; a keep-alive
 *   connection whose request finishes later would hold shutdown until its keepAliveTimeout
 *   (5 s). Once closing, each connection is closed as soon as its response is done.
 */
export const makeNodeServer = () => {
  // No overall request deadline: a large push or clone may take longer than Node's default 300 s
  // (slow senders are still bounded by headersTimeout and the connection timeouts).
  const server = createServer({ requestTimeout: 0 })
  let closing = false
  const close = server.close.bind(server)
  server.close = ((callback?: (error?: Error) => void) => {
    closing = true
    return close(callback)
  }) as typeof server.close
  server.on("request", (_request: IncomingMessage, response: ServerResponse) => {
    // On every response, errors and 404s included; Node merges it with the headers written later.
    response.setHeader("x-content-type-options", "nosniff")
    response.once("finish", () => {
      if (closing) setImmediate(() => server.closeIdleConnections())
    })
  })
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
// context each time it adds to it (the request, the route, the API group's services): twice per
// request at least. The routes captured the application services they use when they were built,
// so the requests start from the HTTP machinery's services only, not the ~55 of the application.
const requestContext = <A>(context: Context.Context<A>): Context.Context<A> =>
  Context.makeUnsafe(new Map([...context.mapUnsafe].filter(([key]) => !key.startsWith("hearth/"))))

/** Serves `AppRoutes` on host:port; closes gracefully (open requests finish) when the scope ends. */
export const serverLayer = (listen: ListenOptions) =>
  Layer.unwrap(Effect.gen(function*() {
    const settings = yield* Settings
    const app = yield* HttpRouter.toHttpEffect(AppRoutes)
    const maxBody = ByteSize.bytes(settings.server.MAX_REQUEST_BODY)
    const logRequests = settings.log.LEVEL === "Debug" || settings.log.LEVEL === "Trace"
    const serving = Effect.flatMap(
      HttpServer.HttpServer,
      (server) => logRequests ? server.serve(app, HttpMiddleware.logger) : server.serve(app)
    )
    const serve = Layer.effectDiscard(Effect.updateContext(serving, requestContext<Effect.Services<typeof serving>>))
    return serve.pipe(
      // In the server's own context, so that no request pays for a context update.
      Layer.provide(Layer.succeed(HttpIncomingMessage.MaxBodySize, maxBody)),
      Layer.provideMerge(NodeHttpServer.layer(makeNodeServer, { ...listen, gracefulShutdownTimeout: "10 seconds" }))
    )
  })).pipe(Layer.provide(NodeHttpServer.layerHttpServices))

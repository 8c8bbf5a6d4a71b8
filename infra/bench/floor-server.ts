// The framework's floor for `npm run bench:floor`: Effect's HttpApi served by @effect/platform-node,
// as Hearth serves it, with the two benchmark routes and nothing of Hearth's own — no settings,
// database, error model, request checks or stalled-client tracker. `GET /api/v1/version` answers
// a constant; `GET /api/v1/users/bench` passes a middleware that reads `Authorization` and finds the
// token in a Map (as Hearth's token cache does on a hit), then encodes Hearth's own `User` schema.
// What Hearth spends beyond this server is Hearth's; what this server spends beyond the bare
// node:http ceiling is the framework's.
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Context, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerRequest } from "effect/http"
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiError,
  HttpApiGroup,
  HttpApiMiddleware
} from "effect/http-api"
import { User } from "../../src/users/Schema.ts"

const TOKEN = process.env.FLOOR_TOKEN ?? "floor-token"

class Authentication extends HttpApiMiddleware.Service<Authentication>()("floor/Authentication", {
  error: HttpApiError.Unauthorized
}) {}

// The caller rides on the request, as Hearth's (src/http/Caller.ts).
const callerKey = Symbol("floor/caller")
type WithCaller = { [callerKey]?: typeof User.Type }
const requestOf = (fiber: { readonly context: Context.Context<never> }) =>
  Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)

const Version = Schema.Struct({ version: Schema.String })

const Api = HttpApi.make("floor")
  .add(HttpApiGroup.make("misc").add(HttpApiEndpoint.get("version", "/api/v1/version", { success: Version })))
  .add(
    HttpApiGroup.make("users")
      .add(
        HttpApiEndpoint.get("user", "/api/v1/users/:username", {
          params: { username: Schema.String },
          success: User
        })
      )
      .middleware(Authentication)
  )

const bench: typeof User.Type = {
  id: 1,
  login: "bench",
  login_name: "",
  source_id: 0,
  full_name: "",
  email: "bench@example.com",
  avatar_url: "http://127.0.0.1/assets/img/avatar_default.png",
  html_url: "http://127.0.0.1/bench",
  language: "",
  is_admin: false,
  last_login: "2026-11-26T00:00:00Z",
  created: "2026-11-26T00:00:00Z",
  restricted: false,
  active: true,
  prohibit_login: false,
  location: "",
  pronouns: "",
  website: "",
  description: "",
  visibility: "public",
  followers_count: 0,
  following_count: 0,
  starred_repos_count: 0,
  username: "bench"
}
const tokens = new Map([[TOKEN, bench]])

const AuthenticationLive = Layer.succeed(Authentication)(
  Authentication.of((effect) =>
    Effect.withFiber((fiber) => {
      const request = requestOf(fiber)
      const header = request.headers.authorization ?? ""
      const user = header.startsWith("token ") ? tokens.get(header.slice(6)) : undefined
      if (user === undefined) return Effect.fail(new HttpApiError.Unauthorized()) as never
      ;(request.source as WithCaller)[callerKey] = user
      return effect
    })
  )
)

const Misc = HttpApiBuilder.group(Api, "misc", (handlers) =>
  handlers.handle("version", () => Effect.succeed({ version: "0.1.0" }))
)
const Users = HttpApiBuilder.group(Api, "users", (handlers) =>
  handlers.handle("user", () =>
    Effect.withFiber((fiber) => Effect.succeed((requestOf(fiber).source as WithCaller)[callerKey]!))
  )
)

const Routes = HttpApiBuilder.layer(Api).pipe(Layer.provide([Misc, Users]), Layer.provide(AuthenticationLive))

const server = createServer()
const Main = Layer.unwrap(
  Effect.map(HttpRouter.toHttpEffect(Routes), (app) =>
    HttpServer.serve(app).pipe(Layer.provide(NodeHttpServer.layer(() => server, { port: 0, host: "127.0.0.1" })))
  )
).pipe(Layer.provide(NodeHttpServer.layerHttpServices))

server.once("listening", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
NodeRuntime.runMain(Layer.launch(Main) as Effect.Effect<never>)

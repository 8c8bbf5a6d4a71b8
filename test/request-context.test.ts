// What an API request's context holds (issue 16 item 6): only the API's middlewares and the
// services its handlers read while they run, not every service the group was built with
// (src/http/Group.ts). A small API served on a real port shows the context itself; Hearth's own
// routes show that what they read per request (Settings, for paging) is still there.
import { createServer } from "node:http"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware } from "effect/http-api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { apiGroup, narrowGroups } from "../src/http/Group.ts"
import { requestContext } from "../src/Server.ts"
import { basic, createUser, freePort, type Hearth, request, startHearth } from "./support/hearth.ts"

/** A service the group reads once, when it is built. */
class Greeter extends Context.Service<Greeter, { readonly greeting: string }>()("test/Greeter") {}
/** A service a handler reads while a request runs. */
class Clock extends Context.Service<Clock, { readonly now: string }>()("test/Clock") {}

class Stamp extends HttpApiMiddleware.Service<Stamp>()("test/Stamp") {}
const StampLive = Layer.succeed(
  Stamp,
  Stamp.of((effect) => Effect.map(effect, (response) => HttpServerResponse.setHeader(response, "x-stamp", "yes")))
)

class ProbeApi extends HttpApi.make("probe")
  .add(
    HttpApiGroup.make("probe").add(
      HttpApiEndpoint.get("keys", "/keys", { success: Schema.Array(Schema.String) }),
      HttpApiEndpoint.get("greet", "/greet", { success: Schema.String }),
      HttpApiEndpoint.get("time", "/time", { success: Schema.String })
    )
  )
  .middleware(Stamp) {}

// Built as Hearth's slices build theirs (src/http/Group.ts `apiGroup`): served through `narrowGroups`.
const ProbeHttp = apiGroup(ProbeApi, "probe", (handlers) =>
  Effect.gen(function* () {
    const greeter = yield* Greeter
    return handlers
      .handle("keys", () => Effect.withFiber((fiber) => Effect.succeed([...fiber.context.mapUnsafe.keys()])))
      .handle("greet", () => Effect.succeed(greeter.greeting))
      .handle("time", () =>
        Effect.gen(function* () {
          return (yield* Clock).now
        })
      )
  })
)

/** The probe API served on a fresh port; `perRequest` as `narrowGroups` takes it. */
const serveProbe = async (scope: Scope.Closeable, source: "route" | "server") => {
  const port = await freePort()
  const groups = narrowGroups(ProbeApi, ProbeHttp, [Clock], source).pipe(
    Layer.provide([Layer.succeed(Greeter, { greeting: "hello" }), Layer.succeed(Clock, { now: "noon" })])
  )
  const routes = HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(groups), Layer.provide(StampLive))
  const served = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" })),
    // "server": the server's own context holds what handlers read per request (as Hearth's does).
    Layer.provide(source === "server" ? Layer.succeed(Clock, { now: "noon" }) : Layer.empty)
  )
  await Effect.runPromise(Layer.buildWithScope(served, scope))
  return `http://127.0.0.1:${port}`
}

let base: string
let serverBase: string
const scope = Effect.runSync(Scope.make())
let hearth: Hearth
beforeAll(async () => {
  const port = await freePort()
  // The services reach the routes only through the group, as in Hearth, whose server starts each
  // request from the HTTP machinery's services alone (src/Server.ts `requestContext`).
  const groups = narrowGroups(ProbeApi, ProbeHttp, [Clock]).pipe(
    Layer.provide([Layer.succeed(Greeter, { greeting: "hello" }), Layer.succeed(Clock, { now: "noon" })])
  )
  const routes = HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(groups), Layer.provide(StampLive))
  const served = HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provide(NodeHttpServer.layer(createServer, { port, host: "127.0.0.1" }))
  )
  await Effect.runPromise(Layer.buildWithScope(served, scope))
  base = `http://127.0.0.1:${port}`
  serverBase = await serveProbe(scope, "server")
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  await createUser(hearth, { username: "alicia" })
})
afterAll(async () => {
  await Effect.runPromise(Scope.close(scope, Exit.void))
  await hearth?.close()
})

describe("an API request's context", () => {
  it("holds the services read per request, not those the group was built with", async () => {
    const res = await fetch(`${base}/keys`)
    expect(res.status).toBe(200)
    const keys = (await res.json()) as Array<string>
    expect(keys).toContain("test/Clock")
    expect(keys).not.toContain("test/Greeter")
    // The middleware, looked up from the same context when the route is built, still applies.
    expect(res.headers.get("x-stamp")).toBe("yes")
  })

  it("answers from services resolved at build and read per request", async () => {
    const greet = await fetch(`${base}/greet`)
    expect([greet.status, await greet.json(), greet.headers.get("x-stamp")]).toEqual([200, "hello", "yes"])
    const time = await fetch(`${base}/time`)
    expect([time.status, await time.json()]).toEqual([200, "noon"])
  })

  it("adds nothing to a request's context when the server's holds what handlers read (no copy per request)", async () => {
    // "route": the route adds the middleware and the listed service to each request's context.
    const routeKeys = (await (await fetch(`${base}/keys`)).json()) as Array<string>
    expect(routeKeys).toContain("test/Stamp")
    // "server": the request's context is the server's and the router's; the middleware still applies.
    const res = await fetch(`${serverBase}/keys`)
    const keys = (await res.json()) as Array<string>
    expect(keys).toContain("test/Clock")
    expect(keys).not.toContain("test/Stamp")
    expect(keys).not.toContain("test/Greeter")
    expect(res.headers.get("x-stamp")).toBe("yes")
    const [greet, time] = await Promise.all([fetch(`${serverBase}/greet`), fetch(`${serverBase}/time`)])
    expect([greet.status, await greet.json(), greet.headers.get("x-stamp")]).toEqual([200, "hello", "yes"])
    expect([time.status, await time.json()]).toEqual([200, "noon"])
  })

  it("is checked when compiled: a service read per request and not listed is a type error", () => {
    // \`npm run typecheck\` fails if this line compiles.
    // @ts-expect-error Clock is read per request and not listed
    const unlisted = narrowGroups(ProbeApi, ProbeHttp, [])
    expect(Layer.isLayer(unlisted)).toBe(true)
  })

  it("starts from the server's context less what only building the application used", () => {
    // The keys of Hearth's server context when it serves (`serve`: the command line, the database,
    // the cluster that runs durable jobs, the HTTP machinery), one service standing for each.
    const keys = [
      "hearth/users/UsersService",
      "hearth/config/Settings",
      "effect/FileSystem",
      "effect/Path",
      "~effect/Stdio",
      "effect/Terminal",
      "effect/process/ChildProcessSpawner",
      "effect/Layer/CurrentMemoMap",
      "effect/cli/CliOutput/Presenter",
      "~effect/cli/Command/hearth",
      "effect/Scope",
      "effect/Logger/CurrentLoggers",
      "effect/References/MinimumLogLevel",
      "@effect/sql-pg/PgClient",
      "effect/sql/SqlClient",
      "effect/cluster/Sharding",
      "effect/workflow/WorkflowEngine",
      "effect/http/HttpPlatform",
      "effect/http/Etag/Generator",
      "effect/http/HttpServer",
      "effect/http/HttpIncomingMessage/MaxBodySize"
    ]
    const context = Context.makeUnsafe<never>(new Map(keys.map((key) => [key, {}])))
    expect([...requestContext(context).mapUnsafe.keys()]).toEqual([
      // Read by the API's handlers per request (src/Server.ts API_PER_REQUEST).
      "hearth/config/Settings",
      "effect/FileSystem",
      "effect/Path",
      "effect/Scope",
      "effect/Logger/CurrentLoggers",
      "effect/References/MinimumLogLevel",
      "effect/http/HttpPlatform",
      "effect/http/Etag/Generator",
      "effect/http/HttpServer",
      "effect/http/HttpIncomingMessage/MaxBodySize"
    ])
  })

  it("still has what Hearth's handlers read per request: a paged list reads Settings", async () => {
    const res = await request(hearth, "GET", "/users/search?q=ali&limit=1", basic("alice"))
    expect(res.status).toBe(200)
    expect(res.headers.get("x-total-count")).toBe("2")
    expect(res.headers.get("link")).toContain(`<${hearth.base}/api/v1/users/search?limit=1&page=2&q=ali>; rel="next"`)
  })

  it("comes from routes built once: a group built with apiGroup has none until narrowGroups builds them", async () => {
    // The per-request markers (Clock) are the routes' to meet: these layers are only built here.
    const build = (layer: Layer.Layer<any, any, any>) =>
      Effect.runPromise(Layer.build(layer).pipe(Effect.scoped) as unknown as Effect.Effect<Context.Context<never>>)
    const services = Layer.mergeAll(
      Layer.succeed(Greeter, { greeting: "hello" }),
      Layer.succeed(Clock, { now: "noon" }),
      StampLive
    )
    const group = (await build(ProbeHttp.pipe(Layer.provide(services)))).mapUnsafe.get(ProbeApi.groups.probe.key)
    expect(group).toMatchObject({ routes: [] })
    expect([...(group as { handlers: Map<string, unknown> }).handlers.keys()]).toEqual(["keys", "greet", "time"])
    const narrowed = await build(narrowGroups(ProbeApi, ProbeHttp, [Clock]).pipe(Layer.provide(services)))
    const routes = (narrowed.mapUnsafe.get(ProbeApi.groups.probe.key) as { routes: Array<{ path: string }> }).routes
    expect(routes.map((route) => route.path)).toEqual(["/keys", "/greet", "/time"])
  })

  it("refuses, as effect's group does, a handler for an endpoint the group lacks and a second one for an endpoint", async () => {
    const build = (register: (handlers: any) => unknown) =>
      Effect.runPromise(Layer.build(apiGroup(ProbeApi, "probe", register as never)).pipe(Effect.scoped))
    await expect(build((h) => h.handle("nope", () => Effect.succeed("")))).rejects.toThrow(
      'HttpApiEndpoint "nope" not found in HttpApiGroup "probe"'
    )
    await expect(
      build((h) => h.handle("greet", () => Effect.succeed("a")).handle("greet", () => Effect.succeed("b")))
    ).rejects.toThrow('Handler for HttpApiEndpoint "greet" is already registered in HttpApiGroup "probe"')
  })

  it("registers as effect's group does: handleAll (a function or a handler with options), handleRaw (raw)", async () => {
    const built = await Effect.runPromise(
      Layer.build(
        apiGroup(ProbeApi, "probe", ((h: any) =>
          h
            .handleAll({
              keys: () => Effect.succeed([]),
              greet: { handler: () => Effect.succeed("hi"), options: { uninterruptible: true } }
            })
            .handleRaw("time", () => Effect.succeed("noon"))) as never)
      ).pipe(Effect.scoped)
    )
    const { handlers } = built.mapUnsafe.get(ProbeApi.groups.probe.key) as {
      handlers: Map<string, { isRaw: boolean; uninterruptible: boolean }>
    }
    expect([...handlers].map(([name, h]) => [name, h.isRaw, h.uninterruptible])).toEqual([
      ["keys", false, false],
      ["greet", false, true],
      ["time", true, false]
    ])
  })
})

// What an API request's context holds. effect's `HttpApiBuilder.group` captures the whole context
// it is built in (every service of the application) and merges it into the context of every
// request to the group's routes (`Effect.provideContext` in its `handlerToHttpEffect`): a copy of
// ~100 entries per request, ~10 % of the CPU of `GET /api/v1/version`. The slices resolve their
// services when their group is built, so a request needs from that context only the API's
// middlewares (which the route looks up once, when it is built) and the few services a handler
// reads while it runs (`perRequest`). `narrowGroups` builds each group's routes again from its
// handlers with just those. Even that copy (effect merges a route's context into the request's:
// two copies of the request's context, ~4 % of `GET /api/v1/version`) is avoided when the server
// starts its requests with the `perRequest` services already in them (src/Server.ts
// `requestContext`): a route then gets a context that lends the middlewares to effect's route
// builder and adds nothing to a request (`lending`). The slices build their groups with `apiGroup`,
// effect's `HttpApiBuilder.group` without the routes `narrowGroups` builds anyway: each of the ~700
// routes is built once at start-up, not twice (≈ 50 ms of a start here, infra/bench/README.md,
// "Start-up and the tests' processes — session 40").

import { Context, Effect, Layer, Pipeable } from "effect"
import type { HttpRouter } from "effect/http"
import { type HttpApi, HttpApiBuilder, type HttpApiEndpoint, type HttpApiGroup } from "effect/http-api"

// effect exports these at runtime without their types (`@internal`); their shapes as effect's
// source declares them (effect/src/http-api/HttpApiBuilder.ts: `HandlerRuntime`, `GroupService`,
// `handlerToRoute`).
interface HandlerRuntime {
  readonly endpoint: HttpApiEndpoint.Top
}
interface GroupService {
  readonly routes: Array<HttpRouter.Route<any, any>>
  readonly handlers: Map<string, HandlerRuntime>
}
type HandlerToRoute = (
  api: Pick<HttpApi.Top, "annotations">,
  group: HttpApiGroup.Top,
  handler: HandlerRuntime,
  context: Context.Context<never>
) => HttpRouter.Route<any, any>

const handlerToRoute = (HttpApiBuilder as unknown as { readonly handlerToRoute?: HandlerToRoute }).handlerToRoute

interface Registered {
  readonly group: HttpApiGroup.Top
  readonly handlers: Map<string, HandlerRuntime>
}

const register = (
  self: Registered,
  identifier: string,
  handler: unknown,
  isRaw: boolean,
  options?: { readonly uninterruptible?: boolean }
) => {
  // effect's own checks (HttpApiBuilder `registerHandler`), with its messages.
  const endpoint = Object.hasOwn(self.group.endpoints, identifier) ? self.group.endpoints[identifier] : undefined
  if (endpoint === undefined) {
    throw new Error(`HttpApiEndpoint "${identifier}" not found in HttpApiGroup "${self.group.identifier}"`)
  }
  if (self.handlers.has(identifier)) {
    throw new Error(
      `Handler for HttpApiEndpoint "${identifier}" is already registered in HttpApiGroup "${self.group.identifier}"`
    )
  }
  self.handlers.set(identifier, {
    endpoint,
    handler,
    isRaw,
    uninterruptible: options?.uninterruptible ?? false
  } as HandlerRuntime)
  return self
}

type HandlerEntry = ((...args: Array<never>) => unknown) | { readonly handler: unknown; readonly options?: object }

/** The `handlers` value a group's build function fills: effect's (HttpApiBuilder `HandlersProto`). */
const HandlersProto = {
  "~effect/http-api/HttpApiBuilder/Handlers": "~effect/http-api/HttpApiBuilder/Handlers",
  pipe(this: Registered) {
    // biome-ignore lint/complexity/noArguments: effect's pipe takes its functions as arguments
    return Pipeable.pipeArguments(this, arguments)
  },
  handle(this: Registered, identifier: string, handler: unknown, options?: { readonly uninterruptible?: boolean }) {
    return register(this, identifier, handler, false, options)
  },
  handleAll(this: Registered, handlers: Record<string, HandlerEntry>) {
    for (const [identifier, entry] of Object.entries(handlers)) {
      const [handler, options] = typeof entry === "function" ? [entry, undefined] : [entry.handler, entry.options]
      register(this, identifier, handler, false, options)
    }
    return this
  },
  handleRaw(this: Registered, identifier: string, handler: unknown, options?: { readonly uninterruptible?: boolean }) {
    return register(this, identifier, handler, true, options)
  }
}

/**
 * effect's `HttpApiBuilder.group` (same signature, same handlers) without its routes: a group built
 * here is served only through `narrowGroups`, which builds them.
 */
export const apiGroup = ((api: HttpApi.Top, groupIdentifier: string, build: (handlers: Registered) => unknown) =>
  Layer.effectContext(
    Effect.gen(function* () {
      const group = (api.groups as Record<string, HttpApiGroup.Top>)[groupIdentifier]!
      const handlers: Registered = Object.assign(Object.create(HandlersProto), { group, handlers: new Map() })
      const result = build(handlers)
      const built = (Effect.isEffect(result) ? yield* result : result) as Registered
      return Context.makeUnsafe<never>(
        new Map([[group.key, { routes: [], handlers: built.handlers } satisfies GroupService]])
      )
    })
  )) as unknown as typeof HttpApiBuilder.group

/**
 * A context holding `services` for look-ups (effect's route builder finds each endpoint's
 * middlewares in it, once) that is empty when merged into another: effect's `Context.merge` leaves
 * the request's context as it is, instead of copying it twice per request. It reads `mapUnsafe`
 * (its flattened map, here empty) to merge and the base map to look a key up; should a version of
 * effect read them otherwise, the probe below sees it and a plain context is used, which costs the
 * copy but never a service.
 */
const lending = (services: Map<string, unknown>): Context.Context<never> => {
  const context = Context.makeUnsafe<never>(services)
  ;(context as unknown as { _flat: Map<string, unknown> })._flat = new Map()
  const probe = Context.makeUnsafe<never>(new Map([["hearth/http/Group/probe", true]]))
  const lends =
    Context.merge(probe, context) === probe &&
    [...services].every(([key, value]) => Context.getUnsafe(context, { key } as Context.Key<never, unknown>) === value)
  return lends ? context : Context.makeUnsafe<never>(services)
}

/** The service a key stands for. */
type Identifier<K> = K extends Context.Key<infer I, any> ? I : never

/** What handlers read from the context while a request runs (effect's per-request requirements). */
type PerRequest<R> = HttpRouter.Request.Only<"Requires", R>

type Unlisted<R, Keys extends ReadonlyArray<Context.Key<any, any>>> = Exclude<PerRequest<R>, Identifier<Keys[number]>>

/**
 * The API groups in `groups`, with routes whose requests get only the middlewares and the
 * `perRequest` services from the group's context. Every service a handler reads while it runs must
 * be listed: the type of `perRequest` names those that are not (the alternative is a 500 at run
 * time), and the resulting layer requires them when it is built rather than per request.
 */
export const narrowGroups = <
  Id extends string,
  Groups extends HttpApiGroup.Constraint,
  A,
  E,
  R,
  const Keys extends ReadonlyArray<Context.Key<any, any>>
>(
  api: HttpApi.HttpApi<Id, Groups>,
  groups: Layer.Layer<A, E, R>,
  perRequest: Keys &
    ([Unlisted<R, Keys>] extends [never] ? unknown : { readonly "read per request, not listed": Unlisted<R, Keys> }),
  /**
   * `"route"`: each route adds the `perRequest` services to its requests' context. `"server"`: the
   * server starts every request with them already (src/Server.ts `requestContext`), so a route
   * adds nothing; they are still required when the layer is built.
   */
  source: "server" | "route" = "route"
): Layer.Layer<A, E, Exclude<R, HttpRouter.Request<"Requires", any>> | Identifier<Keys[number]>> => {
  if (handlerToRoute === undefined) {
    throw new Error("effect's HttpApiBuilder no longer exports handlerToRoute: src/http/Group.ts needs updating")
  }
  const narrowed = Layer.effectContext(
    Effect.map(Effect.context<never>(), (context) => {
      const services = new Map<string, unknown>()
      for (const group of Object.values(api.groups) as ReadonlyArray<HttpApiGroup.Top>) {
        const built = context.mapUnsafe.get(group.key) as GroupService | undefined
        if (built === undefined) continue
        const kept = new Map<string, unknown>()
        const keep = (key: Context.Key<any, any>) => kept.set(key.key, Context.getUnsafe(context, key))
        for (const key of perRequest) keep(key)
        for (const { endpoint } of built.handlers.values()) {
          for (const middleware of endpoint.middlewares) keep(middleware)
        }
        const requestContext = source === "server" ? lending(kept) : Context.makeUnsafe<never>(kept)
        const routes = [...built.handlers.values()].map((handler) =>
          handlerToRoute(api, group, handler, requestContext)
        )
        services.set(group.key, { routes, handlers: built.handlers } satisfies GroupService)
      }
      return Context.makeUnsafe<A>(services)
    })
  )
  // The per-request markers of `groups` are met by the routes themselves (their context carries the
  // listed services): they leave the requirements, and the listed services are required at build.
  return narrowed.pipe(Layer.provide(groups)) as Layer.Layer<
    A,
    E,
    Exclude<R, HttpRouter.Request<"Requires", any>> | Identifier<Keys[number]>
  >
}

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
// builder and adds nothing to a request (`lending`).

import { Context, Effect, Layer } from "effect"
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

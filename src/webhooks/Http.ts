// Handlers of the webhooks group: each level resolves whose hooks the route is about (and who may
// manage them), then the same service calls.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { siteAdmin } from "../admin/Policy.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { makeOrgLevel, webhooksEnabled } from "./Policy.ts"
import type { HookLevel } from "./Repo.ts"
import { WebhooksService } from "./Service.ts"

type PageQuery = { readonly page?: string | undefined; readonly limit?: string | undefined }

export const WebhooksHttp = apiGroup(HearthApi, "webhooks", (handlers) =>
  Effect.gen(function* () {
    const orgLevel = yield* makeOrgLevel
    const hooks = yield* WebhooksService
    const settings = yield* Settings

    const repoLevel = Effect.gen(function* () {
      yield* webhooksEnabled
      return { kind: "repo", repoId: (yield* CurrentRepo).repo.id } as HookLevel
    })
    const userLevel = Effect.gen(function* () {
      const caller = yield* signedInCaller
      yield* webhooksEnabled
      return { kind: "owner", ownerId: caller.user.id } as HookLevel
    })
    const adminLevel = Effect.as(siteAdmin, { kind: "admin" } as HookLevel)
    const orgOf = (params: { readonly org: string }) =>
      Effect.flatMap(signedInCaller, (caller) => orgLevel(caller, params.org))

    const list = <E, R>(level: Effect.Effect<HookLevel, E, R>, query: PageQuery) =>
      Effect.gen(function* () {
        const at = yield* level
        // Forgejo's quirk: /admin/hooks pages only when `page` is given.
        const { page, window } = yield* resolveWindow(query)
        const listed = yield* hooks.list(at, at.kind === "admin" ? window : page)
        yield* setListHeaders(page, listed.total)
        return listed.rows.map(hooks.present)
      })
    const deliveries = <E, R>(level: Effect.Effect<HookLevel, E, R>, id: string, query: PageQuery) =>
      Effect.gen(function* () {
        const at = yield* level
        const page = yield* resolvePage({
          ...query,
          limit: query.limit ?? String(settings.webhook.PAGING_NUM)
        })
        const listed = yield* hooks.deliveries(at, id, page)
        yield* setListHeaders(page, listed.total)
        return listed.rows.map(hooks.presentDelivery)
      })

    return handlers
      .handle("repoListHooks", ({ query }) => list(repoLevel, query))
      .handle("repoCreateHook", ({ payload }) =>
        Effect.map(
          Effect.flatMap(repoLevel, (at) => hooks.create(at, payload)),
          hooks.present
        )
      )
      .handle("repoGetHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(repoLevel, (at) => hooks.get(at, params.id)),
          hooks.present
        )
      )
      .handle("repoEditHook", ({ params, payload }) =>
        Effect.map(
          Effect.flatMap(repoLevel, (at) => hooks.edit(at, params.id, payload)),
          hooks.present
        )
      )
      .handle("repoDeleteHook", ({ params }) => Effect.flatMap(repoLevel, (at) => hooks.remove(at, params.id)))
      .handle("repoListHookDeliveries", ({ params, query }) => deliveries(repoLevel, params.id, query))
      .handle("repoGetHookDelivery", ({ params }) =>
        Effect.map(
          Effect.flatMap(repoLevel, (at) => hooks.delivery(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("repoRedeliverHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(repoLevel, (at) => hooks.redeliver(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("repoTestHook", ({ params, query }) =>
        Effect.gen(function* () {
          yield* repoLevel
          const caller = yield* signedInCaller
          yield* hooks.test(yield* CurrentRepo, caller, params.id, query.ref)
        })
      )
      .handle("orgListHooks", ({ params, query }) => list(orgOf(params), query))
      .handle("orgCreateHook", ({ params, payload }) =>
        Effect.map(
          Effect.flatMap(orgOf(params), (at) => hooks.create(at, payload)),
          hooks.present
        )
      )
      .handle("orgGetHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(orgOf(params), (at) => hooks.get(at, params.id)),
          hooks.present
        )
      )
      .handle("orgEditHook", ({ params, payload }) =>
        Effect.map(
          Effect.flatMap(orgOf(params), (at) => hooks.edit(at, params.id, payload)),
          hooks.present
        )
      )
      .handle("orgDeleteHook", ({ params }) => Effect.flatMap(orgOf(params), (at) => hooks.remove(at, params.id)))
      .handle("orgListHookDeliveries", ({ params, query }) => deliveries(orgOf(params), params.id, query))
      .handle("orgGetHookDelivery", ({ params }) =>
        Effect.map(
          Effect.flatMap(orgOf(params), (at) => hooks.delivery(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("orgRedeliverHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(orgOf(params), (at) => hooks.redeliver(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("userListHooks", ({ query }) => list(userLevel, query))
      .handle("userCreateHook", ({ payload }) =>
        Effect.map(
          Effect.flatMap(userLevel, (at) => hooks.create(at, payload)),
          hooks.present
        )
      )
      .handle("userGetHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(userLevel, (at) => hooks.get(at, params.id)),
          hooks.present
        )
      )
      .handle("userEditHook", ({ params, payload }) =>
        Effect.map(
          Effect.flatMap(userLevel, (at) => hooks.edit(at, params.id, payload)),
          hooks.present
        )
      )
      .handle("userDeleteHook", ({ params }) => Effect.flatMap(userLevel, (at) => hooks.remove(at, params.id)))
      .handle("userListHookDeliveries", ({ params, query }) => deliveries(userLevel, params.id, query))
      .handle("userGetHookDelivery", ({ params }) =>
        Effect.map(
          Effect.flatMap(userLevel, (at) => hooks.delivery(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("userRedeliverHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(userLevel, (at) => hooks.redeliver(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("adminListHooks", ({ query }) => list(adminLevel, query))
      .handle("adminCreateHook", ({ payload }) =>
        Effect.map(
          Effect.flatMap(adminLevel, (at) => hooks.create(at, payload)),
          hooks.present
        )
      )
      .handle("adminGetHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(adminLevel, (at) => hooks.get(at, params.id)),
          hooks.present
        )
      )
      .handle("adminEditHook", ({ params, payload }) =>
        Effect.map(
          Effect.flatMap(adminLevel, (at) => hooks.edit(at, params.id, payload)),
          hooks.present
        )
      )
      .handle("adminDeleteHook", ({ params }) => Effect.flatMap(adminLevel, (at) => hooks.remove(at, params.id)))
      .handle("adminListHookDeliveries", ({ params, query }) => deliveries(adminLevel, params.id, query))
      .handle("adminGetHookDelivery", ({ params }) =>
        Effect.map(
          Effect.flatMap(adminLevel, (at) => hooks.delivery(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
      .handle("adminRedeliverHook", ({ params }) =>
        Effect.map(
          Effect.flatMap(adminLevel, (at) => hooks.redeliver(at, params.id, params.delivery)),
          hooks.presentDelivery
        )
      )
  })
)

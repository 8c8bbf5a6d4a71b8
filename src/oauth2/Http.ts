// OAuth2 applications over HTTP: the caller's own only; another user's id is 404.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { OAuth2Service } from "./Service.ts"

export const OAuth2Http = apiGroup(HearthApi, "oauth2", (handlers) =>
  Effect.gen(function* () {
    const apps = yield* OAuth2Service
    return handlers
      .handle("listApplications", ({ query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const page = yield* resolvePage(query)
          const { rows, total } = yield* apps.list(me.user.id, page)
          yield* setListHeaders(page, total)
          return rows
        })
      )
      .handle("createApplication", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => apps.create(me.user.id, payload))
      )
      .handle("getApplication", ({ params }) => Effect.flatMap(signedInCaller, (me) => apps.get(me.user.id, params.id)))
      .handle("updateApplication", ({ params, payload }) =>
        Effect.flatMap(signedInCaller, (me) => apps.update(me.user.id, params.id, payload))
      )
      .handle("deleteApplication", ({ params }) =>
        Effect.flatMap(signedInCaller, (me) => apps.remove(me.user.id, params.id))
      )
  })
)

import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { Caller, callerOf, signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { searchOrFailure } from "../http/SearchFailure.ts"
import type { UserRow } from "./Repo.ts"
import { toApiUser, User } from "./Schema.ts"
import { parseSort, UsersService } from "./Service.ts"

/** Forgejo's `FormInt64`: anything that is not a whole number reads as 0 (no filter). */
const formInt = (value: string | undefined): number => {
  const n = /^-?\d+$/.test(value?.trim() ?? "") ? Number(value) : 0
  return Number.isSafeInteger(n) ? n : 0
}

/**
 * A user's JSON depends only on the row and on what kind of viewer asks (anonymous, another
 * account, the user or an admin): rendered once per cached row (UsersRepo hands out the same row
 * object until the account changes) instead of on every GET /users/{name}.
 */
const rendered = new WeakMap<UserRow, Map<string, Uint8Array>>()
const viewerKind = (user: UserRow, viewer: Principal | undefined) =>
  viewer === undefined ? "anonymous" : viewer.user.id === user.id || viewer.user.isAdmin ? "self" : "other"

export const UsersHttp = apiGroup(HearthApi, "users", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const users = yield* UsersService
    const renderedUser = (user: UserRow, viewer: Principal | undefined) => {
      let byKind = rendered.get(user)
      if (byKind === undefined) rendered.set(user, (byKind = new Map()))
      const kind = viewerKind(user, viewer)
      let body = byKind.get(kind)
      if (body === undefined)
        byKind.set(kind, (body = new TextEncoder().encode(JSON.stringify(toApiUser(settings, user, viewer)))))
      return HttpServerResponse.uint8Array(body, { contentType: "application/json" })
    }

    return (
      handlers
        .handle("getAuthenticatedUser", () =>
          Effect.map(signedInCaller, (me) => respond(User, toApiUser(settings, me.user, me)))
        )
        .handle("searchUsers", ({ query }) =>
          Effect.gen(function* () {
            const viewer = Option.getOrUndefined(yield* Caller)
            const page = yield* resolvePage(query)
            const keyword = query.q?.trim()
            const found = yield* searchOrFailure(
              "user search",
              users.search(
                viewer,
                {
                  keyword: keyword === "" ? undefined : keyword,
                  uid: formInt(query.uid),
                  sort: parseSort(query.sort)
                },
                page
              )
            )
            if (HttpServerResponse.isHttpServerResponse(found)) return found
            yield* setListHeaders(page, found.total, { withLink: true })
            return { ok: true, data: found.rows.map((row) => toApiUser(settings, row, viewer)) }
          })
        )
        // The token GET of the per-request benchmark: no generator, and a cached account answers
        // without a step of its own (eager maps over effects already complete).
        .handle("getUser", ({ params, request }) => {
          const viewer = callerOf(request)
          // An old name of a renamed account is answered by AccountRedirect (src/users/Assignment.ts).
          return Effect.mapEager(users.visible(viewer, params.username), (user) => renderedUser(user, viewer))
        })
    )
  })
)

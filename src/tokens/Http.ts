import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { type Principal, passwordCaller, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersService } from "../users/Service.ts"
import type { TokenRow } from "./Repo.ts"
import { TokensService } from "./Service.ts"

const toApiToken = (row: TokenRow, token = "") => ({
  id: row.id,
  name: row.name,
  sha1: token,
  token_last_eight: row.lastEight,
  scopes: row.scopes
})

export const TokensHttp = apiGroup(HearthApi, "tokens", (handlers) =>
  Effect.gen(function* () {
    const users = yield* UsersService
    const tokens = yield* TokensService

    /**
     * The account whose tokens are addressed: the caller itself, or anyone for an admin; an account
     * hidden from the caller is 404, as an unknown one.
     */
    const owner = (username: string, caller: Principal): Effect.Effect<UserRow, Errors.NotFound | Errors.Forbidden> =>
      Effect.gen(function* () {
        const user = yield* users.visible(caller, username)
        if (user.type !== "user") return yield* Errors.notFound()
        if (caller.user.id !== user.id && !caller.user.isAdmin) {
          return yield* Errors.forbidden("doer should be the site admin or be same as the contextUser")
        }
        return user
      })

    return (
      handlers
        .handle("listAccessTokens", ({ params, query }) =>
          Effect.gen(function* () {
            const user = yield* owner(params.username, yield* signedInCaller)
            const page = yield* resolvePage(query)
            const { rows, total } = yield* tokens.list(user, page)
            yield* setListHeaders(page, total)
            return rows.map((row) => toApiToken(row))
          })
        )
        // Creating and deleting tokens needs the account's password (Basic), never a token.
        .handle("createAccessToken", ({ params, payload }) =>
          Effect.gen(function* () {
            const user = yield* owner(params.username, yield* passwordCaller)
            const created = yield* tokens.create(user, { name: payload.name, scopes: payload.scopes ?? [] })
            return toApiToken(created.row, created.token)
          })
        )
        .handle("deleteAccessToken", ({ params }) =>
          Effect.gen(function* () {
            const user = yield* owner(params.username, yield* passwordCaller)
            yield* tokens.remove(user, params.token)
          })
        )
    )
  })
)

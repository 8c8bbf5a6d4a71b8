// Blocked users over HTTP: 204 for block and unblock (also when nothing changes), the list with
// X-Total-Count and Link. The named user is looked up as every `/users/{name}` path (404 when
// unknown or hidden); an organization's list and blocks are its owners' (403 for other members).
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime, respond } from "../http/Json.ts"
import { type PageQuery, resolvePage, setListHeaders } from "../http/Pagination.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersService } from "../users/Service.ts"
import { BlockedUsers } from "./Api.ts"
import { BlocksService } from "./Service.ts"

type Query = { readonly [K in keyof typeof PageQuery]?: string | undefined }

export const BlocksHttp = apiGroup(HearthApi, "blocks", (handlers) =>
  Effect.gen(function* () {
    const blocks = yield* BlocksService
    const users = yield* UsersService
    const orgs = yield* OrgsService
    const accounts = yield* AccountPolicy
    const orgPolicy = yield* OrgPolicy

    const list = (blocker: UserRow, query: Query) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        const { rows, total } = yield* blocks.list(blocker, page)
        yield* setListHeaders(page, total, { withLink: true })
        return respond(
          BlockedUsers,
          rows.map((row) => ({ block_id: row.blockId, created_at: formatTime(row.createdAt) }))
        )
      })

    /** The organization, for one of its owners (or a site admin). */
    const ownedOrg = (caller: Principal, name: string) =>
      Effect.gen(function* () {
        const org = yield* orgs.get(name)
        yield* accounts.ensureVisible(caller, org)
        yield* orgPolicy.ensureOwner(caller, org)
        return org
      })

    return handlers
      .handle("userListBlockedUsers", ({ query }) => Effect.flatMap(signedInCaller, (me) => list(me.user, query)))
      .handle("userBlockUser", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          yield* blocks.block(me.user, yield* users.visible(me, params.username))
        })
      )
      .handle("userUnblockUser", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          yield* blocks.unblock(me.user, yield* users.visible(me, params.username))
        })
      )
      .handle("orgListBlockedUsers", ({ params, query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* list(yield* ownedOrg(me, params.org), query)
        })
      )
      .handle("orgBlockUser", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const org = yield* ownedOrg(me, params.org)
          yield* blocks.block(org, yield* users.visible(me, params.username))
        })
      )
      .handle("orgUnblockUser", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const org = yield* ownedOrg(me, params.org)
          yield* blocks.unblock(org, yield* users.visible(me, params.username))
        })
      )
  })
)

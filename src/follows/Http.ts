// Follows over HTTP (Forgejo's routers/api/v1/user/follower.go): 204s for the state, User lists with X-Total-Count (no Link;
// every row when `page` is absent, as Forgejo). A name with `@` (`user@host`) is a remote person:
// following it sends a Follow through the federation (Hearth's addition; local names have no `@`).
import { Effect, Schema } from "effect"
import { FederatedSocial, isRemoteHandle } from "../../federation/Social.ts"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser, User } from "../users/Schema.ts"
import { FollowsService } from "./Service.ts"

type Query = { readonly page?: string | undefined; readonly limit?: string | undefined }
const Users = Schema.Array(User)

export const FollowsHttp = apiGroup(HearthApi, "follows", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const follows = yield* FollowsService
    const remote = yield* FederatedSocial

    const listOf = (kind: "followers" | "following", me: Principal, user: UserRow, query: Query) =>
      Effect.gen(function* () {
        const { page, window } = yield* resolveWindow(query)
        const { rows, total } = yield* (kind === "followers" ? follows.followers : follows.following)(me, user, window)
        yield* setListHeaders(page, total)
        return respond(
          Users,
          rows.map((row) => toApiUser(settings, row, me))
        )
      })

    return handlers
      .handle("listMyFollowers", ({ query }) =>
        Effect.flatMap(signedInCaller, (me) => listOf("followers", me, me.user, query))
      )
      .handle("listMyFollowing", ({ query }) =>
        Effect.flatMap(signedInCaller, (me) => listOf("following", me, me.user, query))
      )
      .handle("listFollowers", ({ params, query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* listOf("followers", me, yield* follows.visibleUser(me, params.username), query)
        })
      )
      .handle("listFollowing", ({ params, query }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          return yield* listOf("following", me, yield* follows.visibleUser(me, params.username), query)
        })
      )
      .handle("checkMyFollowing", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const following = isRemoteHandle(params.username)
            ? yield* remote.isFollowing(me.user, params.username)
            : yield* follows.isFollowing(me.user, yield* follows.visibleUser(me, params.username))
          if (!following) return yield* Errors.notFound()
        })
      )
      .handle("checkFollowing", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          const user = yield* follows.visibleUser(me, params.username)
          const target = yield* follows.visibleUser(me, params.target)
          if (!(yield* follows.isFollowing(user, target))) return yield* Errors.notFound()
        })
      )
      .handle("follow", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          if (isRemoteHandle(params.username)) return yield* remote.follow(me.user, params.username)
          yield* follows.follow(me, yield* follows.visibleUser(me, params.username))
        })
      )
      .handle("unfollow", ({ params }) =>
        Effect.gen(function* () {
          const me = yield* signedInCaller
          if (isRemoteHandle(params.username)) return yield* remote.unfollow(me.user, params.username)
          yield* follows.unfollow(me, yield* follows.visibleUser(me, params.username))
        })
      )
  })
)

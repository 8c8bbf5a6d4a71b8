import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import { HearthApi } from "../http/Api.ts"
import { Caller, signedInCaller } from "../http/Authentication.ts"
import { AccountPolicy } from "./Policy.ts"
import { toApiUser } from "./Schema.ts"
import { UsersService } from "./Service.ts"

export const UsersHttp = HttpApiBuilder.group(HearthApi, "users", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const users = yield* UsersService
    const policy = yield* AccountPolicy
    return handlers
      .handle("getAuthenticatedUser", () =>
        Effect.map(signedInCaller, (me) => toApiUser(settings, me.user, me)))
      .handle("getUser", ({ params }) =>
        Effect.gen(function*() {
          const viewer = Option.getOrUndefined(yield* Caller)
          const user = yield* users.get(params.username)
          yield* policy.ensureVisible(viewer, user)
          return toApiUser(settings, user, viewer)
        }))
  }))

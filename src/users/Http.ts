import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import { HearthApi } from "../http/Api.ts"
import { Caller, signedInCaller } from "../http/Authentication.ts"
import * as Errors from "../http/Errors.ts"
import { AccountPolicy } from "./Policy.ts"
import { UsersRepo } from "./Repo.ts"
import { toApiUser } from "./Schema.ts"

export const UsersHttp = HttpApiBuilder.group(HearthApi, "users", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const users = yield* UsersRepo
    const policy = yield* AccountPolicy
    return handlers
      .handle("getAuthenticatedUser", () =>
        Effect.map(signedInCaller, (me) => toApiUser(settings, me.user, me)))
      .handle("getUser", ({ params }) =>
        Effect.gen(function*() {
          const viewer = Option.getOrUndefined(yield* Caller)
          const user = yield* Effect.flatMap(Effect.orDie(users.findByName(params.username)), Option.match({
            onNone: () => Effect.fail(Errors.notFound()),
            onSome: Effect.succeed
          }))
          yield* policy.ensureVisible(viewer, user)
          return toApiUser(settings, user, viewer)
        }))
  }))

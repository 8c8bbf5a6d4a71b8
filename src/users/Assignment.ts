// The account of a route's path after a rename (Forgejo's `userAssignment` and `orgAssignment`,
// which answer `context.RedirectToUser`): every API route under `/users/{username}`,
// `/admin/users/{username}` or `/orgs/{org}` that finds no account by that name answers an old name
// of a renamed account with a 307 to the same URL (query kept) under the new name. One place for
// all of them, after authentication (whether the caller may see the renamed account decides:
// UsersService.movedTo); the handlers keep their own look-ups and their 404s.
import { Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Caller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { UsersService } from "./Service.ts"

/** The path's account segment: `users` or `orgs`, and the name of its parameter. */
const ACCOUNT_PATH = /^(?:\/api\/v1)?(?:\/admin)?\/(users|orgs)\/:(\w+)(?:\/|$)/

export class AccountRedirect extends HttpApiMiddleware.Service<AccountRedirect>()("hearth/users/AccountRedirect", {
  error: [Errors.RepositoryMoved]
}) {}

export const AccountRedirectLive = Layer.effect(
  AccountRedirect,
  Effect.gen(function* () {
    const users = yield* UsersService
    // Decided once per endpoint when the routes are built: others get their handler back untouched.
    return AccountRedirect.of((httpEffect, { endpoint }) => {
      const match = ACCOUNT_PATH.exec(endpoint.path)
      if (match === null) return httpEffect
      const [, segment, param] = match as unknown as [string, string, string]
      // Only a 404 pays for the look-up: an existing account's routes run as before.
      return Effect.catchIf(
        httpEffect,
        (error) => Errors.statusOf(error) === 404,
        (notFound) =>
          Effect.gen(function* () {
            const route = yield* HttpRouter.RouteContext
            const name = route.params[param] ?? ""
            const moved = yield* users.movedTo(Option.getOrUndefined(yield* Caller), name)
            if (Option.isNone(moved)) return yield* Effect.fail(notFound)
            return yield* new Errors.RepositoryMoved({
              from: { owner: segment, name },
              to: { owner: segment, name: moved.value }
            })
          })
      )
    })
  })
)

// Who may use the /admin routes: a signed-in site administrator (Forgejo's `reqSiteAdmin`).
import { Effect } from "effect"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"

/** The caller when it is a site admin; 401 when anonymous, 403 otherwise. */
export const siteAdmin: Effect.Effect<Principal, Errors.Unauthorized | Errors.Forbidden> = Effect.flatMap(
  signedInCaller,
  (caller) =>
    caller.user.isAdmin ? Effect.succeed(caller) : Effect.fail(Errors.forbidden("user should be the site admin"))
)

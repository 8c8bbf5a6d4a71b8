// Who is calling: the principal the authentication middleware (src/auth/Authentication.ts)
// resolved for the current request, and the checks handlers make on it.
import { Context, Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import type { ScopeSet } from "../auth/Scopes.ts"
import type { UserRow } from "../users/Repo.ts"
import * as Errors from "./Errors.ts"

export interface Principal {
  readonly user: UserRow
  /** The token's scopes; `undefined` for password authentication, which is unrestricted. */
  readonly scopes: ScopeSet | undefined
  readonly method: "token" | "password"
}

// The principal is kept on the request's underlying Node message, under a private symbol,
// rather than in the fiber context: adding to the context costs a copy of the whole request
// context on every authenticated call. The message lives exactly as long as its request.
const principalKey = Symbol("hearth/http/Caller")

type WithPrincipal = { [principalKey]?: Principal }

/**
 * The caller of `request` (the request a handler is given), if any: as `Caller`, without an
 * effect of its own — for the routes that run on every request of a busy client.
 */
export const callerOf = (request: HttpServerRequest.HttpServerRequest): Principal | undefined =>
  (request.source as WithPrincipal)[principalKey]

/** Records the request's caller; only the authentication middleware calls this. */
export const setCaller = (request: HttpServerRequest.HttpServerRequest, principal: Principal): void => {
  ;(request.source as WithPrincipal)[principalKey] = principal
}

/** The authenticated caller of the current request, if any (none outside a request). */
export const Caller: Effect.Effect<Option.Option<Principal>> = Effect.withFiber((fiber) => {
  const request = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)
  return Effect.succeed(Option.isNone(request) ? Option.none() : Option.fromNullishOr(callerOf(request.value)))
})

/** The signed-in caller, or 401 "token is required". */
export const signedInCaller: Effect.Effect<Principal, Errors.Unauthorized> = Effect.gen(function* () {
  const caller = yield* Caller
  if (Option.isNone(caller)) return yield* Errors.unauthorized("token is required")
  return caller.value
})

/**
 * The signed-in caller, authenticated with the account's password (Basic), or 401 "auth method not
 * allowed". Used where a stolen token must not be enough: creating or deleting tokens, and
 * enrolling or removing the second factor. When the account has TOTP enabled, the password
 * sign-in has already checked a fresh passcode (X-Forgejo-OTP / X-Gitea-OTP).
 */
export const passwordCaller: Effect.Effect<Principal, Errors.Unauthorized> = Effect.flatMap(signedInCaller, (caller) =>
  caller.method === "password" ? Effect.succeed(caller) : Effect.fail(Errors.unauthorized("auth method not allowed"))
)

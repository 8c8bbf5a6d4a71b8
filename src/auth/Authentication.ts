// Who is calling, for every /api/v1 request, in Forgejo's order (routers/api/shared/middleware.go):
// query token (deprecated), `Authorization: token|bearer X`, HTTP signature, Basic (password, or a
// token as password; TOTP inside Basic). One middleware resolves the caller, applies the
// account-state and sign-in checks, switches an administrator to the user named by `sudo`, and
// enforces each endpoint's `Access` rule (sign-in and token scopes), then records the caller (`Caller`).
import { Context, Effect, Layer, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import { Access } from "../http/Access.ts"
import { type Principal, setCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { UsersRepo } from "../users/Repo.ts"
import { accountRefusal, callerRefusal } from "./AccountState.ts"
import { Authenticator, TOKEN_PATTERN } from "./Authenticator.ts"
import { HttpSignatures } from "./HttpSignature.ts"
import { levelForMethod } from "./Scopes.ts"

/** Forgejo's answer when someone who is not an administrator sends `sudo` (routers/api/v1/api.go `sudo`). */
export const SUDO_REFUSED = "Only administrators allowed to sudo."

export const QUERY_TOKEN_WARNING =
  "token and access_token API authentication is deprecated and will be removed " +
  "in Forgejo v13.0.0. Please use AuthorizationHeaderToken instead. Existing queries will continue to work but " +
  "without authorization."

export type Credentials =
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string }

/** Reads `Authorization`: exactly two whitespace-separated fields, the scheme word ASCII case-insensitive. */
export const parseAuthorization = (header: string | undefined): Credentials => {
  if (header === undefined) return NO_CREDENTIALS
  // What clients send nearly always (`token <40 hex>`): read without a split.
  if (header.startsWith("token ") && TOKEN_PATTERN.test(header.slice(6)))
    return { kind: "token", token: header.slice(6) }
  const fields = header.trim().split(/\s+/)
  if (fields.length !== 2) return NO_CREDENTIALS
  const [scheme, value] = fields as [string, string]
  // ASCII-only case folding, so look-alike letters (e.g. the Kelvin sign) do not match.
  const word = scheme === "token" ? scheme : scheme.replace(/[A-Z]/g, (c) => c.toLowerCase())
  if (word === "token" || word === "bearer") return { kind: "token", token: value }
  if (word === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon < 0) return { kind: "basic", username: decoded, password: "" }
    return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  }
  return NO_CREDENTIALS
}
const NO_CREDENTIALS: Credentials = { kind: "none" }

export class Authentication extends HttpApiMiddleware.Service<Authentication>()("hearth/http/Authentication", {
  error: [Errors.Unauthorized, Errors.Forbidden, Errors.TooManyRequests, Errors.NotFoundEmpty]
}) {}

const queryValue = (
  request: HttpServerRequest.HttpServerRequest,
  context: Context.Context<never>,
  names: ReadonlyArray<string>
): string => {
  if (!request.url.includes("?")) return ""
  const query = Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams)
  for (const name of names) {
    const value = query[name]
    const first = typeof value === "string" ? value : (value?.[0] ?? "")
    if (first !== "") return first
  }
  return ""
}

/**
 * The deprecated query token of a request's URL (`token`, else `access_token`), or "" when none is
 * given: the API's and the package registries' (Vagrant sends `access_token`).
 */
export const queryToken = (url: string): string => {
  const at = url.indexOf("?")
  if (at < 0) return ""
  const query = new URLSearchParams(url.slice(at + 1))
  return query.get("token") || query.get("access_token") || ""
}

/** The user to act as: the `sudo` query parameter, else the `Sudo` header; "" when neither is given. */
const sudoName = (request: HttpServerRequest.HttpServerRequest, context: Context.Context<never>): string =>
  queryValue(request, context, ["sudo"]) || (request.headers["sudo"] ?? "")

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function* () {
    const authenticator = yield* Authenticator
    const signatures = yield* HttpSignatures
    const settings = yield* Settings
    const users = yield* UsersRepo
    const addWarning = HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "Warning", QUERY_TOKEN_WARNING))
    )
    const anonymousRefused = settings.service.REQUIRE_SIGNIN_VIEW
      ? Errors.forbidden("Only signed in user is allowed to call APIs.")
      : undefined
    // One for every endpoint that needs a caller: an error built per endpoint (a schema check and a
    // stack trace each, for ~340 endpoints whose routes are built twice) took ~25 ms of start-up.
    const tokenRequired = Errors.unauthorized("token is required")

    const resolve = (
      request: HttpServerRequest.HttpServerRequest,
      token: string,
      credentials: Credentials
    ): Effect.Effect<Principal, Errors.Unauthorized | Errors.TooManyRequests, HttpServerRequest.HttpServerRequest> => {
      if (token !== "") {
        if (settings.security.DISABLE_QUERY_AUTH_TOKEN) {
          return Effect.andThen(
            addWarning,
            Effect.fail(
              Errors.unauthorized(
                "API tokens in the query string are disabled on this server ([security] DISABLE_QUERY_AUTH_TOKEN): " +
                  "send the token in the Authorization header instead"
              )
            )
          )
        }
        return Effect.andThen(addWarning, authenticator.byToken(token))
      }
      if (credentials.kind === "token") return authenticator.byToken(credentials.token)
      // Then an HTTP signature made with an SSH key (Forgejo's order); a bad one is a 401.
      if (request.headers["signature"] !== undefined) return signatures.authenticate(request)
      // parseAuthorization only answers "basic" here: `resolve` is called when credentials exist.
      const basic = credentials as Extract<Credentials, { kind: "basic" }>
      // X-Forgejo-OTP wins over X-Gitea-OTP when both are sent (an empty one counts as absent).
      const otp = request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
      return authenticator.byBasic(basic.username, basic.password, otp)
    }

    // Forgejo's `sudo` middleware: after the account-state checks of the caller, before the
    // route's scope check (which still applies the administrator's token scopes). An unknown
    // target is a 404; organizations cannot act, so naming one is answered the same way.
    const switchTo = (
      principal: Principal,
      name: string
    ): Effect.Effect<Principal, Errors.Forbidden | Errors.NotFound> => {
      if (!principal.user.isAdmin) return Effect.fail(Errors.forbidden(SUDO_REFUSED))
      return Effect.flatMap(users.findByName(name), (target) =>
        Option.isSome(target) && target.value.type === "user"
          ? Effect.succeed({ ...principal, user: target.value })
          : Effect.fail(Errors.notFound())
      )
    }

    // Called once per endpoint when the routes are built; the returned effect runs per request.
    return Authentication.of((httpEffect, { endpoint }) => {
      const rule = Context.get(endpoint.annotations, Access)
      if (rule.enabled !== undefined && !rule.enabled(settings)) return Effect.fail(Errors.notFound())
      const signInRequired = rule.signedIn ? tokenRequired : undefined
      const allow = (request: HttpServerRequest.HttpServerRequest, principal: Principal) => {
        const refused = callerRefusal(principal, levelForMethod(request.method), rule.scopes, settings.server.ROOT_URL)
        return refused === undefined ? undefined : Errors.forbidden(refused)
      }
      return Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const token = queryToken(request.url)
        const sudo = sudoName(request, fiber.context)
        // Parsed once per request (it was twice: here and in `resolve`).
        const credentials = parseAuthorization(request.headers["authorization"])
        if (token === "" && credentials.kind === "none" && request.headers["signature"] === undefined) {
          const refused = anonymousRefused ?? (sudo !== "" ? Errors.forbidden(SUDO_REFUSED) : signInRequired)
          return refused === undefined ? httpEffect : Effect.fail(refused)
        }
        const proceed = (principal: Principal, caller: Principal) => {
          // The scope check is the administrator's token's, whoever the request now acts as.
          const refused = allow(request, principal)
          if (refused !== undefined) return Effect.fail(refused as never)
          setCaller(request, caller)
          return httpEffect
        }
        // Eager: a token found in the cache (an effect already complete) costs no step of its own.
        return Effect.flatMapEager(resolve(request, token, credentials), (principal) => {
          const account = accountRefusal(principal.user, settings.server.ROOT_URL)
          if (account !== undefined) return Effect.fail(Errors.forbidden(account) as never)
          if (sudo === "") return proceed(principal, principal)
          return Effect.flatMap(switchTo(principal, sudo), (caller) => proceed(principal, caller))
        })
      })
    })
  })
)

// Who is calling, for every /api/v1 request (CONTRACT §1.1–1.5): query token (deprecated),
// `Authorization: token|bearer X`, Basic (password, or a token as password; TOTP inside Basic).
// One middleware resolves the caller, applies the account-state and sign-in checks, and enforces
// each endpoint's `Access` rule (sign-in and token scopes), then records the caller (`Caller`).
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Settings, type SettingsShape } from "../config/Settings.ts"
import { HttpSignatures } from "../keys/HttpSignature.ts"
import { TokensRepo } from "../tokens/Repo.ts"
import { TwoFactor } from "../twofa/Service.ts"
import { verifyPassword } from "../users/Password.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import * as Errors from "./Errors.ts"
import { type Category, type Level, levelForMethod, missingScopeMessage, parseScopes, type ScopeSet } from "./Scopes.ts"

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

const principalOf = (request: HttpServerRequest.HttpServerRequest): Principal | undefined =>
  (request.source as WithPrincipal)[principalKey]

/** The authenticated caller of the current request, if any (none outside a request). */
export const Caller: Effect.Effect<Option.Option<Principal>> = Effect.withFiber((fiber) => {
  const request = Context.getOption(fiber.context, HttpServerRequest.HttpServerRequest)
  return Effect.succeed(Option.isNone(request) ? Option.none() : Option.fromNullishOr(principalOf(request.value)))
})

/** What an endpoint requires: a signed-in caller, and these token scope categories (all of them). */
export interface AccessRule {
  readonly signedIn: boolean
  readonly scopes: ReadonlyArray<Category>
  /**
   * A feature switch: while it is off the route answers 404 to everyone, before any credential is
   * looked at, as Forgejo answers a route it did not register (e.g. quota routes without
   * `[quota] ENABLED`).
   */
  readonly enabled?: ((settings: SettingsShape) => boolean) | undefined
}

/**
 * Why a signed-in caller may not go on, in Forgejo's words, or `undefined` when it may: the
 * account's state (CONTRACT §1.4), then a token's scopes for `categories` at `level` (§1.5).
 * The one rule for the API (below) and for git over HTTP and SSH (src/repos/GitHttp.ts).
 */
export const callerRefusal = (
  principal: Principal,
  level: Level,
  categories: ReadonlyArray<Category>,
  rootUrl: string
): string | undefined => {
  const { scopes, user } = principal
  if (!user.isActive || user.prohibitLogin) {
    return "This account is prohibited from signing in, please contact your site administrator."
  }
  if (user.mustChangePassword) return `You must change your password. Change it at: ${rootUrl}user/change_password`
  if (scopes !== undefined && categories.length > 0) return missingScopeMessage(scopes, level, categories)
  return undefined
}

export const Access = Context.Reference<AccessRule>("hearth/http/Access", {
  defaultValue: () => ({ signedIn: false, scopes: [] })
})

/** The signed-in caller, or 401 "token is required". */
export const signedInCaller: Effect.Effect<Principal, Errors.Unauthorized> = Effect.gen(function*() {
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
export const passwordCaller: Effect.Effect<Principal, Errors.Unauthorized> = Effect.flatMap(
  signedInCaller,
  (caller) =>
    caller.method === "password" ? Effect.succeed(caller) : Effect.fail(Errors.unauthorized("auth method not allowed"))
)

export const QUERY_TOKEN_WARNING = "token and access_token API authentication is deprecated and will be removed " +
  "in Forgejo v13.0.0. Please use AuthorizationHeaderToken instead. Existing queries will continue to work but " +
  "without authorization."

const TOKEN_PATTERN = /^[0-9a-f]{40}$/

/** Forgejo's answer when an account with two-factor sign-in uses its password for git over HTTP. */
export const TWO_FACTOR_NEEDS_TOKEN = "Users with two-factor authentication enabled cannot perform HTTP/HTTPS " +
  "operations via plain username and password. Please create and use a personal access token on the user settings page"

const CACHE_TTL_MS = 10_000
const CACHE_MAX = 10_000

export class Authenticator extends Context.Service<Authenticator, {
  readonly byToken: (token: string) => Effect.Effect<Principal, Errors.Unauthorized>
  /**
   * `passwordWithTwoFactor: "refuse"` is for git over HTTP, where no passcode can be sent: an
   * account with two-factor sign-in must use a token there (Forgejo's githttp `httpBase`).
   */
  readonly byBasic: (
    username: string,
    password: string,
    otp: string | undefined,
    options?: { readonly passwordWithTwoFactor?: "check" | "refuse" }
  ) => Effect.Effect<Principal, Errors.Unauthorized | Errors.TooManyRequests>
  /** Drops cached token look-ups; call after any change to tokens or accounts. */
  readonly invalidate: Effect.Effect<void>
}>()("hearth/http/Authenticator") {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function*() {
      const users = yield* UsersRepo
      const tokens = yield* TokensRepo
      const twoFactor = yield* TwoFactor
      const settings = yield* Settings
      const { LOGIN_MAX_FAILURES, LOGIN_THROTTLE_SECONDS } = settings.security
      // A cached principal carries its account row: it is good while no account was written since.
      const cache = new Map<string, { principal: Principal; expires: number; userWrites: number }>()
      // Bumped by `invalidate`: a look-up that started before a token was deleted must not put
      // the deleted token back into the cache when it completes.
      let generation = 0
      // Failed sign-ins per account id (wrong password or wrong passcode), for throttling.
      const failures = new Map<number, { count: number; until: number }>()

      const lookupToken = (token: string) =>
        Effect.gen(function*() {
          const row = yield* tokens.findByToken(token)
          if (Option.isNone(row)) return Option.none<Principal>()
          const user = yield* users.findById(row.value.userId)
          return Option.map(user, (user): Principal => ({
            user,
            scopes: parseScopes(row.value.scopes),
            method: "token"
          }))
        }).pipe(Effect.orDie)

      const byToken = (token: string): Effect.Effect<Principal, Errors.Unauthorized> => {
        // Built only when needed: constructing an error captures a stack trace.
        const notFound = () => Errors.unauthorized(`access token does not exist [sha: ${token}]`)
        if (!TOKEN_PATTERN.test(token)) return Effect.fail(notFound())
        const hit = cache.get(token)
        if (hit !== undefined && hit.expires > Date.now() && hit.userWrites === users.writes()) return Effect.succeed(hit.principal)
        return Effect.suspend(() => {
          const started = generation
          const userWrites = users.writes()
          return Effect.flatMap(lookupToken(token), (found) => {
            if (Option.isNone(found)) return Effect.fail(notFound())
            if (started === generation) {
              if (cache.size >= CACHE_MAX) cache.clear()
              cache.set(token, { principal: found.value, expires: Date.now() + CACHE_TTL_MS, userWrites })
            }
            return Effect.succeed(found.value)
          })
        })
      }

      const recordFailure = (userId: number) => {
        const now = Date.now()
        if (failures.size >= CACHE_MAX) {
          for (const [id, entry] of failures) if (entry.until <= now) failures.delete(id)
        }
        const previous = failures.get(userId)
        const count = previous !== undefined && previous.until > now ? previous.count + 1 : 1
        failures.set(userId, { count, until: now + LOGIN_THROTTLE_SECONDS * 1000 })
      }

      type SecondFactor = "check" | "refuse"

      const byPassword = (username: string, password: string, otp: string | undefined, secondFactor: SecondFactor) =>
        Effect.gen(function*() {
          const found = yield* Effect.orDie(
            username.includes("@") ? users.findByEmail(username) : users.findByName(username)
          )
          if (Option.isNone(found) || found.value.type !== "user") {
            return yield* Errors.unauthorized(`user does not exist [uid: 0, name: ${username}]`)
          }
          return yield* oneAtATime(found.value.id, checkPassword(found.value, password, otp, secondFactor))
        })

      // Password checks of one account run one at a time, so that concurrent guesses cannot all
      // pass the throttle check before any of their failures is recorded.
      const locks = new Map<number, { readonly semaphore: Semaphore.Semaphore; waiting: number }>()
      const oneAtATime = <A, E>(userId: number, effect: Effect.Effect<A, E>) =>
        Effect.suspend(() => {
          const entry = locks.get(userId) ?? { semaphore: Semaphore.makeUnsafe(1), waiting: 0 }
          locks.set(userId, entry)
          entry.waiting++
          return entry.semaphore.withPermit(effect).pipe(
            Effect.ensuring(Effect.sync(() => {
              if (--entry.waiting === 0) locks.delete(userId)
            }))
          )
        })

      const checkPassword = (user: UserRow, password: string, otp: string | undefined, secondFactor: SecondFactor) =>
        Effect.gen(function*() {
          // Throttled per account (not per spelling of its name or e-mail), before the costly
          // hash check, so guessing cannot go faster than LOGIN_MAX_FAILURES per window.
          const throttled = failures.get(user.id)
          const now = Date.now()
          if (throttled !== undefined && throttled.count >= LOGIN_MAX_FAILURES && throttled.until > now) {
            const wait = Math.ceil((throttled.until - now) / 1000)
            return yield* Errors.tooManyRequests(
              `too many failed sign-in attempts for ${user.name}: try again in ${wait} seconds`,
              wait
            )
          }
          if (!(yield* verifyPassword(user.passwdHash, password))) {
            recordFailure(user.id)
            return yield* Errors.unauthorized(`user's password is invalid [uid: ${user.id}, name: ${user.name}]`)
          }
          if (user.prohibitLogin) return yield* Errors.unauthorized("user is not allowed login")
          // Said only to someone who knew the password, so it reveals nothing to a guesser.
          if (secondFactor === "refuse" && (yield* Effect.orDie(twoFactor.isEnabled(user.id)))) {
            return yield* Errors.unauthorized(TWO_FACTOR_NEEDS_TOKEN)
          }
          if ((yield* Effect.orDie(twoFactor.check(user.id, otp))) === "invalid") {
            // A wrong passcode counts too: otherwise the password alone would allow guessing codes.
            recordFailure(user.id)
            return yield* Errors.unauthorized("invalid provided OTP")
          }
          failures.delete(user.id)
          return { user, scopes: undefined, method: "password" } satisfies Principal
        })

      return Authenticator.of({
        byToken,
        // Forgejo: an empty password or "x-oauth-basic" means the username is a token; otherwise
        // the password is tried as a token first, then as the account's password.
        byBasic: (username, password, otp, options) => {
          const secondFactor = options?.passwordWithTwoFactor ?? "check"
          if (password === "" || password === "x-oauth-basic") return byToken(username)
          if (!TOKEN_PATTERN.test(password)) return byPassword(username, password, otp, secondFactor)
          return byToken(password).pipe(
            Effect.catch(() => byPassword(username, password, otp, secondFactor))
          )
        },
        invalidate: Effect.sync(() => {
          generation++
          cache.clear()
        })
      })
    })
  )
}

export type Credentials =
  | { readonly kind: "none" }
  | { readonly kind: "token"; readonly token: string }
  | { readonly kind: "basic"; readonly username: string; readonly password: string }

/** Reads `Authorization`: exactly two whitespace-separated fields, the scheme word ASCII case-insensitive. */
export const parseAuthorization = (header: string | undefined): Credentials => {
  const fields = (header ?? "").trim().split(/\s+/)
  if (fields.length !== 2) return { kind: "none" }
  const [scheme, value] = fields as [string, string]
  // ASCII-only case folding, so look-alike letters (e.g. the Kelvin sign) do not match.
  const word = scheme.replace(/[A-Z]/g, (c) => c.toLowerCase())
  if (word === "token" || word === "bearer") return { kind: "token", token: value }
  if (word === "basic") {
    const decoded = Buffer.from(value, "base64").toString("utf8")
    const colon = decoded.indexOf(":")
    if (colon < 0) return { kind: "basic", username: decoded, password: "" }
    return { kind: "basic", username: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
  }
  return { kind: "none" }
}

export class Authentication extends HttpApiMiddleware.Service<Authentication>()(
  "hearth/http/Authentication",
  { error: [Errors.Unauthorized, Errors.Forbidden, Errors.TooManyRequests, Errors.NotFoundEmpty] }
) {}

/** The deprecated query token (`token`, else `access_token`), or "" when none is given. */
const queryToken = (request: HttpServerRequest.HttpServerRequest, context: Context.Context<never>): string => {
  if (!request.url.includes("?")) return ""
  const query = Context.getUnsafe(context, HttpServerRequest.ParsedSearchParams)
  const first = (value: string | ReadonlyArray<string> | undefined) => typeof value === "string" ? value : value?.[0] ?? ""
  return first(query.token) || first(query.access_token)
}

export const AuthenticationLive = Layer.effect(
  Authentication,
  Effect.gen(function*() {
    const authenticator = yield* Authenticator
    const signatures = yield* HttpSignatures
    const settings = yield* Settings
    const addWarning = HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "Warning", QUERY_TOKEN_WARNING))
    )
    const anonymousRefused = settings.service.REQUIRE_SIGNIN_VIEW
      ? Errors.forbidden("Only signed in user is allowed to call APIs.")
      : undefined

    const resolve = (
      request: HttpServerRequest.HttpServerRequest,
      token: string
    ): Effect.Effect<Principal, Errors.Unauthorized | Errors.TooManyRequests, HttpServerRequest.HttpServerRequest> => {
      if (token !== "") {
        if (settings.security.DISABLE_QUERY_AUTH_TOKEN) {
          return Effect.andThen(
            addWarning,
            Effect.fail(Errors.unauthorized(
              "API tokens in the query string are disabled on this server ([security] DISABLE_QUERY_AUTH_TOKEN): " +
                "send the token in the Authorization header instead"
            ))
          )
        }
        return Effect.andThen(addWarning, authenticator.byToken(token))
      }
      const credentials = parseAuthorization(request.headers["authorization"])
      if (credentials.kind === "token") return authenticator.byToken(credentials.token)
      // Then an HTTP signature made with an SSH key (Forgejo's order); a bad one is a 401.
      if (request.headers["signature"] !== undefined) return signatures.authenticate(request)
      // parseAuthorization only answers "basic" here: `resolve` is called when credentials exist.
      const basic = credentials as Extract<Credentials, { kind: "basic" }>
      // X-Forgejo-OTP wins over X-Gitea-OTP when both are sent (an empty one counts as absent).
      const otp = request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
      return authenticator.byBasic(basic.username, basic.password, otp)
    }

    // Called once per endpoint when the routes are built; the returned effect runs per request.
    return Authentication.of((httpEffect, { endpoint }) => {
      const rule = Context.get(endpoint.annotations, Access)
      if (rule.enabled !== undefined && !rule.enabled(settings)) return Effect.fail(Errors.notFound())
      const anonymous = anonymousRefused ?? (rule.signedIn ? Errors.unauthorized("token is required") : undefined)
      const allow = (request: HttpServerRequest.HttpServerRequest, principal: Principal) => {
        const refused = callerRefusal(principal, levelForMethod(request.method), rule.scopes, settings.server.ROOT_URL)
        return refused === undefined ? undefined : Errors.forbidden(refused)
      }
      return Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const token = queryToken(request, fiber.context)
        if (
          token === "" && parseAuthorization(request.headers["authorization"]).kind === "none" &&
          request.headers["signature"] === undefined
        ) {
          return anonymous === undefined ? httpEffect : Effect.fail(anonymous)
        }
        return Effect.flatMap(resolve(request, token), (principal) => {
          const refused = allow(request, principal)
          if (refused !== undefined) return Effect.fail(refused as never)
          ;(request.source as WithPrincipal)[principalKey] = principal
          return httpEffect
        })
      })
    })
  })
)

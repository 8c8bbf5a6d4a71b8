// Who is calling, from the credentials a request carries: an access token (stored hashed,
// looked up through a short cache) or an account's name or e-mail and password, with the TOTP
// passcode when two-factor sign-in is on (Forgejo's services/auth/method `oauth2.go`, `basic.go`).
// Used by the API's authentication middleware and by git over HTTP.
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { TokensRepo } from "../tokens/Repo.ts"
import { TwoFactor } from "../twofa/Service.ts"
import { verifyPassword } from "../users/Password.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { parseScopes } from "./Scopes.ts"

/** Personal access tokens are 40 lower-case hex characters (Forgejo: `GetAccessTokenBySHA`). */
export const TOKEN_PATTERN = /^[0-9a-f]{40}$/

/** Forgejo's answer when an account with two-factor sign-in uses its password for git over HTTP. */
export const TWO_FACTOR_NEEDS_TOKEN =
  "Users with two-factor authentication enabled cannot perform HTTP/HTTPS " +
  "operations via plain username and password. Please create and use a personal access token on the user settings page"

const CACHE_TTL_MS = 10_000
const CACHE_MAX = 10_000

export class Authenticator extends Context.Service<
  Authenticator,
  {
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
    /**
     * The web's sign-in (src/web): an account's name or e-mail and password, under the same
     * throttle as `byBasic`; `twoFactor` says that a passcode must follow (`byPasscode`).
     */
    readonly byPassword: (
      login: string,
      password: string
    ) => Effect.Effect<
      { readonly principal: Principal; readonly twoFactor: boolean },
      Errors.Unauthorized | Errors.TooManyRequests
    >
    /** The web's second step: the passcode of `user`'s second factor, counted in the same throttle. */
    readonly byPasscode: (
      user: UserRow,
      passcode: string
    ) => Effect.Effect<Principal, Errors.Unauthorized | Errors.TooManyRequests>
    /** Drops cached token look-ups; call after any change to tokens or accounts. */
    readonly invalidate: Effect.Effect<void>
  }
>()("hearth/http/Authenticator") {
  static readonly layer = Layer.effect(
    Authenticator,
    Effect.gen(function* () {
      const users = yield* UsersRepo
      const tokens = yield* TokensRepo
      const twoFactor = yield* TwoFactor
      const settings = yield* Settings
      const { LOGIN_MAX_FAILURES, LOGIN_THROTTLE_SECONDS } = settings.security
      // A cached principal carries its account row: it is good while no account was written since.
      // `found`: the principal as a completed effect, made once per look-up rather than per hit.
      const cache = new Map<string, { found: Effect.Effect<Principal>; expires: number; userWrites: number }>()
      // Bumped by `invalidate`: a look-up that started before a token was deleted must not put
      // the deleted token back into the cache when it completes.
      let generation = 0
      // Failed sign-ins per account id (wrong password or wrong passcode), for throttling.
      const failures = new Map<number, { count: number; until: number }>()

      const lookupToken = (token: string) =>
        Effect.gen(function* () {
          const row = yield* tokens.findByToken(token)
          if (Option.isNone(row)) return Option.none<Principal>()
          const user = yield* users.findById(row.value.userId)
          return Option.map(
            user,
            (user): Principal => ({
              user,
              scopes: parseScopes(row.value.scopes),
              method: "token"
            })
          )
        })

      const byToken = (token: string): Effect.Effect<Principal, Errors.Unauthorized> => {
        // Built only when needed: constructing an error captures a stack trace.
        const notFound = () => Errors.unauthorized(`access token does not exist [sha: ${token}]`)
        // Only well-formed tokens are ever cached: a hit needs no pattern check.
        const hit = cache.get(token)
        if (hit !== undefined && hit.expires > Date.now() && hit.userWrites === users.writes()) return hit.found
        if (!TOKEN_PATTERN.test(token)) return Effect.fail(notFound())
        return Effect.suspend(() => {
          const started = generation
          const userWrites = users.writes()
          return Effect.flatMap(lookupToken(token), (found) => {
            if (Option.isNone(found)) return Effect.fail(notFound())
            if (started === generation) {
              if (cache.size >= CACHE_MAX) cache.clear()
              cache.set(token, { found: Effect.succeed(found.value), expires: Date.now() + CACHE_TTL_MS, userWrites })
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

      // "defer": the passcode is asked for in a step of its own (the web's sign-in).
      type SecondFactor = "check" | "refuse" | "defer"

      const byPassword = (username: string, password: string, otp: string | undefined, secondFactor: SecondFactor) =>
        Effect.gen(function* () {
          const found = yield* username.includes("@") ? users.findByEmail(username) : users.findByName(username)
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
            Effect.ensuring(
              Effect.sync(() => {
                if (--entry.waiting === 0) locks.delete(userId)
              })
            )
          )
        })

      // Throttled per account (not per spelling of its name or e-mail), before the costly
      // hash check, so guessing cannot go faster than LOGIN_MAX_FAILURES per window.
      const throttle = (user: UserRow) =>
        Effect.suspend(() => {
          const throttled = failures.get(user.id)
          const now = Date.now()
          if (throttled === undefined || throttled.count < LOGIN_MAX_FAILURES || throttled.until <= now) {
            return Effect.void
          }
          const wait = Math.ceil((throttled.until - now) / 1000)
          return Effect.fail(
            Errors.tooManyRequests(
              `too many failed sign-in attempts for ${user.name}: try again in ${wait} seconds`,
              wait
            )
          )
        })

      const checkPasscode = (user: UserRow, otp: string | undefined) =>
        Effect.gen(function* () {
          if ((yield* twoFactor.check(user.id, otp)) === "invalid") {
            // A wrong passcode counts too: otherwise the password alone would allow guessing codes.
            recordFailure(user.id)
            return yield* Errors.unauthorized("invalid provided OTP")
          }
        })

      const checkPassword = (user: UserRow, password: string, otp: string | undefined, secondFactor: SecondFactor) =>
        Effect.gen(function* () {
          yield* throttle(user)
          if (!(yield* verifyPassword(user.passwdHash, password))) {
            recordFailure(user.id)
            return yield* Errors.unauthorized(`user's password is invalid [uid: ${user.id}, name: ${user.name}]`)
          }
          if (user.prohibitLogin) return yield* Errors.unauthorized("user is not allowed login")
          // Said only to someone who knew the password, so it reveals nothing to a guesser.
          if (secondFactor === "refuse" && (yield* twoFactor.isEnabled(user.id))) {
            return yield* Errors.unauthorized(TWO_FACTOR_NEEDS_TOKEN)
          }
          if (secondFactor !== "defer") yield* checkPasscode(user, otp)
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
          return byToken(password).pipe(Effect.catch(() => byPassword(username, password, otp, secondFactor)))
        },
        byPassword: (login, password) =>
          Effect.gen(function* () {
            const principal = yield* byPassword(login, password, undefined, "defer")
            return { principal, twoFactor: yield* twoFactor.isEnabled(principal.user.id) }
          }),
        byPasscode: (user, passcode) =>
          oneAtATime(
            user.id,
            Effect.gen(function* () {
              yield* throttle(user)
              yield* checkPasscode(user, passcode)
              failures.delete(user.id)
              return { user, scopes: undefined, method: "password" } satisfies Principal
            })
          ),
        invalidate: Effect.sync(() => {
          generation++
          cache.clear()
        })
      })
    })
  )
}

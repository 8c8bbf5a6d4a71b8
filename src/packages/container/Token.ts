// The container registry's bearer tokens (Forgejo's packages.CreateAuthorizationToken, answered at
// `GET /v2/token`): clients of the distribution spec trade their Basic credentials for a token once
// and send it as `Authorization: Bearer …` on every request after. Forgejo signs a JWT; Hearth seals
// the caller's id, the scopes of the access token used (none for a password: unrestricted, as the
// password itself) and an expiry with a key derived from SECRET_KEY. An anonymous caller gets a
// token too (user 0), which reads what anonymous callers may read.
import { Effect, Option } from "effect"
import { formatScopes, parseScopes } from "../../auth/Scopes.ts"
import { Settings } from "../../config/Settings.ts"
import type { Principal } from "../../http/Caller.ts"
import * as Errors from "../../http/Errors.ts"
import { sealer } from "../../lib/Sealer.ts"
import { type UserRow, UsersRepo } from "../../users/Repo.ts"
import type { BearerResolver } from "../Registry.ts"

/** Tells a sealed registry token from an access token (40 hex characters). */
const PREFIX = "hearth-oci."
/** How long a resolved token's account row is used without reading it again (as the Authenticator's cache). */
const CACHE_TTL_MS = 10_000
const CACHE_MAX = 10_000
/** How long a token lasts, in seconds (a large image's push must fit in it). */
export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60

interface Claims {
  /** The user's id; 0 for anonymous. */
  readonly u: number
  /** The access token's scopes; null for a password. */
  readonly s: ReadonlyArray<string> | null
  /** Expiry, in milliseconds since the epoch. */
  readonly e: number
}

export const makeContainerTokens = Effect.gen(function* () {
  const settings = yield* Settings
  const users = yield* UsersRepo
  const sealed = sealer(settings.security.SECRET_KEY, "container-registry-token")

  const mint = (caller: Principal | undefined): string => {
    const claims: Claims = {
      u: caller?.user.id ?? 0,
      s: caller?.scopes === undefined ? null : formatScopes(caller.scopes),
      e: Date.now() + TOKEN_LIFETIME_SECONDS * 1000
    }
    return PREFIX + sealed.seal(JSON.stringify(claims))
  }

  // A push is a dozen requests with the same token: its account is read once, and again after
  // any write to `users` (`writes()` changes) or CACHE_TTL_MS.
  const cache = new Map<number, { readonly user: UserRow; readonly expires: number; readonly writes: number }>()
  const account = (id: number) => {
    const hit = cache.get(id)
    if (hit !== undefined && hit.expires > Date.now() && hit.writes === users.writes())
      return Effect.succeed(Option.some(hit.user))
    const writes = users.writes()
    return Effect.tap(users.findById(id), (found) =>
      Effect.sync(() => {
        if (Option.isNone(found) || writes !== users.writes()) return
        if (cache.size >= CACHE_MAX) cache.clear()
        cache.set(id, { user: found.value, expires: Date.now() + CACHE_TTL_MS, writes })
      })
    )
  }

  const invalid = () => Errors.unauthorized("the registry token is invalid or has expired: sign in again")

  const resolve: BearerResolver = (token) => {
    if (!token.startsWith(PREFIX)) return undefined
    return Effect.gen(function* () {
      let claims: Claims
      try {
        claims = JSON.parse(sealed.open(token.slice(PREFIX.length))) as Claims
      } catch {
        return yield* invalid()
      }
      if (typeof claims.e !== "number" || claims.e < Date.now()) return yield* invalid()
      if (claims.u === 0) return undefined
      const user = yield* account(claims.u)
      if (Option.isNone(user)) return yield* invalid()
      return {
        user: user.value,
        scopes: claims.s === null ? undefined : parseScopes(claims.s),
        method: claims.s === null ? "password" : "token"
      } satisfies Principal
    })
  }

  return { mint, resolve }
})

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
import { UsersRepo } from "../../users/Repo.ts"
import type { BearerResolver } from "../Registry.ts"

/** Tells a sealed registry token from an access token (40 hex characters). */
const PREFIX = "hearth-oci."
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
      // A push is a dozen requests with the same token: its account comes from the users' cache.
      const user = yield* users.findById(claims.u)
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

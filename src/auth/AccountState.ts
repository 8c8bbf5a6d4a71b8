// The account-state checks for a signed-in caller (Forgejo's routers/api/shared/middleware.go
// `checkAccountState` via `verifyAuthWithOptions`), and the token-scope check that follows them
// (routers/api/v1/api.go `tokenRequiresScopes`): one rule for the API and for git over HTTP and SSH.
import type { Principal } from "../http/Caller.ts"
import type { UserRow } from "../users/Repo.ts"
import { type Category, type Level, missingScopeMessage } from "./Scopes.ts"

/** An account that may not sign in: inactive or login prohibited (Forgejo: `IsActive`, `ProhibitLogin`). */
export const signInProhibited = (user: Pick<UserRow, "isActive" | "prohibitLogin">): boolean =>
  !user.isActive || user.prohibitLogin

/** Why the account may not be used, in Forgejo's words, or `undefined` when it may. */
export const accountRefusal = (user: UserRow, rootUrl: string): string | undefined => {
  if (signInProhibited(user)) {
    return "This account is prohibited from signing in, please contact your site administrator."
  }
  if (user.mustChangePassword) return `You must change your password. Change it at: ${rootUrl}user/change_password`
  return undefined
}

/**
 * Why a signed-in caller may not go on, in Forgejo's words, or `undefined` when it may: the
 * account's state, then a token's scopes for `categories` at `level`.
 * The one rule for the API (src/auth/Authentication.ts) and for git over HTTP and SSH
 * (src/repos/GitHttp.ts).
 */
export const callerRefusal = (
  principal: Principal,
  level: Level,
  categories: ReadonlyArray<Category>,
  rootUrl: string
): string | undefined => {
  const { scopes, user } = principal
  const account = accountRefusal(user, rootUrl)
  if (account !== undefined) return account
  if (scopes !== undefined && categories.length > 0) return missingScopeMessage(scopes, level, categories)
  return undefined
}

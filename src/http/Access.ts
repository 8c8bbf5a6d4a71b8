// The access annotation of a route: what the authentication middleware (src/auth) requires
// before the handler runs. Route definitions import it from here, without the authenticator.
import { Context } from "effect"
import type { Category } from "../auth/Scopes.ts"
import type { SettingsShape } from "../config/Settings.ts"

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

export const Access = Context.Reference<AccessRule>("hearth/http/Access", {
  defaultValue: () => ({ signedIn: false, scopes: [] })
})

// The access annotation of a route: what the authentication middleware (src/auth) requires
// before the handler runs, and for a route under /repos/{owner}/{repo} what the repository
// assignment (src/repos/Assignment.ts) requires of the caller there. Route definitions import it
// from here, without the authenticator.
import { Context } from "effect"
import type { Category } from "../auth/Scopes.ts"
import type { SettingsShape } from "../config/Settings.ts"

/** A role on a repository, lowest first (Forgejo's `reqRepoReader`, `reqRepoWriter`, `reqRepoAdmin`, `reqOwner`). */
export type RepoRole = "read" | "write" | "admin" | "owner"

/** A part of a repository that can be switched off (Forgejo's units; `code` cannot). */
export type RepoUnit = "code" | "issues" | "pulls" | "wiki" | "releases" | "packages"

/**
 * What a route under /repos/{owner}/{repo} needs of the repository named in its path. The
 * assignment resolves it once: 404 when the caller may not see it (or the unit is off), 307 at an
 * old name, 403 without `role` (on `unit` when named), then for `changes`:
 * - `"settings"`: 409 while the repository is being created (a fork or migration job runs);
 * - `"mirrors"`: that, then 423 when archived (Forgejo's `mustNotBeArchived`): the mirror routes;
 * - `"content"`: both, then 403 for a pull mirror, which only takes what it fetches.
 */
export interface RepoRule {
  readonly role: RepoRole
  readonly unit?: RepoUnit | undefined
  readonly changes?: "settings" | "mirrors" | "content" | undefined
  /**
   * `"route"`: the assignment only resolves the repository (404, 307) and the route applies the
   * rule itself, for someone who may act on a repository they cannot see yet (the recipient of a
   * pending transfer).
   */
  readonly checkedBy?: "route" | undefined
}

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
  /** The repository of the path, opened for the handler (`CurrentRepo`), and what it requires there. */
  readonly repo?: RepoRule | undefined
}

export const Access = Context.Reference<AccessRule>("hearth/http/Access", {
  defaultValue: () => ({ signedIn: false, scopes: [] })
})

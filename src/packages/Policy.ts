// Who may do what with an owner's packages (Forgejo's services/context/package.go
// `determineAccessMode`, CONTRACT-PACKAGES §2.3): the one access-mode function for the registries
// and the management API. Packages are seen by whoever may see their owner; collaborators of a
// user's repositories get nothing; an organization's members get their teams' level (below write,
// raised by their teams' packages unit); site admins pass every check.
import { Context, Effect, Layer } from "effect"
import { signInProhibited } from "../auth/AccountState.ts"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { type AccessMode, atLeast } from "../lib/AccessMode.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"

export class PackagePolicy extends Context.Service<
  PackagePolicy,
  {
    /** The caller's access to the owner's packages ("owner" for the owner itself and site admins). */
    readonly accessMode: (viewer: Principal | undefined, owner: UserRow) => Effect.Effect<AccessMode>
  }
>()("hearth/packages/PackagePolicy") {
  static readonly layer = Layer.effect(
    PackagePolicy,
    Effect.gen(function* () {
      const settings = yield* Settings
      const accounts = yield* AccountPolicy
      const orgs = yield* OrgPolicy
      const higher = (a: AccessMode, b: AccessMode): AccessMode => (atLeast(a, b) ? a : b)

      return PackagePolicy.of({
        accessMode: (viewer, owner) =>
          Effect.gen(function* () {
            if (viewer === undefined && settings.service.REQUIRE_SIGNIN_VIEW) return "none"
            if (viewer !== undefined && signInProhibited(viewer.user)) return "none"
            if (viewer?.user.isAdmin === true) return "owner"
            if (owner.type === "organization" && viewer !== undefined) {
              const teams = yield* orgs.teamsOf(owner, viewer.user)
              let mode = teams.reduce<AccessMode>((best, t) => higher(best, t.permission), "none")
              if (!atLeast(mode, "write"))
                mode = teams.reduce<AccessMode>((best, t) => higher(best, t.units["repo.packages"] ?? "none"), mode)
              if (mode !== "none") return mode
              // A member of a team without packages access still reads them (the org is visible to it).
              if (teams.length > 0) return "read"
            } else if (viewer !== undefined && viewer.user.id === owner.id) {
              return "owner"
            }
            return (yield* accounts.canSee(viewer, owner)) ? "read" : "none"
          })
      })
    })
  )
}

// Who may do what in an organization. Owners are the members of the org's owner team (the team
// with permission `owner`, made with the org); site admins pass every owner check. Other slices
// (repositories) use `canCreateOrgRepo` and the team access levels.
import { Context, Effect, Layer } from "effect"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { type AccessMode, atLeast } from "../lib/AccessMode.ts"
import type { UserRow } from "../users/Repo.ts"
import { OrgsRepo, type TeamRow } from "./Repo.ts"

/** Repository units a team can be given access to, in Forgejo's unit-type order. */
export const UNIT_KEYS = [
  "repo.code",
  "repo.issues",
  "repo.pulls",
  "repo.releases",
  "repo.wiki",
  "repo.ext_wiki",
  "repo.ext_issues",
  "repo.projects",
  "repo.packages",
  "repo.actions"
] as const

export const OWNER_TEAM_NAME = "Owners"

export class OrgPolicy extends Context.Service<
  OrgPolicy,
  {
    /** Member of the org's owner team (site admins are not owners by this test). */
    readonly isOwner: (org: UserRow, user: UserRow) => Effect.Effect<boolean>
    /** Member of any team of the org. */
    readonly isMember: (org: UserRow, user: UserRow) => Effect.Effect<boolean>
    /** The highest access level the user's teams in the org grant ("none" for non-members). */
    readonly teamAccess: (org: UserRow, user: UserRow) => Effect.Effect<AccessMode>
    /** The user's teams in the org (for per-repository access: includes_all_repositories, units). */
    readonly teamsOf: (org: UserRow, user: UserRow) => Effect.Effect<Array<TeamRow>>
    /** Site admin, owner, or member of a team with can_create_org_repo. */
    readonly canCreateOrgRepo: (org: UserRow, user: UserRow) => Effect.Effect<boolean>
    /** 403 "Must be an organization owner" unless the caller is an owner or a site admin. */
    readonly ensureOwner: (caller: Principal, org: UserRow) => Effect.Effect<void, Errors.Forbidden>
    /** 403 "Must be an organization member" unless the caller is a member or a site admin. */
    readonly ensureMember: (caller: Principal, org: UserRow) => Effect.Effect<void, Errors.Forbidden>
    /**
     * Who may see a team: site admins, org owners and the team's members. Other org members know
     * the team exists (they list the org's teams) and get 403; everyone else 404.
     */
    readonly ensureTeamVisible: (
      caller: Principal,
      org: UserRow,
      team: TeamRow
    ) => Effect.Effect<void, Errors.NotFound | Errors.Forbidden>
  }
>()("hearth/orgs/OrgPolicy") {
  static readonly layer = Layer.effect(
    OrgPolicy,
    Effect.gen(function* () {
      const repo = yield* OrgsRepo
      const teamsOf = (org: UserRow, user: UserRow) => repo.teamsOfUser(org.id, user.id)
      const isOwner = (org: UserRow, user: UserRow) =>
        Effect.map(teamsOf(org, user), (teams) => teams.some((t) => t.permission === "owner"))
      const isMember = (org: UserRow, user: UserRow) =>
        Effect.map(repo.membership(org.id, user.id), (m) => m._tag === "Some")

      return OrgPolicy.of({
        isOwner,
        isMember,
        teamsOf,
        teamAccess: (org, user) =>
          Effect.map(teamsOf(org, user), (teams) =>
            teams.reduce<AccessMode>((best, t) => (atLeast(best, t.permission) ? best : t.permission), "none")
          ),
        canCreateOrgRepo: (org, user) =>
          user.isAdmin
            ? Effect.succeed(true)
            : Effect.map(teamsOf(org, user), (teams) =>
                teams.some((t) => t.permission === "owner" || t.canCreateOrgRepo)
              ),
        ensureOwner: (caller, org) =>
          caller.user.isAdmin
            ? Effect.void
            : Effect.flatMap(isOwner(org, caller.user), (owner) =>
                owner ? Effect.void : Effect.fail(Errors.forbidden("Must be an organization owner"))
              ),
        ensureMember: (caller, org) =>
          caller.user.isAdmin
            ? Effect.void
            : Effect.flatMap(isMember(org, caller.user), (member) =>
                member ? Effect.void : Effect.fail(Errors.forbidden("Must be an organization member"))
              ),
        ensureTeamVisible: (caller, org, team) =>
          Effect.gen(function* () {
            if (caller.user.isAdmin) return
            const teams = yield* teamsOf(org, caller.user)
            if (teams.some((t) => t.permission === "owner" || t.id === team.id)) return
            if (teams.length > 0) return yield* Errors.forbidden("Must be a team member")
            return yield* Errors.notFound()
          })
      })
    })
  )
}

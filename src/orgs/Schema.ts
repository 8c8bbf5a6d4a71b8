// The Organization and Team objects of the API (Forgejo's `Organization`, `Team` and their
// create/edit options), and how rows are shown to a viewer.
import { Schema } from "effect"
import { userAvatarUrl } from "../avatars/Url.ts"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { Id } from "../http/Json.ts"
import { ACCESS_MODES } from "../lib/AccessMode.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import type { UserRow } from "../users/Repo.ts"
import { Visibility } from "../users/Schema.ts"
import { UNIT_KEYS } from "./Policy.ts"
import type { TeamRow } from "./Repo.ts"

export const Organization = Schema.Struct({
  id: Id,
  name: Schema.String,
  full_name: Schema.String,
  email: Schema.String,
  avatar_url: Schema.String,
  description: Schema.String,
  website: Schema.String,
  location: Schema.String,
  visibility: Visibility,
  repo_admin_change_team_access: Schema.Boolean,
  /** Deprecated duplicate of `name`, kept for compatibility. */
  username: Schema.String
}).annotate({ identifier: "Organization" })
export type Organization = typeof Organization.Type

// Go clients send "" for an unset visibility or permission; Forgejo reads it as "not given".
const VisibilityOption = Schema.Literals(["", "public", "limited", "private"])

const orgFields = {
  full_name: Schema.optionalKey(Schema.String),
  email: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  website: Schema.optionalKey(Schema.String),
  location: Schema.optionalKey(Schema.String),
  visibility: Schema.optionalKey(VisibilityOption),
  repo_admin_change_team_access: Schema.optionalKey(Schema.Boolean)
}

export const CreateOrgOption = Schema.Struct({
  username: BoundedName("UserName", NAME_MAX.user),
  ...orgFields
}).annotate({ identifier: "CreateOrgOption" })
export type CreateOrgOption = typeof CreateOrgOption.Type

export const EditOrgOption = Schema.Struct(orgFields).annotate({ identifier: "EditOrgOption" })
export type EditOrgOption = typeof EditOrgOption.Type

export const TeamPermission = Schema.Literals(ACCESS_MODES)

export const Team = Schema.Struct({
  id: Id,
  name: Schema.String,
  description: Schema.String,
  /** Filled by `GET /teams/{id}` only, as Forgejo; null elsewhere. */
  organization: Schema.NullOr(Organization),
  includes_all_repositories: Schema.Boolean,
  permission: TeamPermission,
  units: Schema.Array(Schema.String),
  units_map: Schema.Record(Schema.String, Schema.String),
  can_create_org_repo: Schema.Boolean
}).annotate({ identifier: "Team" })
export type Team = typeof Team.Type

const teamFields = {
  description: Schema.optionalKey(Schema.String),
  permission: Schema.optionalKey(Schema.Literals(["", "read", "write", "admin"])),
  includes_all_repositories: Schema.optionalKey(Schema.Boolean),
  can_create_org_repo: Schema.optionalKey(Schema.Boolean),
  units: Schema.optionalKey(Schema.Array(Schema.String)),
  units_map: Schema.optionalKey(Schema.Record(Schema.String, Schema.String))
}

export const CreateTeamOption = Schema.Struct({
  name: BoundedName("Name", NAME_MAX.team),
  ...teamFields
}).annotate({ identifier: "CreateTeamOption" })
export type CreateTeamOption = typeof CreateTeamOption.Type

export const EditTeamOption = Schema.Struct({
  name: Schema.optionalKey(BoundedName("Name", NAME_MAX.team)),
  ...teamFields
}).annotate({ identifier: "EditTeamOption" })
export type EditTeamOption = typeof EditTeamOption.Type

/**
 * Converts an organization for a viewer. Anonymous callers get no e-mail, as Forgejo's
 * `GET /orgs/{org}`; Hearth applies that to every list too.
 */
export const toApiOrg = (settings: SettingsShape, org: UserRow, viewer: Principal | undefined): Organization => ({
  id: org.id,
  name: org.name,
  full_name: org.fullName,
  email: viewer === undefined ? "" : org.email,
  avatar_url: userAvatarUrl(settings, org),
  description: org.description,
  website: org.website,
  location: org.location,
  visibility: org.visibility,
  repo_admin_change_team_access: org.repoAdminChangeTeamAccess,
  username: org.name
})

/** Admin and owner teams reach every unit at the team's level; others list their own units. */
export const teamUnitsMap = (team: TeamRow): Record<string, string> => {
  if (team.permission === "admin" || team.permission === "owner") {
    return Object.fromEntries(UNIT_KEYS.map((key) => [key, team.permission]))
  }
  return Object.fromEntries(UNIT_KEYS.filter((key) => key in team.units).map((key) => [key, team.units[key]!]))
}

export const toApiTeam = (team: TeamRow, organization: Organization | null = null): Team => {
  const unitsMap = teamUnitsMap(team)
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization,
    includes_all_repositories: team.includesAllRepositories,
    permission: team.permission,
    units: Object.keys(unitsMap),
    units_map: unitsMap,
    can_create_org_repo: team.canCreateOrgRepo
  }
}

export const RenameOrgOption = Schema.Struct({
  new_name: BoundedName("NewName", NAME_MAX.user)
}).annotate({ identifier: "RenameOrgOption" })

/** What a user may do in an organization (Forgejo's `OrganizationPermissions`). */
export const OrganizationPermissions = Schema.Struct({
  can_create_repository: Schema.Boolean,
  can_read: Schema.Boolean,
  can_write: Schema.Boolean,
  is_admin: Schema.Boolean,
  is_owner: Schema.Boolean
}).annotate({ identifier: "OrganizationPermissions" })

/** `GET /orgs/{org}/teams/search`: Forgejo answers `{ok, data}` rather than a bare list. */
export const TeamSearchResults = Schema.Struct({
  ok: Schema.Boolean,
  data: Schema.Array(Team)
}).annotate({ identifier: "TeamSearchResults" })

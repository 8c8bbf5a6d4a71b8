// Organizations, their teams and members (Forgejo's "organization" routes). Every route needs the
// `organization` token scope (read for GET, write otherwise); the routes that list a user's orgs
// need `user` as well, as Forgejo.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"
import {
  CreateOrgOption,
  CreateTeamOption,
  EditOrgOption,
  EditTeamOption,
  Organization,
  OrganizationPermissions,
  RenameOrgOption,
  Team,
  TeamSearchResults
} from "./Schema.ts"

const open = { signedIn: false, scopes: ["organization"] } as const
const signedIn = { signedIn: true, scopes: ["organization"] } as const
const userOrgs = { signedIn: true, scopes: ["user", "organization"] } as const

const org = { org: Schema.String }
const orgUser = { org: Schema.String, username: Schema.String }
const team = { id: Schema.String }
const teamUser = { id: Schema.String, username: Schema.String }
const teamRepo = { id: Schema.String, org: Schema.String, repo: Schema.String }
const repoTeam = { owner: Schema.String, repo: Schema.String, team: Schema.String }
// Forgejo's /repos/{owner}/{repo}/teams routes: `reqToken`, `reqAnyRepoReader` to look, `reqAdmin` to change.
const repoTeamsRead = { signedIn: true, scopes: ["repository"], repo: { role: "read" } } as const
const repoTeamsAdmin = { signedIn: true, scopes: ["repository"], repo: { role: "admin" } } as const

export class OrgsApi extends HttpApiGroup.make("orgs").add(
  HttpApiEndpoint.get("listOrgs", "/orgs", { query: PageQuery, success: Schema.Array(Organization) })
    .annotate(OpenApi.Identifier, "orgGetAll")
    .annotate(Access, open),
  HttpApiEndpoint.post("createOrg", "/orgs", {
    payload: CreateOrgOption,
    success: Organization.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "orgCreate")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("getOrg", "/orgs/:org", { params: org, success: Organization })
    .annotate(OpenApi.Identifier, "orgGet")
    .annotate(Access, open),
  HttpApiEndpoint.patch("editOrg", "/orgs/:org", {
    params: org,
    payload: EditOrgOption,
    success: Organization
  })
    .annotate(OpenApi.Identifier, "orgEdit")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("deleteOrg", "/orgs/:org", { params: org, success: HttpApiSchema.NoContent })
    .annotate(OpenApi.Identifier, "orgDelete")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listMyOrgs", "/user/orgs", { query: PageQuery, success: Schema.Array(Organization) })
    .annotate(OpenApi.Identifier, "orgListCurrentUserOrgs")
    .annotate(Access, userOrgs),
  HttpApiEndpoint.get("listUserOrgs", "/users/:username/orgs", {
    params: { username: Schema.String },
    query: PageQuery,
    success: Schema.Array(Organization)
  })
    .annotate(OpenApi.Identifier, "orgListUserOrgs")
    .annotate(Access, userOrgs),

  HttpApiEndpoint.get("listMembers", "/orgs/:org/members", {
    params: org,
    query: PageQuery,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "orgListMembers")
    .annotate(Access, open),
  HttpApiEndpoint.get("isMember", "/orgs/:org/members/:username", {
    params: orgUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgIsMember")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("removeMember", "/orgs/:org/members/:username", {
    params: orgUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgDeleteMember")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listPublicMembers", "/orgs/:org/public_members", {
    params: org,
    query: PageQuery,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "orgListPublicMembers")
    .annotate(Access, open),
  HttpApiEndpoint.get("isPublicMember", "/orgs/:org/public_members/:username", {
    params: orgUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgIsPublicMember")
    .annotate(Access, open),
  HttpApiEndpoint.put("publicizeMember", "/orgs/:org/public_members/:username", {
    params: orgUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgPublicizeMember")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("concealMember", "/orgs/:org/public_members/:username", {
    params: orgUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgConcealMember")
    .annotate(Access, signedIn),

  HttpApiEndpoint.get("listTeams", "/orgs/:org/teams", {
    params: org,
    query: PageQuery,
    success: Schema.Array(Team)
  })
    .annotate(OpenApi.Identifier, "orgListTeams")
    .annotate(Access, signedIn),
  HttpApiEndpoint.post("createTeam", "/orgs/:org/teams", {
    params: org,
    payload: CreateTeamOption,
    success: Team.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "orgCreateTeam")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("getTeam", "/teams/:id", { params: team, success: Team })
    .annotate(OpenApi.Identifier, "orgGetTeam")
    .annotate(Access, signedIn),
  HttpApiEndpoint.patch("editTeam", "/teams/:id", { params: team, payload: EditTeamOption, success: Team })
    .annotate(OpenApi.Identifier, "orgEditTeam")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("deleteTeam", "/teams/:id", { params: team, success: HttpApiSchema.NoContent })
    .annotate(OpenApi.Identifier, "orgDeleteTeam")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listTeamMembers", "/teams/:id/members", {
    params: team,
    query: PageQuery,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "orgListTeamMembers")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("getTeamMember", "/teams/:id/members/:username", { params: teamUser, success: User })
    .annotate(OpenApi.Identifier, "orgListTeamMember")
    .annotate(Access, signedIn),
  HttpApiEndpoint.put("addTeamMember", "/teams/:id/members/:username", {
    params: teamUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgAddTeamMember")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("removeTeamMember", "/teams/:id/members/:username", {
    params: teamUser,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgRemoveTeamMember")
    .annotate(Access, signedIn),

  HttpApiEndpoint.post("renameOrg", "/orgs/:org/rename", {
    params: org,
    payload: RenameOrgOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "renameOrg")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("searchTeams", "/orgs/:org/teams/search", {
    params: org,
    query: { q: Schema.optional(Schema.String), include_desc: Schema.optional(Schema.String), ...PageQuery },
    success: TeamSearchResults
  })
    .annotate(OpenApi.Identifier, "teamSearch")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listTeamRepos", "/teams/:id/repos", {
    params: team,
    query: PageQuery,
    success: Schema.Array(Repository)
  })
    .annotate(OpenApi.Identifier, "orgListTeamRepos")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("getTeamRepo", "/teams/:id/repos/:org/:repo", { params: teamRepo, success: Repository })
    .annotate(OpenApi.Identifier, "orgListTeamRepo")
    .annotate(Access, signedIn),
  HttpApiEndpoint.put("addTeamRepo", "/teams/:id/repos/:org/:repo", {
    params: teamRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgAddTeamRepository")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("removeTeamRepo", "/teams/:id/repos/:org/:repo", {
    params: teamRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgRemoveTeamRepository")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listRepoTeams", "/repos/:owner/:repo/teams", {
    params: { owner: Schema.String, repo: Schema.String },
    success: Schema.Array(Team)
  })
    .annotate(OpenApi.Identifier, "repoListTeams")
    .annotate(Access, repoTeamsRead),
  HttpApiEndpoint.get("checkRepoTeam", "/repos/:owner/:repo/teams/:team", { params: repoTeam, success: Team })
    .annotate(OpenApi.Identifier, "repoCheckTeam")
    .annotate(Access, repoTeamsRead),
  HttpApiEndpoint.put("addRepoTeam", "/repos/:owner/:repo/teams/:team", {
    params: repoTeam,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoAddTeam")
    .annotate(Access, repoTeamsAdmin),
  HttpApiEndpoint.delete("deleteRepoTeam", "/repos/:owner/:repo/teams/:team", {
    params: repoTeam,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteTeam")
    .annotate(Access, repoTeamsAdmin),
  HttpApiEndpoint.get("listMyTeams", "/user/teams", { query: PageQuery, success: Schema.Array(Team) })
    .annotate(OpenApi.Identifier, "userListTeams")
    .annotate(Access, userOrgs),
  HttpApiEndpoint.get("userOrgPermissions", "/users/:username/orgs/:org/permissions", {
    params: orgUser,
    success: OrganizationPermissions
  })
    .annotate(OpenApi.Identifier, "orgGetUserPermissions")
    .annotate(Access, userOrgs)
) {}

// Repositories: creation, reading, deletion and the owner lists. Scopes as Forgejo's `tokenRequiresScopes`: the
// `repository` category everywhere, plus `user` on /user/… and /users/… and `organization` on
// the org routes.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { User } from "../users/Schema.ts"
import {
  AddCollaboratorOption,
  CreateRepoOption,
  EditRepoOption,
  GenerateRepoOption,
  RepoCollaboratorPermission,
  Repository,
  SearchResults
} from "./Schema.ts"

const repoOpen = { signedIn: false, scopes: ["repository"] } as const
const repoSignedIn = { signedIn: true, scopes: ["repository"] } as const
/** The repository of the path, as Forgejo's `repoAssignment` (src/repos/Assignment.ts). */
const repoRead = { ...repoOpen, repo: { role: "read" } } as const
const repoSettings = { ...repoSignedIn, repo: { role: "admin", changes: "settings" } } as const
const repoSignedInRead = { ...repoSignedIn, repo: { role: "read" } } as const
const repoAdmin = { ...repoSignedIn, repo: { role: "admin" } } as const
const repoOwner = { ...repoSignedIn, repo: { role: "owner" } } as const
const userRepos = { signedIn: true, scopes: ["user", "repository"] } as const
const userReposOpen = { signedIn: false, scopes: ["user", "repository"] } as const
const orgRepos = { signedIn: true, scopes: ["organization", "repository"] } as const
const orgReposOpen = { signedIn: false, scopes: ["organization", "repository"] } as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const collaborator = { ...ownerRepo, collaborator: Schema.String }
const optional = Schema.optional(Schema.String)
const org = { org: Schema.String }
const created = Repository.pipe(HttpApiSchema.status(201))

export class ReposApi extends HttpApiGroup.make("repos").add(
  HttpApiEndpoint.post("createMyRepo", "/user/repos", { payload: CreateRepoOption, success: created })
    .annotate(OpenApi.Identifier, "createCurrentUserRepo")
    .annotate(Access, userRepos),
  HttpApiEndpoint.get("listMyRepos", "/user/repos", {
    query: { ...PageQuery, order_by: Schema.optional(Schema.String) },
    success: Schema.Array(Repository)
  })
    .annotate(OpenApi.Identifier, "userCurrentListRepos")
    .annotate(Access, userRepos),
  HttpApiEndpoint.post("createOrgRepo", "/orgs/:org/repos", {
    params: org,
    payload: CreateRepoOption,
    success: created
  })
    .annotate(OpenApi.Identifier, "createOrgRepo")
    .annotate(Access, orgRepos),
  // Deprecated alias of POST /orgs/{org}/repos, kept for older clients.
  HttpApiEndpoint.post("createOrgRepoDeprecated", "/org/:org/repos", {
    params: org,
    payload: CreateRepoOption,
    success: created
  })
    .annotate(OpenApi.Identifier, "createOrgRepoDeprecated")
    .annotate(Access, orgRepos),
  HttpApiEndpoint.get("listOrgRepos", "/orgs/:org/repos", {
    params: org,
    query: PageQuery,
    success: Schema.Array(Repository)
  })
    .annotate(OpenApi.Identifier, "orgListRepos")
    .annotate(Access, orgReposOpen),
  HttpApiEndpoint.get("listUserRepos", "/users/:username/repos", {
    params: { username: Schema.String },
    query: PageQuery,
    success: Schema.Array(Repository)
  })
    .annotate(OpenApi.Identifier, "userListRepos")
    .annotate(Access, userReposOpen),
  HttpApiEndpoint.get("getRepo", "/repos/:owner/:repo", { params: ownerRepo, success: Repository })
    .annotate(OpenApi.Identifier, "repoGet")
    .annotate(Access, repoRead),
  HttpApiEndpoint.patch("editRepo", "/repos/:owner/:repo", {
    params: ownerRepo,
    payload: EditRepoOption,
    success: Repository
  })
    .annotate(OpenApi.Identifier, "repoEdit")
    .annotate(Access, repoSettings),
  // Strings, read leniently as Forgejo's form helpers do (a non-numeric id is no filter).
  HttpApiEndpoint.get("searchRepos", "/repos/search", {
    query: {
      q: optional,
      uid: optional,
      exclusive: optional,
      private: optional,
      is_private: optional,
      template: optional,
      archived: optional,
      mode: optional,
      sort: optional,
      order: optional,
      starredBy: optional,
      topic: optional,
      ...PageQuery
    },
    success: SearchResults
  })
    .annotate(OpenApi.Identifier, "repoSearch")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("listCollaborators", "/repos/:owner/:repo/collaborators", {
    params: ownerRepo,
    query: PageQuery,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "repoListCollaborators")
    .annotate(Access, repoSignedInRead),
  HttpApiEndpoint.get("checkCollaborator", "/repos/:owner/:repo/collaborators/:collaborator", {
    params: collaborator,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoCheckCollaborator")
    .annotate(Access, repoSignedInRead),
  HttpApiEndpoint.put("addCollaborator", "/repos/:owner/:repo/collaborators/:collaborator", {
    params: collaborator,
    payload: AddCollaboratorOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoAddCollaborator")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.delete("deleteCollaborator", "/repos/:owner/:repo/collaborators/:collaborator", {
    params: collaborator,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteCollaborator")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.get("collaboratorPermission", "/repos/:owner/:repo/collaborators/:collaborator/permission", {
    params: collaborator,
    success: RepoCollaboratorPermission
  })
    .annotate(OpenApi.Identifier, "repoGetRepoPermissions")
    .annotate(Access, repoSignedInRead),
  HttpApiEndpoint.delete("deleteRepo", "/repos/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDelete")
    .annotate(Access, repoOwner),
  // Forgejo: reqToken, reqRepoReader(code) on the template.
  HttpApiEndpoint.post("generateRepo", "/repos/:owner/:repo/generate", {
    params: ownerRepo,
    payload: GenerateRepoOption,
    success: created
  })
    .annotate(OpenApi.Identifier, "generateRepo")
    .annotate(Access, { ...repoSignedIn, repo: { role: "read", unit: "code" } }),
  HttpApiEndpoint.get("getRepoById", "/repositories/:id", {
    params: { id: Schema.String },
    success: Repository
  })
    .annotate(OpenApi.Identifier, "repoGetByID")
    .annotate(Access, repoOpen)
) {}

// Repositories: creation, reading, deletion and the owner lists. Scopes as CONTRACT §1.5: the
// `repository` category everywhere, plus `user` on /user/… and /users/… and `organization` on
// the org routes.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Access } from "../http/Authentication.ts"
import { PageQuery } from "../http/Pagination.ts"
import { CreateRepoOption, Repository } from "./Schema.ts"

const repoOpen = { signedIn: false, scopes: ["repository"] } as const
const repoSignedIn = { signedIn: true, scopes: ["repository"] } as const
const userRepos = { signedIn: true, scopes: ["user", "repository"] } as const
const userReposOpen = { signedIn: false, scopes: ["user", "repository"] } as const
const orgRepos = { signedIn: true, scopes: ["organization", "repository"] } as const
const orgReposOpen = { signedIn: false, scopes: ["organization", "repository"] } as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const org = { org: Schema.String }
const created = Repository.pipe(HttpApiSchema.status(201))

export class ReposApi extends HttpApiGroup.make("repos")
  .add(
    HttpApiEndpoint.post("createMyRepo", "/user/repos", { payload: CreateRepoOption, success: created })
      .annotate(Access, userRepos),
    HttpApiEndpoint.get("listMyRepos", "/user/repos", {
      query: { ...PageQuery, order_by: Schema.optional(Schema.String) },
      success: Schema.Array(Repository)
    }).annotate(Access, userRepos),
    HttpApiEndpoint.post("createOrgRepo", "/orgs/:org/repos", { params: org, payload: CreateRepoOption, success: created })
      .annotate(Access, orgRepos),
    // Deprecated alias of POST /orgs/{org}/repos, kept for older clients.
    HttpApiEndpoint.post("createOrgRepoDeprecated", "/org/:org/repos", {
      params: org,
      payload: CreateRepoOption,
      success: created
    }).annotate(Access, orgRepos),
    HttpApiEndpoint.get("listOrgRepos", "/orgs/:org/repos", {
      params: org,
      query: PageQuery,
      success: Schema.Array(Repository)
    }).annotate(Access, orgReposOpen),
    HttpApiEndpoint.get("listUserRepos", "/users/:username/repos", {
      params: { username: Schema.String },
      query: PageQuery,
      success: Schema.Array(Repository)
    }).annotate(Access, userReposOpen),
    HttpApiEndpoint.get("getRepo", "/repos/:owner/:repo", { params: ownerRepo, success: Repository })
      .annotate(Access, repoOpen),
    HttpApiEndpoint.delete("deleteRepo", "/repos/:owner/:repo", { params: ownerRepo, success: HttpApiSchema.NoContent })
      .annotate(Access, repoSignedIn),
    HttpApiEndpoint.get("getRepoById", "/repositories/:id", { params: { id: Schema.String }, success: Repository })
      .annotate(Access, repoOpen)
  )
{}

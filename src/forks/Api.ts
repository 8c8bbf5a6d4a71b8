// Forks (Forgejo's routers/api/v1/repo/fork.go): list a repository's forks, fork it into your account or an organization.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { Repository } from "../repos/Schema.ts"

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const nullableString = Schema.optional(Schema.NullOr(Schema.String))

export const CreateForkOption = Schema.Struct({
  organization: nullableString,
  name: Schema.optional(Schema.NullOr(BoundedName("Name", NAME_MAX.repo)))
}).annotate({ identifier: "CreateForkOption" })

/** Forgejo's SyncForkInfo: whether the branch can be fast-forwarded to its base's, and how far. */
export const SyncForkInfo = Schema.Struct({
  allowed: Schema.Boolean,
  fork_commit: Schema.String,
  base_commit: Schema.String,
  commits_behind: Schema.Int
}).annotate({ identifier: "SyncForkInfo" })

const syncRead = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } } as const
const syncWrite = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "code", changes: "content" }
} as const
const withBranch = { ...ownerRepo, branch: Schema.String }

export class ForksApi extends HttpApiGroup.make("forks").add(
  HttpApiEndpoint.get("listForks", "/repos/:owner/:repo/forks", {
    params: ownerRepo,
    query: PageQuery,
    success: Schema.Array(Repository)
  })
    .annotate(OpenApi.Identifier, "listForks")
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read" } }),
  // 202: the repository exists at once; its git data is copied by a background job.
  HttpApiEndpoint.post("createFork", "/repos/:owner/:repo/forks", {
    params: ownerRepo,
    payload: CreateForkOption,
    success: Repository.pipe(HttpApiSchema.status(202))
    // Forgejo's `reqRepoReader(unit.TypeCode)`.
  })
    .annotate(OpenApi.Identifier, "createFork")
    .annotate(Access, { signedIn: true, scopes: ["repository"], repo: { role: "read", unit: "code" } }),
  // Syncing a fork's branch (the default branch, or a named one) with its base's same branch.
  HttpApiEndpoint.get("syncForkDefaultInfo", "/repos/:owner/:repo/sync_fork", {
    params: ownerRepo,
    success: SyncForkInfo
  })
    .annotate(OpenApi.Identifier, "repoSyncForkDefaultInfo")
    .annotate(Access, syncRead),
  HttpApiEndpoint.post("syncForkDefault", "/repos/:owner/:repo/sync_fork", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoSyncForkDefault")
    .annotate(Access, syncWrite),
  HttpApiEndpoint.get("syncForkBranchInfo", "/repos/:owner/:repo/sync_fork/:branch", {
    params: withBranch,
    success: SyncForkInfo
  })
    .annotate(OpenApi.Identifier, "repoSyncForkBranchInfo")
    .annotate(Access, syncRead),
  HttpApiEndpoint.post("syncForkBranch", "/repos/:owner/:repo/sync_fork/:branch", {
    params: withBranch,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoSyncForkBranch")
    .annotate(Access, syncWrite)
) {}

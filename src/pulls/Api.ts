// Pull request routes (Forgejo's routers/api/v1/repo/pull.go; CONTRACT-PULLS §1 route table), with
// Forgejo's operationIds. All need the pulls unit (404 when it is off or unreadable); reads are
// open to anonymous callers of public repositories. Creating and merging refuse archived
// repositories (423, Forgejo's `mustNotBeArchived`); the finer rules are the service's.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Commit, CommitAffectedFiles } from "../branches/Api.ts"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { MethodNotAllowed } from "./Errors.ts"
import {
  ChangedFile,
  CreatePullRequestOption,
  EditPullRequestOption,
  MergePullRequestOption,
  PullRequest
} from "./Schema.ts"

const read = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "pulls" } } as const
const write = { signedIn: true, scopes: ["repository"], repo: { role: "read", unit: "pulls" } } as const
const writeUnarchived = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "read", unit: "pulls", changes: "mirrors" }
} as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withIndex = { ...ownerRepo, index: Schema.String }
const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))
const Pulls = Schema.Array(PullRequest)

export class PullsApi extends HttpApiGroup.make("pulls").add(
  HttpApiEndpoint.get("listPulls", "/repos/:owner/:repo/pulls", {
    params: ownerRepo,
    query: {
      state: Schema.optional(Schema.String),
      sort: Schema.optional(Schema.String),
      milestone: Schema.optional(Schema.String),
      labels: Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.String)])),
      poster: Schema.optional(Schema.String),
      ...PageQuery
    },
    success: Pulls
  })
    .annotate(OpenApi.Identifier, "repoListPullRequests")
    .annotate(Access, read),
  HttpApiEndpoint.post("createPull", "/repos/:owner/:repo/pulls", {
    params: ownerRepo,
    payload: CreatePullRequestOption,
    success: created(PullRequest)
  })
    .annotate(OpenApi.Identifier, "repoCreatePullRequest")
    .annotate(Access, writeUnarchived),
  // Not paginated (Forgejo).
  HttpApiEndpoint.get("pinnedPulls", "/repos/:owner/:repo/pulls/pinned", { params: ownerRepo, success: Pulls })
    .annotate(OpenApi.Identifier, "repoListPinnedPullRequests")
    .annotate(Access, read),
  HttpApiEndpoint.get("getPull", "/repos/:owner/:repo/pulls/:index", { params: withIndex, success: PullRequest })
    .annotate(OpenApi.Identifier, "repoGetPullRequest")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editPull", "/repos/:owner/:repo/pulls/:index", {
    params: withIndex,
    payload: EditPullRequestOption,
    // Forgejo answers an edit with 201.
    success: created(PullRequest)
  })
    .annotate(OpenApi.Identifier, "repoEditPullRequest")
    .annotate(Access, write),
  HttpApiEndpoint.get("downloadPull", "/repos/:owner/:repo/pulls/:index.:diffType", {
    params: { ...withIndex, diffType: Schema.String },
    query: { binary: Schema.optional(Schema.String) },
    success: Schema.String
  })
    .annotate(OpenApi.Identifier, "repoDownloadPullDiffOrPatch")
    .annotate(Access, read),
  HttpApiEndpoint.get("pullCommits", "/repos/:owner/:repo/pulls/:index/commits", {
    params: withIndex,
    query: {
      ...PageQuery,
      verification: Schema.optional(Schema.String),
      files: Schema.optional(Schema.String)
    },
    success: Schema.Array(Commit)
  })
    .annotate(OpenApi.Identifier, "repoGetPullRequestCommits")
    .annotate(Access, read),
  HttpApiEndpoint.get("pullFiles", "/repos/:owner/:repo/pulls/:index/files", {
    params: withIndex,
    query: {
      ...PageQuery,
      "skip-to": Schema.optional(Schema.String),
      whitespace: Schema.optional(Schema.String)
    },
    success: Schema.Array(ChangedFile)
  })
    .annotate(OpenApi.Identifier, "repoGetPullRequestFiles")
    .annotate(Access, read),
  HttpApiEndpoint.get("isMerged", "/repos/:owner/:repo/pulls/:index/merge", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoPullRequestIsMerged")
    .annotate(Access, read),
  HttpApiEndpoint.post("mergePull", "/repos/:owner/:repo/pulls/:index/merge", {
    params: withIndex,
    payload: MergePullRequestOption,
    success: Schema.Void,
    error: MethodNotAllowed
  })
    .annotate(OpenApi.Identifier, "repoMergePullRequest")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.delete("cancelScheduledMerge", "/repos/:owner/:repo/pulls/:index/merge", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoCancelScheduledAutoMerge")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.post("updatePull", "/repos/:owner/:repo/pulls/:index/update", {
    params: withIndex,
    query: { style: Schema.optional(Schema.String) },
    success: Schema.Void
  })
    .annotate(OpenApi.Identifier, "repoUpdatePullRequest")
    .annotate(Access, write),
  HttpApiEndpoint.get("compare", "/repos/:owner/:repo/compare/:basehead", {
    params: { ...ownerRepo, basehead: Schema.String },
    query: { verification: Schema.optional(Schema.String), files: Schema.optional(Schema.String) },
    success: Schema.Struct({
      commits: Schema.Array(Commit),
      total_commits: Schema.Int,
      files: Schema.Array(CommitAffectedFiles)
    }).annotate({ identifier: "Compare" })
  })
    .annotate(OpenApi.Identifier, "repoCompareDiff")
    // Forgejo: `reqRepoReader(code)`, no pulls unit needed.
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } }),
  HttpApiEndpoint.get("commitPull", "/repos/:owner/:repo/commits/:sha/pull", {
    params: { ...ownerRepo, sha: Schema.String },
    success: PullRequest
  })
    .annotate(OpenApi.Identifier, "repoGetCommitPullRequest")
    // Forgejo: `reqRepoReader(code)`: the pull request of a merge commit, pulls unit or not.
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } }),
  HttpApiEndpoint.get("getPullByBaseHead", "/repos/:owner/:repo/pulls/:base/:head", {
    params: { ...ownerRepo, base: Schema.String, head: Schema.String },
    success: PullRequest
  })
    .annotate(OpenApi.Identifier, "repoGetPullRequestByBaseHead")
    .annotate(Access, read)
) {}

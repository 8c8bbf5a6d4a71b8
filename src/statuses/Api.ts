// Commit statuses (Forgejo's routers/api/v1/repo/status.go, modules/structs/status.go): CI systems
// post a state for a commit under a context; readers list them and the combined state per commit.
// Reads need code read access; creating one needs a token and code write (Forgejo's `reqToken`,
// `reqRepoWriter(unit.TypeCode)`), with no archive check.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

const repoRead = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } } as const
const repoWrite = { signedIn: true, scopes: ["repository"], repo: { role: "write", unit: "code" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

/** Forgejo's `CommitStatusState` values. */
export const STATES = ["pending", "success", "error", "failure", "warning"] as const
export type StatusState = (typeof STATES)[number]

export const CreateStatusOption = Schema.Struct({
  state: Schema.optionalKey(Schema.String),
  target_url: Schema.optionalKey(Schema.String),
  description: Schema.optionalKey(Schema.String),
  context: Schema.optionalKey(Schema.String)
})

export const CommitStatus = Schema.Struct({
  id: Schema.Number,
  status: Schema.String,
  target_url: Schema.String,
  description: Schema.String,
  url: Schema.String,
  context: Schema.String,
  creator: Schema.NullOr(User),
  created_at: Timestamp,
  updated_at: Timestamp
})
export type CommitStatus = typeof CommitStatus.Type

export const CombinedStatus = Schema.Struct({
  state: Schema.String,
  sha: Schema.String,
  total_count: Schema.Number,
  statuses: Schema.NullOr(Schema.Array(CommitStatus)),
  repository: Schema.NullOr(Repository),
  commit_url: Schema.String,
  url: Schema.String
})
export type CombinedStatus = typeof CombinedStatus.Type

const ListQuery = {
  sort: Schema.optional(Schema.String),
  state: Schema.optional(Schema.String),
  ...PageQuery
}

export class StatusesApi extends HttpApiGroup.make("statuses").add(
  HttpApiEndpoint.post("createStatus", "/repos/:owner/:repo/statuses/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    payload: CreateStatusOption,
    success: CommitStatus.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateStatus")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("listStatuses", "/repos/:owner/:repo/statuses/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    query: ListQuery,
    success: Schema.Array(CommitStatus)
  })
    .annotate(OpenApi.Identifier, "repoListStatuses")
    .annotate(Access, repoRead),
  HttpApiEndpoint.get("listStatusesByRef", "/repos/:owner/:repo/commits/:ref/statuses", {
    params: { ...ownerRepo, ref: Schema.String },
    query: ListQuery,
    success: Schema.Array(CommitStatus)
  })
    .annotate(OpenApi.Identifier, "repoListStatusesByRef")
    .annotate(Access, repoRead),
  HttpApiEndpoint.get("combinedStatusByRef", "/repos/:owner/:repo/commits/:ref/status", {
    params: { ...ownerRepo, ref: Schema.String },
    query: PageQuery,
    success: CombinedStatus
  })
    .annotate(OpenApi.Identifier, "repoGetCombinedStatusByRef")
    .annotate(Access, repoRead)
) {}

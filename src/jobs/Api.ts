// Background jobs as their owners see them (a Hearth addition; Forgejo has no such route): the jobs
// about one repository for its administrators, every job for site administrators.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

export const Job = Schema.Struct({
  id: Schema.Number,
  kind: Schema.String,
  /** queued, running, retrying (an attempt failed, another comes), succeeded or failed. */
  state: Schema.String,
  attempts: Schema.Number,
  last_error: Schema.String,
  repository_id: Schema.NullOr(Schema.Number),
  created_at: Timestamp,
  updated_at: Timestamp,
  finished_at: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Job" })

export class JobsApi extends HttpApiGroup.make("jobs").add(
  HttpApiEndpoint.get("listRepoJobs", "/repos/:owner/:repo/jobs", {
    params: { owner: Schema.String, repo: Schema.String },
    query: PageQuery,
    success: Schema.Array(Job)
  })
    .annotate(OpenApi.Identifier, "repoListJobs")
    .annotate(Access, { signedIn: true, scopes: ["repository"], repo: { role: "admin" } }),
  HttpApiEndpoint.get("listAllJobs", "/admin/jobs", {
    query: PageQuery,
    success: Schema.Array(Job)
  })
    .annotate(OpenApi.Identifier, "adminListJobs")
    .annotate(Access, { signedIn: true, scopes: ["admin"] })
) {}

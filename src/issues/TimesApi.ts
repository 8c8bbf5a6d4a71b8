// Routes of time tracking (Forgejo's routers/api/v1/repo/issue_tracked_time.go,
// issue_stopwatch.go), with Forgejo's operationIds. Every one needs a signed-in caller (Forgejo's
// `reqToken`); issue routes the `issue` scope, the repository's `/times` the `repository` scope and
// the issues unit, the caller's own lists the `user` scope.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { TrackedTime } from "./Schema.ts"

const onIssue = { signedIn: true, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const onRepo = { signedIn: true, scopes: ["repository"], repo: { role: "read", unit: "issues" } } as const
const mine = { signedIn: true, scopes: ["user"] } as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withIndex = { ...ownerRepo, index: Schema.String }
const timesQuery = {
  user: Schema.optional(Schema.String),
  since: Schema.optional(Schema.String),
  before: Schema.optional(Schema.String),
  ...PageQuery
}
const times = "/repos/:owner/:repo/issues/:index/times"
const stopwatch = "/repos/:owner/:repo/issues/:index/stopwatch"

export const AddTimeOption = Schema.Struct({
  time: Schema.Number,
  created: Schema.optional(Schema.String),
  user_name: Schema.optional(Schema.String)
}).annotate({ identifier: "AddTimeOption" })

export const StopWatch = Schema.Struct({
  created: Schema.String,
  seconds: Schema.Number,
  duration: Schema.String,
  issue_index: Schema.Number,
  issue_title: Schema.String,
  repo_owner_name: Schema.String,
  repo_name: Schema.String
}).annotate({ identifier: "StopWatch" })

const TrackedTimes = Schema.Array(TrackedTime)

export class IssueTimesApi extends HttpApiGroup.make("issueTimes").add(
  HttpApiEndpoint.get("issueTimes", times, { params: withIndex, query: timesQuery, success: TrackedTimes })
    .annotate(OpenApi.Identifier, "issueTrackedTimes")
    .annotate(Access, onIssue),
  HttpApiEndpoint.post("addTime", times, { params: withIndex, payload: AddTimeOption, success: TrackedTime })
    .annotate(OpenApi.Identifier, "issueAddTime")
    .annotate(Access, onIssue),
  HttpApiEndpoint.delete("resetTime", times, { params: withIndex, success: HttpApiSchema.NoContent })
    .annotate(OpenApi.Identifier, "issueResetTime")
    .annotate(Access, onIssue),
  HttpApiEndpoint.delete("deleteTime", `${times}/:id`, {
    params: { ...withIndex, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteTime")
    .annotate(Access, onIssue),
  HttpApiEndpoint.post("startStopwatch", `${stopwatch}/start`, {
    params: withIndex,
    success: HttpApiSchema.Empty(201)
  })
    .annotate(OpenApi.Identifier, "issueStartStopWatch")
    .annotate(Access, onIssue),
  HttpApiEndpoint.post("stopStopwatch", `${stopwatch}/stop`, { params: withIndex, success: HttpApiSchema.Empty(201) })
    .annotate(OpenApi.Identifier, "issueStopStopWatch")
    .annotate(Access, onIssue),
  HttpApiEndpoint.delete("deleteStopwatch", `${stopwatch}/delete`, {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteStopWatch")
    .annotate(Access, onIssue),
  HttpApiEndpoint.get("repoTimes", "/repos/:owner/:repo/times", {
    params: ownerRepo,
    query: timesQuery,
    success: TrackedTimes
  })
    .annotate(OpenApi.Identifier, "repoTrackedTimes")
    .annotate(Access, onRepo),
  HttpApiEndpoint.get("userRepoTimes", "/repos/:owner/:repo/times/:user", {
    params: { ...ownerRepo, user: Schema.String },
    success: TrackedTimes
  })
    .annotate(OpenApi.Identifier, "userTrackedTimes")
    .annotate(OpenApi.Deprecated, true)
    .annotate(Access, onRepo),
  HttpApiEndpoint.get("myTimes", "/user/times", {
    query: { since: Schema.optional(Schema.String), before: Schema.optional(Schema.String), ...PageQuery },
    success: TrackedTimes
  })
    .annotate(OpenApi.Identifier, "userCurrentTrackedTimes")
    .annotate(Access, mine),
  HttpApiEndpoint.get("myStopwatches", "/user/stopwatches", { query: PageQuery, success: Schema.Array(StopWatch) })
    .annotate(OpenApi.Identifier, "userGetStopWatches")
    .annotate(Access, mine)
) {}

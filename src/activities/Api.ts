// Activity feeds and the heatmap (Forgejo's routers/api/v1/{user,org,repo}/…ActivityFeeds and
// user.GetUserHeatmapData): what happened in the repositories a reader may see, newest first.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Comment } from "../issues/Schema.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"
import { OP_TYPES } from "./Ops.ts"

export const Activity = Schema.Struct({
  id: Schema.Number,
  user_id: Schema.Number,
  op_type: Schema.Literals(OP_TYPES),
  act_user_id: Schema.Number,
  act_user: User,
  repo_id: Schema.Number,
  repo: Repository,
  comment_id: Schema.Number,
  comment: Schema.optionalKey(Comment),
  ref_name: Schema.String,
  is_private: Schema.Boolean,
  content: Schema.String,
  created: Timestamp
}).annotate({ identifier: "Activity" })
export type Activity = typeof Activity.Type

export const UserHeatmapData = Schema.Struct({ timestamp: Schema.Number, contributions: Schema.Number }).annotate({
  identifier: "UserHeatmapData"
})
export type UserHeatmapData = typeof UserHeatmapData.Type

const Activities = Schema.Array(Activity)
const date = { date: Schema.optional(Schema.String) }

export class ActivitiesApi extends HttpApiGroup.make("activities").add(
  HttpApiEndpoint.get("userActivityFeeds", "/users/:username/activities/feeds", {
    params: { username: Schema.String },
    query: { "only-performed-by": Schema.optional(Schema.String), ...date, ...PageQuery },
    success: Activities
  })
    .annotate(OpenApi.Identifier, "userListActivityFeeds")
    .annotate(Access, { signedIn: false, scopes: ["user"] }),
  HttpApiEndpoint.get("userHeatmap", "/users/:username/heatmap", {
    params: { username: Schema.String },
    success: Schema.Array(UserHeatmapData)
  })
    .annotate(OpenApi.Identifier, "userGetHeatmapData")
    .annotate(Access, { signedIn: false, scopes: ["user"] }),
  HttpApiEndpoint.get("orgActivityFeeds", "/orgs/:org/activities/feeds", {
    params: { org: Schema.String },
    query: { ...date, ...PageQuery },
    success: Activities
  })
    .annotate(OpenApi.Identifier, "orgListActivityFeeds")
    .annotate(Access, { signedIn: false, scopes: ["organization"] }),
  // Forgejo's `reqToken(), reqTeamMembership()`.
  HttpApiEndpoint.get("teamActivityFeeds", "/teams/:id/activities/feeds", {
    params: { id: Schema.String },
    query: { ...date, ...PageQuery },
    success: Activities
  })
    .annotate(OpenApi.Identifier, "orgListTeamActivityFeeds")
    .annotate(Access, { signedIn: true, scopes: ["organization"] }),
  HttpApiEndpoint.get("repoActivityFeeds", "/repos/:owner/:repo/activities/feeds", {
    params: { owner: Schema.String, repo: Schema.String },
    query: { ...date, ...PageQuery },
    success: Activities
  })
    .annotate(OpenApi.Identifier, "repoListActivityFeeds")
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read" } })
) {}

// Notification routes (Forgejo's routers/api/v1/notify), with Forgejo's operationIds. All need a
// signed-in caller and the `notification` scope; the repository routes also a readable repository.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Repository } from "../repos/Schema.ts"

export const NotificationSubject = Schema.Struct({
  title: Schema.String,
  url: Schema.String,
  latest_comment_url: Schema.String,
  html_url: Schema.String,
  latest_comment_html_url: Schema.String,
  type: Schema.String,
  state: Schema.String
}).annotate({ identifier: "NotificationSubject" })

export const NotificationThread = Schema.Struct({
  id: Id,
  repository: Repository,
  subject: NotificationSubject,
  unread: Schema.Boolean,
  pinned: Schema.Boolean,
  updated_at: Timestamp,
  url: Schema.String
}).annotate({ identifier: "NotificationThread" })

export const NotificationCount = Schema.Struct({ new: Schema.Int }).annotate({ identifier: "NotificationCount" })

/** A query value that may be repeated (`status-types=unread&status-types=read`). */
const many = Schema.optional(Schema.Union([Schema.String, Schema.Array(Schema.String)]))

const listQuery = {
  all: Schema.optional(Schema.String),
  "status-types": many,
  "subject-type": many,
  since: Schema.optional(Schema.String),
  before: Schema.optional(Schema.String),
  ...PageQuery
}
const readQuery = {
  last_read_at: Schema.optional(Schema.String),
  all: Schema.optional(Schema.String),
  "status-types": many,
  "to-status": Schema.optional(Schema.String)
}

const Threads = Schema.Array(NotificationThread)
const reset = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(205))
const mine = { signedIn: true, scopes: ["notification"] } as const
const inRepo = { signedIn: true, scopes: ["notification"], repo: { role: "read" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

export class NotificationsApi extends HttpApiGroup.make("notifications").add(
  HttpApiEndpoint.get("listNotifications", "/notifications", { query: listQuery, success: Threads })
    .annotate(OpenApi.Identifier, "notifyGetList")
    .annotate(Access, mine),
  HttpApiEndpoint.put("readNotifications", "/notifications", { query: readQuery, success: reset(Threads) })
    .annotate(OpenApi.Identifier, "notifyReadList")
    .annotate(Access, mine),
  HttpApiEndpoint.get("newNotifications", "/notifications/new", { success: NotificationCount })
    .annotate(OpenApi.Identifier, "notifyNewAvailable")
    .annotate(Access, mine),
  HttpApiEndpoint.get("getThread", "/notifications/threads/:id", {
    params: { id: Schema.String },
    success: NotificationThread
  })
    .annotate(OpenApi.Identifier, "notifyGetThread")
    .annotate(Access, mine),
  HttpApiEndpoint.patch("readThread", "/notifications/threads/:id", {
    params: { id: Schema.String },
    query: { "to-status": Schema.optional(Schema.String) },
    success: reset(NotificationThread)
  })
    .annotate(OpenApi.Identifier, "notifyReadThread")
    .annotate(Access, mine),
  HttpApiEndpoint.get("listRepoNotifications", "/repos/:owner/:repo/notifications", {
    params: ownerRepo,
    query: listQuery,
    success: Threads
  })
    .annotate(OpenApi.Identifier, "notifyGetRepoList")
    .annotate(Access, inRepo),
  HttpApiEndpoint.put("readRepoNotifications", "/repos/:owner/:repo/notifications", {
    params: ownerRepo,
    query: readQuery,
    success: reset(Threads)
  })
    .annotate(OpenApi.Identifier, "notifyReadRepoList")
    .annotate(Access, inRepo)
) {}

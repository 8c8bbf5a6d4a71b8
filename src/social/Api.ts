// Stars and watches (Forgejo's routers/api/v1/user/star.go, watch.go). Scopes as Forgejo's
// `tokenRequiresScopes`: `user` + `repository` on
// /user/starred…, `user` on the other /user… and /users/… lists, `repository` on /repos/….
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

/** Forgejo's WatchInfo; `reason` is always null and `created_at` is the repository's. */
export const WatchInfo = Schema.Struct({
  subscribed: Schema.Boolean,
  ignored: Schema.Boolean,
  reason: Schema.Null,
  created_at: Timestamp,
  url: Schema.String,
  repository_url: Schema.String
}).annotate({ identifier: "WatchInfo" })
export type WatchInfo = typeof WatchInfo.Type

const starring = { signedIn: true, scopes: ["user", "repository"] } as const
const userLists = { signedIn: true, scopes: ["user"] } as const
/** The repository of the path, read by the caller (Assignment.ts). */
const repoSignedIn = { signedIn: true, scopes: ["repository"], repo: { role: "read" } } as const
const repoOpen = { signedIn: false, scopes: ["repository"], repo: { role: "read" } } as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const username = { username: Schema.String }
const Repositories = Schema.Array(Repository)
const Users = Schema.Array(User)

export class SocialApi extends HttpApiGroup.make("social").add(
  HttpApiEndpoint.get("listMyStarred", "/user/starred", { query: PageQuery, success: Repositories })
    .annotate(OpenApi.Identifier, "userCurrentListStarred")
    .annotate(Access, starring),
  HttpApiEndpoint.get("checkStarred", "/user/starred/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentCheckStarring")
    .annotate(Access, starring),
  HttpApiEndpoint.put("star", "/user/starred/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentPutStar")
    .annotate(Access, starring),
  HttpApiEndpoint.delete("unstar", "/user/starred/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentDeleteStar")
    .annotate(Access, starring),
  HttpApiEndpoint.get("listUserStarred", "/users/:username/starred", {
    params: username,
    query: PageQuery,
    success: Repositories
  })
    .annotate(OpenApi.Identifier, "userListStarred")
    .annotate(Access, userLists),
  HttpApiEndpoint.get("listMySubscriptions", "/user/subscriptions", {
    query: PageQuery,
    success: Repositories
  })
    .annotate(OpenApi.Identifier, "userCurrentListSubscriptions")
    .annotate(Access, userLists),
  HttpApiEndpoint.get("listUserSubscriptions", "/users/:username/subscriptions", {
    params: username,
    query: PageQuery,
    success: Repositories
  })
    .annotate(OpenApi.Identifier, "userListSubscriptions")
    .annotate(Access, userLists),
  HttpApiEndpoint.get("getSubscription", "/repos/:owner/:repo/subscription", {
    params: ownerRepo,
    success: WatchInfo
  })
    .annotate(OpenApi.Identifier, "userCurrentCheckSubscription")
    .annotate(Access, repoSignedIn),
  HttpApiEndpoint.put("watch", "/repos/:owner/:repo/subscription", { params: ownerRepo, success: WatchInfo })
    .annotate(OpenApi.Identifier, "userCurrentPutSubscription")
    .annotate(Access, repoSignedIn),
  HttpApiEndpoint.delete("unwatch", "/repos/:owner/:repo/subscription", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentDeleteSubscription")
    .annotate(Access, repoSignedIn),
  HttpApiEndpoint.get("listStargazers", "/repos/:owner/:repo/stargazers", {
    params: ownerRepo,
    query: PageQuery,
    success: Users
  })
    .annotate(OpenApi.Identifier, "repoListStargazers")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("listSubscribers", "/repos/:owner/:repo/subscribers", {
    params: ownerRepo,
    query: PageQuery,
    success: Users
  })
    .annotate(OpenApi.Identifier, "repoListSubscribers")
    .annotate(Access, repoOpen)
) {}

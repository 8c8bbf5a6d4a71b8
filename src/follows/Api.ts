// Follows (Forgejo's routers/api/v1/user/follower.go): every route needs a signed-in caller
// and the `user` scope (write:user to follow or unfollow).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { User } from "../users/Schema.ts"

const signedIn = { signedIn: true, scopes: ["user"] } as const
const Users = Schema.Array(User)
const username = { username: Schema.String }

export class FollowsApi extends HttpApiGroup.make("follows").add(
  HttpApiEndpoint.get("listMyFollowers", "/user/followers", { query: PageQuery, success: Users })
    .annotate(OpenApi.Identifier, "userCurrentListFollowers")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listMyFollowing", "/user/following", { query: PageQuery, success: Users })
    .annotate(OpenApi.Identifier, "userCurrentListFollowing")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("checkMyFollowing", "/user/following/:username", {
    params: username,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentCheckFollowing")
    .annotate(Access, signedIn),
  HttpApiEndpoint.put("follow", "/user/following/:username", {
    params: username,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentPutFollow")
    .annotate(Access, signedIn),
  HttpApiEndpoint.delete("unfollow", "/user/following/:username", {
    params: username,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentDeleteFollow")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listFollowers", "/users/:username/followers", {
    params: username,
    query: PageQuery,
    success: Users
  })
    .annotate(OpenApi.Identifier, "userListFollowers")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listFollowing", "/users/:username/following", {
    params: username,
    query: PageQuery,
    success: Users
  })
    .annotate(OpenApi.Identifier, "userListFollowing")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("checkFollowing", "/users/:username/following/:target", {
    params: { username: Schema.String, target: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCheckFollowing")
    .annotate(Access, signedIn)
) {}

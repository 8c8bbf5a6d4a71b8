// Users: the signed-in account, profiles and search (Forgejo's routers/api/v1/user/user.go).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { User } from "./Schema.ts"

/** `GET /users/search` answers `{ok, data}`; a failed search is `{ok: false, error}` with 500. */
export const UserSearchResults = Schema.Struct({
  ok: Schema.Boolean,
  data: Schema.Array(User)
}).annotate({ identifier: "UserSearchResults" })

export class UsersApi extends HttpApiGroup.make("users").add(
  HttpApiEndpoint.get("getAuthenticatedUser", "/user", { success: User })
    .annotate(OpenApi.Identifier, "userGetCurrent")
    .annotate(Access, {
      signedIn: true,
      scopes: ["user"]
    }),
  // Declared before `/users/:username` for readability; the router prefers the literal segment.
  HttpApiEndpoint.get("searchUsers", "/users/search", {
    // Strings, read leniently as Forgejo does: a non-numeric `uid` is no filter at all.
    query: {
      q: Schema.optional(Schema.String),
      uid: Schema.optional(Schema.String),
      sort: Schema.optional(Schema.String),
      ...PageQuery
    },
    success: UserSearchResults
  })
    .annotate(OpenApi.Identifier, "userSearch")
    .annotate(Access, { signedIn: false, scopes: ["user"] }),
  HttpApiEndpoint.get("getUser", "/users/:username", {
    params: { username: Schema.String },
    success: User
  })
    .annotate(OpenApi.Identifier, "userGet")
    .annotate(Access, { signedIn: false, scopes: ["user"] })
) {}

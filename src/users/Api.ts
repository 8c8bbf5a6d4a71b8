// Users: the signed-in account, profiles and search (CONTRACT §3).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Access } from "../http/Authentication.ts"
import { User } from "./Schema.ts"

export class UsersApi extends HttpApiGroup.make("users")
  .add(
    HttpApiEndpoint.get("getAuthenticatedUser", "/user", { success: User })
      .annotate(Access, { signedIn: true, scopes: ["user"] }),
    HttpApiEndpoint.get("getUser", "/users/:username", {
      params: { username: Schema.String },
      success: User
    }).annotate(Access, { signedIn: false, scopes: ["user"] })
  )
{}

// Personal access tokens (Forgejo's routers/api/v1/user/app.go): created with the account's password only, shown once.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"

export const AccessToken = Schema.Struct({
  id: Id,
  name: Schema.String,
  /** The token itself: only in the creation response; empty when listing. */
  sha1: Schema.String,
  token_last_eight: Schema.String,
  scopes: Schema.Array(Schema.String)
}).annotate({ identifier: "AccessToken" })

export const CreateAccessTokenOption = Schema.Struct({
  name: BoundedName("Name", NAME_MAX.token),
  scopes: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "CreateAccessTokenOption" })

const user = { signedIn: true, scopes: ["user"] } as const

export class TokensApi extends HttpApiGroup.make("tokens").add(
  HttpApiEndpoint.get("listAccessTokens", "/users/:username/tokens", {
    params: { username: Schema.String },
    query: PageQuery,
    success: Schema.Array(AccessToken)
  })
    .annotate(OpenApi.Identifier, "userGetTokens")
    .annotate(Access, user),
  HttpApiEndpoint.post("createAccessToken", "/users/:username/tokens", {
    params: { username: Schema.String },
    payload: CreateAccessTokenOption,
    success: AccessToken.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userCreateToken")
    .annotate(Access, user),
  HttpApiEndpoint.delete("deleteAccessToken", "/users/:username/tokens/:token", {
    params: { username: Schema.String, token: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userDeleteAccessToken")
    .annotate(Access, user)
) {}

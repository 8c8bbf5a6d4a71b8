// OAuth2 applications of the signed-in user (Forgejo's
// /user/applications/oauth2, routers/api/v1/user/app.go). snake_case members; the client secret is shown once, at creation.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"

export const OAuth2Application = Schema.Struct({
  id: Id,
  name: Schema.String,
  client_id: Schema.String,
  /** The secret in the 201 of a creation; "" everywhere else. */
  client_secret: Schema.String,
  redirect_uris: Schema.Array(Schema.String),
  confidential_client: Schema.Boolean,
  created: Timestamp
}).annotate({ identifier: "OAuth2Application" })
export type OAuth2Application = typeof OAuth2Application.Type

const Options = {
  name: Schema.optional(BoundedName("Name", NAME_MAX.oauth2App)),
  redirect_uris: Schema.optional(Schema.Array(Schema.String)),
  confidential_client: Schema.optional(Schema.Boolean)
}
export const CreateOAuth2ApplicationOptions = Schema.Struct(Options).annotate({
  identifier: "CreateOAuth2ApplicationOptions"
})
export type ApplicationOptions = typeof CreateOAuth2ApplicationOptions.Type

const rule = { signedIn: true, scopes: ["user"] } as const
/** Read leniently: an id that is not a number names no application (404). */
const id = { id: Schema.String }

export class OAuth2Api extends HttpApiGroup.make("oauth2").add(
  HttpApiEndpoint.get("listApplications", "/user/applications/oauth2", {
    query: PageQuery,
    success: Schema.Array(OAuth2Application)
  })
    .annotate(OpenApi.Identifier, "userGetOAuth2Applications")
    .annotate(Access, rule),
  HttpApiEndpoint.post("createApplication", "/user/applications/oauth2", {
    payload: CreateOAuth2ApplicationOptions,
    success: OAuth2Application.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userCreateOAuth2Application")
    .annotate(Access, rule),
  HttpApiEndpoint.get("getApplication", "/user/applications/oauth2/:id", {
    params: id,
    success: OAuth2Application
  })
    .annotate(OpenApi.Identifier, "userGetOAuth2Application")
    .annotate(Access, rule),
  HttpApiEndpoint.patch("updateApplication", "/user/applications/oauth2/:id", {
    params: id,
    payload: CreateOAuth2ApplicationOptions,
    success: OAuth2Application
  })
    .annotate(OpenApi.Identifier, "userUpdateOAuth2Application")
    .annotate(Access, rule),
  HttpApiEndpoint.delete("deleteApplication", "/user/applications/oauth2/:id", {
    params: id,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userDeleteOAuth2Application")
    .annotate(Access, rule)
) {}

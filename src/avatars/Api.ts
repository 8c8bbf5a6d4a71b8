// Avatars over the API (Forgejo's routers/api/v1/user/avatar.go, org/avatar.go, repo/avatar.go):
// the signed-in user's own, an organization's (its owners) and a repository's (its admins). The
// body is `{ "image": "<base64>" }`; 204 on success.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

export const UpdateUserAvatarOption = Schema.Struct({
  image: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "UpdateUserAvatarOption" })

export const UpdateRepoAvatarOption = Schema.Struct({
  image: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "UpdateRepoAvatarOption" })

const self = { signedIn: true, scopes: ["user"] } as const
const org = { signedIn: true, scopes: ["organization"] } as const
const repoAdmin = { signedIn: true, scopes: ["repository"], repo: { role: "admin", changes: "settings" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

export class AvatarsApi extends HttpApiGroup.make("avatars").add(
  HttpApiEndpoint.post("updateUserAvatar", "/user/avatar", {
    payload: UpdateUserAvatarOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userUpdateAvatar")
    .annotate(Access, self),
  HttpApiEndpoint.delete("deleteUserAvatar", "/user/avatar", { success: HttpApiSchema.NoContent })
    .annotate(OpenApi.Identifier, "userDeleteAvatar")
    .annotate(Access, self),
  HttpApiEndpoint.post("updateOrgAvatar", "/orgs/:org/avatar", {
    params: { org: Schema.String },
    payload: UpdateUserAvatarOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgUpdateAvatar")
    .annotate(Access, org),
  HttpApiEndpoint.delete("deleteOrgAvatar", "/orgs/:org/avatar", {
    params: { org: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgDeleteAvatar")
    .annotate(Access, org),
  HttpApiEndpoint.post("updateRepoAvatar", "/repos/:owner/:repo/avatar", {
    params: ownerRepo,
    payload: UpdateRepoAvatarOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoUpdateAvatar")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.delete("deleteRepoAvatar", "/repos/:owner/:repo/avatar", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteAvatar")
    .annotate(Access, repoAdmin)
) {}

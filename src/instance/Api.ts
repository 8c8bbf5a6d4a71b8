// The instance's general settings, readable by anyone (Forgejo's /settings/*, routers/api/v1/
// settings/settings.go): what clients adapt to — page sizes, attachment limits, which repository
// features are off, the web's reactions and themes.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

export const GeneralAPISettings = Schema.Struct({
  max_response_items: Schema.Int,
  default_paging_num: Schema.Int,
  default_git_trees_per_page: Schema.Int,
  default_max_blob_size: Schema.Int
}).annotate({ identifier: "GeneralAPISettings" })

export const GeneralAttachmentSettings = Schema.Struct({
  enabled: Schema.Boolean,
  allowed_types: Schema.String,
  max_size: Schema.Int,
  max_files: Schema.Int
}).annotate({ identifier: "GeneralAttachmentSettings" })

export const GeneralRepoSettings = Schema.Struct({
  mirrors_disabled: Schema.Boolean,
  http_git_disabled: Schema.Boolean,
  migrations_disabled: Schema.Boolean,
  stars_disabled: Schema.Boolean,
  forks_disabled: Schema.Boolean,
  time_tracking_disabled: Schema.Boolean,
  lfs_disabled: Schema.Boolean
}).annotate({ identifier: "GeneralRepoSettings" })

export const GeneralUISettings = Schema.Struct({
  default_theme: Schema.String,
  allowed_reactions: Schema.Array(Schema.String),
  custom_emojis: Schema.Array(Schema.String)
}).annotate({ identifier: "GeneralUISettings" })

const open = { signedIn: false, scopes: [] } as const

export class InstanceApi extends HttpApiGroup.make("instance").add(
  HttpApiEndpoint.get("getApiSettings", "/settings/api", { success: GeneralAPISettings })
    .annotate(OpenApi.Identifier, "getGeneralAPISettings")
    .annotate(Access, open),
  HttpApiEndpoint.get("getAttachmentSettings", "/settings/attachment", { success: GeneralAttachmentSettings })
    .annotate(OpenApi.Identifier, "getGeneralAttachmentSettings")
    .annotate(Access, open),
  HttpApiEndpoint.get("getRepositorySettings", "/settings/repository", { success: GeneralRepoSettings })
    .annotate(OpenApi.Identifier, "getGeneralRepositorySettings")
    .annotate(Access, open),
  HttpApiEndpoint.get("getUiSettings", "/settings/ui", { success: GeneralUISettings })
    .annotate(OpenApi.Identifier, "getGeneralUISettings")
    .annotate(Access, open)
) {}

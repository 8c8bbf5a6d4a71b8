// The signed-in user's settings (Forgejo's /user/settings, routers/api/v1/user/settings.go): the
// profile fields, the web's theme and diff view, and what the account keeps private.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

export const UserSettings = Schema.Struct({
  full_name: Schema.String,
  website: Schema.String,
  description: Schema.String,
  location: Schema.String,
  pronouns: Schema.String,
  language: Schema.String,
  theme: Schema.String,
  diff_view_style: Schema.String,
  hide_email: Schema.Boolean,
  hide_pronouns: Schema.Boolean,
  hide_activity: Schema.Boolean,
  enable_repo_unit_hints: Schema.Boolean
}).annotate({ identifier: "UserSettings" })
export type UserSettings = typeof UserSettings.Type

const text = Schema.optionalKey(Schema.String)
const flag = Schema.optionalKey(Schema.Boolean)

/** Every member optional: only those given change (Forgejo's `optional.FromPtr`). */
export const UserSettingsOptions = Schema.Struct({
  full_name: text,
  website: text,
  description: text,
  location: text,
  pronouns: text,
  language: text,
  theme: text,
  diff_view_style: text,
  hide_email: flag,
  hide_pronouns: flag,
  hide_activity: flag,
  enable_repo_unit_hints: flag
}).annotate({ identifier: "UserSettingsOptions" })
export type UserSettingsOptions = typeof UserSettingsOptions.Type

const rule = { signedIn: true, scopes: ["user"] } as const

export class UserSettingsApi extends HttpApiGroup.make("userSettings").add(
  HttpApiEndpoint.get("getUserSettings", "/user/settings", { success: UserSettings })
    .annotate(OpenApi.Identifier, "getUserSettings")
    .annotate(Access, rule),
  HttpApiEndpoint.patch("updateUserSettings", "/user/settings", {
    payload: UserSettingsOptions,
    success: UserSettings
  })
    .annotate(OpenApi.Identifier, "updateUserSettings")
    .annotate(Access, rule)
) {}

// Forgejo's template endpoints (swagger "miscellaneous"): gitignore, license and issue-label
// templates. Public, with no token scope, as Forgejo serves them; an unknown name is 404.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

const open = { signedIn: false, scopes: [] } as const
const name = { name: Schema.String }

export const GitignoreTemplateInfo = Schema.Struct({
  name: Schema.String,
  source: Schema.String
}).annotate({ identifier: "GitignoreTemplateInfo" })

export const LicensesTemplateListEntry = Schema.Struct({
  key: Schema.String,
  name: Schema.String,
  url: Schema.String
}).annotate({ identifier: "LicensesTemplateListEntry" })

export const LicenseTemplateInfo = Schema.Struct({
  key: Schema.String,
  name: Schema.String,
  url: Schema.String,
  implementation: Schema.String,
  body: Schema.String
}).annotate({ identifier: "LicenseTemplateInfo" })

export const LabelTemplate = Schema.Struct({
  name: Schema.String,
  color: Schema.String,
  description: Schema.String,
  exclusive: Schema.Boolean
}).annotate({ identifier: "LabelTemplate" })

export class TemplatesApi extends HttpApiGroup.make("templates").add(
  HttpApiEndpoint.get("listGitignoresTemplates", "/gitignore/templates", {
    success: Schema.Array(Schema.String)
  })
    .annotate(OpenApi.Identifier, "listGitignoresTemplates")
    .annotate(Access, open),
  HttpApiEndpoint.get("getGitignoreTemplateInfo", "/gitignore/templates/:name", {
    params: name,
    success: GitignoreTemplateInfo
  })
    .annotate(OpenApi.Identifier, "getGitignoreTemplateInfo")
    .annotate(Access, open),
  HttpApiEndpoint.get("listLicenseTemplates", "/licenses", {
    success: Schema.Array(LicensesTemplateListEntry)
  })
    .annotate(OpenApi.Identifier, "listLicenseTemplates")
    .annotate(Access, open),
  HttpApiEndpoint.get("getLicenseTemplateInfo", "/licenses/:name", {
    params: name,
    success: LicenseTemplateInfo
  })
    .annotate(OpenApi.Identifier, "getLicenseTemplateInfo")
    .annotate(Access, open),
  HttpApiEndpoint.get("listLabelTemplates", "/label/templates", {
    success: Schema.Array(Schema.String)
  })
    .annotate(OpenApi.Identifier, "listLabelTemplates")
    .annotate(Access, open),
  HttpApiEndpoint.get("getLabelTemplateInfo", "/label/templates/:name", {
    params: name,
    success: Schema.Array(LabelTemplate)
  })
    .annotate(OpenApi.Identifier, "getLabelTemplateInfo")
    .annotate(Access, open)
) {}

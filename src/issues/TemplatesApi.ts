// Routes of issue templates and the issue config (Forgejo's routers/api/v1/repo/repo.go
// GetIssueTemplates, GetIssueConfig, ValidateIssueConfig; CONTRACT-ISSUES §15): the `repository`
// scope, any reader of the repository (no unit check), with Forgejo's operationIds.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

const read = { signedIn: false, scopes: ["repository"], repo: { role: "read" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

export const IssueFormField = Schema.Struct({
  type: Schema.String,
  id: Schema.String,
  attributes: Schema.Record(Schema.String, Schema.Unknown),
  validations: Schema.Record(Schema.String, Schema.Unknown),
  visible: Schema.Array(Schema.String)
}).annotate({ identifier: "IssueFormField" })

export const IssueTemplate = Schema.Struct({
  name: Schema.String,
  title: Schema.String,
  about: Schema.String,
  labels: Schema.Array(Schema.String),
  ref: Schema.String,
  content: Schema.String,
  body: Schema.Array(IssueFormField),
  file_name: Schema.String
}).annotate({ identifier: "IssueTemplate" })

export const IssueConfig = Schema.Struct({
  blank_issues_enabled: Schema.Boolean,
  contact_links: Schema.Array(Schema.Struct({ name: Schema.String, url: Schema.String, about: Schema.String }))
}).annotate({ identifier: "IssueConfig" })

export const IssueConfigValidation = Schema.Struct({ valid: Schema.Boolean, message: Schema.String }).annotate({
  identifier: "IssueConfigValidation"
})

export class IssueTemplatesApi extends HttpApiGroup.make("issueTemplates").add(
  HttpApiEndpoint.get("templates", "/repos/:owner/:repo/issue_templates", {
    params: ownerRepo,
    success: Schema.Array(IssueTemplate)
  })
    .annotate(OpenApi.Identifier, "repoGetIssueTemplates")
    .annotate(Access, read),
  HttpApiEndpoint.get("config", "/repos/:owner/:repo/issue_config", { params: ownerRepo, success: IssueConfig })
    .annotate(OpenApi.Identifier, "repoGetIssueConfig")
    .annotate(Access, read),
  HttpApiEndpoint.get("validateConfig", "/repos/:owner/:repo/issue_config/validate", {
    params: ownerRepo,
    success: IssueConfigValidation
  })
    .annotate(OpenApi.Identifier, "repoValidateIssueConfig")
    .annotate(Access, read)
) {}

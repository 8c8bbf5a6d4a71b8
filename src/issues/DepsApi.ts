// Routes of issue dependencies and blocks (Forgejo's routers/api/v1/repo/issue_dependency.go;
// CONTRACT-ISSUES §13), with Forgejo's operationIds. The IssueMeta body is read by the handlers
// (a JSON body on DELETE too). Adding or removing a dependency is refused on an archived
// repository (423, Forgejo's `mustNotBeArchived`); `/blocks` writes are not (Forgejo).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Issue } from "./Schema.ts"

const read = { signedIn: false, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const write = { signedIn: true, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const writeUnarchived = {
  signedIn: true,
  scopes: ["issue"],
  repo: { role: "read", unit: "issues", changes: "mirrors" }
} as const

const withIndex = { owner: Schema.String, repo: Schema.String, index: Schema.String }
const deps = "/repos/:owner/:repo/issues/:index/dependencies"
const blocks = "/repos/:owner/:repo/issues/:index/blocks"

export const IssueMeta = Schema.Struct({
  index: Schema.optional(Schema.Number),
  owner: Schema.optional(Schema.String),
  repo: Schema.optional(Schema.String)
}).annotate({ identifier: "IssueMeta" })

export class IssueDepsApi extends HttpApiGroup.make("issueDeps").add(
  HttpApiEndpoint.get("listDependencies", deps, { params: withIndex, query: PageQuery, success: Schema.Array(Issue) })
    .annotate(OpenApi.Identifier, "issueListIssueDependencies")
    .annotate(Access, read),
  HttpApiEndpoint.post("createDependency", deps, { params: withIndex, success: Issue })
    .annotate(OpenApi.Identifier, "issueCreateIssueDependencies")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.delete("removeDependency", deps, { params: withIndex, success: Issue })
    .annotate(OpenApi.Identifier, "issueRemoveIssueDependencies")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.get("listBlocks", blocks, { params: withIndex, query: PageQuery, success: Schema.Array(Issue) })
    .annotate(OpenApi.Identifier, "issueListBlocks")
    .annotate(Access, read),
  HttpApiEndpoint.post("createBlocking", blocks, { params: withIndex, success: Issue })
    .annotate(OpenApi.Identifier, "issueCreateIssueBlocking")
    .annotate(Access, write),
  HttpApiEndpoint.delete("removeBlocking", blocks, { params: withIndex, success: Issue })
    .annotate(OpenApi.Identifier, "issueRemoveIssueBlocking")
    .annotate(Access, write)
) {}

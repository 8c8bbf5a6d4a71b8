// The package management routes (Forgejo's routers/api/v1/packages/package.go; CONTRACT-PACKAGES
// §5), with Forgejo's operationIds. Reads need `read:package` on a token, changes `write:package`
// and a signed-in caller with write on the owner's packages. Off with `[packages] ENABLED = false`
// (404; Forgejo keeps these routes while its registries are off).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access, type AccessRule } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

const enabled = (settings: { readonly packages: { readonly ENABLED: boolean } }) => settings.packages.ENABLED
const read = { signedIn: false, scopes: ["package"], enabled } as const satisfies AccessRule
const write = { signedIn: true, scopes: ["package"], enabled } as const satisfies AccessRule

export const Package = Schema.Struct({
  id: Id,
  owner: User,
  creator: User,
  repository: Schema.NullOr(Repository),
  type: Schema.String,
  name: Schema.String,
  version: Schema.String,
  html_url: Schema.String,
  created_at: Timestamp
}).annotate({ identifier: "Package" })

export const PackageFile = Schema.Struct({
  id: Id,
  Size: Schema.Int,
  name: Schema.String,
  md5: Schema.String,
  sha1: Schema.String,
  sha256: Schema.String,
  sha512: Schema.String
}).annotate({ identifier: "PackageFile" })

const owner = { owner: Schema.String }
const versionPath = { owner: Schema.String, type: Schema.String, name: Schema.String, version: Schema.String }
const packagePath = { owner: Schema.String, type: Schema.String, name: Schema.String }

export class PackagesApi extends HttpApiGroup.make("packages").add(
  HttpApiEndpoint.get("listPackages", "/packages/:owner", {
    params: owner,
    query: { type: Schema.optional(Schema.String), q: Schema.optional(Schema.String), ...PageQuery },
    success: Schema.Array(Package)
  })
    .annotate(OpenApi.Identifier, "listPackages")
    .annotate(Access, read),
  HttpApiEndpoint.get("getPackage", "/packages/:owner/:type/:name/:version", {
    params: versionPath,
    success: Package
  })
    .annotate(OpenApi.Identifier, "getPackage")
    .annotate(Access, read),
  HttpApiEndpoint.delete("deletePackage", "/packages/:owner/:type/:name/:version", {
    params: versionPath,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "deletePackage")
    .annotate(Access, write),
  HttpApiEndpoint.get("listPackageFiles", "/packages/:owner/:type/:name/:version/files", {
    params: versionPath,
    success: Schema.Array(PackageFile)
  })
    .annotate(OpenApi.Identifier, "listPackageFiles")
    .annotate(Access, read),
  HttpApiEndpoint.post("linkPackage", "/packages/:owner/:type/:name/-/link/:repo_name", {
    params: { ...packagePath, repo_name: Schema.String },
    success: HttpApiSchema.Empty(201)
  })
    .annotate(OpenApi.Identifier, "linkPackage")
    .annotate(Access, write),
  HttpApiEndpoint.post("unlinkPackage", "/packages/:owner/:type/:name/-/unlink", {
    params: packagePath,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "unlinkPackage")
    .annotate(Access, write)
) {}

const admin = { signedIn: true, scopes: ["admin"], enabled } as const satisfies AccessRule

export const PackageCleanupRule = Schema.Struct({
  id: Id,
  owner: Schema.String,
  type: Schema.String,
  enabled: Schema.Boolean,
  keep_count: Schema.Int,
  keep_pattern: Schema.String,
  remove_days: Schema.Int,
  remove_pattern: Schema.String,
  match_full_name: Schema.Boolean
}).annotate({ identifier: "PackageCleanupRule" })

const ruleFields = {
  enabled: Schema.optionalKey(Schema.Boolean),
  keep_count: Schema.optionalKey(Schema.Int),
  keep_pattern: Schema.optionalKey(Schema.String),
  remove_days: Schema.optionalKey(Schema.Int),
  remove_pattern: Schema.optionalKey(Schema.String),
  match_full_name: Schema.optionalKey(Schema.Boolean)
}
export const CreatePackageCleanupRuleOption = Schema.Struct({
  owner: Schema.String,
  type: Schema.String,
  ...ruleFields
}).annotate({ identifier: "CreatePackageCleanupRuleOption" })
export const EditPackageCleanupRuleOption = Schema.Struct(ruleFields).annotate({
  identifier: "EditPackageCleanupRuleOption"
})

/**
 * Cleanup rules (Forgejo keeps them on web settings pages and has no API): Hearth's own admin
 * routes, in Forgejo's naming style, and one to run every rule now (Forgejo's `cleanup_packages` cron).
 */
export class PackageCleanupApi extends HttpApiGroup.make("packageCleanup").add(
  HttpApiEndpoint.get("listCleanupRules", "/admin/packages/cleanup-rules", {
    query: { owner: Schema.optional(Schema.String) },
    success: Schema.Array(PackageCleanupRule)
  })
    .annotate(OpenApi.Identifier, "adminListPackageCleanupRules")
    .annotate(Access, admin),
  HttpApiEndpoint.post("createCleanupRule", "/admin/packages/cleanup-rules", {
    payload: CreatePackageCleanupRuleOption,
    success: PackageCleanupRule.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreatePackageCleanupRule")
    .annotate(Access, admin),
  HttpApiEndpoint.patch("editCleanupRule", "/admin/packages/cleanup-rules/:id", {
    params: { id: Schema.String },
    payload: EditPackageCleanupRuleOption,
    success: PackageCleanupRule
  })
    .annotate(OpenApi.Identifier, "adminEditPackageCleanupRule")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("deleteCleanupRule", "/admin/packages/cleanup-rules/:id", {
    params: { id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminDeletePackageCleanupRule")
    .annotate(Access, admin),
  HttpApiEndpoint.post("runCleanupRules", "/admin/packages/cleanup-rules/-/run", {
    success: Schema.Struct({ removed: Schema.Int })
  })
    .annotate(OpenApi.Identifier, "adminRunPackageCleanupRules")
    .annotate(Access, admin)
) {}

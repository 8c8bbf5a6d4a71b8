// Branch and tag protection rules (Forgejo's routers/api/v1/repo/branch.go and tag.go,
// modules/structs/repo_branch.go and repo_tag.go). Every route needs a token and repository admin
// (Forgejo's `reqToken(), reqAdmin()`), reads too; creating and editing are refused in an archived
// repository (`mustNotBeArchived`).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"

const repoAdmin = { signedIn: true, scopes: ["repository"], repo: { role: "admin", changes: "settings" } } as const
/** Also 423 in an archived repository. */
const repoAdminChange = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "admin", changes: "mirrors" }
} as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }
const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))

const Names = Schema.Array(Schema.String)
const opt = <S extends Schema.Top>(s: S) => Schema.optionalKey(Schema.NullOr(s))

export const BranchProtection = Schema.Struct({
  branch_name: Schema.String,
  rule_name: Schema.String,
  enable_push: Schema.Boolean,
  enable_push_whitelist: Schema.Boolean,
  push_whitelist_usernames: Names,
  push_whitelist_teams: Names,
  push_whitelist_deploy_keys: Schema.Boolean,
  enable_merge_whitelist: Schema.Boolean,
  merge_whitelist_usernames: Names,
  merge_whitelist_teams: Names,
  enable_status_check: Schema.Boolean,
  status_check_contexts: Schema.NullOr(Names),
  required_approvals: Schema.Number,
  enable_approvals_whitelist: Schema.Boolean,
  approvals_whitelist_username: Names,
  approvals_whitelist_teams: Names,
  block_on_rejected_reviews: Schema.Boolean,
  block_on_official_review_requests: Schema.Boolean,
  block_on_outdated_branch: Schema.Boolean,
  dismiss_stale_approvals: Schema.Boolean,
  ignore_stale_approvals: Schema.Boolean,
  require_signed_commits: Schema.Boolean,
  protected_file_patterns: Schema.String,
  unprotected_file_patterns: Schema.String,
  apply_to_admins: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type BranchProtection = typeof BranchProtection.Type

const editFields = {
  enable_push: opt(Schema.Boolean),
  enable_push_whitelist: opt(Schema.Boolean),
  push_whitelist_usernames: opt(Names),
  push_whitelist_teams: opt(Names),
  push_whitelist_deploy_keys: opt(Schema.Boolean),
  enable_merge_whitelist: opt(Schema.Boolean),
  merge_whitelist_usernames: opt(Names),
  merge_whitelist_teams: opt(Names),
  enable_status_check: opt(Schema.Boolean),
  status_check_contexts: opt(Names),
  required_approvals: opt(Schema.Number),
  enable_approvals_whitelist: opt(Schema.Boolean),
  approvals_whitelist_username: opt(Names),
  approvals_whitelist_teams: opt(Names),
  block_on_rejected_reviews: opt(Schema.Boolean),
  block_on_official_review_requests: opt(Schema.Boolean),
  block_on_outdated_branch: opt(Schema.Boolean),
  dismiss_stale_approvals: opt(Schema.Boolean),
  ignore_stale_approvals: opt(Schema.Boolean),
  require_signed_commits: opt(Schema.Boolean),
  protected_file_patterns: opt(Schema.String),
  unprotected_file_patterns: opt(Schema.String),
  apply_to_admins: opt(Schema.Boolean)
}

export const EditBranchProtectionOption = Schema.Struct(editFields)
export type EditBranchProtectionOption = typeof EditBranchProtectionOption.Type
export const CreateBranchProtectionOption = Schema.Struct({
  ...editFields,
  branch_name: opt(Schema.String),
  rule_name: opt(Schema.String)
})
export type CreateBranchProtectionOption = typeof CreateBranchProtectionOption.Type
/** Gitea's `UpdateBranchProtectionPriories`: rule ids, highest priority first. */
export const UpdateBranchProtectionPriories = Schema.Struct({ ids: Schema.Array(Schema.Number) })

export const TagProtection = Schema.Struct({
  id: Schema.Number,
  name_pattern: Schema.String,
  whitelist_usernames: Names,
  whitelist_teams: Names,
  created_at: Timestamp,
  updated_at: Timestamp
})
export type TagProtection = typeof TagProtection.Type
export const CreateTagProtectionOption = Schema.Struct({
  name_pattern: opt(Schema.String),
  whitelist_usernames: opt(Names),
  whitelist_teams: opt(Names)
})
export type CreateTagProtectionOption = typeof CreateTagProtectionOption.Type
export const EditTagProtectionOption = CreateTagProtectionOption

const withName = { ...ownerRepo, name: Schema.String }
const withId = { ...ownerRepo, id: Schema.String }

export class ProtectionApi extends HttpApiGroup.make("protection").add(
  HttpApiEndpoint.get("listBranchProtections", "/repos/:owner/:repo/branch_protections", {
    params: ownerRepo,
    success: Schema.Array(BranchProtection)
  })
    .annotate(OpenApi.Identifier, "repoListBranchProtection")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.post("createBranchProtection", "/repos/:owner/:repo/branch_protections", {
    params: ownerRepo,
    payload: CreateBranchProtectionOption,
    success: created(BranchProtection)
  })
    .annotate(OpenApi.Identifier, "repoCreateBranchProtection")
    .annotate(Access, repoAdminChange),
  HttpApiEndpoint.post("updateBranchProtectionPriorities", "/repos/:owner/:repo/branch_protections/priority", {
    params: ownerRepo,
    payload: UpdateBranchProtectionPriories,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoUpdateBranchProtectionPriories")
    .annotate(Access, repoAdminChange),
  HttpApiEndpoint.get("getBranchProtection", "/repos/:owner/:repo/branch_protections/:name", {
    params: withName,
    success: BranchProtection
  })
    .annotate(OpenApi.Identifier, "repoGetBranchProtection")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.patch("editBranchProtection", "/repos/:owner/:repo/branch_protections/:name", {
    params: withName,
    payload: EditBranchProtectionOption,
    success: BranchProtection
  })
    .annotate(OpenApi.Identifier, "repoEditBranchProtection")
    .annotate(Access, repoAdminChange),
  HttpApiEndpoint.delete("deleteBranchProtection", "/repos/:owner/:repo/branch_protections/:name", {
    params: withName,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteBranchProtection")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.get("listTagProtections", "/repos/:owner/:repo/tag_protections", {
    params: ownerRepo,
    success: Schema.Array(TagProtection)
  })
    .annotate(OpenApi.Identifier, "repoListTagProtection")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.post("createTagProtection", "/repos/:owner/:repo/tag_protections", {
    params: ownerRepo,
    payload: CreateTagProtectionOption,
    success: created(TagProtection)
  })
    .annotate(OpenApi.Identifier, "repoCreateTagProtection")
    .annotate(Access, repoAdminChange),
  HttpApiEndpoint.get("getTagProtection", "/repos/:owner/:repo/tag_protections/:id", {
    params: withId,
    success: TagProtection
  })
    .annotate(OpenApi.Identifier, "repoGetTagProtection")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.patch("editTagProtection", "/repos/:owner/:repo/tag_protections/:id", {
    params: withId,
    payload: EditTagProtectionOption,
    success: TagProtection
  })
    .annotate(OpenApi.Identifier, "repoEditTagProtection")
    .annotate(Access, repoAdminChange),
  HttpApiEndpoint.delete("deleteTagProtection", "/repos/:owner/:repo/tag_protections/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteTagProtection")
    .annotate(Access, repoAdmin)
) {}

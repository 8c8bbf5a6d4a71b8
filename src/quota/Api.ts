// Quotas (Forgejo's routers/api/v1/admin/quota*.go, models/quota): the site administrators' rule, group and
// membership routes (`admin` scope, site admins only), and what an account may learn of its own
// quota (`user` scope) or an organization's (`organization` scope, its owners). Every route
// answers 404 while `[quota] ENABLED` is off, as Forgejo does not register them then.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import type { SettingsShape } from "../config/Settings.ts"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { User } from "../users/Schema.ts"

const quotaOn = (settings: SettingsShape) => settings.quota.ENABLED
const admin = { signedIn: true, scopes: ["admin"], enabled: quotaOn } as const
const mine = { signedIn: true, scopes: ["user"], enabled: quotaOn } as const
const orgs = { signedIn: true, scopes: ["organization"], enabled: quotaOn } as const

const Int64 = Schema.Int

export const QuotaRuleInfo = Schema.Struct({
  /** Shown to site administrators only. */
  name: Schema.optionalKey(Schema.String),
  limit: Int64,
  /** Left out when the rule has none, as Forgejo's `omitempty`. */
  subjects: Schema.optionalKey(Schema.Array(Schema.String))
}).annotate({ identifier: "QuotaRuleInfo" })

export const QuotaGroup = Schema.Struct({
  /** Shown to site administrators only. */
  name: Schema.optionalKey(Schema.String),
  rules: Schema.Array(QuotaRuleInfo)
}).annotate({ identifier: "QuotaGroup" })

export const QuotaUsed = Schema.Struct({
  size: Schema.Struct({
    repos: Schema.Struct({ public: Int64, private: Int64 }),
    git: Schema.Struct({ LFS: Int64 }),
    assets: Schema.Struct({
      attachments: Schema.Struct({ issues: Int64, releases: Int64 }),
      artifacts: Int64,
      packages: Schema.Struct({ all: Int64 })
    })
  })
}).annotate({ identifier: "QuotaUsed" })

export const QuotaInfo = Schema.Struct({
  used: QuotaUsed,
  groups: Schema.Array(QuotaGroup)
}).annotate({ identifier: "QuotaInfo" })

export const CreateQuotaRuleOptions = Schema.Struct({
  name: BoundedName("Name", NAME_MAX.quota),
  limit: Schema.optionalKey(Schema.NullOr(Int64)),
  subjects: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
}).annotate({ identifier: "CreateQuotaRuleOptions" })

export const CreateQuotaGroupOptions = Schema.Struct({
  name: BoundedName("Name", NAME_MAX.quota),
  rules: Schema.optionalKey(Schema.NullOr(Schema.Array(CreateQuotaRuleOptions)))
}).annotate({ identifier: "CreateQuotaGroupOptions" })

export const EditQuotaRuleOptions = Schema.Struct({
  limit: Schema.optionalKey(Schema.NullOr(Int64)),
  subjects: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
}).annotate({ identifier: "EditQuotaRuleOptions" })

export const SetUserQuotaGroupsOptions = Schema.Struct({
  groups: Schema.Array(Schema.String)
}).annotate({ identifier: "SetUserQuotaGroupsOptions" })

// What counts towards a quota, item by item: Hearth stores no attachments, packages or
// artifacts yet, so these lists are empty; the shapes are Forgejo's.
const QuotaUsedAttachment = Schema.Struct({
  name: Schema.String,
  size: Int64,
  api_url: Schema.String,
  contained_in: Schema.Struct({ api_url: Schema.String, html_url: Schema.String })
}).annotate({ identifier: "QuotaUsedAttachment" })

const QuotaUsedPackage = Schema.Struct({
  name: Schema.String,
  type: Schema.String,
  version: Schema.String,
  size: Int64,
  html_url: Schema.String
}).annotate({ identifier: "QuotaUsedPackage" })

const QuotaUsedArtifact = Schema.Struct({
  name: Schema.String,
  size: Int64,
  html_url: Schema.String
}).annotate({ identifier: "QuotaUsedArtifact" })

const group = { quotagroup: Schema.String }
const rule = { quotarule: Schema.String }
const username = { username: Schema.String }
const org = { org: Schema.String }
const subjectQuery = { subject: Schema.optional(Schema.String) }
const noContent = HttpApiSchema.NoContent

export class QuotaApi extends HttpApiGroup.make("quota").add(
  // ---- groups
  HttpApiEndpoint.get("adminListQuotaGroups", "/admin/quota/groups", { success: Schema.Array(QuotaGroup) })
    .annotate(OpenApi.Identifier, "adminListQuotaGroups")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCreateQuotaGroup", "/admin/quota/groups", {
    payload: CreateQuotaGroupOptions,
    success: QuotaGroup.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreateQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminGetQuotaGroup", "/admin/quota/groups/:quotagroup", {
    params: group,
    success: QuotaGroup
  })
    .annotate(OpenApi.Identifier, "adminGetQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteQuotaGroup", "/admin/quota/groups/:quotagroup", {
    params: group,
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminListUsersInQuotaGroup", "/admin/quota/groups/:quotagroup/users", {
    params: group,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "adminListUsersInQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.put("adminAddUserToQuotaGroup", "/admin/quota/groups/:quotagroup/users/:username", {
    params: { ...group, ...username },
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminAddUserToQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminRemoveUserFromQuotaGroup", "/admin/quota/groups/:quotagroup/users/:username", {
    params: { ...group, ...username },
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminRemoveUserFromQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.put("adminAddRuleToQuotaGroup", "/admin/quota/groups/:quotagroup/rules/:quotarule", {
    params: { ...group, ...rule },
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminAddRuleToQuotaGroup")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminRemoveRuleFromQuotaGroup", "/admin/quota/groups/:quotagroup/rules/:quotarule", {
    params: { ...group, ...rule },
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminRemoveRuleFromQuotaGroup")
    .annotate(Access, admin),
  // ---- rules
  HttpApiEndpoint.get("adminListQuotaRules", "/admin/quota/rules", { success: Schema.Array(QuotaRuleInfo) })
    .annotate(OpenApi.Identifier, "adminListQuotaRules")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCreateQuotaRule", "/admin/quota/rules", {
    payload: CreateQuotaRuleOptions,
    success: QuotaRuleInfo.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreateQuotaRule")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminGetQuotaRule", "/admin/quota/rules/:quotarule", {
    params: rule,
    success: QuotaRuleInfo
  })
    .annotate(OpenApi.Identifier, "adminGetQuotaRule")
    .annotate(Access, admin),
  HttpApiEndpoint.patch("adminEditQuotaRule", "/admin/quota/rules/:quotarule", {
    params: rule,
    payload: EditQuotaRuleOptions,
    success: QuotaRuleInfo
  })
    .annotate(OpenApi.Identifier, "adminEditQuotaRule")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteQuotaRule", "/admin/quota/rules/:quotarule", {
    params: rule,
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteQuotaRule")
    .annotate(Access, admin),
  // ---- accounts
  HttpApiEndpoint.get("adminGetUserQuota", "/admin/users/:username/quota", {
    params: username,
    success: QuotaInfo
  })
    .annotate(OpenApi.Identifier, "adminGetUserQuota")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminSetUserQuotaGroups", "/admin/users/:username/quota/groups", {
    params: username,
    payload: SetUserQuotaGroupsOptions,
    success: noContent
  })
    .annotate(OpenApi.Identifier, "adminSetUserQuotaGroups")
    .annotate(Access, admin),
  HttpApiEndpoint.get("userGetQuota", "/user/quota", { success: QuotaInfo })
    .annotate(OpenApi.Identifier, "userGetQuota")
    .annotate(Access, mine),
  HttpApiEndpoint.get("userCheckQuota", "/user/quota/check", { query: subjectQuery, success: Schema.Boolean })
    .annotate(OpenApi.Identifier, "userCheckQuota")
    .annotate(Access, mine),
  HttpApiEndpoint.get("userListQuotaAttachments", "/user/quota/attachments", {
    query: PageQuery,
    success: Schema.Array(QuotaUsedAttachment)
  })
    .annotate(OpenApi.Identifier, "userListQuotaAttachments")
    .annotate(Access, mine),
  HttpApiEndpoint.get("userListQuotaPackages", "/user/quota/packages", {
    query: PageQuery,
    success: Schema.Array(QuotaUsedPackage)
  })
    .annotate(OpenApi.Identifier, "userListQuotaPackages")
    .annotate(Access, mine),
  HttpApiEndpoint.get("userListQuotaArtifacts", "/user/quota/artifacts", {
    query: PageQuery,
    success: Schema.Array(QuotaUsedArtifact)
  })
    .annotate(OpenApi.Identifier, "userListQuotaArtifacts")
    .annotate(Access, mine),
  HttpApiEndpoint.get("orgGetQuota", "/orgs/:org/quota", { params: org, success: QuotaInfo })
    .annotate(OpenApi.Identifier, "orgGetQuota")
    .annotate(Access, orgs),
  HttpApiEndpoint.get("orgCheckQuota", "/orgs/:org/quota/check", {
    params: org,
    query: subjectQuery,
    success: Schema.Boolean
  })
    .annotate(OpenApi.Identifier, "orgCheckQuota")
    .annotate(Access, orgs),
  HttpApiEndpoint.get("orgListQuotaAttachments", "/orgs/:org/quota/attachments", {
    params: org,
    query: PageQuery,
    success: Schema.Array(QuotaUsedAttachment)
  })
    .annotate(OpenApi.Identifier, "orgListQuotaAttachments")
    .annotate(Access, orgs),
  HttpApiEndpoint.get("orgListQuotaPackages", "/orgs/:org/quota/packages", {
    params: org,
    query: PageQuery,
    success: Schema.Array(QuotaUsedPackage)
  })
    .annotate(OpenApi.Identifier, "orgListQuotaPackages")
    .annotate(Access, orgs),
  HttpApiEndpoint.get("orgListQuotaArtifacts", "/orgs/:org/quota/artifacts", {
    params: org,
    query: PageQuery,
    success: Schema.Array(QuotaUsedArtifact)
  })
    .annotate(OpenApi.Identifier, "orgListQuotaArtifacts")
    .annotate(Access, orgs)
) {}

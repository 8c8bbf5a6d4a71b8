// Site administration of user accounts (Forgejo's /admin/users): every route needs the `admin`
// token scope and a site administrator (403 "user should be the site admin" otherwise).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Email } from "../emails/Api.ts"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { CreateKeyOption, PublicKey } from "../keys/Api.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { CreateOrgOption, Organization } from "../orgs/Schema.ts"
import { CreateRepoOption, Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

const maxSize = (n: number) => Schema.String.check(Schema.isMaxLength(n))

// Go clients send "" for an unset visibility; Forgejo reads it as "not given".
const VisibilityOption = Schema.Literals(["", "public", "limited", "private"])

const isValidUrl = (s: string) => {
  try {
    return ["http:", "https:"].includes(new URL(s).protocol)
  } catch {
    return false
  }
}
// Forgejo's `OmitEmpty;ValidUrl`: empty clears the website, anything else must be an http(s) URL.
const Website = maxSize(255).check(
  Schema.makeFilter((s: string) => (s === "" || isValidUrl(s) ? undefined : "must be a valid http(s) URL"))
)

const DateTimeString = Schema.String.check(
  Schema.makeFilter((s: string) =>
    /^\d{4}-\d{2}-\d{2}T/.test(s) && !Number.isNaN(Date.parse(s)) ? undefined : "must be an RFC 3339 date-time"
  )
)

export const CreateUserOption = Schema.Struct({
  username: BoundedName("UserName", NAME_MAX.user),
  email: Schema.String,
  password: Schema.optionalKey(maxSize(255)),
  full_name: Schema.optionalKey(maxSize(100)),
  login_name: Schema.optionalKey(Schema.String),
  source_id: Schema.optionalKey(Schema.Int),
  must_change_password: Schema.optionalKey(Schema.Boolean),
  restricted: Schema.optionalKey(Schema.Boolean),
  send_notify: Schema.optionalKey(Schema.Boolean),
  visibility: Schema.optionalKey(VisibilityOption),
  created_at: Schema.optionalKey(DateTimeString)
}).annotate({ identifier: "CreateUserOption" })

export const EditUserOption = Schema.Struct({
  email: Schema.optionalKey(maxSize(254)),
  full_name: Schema.optionalKey(maxSize(100)),
  password: Schema.optionalKey(maxSize(255)),
  must_change_password: Schema.optionalKey(Schema.Boolean),
  admin: Schema.optionalKey(Schema.Boolean),
  active: Schema.optionalKey(Schema.Boolean),
  prohibit_login: Schema.optionalKey(Schema.Boolean),
  restricted: Schema.optionalKey(Schema.Boolean),
  visibility: Schema.optionalKey(VisibilityOption),
  website: Schema.optionalKey(Website),
  location: Schema.optionalKey(maxSize(50)),
  description: Schema.optionalKey(maxSize(255)),
  pronouns: Schema.optionalKey(maxSize(50)),
  login_name: Schema.optionalKey(Schema.String),
  source_id: Schema.optionalKey(Schema.Int),
  max_repo_creation: Schema.optionalKey(Schema.Int),
  allow_create_organization: Schema.optionalKey(Schema.Boolean),
  hide_email: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "EditUserOption" })

const admin = { signedIn: true, scopes: ["admin"] } as const

export class AdminUsersApi extends HttpApiGroup.make("adminUsers").add(
  HttpApiEndpoint.get("adminSearchUsers", "/admin/users", {
    query: {
      source_id: Schema.optional(Schema.String),
      login_name: Schema.optional(Schema.String),
      sort: Schema.optional(Schema.String),
      ...PageQuery
    },
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "adminSearchUsers")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCreateUser", "/admin/users", {
    payload: CreateUserOption,
    success: User.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreateUser")
    .annotate(Access, admin),
  HttpApiEndpoint.patch("adminEditUser", "/admin/users/:username", {
    params: { username: Schema.String },
    payload: EditUserOption,
    success: User
  })
    .annotate(OpenApi.Identifier, "adminEditUser")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteUser", "/admin/users/:username", {
    params: { username: Schema.String },
    query: { purge: Schema.optional(Schema.String) },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteUser")
    .annotate(Access, admin)
) {}

export const RenameUserOption = Schema.Struct({
  new_username: BoundedName("NewName", NAME_MAX.user)
}).annotate({ identifier: "RenameUserOption" })

/** A periodic task as `GET /admin/cron` lists it (Forgejo's `Cron`). */
export const Cron = Schema.Struct({
  name: Schema.String,
  schedule: Schema.String,
  next: Schema.String,
  prev: Schema.String,
  exec_times: Schema.Number
}).annotate({ identifier: "Cron" })

const userParam = { username: Schema.String }
const ownerRepo = { owner: Schema.String, repo: Schema.String }

/**
 * The rest of Forgejo's /admin routes: accounts' organizations, repositories, keys, e-mail
 * addresses and name; every organization and e-mail address; periodic tasks; repositories on disk
 * without a row (unadopted).
 */
export class AdminApi extends HttpApiGroup.make("admin").add(
  HttpApiEndpoint.post("adminCreateOrg", "/admin/users/:username/orgs", {
    params: userParam,
    payload: CreateOrgOption,
    success: Organization.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreateOrg")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCreateRepo", "/admin/users/:username/repos", {
    params: userParam,
    payload: CreateRepoOption,
    success: Repository.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreateRepo")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCreatePublicKey", "/admin/users/:username/keys", {
    params: userParam,
    payload: CreateKeyOption,
    success: PublicKey.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "adminCreatePublicKey")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteUserPublicKey", "/admin/users/:username/keys/:id", {
    params: { username: Schema.String, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteUserPublicKey")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminRenameUser", "/admin/users/:username/rename", {
    params: userParam,
    payload: RenameUserOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminRenameUser")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminListUserEmails", "/admin/users/:username/emails", {
    params: userParam,
    success: Schema.Array(Email)
  })
    .annotate(OpenApi.Identifier, "adminListUserEmails")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteUserEmails", "/admin/users/:username/emails", {
    params: userParam,
    payload: Schema.Struct({ emails: Schema.optional(Schema.Array(Schema.String)) }),
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteUserEmails")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminGetAllEmails", "/admin/emails", { query: PageQuery, success: Schema.Array(Email) })
    .annotate(OpenApi.Identifier, "adminGetAllEmails")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminSearchEmails", "/admin/emails/search", {
    query: { q: Schema.optional(Schema.String), ...PageQuery },
    success: Schema.Array(Email)
  })
    .annotate(OpenApi.Identifier, "adminSearchEmails")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminGetAllOrgs", "/admin/orgs", { query: PageQuery, success: Schema.Array(Organization) })
    .annotate(OpenApi.Identifier, "adminGetAllOrgs")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminCronList", "/admin/cron", { query: PageQuery, success: Schema.Array(Cron) })
    .annotate(OpenApi.Identifier, "adminCronList")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminCronRun", "/admin/cron/:task", {
    params: { task: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminCronRun")
    .annotate(Access, admin),
  HttpApiEndpoint.get("adminUnadoptedList", "/admin/unadopted", {
    query: { pattern: Schema.optional(Schema.String), ...PageQuery },
    success: Schema.Array(Schema.String)
  })
    .annotate(OpenApi.Identifier, "adminUnadoptedList")
    .annotate(Access, admin),
  HttpApiEndpoint.post("adminAdoptRepository", "/admin/unadopted/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminAdoptRepository")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("adminDeleteUnadoptedRepository", "/admin/unadopted/:owner/:repo", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "adminDeleteUnadoptedRepository")
    .annotate(Access, admin)
) {}

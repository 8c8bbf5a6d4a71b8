// Migration (POST /repos/migrate, git sources), pull mirror sync and push mirrors, as Forgejo's
// routers/api/v1/repo/{migrate,mirror}.go. Scopes: the `repository` category.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { Repository } from "../repos/Schema.ts"

const optionalString = Schema.optional(Schema.String)
const optionalBoolean = Schema.optional(Schema.Boolean)

export const MigrateRepoOptions = Schema.Struct({
  clone_addr: Schema.String,
  repo_name: BoundedName("RepoName", NAME_MAX.repo),
  repo_owner: optionalString,
  /** Deprecated: the owner's id. */
  uid: Schema.optional(Schema.Number),
  service: optionalString,
  auth_username: optionalString,
  auth_password: optionalString,
  auth_token: optionalString,
  mirror: optionalBoolean,
  mirror_interval: optionalString,
  private: optionalBoolean,
  description: optionalString,
  // Accepted for compatibility; a git source has none of these (refused when asked for).
  wiki: optionalBoolean,
  milestones: optionalBoolean,
  labels: optionalBoolean,
  issues: optionalBoolean,
  pull_requests: optionalBoolean,
  releases: optionalBoolean,
  lfs: optionalBoolean,
  lfs_endpoint: optionalString
}).annotate({ identifier: "MigrateRepoOptions" })
export type MigrateRepoOptions = typeof MigrateRepoOptions.Type

export const PushMirror = Schema.Struct({
  repo_name: Schema.String,
  remote_name: Schema.String,
  remote_address: Schema.String,
  created: Timestamp,
  last_update: Timestamp,
  last_error: Schema.String,
  interval: Schema.String,
  sync_on_commit: Schema.Boolean,
  branch_filter: Schema.String,
  public_key: Schema.String
}).annotate({ identifier: "PushMirror" })
export type PushMirror = typeof PushMirror.Type

export const CreatePushMirrorOption = Schema.Struct({
  remote_address: optionalString,
  remote_username: optionalString,
  remote_password: optionalString,
  interval: optionalString,
  sync_on_commit: optionalBoolean,
  branch_filter: optionalString,
  use_ssh: optionalBoolean
}).annotate({ identifier: "CreatePushMirrorOption" })
export type CreatePushMirrorOption = typeof CreatePushMirrorOption.Type

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const signedIn = { signedIn: true, scopes: ["repository"] } as const
// Forgejo's rules on the repository of the path (Assignment.ts): `reqRepoWriter(code)` and
// `mustNotBeArchived` for mirror-sync, `reqAdmin` for push mirrors, `mustNotBeArchived` on their changes.
const pullSync = { ...signedIn, repo: { role: "write", unit: "code", changes: "mirrors" } } as const
const pushRead = { ...signedIn, repo: { role: "admin" } } as const
/** Forgejo's convert: the repository's owner (an organization's owners); the web's convert form asks the same. */
export const convertRule = { ...signedIn, repo: { role: "owner", changes: "mirrors" } } as const
const pushChange = { ...signedIn, repo: { role: "admin", changes: "mirrors" } } as const

export class MirrorsApi extends HttpApiGroup.make("mirrors").add(
  // 201 once the clone has finished (as Forgejo: the request waits for it).
  HttpApiEndpoint.post("migrate", "/repos/migrate", {
    payload: MigrateRepoOptions,
    success: Repository.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoMigrate")
    .annotate(Access, signedIn),
  // 200 with an empty body: the sync is queued.
  HttpApiEndpoint.post("mirrorSync", "/repos/:owner/:repo/mirror-sync", {
    params: ownerRepo,
    success: HttpApiSchema.Empty(200)
  })
    .annotate(OpenApi.Identifier, "repoMirrorSync")
    .annotate(Access, pullSync),
  HttpApiEndpoint.post("convert", "/repos/:owner/:repo/convert", {
    params: ownerRepo,
    success: Repository
  })
    .annotate(OpenApi.Identifier, "repoConvert")
    .annotate(Access, convertRule),
  HttpApiEndpoint.get("listPushMirrors", "/repos/:owner/:repo/push_mirrors", {
    params: ownerRepo,
    query: PageQuery,
    success: Schema.Array(PushMirror)
  })
    .annotate(OpenApi.Identifier, "repoListPushMirrors")
    .annotate(Access, pushRead),
  HttpApiEndpoint.post("addPushMirror", "/repos/:owner/:repo/push_mirrors", {
    params: ownerRepo,
    payload: CreatePushMirrorOption,
    success: PushMirror
  })
    .annotate(OpenApi.Identifier, "repoAddPushMirror")
    .annotate(Access, pushChange),
  HttpApiEndpoint.get("getPushMirror", "/repos/:owner/:repo/push_mirrors/:name", {
    params: { ...ownerRepo, name: Schema.String },
    success: PushMirror
  })
    .annotate(OpenApi.Identifier, "repoGetPushMirrorByRemoteName")
    .annotate(Access, pushRead),
  HttpApiEndpoint.delete("deletePushMirror", "/repos/:owner/:repo/push_mirrors/:name", {
    params: { ...ownerRepo, name: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeletePushMirror")
    .annotate(Access, pushChange),
  // 200 with an empty body: each push mirror's sync is queued.
  HttpApiEndpoint.post("syncPushMirrors", "/repos/:owner/:repo/push_mirrors-sync", {
    params: ownerRepo,
    success: HttpApiSchema.Empty(200)
  })
    .annotate(OpenApi.Identifier, "repoPushMirrorSync")
    .annotate(Access, pushChange)
) {}

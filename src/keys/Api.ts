// SSH keys (Forgejo's routers/api/v1/user/key.go) and deploy keys: user keys need the `user` scope, deploy keys the
// `repository` scope and the repository's admin.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

/** Forgejo's PublicKey; `user`, `key_type` and `read_only` only for the owner or an admin. */
export const PublicKey = Schema.Struct({
  id: Id,
  key: Schema.String,
  url: Schema.optionalKey(Schema.String),
  title: Schema.optionalKey(Schema.String),
  fingerprint: Schema.optionalKey(Schema.String),
  created_at: Timestamp,
  user: Schema.optionalKey(User),
  read_only: Schema.optionalKey(Schema.Boolean),
  key_type: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "PublicKey" })
export type PublicKey = typeof PublicKey.Type

export const DeployKey = Schema.Struct({
  id: Id,
  key_id: Id,
  key: Schema.String,
  url: Schema.String,
  title: Schema.String,
  fingerprint: Schema.String,
  created_at: Timestamp,
  read_only: Schema.Boolean,
  repository: Schema.optionalKey(Repository)
}).annotate({ identifier: "DeployKey" })
export type DeployKey = typeof DeployKey.Type

export const CreateKeyOption = Schema.Struct({
  title: BoundedName("Title", NAME_MAX.keyTitle),
  key: Schema.String,
  read_only: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "CreateKeyOption" })

const user = { signedIn: true, scopes: ["user"] } as const
/** Deploy keys: Forgejo's `reqRepoAdmin` on the repository of the path (Assignment.ts). */
const repository = { signedIn: true, scopes: ["repository"], repo: { role: "admin" } } as const
const repoParams = { owner: Schema.String, repo: Schema.String }
const fingerprint = { fingerprint: Schema.optional(Schema.String) }

export class KeysApi extends HttpApiGroup.make("keys").add(
  HttpApiEndpoint.get("listMyKeys", "/user/keys", {
    query: { ...PageQuery, ...fingerprint },
    success: Schema.Array(PublicKey)
  })
    .annotate(OpenApi.Identifier, "userCurrentListKeys")
    .annotate(Access, user),
  HttpApiEndpoint.post("createKey", "/user/keys", {
    payload: CreateKeyOption,
    success: PublicKey.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userCurrentPostKey")
    .annotate(Access, user),
  HttpApiEndpoint.get("getKey", "/user/keys/:id", { params: { id: Schema.String }, success: PublicKey })
    .annotate(OpenApi.Identifier, "userCurrentGetKey")
    .annotate(Access, user),
  HttpApiEndpoint.delete("deleteKey", "/user/keys/:id", {
    params: { id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentDeleteKey")
    .annotate(Access, user),
  HttpApiEndpoint.get("listUserKeys", "/users/:username/keys", {
    params: { username: Schema.String },
    query: { ...PageQuery, ...fingerprint },
    success: Schema.Array(PublicKey)
  })
    .annotate(OpenApi.Identifier, "userListKeys")
    .annotate(Access, user),
  HttpApiEndpoint.get("listDeployKeys", "/repos/:owner/:repo/keys", {
    params: repoParams,
    query: { ...PageQuery, ...fingerprint, key_id: Schema.optional(Schema.String) },
    success: Schema.Array(DeployKey)
  })
    .annotate(OpenApi.Identifier, "repoListKeys")
    .annotate(Access, repository),
  HttpApiEndpoint.post("createDeployKey", "/repos/:owner/:repo/keys", {
    params: repoParams,
    payload: CreateKeyOption,
    success: DeployKey.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateKey")
    .annotate(Access, repository),
  HttpApiEndpoint.get("getDeployKey", "/repos/:owner/:repo/keys/:id", {
    params: { ...repoParams, id: Schema.String },
    success: DeployKey
  })
    .annotate(OpenApi.Identifier, "repoGetKey")
    .annotate(Access, repository),
  HttpApiEndpoint.delete("deleteDeployKey", "/repos/:owner/:repo/keys/:id", {
    params: { ...repoParams, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteKey")
    .annotate(Access, repository)
) {}

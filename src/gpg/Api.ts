// GPG keys (Forgejo's routers/api/v1/user/gpg_key.go): the caller's keys, another user's list, the verification token and
// the verification of an added key. Every route needs a signed-in caller and the `user` scope.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

export const GPGKeyEmail = Schema.Struct({ email: Schema.String, verified: Schema.Boolean }).annotate({
  identifier: "GPGKeyEmail"
})

const keyFields = {
  id: Id,
  primary_key_id: Schema.String,
  key_id: Schema.String,
  public_key: Schema.String,
  emails: Schema.Array(GPGKeyEmail),
  can_sign: Schema.Boolean,
  can_encrypt_comms: Schema.Boolean,
  can_encrypt_storage: Schema.Boolean,
  can_certify: Schema.Boolean,
  verified: Schema.Boolean,
  created_at: Timestamp,
  expires_at: Timestamp
}

/** A subkey: the GPGKey shape with empty `emails` and `subkeys`. */
export const GPGSubkey = Schema.Struct({ ...keyFields, subkeys: Schema.Array(Schema.Unknown) }).annotate({
  identifier: "GPGSubkey"
})
export const GPGKey = Schema.Struct({ ...keyFields, subkeys: Schema.Array(GPGSubkey) }).annotate({
  identifier: "GPGKey"
})
export type GPGKey = typeof GPGKey.Type
export type GPGSubkey = typeof GPGSubkey.Type

export const CreateGPGKeyOption = Schema.Struct({
  armored_public_key: Schema.String,
  armored_signature: Schema.optional(Schema.String)
}).annotate({ identifier: "CreateGPGKeyOption" })

export const VerifyGPGKeyOption = Schema.Struct({
  key_id: Schema.String,
  armored_signature: Schema.optional(Schema.String)
}).annotate({ identifier: "VerifyGPGKeyOption" })

const rule = { signedIn: true, scopes: ["user"] } as const
const Keys = Schema.Array(GPGKey)
/** Read leniently: an id that is not a number names no key (404). */
const id = { id: Schema.String }

export class GpgApi extends HttpApiGroup.make("gpg").add(
  HttpApiEndpoint.get("listMyGpgKeys", "/user/gpg_keys", { query: PageQuery, success: Keys })
    .annotate(OpenApi.Identifier, "userCurrentListGPGKeys")
    .annotate(Access, rule),
  HttpApiEndpoint.post("addGpgKey", "/user/gpg_keys", {
    payload: CreateGPGKeyOption,
    success: GPGKey.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userCurrentPostGPGKey")
    .annotate(Access, rule),
  HttpApiEndpoint.get("getGpgKey", "/user/gpg_keys/:id", {
    params: id,
    success: Schema.Union([GPGKey, GPGSubkey])
  })
    .annotate(OpenApi.Identifier, "userCurrentGetGPGKey")
    .annotate(Access, rule),
  HttpApiEndpoint.delete("deleteGpgKey", "/user/gpg_keys/:id", {
    params: id,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userCurrentDeleteGPGKey")
    .annotate(Access, rule),
  HttpApiEndpoint.get("listUserGpgKeys", "/users/:username/gpg_keys", {
    params: { username: Schema.String },
    query: PageQuery,
    success: Keys
  })
    .annotate(OpenApi.Identifier, "userListGPGKeys")
    .annotate(Access, rule),
  HttpApiEndpoint.get("getGpgKeyToken", "/user/gpg_key_token", {
    success: Schema.String.pipe(HttpApiSchema.asText())
  })
    .annotate(OpenApi.Identifier, "getVerificationToken")
    .annotate(Access, rule),
  HttpApiEndpoint.post("verifyGpgKey", "/user/gpg_key_verify", {
    payload: VerifyGPGKeyOption,
    success: GPGKey.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userVerifyGPGKey")
    .annotate(Access, rule)
) {}

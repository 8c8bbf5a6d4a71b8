// Blocked users (Forgejo's routers/api/v1/user/block.go, org/block.go and utils/block.go):
// `PUT /user/block/{username}`, `PUT /user/unblock/{username}`, `GET /user/list_blocked` with the
// `user` scope, and the same for an organization (its owners) with the `organization` scope.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Id, Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

/** Forgejo's `BlockedUser`: the blocked account's id and when the block was made. */
export const BlockedUser = Schema.Struct({ block_id: Id, created_at: Timestamp }).annotate({
  identifier: "BlockedUser"
})
export const BlockedUsers = Schema.Array(BlockedUser)

const asUser = { signedIn: true, scopes: ["user"] } as const
const asOrg = { signedIn: true, scopes: ["organization"] } as const
const username = { username: Schema.String }
const orgAndUser = { org: Schema.String, username: Schema.String }

export class BlocksApi extends HttpApiGroup.make("blocks").add(
  HttpApiEndpoint.get("userListBlockedUsers", "/user/list_blocked", {
    query: PageQuery,
    success: BlockedUsers
  }).annotate(Access, asUser),
  HttpApiEndpoint.put("userBlockUser", "/user/block/:username", {
    params: username,
    success: HttpApiSchema.NoContent
  }).annotate(Access, asUser),
  HttpApiEndpoint.put("userUnblockUser", "/user/unblock/:username", {
    params: username,
    success: HttpApiSchema.NoContent
  }).annotate(Access, asUser),
  HttpApiEndpoint.get("orgListBlockedUsers", "/orgs/:org/list_blocked", {
    params: { org: Schema.String },
    query: PageQuery,
    success: BlockedUsers
  }).annotate(Access, asOrg),
  HttpApiEndpoint.put("orgBlockUser", "/orgs/:org/block/:username", {
    params: orgAndUser,
    success: HttpApiSchema.NoContent
  }).annotate(Access, asOrg),
  HttpApiEndpoint.put("orgUnblockUser", "/orgs/:org/unblock/:username", {
    params: orgAndUser,
    success: HttpApiSchema.NoContent
  }).annotate(Access, asOrg)
) {}

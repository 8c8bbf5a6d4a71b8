// Hearth's routes for what local users do in the fediverse (Forgejo has none): the remote people
// they follow and who follow them, the remote repositories they starred, and the activities the
// people they follow sent them. Following and starring themselves go through Forgejo's routes
// with a remote name (PUT /user/following/{user@host}, PUT /user/starred/{owner@host}/{repo}).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../src/http/Access.ts"
import { Timestamp } from "../src/http/Json.ts"
import { PageQuery } from "../src/http/Pagination.ts"

/** A remote actor as a local user sees it. */
export const RemoteAccount = Schema.Struct({
  /** Its ActivityPub id. */
  id: Schema.String,
  type: Schema.String,
  /** `user@host` (`owner@host/name` for a repository) when known, else its id. */
  handle: Schema.String,
  username: Schema.String,
  name: Schema.String,
  /** Its page for people. */
  url: Schema.String,
  /** For follows: whether the remote server accepted the Follow yet. */
  accepted: Schema.Boolean,
  since: Timestamp
}).annotate({ identifier: "RemoteAccount" })
export type RemoteAccount = typeof RemoteAccount.Type

export const ReceivedActivity = Schema.Struct({
  actor: RemoteAccount,
  /** The activity as its sender wrote it. */
  activity: Schema.Unknown,
  received_at: Timestamp
}).annotate({ identifier: "ReceivedActivity" })
export type ReceivedActivity = typeof ReceivedActivity.Type

const signedIn = { signedIn: true, scopes: ["user"] } as const
const Accounts = Schema.Array(RemoteAccount)

export class FederationApi extends HttpApiGroup.make("federation").add(
  HttpApiEndpoint.get("listRemoteFollowing", "/user/federation/following", {
    query: PageQuery,
    success: Accounts
  })
    .annotate(OpenApi.Identifier, "userListRemoteFollowing")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listRemoteFollowers", "/user/federation/followers", {
    query: PageQuery,
    success: Accounts
  })
    .annotate(OpenApi.Identifier, "userListRemoteFollowers")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listRemoteStarred", "/user/federation/starred", {
    query: PageQuery,
    success: Accounts
  })
    .annotate(OpenApi.Identifier, "userListRemoteStarred")
    .annotate(Access, signedIn),
  HttpApiEndpoint.get("listReceivedActivities", "/user/federation/activities", {
    query: PageQuery,
    success: Schema.Array(ReceivedActivity)
  })
    .annotate(OpenApi.Identifier, "userListReceivedActivities")
    .annotate(Access, signedIn)
) {}

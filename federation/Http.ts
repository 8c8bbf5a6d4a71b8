// Hearth's federation routes for local users (Api.ts): paged lists with X-Total-Count.
import { Effect, Schema } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../src/Api.ts"
import { signedInCaller } from "../src/http/Caller.ts"
import { formatTime, respond } from "../src/http/Json.ts"
import { resolvePage, setListHeaders } from "../src/http/Pagination.ts"
import { ReceivedActivity, RemoteAccount } from "./Api.ts"
import type { Follow, RemoteActor } from "./Repo.ts"
import { FederatedSocial, type Listed } from "./Social.ts"

type Query = { readonly page?: string | undefined; readonly limit?: string | undefined }

const toAccount = (actor: RemoteActor, since: Date, accepted = true): RemoteAccount => ({
  id: actor.uri,
  type: actor.type,
  handle: actor.handle !== "" ? actor.handle : actor.uri,
  username: actor.preferredUsername,
  name: actor.name,
  url: actor.url,
  accepted,
  since: formatTime(since)
})

export const FederationHttp = HttpApiBuilder.group(HearthApi, "federation", (handlers) =>
  Effect.gen(function* () {
    const social = yield* FederatedSocial

    const list = <A, B>(
      read: (
        me: Parameters<typeof social.following>[0],
        window: { limit: number; offset: number }
      ) => Effect.Effect<Listed<A>>,
      present: (row: A) => B,
      schema: Schema.Codec<ReadonlyArray<B>, ReadonlyArray<B>>,
      query: Query
    ) =>
      Effect.gen(function* () {
        const me = yield* signedInCaller
        const page = yield* resolvePage(query)
        const { rows, total } = yield* read(me.user, page)
        yield* setListHeaders(page, total)
        return respond(schema, rows.map(present))
      })
    const follow = (row: Follow) => toAccount(row.actor, row.createdAt, row.accepted)
    const Accounts = Schema.Array(RemoteAccount)

    return handlers
      .handle("listRemoteFollowing", ({ query }) => list(social.following, follow, Accounts, query))
      .handle("listRemoteFollowers", ({ query }) => list(social.followers, follow, Accounts, query))
      .handle("listRemoteStarred", ({ query }) => list(social.starred, follow, Accounts, query))
      .handle("listReceivedActivities", ({ query }) =>
        list(
          social.received,
          (row) => ({
            actor: toAccount(row.actor, row.createdAt),
            activity: row.activity,
            received_at: formatTime(row.createdAt)
          }),
          Schema.Array(ReceivedActivity),
          query
        )
      )
  })
)

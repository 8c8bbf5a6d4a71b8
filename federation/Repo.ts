// SQL of the federation module (migration 0010): actor keys, remote actors, remote followers and
// followings, federated stars (kept in step with repositories.num_stars), stars given to remote
// repositories, published and received activities, handled activity ids.

import type { webcrypto } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { sqlBoundary } from "../src/db/Boundary.ts"

export interface RemoteActor {
  readonly id: number
  readonly uri: string
  readonly host: string
  readonly type: string
  readonly preferredUsername: string
  readonly name: string
  readonly inbox: string
  readonly sharedInbox: string
  readonly url: string
  /** How local users named it (`user@host`, `owner@host/name`), lower case; "" if by URL only. */
  readonly handle: string
}

export type NewRemoteActor = Omit<RemoteActor, "id" | "handle">

export interface KeyRow {
  readonly algorithm: "rsa" | "ed25519"
  readonly privateJwk: string
  readonly publicJwk: webcrypto.JsonWebKey
}

export interface Follow {
  readonly actor: RemoteActor
  readonly activityUri: string
  readonly accepted: boolean
  readonly createdAt: Date
}

export interface Received {
  readonly actor: RemoteActor
  readonly activity: unknown
  readonly createdAt: Date
}

export interface Window {
  readonly limit: number
  readonly offset: number
}

type Row = Record<string, any>

const toActor = (r: Row): RemoteActor => ({
  id: Number(r.id),
  uri: r.uri,
  host: r.host,
  type: r.type,
  preferredUsername: r.preferred_username,
  name: r.name,
  inbox: r.inbox,
  sharedInbox: r.shared_inbox,
  url: r.url,
  handle: r.handle
})

/** The actor columns of a join, aliased as `a`. */
const ACTOR_COLUMNS =
  "a.id, a.uri, a.host, a.type, a.preferred_username, a.name, a.inbox, a.shared_inbox, a.url, a.handle"

export class FederationRepo extends Context.Service<
  FederationRepo,
  {
    readonly keys: (owner: string) => Effect.Effect<ReadonlyArray<KeyRow>>
    /** Stores a key pair unless the owner has one of that algorithm already (the first one wins). */
    readonly insertKey: (
      owner: string,
      algorithm: KeyRow["algorithm"],
      privateJwk: string,
      publicJwk: webcrypto.JsonWebKey
    ) => Effect.Effect<void>
    readonly upsertActor: (actor: NewRemoteActor) => Effect.Effect<RemoteActor>
    readonly actorByUri: (uri: string) => Effect.Effect<Option.Option<RemoteActor>>
    readonly actorByHandle: (handle: string) => Effect.Effect<Option.Option<RemoteActor>>
    readonly setHandle: (actorId: number, handle: string) => Effect.Effect<void>
    /** Removes a remote actor and everything of it, lowering the star counts it held. */
    readonly deleteActor: (actorId: number) => Effect.Effect<void>

    readonly addFollower: (userId: number, actorId: number, activityUri: string) => Effect.Effect<void>
    /** Removes the follower by the Follow's id, or any Follow of that actor when `userId` is given. */
    readonly removeFollower: (
      actorId: number,
      match: { readonly userId: number } | { readonly activityUri: string }
    ) => Effect.Effect<boolean>
    readonly followers: (userId: number, window: Window) => Effect.Effect<ReadonlyArray<Follow>>
    readonly countFollowers: (userId: number) => Effect.Effect<number>
    readonly followerActors: (userId: number) => Effect.Effect<ReadonlyArray<RemoteActor>>

    /** Records a Follow sent; false when the user follows the actor already. */
    readonly addFollowing: (userId: number, actorId: number, activityUri: string) => Effect.Effect<boolean>
    /** Ends a follow; the Follow's id, to undo it, when there was one. */
    readonly removeFollowing: (userId: number, actorId: number) => Effect.Effect<Option.Option<string>>
    readonly following: (userId: number, window: Window) => Effect.Effect<ReadonlyArray<Follow>>
    readonly countFollowing: (userId: number) => Effect.Effect<number>
    readonly findFollowing: (userId: number, actorId: number) => Effect.Effect<Option.Option<Follow>>
    readonly acceptFollowing: (actorId: number, activityUri: string) => Effect.Effect<boolean>
    /** The remote actor refused a Follow: it is no longer followed. */
    readonly rejectFollowing: (actorId: number, activityUri: string) => Effect.Effect<boolean>
    /** The local users who follow this remote actor (they receive what it sends). */
    readonly localFollowersOf: (actorId: number) => Effect.Effect<ReadonlyArray<number>>

    /** A remote actor's star on a local repository; raises num_stars only when it is new. */
    readonly addStar: (repoId: number, actorId: number, activityUri: string) => Effect.Effect<boolean>
    /** Removes a remote star by the Like's id, or the actor's star on `repoId`; lowers num_stars. */
    readonly removeStar: (
      actorId: number,
      match: { readonly repoId: number } | { readonly activityUri: string }
    ) => Effect.Effect<boolean>

    /** A star a local user gave a remote repository; false when given already. */
    readonly addRemoteStar: (userId: number, actorId: number, activityUri: string) => Effect.Effect<boolean>
    readonly removeRemoteStar: (userId: number, actorId: number) => Effect.Effect<Option.Option<string>>
    readonly remoteStars: (userId: number, window: Window) => Effect.Effect<ReadonlyArray<Follow>>
    readonly countRemoteStars: (userId: number) => Effect.Effect<number>
    readonly hasRemoteStar: (userId: number, actorId: number) => Effect.Effect<boolean>

    readonly addOutbox: (userId: number, activity: unknown) => Effect.Effect<void>
    readonly outbox: (userId: number, window: Window) => Effect.Effect<ReadonlyArray<unknown>>
    readonly countOutbox: (userId: number) => Effect.Effect<number>
    /** A published activity of the user, by its id. */
    readonly published: (userId: number, activityUri: string) => Effect.Effect<Option.Option<unknown>>

    /** Keeps an activity for users, each of whom gets it once (by its id). */
    readonly addReceived: (userIds: ReadonlyArray<number>, actorId: number, activity: unknown) => Effect.Effect<void>
    readonly received: (userId: number, window: Window) => Effect.Effect<ReadonlyArray<Received>>
    readonly countReceived: (userId: number) => Effect.Effect<number>

    /**
     * Marks an activity id as handled; false when it was already (ids older than `keepDays` are
     * forgotten on the way, at most hourly).
     */
    readonly markHandled: (activityUri: string, keepDays: number) => Effect.Effect<boolean>
    /** Unmarks an activity id that could not be handled after all. */
    readonly unmarkHandled: (activityUri: string) => Effect.Effect<void>

    /** Account counts for NodeInfo: total, active in the last 30 and 180 days; public repositories. */
    readonly usage: () => Effect.Effect<{
      readonly users: number
      readonly month: number
      readonly halfYear: number
      readonly repositories: number
    }>
  }
>()("hearth/federation/FederationRepo") {
  static readonly layer = Layer.effect(
    FederationRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      let lastPurge = 0
      const count = (query: Effect.Effect<ReadonlyArray<Row>, SqlError>) =>
        Effect.map(query, (rows) => Number(rows[0]!.n))
      const bumpStars = (repoId: number, delta: number) =>
        sql`UPDATE repositories SET num_stars = GREATEST(num_stars + ${delta}, 0) WHERE id = ${repoId}`
      const toFollow = (r: Row): Follow => ({
        actor: toActor(r),
        activityUri: r.activity_uri,
        accepted: r.accepted ?? true,
        createdAt: r.created_at
      })

      return FederationRepo.of(
        sqlBoundary({
          keys: (owner) =>
            Effect.map(
              sql`SELECT algorithm, private_jwk, public_jwk FROM federation_keys WHERE owner = ${owner} ORDER BY algorithm DESC`,
              (rows) =>
                rows.map(
                  (r): KeyRow => ({
                    algorithm: r.algorithm as KeyRow["algorithm"],
                    privateJwk: String(r.private_jwk),
                    publicJwk: r.public_jwk as webcrypto.JsonWebKey
                  })
                )
            ),
          insertKey: (owner, algorithm, privateJwk, publicJwk) =>
            Effect.asVoid(sql`INSERT INTO federation_keys (owner, algorithm, private_jwk, public_jwk)
            VALUES (${owner}, ${algorithm}, ${privateJwk}, ${JSON.stringify(publicJwk)}::jsonb) ON CONFLICT DO NOTHING`),
          upsertActor: (a) =>
            Effect.map(
              sql`INSERT INTO federation_actors (uri, host, type, preferred_username, name, inbox, shared_inbox, url)
              VALUES (${a.uri}, ${a.host}, ${a.type}, ${a.preferredUsername}, ${a.name}, ${a.inbox}, ${a.sharedInbox}, ${a.url})
              ON CONFLICT (uri) DO UPDATE SET type = EXCLUDED.type, preferred_username = EXCLUDED.preferred_username,
                name = EXCLUDED.name, inbox = EXCLUDED.inbox, shared_inbox = EXCLUDED.shared_inbox, url = EXCLUDED.url,
                updated_at = now()
              RETURNING *`,
              (rows) => toActor(rows[0]!)
            ),
          actorByUri: (uri) =>
            Effect.map(sql`SELECT * FROM federation_actors WHERE uri = ${uri}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toActor)
            ),
          actorByHandle: (handle) =>
            Effect.map(
              sql`SELECT * FROM federation_actors WHERE handle = ${handle} ORDER BY updated_at DESC LIMIT 1`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toActor)
            ),
          setHandle: (actorId, handle) =>
            Effect.asVoid(
              sql`UPDATE federation_actors SET handle = ${handle} WHERE id = ${actorId} AND handle <> ${handle}`
            ),
          deleteActor: (actorId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const starred = yield* sql`DELETE FROM federation_stars WHERE actor_id = ${actorId} RETURNING repo_id`
                for (const row of starred) yield* bumpStars(Number(row.repo_id), -1)
                yield* sql`DELETE FROM federation_actors WHERE id = ${actorId}`
              })
            ),

          addFollower: (userId, actorId, activityUri) =>
            Effect.asVoid(sql`INSERT INTO federation_followers (user_id, actor_id, activity_uri)
            VALUES (${userId}, ${actorId}, ${activityUri})
            ON CONFLICT (user_id, actor_id) DO UPDATE SET activity_uri = EXCLUDED.activity_uri`),
          removeFollower: (actorId, match) =>
            Effect.map(
              "userId" in match
                ? sql`DELETE FROM federation_followers WHERE actor_id = ${actorId} AND user_id = ${match.userId} RETURNING user_id`
                : sql`DELETE FROM federation_followers WHERE actor_id = ${actorId} AND activity_uri = ${match.activityUri} RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          followers: (userId, window) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)}, f.activity_uri, f.created_at FROM federation_followers f
              JOIN federation_actors a ON a.id = f.actor_id WHERE f.user_id = ${userId}
              ORDER BY f.created_at DESC, a.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
              (rows) => rows.map(toFollow)
            ),
          countFollowers: (userId) =>
            count(sql`SELECT count(*) AS n FROM federation_followers WHERE user_id = ${userId}`),
          followerActors: (userId) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)} FROM federation_followers f JOIN federation_actors a ON a.id = f.actor_id
              WHERE f.user_id = ${userId} ORDER BY a.id`,
              (rows) => rows.map(toActor)
            ),

          addFollowing: (userId, actorId, activityUri) =>
            Effect.map(
              sql`INSERT INTO federation_following (user_id, actor_id, activity_uri) VALUES (${userId}, ${actorId}, ${activityUri})
              ON CONFLICT (user_id, actor_id) DO NOTHING RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          removeFollowing: (userId, actorId) =>
            Effect.map(
              sql`DELETE FROM federation_following WHERE user_id = ${userId} AND actor_id = ${actorId} RETURNING activity_uri`,
              (rows) => Option.fromNullishOr(rows[0]?.activity_uri as string | undefined)
            ),
          following: (userId, window) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)}, f.activity_uri, f.accepted, f.created_at FROM federation_following f
              JOIN federation_actors a ON a.id = f.actor_id WHERE f.user_id = ${userId}
              ORDER BY f.created_at DESC, a.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
              (rows) => rows.map(toFollow)
            ),
          countFollowing: (userId) =>
            count(sql`SELECT count(*) AS n FROM federation_following WHERE user_id = ${userId}`),
          findFollowing: (userId, actorId) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)}, f.activity_uri, f.accepted, f.created_at FROM federation_following f
              JOIN federation_actors a ON a.id = f.actor_id WHERE f.user_id = ${userId} AND f.actor_id = ${actorId}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toFollow)
            ),
          acceptFollowing: (actorId, activityUri) =>
            Effect.map(
              sql`UPDATE federation_following SET accepted = true WHERE actor_id = ${actorId} AND activity_uri = ${activityUri}
              RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          rejectFollowing: (actorId, activityUri) =>
            Effect.map(
              sql`DELETE FROM federation_following WHERE actor_id = ${actorId} AND activity_uri = ${activityUri} RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          localFollowersOf: (actorId) =>
            Effect.map(sql`SELECT user_id FROM federation_following WHERE actor_id = ${actorId} AND accepted`, (rows) =>
              rows.map((r) => Number(r.user_id))
            ),

          addStar: (repoId, actorId, activityUri) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`INSERT INTO federation_stars (repo_id, actor_id, activity_uri)
              VALUES (${repoId}, ${actorId}, ${activityUri}) ON CONFLICT DO NOTHING RETURNING repo_id`
                if (rows.length > 0) yield* bumpStars(repoId, 1)
                return rows.length > 0
              })
            ),
          removeStar: (actorId, match) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const rows =
                  "repoId" in match
                    ? yield* sql`DELETE FROM federation_stars WHERE actor_id = ${actorId} AND repo_id = ${match.repoId} RETURNING repo_id`
                    : yield* sql`DELETE FROM federation_stars WHERE actor_id = ${actorId} AND activity_uri = ${match.activityUri}
                  RETURNING repo_id`
                for (const row of rows) yield* bumpStars(Number(row.repo_id), -1)
                return rows.length > 0
              })
            ),

          addRemoteStar: (userId, actorId, activityUri) =>
            Effect.map(
              sql`INSERT INTO federation_remote_stars (user_id, actor_id, activity_uri) VALUES (${userId}, ${actorId}, ${activityUri})
              ON CONFLICT DO NOTHING RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          removeRemoteStar: (userId, actorId) =>
            Effect.map(
              sql`DELETE FROM federation_remote_stars WHERE user_id = ${userId} AND actor_id = ${actorId} RETURNING activity_uri`,
              (rows) => Option.fromNullishOr(rows[0]?.activity_uri as string | undefined)
            ),
          remoteStars: (userId, window) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)}, s.activity_uri, s.created_at FROM federation_remote_stars s
              JOIN federation_actors a ON a.id = s.actor_id WHERE s.user_id = ${userId}
              ORDER BY s.created_at DESC, a.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
              (rows) => rows.map(toFollow)
            ),
          countRemoteStars: (userId) =>
            count(sql`SELECT count(*) AS n FROM federation_remote_stars WHERE user_id = ${userId}`),
          hasRemoteStar: (userId, actorId) =>
            Effect.map(
              sql`SELECT 1 FROM federation_remote_stars WHERE user_id = ${userId} AND actor_id = ${actorId}`,
              (r) => r.length > 0
            ),

          addOutbox: (userId, activity) =>
            Effect.asVoid(sql`INSERT INTO federation_outbox (user_id, activity_uri, activity)
            VALUES (${userId}, ${String((activity as { id?: unknown }).id)}, ${JSON.stringify(activity)}::jsonb)`),
          outbox: (userId, window) =>
            Effect.map(
              sql`SELECT activity FROM federation_outbox WHERE user_id = ${userId} ORDER BY id DESC
              LIMIT ${window.limit} OFFSET ${window.offset}`,
              (rows) => rows.map((r) => r.activity as unknown)
            ),
          countOutbox: (userId) => count(sql`SELECT count(*) AS n FROM federation_outbox WHERE user_id = ${userId}`),
          published: (userId, activityUri) =>
            Effect.map(
              sql`SELECT activity FROM federation_outbox WHERE user_id = ${userId} AND activity_uri = ${activityUri}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.activity as unknown)
            ),

          addReceived: (userIds, actorId, activity) =>
            userIds.length === 0
              ? Effect.void
              : Effect.asVoid(sql`INSERT INTO federation_received (user_id, actor_id, activity_uri, activity)
            SELECT id, ${actorId}, ${String((activity as { id?: unknown }).id)}, ${JSON.stringify(activity)}::jsonb
            FROM users WHERE id IN ${sql.in(userIds)}
            ON CONFLICT (user_id, activity_uri) DO NOTHING`),
          received: (userId, window) =>
            Effect.map(
              sql`SELECT ${sql.literal(ACTOR_COLUMNS)}, r.activity, r.created_at FROM federation_received r
              JOIN federation_actors a ON a.id = r.actor_id WHERE r.user_id = ${userId}
              ORDER BY r.id DESC LIMIT ${window.limit} OFFSET ${window.offset}`,
              (rows) =>
                rows.map(
                  (r): Received => ({
                    actor: toActor(r),
                    activity: r.activity as unknown,
                    createdAt: r.created_at as Date
                  })
                )
            ),
          countReceived: (userId) =>
            count(sql`SELECT count(*) AS n FROM federation_received WHERE user_id = ${userId}`),

          markHandled: (activityUri, keepDays) =>
            Effect.gen(function* () {
              // Ids past `keepDays` are forgotten now and then (hourly), not on every activity.
              if (Date.now() - lastPurge > 3_600_000) {
                lastPurge = Date.now()
                yield* sql`DELETE FROM federation_handled WHERE handled_at < now() - make_interval(days => ${keepDays})`
              }
              const rows = yield* sql`INSERT INTO federation_handled (activity_uri) VALUES (${activityUri})
              ON CONFLICT DO NOTHING RETURNING activity_uri`
              return rows.length > 0
            }),
          unmarkHandled: (activityUri) =>
            Effect.asVoid(sql`DELETE FROM federation_handled WHERE activity_uri = ${activityUri}`),

          usage: () =>
            Effect.map(
              sql`SELECT
                (SELECT count(*) FROM users WHERE type = 0 AND is_active) AS users,
                (SELECT count(*) FROM users WHERE type = 0 AND is_active AND last_login > now() - interval '30 days') AS month,
                (SELECT count(*) FROM users WHERE type = 0 AND is_active AND last_login > now() - interval '180 days') AS half,
                (SELECT count(*) FROM repositories WHERE NOT is_private) AS repositories`,
              (rows) => ({
                users: Number(rows[0]!.users),
                month: Number(rows[0]!.month),
                halfYear: Number(rows[0]!.half),
                repositories: Number(rows[0]!.repositories)
              })
            )
        })
      )
    })
  )
}

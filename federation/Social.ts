// What local users do with remote actors: follow a remote person (`user@host`) and star a remote
// repository (`owner@host/name`) through the same routes as local ones, each sending a signed
// Follow / Like (and Undo) through the delivery queue; and the lists of remote follows, followers,
// stars and of the activities received from followed actors.
import { Context, Effect, Layer, Option } from "effect"
import * as Errors from "../src/http/Errors.ts"
import type { UserRow } from "../src/users/Repo.ts"
import * as Activities from "./Activities.ts"
import { FETCH_TIMEOUT_MS, RemoteError } from "./Remote.ts"
import type { Follow, Received, Window } from "./Repo.ts"
import { Federation, federatedUser, toApiError } from "./Service.ts"

/** True for a name that is a remote handle: local user names never contain `@`. */
export const isRemoteHandle = (name: string) => name.includes("@")

type Refusal = Errors.NotFound | Errors.Forbidden | Errors.ValidationFailed | Errors.BadGateway

export interface Listed<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

export class FederatedSocial extends Context.Service<
  FederatedSocial,
  {
    readonly follow: (me: UserRow, handle: string) => Effect.Effect<void, Refusal>
    readonly unfollow: (me: UserRow, handle: string) => Effect.Effect<void, Refusal>
    readonly isFollowing: (me: UserRow, handle: string) => Effect.Effect<boolean, Refusal>
    readonly star: (me: UserRow, ownerHandle: string, name: string) => Effect.Effect<void, Refusal>
    readonly unstar: (me: UserRow, ownerHandle: string, name: string) => Effect.Effect<void, Refusal>
    readonly isStarred: (me: UserRow, ownerHandle: string, name: string) => Effect.Effect<boolean, Refusal>
    readonly following: (me: UserRow, window: Window) => Effect.Effect<Listed<Follow>>
    readonly followers: (me: UserRow, window: Window) => Effect.Effect<Listed<Follow>>
    readonly starred: (me: UserRow, window: Window) => Effect.Effect<Listed<Follow>>
    readonly received: (me: UserRow, window: Window) => Effect.Effect<Listed<Received>>
  }
>()("hearth/federation/FederatedSocial") {
  static readonly layer = Layer.effect(
    FederatedSocial,
    Effect.gen(function* () {
      const federation = yield* Federation
      const { repo, paths } = federation

      /**
       * Runs a remote operation for `me`: federation must be on, and `me` a federated person
       * (an account others cannot see cannot act in the fediverse either).
       */
      const remote = <A>(me: UserRow, operation: Effect.Effect<A, RemoteError>): Effect.Effect<A, Refusal> => {
        if (!federation.enabled) {
          return Effect.fail(Errors.validationFailed("federation is not enabled on this server ([federation] ENABLED)"))
        }
        if (!federatedUser(me)) {
          return Effect.fail(
            Errors.forbidden("only public accounts can follow or star remote accounts and repositories")
          )
        }
        // One deadline for the whole of it (a repository's look-up is four requests to its server).
        return operation.pipe(
          Effect.timeoutOrElse({
            duration: FETCH_TIMEOUT_MS,
            orElse: () =>
              Effect.fail(
                new RemoteError({
                  message: `the remote server did not answer within ${FETCH_TIMEOUT_MS / 1000} s`,
                  reason: "remote-failed"
                })
              )
          }),
          Effect.mapError(toApiError)
        )
      }

      const follow = (me: UserRow, handle: string) =>
        remote(
          me,
          Effect.gen(function* () {
            const actor = yield* federation.lookup(handle)
            // A follow that could never be sent is refused, not recorded.
            yield* federation.deliverable(actor)
            const activity = Activities.follow(paths.actor(me), actor.uri)
            if (!(yield* repo.addFollowing(me.id, actor.id, activity.id as string))) return
            yield* federation.send(me, [actor], activity)
          })
        )

      const unfollow = (me: UserRow, handle: string) =>
        remote(
          me,
          Effect.gen(function* () {
            const actor = yield* federation.lookup(handle, { known: true })
            const followed = yield* repo.removeFollowing(me.id, actor.id)
            if (Option.isNone(followed)) return
            yield* federation.send(
              me,
              [actor],
              Activities.undo(paths.actor(me), { id: followed.value, type: "Follow", object: actor.uri })
            )
          })
        )

      const star = (me: UserRow, ownerHandle: string, name: string) =>
        remote(
          me,
          Effect.gen(function* () {
            const target = yield* federation.lookupRepository(ownerHandle, name)
            yield* federation.deliverable(target)
            const activity = Activities.like(paths.actor(me), target.uri)
            if (!(yield* repo.addRemoteStar(me.id, target.id, activity.id as string))) return
            yield* federation.send(me, [target], activity)
          })
        )

      const unstar = (me: UserRow, ownerHandle: string, name: string) =>
        remote(
          me,
          Effect.gen(function* () {
            const target = yield* federation.lookupRepository(ownerHandle, name, { known: true })
            const starred = yield* repo.removeRemoteStar(me.id, target.id)
            if (Option.isNone(starred)) return
            yield* federation.send(
              me,
              [target],
              Activities.undo(paths.actor(me), { id: starred.value, type: "Like", object: target.uri })
            )
          })
        )

      const listed = <A>(rows: Effect.Effect<ReadonlyArray<A>>, total: Effect.Effect<number>) =>
        Effect.all({ rows, total })

      return FederatedSocial.of({
        follow,
        unfollow,
        isFollowing: (me, handle) =>
          remote(
            me,
            Effect.flatMap(federation.lookup(handle, { known: true }), (actor) =>
              Effect.map(repo.findFollowing(me.id, actor.id), Option.isSome)
            )
          ),
        star,
        unstar,
        isStarred: (me, ownerHandle, name) =>
          remote(
            me,
            Effect.flatMap(federation.lookupRepository(ownerHandle, name, { known: true }), (target) =>
              repo.hasRemoteStar(me.id, target.id)
            )
          ),
        following: (me, window) => listed(repo.following(me.id, window), repo.countFollowing(me.id)),
        followers: (me, window) => listed(repo.followers(me.id, window), repo.countFollowers(me.id)),
        starred: (me, window) => listed(repo.remoteStars(me.id, window), repo.countRemoteStars(me.id)),
        received: (me, window) => listed(repo.received(me.id, window), repo.countReceived(me.id))
      })
    })
  )
}

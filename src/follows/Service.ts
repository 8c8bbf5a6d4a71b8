// Follow rules (Forgejo's models/user/follow.go): following someone already followed changes nothing (204, as
// Forgejo); following yourself is refused (422 — the issue asks for it, where Forgejo silently does
// nothing); following someone who blocked you, or whom you blocked, is 403 (`ErrBlockedByUser`);
// accounts the caller may not see are 404, in paths and in lists.
import { Context, Effect, Layer } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Window } from "../social/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersService } from "../users/Service.ts"
import { FollowsRepo, type ListViewer } from "./Repo.ts"

export class FollowsService extends Context.Service<
  FollowsService,
  {
    /** The account named in a path, or 404 when it is unknown or hidden from the viewer. */
    readonly visibleUser: (
      viewer: Principal,
      name: string
    ) => Effect.Effect<UserRow, Errors.NotFound | Errors.Forbidden>
    readonly follow: (me: Principal, target: UserRow) => Effect.Effect<void, Errors.ValidationFailed | Errors.Forbidden>
    readonly unfollow: (me: Principal, target: UserRow) => Effect.Effect<void>
    readonly isFollowing: (user: UserRow, target: UserRow) => Effect.Effect<boolean>
    /** Followers the viewer may see (anonymous viewers: public accounts only, as the web profile shows them). */
    readonly followers: (
      viewer: Principal | undefined,
      user: UserRow,
      window: Window | undefined
    ) => Effect.Effect<{ rows: ReadonlyArray<UserRow>; total: number }>
    readonly following: (
      viewer: Principal | undefined,
      user: UserRow,
      window: Window | undefined
    ) => Effect.Effect<{ rows: ReadonlyArray<UserRow>; total: number }>
  }
>()("hearth/follows/FollowsService") {
  static readonly layer = Layer.effect(
    FollowsService,
    Effect.gen(function* () {
      const repo = yield* FollowsRepo
      const accounts = yield* UsersService
      const blocks = yield* BlocksService

      const listViewer = (viewer: Principal | undefined): ListViewer =>
        viewer === undefined
          ? { id: 0, isAdmin: false, restricted: false, publicOnly: true }
          : {
              id: viewer.user.id,
              isAdmin: viewer.user.isAdmin,
              restricted: viewer.user.restricted,
              publicOnly: viewer.scopes?.publicOnly === true
            }

      return FollowsService.of({
        visibleUser: (viewer, name) => accounts.visible(viewer, name),
        // The counters change through UsersRepo, whose write count keeps token callers' cached
        // account rows current (Authenticator).
        follow: (me, target) =>
          me.user.id === target.id
            ? Effect.fail(Errors.validationFailed("you cannot follow yourself"))
            : Effect.andThen(
                blocks.ensureNeitherBlocked(me.user, target),
                Effect.asVoid(repo.follow(me.user.id, target.id))
              ),
        unfollow: (me, target) => Effect.asVoid(repo.unfollow(me.user.id, target.id)),
        isFollowing: (user, target) => repo.isFollowing(user.id, target.id),
        followers: (viewer, user, window) => repo.followers(user.id, listViewer(viewer), window),
        following: (viewer, user, window) => repo.following(user.id, listViewer(viewer), window)
      })
    })
  )
}

// Stars and watches (Forgejo's routers/api/v1/user/star.go, watch.go): who may star or watch what, and the lists, each showing only
// the repositories the caller may see. Repository visibility is RepoPolicy's, reused as is.
import { Context, Effect, Layer, Option } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import type { Principal } from "../http/Caller.ts"
import type * as Errors from "../http/Errors.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { type RepoAccess, RepoPolicy } from "../repos/Policy.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { SocialRepo, type Window } from "./Repo.ts"

export interface Target {
  readonly owner: UserRow
  readonly repo: RepoRow
  readonly access: RepoAccess
}

export interface Listed<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

export class SocialService extends Context.Service<
  SocialService,
  {
    /**
     * The repository `owner/name` as the viewer may see it, or 404 (403 for public-only tokens, 307
     * at an old name): the repository assignment's rule, for /user/starred/{owner}/{repo}, whose
     * owner may also be a remote handle the assignment does not resolve.
     */
    readonly find: (
      viewer: Principal | undefined,
      ownerName: string,
      name: string
    ) => Effect.Effect<
      Target,
      Errors.NotFound | Errors.Forbidden | Errors.Conflict | Errors.Locked | Errors.RepositoryMoved
    >
    /** 403 when the repository's owner has blocked the user (Forgejo's `StarRepo`). */
    readonly star: (user: UserRow, repo: RepoRow) => Effect.Effect<void, Errors.Forbidden>
    readonly unstar: (user: UserRow, repo: RepoRow) => Effect.Effect<void>
    readonly isStarred: (user: UserRow, repo: RepoRow) => Effect.Effect<boolean>
    /** 403 when the repository's owner has blocked the user (Forgejo's `WatchRepo`). */
    readonly watch: (user: UserRow, repo: RepoRow) => Effect.Effect<void, Errors.Forbidden>
    readonly unwatch: (user: UserRow, repo: RepoRow) => Effect.Effect<void>
    readonly isWatching: (user: UserRow, repo: RepoRow) => Effect.Effect<boolean>
    /**
     * The repositories `user` starred that `viewer` may see; `total` is the user's star counter,
     * unfiltered, as Forgejo answers it (`GetStarredRepos`).
     */
    readonly starred: (viewer: Principal, user: UserRow, window: Window | undefined) => Effect.Effect<Listed<Target>>
    /** The repositories `user` watches that `viewer` may see; `total` counts what may be seen. */
    readonly watched: (viewer: Principal, user: UserRow, window: Window | undefined) => Effect.Effect<Listed<Target>>
    readonly stargazers: (repo: RepoRow, window: Window | undefined) => Effect.Effect<ReadonlyArray<UserRow>>
    readonly watchers: (repo: RepoRow, window: Window | undefined) => Effect.Effect<ReadonlyArray<UserRow>>
  }
>()("hearth/social/SocialService") {
  static readonly layer = Layer.effect(
    SocialService,
    Effect.gen(function* () {
      const social = yield* SocialRepo
      const repos = yield* ReposService
      const policy = yield* RepoPolicy
      const users = yield* UsersRepo
      const blocks = yield* BlocksService
      const notBlocked = (user: UserRow, repo: RepoRow) => blocks.ensureNotBlocked([{ id: repo.ownerId }], user)

      const find = (viewer: Principal | undefined, ownerName: string, name: string) =>
        repos.assign(viewer, ownerName, name, { role: "read" })

      /**
       * Keeps what the viewer may read (public-only tokens: public repositories only). The lists
       * are one user's stars or watches, so each row is checked with the same rule as a single
       * GET rather than with a second copy of it in SQL.
       */
      const visible = (viewer: Principal, rows: ReadonlyArray<{ repo: RepoRow; owner: UserRow }>) =>
        Effect.map(
          Effect.forEach(rows, ({ owner, repo }) =>
            Effect.map(policy.access(viewer, repo, owner), (access): Target | undefined =>
              atLeast(access.mode, "read") && !(viewer.scopes?.publicOnly === true && repo.isPrivate)
                ? { owner, repo, access }
                : undefined
            )
          ),
          (checked) => checked.filter((row): row is Target => row !== undefined)
        )

      const slice = <A>(rows: ReadonlyArray<A>, window: Window | undefined) =>
        window === undefined ? rows : rows.slice(window.offset, window.offset + window.limit)

      return SocialService.of({
        find,
        // The star row, the repository's count and the user's count change together or not at all.
        star: (user, repo) =>
          Effect.andThen(
            notBlocked(user, repo),
            social.transaction(
              Effect.gen(function* () {
                if (yield* social.star(user.id, repo.id)) yield* users.adjustNumStars(user.id, 1)
              })
            )
          ),
        unstar: (user, repo) =>
          social.transaction(
            Effect.gen(function* () {
              if (yield* social.unstar(user.id, repo.id)) yield* users.adjustNumStars(user.id, -1)
            })
          ),
        isStarred: (user, repo) => social.isStarred(user.id, repo.id),
        watch: (user, repo) => Effect.andThen(notBlocked(user, repo), Effect.asVoid(social.watch(user.id, repo.id))),
        unwatch: (user, repo) => Effect.asVoid(social.unwatch(user.id, repo.id)),
        isWatching: (user, repo) => social.isWatching(user.id, repo.id),
        starred: (viewer, user, window) =>
          Effect.gen(function* () {
            const rows = yield* visible(viewer, yield* social.starredBy(user.id))
            // The counter as stored now, not as the (possibly cached) row that named the user.
            const fresh = yield* users.findById(user.id)
            const total = Option.isSome(fresh) ? fresh.value.numStars : user.numStars
            return { rows: slice(rows, window), total }
          }),
        watched: (viewer, user, window) =>
          Effect.gen(function* () {
            const rows = yield* visible(viewer, yield* social.watchedBy(user.id))
            return { rows: slice(rows, window), total: rows.length }
          }),
        stargazers: (repo, window) => social.stargazers(repo.id, window),
        watchers: (repo, window) => social.watchers(repo.id, window)
      })
    })
  )
}

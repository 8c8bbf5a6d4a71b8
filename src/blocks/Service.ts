// Blocking users (Forgejo's models/user/block.go, services/user/block.go `BlockUser`). A user, or
// an organization through its owners, blocks another user. Blocking stops each following the
// other, ends the blocked user's watches of and collaborations on the blocker's repositories,
// and drops the transfers the blocked user offered the blocker (their repositories are ready
// again). Blocking yourself or someone already blocked changes nothing, as Forgejo.
//
// What a block refuses afterwards is checked where each action happens, through
// `ensureNotBlocked` / `ensureNeitherBlocked` (403, Forgejo's `ErrBlockedByUser`): following
// (either way), starring and watching the blocker's repositories, being added as the blocker's
// collaborator (either way), and transferring a repository to the blocker. Later features
// (issues, comments, reactions, mentions) call the same two functions.
import { Context, Effect, Layer } from "effect"
import { FollowsRepo } from "../follows/Repo.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { SocialRepo } from "../social/Repo.ts"
import { TransfersRepo } from "../transfers/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { type BlockRow, BlocksRepo } from "./Repo.ts"

/** Forgejo's `user_model.ErrBlockedByUser`, the message of every refusal a block causes. */
export const BLOCKED_BY_USER = "user is blocked by the poster or repository owner"

type Account = Pick<UserRow, "id">

export class BlocksService extends Context.Service<
  BlocksService,
  {
    /** Whether `blocker` (a user or an organization) has blocked `user` (Forgejo's `IsBlocked`). */
    readonly isBlocked: (blocker: Account, user: Account) => Effect.Effect<boolean>
    /**
     * 403 `ErrBlockedByUser` when any of `blockers` has blocked `user` (Forgejo's
     * `IsBlockedMultiple`): e.g. `[repo owner]` for a star, `[issue poster, repo owner]` for a reaction.
     */
    readonly ensureNotBlocked: (
      blockers: ReadonlyArray<Account>,
      user: Account
    ) => Effect.Effect<void, Errors.Forbidden>
    /** 403 `ErrBlockedByUser` when either has blocked the other (following, collaborating). */
    readonly ensureNeitherBlocked: (a: Account, b: Account) => Effect.Effect<void, Errors.Forbidden>
    readonly block: (blocker: UserRow, user: UserRow) => Effect.Effect<void>
    /** Unblocking someone not blocked changes nothing. */
    readonly unblock: (blocker: UserRow, user: UserRow) => Effect.Effect<void>
    readonly list: (
      blocker: UserRow,
      page: Page
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<BlockRow>; readonly total: number }>
  }
>()("hearth/blocks/BlocksService") {
  static readonly layer = Layer.effect(
    BlocksService,
    Effect.gen(function* () {
      const blocks = yield* BlocksRepo
      const follows = yield* FollowsRepo
      const social = yield* SocialRepo
      const repos = yield* ReposRepo
      const transfers = yield* TransfersRepo

      const anyBlocked = (blockers: ReadonlyArray<Account>, user: Account) =>
        Effect.orDie(
          blocks.isBlocked(
            blockers.filter((b) => b.id !== user.id).map((b) => b.id),
            user.id
          )
        )
      const refuse = (blocked: boolean) => (blocked ? Effect.fail(Errors.forbidden(BLOCKED_BY_USER)) : Effect.void)

      const block = (blocker: UserRow, user: UserRow) =>
        blocker.id === user.id
          ? Effect.void
          : Effect.orDie(
              blocks.transaction(
                Effect.gen(function* () {
                  if (!(yield* blocks.insert(blocker.id, user.id))) return
                  yield* follows.unfollow(user.id, blocker.id)
                  yield* follows.unfollow(blocker.id, user.id)
                  for (const repoId of yield* blocks.watchedIn(blocker.id, user.id)) {
                    yield* social.unwatch(user.id, repoId)
                  }
                  for (const repoId of yield* blocks.collaborationsIn(blocker.id, user.id)) {
                    yield* repos.removeCollaborator(repoId, user.id)
                  }
                  for (const repoId of yield* blocks.transfersOffered(blocker.id, user.id)) {
                    yield* transfers.remove(repoId)
                    yield* repos.setStatus(repoId, "ready")
                  }
                })
              )
            )

      return BlocksService.of({
        isBlocked: (blocker, user) => anyBlocked([blocker], user),
        ensureNotBlocked: (blockers, user) => Effect.flatMap(anyBlocked(blockers, user), refuse),
        ensureNeitherBlocked: (a, b) =>
          Effect.flatMap(
            Effect.zipWith(anyBlocked([a], b), anyBlocked([b], a), (x, y) => x || y),
            refuse
          ),
        block,
        unblock: (blocker, user) => Effect.asVoid(Effect.orDie(blocks.remove(blocker.id, user.id))),
        list: (blocker, page) => Effect.orDie(blocks.list(blocker.id, page))
      })
    })
  )
}

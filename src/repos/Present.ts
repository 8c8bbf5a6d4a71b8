// Repositories as a viewer sees them (Forgejo's `Repository`): the one conversion every route that
// answers repositories goes through, so forks carry their `parent` everywhere alike.
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { MirrorsRepo } from "../mirrors/Repo.ts"
import { OrgsRepo } from "../orgs/Repo.ts"
import { toApiTeam } from "../orgs/Schema.ts"
import { TransfersRepo } from "../transfers/Repo.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { type RepoAccess, RepoPolicy } from "./Policy.ts"
import { type RepoRow, ReposRepo } from "./Repo.ts"
import { type Repository, type RepoTransfer, toApiRepo } from "./Schema.ts"

export interface Presentable {
  readonly repo: RepoRow
  readonly owner: UserRow
  readonly access: RepoAccess
}

export class RepoPresenter extends Context.Service<
  RepoPresenter,
  {
    /**
     * The rows in order, each with the viewer's permissions; a fork's `parent` is its source when
     * the viewer may read it (null otherwise: a private source stays hidden).
     */
    readonly present: (
      viewer: Principal | undefined,
      items: ReadonlyArray<Presentable>
    ) => Effect.Effect<Array<Repository>>
    readonly one: (viewer: Principal | undefined, item: Presentable) => Effect.Effect<Repository>
  }
>()("hearth/repos/RepoPresenter") {
  static readonly layer = Layer.effect(
    RepoPresenter,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repos = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const transfers = yield* TransfersRepo
      const orgRows = yield* OrgsRepo
      const mirrors = yield* MirrorsRepo

      /** `mirror_updated` of the pull mirrors among the rows. */
      const mirrorTimesOf = (items: ReadonlyArray<Presentable>) =>
        Effect.gen(function* () {
          const times = new Map<number, Date>()
          for (const { repo } of items) {
            if (!repo.isMirror) continue
            const pull = yield* mirrors.findPull(repo.id)
            if (Option.isSome(pull) && pull.value.updatedAt !== null) times.set(repo.id, pull.value.updatedAt)
          }
          return times
        })

      /** Rows with their owners (one query), dropping any whose owner is gone. */
      const withOwnersOf = (rows: ReadonlyArray<RepoRow>) =>
        Effect.map(users.findByIds(rows.map((r) => r.ownerId)), (owners) =>
          rows.flatMap((repo) => {
            const owner = owners.get(repo.ownerId)
            return owner === undefined ? [] : [{ repo, owner }]
          })
        )

      const userById = (id: number) => Effect.map(users.findById(id), Option.getOrUndefined)

      /** `repo_transfer` of the rows waiting for a transfer to be accepted. */
      const transfersOf = (viewer: Principal | undefined, items: ReadonlyArray<Presentable>) =>
        Effect.gen(function* () {
          const ids = items.filter(({ repo }) => repo.status === "pending_transfer").map(({ repo }) => repo.id)
          const shown = new Map<number, RepoTransfer>()
          for (const pending of yield* transfers.pendingOf(ids)) {
            const doer = yield* userById(pending.doerId)
            const recipient = yield* userById(pending.recipientId)
            if (doer === undefined || recipient === undefined) continue
            const teams = []
            for (const id of pending.teamIds) {
              const team = yield* orgRows.findTeam(id)
              if (Option.isSome(team)) teams.push(toApiTeam(team.value))
            }
            shown.set(pending.repoId, {
              doer: toApiUser(settings, doer, viewer),
              recipient: toApiUser(settings, recipient, viewer),
              teams: teams.length === 0 ? null : teams
            })
          }
          return shown
        })

      const parentsOf = (viewer: Principal | undefined, items: ReadonlyArray<Presentable>) =>
        Effect.gen(function* () {
          const ids = [...new Set(items.flatMap(({ repo }) => (repo.forkId === null ? [] : [repo.forkId])))]
          const parents = new Map<number, Repository>()
          if (ids.length === 0) return parents
          const withOwners = yield* withOwnersOf(yield* repos.findByIds(ids))
          const access = yield* policy.accessMany(viewer, withOwners)
          withOwners.forEach(({ repo, owner }, i) => {
            if (atLeast(access[i]!.mode, "read"))
              parents.set(repo.id, toApiRepo(settings, repo, owner, access[i]!, viewer))
          })
          return parents
        })

      const present = (viewer: Principal | undefined, items: ReadonlyArray<Presentable>) =>
        Effect.gen(function* () {
          const parents = yield* parentsOf(viewer, items)
          const pending = yield* transfersOf(viewer, items)
          const mirrored = yield* mirrorTimesOf(items)
          return items.map(({ repo, owner, access }) =>
            toApiRepo(settings, repo, owner, access, viewer, {
              parent: repo.forkId === null ? null : (parents.get(repo.forkId) ?? null),
              transfer: pending.get(repo.id) ?? null,
              mirrorUpdated: mirrored.get(repo.id) ?? null
            })
          )
        })

      return RepoPresenter.of({
        present,
        one: (viewer, item) => Effect.map(present(viewer, [item]), (all) => all[0]!)
      })
    })
  )
}

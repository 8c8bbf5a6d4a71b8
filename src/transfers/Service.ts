// Repository transfers (Forgejo's repo_service.StartRepositoryTransfer): at once when the doer may
// create repositories where it goes (a site admin, themselves, an organization they may create
// in); otherwise pending until the recipient accepts or someone rejects it.

import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { BlocksService } from "../blocks/Service.ts"
import { transaction as sqlTransaction } from "../db/Boundary.ts"
import { subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { QuotaService } from "../quota/Service.ts"
import { ensureAllowed, type OpenedRepo } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { type PendingTransfer, TransfersRepo } from "./Repo.ts"

type TransferError =
  | Errors.NotFound
  | Errors.Forbidden
  | Errors.ValidationFailed
  | Errors.Conflict
  | Errors.InternalError
  | Errors.PayloadTooLarge

export interface Transferred {
  readonly repo: RepoRow
  readonly owner: UserRow
  /** false: waiting for the recipient. */
  readonly done: boolean
}

export class TransfersService extends Context.Service<
  TransfersService,
  {
    /** `opened`: checked by the route's assignment (owner, not being created). */
    readonly start: (
      caller: Principal,
      opened: OpenedRepo,
      options: { readonly new_owner: string; readonly team_ids?: ReadonlyArray<number> | undefined }
    ) => Effect.Effect<Transferred, TransferError>
    /** `opened` is only resolved: the recipient may not see it yet, so the rule is applied here. */
    readonly accept: (caller: Principal, opened: OpenedRepo) => Effect.Effect<Transferred, TransferError>
    readonly reject: (caller: Principal, opened: OpenedRepo) => Effect.Effect<Transferred, TransferError>
    /** The pending transfers of these repositories, for showing `repo_transfer`. */
    readonly pendingOf: (repoIds: ReadonlyArray<number>) => Effect.Effect<Array<PendingTransfer>>
  }
>()("hearth/transfers/TransfersService") {
  static readonly layer = Layer.effect(
    TransfersService,
    Effect.gen(function* () {
      const transaction = sqlTransaction(yield* SqlClient)
      const repos = yield* ReposService
      const rows = yield* ReposRepo
      const users = yield* UsersRepo
      const orgs = yield* OrgPolicy
      const orgRows = yield* OrgsRepo
      const transfers = yield* TransfersRepo
      const quota = yield* QuotaService
      const blocks = yield* BlocksService
      const events = yield* EventHub

      const userById = (id: number) =>
        Effect.flatMap(users.findById(id), (u) =>
          Option.isSome(u) ? Effect.succeed(u.value) : Effect.fail(Errors.notFound())
        )

      /** Whether `user` may receive the repository for `recipient` (Forgejo's CanUserAcceptTransfer). */
      const mayReceive = (user: UserRow, recipient: UserRow) =>
        user.isAdmin || user.id === recipient.id
          ? Effect.succeed(true)
          : recipient.type === "organization"
            ? orgs.canCreateOrgRepo(recipient, user)
            : Effect.succeed(false)

      const complete = (repo: RepoRow, from: UserRow, to: UserRow, teamIds: ReadonlyArray<number>, doer: UserRow) =>
        Effect.gen(function* () {
          const moved = yield* repos.changeOwner(repo, from, to)
          yield* transaction(
            Effect.gen(function* () {
              yield* transfers.remove(repo.id)
              for (const teamId of teamIds) yield* orgRows.addTeamRepo(teamId, repo.id)
            })
          )
          yield* events.publish({ _tag: "TransferRepository", ...subject(to, moved, doer), oldOwnerName: from.name })
          return { repo: moved, owner: to, done: true }
        })

      const start = (
        caller: Principal,
        { owner, repo }: OpenedRepo,
        options: { readonly new_owner: string; readonly team_ids?: ReadonlyArray<number> | undefined }
      ) =>
        Effect.gen(function* () {
          const found = yield* users.findByName(options.new_owner)
          if (Option.isNone(found)) return yield* Errors.notFound()
          const recipient = found.value
          // A private organization the caller is not in stays unknown.
          if (
            recipient.type === "organization" &&
            recipient.visibility === "private" &&
            !caller.user.isAdmin &&
            !(yield* orgs.isMember(recipient, caller.user))
          )
            return yield* Errors.notFound()
          const teams: Array<TeamRow> = []
          if (options.team_ids !== undefined && options.team_ids.length > 0) {
            if (recipient.type !== "organization") {
              return yield* Errors.validationFailed("Teams can only be added to organization-owned repositories")
            }
            for (const id of options.team_ids) {
              const team = yield* orgRows.findTeam(id)
              if (Option.isNone(team)) return yield* Errors.validationFailed(`team ${id} not found`)
              if (team.value.orgId !== recipient.id)
                return yield* Errors.forbidden(`team ${id} belongs not to org ${recipient.id}`)
              teams.push(team.value)
            }
          }
          // Forgejo's StartRepositoryTransfer: not to someone who blocked the doer (admins included).
          yield* blocks.ensureNotBlocked([recipient], caller.user)
          if (recipient.id === owner.id)
            return yield* Errors.validationFailed(`the repository is already owned by ${recipient.name}`)
          if (Option.isSome(yield* transfers.pending(repo.id))) {
            return yield* Errors.conflict(
              `repository transfer is already in progress [repo: ${owner.name}/${repo.name}]`
            )
          }
          if (Option.isSome(yield* rows.findByName(recipient.id, repo.name))) {
            return yield* Errors.validationFailed(
              `repository already exists [uname: ${recipient.name}, name: ${repo.name}]`
            )
          }
          const teamIds = teams.map((t) => t.id)
          // The repository will count towards the recipient's quota.
          yield* quota.enforce(recipient, "size:repos:all")
          if (yield* mayReceive(caller.user, recipient))
            return yield* complete(repo, owner, recipient, teamIds, caller.user)
          yield* transaction(
            Effect.andThen(
              transfers.insert({ repoId: repo.id, doerId: caller.user.id, recipientId: recipient.id, teamIds }),
              rows.setStatus(repo.id, "pending_transfer")
            )
          )
          return { repo: { ...repo, status: "pending_transfer" as const }, owner, done: false }
        })

      /**
       * The repository with a pending transfer, for someone who may act on it: the recipient side
       * (who may not be able to see a private repository yet) or the repository's owners.
       */
      const pendingFor = (caller: Principal, opened: OpenedRepo) =>
        Effect.gen(function* () {
          const { owner, repo } = opened
          const pending = yield* transfers.pending(repo.id)
          const recipient = Option.isSome(pending) ? yield* userById(pending.value.recipientId) : undefined
          const receiving = recipient !== undefined && (yield* mayReceive(caller.user, recipient))
          if (!receiving) yield* ensureAllowed(caller, opened, { role: "read" })
          if (Option.isNone(pending) || recipient === undefined) return yield* Errors.notFound()
          return { owner, repo, pending: pending.value, recipient, receiving }
        })

      const accept = (caller: Principal, opened: OpenedRepo) =>
        Effect.gen(function* () {
          const { owner, repo, pending, recipient, receiving } = yield* pendingFor(caller, opened)
          if (!receiving) return yield* Errors.forbidden("user does not have permissions to do this")
          yield* quota.enforce(recipient, "size:repos:all")
          return yield* complete(repo, owner, recipient, pending.teamIds, caller.user)
        })

      const reject = (caller: Principal, opened: OpenedRepo) =>
        Effect.gen(function* () {
          const { owner, repo, receiving } = yield* pendingFor(caller, opened)
          // The recipient declines, or the repository's owners take it back.
          if (!receiving)
            yield* ensureAllowed(caller, opened, { role: "owner" }).pipe(
              Effect.mapError(() => Errors.forbidden("user does not have permissions to do this"))
            )
          yield* transaction(Effect.andThen(transfers.remove(repo.id), rows.setStatus(repo.id, "ready")))
          return { repo: { ...repo, status: "ready" as const }, owner, done: true }
        })

      return TransfersService.of({
        start,
        accept,
        reject,
        pendingOf: (ids) => transfers.pendingOf(ids)
      })
    })
  )
}

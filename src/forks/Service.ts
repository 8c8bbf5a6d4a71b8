// Forks (Forgejo's services/repository/fork.go): the rules for who may fork what where, the new repository's row (made at
// once, so the 202 can show it), and the durable job that fills its git data. The request waits
// for the job up to `[repository] FORK_WAIT_TIMEOUT`, so that the fork it answers with is usable
// at once; past that it answers with the job still running (the repository refuses writes with
// 409 until it is done: the `changes` of a route's repository rule, Policy.ts `repoRefusal`).
import { Context, Effect, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { Settings } from "../config/Settings.ts"
import { subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { JobsRepo } from "../jobs/Repo.ts"
import { repoNameProblem } from "../lib/Names.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { QuotaService } from "../quota/Service.ts"
import { type RepoAccess, RepoPolicy } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import type { Window } from "../social/Repo.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { ForkRepository, jobKey } from "./Workflow.ts"

export interface ForkOptions {
  readonly organization?: string | null | undefined
  readonly name?: string | null | undefined
}

export interface Listed {
  readonly items: ReadonlyArray<{ readonly repo: RepoRow; readonly owner: UserRow; readonly access: RepoAccess }>
  readonly total: number
}

/** The repository forked or whose forks are listed. */
type Source = { readonly owner: UserRow; readonly repo: RepoRow }

export class ForksService extends Context.Service<
  ForksService,
  {
    /**
     * Makes the fork's row and starts the job that copies the git data; the row is `creating` until
     * it is done. Answers once the job is done, or at `[repository] FORK_WAIT_TIMEOUT` with it running.
     * `source` was opened for the caller by the route's repository assignment (read on code).
     */
    readonly fork: (
      caller: Principal,
      source: Source,
      options: ForkOptions
    ) => Effect.Effect<
      { readonly repo: RepoRow; readonly owner: UserRow },
      | Errors.NotFound
      | Errors.Forbidden
      | Errors.ValidationFailed
      | Errors.Conflict
      | Errors.BadRequest
      | Errors.InternalError
      | Errors.PayloadTooLarge
    >
    /** The forks of a repository the viewer may see (all of them when `window` is undefined). */
    readonly list: (viewer: Principal | undefined, source: Source, window: Window | undefined) => Effect.Effect<Listed>
  }
>()("hearth/forks/ForksService") {
  static readonly layer = Layer.effect(
    ForksService,
    Effect.gen(function* () {
      const repos = yield* ReposService
      const rows = yield* ReposRepo
      const users = yield* UsersRepo
      const orgs = yield* OrgPolicy
      const accounts = yield* AccountPolicy
      const policy = yield* RepoPolicy
      const jobs = yield* JobsRepo
      const engine = yield* WorkflowEngine.WorkflowEngine
      const quota = yield* QuotaService
      const settings = yield* Settings
      const events = yield* EventHub

      /** Where the fork goes: the caller, or an organization the caller may create repositories in. */
      const targetOwner = (caller: Principal, organization: string | null | undefined) =>
        Effect.gen(function* () {
          if (organization === undefined || organization === null || organization === "") return caller.user
          const org = yield* users.findByName(organization)
          // An organization the caller may not see is answered as one that does not exist.
          if (Option.isNone(org) || org.value.type !== "organization" || !(yield* accounts.canSee(caller, org.value))) {
            return yield* Errors.validationFailed(`org does not exist [id: 0, name: ${organization}]`)
          }
          if (caller.user.isAdmin) return org.value
          if (!(yield* orgs.isMember(org.value, caller.user))) {
            return yield* Errors.forbidden(`User is no Member of Organisation '${org.value.name}'`)
          }
          if (!(yield* orgs.canCreateOrgRepo(org.value, caller.user))) {
            return yield* Errors.forbidden(`User is not allowed to create repos in Organisation '${org.value.name}'`)
          }
          return org.value
        })

      const fork = (caller: Principal, source: Source, options: ForkOptions) =>
        Effect.gen(function* () {
          const owner = yield* targetOwner(caller, options.organization)
          // The copy is charged to where it goes, not to the caller nor to the source's owner.
          yield* quota.enforce(owner, "size:repos:all")
          const forkName =
            options.name !== undefined && options.name !== null && options.name !== "" ? options.name : source.repo.name
          const problem = repoNameProblem(forkName)
          if (problem !== undefined) return yield* Errors.validationFailed(problem)
          if (Option.isSome(yield* rows.forkOwnedBy(source.repo.id, owner.id))) {
            return yield* Errors.conflict(
              `repository is already forked by user [uname: ${owner.name}, repo path: ${source.owner.name}/${source.repo.name}]`
            )
          }
          const repo = yield* repos.insertRow(
            owner,
            {
              name: forkName,
              description: source.repo.description,
              default_branch: source.repo.defaultBranch,
              is_private: source.repo.isPrivate || source.owner.visibility === "private",
              is_fork: true,
              fork_id: source.repo.id,
              is_empty: source.repo.isEmpty,
              status: "creating"
            },
            caller.user
          )
          const target = { id: repo.id, dir: repos.pathOf(owner, repo) }
          // An empty repository at once, so everything reading the fork works while the copy runs.
          const started = Effect.gen(function* () {
            yield* repos.initDirectory(target, repo.defaultBranch)
            yield* jobs.enqueue({ kind: "fork", key: jobKey(repo.id), repoId: repo.id, doerId: caller.user.id })
            return yield* ForkRepository.execute({ forkId: repo.id, sourceId: source.repo.id }, { discard: true }).pipe(
              Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
              Effect.orDie
            )
          })
          const executionId = yield* started.pipe(Effect.onError(() => repos.remove(owner, repo)))
          // Waiting polls, so a client that goes away does not interrupt the copy (a durable job).
          const done = Effect.gen(function* () {
            while (true) {
              const result = yield* ForkRepository.poll(executionId)
              if (Option.isSome(result) && result.value._tag === "Complete") return
              yield* Effect.sleep("50 millis")
            }
          }).pipe(Effect.provideService(WorkflowEngine.WorkflowEngine, engine))
          const waited = yield* Effect.timeoutOption(done, `${settings.repository.FORK_WAIT_TIMEOUT} seconds`)
          if (Option.isNone(waited))
            yield* Effect.logWarning(
              `the copy of ${owner.name}/${repo.name} took longer than [repository] FORK_WAIT_TIMEOUT (${settings.repository.FORK_WAIT_TIMEOUT} s): answering while it goes on`
            )
          yield* events.publish({
            _tag: "ForkRepository",
            ...subject(owner, repo, caller.user),
            source: { id: source.repo.id, fullName: `${source.owner.name}/${source.repo.name}` }
          })
          // The row as the job left it (ready, or still creating), for the answer.
          const now = yield* rows.findById(repo.id)
          return { repo: Option.getOrElse(now, () => repo), owner }
        })

      const list = (viewer: Principal | undefined, source: Source, window: Window | undefined) =>
        Effect.gen(function* () {
          const forks = yield* rows.forksOf(source.repo.id)
          const owners = yield* users.findByIds(forks.map((f) => f.ownerId))
          const withOwners = forks.flatMap((repo) => {
            const owner = owners.get(repo.ownerId)
            return owner === undefined ? [] : [{ repo, owner }]
          })
          const access = yield* policy.accessMany(viewer, withOwners)
          const visible = withOwners
            .map((item, i) => ({ ...item, access: access[i]! }))
            .filter(({ access }) => access.mode !== "none")
          const items = window === undefined ? visible : visible.slice(window.offset, window.offset + window.limit)
          return { items, total: visible.length }
        })

      return ForksService.of({ fork, list })
    })
  )
}

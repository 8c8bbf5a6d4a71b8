// Migration and mirrors: who may migrate where, what a remote address may be, the new
// repository's row and git data made together (a failed clone leaves neither), and the syncs
// started by hand, by a push, or by the schedule (Workflow.ts).

import { randomBytes } from "node:crypto"
import { existsSync } from "node:fs"
import { Cause, Context, Effect, Exit, Layer, Option } from "effect"
import { WorkflowEngine } from "effect/workflow"
import { Settings } from "../config/Settings.ts"
import { EventHub } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { JobsRepo } from "../jobs/Repo.ts"
import { formatGoDuration, parseGoDuration } from "../lib/Duration.ts"
import { repoNameProblem } from "../lib/Names.ts"
import { sealer } from "../lib/Sealer.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { QuotaService } from "../quota/Service.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import type { CreatePushMirrorOption, MigrateRepoOptions } from "./Api.ts"
import { authorizationHeader, checkRemote, parseRemote } from "./Policy.ts"
import { MirrorsRepo, type PushMirrorRow } from "./Repo.ts"
import {
  MIGRATE_KIND,
  MigrateRepository,
  migrateKey,
  PULL_KIND,
  PUSH_KIND,
  startPullSync,
  startPushSync
} from "./Workflow.ts"

const SERVICES = ["", "git", "github", "gitea", "gitlab", "gogs", "onedev", "gitbucket", "codebase"]
const DISABLED = "Mirror feature is disabled"

type PushMirrorErrors = Errors.NotFound | Errors.Forbidden | Errors.BadRequest | Errors.Locked

/** The repository of a mirror route, opened and checked by its repository assignment (Assignment.ts). */
type Opened = { readonly owner: UserRow; readonly repo: RepoRow }

export class MirrorsService extends Context.Service<
  MirrorsService,
  {
    /** POST /repos/migrate: the repository, once its git data is there. */
    readonly migrate: (
      caller: Principal,
      input: MigrateRepoOptions
    ) => Effect.Effect<
      { readonly repo: RepoRow; readonly owner: UserRow },
      | Errors.ValidationFailed
      | Errors.Forbidden
      | Errors.Conflict
      | Errors.InternalError
      | Errors.NotFound
      | Errors.BadRequest
      | Errors.PayloadTooLarge
    >
    /** POST /repos/{o}/{r}/mirror-sync: queues a sync (in the order of Forgejo's `MirrorSync` checks). */
    readonly syncPull: (
      caller: Principal,
      opened: Opened
    ) => Effect.Effect<void, PushMirrorErrors | Errors.PayloadTooLarge>
    readonly listPush: (
      opened: Opened,
      page: Page
    ) => Effect.Effect<
      { readonly repo: RepoRow; readonly rows: Array<PushMirrorRow>; readonly total: number },
      PushMirrorErrors
    >
    readonly getPush: (
      opened: Opened,
      remoteName: string
    ) => Effect.Effect<{ readonly repo: RepoRow; readonly mirror: PushMirrorRow }, PushMirrorErrors>
    readonly addPush: (
      opened: Opened,
      input: CreatePushMirrorOption
    ) => Effect.Effect<{ readonly repo: RepoRow; readonly mirror: PushMirrorRow }, PushMirrorErrors>
    readonly deletePush: (opened: Opened, remoteName: string) => Effect.Effect<void, PushMirrorErrors>
    /** POST /repos/{o}/{r}/convert: a pull mirror becomes a normal repository (422 for any other). */
    readonly convert: (opened: Opened) => Effect.Effect<RepoRow, Errors.ValidationFailed>
    /** POST /repos/{o}/{r}/push_mirrors-sync: queues a push to every push mirror. */
    readonly syncPush: (caller: Principal, opened: Opened) => Effect.Effect<void, PushMirrorErrors>
    /** After a push to the repository: queues the push mirrors that sync on commit (never waits for them). */
    readonly pushed: (repoId: number) => Effect.Effect<void>
  }
>()("hearth/mirrors/MirrorsService") {
  static readonly layer = Layer.effect(
    MirrorsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repos = yield* ReposService
      const rows = yield* ReposRepo
      const users = yield* UsersRepo
      const accounts = yield* AccountPolicy
      const orgs = yield* OrgPolicy
      const mirrors = yield* MirrorsRepo
      const jobs = yield* JobsRepo
      const engine = yield* WorkflowEngine.WorkflowEngine
      const quota = yield* QuotaService
      const events = yield* EventHub
      const { seal } = sealer(settings.security.SECRET_KEY, "mirror-credentials")
      const minimum = settings.mirror.MIN_INTERVAL

      const background = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
        effect.pipe(
          Effect.provideService(WorkflowEngine.WorkflowEngine, engine),
          Effect.provideService(JobsRepo, jobs)
        ) as Effect.Effect<A, E, Exclude<R, WorkflowEngine.WorkflowEngine | JobsRepo>>

      /** An interval text: seconds (0 = no periodic sync), or why it is refused. */
      const intervalOf = (text: string): number | string => {
        const seconds = parseGoDuration(text.trim())
        if (seconds === undefined) return `invalid mirror interval: time: invalid duration "${text}"`
        return withinBounds(seconds, text)
      }
      const withinBounds = (seconds: number, text: string): number | string => {
        if (seconds < 0) return `invalid mirror interval: ${text} is negative`
        if (seconds !== 0 && seconds < minimum) {
          return `invalid mirror interval: ${formatGoDuration(seconds)} is below the minimum interval ${formatGoDuration(minimum)} ([mirror] MIN_INTERVAL)`
        }
        return seconds
      }

      /** Where the migrated repository goes: the caller, an organization it may create in, or (admins) anyone. */
      const targetOwner = (caller: Principal, input: MigrateRepoOptions) =>
        Effect.gen(function* () {
          const byName = input.repo_owner !== undefined && input.repo_owner !== ""
          if (!byName && (input.uid === undefined || input.uid === 0)) return caller.user
          const found = byName ? yield* users.findByName(input.repo_owner!) : yield* users.findById(input.uid!)
          const visible = Option.isSome(found) && (yield* accounts.canSee(caller, found.value))
          if (!visible) {
            return yield* Errors.validationFailed(
              byName
                ? `user does not exist [uid: 0, name: ${input.repo_owner}]`
                : `user does not exist [uid: ${input.uid}, name: ]`
            )
          }
          const owner = found.value
          if (caller.user.isAdmin || owner.id === caller.user.id) return owner
          if (owner.type !== "organization") return yield* Errors.forbidden("Given user is not an organization.")
          if (!(yield* orgs.canCreateOrgRepo(owner, caller.user))) {
            return yield* Errors.forbidden("Given user is not allowed to create repository in organization.")
          }
          return owner
        })

      const migrate = (caller: Principal, input: MigrateRepoOptions) =>
        Effect.gen(function* () {
          if (!SERVICES.includes(input.service ?? "")) {
            return yield* Errors.validationFailed(
              `[Service]: must be one of git, github, gitea, gitlab, gogs, onedev, gitbucket, codebase: "${input.service}"`
            )
          }
          const extras = (
            ["wiki", "milestones", "labels", "issues", "pull_requests", "releases", "lfs"] as const
          ).filter((k) => input[k] === true)
          if (extras.length > 0) {
            return yield* Errors.validationFailed(
              `Hearth migrates git data only; these cannot be migrated yet: ${extras.join(", ")}`
            )
          }
          const owner = yield* targetOwner(caller, input)
          yield* quota.enforce(owner, "size:repos:all")
          const nameProblem = repoNameProblem(input.repo_name)
          if (nameProblem !== undefined)
            return yield* Errors.validationFailed(nameProblem.replace("[Name]", "[RepoName]"))
          if (input.description !== undefined && input.description.length > 2048) {
            return yield* Errors.validationFailed("[Description]: MaxSize (2048)")
          }
          const mirror = input.mirror === true
          if (mirror && !settings.mirror.ENABLED) {
            return yield* Errors.forbidden("the site administrator has disabled the creation of new pull mirrors")
          }
          const remote = parseRemote(input.clone_addr, {
            username: input.auth_username,
            password: input.auth_password,
            token: input.auth_token
          })
          if (remote._tag === "RemoteRefused") return yield* Errors.validationFailed(remote.message)
          const interval = !mirror
            ? 0
            : input.mirror_interval === undefined
              ? withinBounds(settings.mirror.DEFAULT_INTERVAL, formatGoDuration(settings.mirror.DEFAULT_INTERVAL))
              : intervalOf(input.mirror_interval)
          if (typeof interval === "string") return yield* Errors.validationFailed(interval)
          yield* Effect.mapError(checkRemote(settings, remote.url), (e) => Errors.validationFailed(e.message))
          if (Option.isSome(yield* rows.findByName(owner.id, input.repo_name))) {
            return yield* Errors.conflict("The repository with the same name already exists.")
          }
          if (existsSync(repos.pathOf(owner, { lowerName: input.repo_name.toLowerCase() }))) {
            return yield* Errors.conflict("Files already exist for this repository. Adopt them or delete them.")
          }
          const header = authorizationHeader(remote.credentials)
          // The row first (`creating` while the clone runs), then the git data through the entity;
          // if anything fails, the row and the directory go again.
          const row = yield* repos.insertRow(
            owner,
            {
              name: input.repo_name,
              description: input.description ?? "",
              default_branch: "main",
              is_private: input.private ?? false,
              status: "creating"
            },
            caller.user
          )
          const target = { id: row.id, dir: repos.pathOf(owner, row) }
          const prepared = Effect.gen(function* () {
            // The job first: from here on, a crash is repaired by the schedule (restartLostJobs).
            yield* jobs.enqueue({ kind: MIGRATE_KIND, key: migrateKey(row.id), repoId: row.id, doerId: caller.user.id })
            yield* repos.initDirectory(target, "main")
            const sealed = seal(header)
            yield* mirror
              ? mirrors.createPull(row.id, {
                  remoteAddress: remote.url,
                  credentials: sealed,
                  interval: formatGoDuration(interval)
                })
              : mirrors.setOriginalUrl(row.id, remote.url)
            return sealed
          })
          const sealed = yield* prepared.pipe(Effect.onError(() => repos.remove(owner, row)))
          // The clone is a durable job this request waits for (it removes the repository itself if it
          // fails). Waiting polls, so a client that goes away does not interrupt the clone.
          const exit = yield* Effect.gen(function* () {
            const executionId = yield* MigrateRepository.execute(
              { repoId: row.id, remoteAddress: remote.url, credentials: sealed, mirror },
              {
                discard: true
              }
            )
            while (true) {
              const result = yield* MigrateRepository.poll(executionId)
              if (Option.isSome(result) && result.value._tag === "Complete") return result.value.exit
              yield* Effect.sleep("100 millis")
            }
          }).pipe(Effect.provideService(WorkflowEngine.WorkflowEngine, engine))
          if (Exit.isFailure(exit)) {
            const failure = Cause.findErrorOption(exit.cause)
            if (Option.isSome(failure)) return yield* Errors.validationFailed(failure.value.message)
            return yield* Effect.die(Cause.squash(exit.cause))
          }
          const repo = yield* repos.getById(row.id).pipe(Effect.orDie)
          return { repo, owner }
        })

      const enabled = settings.mirror.ENABLED ? Effect.void : Effect.fail(Errors.badRequest(DISABLED))

      const syncPull = (caller: Principal, { owner, repo }: Opened) =>
        Effect.gen(function* () {
          yield* quota.enforce(owner, "size:git:all")
          yield* enabled
          if (!repo.isMirror || Option.isNone(yield* mirrors.findPull(repo.id))) {
            return yield* Errors.badRequest("Repository is not a mirror")
          }
          // One queued sync is enough: it fetches whatever the remote has when it runs.
          if (yield* mirrors.pendingJob(repo.id, PULL_KIND)) return
          yield* mirrors.touchPull(repo.id)
          yield* background(startPullSync(repo.id, `${PULL_KIND}:${repo.id}:manual:${Date.now()}`, caller.user.id))
        })

      const pushRoute = (opened: Opened) => Effect.as(enabled, opened)

      const findPush = (repo: RepoRow, remoteName: string) =>
        Effect.flatMap(mirrors.findPush(repo.id, remoteName), (found) =>
          Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound())
        )

      const addPush = (opened: Opened, input: CreatePushMirrorOption) =>
        Effect.gen(function* () {
          const { repo } = yield* pushRoute(opened)
          const interval = intervalOf(input.interval ?? "")
          if (typeof interval === "string")
            return yield* Errors.badRequest(interval.replace("mirror interval", "interval"))
          if (input.use_ssh === true) {
            return yield* Errors.badRequest(
              "SSH authentication not available: Hearth pushes to mirrors over http(s) only."
            )
          }
          const filter = input.branch_filter ?? ""
          if (
            filter.split(",").some((glob) => (glob.match(/\*/g) ?? []).length > 1 || /[\s:~^?[\\]/.test(glob.trim()))
          ) {
            return yield* Errors.badRequest(
              `invalid branch_filter "${filter}": use branch names or globs with one '*', separated by commas`
            )
          }
          const remote = parseRemote(input.remote_address ?? "", {
            username: input.remote_username,
            password: input.remote_password
          })
          if (remote._tag === "RemoteRefused")
            return yield* Errors.badRequest(remote.message.replace("[CloneAddr]", "[RemoteAddress]"))
          yield* Effect.mapError(checkRemote(settings, remote.url), (e) => Errors.badRequest(e.message))
          const mirror = yield* mirrors.insertPush({
            repoId: repo.id,
            remoteName: `remote_mirror_${randomBytes(8).toString("hex").slice(0, 10)}`,
            remoteAddress: remote.url,
            credentials: seal(authorizationHeader(remote.credentials)),
            syncOnCommit: input.sync_on_commit ?? false,
            intervalSeconds: interval,
            branchFilter: filter
          })
          return { repo, mirror }
        })

      const startPushes = (list: ReadonlyArray<PushMirrorRow>, why: string, doerId?: number) =>
        Effect.forEach(
          list,
          (mirror) => background(startPushSync(mirror, `${PUSH_KIND}:${mirror.id}:${why}:${Date.now()}`, doerId)),
          {
            discard: true
          }
        )

      const pushed = (repoId: number) =>
        Effect.gen(function* () {
          if (!settings.mirror.ENABLED) return
          yield* startPushes(yield* Effect.orDie(mirrors.pushOnCommit(repoId)), "commit")
        }).pipe(
          Effect.ignoreCause({ log: "Warn", message: `could not queue the push mirrors of repository ${repoId}` })
        )

      // Push mirrors that sync on commit follow every change of refs (Forgejo's mirror notifier:
      // PushCommits and SyncPushCommits).
      yield* events.subscribe({
        name: "push mirrors",
        afterAnswer: true,
        handle: (event) => (event._tag === "PushCommits" ? pushed(event.repo.id) : Effect.void)
      })

      return MirrorsService.of({
        migrate,
        syncPull,
        listPush: (opened, page) =>
          Effect.gen(function* () {
            const { repo } = yield* pushRoute(opened)
            const { rows: list, total } = yield* mirrors.listPush(repo.id, page)
            return { repo, rows: list, total }
          }),
        getPush: (opened, remoteName) =>
          Effect.gen(function* () {
            const { repo } = yield* pushRoute(opened)
            return { repo, mirror: yield* findPush(repo, remoteName) }
          }),
        addPush,
        deletePush: (opened, remoteName) =>
          Effect.gen(function* () {
            const { repo } = yield* pushRoute(opened)
            if (!(yield* mirrors.deletePush(repo.id, remoteName))) return yield* Errors.notFound()
          }),
        convert: ({ repo }) =>
          Effect.gen(function* () {
            const converted = yield* mirrors.convertPull(repo.id)
            if (Option.isNone(converted)) return yield* Errors.validationFailed("Repository is not a mirror")
            return converted.value
          }),
        syncPush: (caller, { repo }) =>
          Effect.gen(function* () {
            yield* enabled
            yield* startPushes(yield* mirrors.allPushOf(repo.id), "manual", caller.user.id)
          }),
        pushed
      })
    })
  )
}

// Scheduled merges (`merge_when_checks_succeed`; Forgejo's services/automerge; CONTRACT-PULLS §9).
// `POST /pulls/{i}/merge` records one (PullsService.merge through AutoMergeStore: the row, a
// `pull_scheduled_merge` entry and a first evaluation, all in one transaction); this module
// evaluates them, fires them and cancels them.
//
// - Evaluation: a job per trigger on the durable queue (topic `pulls:automerge`, one at a time per
//   pull request, leased and retried, resumed after a crash). It merges through the same
//   `PullsService.merge` as the API, as the user who scheduled it, with that user's permissions as
//   they are then (not the token's scopes: Forgejo uses the doer's permission), with the stored
//   style, title, message and branch deletion. What time may lift (required statuses, approvals,
//   an outdated head, work in progress, a closed pull request, a deleted head branch, a base pushed
//   meanwhile) leaves the schedule waiting; any other refusal (a conflict, the scheduler no longer
//   allowed to merge, the style switched off) cancels it with a `pull_cancel_scheduled_merge`
//   entry saying why and a notification to the scheduler (Forgejo only logs it).
// - Triggers: a `success` commit status in the base repository for a scheduled pull request's
//   head commit; a push to its head or base branch (the schedule stays on a new head commit and is
//   judged on it, as Forgejo keeps it); `reconsider` (reviews: approvals given or dismissed); the
//   scheduling itself (nothing blocking: it merges at once); and every schedule once at start
//   (a trigger a crash lost).
// - Exactly once: the merge's commit is written on the schedule just before the base branch moves
//   to it; an evaluation that finds that commit already in the base branch and the pull request
//   not recorded as merged (a crash between the two) finishes that merge instead of making another.
import { Context, Effect, Layer, Option } from "effect"
import * as Events from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import type { RepoRule } from "../http/Access.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { DeliveryQueue } from "../jobs/Queue.ts"
import { ProtectionService } from "../protection/Service.ts"
import { type OpenedRepository, RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { AUTOMERGE_TOPIC, type AutoMergeRow, AutoMergeStore } from "./AutoMergeStore.ts"
import type { MethodNotAllowed } from "./Errors.ts"
import { PullsRepo } from "./Repo.ts"
import { type MergeRequest, mayLiftLater, PullsService } from "./Service.ts"

/** What the merge route asks of its caller (src/pulls/Api.ts `writeUnarchived`). */
const MERGE_RULE: RepoRule = { role: "read", unit: "pulls", changes: "mirrors" }

const messageOf = (error: Errors.ApiError | MethodNotAllowed): string =>
  error instanceof Errors.NotFound
    ? "the pull request or its repository can no longer be found"
    : "message" in error && typeof error.message === "string" && error.message !== ""
      ? error.message
      : "the merge was refused"

export class AutoMerge extends Context.Service<
  AutoMerge,
  {
    /**
     * `DELETE /pulls/{index}/merge`: 404 without a schedule; 403 unless the caller scheduled it or
     * may merge the pull request (Forgejo's `IsUserAllowedToMerge`); else deleted with a
     * `pull_cancel_scheduled_merge` entry.
     */
    readonly cancel: (opened: OpenedRepository, index: string) => Effect.Effect<void, Errors.ApiError>
    /** Queues an evaluation of the pull request's schedule, if it has one (reviews call it when approvals change). */
    readonly reconsider: (pullId: number) => Effect.Effect<void>
    /** One evaluation now (the job's work); fails with a message when it should be tried again. */
    readonly evaluate: (pullId: number) => Effect.Effect<void, string>
    /** Starts the evaluations' listener and queues one for every schedule (`serve`). */
    readonly start: Effect.Effect<void>
  }
>()("hearth/pulls/AutoMerge") {
  static readonly layer = Layer.effect(
    AutoMerge,
    Effect.gen(function* () {
      const store = yield* AutoMergeStore
      const pulls = yield* PullsService
      const pullRows = yield* PullsRepo
      const repos = yield* ReposService
      const repoRows = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const protection = yield* ProtectionService
      const hub = yield* EventHub
      const queue = yield* DeliveryQueue
      const context = yield* Effect.context<never>()

      const cancel = (opened: OpenedRepository, index: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const loaded = yield* pulls.get(opened, index)
          const row = yield* store.find(loaded.pull.id)
          if (Option.isNone(row)) return yield* Errors.notFound()
          if (row.value.doerId !== caller.user.id) {
            const decision = yield* protection.mergeBlockers(loaded.base, loaded.pull.baseBranch, {
              doer: caller.user,
              approvals: [],
              statuses: [],
              outdated: false
            })
            if (!decision.userMayMerge) {
              return yield* Errors.forbidden("user has no permission to cancel the scheduled auto merge")
            }
          }
          const cancelled = yield* store.cancel(loaded.pull.id, loaded.issue.id, caller.user.id)
          if (Option.isNone(cancelled)) return yield* Errors.notFound()
        })

      /** A failed scheduled merge: cancelled with the reason on the timeline, and its scheduler told. */
      const fail = (
        row: AutoMergeRow,
        scheduler: UserRow,
        opened: OpenedRepository,
        issueId: number,
        index: number,
        reason: string
      ) =>
        Effect.gen(function* () {
          yield* Effect.logWarning(
            `the scheduled merge of ${opened.owner.name}/${opened.repo.name}#${index} failed and was cancelled: ${reason}`
          )
          const comment = yield* store.cancel(row.pullId, issueId, row.doerId, `The scheduled merge failed: ${reason}`)
          if (Option.isNone(comment)) return
          yield* hub.publish({
            _tag: "PullAutoMergeFailed",
            ...Events.subject(opened.owner, opened.repo, scheduler),
            issue: { id: issueId, index, isPull: true },
            commentId: comment.value
          })
        })

      const evaluate = (pullId: number): Effect.Effect<void, string> =>
        Effect.gen(function* () {
          const found = yield* store.find(pullId)
          if (Option.isNone(found)) return
          const row = found.value
          const pull = Option.getOrUndefined(yield* pullRows.byId(pullId))
          if (pull === undefined) return
          if (pull.hasMerged) return yield* store.remove(pullId)
          const repo = Option.getOrUndefined(yield* repoRows.findById(pull.baseRepoId))
          const owner = repo === undefined ? undefined : Option.getOrUndefined(yield* users.findById(repo.ownerId))
          const scheduler = Option.getOrUndefined(yield* users.findById(row.doerId))
          if (repo === undefined || owner === undefined || scheduler === undefined) return
          // The scheduler as the merge's caller, with the permissions they have now.
          const principal: Principal = { user: scheduler, scopes: undefined, method: "password" }
          const opened: OpenedRepository = {
            owner,
            repo,
            access: yield* policy.access(principal, repo, owner),
            path: repos.pathOf(owner, repo),
            caller: principal
          }
          if (!scheduler.isActive || scheduler.prohibitLogin) {
            return yield* fail(
              row,
              scheduler,
              opened,
              pull.issueId,
              pull.index,
              `${scheduler.name} can no longer sign in`
            )
          }
          const refused = repoRefusal(principal, opened, MERGE_RULE)
          if (refused !== undefined) {
            const why =
              refused.kind === "archived"
                ? "the repository is archived"
                : `${scheduler.name} may no longer merge pull requests of this repository`
            return yield* fail(row, scheduler, opened, pull.issueId, pull.index, why)
          }
          const loaded = yield* Effect.orDie(pulls.get(opened, String(pull.index)))
          // A merge a crash cut off after the base branch moved: finished, not made again.
          if (row.mergingCommit !== null && row.mergingBase !== null) {
            const tip = yield* Effect.map(
              Effect.orDie(Git.revParse(opened.path, `refs/heads/${pull.baseBranch}`)),
              Option.getOrUndefined
            )
            if (
              tip !== undefined &&
              (tip === row.mergingCommit || (yield* Merge.isAncestor(opened.path, row.mergingCommit, tip)))
            ) {
              yield* Effect.logInfo(
                `finishing the scheduled merge of ${owner.name}/${repo.name}#${pull.index} that an earlier run cut off`
              )
              return yield* pulls
                .completeMerge(loaded, principal, row.mergingCommit, row.mergingBase, row.deleteBranch)
                .pipe(Effect.catch((e) => Effect.logWarning(`after the scheduled merge: ${messageOf(e)}`)))
            }
            yield* store.clearIntent(pullId)
          }
          // Forgejo: nothing happens while the head branch is gone.
          const head = loaded.head
          if (head === undefined) return
          const headTip = yield* Effect.orDie(Git.revParse(head.path, `refs/heads/${pull.headBranch}`))
          if (Option.isNone(headTip)) return
          const request: MergeRequest = {
            style: row.style,
            title: row.title,
            message: row.message,
            mergeCommitId: "",
            headCommitId: "",
            forceMerge: false,
            whenChecksSucceed: false,
            deleteBranch: row.deleteBranch
          }
          const outcome = yield* pulls
            .merge(opened, String(pull.index), request, {
              beforeMove: (commit, baseSha) => store.setIntent(pullId, commit, baseSha),
              scheduled: true
            })
            .pipe(Effect.result)
          if (outcome._tag === "Success") return
          const error = outcome.failure
          const now = Option.getOrUndefined(yield* pullRows.byId(pullId))
          if (now === undefined) return
          // Merged after all: what failed came after (deleting the head branch), only logged (Forgejo).
          if (now.hasMerged) {
            return yield* Effect.logWarning(
              `${owner.name}/${repo.name}#${pull.index} was merged as scheduled, but: ${messageOf(error)}`
            )
          }
          if (mayLiftLater(error)) return
          yield* fail(row, scheduler, opened, pull.issueId, pull.index, messageOf(error))
        })

      // --- triggers ---

      const unique = (rows: ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>) => [
        ...new Map(rows.map((r) => [r.id, r])).values()
      ]

      yield* hub.subscribe({
        name: "scheduled merges",
        // Schedules are evaluated whenever; never what a change's caller waits for.
        afterAnswer: true,
        handle: (event) => {
          switch (event._tag) {
            case "CommitStatus":
              return event.state === "success"
                ? Effect.flatMap(store.withHeadSha(event.repo.id, event.sha), store.evaluate)
                : Effect.void
            // Approvals given or taken back (a dismissed rejection may unblock a merge too).
            case "PullRequestReview":
            case "PullRequestReviewDismiss":
              return Effect.flatMap(store.ofIssue(event.issue.id), store.evaluate)
            case "PushCommits":
              return Effect.gen(function* () {
                const found: Array<{ readonly id: number; readonly baseRepoId: number }> = []
                for (const moved of event.refs) {
                  if (!moved.ref.startsWith("refs/heads/") || moved.after === Events.ZERO_ID) continue
                  found.push(...(yield* store.onBranch(event.repo.id, moved.ref.slice("refs/heads/".length))))
                }
                yield* store.evaluate(unique(found))
              })
            default:
              return Effect.void
          }
        }
      })

      // --- the listener ---

      const abort = new AbortController()
      let started = false
      const listening: Array<Promise<void>> = []
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          abort.abort()
          return Promise.allSettled(listening)
        })
      )

      const start = Effect.gen(function* () {
        if (started) return
        started = true
        yield* Effect.flatMap(store.all, store.evaluate)
        listening.push(
          queue.listen(
            AUTOMERGE_TOPIC,
            async (claimed) => {
              let pullId: number
              try {
                pullId = Number((JSON.parse(claimed.payload) as { pullId: unknown }).pullId)
              } catch {
                return { error: "the queued evaluation could not be read", final: true }
              }
              return Effect.runPromiseWith(context)(
                evaluate(pullId).pipe(
                  Effect.match({ onFailure: (error) => ({ error }), onSuccess: () => ({}) }),
                  Effect.catchDefect((defect) => Effect.succeed({ error: String(defect) }))
                )
              )
            },
            { attempts: 5, retryDelayMs: 5_000, concurrency: 2, signal: abort.signal }
          )
        )
      })

      return AutoMerge.of({ cancel, reconsider: store.reconsider, evaluate, start })
    })
  )
}

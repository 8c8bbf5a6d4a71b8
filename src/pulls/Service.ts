// Pull requests (Forgejo's services/pull, routers/api/v1/repo/pull.go; CONTRACT-PULLS §2, §4–§8,
// §10): a pull request is an issue (src/issues writes it, its labels, milestone, assignees and
// their events) plus its row here, and `refs/pull/{n}/head` in the base repository.
//
// - Head commits: `refs/pull/{n}/head` follows the head branch. A push to the head (the event hub's
//   PushCommits) moves it, for a fork after fetching the commits into the base repository, so that
//   everything about a pull request (diff, commits, merge) reads the base repository alone. A
//   branch deleted (PushCommits with a zero `after`) closes the open pull requests it was the head
//   or base of (§11, `CloseBranchPulls`).
// - Mergeability: a job per pull request on the durable queue (topic `pulls:check`, one at a time
//   per pull request), queued on creation and after every push to its head or base; it runs
//   `git merge-tree --write-tree` and stores the result with the two commits it compared, so a
//   repeated job for commits already checked costs two ref reads, and after a push that moved the
//   base forward the merge base and counts follow from the stored ones (Merge.compareSince). A
//   merge that finds the check not current runs it itself (it needs the answer); other requests
//   never do.
// - Merging: the new commit is made without a work tree (src/git/Merge.ts) and the base branch
//   moved by compare-and-swap through the Repository entity: a push to the base meanwhile fails
//   the merge with 409 and loses nothing.
// - Scheduling (`merge_when_checks_succeed`, §9): after the merge's own checks, minus the rule's
//   blockers (what a schedule waits for), the schedule is recorded through AutoMergeStore;
//   AutoMerge.ts fires it through `merge`, as the user who scheduled it.
import { Array as Arr, Context, Effect, Layer, Option } from "effect"
import * as Reader from "../branches/Service.ts"
import { Settings } from "../config/Settings.ts"
import * as Events from "../events/Events.ts"
import { EventHub, type Known } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import * as Readers from "../git/Readers.ts"
import { type RepositoryRef, RepositoryWriter } from "../git/Repository.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import { signatureAt } from "../git/Write.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { isPoster, isWriter, MERGED_STATE_REFUSED } from "../issues/Policy.ts"
import { commentType, isWorkInProgress } from "../issues/Present.ts"
import { type IssueRow, IssuesRepo } from "../issues/Repo.ts"
import type { Issue } from "../issues/Schema.ts"
import { IssuesService } from "../issues/Service.ts"
import { type Claimed, DeliveryQueue, type Outcome } from "../jobs/Queue.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { batcher } from "../lib/Batcher.ts"
import { branchNameProblem } from "../lib/Names.ts"
import { MergeReasons } from "../protection/Policy.ts"
import { mergeRefusal, ProtectionService } from "../protection/Service.ts"
import { type OpenedRepository, type RepoAccess, RepoPolicy } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { reviewFacts } from "../reviews/Policy.ts"
import { ReviewsRepo } from "../reviews/Repo.ts"
import { StatusesRepo } from "../statuses/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { gitIdentity } from "../users/Schema.ts"
import { AutoMergeStore } from "./AutoMergeStore.ts"
import { MethodNotAllowed, methodNotAllowed } from "./Errors.ts"
import { mayMerge, mayPushTo } from "./Policy.ts"
import {
  type CheckResult,
  type PullFilter,
  type PullForCheck,
  type PullRow,
  type PullSort,
  type PullStats,
  PullStatus,
  PullsRepo,
  type PullWithIssue
} from "./Repo.ts"
import { type CreatePullRequestOption, type EditPullRequestOption, MERGE_DO, type MergeDo } from "./Schema.ts"

type ServiceError = Errors.ApiError | MethodNotAllowed

export const CHECK_TOPIC = "pulls:check"

const T = {
  deleteBranch: commentType("delete_branch"),
  changeTargetBranch: commentType("change_target_branch"),
  mergePull: commentType("merge_pull"),
  pullPush: commentType("pull_push")
}

/** The ref of a pull request's head in its base repository. */
export const pullRef = (index: number) => `refs/pull/${index}/head`

/**
 * Mergeability checks: `CHECK_CONCURRENCY` at a time (one or two git processes each; the rest of
 * the machine is left to requests: with two at a time on 2 cores, reads while 200 checks ran were
 * 23.0 ms p99 on PostgreSQL and 28.7 ms embedded, with one 16.1 and 26.6 ms, the 200 current in
 * 2.8 and 4.3 s instead of 1.9 and 2.7 s; infra/bench/README.md, issue 19, session 37), queued
 * under `CHECK_KEYS` ordering keys (a pull request always under the same one, so its checks stay
 * in order), taken `CHECK_RUN` of a key at a time: the 200 checks a push to a base queues are a
 * few claims of the queue, not one each, their pull requests are read `CHECK_READ_AHEAD` at a
 * time, and their results stored up to `CHECK_SAVE_MAX` at a time (those finished within
 * `CHECK_SAVE_MS` of the first waiting). A push marks and queues them `CHECK_MARK_SLICE` at a time.
 */
const CHECK_CONCURRENCY = 1
const CHECK_KEYS = 8
const CHECK_RUN = 25
const CHECK_READ_AHEAD = 10
const CHECK_NICENESS = 10
const CHECK_SAVE_MS = 50
const CHECK_SAVE_MAX = 100
const CHECK_MARK_SLICE = 50
const checkKeyOf = (pullId: number) => `pull-check:${pullId % CHECK_KEYS}`
const checkedPullOf = (claimed: Claimed): number | undefined => {
  try {
    const id = Number((JSON.parse(claimed.payload) as { pullId: unknown }).pullId)
    return Number.isSafeInteger(id) && id > 0 ? id : undefined
  } catch {
    return undefined
  }
}
const headsRef = (branch: string) => `refs/heads/${branch}`

/** A repository with its owner, path and the viewer's access. */
export interface Side {
  readonly repo: RepoRow
  readonly owner: UserRow
  readonly path: string
}

/** A pull request with its issue and both repositories (the head's when it still exists). */
export interface Loaded {
  readonly pull: PullRow
  readonly issue: IssueRow
  readonly base: Side
  readonly head: Side | undefined
}

export interface PullListQuery {
  readonly state?: string | undefined
  readonly sort?: string | undefined
  readonly milestone?: string | undefined
  readonly labels?: ReadonlyArray<string> | undefined
  readonly poster?: string | undefined
}

const SORTS: ReadonlyArray<PullSort> = [
  "oldest",
  "recentupdate",
  "leastupdate",
  "recentclose",
  "mostcomment",
  "leastcomment",
  "priority",
  "nearduedate",
  "farduedate"
]

/** What a merge was asked for (MergePullRequestOption, keys already matched). */
export interface MergeRequest {
  readonly style: MergeDo
  readonly title: string
  readonly message: string
  readonly mergeCommitId: string
  readonly headCommitId: string
  readonly forceMerge: boolean
  readonly whenChecksSucceed: boolean
  readonly deleteBranch: boolean | undefined
  /**
   * The base branch's tip the merge was asked against (the web's merge box sends the one its page
   * showed): when the base moved since, the merge is refused (409) and nothing merged. Not part of
   * Forgejo's MergePullRequestOption; the API never sets it.
   */
  readonly baseCommitId?: string | undefined
}

/** What a scheduled merge (AutoMerge.ts) asks of a merge besides the request. */
export interface MergeHooks {
  /** Runs with the merge's commit just before the base branch moves to it. */
  readonly beforeMove?: ((commit: string, baseSha: string) => Effect.Effect<void>) | undefined
  /** The merge is a schedule's (its events say so: Forgejo's AutoMergePullRequest). */
  readonly scheduled?: boolean | undefined
}

/** Texts of the merge's refusals that time may lift; a scheduled merge waits on them (AutoMerge.ts). */
const WAIT = {
  closed: "the pull request is closed: reopen it before merging",
  wip: "Work in progress PRs cannot be merged",
  later: "Please try again later",
  blocked: "not allowed to merge [reason: ",
  baseMoved: "moved while the pull request was being merged"
}

/**
 * Whether a merge's refusal is one a scheduled merge waits on (closed, work in progress, not yet
 * checked, blocked by the base branch's rule — statuses, approvals, an outdated head —, or its
 * base pushed meanwhile) rather than one that makes it fail.
 */
export const mayLiftLater = (error: ServiceError): boolean =>
  (error instanceof MethodNotAllowed &&
    (error.message === WAIT.closed ||
      error.message === WAIT.wip ||
      error.message === WAIT.later ||
      error.message.startsWith(WAIT.blocked))) ||
  (error instanceof Errors.Conflict && error.message.includes(WAIT.baseMoved))

/** What an AGit push opens a pull request with. */
export interface AgitInput {
  readonly baseBranch: string
  readonly headBranch: string
  readonly headSha: string
  readonly title: string
  readonly body: string
}

const bool = (value: unknown) => value === true || value === "true" || value === "on" || value === "1"
const str = (value: unknown) =>
  typeof value === "string" ? value : value === undefined || value === null ? "" : String(value)

/** MergePullRequestOption as Forgejo binds it: `Do` required and one of the styles (422 `[Do]: Required` / `[Do]: In`). */
export const parseMergeRequest = (
  body: Record<string, unknown>
): Effect.Effect<MergeRequest, Errors.ValidationFailed> => {
  const style = str(body.Do)
  if (style === "") return Effect.fail(Errors.validationFailed("[Do]: Required"))
  if (!(MERGE_DO as ReadonlyArray<string>).includes(style)) return Effect.fail(Errors.validationFailed("[Do]: In"))
  return Effect.succeed({
    style: style as MergeDo,
    title: str(body.MergeTitleField).trim(),
    message: str(body.MergeMessageField).trim(),
    mergeCommitId: str(body.MergeCommitID).trim(),
    headCommitId: str(body.head_commit_id).trim(),
    forceMerge: bool(body.force_merge),
    whenChecksSucceed: bool(body.merge_when_checks_succeed),
    deleteBranch: body.delete_branch_after_merge === undefined ? undefined : bool(body.delete_branch_after_merge)
  })
}

/** Whether the repository's pull request settings allow `style` (Forgejo's `IsMergeStyleAllowed`). */
const styleAllowed = (repo: RepoRow, style: MergeDo): boolean => {
  const p = repo.pulls
  switch (style) {
    case "merge":
      return p.allowMerge
    case "rebase":
      return p.allowRebase
    case "rebase-merge":
      return p.allowRebaseMerge
    case "squash":
      return p.allowSquash
    case "fast-forward-only":
      return p.allowFastForwardOnly
    case "manually-merged":
      return p.allowManualMerge
  }
}

export class PullsService extends Context.Service<
  PullsService,
  {
    readonly create: (opened: OpenedRepository, input: CreatePullRequestOption) => Effect.Effect<Loaded, ServiceError>
    readonly list: (
      opened: OpenedRepository,
      query: PullListQuery,
      page: Page
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<Loaded>; readonly total: number }, ServiceError>
    readonly get: (opened: OpenedRepository, index: string) => Effect.Effect<Loaded, ServiceError>
    readonly pinned: (opened: OpenedRepository) => Effect.Effect<ReadonlyArray<Loaded>>
    /** The pull request whose merge made commit `sha` (its `merge_commit_sha`), or 404. */
    readonly byMergeCommit: (opened: OpenedRepository, sha: string) => Effect.Effect<Loaded, ServiceError>
    readonly getByBaseHead: (
      opened: OpenedRepository,
      base: string,
      head: string
    ) => Effect.Effect<Loaded, ServiceError>
    readonly edit: (
      opened: OpenedRepository,
      index: string,
      input: EditPullRequestOption
    ) => Effect.Effect<Loaded, ServiceError>
    readonly isMerged: (opened: OpenedRepository, index: string) => Effect.Effect<boolean, ServiceError>
    /**
     * The commit title and body a merge of `style` gets by default, as the web's merge box
     * prefills them (Forgejo's `GetDefaultMergeMessage`, and `GetSquashMergeCommitMessages` for a
     * squash's body: the commits' messages, oldest first). The API uses the title only (its body
     * is discarded, CONTRACT-PULLS §8.3); rebase and fast-forward take none.
     */
    readonly defaultMergeMessage: (
      loaded: Loaded,
      style: MergeDo
    ) => Effect.Effect<{ readonly title: string; readonly body: string }>
    /** Merges now, or schedules the merge (`merge_when_checks_succeed`, §9: "scheduled"). */
    readonly merge: (
      opened: OpenedRepository,
      index: string,
      request: MergeRequest,
      hooks?: MergeHooks
    ) => Effect.Effect<"merged" | "scheduled", ServiceError>
    /**
     * Finishes a merge whose base branch already moved from `baseSha` to `commit` (one a crash cut
     * off before it was recorded): recorded, its events, the head branch deleted if asked.
     */
    readonly completeMerge: (
      loaded: Loaded,
      doer: Principal,
      commit: string,
      baseSha: string,
      deleteBranch: boolean
    ) => Effect.Effect<void, ServiceError>
    readonly update: (opened: OpenedRepository, index: string, style: string) => Effect.Effect<void, ServiceError>
    /**
     * Deletes the head branch of a merged or closed pull request (Forgejo's web `CleanUpPullRequest`):
     * refused while it is open or when the branch has commits the pull request does not; nothing
     * when another open pull request still uses it.
     */
    readonly deleteBranch: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    /**
     * `base...head` (or `base..head`) of the repository, `head` possibly `owner:branch` of a fork
     * (whose commits are fetched into the repository, as a pull request's would be): the two
     * commits, in the repository's objects (Forgejo's `parseCompareInfo`).
     */
    readonly compare: (
      opened: OpenedRepository,
      basehead: string
    ) => Effect.Effect<{ readonly base: string; readonly head: string }, ServiceError>
    /** The open AGit pull request of `headBranch` (`{user}/{topic}`) into `baseBranch`, if any. */
    readonly findAgit: (
      opened: OpenedRepository,
      baseBranch: string,
      headBranch: string
    ) => Effect.Effect<Option.Option<Loaded>>
    /**
     * Opens an AGit pull request (Forgejo's services/agit `ProcReceive`) by the caller: its head
     * `headSha` lives only in `refs/pull/{n}/head`, `headBranch` is the name it shows.
     */
    readonly openAgit: (opened: OpenedRepository, input: AgitInput) => Effect.Effect<Loaded, ServiceError>
    /** An AGit pull request's head moved to `after` by `doer`'s push: as a push to a head branch. */
    readonly pushAgit: (loaded: Loaded, doer: UserRow, after: string) => Effect.Effect<{ readonly forced: boolean }>
    /** Runs the mergeability check of a pull request now (the job's work). */
    readonly check: (pullId: number) => Effect.Effect<void>
    /** Re-reads a pull request with its repositories (after a change). */
    readonly reload: (loaded: Loaded) => Effect.Effect<Loaded>
    /** Starts the mergeability jobs' listener and queues the checks a previous run left undone (`serve`). */
    readonly start: Effect.Effect<void>
    /**
     * Queues a check for every open pull request still marked as being checked: those whose job a
     * crash lost between marking them and queueing it (run by `start`).
     */
    readonly resume: Effect.Effect<void>
  }
>()("hearth/pulls/PullsService") {
  static readonly layer = Layer.effect(
    PullsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const pulls = yield* PullsRepo
      const issueRows = yield* IssuesRepo
      const issues = yield* IssuesService
      const repoRows = yield* ReposRepo
      const repos = yield* ReposService
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const hub = yield* EventHub
      const queue = yield* DeliveryQueue
      const writer = yield* RepositoryWriter
      // Merge commits are signed by the instance when [repository.signing] MERGES says so.
      const signing = yield* CommitSigner
      const protection = yield* ProtectionService
      const statuses = yield* StatusesRepo
      const autoMerges = yield* AutoMergeStore
      const reviews = yield* ReviewsRepo
      const context = yield* Effect.context<never>()

      const refOf = (side: Side): RepositoryRef => ({ id: side.repo.id, dir: side.path })
      const sideOf = (repo: RepoRow) =>
        Effect.map(users.findById(repo.ownerId), (owner) =>
          Option.map(owner, (o): Side => ({ repo, owner: o, path: repos.pathOf(o, repo) }))
        )
      const baseOf = (opened: OpenedRepository): Side => ({ repo: opened.repo, owner: opened.owner, path: opened.path })

      // Refs and trees are read through long-lived `cat-file --batch` readers (one per repository,
      // ended when idle), not a `git rev-parse` process each: a merge, and each of the checks a
      // push to a base branch queues, read the base tip and a tree this way.
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => new Readers.BatchPool(8)),
        (p) => Effect.sync(() => p.close())
      )
      const commitOf = (path: string, ref: string) =>
        Effect.map(Effect.orDie(Readers.commitThrough(pool, path, ref)), Option.getOrUndefined)
      const resolve = (path: string, ref: string) => Effect.map(commitOf(path, ref), (found) => found?.commit)
      const branchSha = (path: string, branch: string) =>
        branchNameProblem(branch) !== undefined ? Effect.succeed(undefined) : resolve(path, headsRef(branch))

      const load = (pull: PullRow, base?: Side, knownIssue?: IssueRow) =>
        Effect.gen(function* () {
          const issue = knownIssue ?? Option.getOrThrow(yield* issueRows.issueById(pull.issueId))
          let baseSide = base
          if (baseSide === undefined) {
            const row = Option.getOrThrow(yield* repoRows.findById(pull.baseRepoId))
            baseSide = Option.getOrThrow(yield* sideOf(row))
          }
          let head: Side | undefined
          if (pull.headRepoId === baseSide.repo.id) head = baseSide
          else if (pull.headRepoId !== null) {
            const row = yield* repoRows.findById(pull.headRepoId)
            if (Option.isSome(row)) head = Option.getOrUndefined(yield* sideOf(row.value))
          }
          return { pull, issue, base: baseSide, head } satisfies Loaded
        })

      /** A page of pull requests of one base repository (read with their issues), each head repository read once. */
      const loadMany = (rows: ReadonlyArray<PullWithIssue>, base: Side) =>
        Effect.gen(function* () {
          const heads = new Map<number, Side | undefined>([[base.repo.id, base]])
          const out: Array<Loaded> = []
          for (const { pull, issue } of rows) {
            let head: Side | undefined
            if (pull.headRepoId !== null) {
              if (!heads.has(pull.headRepoId)) {
                const row = yield* repoRows.findById(pull.headRepoId)
                heads.set(
                  pull.headRepoId,
                  Option.isSome(row) ? Option.getOrUndefined(yield* sideOf(row.value)) : undefined
                )
              }
              head = heads.get(pull.headRepoId)
            }
            out.push({ pull, issue, base, head })
          }
          return out
        })

      const reload = (loaded: Loaded) =>
        Effect.flatMap(pulls.byId(loaded.pull.id), (row) => load(Option.getOrThrow(row), loaded.base))

      const findPull = (opened: OpenedRepository, index: string) =>
        Effect.gen(function* () {
          const n = /^\d{1,15}$/.test(index) ? Number(index) : 0
          if (n < 1) return yield* Errors.notFound()
          const found = yield* pulls.byIndex(opened.repo.id, n)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return yield* load(found.value.pull, baseOf(opened), found.value.issue)
        })

      const subjectOf = (side: Side, doer: Pick<UserRow, "id" | "name">) => Events.subject(side.owner, side.repo, doer)
      const issueRef = (issue: IssueRow): Events.IssueRef => ({ id: issue.id, index: issue.index, isPull: true })

      // --- mergeability (§2) ---

      const enqueueChecks = (rows: ReadonlyArray<Pick<PullRow, "id" | "baseRepoId">>) =>
        rows.length === 0
          ? Effect.void
          : queue.enqueue(
              CHECK_TOPIC,
              rows.map((pull) => ({
                payload: JSON.stringify({ pullId: pull.id }),
                orderingKey: checkKeyOf(pull.id),
                kind: "pull-check",
                repoId: pull.baseRepoId
              }))
            )

      /** The mergeability of `pull` for the base branch's tip and its head now (Forgejo's `testPatch`). */
      const compute = (pull: PullRow, basePath: string, baseTip?: { readonly sha: string | undefined }) =>
        Effect.gen(function* () {
          const headSha = pull.headSha
          // The base tip as the caller just read it (`checkIsCurrent`), else read here: once per check.
          const baseSha = baseTip !== undefined ? baseTip.sha : yield* branchSha(basePath, pull.baseBranch)
          if (baseSha === undefined || headSha === "") {
            return {
              status: PullStatus.error,
              mergeBase: pull.mergeBase,
              conflictedFiles: [],
              commitsAhead: 0,
              commitsBehind: 0,
              baseSha: baseSha ?? "",
              headSha
            } satisfies CheckResult
          }
          // The merge base and both counts from the stored check's when the base only moved forward
          // past them (no process), else from one `rev-list` (a second process only after merges).
          const since = yield* Merge.compareSince(
            pool,
            basePath,
            {
              base: pull.checkedBaseSha,
              head: pull.checkedHeadSha,
              mergeBase: pull.mergeBase,
              ahead: pull.commitsAhead,
              behind: pull.commitsBehind
            },
            baseSha,
            headSha
          )
          const compared = Option.isSome(since)
            ? since.value
            : yield* Effect.map(Merge.compare(basePath, baseSha, headSha), (c) => ({
                ...c,
                mergeBase: Option.getOrElse(c.mergeBase, () => baseSha)
              }))
          const { ahead, behind, mergeBase } = compared
          // The list shows these stored (Present.ts); counted again only when the merge base or head moved.
          const stats: PullStats =
            headSha === mergeBase
              ? { mergeBase, headSha, files: 0, additions: 0, deletions: 0 }
              : pull.stats.mergeBase === mergeBase && pull.stats.headSha === headSha
                ? pull.stats
                : { mergeBase, headSha, ...(yield* Merge.shortStat(basePath, mergeBase, headSha)) }
          const result = { mergeBase, commitsAhead: ahead, commitsBehind: behind, baseSha, headSha, stats }
          if (headSha === mergeBase) return { ...result, status: PullStatus.ancestor, conflictedFiles: [] }
          const merged = yield* Merge.mergeTrees(basePath, baseSha, headSha)
          if (merged._tag === "Conflict")
            return { ...result, status: PullStatus.conflict, conflictedFiles: merged.files }
          if (merged._tag === "Unrelated") return { ...result, status: PullStatus.conflict, conflictedFiles: [] }
          // Nothing to merge when the merged tree is the merge base's own (tree ids compared: no `diff-tree`).
          const empty = (yield* commitOf(basePath, mergeBase))?.tree === merged.tree
          return { ...result, status: empty ? PullStatus.empty : PullStatus.mergeable, conflictedFiles: [] }
        })

      /**
       * Whether the stored check is for the commits the base branch and head are at now, with the
       * base tip it read (for `compute`, so that a check reads it once).
       */
      const checkIsCurrent = (pull: PullRow, basePath: string) =>
        Effect.gen(function* () {
          const baseSha = yield* branchSha(basePath, pull.baseBranch)
          const current =
            pull.status !== PullStatus.checking &&
            pull.checkedBaseSha === (baseSha ?? "") &&
            pull.checkedHeadSha === pull.headSha
          return { current, baseTip: { sha: baseSha } }
        })

      /** What a queued check of the pull request read for it finds; nothing when there is nothing to store (gone, merged, current). */
      const checkResult = (found: PullForCheck | undefined) =>
        Effect.gen(function* () {
          if (found === undefined || found.pull.hasMerged) return undefined
          const owner = yield* users.findById(found.baseOwnerId)
          if (Option.isNone(owner)) return undefined
          const path = repos.pathOf(owner.value, { lowerName: found.baseLowerName })
          const row = found.pull
          const { stats, headSha, mergeBase } = row
          const statsCurrent = stats.headSha === headSha && stats.mergeBase === mergeBase
          const known = statsCurrent ? yield* checkIsCurrent(row, path) : undefined
          if (known?.current === true) return undefined
          return { id: row.id, result: yield* compute(row, path, known?.baseTip) }
        })

      const check = (found: PullForCheck | undefined) =>
        Effect.flatMap(checkResult(found), (checked) =>
          checked === undefined ? Effect.void : Effect.asVoid(pulls.saveCheck(checked.id, checked.result))
        )

      // The queue's checks store their results together (one statement for those finished within
      // `CHECK_SAVE_MS` of each other, not one each); a check's queue row goes once its result is stored.
      const saveLater = batcher(
        (checks: ReadonlyArray<{ readonly id: number; readonly result: CheckResult }>) =>
          Effect.runPromiseWith(context)(pulls.saveChecks(checks)),
        CHECK_SAVE_MAX,
        CHECK_SAVE_MS
      )

      /** The check run in a request that needs its answer (a merge): stored, and returned re-read. */
      const ensureChecked = (loaded: Loaded) =>
        Effect.gen(function* () {
          const known = yield* checkIsCurrent(loaded.pull, loaded.base.path)
          if (known.current) return loaded
          yield* pulls.saveCheck(loaded.pull.id, yield* compute(loaded.pull, loaded.base.path, known.baseTip))
          return yield* reload(loaded)
        })

      // --- the head ref ---

      /**
       * Points `refs/pull/{n}/head` of the base repository at `sha` (fetched from a fork first), from
       * whatever it points at now.
       */
      const moveHeadRef = (base: Side, head: Side, index: number, sha: string) =>
        Effect.gen(function* () {
          if (head.repo.id !== base.repo.id) yield* Merge.fetchCommit(base.path, head.path, sha)
          const ref = pullRef(index)
          const current = yield* resolve(base.path, ref)
          if (current === sha) return
          yield* writer
            .updateRefs(refOf(base), [{ ref, newSha: sha, oldSha: current ?? Git.ZERO_SHA }])
            .pipe(
              Effect.catch((e) => Effect.logWarning(`could not move ${ref} of ${base.owner.name}/${base.repo.name}`, e))
            )
        })

      /** The commits `before..after` as the `pull_push` comment lists them, oldest first (at most 100). */
      const commitIds = (path: string, before: string | undefined, after: string) =>
        Effect.map(
          Effect.orDie(
            Git.inRepo(path, [
              "rev-list",
              "--reverse",
              "--max-count=100",
              "--end-of-options",
              after,
              ...(before === undefined ? [] : [`^${before}`]),
              "--"
            ])
          ),
          (r) =>
            r.stdout
              .toString("utf8")
              .split("\n")
              .filter((l) => l.length > 0)
        )

      // --- pushes (the event hub) ---

      /**
       * A pull request's head moved to `after` (a push to its head branch, or an AGit push): its
       * ref and row follow, a `pull_push` comment lists the new commits (a non-fast-forward one
       * lists the old and new tips), and `pull_request_sync` is published. The check is the caller's.
       */
      const followHead = (loaded: Loaded, pushed: Side, doer: Events.Doer, after: string) =>
        Effect.gen(function* () {
          const { pull } = loaded
          yield* moveHeadRef(loaded.base, pushed, loaded.issue.index, after)
          yield* pulls.setHead(pull.id, after)
          const previous = pull.headSha === "" ? undefined : pull.headSha
          const forced = previous !== undefined && !(yield* Merge.isAncestor(loaded.base.path, previous, after))
          const ids = yield* commitIds(loaded.base.path, forced ? undefined : previous, after)
          const at = new Date()
          yield* issueRows.insertComment({
            issueId: pull.issueId,
            type: T.pullPush,
            posterId: doer.id,
            body: JSON.stringify({ is_force_push: forced, commit_ids: forced ? [previous, after] : ids }),
            at
          })
          yield* issueRows.touchIssue(pull.issueId, at)
          yield* hub.publish({
            _tag: "PullRequestSynchronized",
            ...subjectOf(loaded.base, doer),
            issue: issueRef(loaded.issue),
            before: previous ?? Events.ZERO_ID,
            after
          })
          return { forced }
        })

      /** The open pull requests whose head (a branch, not an AGit name) or base is `branch`: one statement. */
      const withBranch = (repoId: number, branch: string) =>
        Effect.map(pulls.openWithBranch(repoId, branch), (rows) => ({
          // An AGit pull request's head is no branch, whatever the name it shows (`{user}/{topic}`).
          heads: rows.filter((p) => p.headRepoId === repoId && p.headBranch === branch && p.flow === 0),
          bases: rows.filter((p) => p.baseRepoId === repoId && p.baseBranch === branch)
        }))

      /** A push moved `branch` of `repo` from `before` to `after`: the pull requests it is the head or base of follow. */
      const onBranchMoved = (
        event: Events.Event & { _tag: "PushCommits" },
        known: Known,
        branch: string,
        _before: string,
        after: string
      ) =>
        Effect.gen(function* () {
          if (after === Events.ZERO_ID) return
          // The pushed repository as its producer holds it (a merge), else read.
          const pushedSide =
            known.repo?.id === event.repo.id && known.owner?.id === known.repo.ownerId
              ? Option.some<Side>({
                  repo: known.repo,
                  owner: known.owner,
                  path: repos.pathOf(known.owner, known.repo)
                })
              : yield* Effect.flatMap(repoRows.findById(event.repo.id), (row) =>
                  Option.isNone(row) ? Effect.succeedNone : sideOf(row.value)
                )
          if (Option.isNone(pushedSide)) return
          const doer = { id: event.doer.id, name: event.doer.name }
          const { heads, bases } = yield* withBranch(event.repo.id, branch)
          for (const head of heads) {
            if (head.headSha === after) continue
            const pull = yield* pulls.byId(head.id)
            if (Option.isSome(pull)) yield* followHead(yield* load(pull.value), pushedSide.value, doer, after)
          }
          // Marked and queued `CHECK_MARK_SLICE` at a time: on the embedded database a statement
          // holds the server's thread, and 200 rows in one went to 5–9 ms while requests waited.
          for (const slice of Arr.chunksOf([...heads, ...bases], CHECK_MARK_SLICE)) {
            yield* pulls.markChecking(slice.map((p) => p.id))
            yield* enqueueChecks(slice)
          }
        })

      /**
       * §11 (Forgejo's `CloseBranchPulls`, run by the push processing for a deleted branch): the open
       * pull requests whose head (a branch, not an AGit name) or base was `branch` of the repository
       * are closed in the deleter's name, a `close` comment and `pull_request`/`closed` each. A merge
       * that deletes its head branch retargets the children first (§8.5), so only those it skipped,
       * or all of them with retargeting off, are closed here. One with open dependencies stays open,
       * as in Forgejo.
       */
      const onBranchDeleted = (event: Events.Event & { _tag: "PushCommits" }, branch: string) =>
        Effect.gen(function* () {
          // Whole rows: each is loaded and closed (the push's slim list would cost a read per row).
          // An AGit pull request's head is no branch, whatever the name it shows.
          const heads = (yield* pulls.openWithHead(event.repo.id, branch)).filter((p) => p.flow === 0)
          const bases = yield* pulls.openWithBase(event.repo.id, branch)
          const done = new Set<number>()
          for (const pull of [...heads, ...bases]) {
            if (done.has(pull.id)) continue
            done.add(pull.id)
            const loaded = yield* load(pull)
            yield* issues.closeAs(loaded.base, loaded.issue, event.doer)
          }
        })

      yield* hub.subscribe({
        name: "pull requests",
        handle: (event, known) =>
          event._tag !== "PushCommits"
            ? Effect.void
            : Effect.forEach(
                event.refs.filter((r) => r.ref.startsWith("refs/heads/")),
                (r) => {
                  const branch = r.ref.slice("refs/heads/".length)
                  // A mirror's sync closes nothing (Forgejo's SyncDeleteRef); a mirror takes no pull requests.
                  if (r.after === Events.ZERO_ID)
                    return event.via === "mirror" ? Effect.void : onBranchDeleted(event, branch)
                  return onBranchMoved(event, known, branch, r.before, r.after)
                },
                { discard: true }
              )
      })

      const abort = new AbortController()
      let started = false
      const listening: Array<Promise<void>> = []
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          abort.abort()
          return Promise.allSettled(listening)
        })
      )

      const resume = Effect.flatMap(pulls.openChecking, enqueueChecks)
      const readAhead = new WeakMap<ReadonlyArray<Claimed>, Map<number, PullForCheck | undefined>>()

      const start = Effect.gen(function* () {
        if (started) return
        started = true
        // Checks a previous run queued but never finished are still queued; these were marked
        // and their jobs never queued (a crash between the two).
        yield* resume
        listening.push(
          queue.listen(
            CHECK_TOPIC,
            async (claimed, run) => {
              const pullId = checkedPullOf(claimed)
              if (pullId === undefined) return { error: "the queued check could not be read", final: true }
              // The pull requests of the run's next checks, read together when this one is not
              // known yet; each used once (a later check of the same pull request reads it again).
              let known = readAhead.get(run)
              if (known === undefined) {
                known = new Map()
                readAhead.set(run, known)
              }
              if (!known.has(pullId)) {
                const at = run.indexOf(claimed)
                const ids = [
                  ...new Set(
                    run
                      .slice(Math.max(0, at), Math.max(0, at) + CHECK_READ_AHEAD)
                      .flatMap((c) => checkedPullOf(c) ?? [])
                  )
                ]
                const found = await Effect.runPromiseWith(context)(pulls.forChecks(ids))
                for (const id of ids) known.set(id, found.get(id))
              }
              const found = known.get(pullId)
              known.delete(pullId)
              return Effect.runPromiseWith(context)(
                checkResult(found).pipe(
                  // Nobody waits on a check: its git processes give way to the requests' work.
                  Effect.provideService(Git.Niceness, CHECK_NICENESS),
                  Effect.match({
                    // Not retried: a retry would hold back the checks behind it in its key; the
                    // next push to either branch checks it again.
                    onFailure: (error) => ({ error: String(error), final: true }),
                    // The next check goes while the result waits for its statement.
                    onSuccess: (checked): Outcome => (checked === undefined ? {} : { settled: saveLater(checked) })
                  }),
                  Effect.catchDefect((defect) => Effect.succeed({ error: String(defect), final: true }))
                )
              )
            },
            {
              attempts: 5,
              retryDelayMs: 5_000,
              concurrency: CHECK_CONCURRENCY,
              run: CHECK_RUN,
              signal: abort.signal
            }
          )
        )
      })

      // --- create (§4) ---

      /** The repository a `head` of `owner:branch` names: the base itself, the owner's fork of it, or the base's parent. */
      const headRepositoryOf = (base: Side, ownerName: string | undefined) =>
        Effect.gen(function* () {
          if (ownerName === undefined || ownerName.toLowerCase() === base.owner.name.toLowerCase()) return base
          const owner = yield* users.findByName(ownerName)
          if (Option.isNone(owner)) return yield* Errors.notFound()
          const fork = (yield* repoRows.forksOf(base.repo.id)).find((r) => r.ownerId === owner.value.id)
          if (fork !== undefined) return { repo: fork, owner: owner.value, path: repos.pathOf(owner.value, fork) }
          if (base.repo.forkId !== null) {
            const parent = yield* repoRows.findById(base.repo.forkId)
            if (Option.isSome(parent) && parent.value.ownerId === owner.value.id) {
              return { repo: parent.value, owner: owner.value, path: repos.pathOf(owner.value, parent.value) }
            }
          }
          return yield* Errors.notFound()
        })

      const duplicateMessage = (existing: PullRow) =>
        `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.index}, head_repo_id: ${existing.headRepoId}, base_repo_id: ${existing.baseRepoId}, head_branch: ${existing.headBranch}, base_branch: ${existing.baseBranch}]`

      const accessFor = (viewer: Principal | undefined, side: Side): Effect.Effect<RepoAccess> =>
        policy.access(viewer, side.repo, side.owner)

      const create = (opened: OpenedRepository, input: CreatePullRequestOption) =>
        Effect.gen(function* () {
          if (opened.caller === undefined) return yield* Errors.unauthorized("token is required")
          const headInput = input.head ?? ""
          const baseBranch = input.base ?? ""
          if (headInput === "") return yield* Errors.validationFailed("[Head]: Required")
          if (baseBranch === "") return yield* Errors.validationFailed("[Base]: Required")
          if ((input.title ?? "").trim() === "") return yield* Errors.validationFailed("[Title]: Required")
          if (headInput === baseBranch) {
            return yield* Errors.validationFailed(
              "Invalid PullRequest: There are no changes between the head and the base"
            )
          }
          const parts = headInput.split(":")
          if (parts.length > 2) return yield* Errors.notFound()
          const [headOwner, headBranch] = parts.length === 2 ? [parts[0]!, parts[1]!] : [undefined, parts[0]!]
          const base = baseOf(opened)
          const baseSha = yield* branchSha(base.path, baseBranch)
          if (baseSha === undefined) return yield* Errors.notFound()
          const head = yield* headRepositoryOf(base, headOwner)
          // The caller must be able to read the head repository's code (Forgejo: 404).
          if (head.repo.id !== base.repo.id && !atLeast((yield* accessFor(opened.caller, head)).code, "read")) {
            return yield* Errors.notFound()
          }
          const headSha = yield* branchSha(head.path, headBranch)
          if (headSha === undefined) return yield* Errors.notFound()
          if (head.repo.id === base.repo.id && headBranch === baseBranch) {
            return yield* Errors.validationFailed(
              "Invalid PullRequest: There are no changes between the head and the base"
            )
          }
          const existing = yield* pulls.openBetween(base.repo.id, baseBranch, head.repo.id, headBranch)
          if (Option.isSome(existing)) return yield* Errors.conflict(duplicateMessage(existing.value))
          if (input.milestone !== undefined && input.milestone !== null && input.milestone > 0) {
            const [milestone] = yield* issueRows.milestonesByIds([input.milestone])
            if (milestone === undefined || milestone.repoId !== base.repo.id) return yield* Errors.notFound()
          }
          // The head's commits in the base repository before anything refers to them.
          if (head.repo.id !== base.repo.id) yield* Merge.fetchCommit(base.path, head.path, headSha)
          return yield* openWith(
            opened,
            {
              title: input.title ?? null,
              body: input.body ?? null,
              assignee: input.assignee ?? null,
              assignees: input.assignees ?? null,
              milestone: input.milestone ?? null,
              labels: input.labels ?? null,
              due_date: input.due_date ?? null
            },
            { head, baseBranch, baseSha, headBranch, headSha, flow: 0 }
          )
        })

      /** The issue and row of a new pull request, its `pull_push` comment, its head ref and its first check. */
      const openWith = (
        opened: OpenedRepository,
        issueInput: Parameters<typeof issues.create>[1],
        at: {
          readonly head: Side
          readonly baseBranch: string
          readonly baseSha: string
          readonly headBranch: string
          readonly headSha: string
          readonly flow: number
        }
      ) =>
        Effect.gen(function* () {
          const base = baseOf(opened)
          const { head, baseBranch, baseSha, headBranch, headSha } = at
          const mergeBase = Option.getOrElse(yield* Merge.mergeBase(base.path, baseSha, headSha), () => baseSha)
          const ids = yield* commitIds(base.path, mergeBase, headSha)
          let created: PullRow | undefined
          const issue: Issue = yield* issues.create(opened, issueInput, {
            within: (row) =>
              Effect.gen(function* () {
                created = yield* pulls.insert({
                  issueId: row.id,
                  baseRepoId: base.repo.id,
                  baseBranch,
                  headRepoId: head.repo.id,
                  headBranch,
                  headSha,
                  mergeBase,
                  flow: at.flow
                })
                if (ids.length > 0) {
                  yield* issueRows.insertComment({
                    issueId: row.id,
                    type: T.pullPush,
                    posterId: opened.caller!.user.id,
                    body: JSON.stringify({ is_force_push: false, commit_ids: ids }),
                    at: row.createdAt
                  })
                }
              })
          })
          const pull = created!
          yield* moveHeadRef(base, head, issue.number, headSha)
          yield* enqueueChecks([pull])
          return yield* load(pull, base)
        })

      // --- AGit (Forgejo's services/agit) ---

      const openAgit = (opened: OpenedRepository, input: AgitInput) =>
        Effect.gen(function* () {
          const base = baseOf(opened)
          const baseSha = yield* branchSha(base.path, input.baseBranch)
          if (baseSha === undefined) return yield* Errors.notFound()
          return yield* openWith(
            opened,
            { title: input.title, body: input.body },
            { ...input, head: base, baseSha, flow: 1 }
          )
        })

      /**
       * The caller's open AGit pull request into `baseBranch` for `headBranch` (`{caller}/{topic}`):
       * found by its poster and topic, so that a poster who renamed their account updates the same
       * pull request, whose head branch then takes the new name (Forgejo's agit.UserNameChanged
       * rewrites it at the rename; Hearth at the next push). Another account that took the old
       * name never reaches it.
       */
      const findAgit = (opened: OpenedRepository, baseBranch: string, headBranch: string) =>
        Effect.gen(function* () {
          const poster = opened.caller?.user
          const cut = headBranch.indexOf("/")
          if (poster === undefined || cut < 0) return Option.none<Loaded>()
          const found = yield* pulls.openAgit(opened.repo.id, baseBranch, poster.id, headBranch.slice(cut + 1))
          if (Option.isNone(found)) return Option.none<Loaded>()
          let row = found.value
          if (row.headBranch !== headBranch) {
            yield* pulls.setHeadBranch(row.id, headBranch)
            row = { ...row, headBranch }
          }
          return Option.some(yield* load(row, baseOf(opened)))
        })

      const pushAgit = (loaded: Loaded, doer: UserRow, after: string) =>
        Effect.gen(function* () {
          const moved = yield* followHead(loaded, loaded.base, doer, after)
          yield* pulls.markChecking([loaded.pull.id])
          yield* enqueueChecks([loaded.pull])
          return moved
        })

      // --- list and get (§5) ---

      const list = (opened: OpenedRepository, query: PullListQuery, page: Page) =>
        Effect.gen(function* () {
          let posterId: number | undefined
          if (query.poster !== undefined && query.poster !== "") {
            const poster = yield* users.findByName(query.poster)
            if (Option.isNone(poster))
              return yield* Errors.badRequest(`user does not exist [uid: 0, name: ${query.poster}]`)
            posterId = poster.value.id
          }
          const labelIds: Array<number> = []
          for (const raw of query.labels ?? []) {
            if (!/^\d+$/.test(raw)) return yield* Errors.validationFailed(`[labels]: "${raw}" is not a label id`)
            labelIds.push(Number(raw))
          }
          const milestone = query.milestone !== undefined && /^\d+$/.test(query.milestone) ? Number(query.milestone) : 0
          const filter: PullFilter = {
            baseRepoId: opened.repo.id,
            // Forgejo: without `state` every pull request is listed; open and closed narrow it.
            state: query.state === "open" ? "open" : query.state === "closed" ? "closed" : "all",
            sort: SORTS.find((s) => s === query.sort) ?? "newest",
            milestoneId: milestone > 0 ? milestone : undefined,
            labelIds,
            posterId
          }
          const found = yield* pulls.list(filter, page)
          const base = baseOf(opened)
          return { rows: yield* loadMany(found.rows, base), total: found.total }
        })

      const getByBaseHead = (opened: OpenedRepository, baseBranch: string, headInput: string) =>
        Effect.gen(function* () {
          const base = baseOf(opened)
          let ownerName: string | undefined
          let repoName = base.repo.name
          let branch = headInput
          const colon = headInput.indexOf(":")
          if (colon >= 0) {
            const who = headInput.slice(0, colon)
            branch = headInput.slice(colon + 1)
            const slash = who.indexOf("/")
            ownerName = slash < 0 ? who : who.slice(0, slash)
            if (slash >= 0) repoName = who.slice(slash + 1)
          }
          let headRepoId = base.repo.id
          if (ownerName !== undefined && ownerName.toLowerCase() !== base.owner.name.toLowerCase()) {
            const owner = yield* users.findByName(ownerName)
            if (Option.isNone(owner)) return yield* Errors.notFound()
            const repo = yield* repoRows.findByName(owner.value.id, repoName)
            if (Option.isNone(repo)) return yield* Errors.notFound()
            headRepoId = repo.value.id
          }
          const found = yield* pulls.anyBetween(base.repo.id, baseBranch, headRepoId, branch)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return yield* load(found.value, base)
        })

      /**
       * Moves a pull request to `newBase` (Forgejo's `ChangeTargetBranch`, the checks done): a
       * `change_target_branch` comment by `doer`, the check re-run at once, and `edited` with `ref.from`.
       */
      const changeBase = (loaded: Loaded, doer: UserRow, newBase: string) =>
        Effect.gen(function* () {
          const { pull, issue } = loaded
          const at = new Date()
          yield* pulls.setBase(pull.id, newBase)
          yield* issueRows.insertComment({
            issueId: issue.id,
            type: T.changeTargetBranch,
            posterId: doer.id,
            oldRef: pull.baseBranch,
            newRef: newBase,
            at
          })
          yield* issueRows.touchIssue(issue.id, at)
          // Forgejo re-tests at once on a base change.
          const moved = yield* reload(loaded)
          yield* pulls.saveCheck(pull.id, yield* compute(moved.pull, moved.base.path))
          yield* hub.publish({
            _tag: "Issues",
            ...subjectOf(loaded.base, doer),
            issue: issueRef(issue),
            action: "edited",
            changes: { ref: { from: pull.baseBranch } }
          })
        })

      /**
       * §11 (Forgejo's `RetargetChildrenOnMerge`): before the head branch of a merged pull request
       * goes, the open pull requests of the same repository based on it move to its base. Only when
       * the head was a branch of the base repository, and both the instance's
       * RETARGET_CHILDREN_ON_MERGE and the repository's own switch are on. A child that cannot move
       * (a pull request from that head into the new base is already open, or its head is the new
       * base) is left where it is: Forgejo skips the first and fails the merge's answer with a 500
       * on the second, after the merge; Hearth skips both and says so in the log.
       */
      const retargetChildren = (merged: Loaded, doer: UserRow) =>
        Effect.gen(function* () {
          const { pull, base } = merged
          if (!settings["repository.pull-request"].RETARGET_CHILDREN_ON_MERGE) return
          if (!base.repo.pulls.retargetChildrenOnMerge || pull.headRepoId !== base.repo.id) return
          for (const child of yield* pulls.openWithBase(base.repo.id, pull.headBranch)) {
            if (child.id === pull.id) continue
            const blocked =
              (child.headRepoId === base.repo.id && child.headBranch === pull.baseBranch) ||
              (child.headRepoId !== null &&
                Option.isSome(
                  yield* pulls.openBetween(base.repo.id, pull.baseBranch, child.headRepoId, child.headBranch)
                ))
            if (blocked) {
              yield* Effect.logInfo(
                `pull request #${child.index} of ${base.owner.name}/${base.repo.name} stays on ${pull.headBranch}: it cannot be retargeted to ${pull.baseBranch}`
              )
              continue
            }
            yield* changeBase(yield* load(child, base), doer, pull.baseBranch)
          }
        })

      // --- edit (§6) ---

      const edit = (opened: OpenedRepository, index: string, input: EditPullRequestOption) =>
        Effect.gen(function* () {
          const loaded = yield* findPull(opened, index)
          const { pull, issue } = loaded
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const writer_ = isWriter(opened)
          if (!writer_ && !isPoster(caller, issue)) {
            return yield* Errors.forbidden("user should be the poster or have write permission")
          }
          // Every refusal first, so that a refused request changes nothing.
          if (input.state !== undefined && input.state !== null && pull.hasMerged) {
            return yield* Errors.preconditionFailed(MERGED_STATE_REFUSED)
          }
          const newBase =
            input.base !== undefined && input.base !== null && input.base !== "" && input.base !== pull.baseBranch
              ? input.base
              : undefined
          if (newBase !== undefined && !pull.hasMerged) {
            if ((yield* branchSha(loaded.base.path, newBase)) === undefined) {
              return yield* Errors.notFound()
            }
            // Forgejo changes the base after the state: a pull request closed then (or before) is refused.
            const endsClosed =
              input.state !== undefined && input.state !== null ? input.state === "closed" : issue.isClosed
            if (endsClosed) {
              return yield* Errors.validationFailed(
                `issue is closed [id: ${issue.id}, repo_id: ${issue.repoId}, index: ${issue.index}]`
              )
            }
            if (pull.headRepoId === loaded.base.repo.id && pull.headBranch === newBase) {
              return yield* Errors.validationFailed(
                `the base branch cannot be the head branch of the pull request [branch: ${newBase}]`
              )
            }
            if (pull.headRepoId !== null) {
              const other = yield* pulls.openBetween(loaded.base.repo.id, newBase, pull.headRepoId, pull.headBranch)
              if (Option.isSome(other)) return yield* Errors.conflict(duplicateMessage(other.value))
            }
          }
          if (input.allow_maintainer_edit !== undefined && input.allow_maintainer_edit !== null) {
            const onHead = loaded.head === undefined ? undefined : yield* accessFor(caller, loaded.head)
            if (!isPoster(caller, issue) || onHead === undefined || !mayPushTo(onHead)) {
              return yield* Errors.forbidden("SetAllowEdits: user not allowed to do this action")
            }
          }
          // Title, body, deadline, assignees and milestone: the issue's own edit, with its comments and events.
          yield* issues.edit(opened, index, {
            ...(input.title !== undefined ? { title: input.title } : {}),
            ...(input.body !== undefined ? { body: input.body } : {}),
            ...(input.due_date !== undefined ? { due_date: input.due_date } : {}),
            ...(input.unset_due_date !== undefined ? { unset_due_date: input.unset_due_date } : {}),
            ...(input.assignee !== undefined ? { assignee: input.assignee } : {}),
            ...(input.assignees !== undefined ? { assignees: input.assignees } : {}),
            ...(input.milestone !== undefined ? { milestone: input.milestone } : {})
          })
          if (writer_ && input.labels !== undefined && input.labels !== null) {
            yield* issues.changeIssueLabels(opened, index, "replace", input.labels, undefined)
          }
          if (input.state !== undefined && input.state !== null) {
            // Forgejo: "closed" closes, any other value reopens.
            yield* issues.edit(opened, index, { state: input.state === "closed" ? "closed" : "open" })
          }
          const current = yield* reload(loaded)
          if (newBase !== undefined && !current.pull.hasMerged) yield* changeBase(current, caller.user, newBase)
          if (input.allow_maintainer_edit !== undefined && input.allow_maintainer_edit !== null) {
            yield* pulls.setAllowMaintainerEdit(pull.id, input.allow_maintainer_edit)
          }
          return yield* reload(loaded)
        })

      // --- merge (§8) ---

      const defaultTitle = (loaded: Loaded, style: MergeDo) => {
        const { issue, pull, base, head } = loaded
        if (style === "squash") return `${issue.title} (#${issue.index})`
        const from =
          head === undefined
            ? `<deleted>:${pull.headBranch}`
            : head.repo.id === base.repo.id
              ? pull.headBranch
              : `${head.owner.name}/${head.repo.name}:${pull.headBranch}`
        return `Merge pull request '${issue.title}' (#${issue.index}) from ${from} into ${pull.baseBranch}`
      }

      /** The squash's default body: each commit's message as `* message`, oldest first (at most 50). */
      const squashBody = (loaded: Loaded) =>
        Effect.gen(function* () {
          const { pull, base } = loaded
          if (pull.headSha === "") return ""
          const tip = Option.getOrUndefined(
            yield* Effect.orDie(Git.revParse(base.path, `refs/heads/${pull.baseBranch}`))
          )
          const start =
            pull.hasMerged || tip === undefined
              ? pull.mergeBase
              : Option.getOrElse(yield* Merge.mergeBase(base.path, tip, pull.headSha), () => tip)
          const listed = yield* Reader.listCommits(
            base.path,
            pull.headSha,
            { offset: 0, limit: 50 },
            undefined,
            start === "" ? undefined : start
          )
          return listed.commits
            .map((c) => c.message.trim())
            .filter((m) => m !== "")
            .reverse()
            .map((m) => `* ${m}`)
            .join("\n\n")
        })

      const defaultMergeMessage = (loaded: Loaded, style: MergeDo) =>
        Effect.gen(function* () {
          if (style === "rebase" || style === "fast-forward-only" || style === "manually-merged")
            return { title: "", body: "" }
          return {
            title: defaultTitle(loaded, style),
            body: style === "squash" ? yield* squashBody(loaded) : ""
          }
        })

      /** The commit the base branch moves to for `style` (no ref moved yet). */
      const mergeCommit = (loaded: Loaded, request: MergeRequest, baseSha: string, doer: UserRow) =>
        Effect.gen(function* () {
          const { base, pull } = loaded
          const path = base.path
          const headSha = pull.headSha
          const now = new Date()
          const doerSig = signatureAt(gitIdentity(settings, doer), now)
          // [repository.signing] MERGES (Forgejo's SignMerge); `approved`: the base branch has a
          // rule and the pull request at least one approval it counts, as many as it requires.
          const approved = Effect.gen(function* () {
            const facts = reviewFacts(yield* reviews.ofIssue(loaded.issue.id))
            const decision = yield* protection.mergeBlockers(base, pull.baseBranch, {
              doer,
              ...facts,
              statuses: [],
              outdated: false
            })
            return (
              decision.rule !== undefined &&
              !decision.reasons.includes(MergeReasons.approvals) &&
              facts.approvals.some((a) => a.official)
            )
          })
          const sign = yield* signing.decide("MERGES", {
            doer,
            repoPath: path,
            merge: { base: baseSha, head: headSha, approved }
          })
          const title = request.title !== "" ? request.title : defaultTitle(loaded, request.style)
          const message = `${request.message !== "" ? `${title}\n\n${request.message}` : title}\n`
          const conflict = (files: ReadonlyArray<string>) =>
            Errors.conflict(
              files.length === 0
                ? "the pull request cannot be merged: its head and base have no common history"
                : `the pull request cannot be merged: merge conflict in ${files.join(", ")}`
            )
          const mergeWith = (tip: string) =>
            Effect.gen(function* () {
              const merged = yield* Merge.mergeTrees(path, baseSha, tip)
              if (merged._tag !== "Clean") return yield* conflict(merged._tag === "Conflict" ? merged.files : [])
              return merged.tree
            })
          const rebased = Merge.rebase(path, {
            onto: baseSha,
            upstream: baseSha,
            head: headSha,
            committer: doerSig
          }).pipe(
            Effect.catchTag("RebaseConflict", (e) =>
              Effect.fail(
                Errors.conflict(
                  `the pull request cannot be rebased: commit ${e.commit} conflicts${e.files.length > 0 ? ` in ${e.files.join(", ")}` : ""}`
                )
              )
            )
          )
          // Whether the base is in the head (a fast-forward): from the stored check when it is for
          // these two commits (its merge base is the base tip exactly then), else asked of git; only
          // the styles that need it ask.
          const checked =
            pull.checkedBaseSha === baseSha &&
            pull.checkedHeadSha === headSha &&
            (pull.status === PullStatus.mergeable || pull.status === PullStatus.empty)
          const isUpToDate = checked
            ? Effect.succeed(pull.mergeBase === baseSha)
            : Merge.isAncestor(path, baseSha, headSha)
          switch (request.style) {
            case "merge": {
              const tree = yield* mergeWith(headSha)
              return yield* Merge.commitTree(
                path,
                { tree, parents: [baseSha, headSha], message, author: doerSig, committer: doerSig },
                sign
              )
            }
            case "squash": {
              const tree = yield* mergeWith(headSha)
              const poster = yield* users.findById(loaded.issue.posterId)
              const author = Option.isSome(poster) ? signatureAt(gitIdentity(settings, poster.value), now) : doerSig
              return yield* Merge.commitTree(
                path,
                { tree, parents: [baseSha], message, author, committer: doerSig },
                sign
              )
            }
            case "fast-forward-only":
              if (!(yield* isUpToDate)) {
                return yield* Errors.conflict(
                  "the base branch has commits the head branch does not have: a fast-forward-only merge is not possible; update the branch first"
                )
              }
              return headSha
            case "rebase":
              // Nothing to replay onto: the head is fast-forwarded, its commits unchanged (as `git rebase`).
              return (yield* isUpToDate) ? headSha : yield* rebased
            case "rebase-merge": {
              const tip = (yield* isUpToDate) ? headSha : yield* rebased
              const tree = yield* Merge.treeOf(path, tip)
              return yield* Merge.commitTree(
                path,
                { tree, parents: [baseSha, tip], message, author: doerSig, committer: doerSig },
                sign
              )
            }
            case "manually-merged":
              return yield* Effect.die("manual merges make no commit")
          }
        })

      /**
       * Records the merge: merged, its schedule dropped (Forgejo deletes it silently), closed unless
       * it is, with a `merge_pull` comment; false when someone else recorded one first. One
       * statement (PullsRepo.recordMerged), not a transaction of seven.
       */
      const recordMerge = (loaded: Loaded, doer: UserRow, commit: string, at: Date, status?: PullStatus) =>
        pulls.recordMerged(
          { id: loaded.pull.id, issueId: loaded.issue.id },
          { by: doer.id, at, commit, status, commentType: T.mergePull }
        )

      // The rows the merge holds go with its events (`Known`): the subscribers need not read them again.
      const publishMerged = (loaded: Loaded, doer: UserRow, at: Date, scheduled = false) =>
        hub.publishKnown(
          {
            _tag: "Issues",
            ...subjectOf(loaded.base, doer),
            issue: issueRef(loaded.issue),
            action: "closed",
            merged: true,
            ...(scheduled ? { autoMerged: true } : {})
          },
          {
            issue: { ...loaded.issue, isClosed: true, closedAt: loaded.issue.closedAt ?? at, updatedAt: at },
            repo: loaded.base.repo,
            owner: loaded.base.owner
          }
        )

      /** §8.5: the head branch goes after a merge, unless another open pull request still uses it. */
      const deleteHeadBranch = (loaded: Loaded, doer: Principal) =>
        Effect.gen(function* () {
          const { pull, head } = loaded
          // An AGit pull request's head is no branch (a branch of that name is someone else's).
          if (head === undefined || pull.flow === 1) return
          const others = (yield* pulls.openWithHead(head.repo.id, pull.headBranch)).filter((p) => p.id !== pull.id)
          if (others.length > 0) return
          if (!mayPushTo(yield* accessFor(doer, head))) {
            return yield* Errors.forbidden("insufficient permission to delete head branch")
          }
          const sha = yield* branchSha(head.path, pull.headBranch)
          if (sha === undefined) return
          // Forgejo retargets the children before it refuses to delete a default branch.
          yield* retargetChildren(loaded, doer.user)
          if (pull.headBranch === head.repo.defaultBranch) {
            return yield* Errors.forbidden("the head branch is the default branch")
          }
          yield* writer
            .updateRefs(refOf(head), [{ ref: headsRef(pull.headBranch), newSha: Git.ZERO_SHA, oldSha: sha }])
            .pipe(
              Effect.catch(() => Effect.fail(Errors.conflict("the head branch moved meanwhile: it was not deleted")))
            )
          yield* issueRows.insertComment({
            issueId: pull.issueId,
            type: T.deleteBranch,
            posterId: doer.user.id,
            oldRef: pull.headBranch,
            at: new Date()
          })
          yield* hub.publish(
            Events.pushed(head.owner, head.repo, doer.user, "api", [Events.deleted(headsRef(pull.headBranch), sha)])
          )
        })

      const manualMerge = (loaded: Loaded, request: MergeRequest, doer: Principal) =>
        Effect.gen(function* () {
          const { base, pull } = loaded
          if (!styleAllowed(base.repo, "manually-merged")) {
            return yield* methodNotAllowed("manually-merged is not an allowed merge style for this repository")
          }
          const commit = request.mergeCommitId.toLowerCase()
          const baseSha = yield* branchSha(base.path, pull.baseBranch)
          const exists = Git.isSha(commit) && (yield* resolve(base.path, `${commit}^{commit}`)) === commit
          if (!exists || baseSha === undefined || !(yield* Merge.isAncestor(base.path, commit, baseSha))) {
            return yield* Errors.conflict(
              `MergeCommitID must be the full id of a commit on the base branch ${pull.baseBranch}`
            )
          }
          const authored = yield* Effect.orDie(
            Git.inRepo(base.path, ["log", "-1", "--format=%at", "--end-of-options", commit, "--"])
          )
          const at = new Date(Number(authored.stdout.toString("utf8").trim()) * 1000)
          if (!(yield* recordMerge(loaded, doer.user, commit, at, PullStatus.manuallyMerged))) {
            return yield* methodNotAllowed("the pull request has already been merged")
          }
          yield* publishMerged(loaded, doer.user, at)
          return "merged" as const
        })

      /** After the base branch moved from `baseSha` to `commit`: the merge recorded, its events, the head branch deleted if asked (§8.4, §8.5). */
      const afterMove = (
        loaded: Loaded,
        doer: Principal,
        commit: string,
        baseSha: string,
        deleteBranch: boolean,
        scheduled: boolean
      ) =>
        Effect.gen(function* () {
          const { base, pull } = loaded
          const at = new Date()
          const first = yield* recordMerge(loaded, doer.user, commit, at)
          yield* hub.publishKnown(
            Events.pushed(base.owner, base.repo, doer.user, "api", [
              { ref: headsRef(pull.baseBranch), before: baseSha, after: commit }
            ]),
            { repo: base.repo, owner: base.owner }
          )
          if (!first) return yield* Errors.conflict("the pull request was merged by someone else meanwhile")
          yield* publishMerged(loaded, doer.user, at, scheduled)
          if (deleteBranch) yield* deleteHeadBranch(yield* reload(loaded), doer)
        })

      const merge = (opened: OpenedRepository, index: string, request: MergeRequest, hooks?: MergeHooks) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          let loaded = yield* findPull(opened, index)
          if (loaded.pull.hasMerged) return yield* methodNotAllowed("the pull request has already been merged")
          if (loaded.issue.isClosed) return yield* methodNotAllowed(WAIT.closed)
          if (!mayMerge(opened)) return yield* methodNotAllowed("User not allowed to merge PR")
          if (request.style === "manually-merged") return yield* manualMerge(loaded, request, caller)
          if (isWorkInProgress(loaded.issue.title)) return yield* methodNotAllowed(WAIT.wip)
          loaded = yield* ensureChecked(loaded)
          switch (loaded.pull.status) {
            case PullStatus.conflict:
              return yield* Errors.conflict(
                loaded.pull.conflictedFiles.length === 0
                  ? "the pull request cannot be merged: its head and base have no common history"
                  : `the pull request cannot be merged: merge conflict in ${loaded.pull.conflictedFiles.join(", ")}`
              )
            case PullStatus.ancestor:
              return yield* methodNotAllowed(
                "there is nothing to merge: the head branch is already contained in the base branch"
              )
            case PullStatus.mergeable:
            case PullStatus.empty:
              break
            default:
              return yield* methodNotAllowed(WAIT.later)
          }
          // The base branch's protection rule (Forgejo's `CheckPullBranchProtections`): the merge
          // whitelist, required status contexts of the head commit, an outdated head, approvals,
          // rejections and official review requests (src/reviews), `apply_to_admins`;
          // `force_merge` for admins it allows.
          // The statuses and reviews are read only when a rule covers the base branch.
          const decision = yield* protection.mergeBlockers(
            loaded.base,
            loaded.pull.baseBranch,
            { doer: caller.user, approvals: [], statuses: [], outdated: loaded.pull.commitsBehind > 0 },
            Effect.gen(function* () {
              const latest = yield* statuses.latest(loaded.base.repo.id, loaded.pull.headSha, undefined)
              return {
                ...reviewFacts(yield* reviews.ofIssue(loaded.issue.id)),
                statuses: latest.rows.map((row) => ({ context: row.context, state: row.state }))
              }
            })
          )
          // A schedule (§9) ignores the rule's blockers (they are what it waits for), not who may merge.
          const refused =
            request.whenChecksSucceed && decision.userMayMerge ? undefined : mergeRefusal(decision, request.forceMerge)
          if (refused !== undefined) return yield* methodNotAllowed(refused)
          const { base, pull } = loaded
          if (request.whenChecksSucceed) {
            yield* autoMerges.schedule({
              pull,
              doerId: caller.user.id,
              style: request.style,
              title: request.title !== "" ? request.title : defaultTitle(loaded, request.style),
              message: request.message,
              deleteBranch: request.deleteBranch ?? base.repo.pulls.defaultDeleteBranchAfterMerge
            })
            return "scheduled" as const
          }
          if (request.baseCommitId !== undefined && request.baseCommitId !== loaded.pull.checkedBaseSha) {
            return yield* Errors.conflict(
              `the base branch ${loaded.pull.baseBranch} moved since the merge was asked for: nothing was merged; look at the pull request again`
            )
          }
          if (request.headCommitId !== "") {
            const tip =
              loaded.head === undefined || pull.flow === 1
                ? undefined
                : yield* branchSha(loaded.head.path, pull.headBranch)
            if (request.headCommitId !== (tip ?? pull.headSha)) return yield* Errors.conflict("head out of date")
          }
          if (!styleAllowed(base.repo, request.style)) {
            return yield* methodNotAllowed(`${request.style} is not an allowed merge style for this repository`)
          }
          const baseSha = loaded.pull.checkedBaseSha
          const commit = yield* mergeCommit(loaded, request, baseSha, caller.user)
          if (hooks?.beforeMove !== undefined) yield* hooks.beforeMove(commit, baseSha)
          // Compare-and-swap: a push to the base since the check refuses the merge, nothing lost.
          yield* writer
            .updateRefs(refOf(base), [{ ref: headsRef(pull.baseBranch), newSha: commit, oldSha: baseSha }])
            .pipe(
              Effect.catch((e) =>
                Effect.fail(
                  e.reason === "conflict"
                    ? Errors.conflict(
                        `the base branch ${pull.baseBranch} ${WAIT.baseMoved} (a push?): nothing was merged, try again`
                      )
                    : Errors.refusal(e.reason, e.message)
                )
              )
            )
          const deleteBranch = request.deleteBranch ?? base.repo.pulls.defaultDeleteBranchAfterMerge
          yield* afterMove(loaded, caller, commit, baseSha, deleteBranch, hooks?.scheduled === true)
          return "merged" as const
        })

      const deleteBranch = (opened: OpenedRepository, index: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const loaded = yield* findPull(opened, index)
          const { pull, head } = loaded
          if (!pull.hasMerged && !loaded.issue.isClosed) {
            return yield* Errors.validationFailed("the pull request is still open: its head branch stays")
          }
          if (head === undefined || pull.flow === 1) return yield* Errors.notFound()
          const tip = yield* branchSha(head.path, pull.headBranch)
          if (tip === undefined) return yield* Errors.notFound()
          if (tip !== pull.headSha) {
            return yield* Errors.conflict("the head branch has commits the pull request does not: it was not deleted")
          }
          yield* deleteHeadBranch(loaded, caller)
        })

      // --- update branch (§10) ---

      const update = (opened: OpenedRepository, index: string, style: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const loaded = yield* ensureChecked(yield* findPull(opened, index))
          const { pull, head, base } = loaded
          if (pull.hasMerged || loaded.issue.isClosed) {
            return yield* Errors.validationFailed("the pull request is closed or merged: its branch cannot be updated")
          }
          // Forgejo's IsUserAllowedToUpdate: an AGit pull request has no branch to update.
          if (pull.flow === 1)
            return yield* Errors.forbidden("user is not allowed to update this pull request's branch")
          if (head === undefined) return yield* Errors.notFound()
          const rebase = style === "rebase"
          const onHead = yield* accessFor(caller, head)
          const allowed = mayPushTo(onHead) || (pull.allowMaintainerEdit && atLeast(opened.access.code, "write"))
          if (!allowed || (rebase && !head.repo.pulls.allowRebaseUpdate)) {
            return yield* Errors.forbidden("user is not allowed to update this pull request's branch")
          }
          const baseSha = pull.checkedBaseSha
          const headSha = yield* branchSha(head.path, pull.headBranch)
          if (headSha === undefined) return yield* Errors.notFound()
          if (pull.commitsBehind === 0) {
            return yield* Errors.validationFailed("the head branch is already up to date with the base branch")
          }
          const now = new Date()
          const doer = signatureAt(gitIdentity(settings, caller.user), now)
          let tip: string
          if (rebase) {
            tip = yield* Merge.rebase(base.path, {
              onto: baseSha,
              upstream: baseSha,
              head: pull.headSha,
              committer: doer
            }).pipe(
              Effect.catchTag("RebaseConflict", () => Effect.fail(Errors.conflict("rebase failed because of conflict")))
            )
          } else {
            const merged = yield* Merge.mergeTrees(base.path, pull.headSha, baseSha)
            if (merged._tag !== "Clean") return yield* Errors.conflict("merge failed because of conflict")
            tip = yield* Merge.commitTree(base.path, {
              tree: merged.tree,
              parents: [pull.headSha, baseSha],
              message: `Merge branch '${pull.baseBranch}' into ${pull.headBranch}\n`,
              author: doer,
              committer: doer
            })
          }
          if (head.repo.id !== base.repo.id) yield* Merge.fetchCommit(head.path, base.path, tip)
          yield* writer
            .updateRefs(refOf(head), [{ ref: headsRef(pull.headBranch), newSha: tip, oldSha: headSha }])
            .pipe(
              Effect.catch((e) =>
                Effect.fail(
                  e.reason === "conflict"
                    ? Errors.conflict("the head branch moved while it was being updated (a push?): try again")
                    : Errors.refusal(e.reason, e.message)
                )
              )
            )
          yield* hub.publish(
            Events.pushed(head.owner, head.repo, caller.user, "api", [
              { ref: headsRef(pull.headBranch), before: headSha, after: tip }
            ])
          )
        })

      const compareRefs = (opened: OpenedRepository, basehead: string) =>
        Effect.gen(function* () {
          const dots = basehead.includes("...") ? "..." : ".."
          const at = basehead.indexOf(dots)
          if (at < 0) return yield* Errors.notFound()
          const baseRef = basehead.slice(0, at)
          const headInput = basehead.slice(at + dots.length)
          const parts = headInput.split(":")
          if (parts.length > 2 || baseRef === "" || headInput === "") return yield* Errors.notFound()
          const [headOwner, headRef] = parts.length === 2 ? [parts[0]!, parts[1]!] : [undefined, parts[0]!]
          const base = baseOf(opened)
          const baseSha = Option.getOrUndefined(yield* Reader.resolveCommit(base.path, baseRef))
          if (baseSha === undefined) return yield* Errors.notFound()
          const head = yield* headRepositoryOf(base, headOwner)
          if (head.repo.id !== base.repo.id && !atLeast((yield* accessFor(opened.caller, head)).code, "read")) {
            return yield* Errors.notFound()
          }
          const headSha = Option.getOrUndefined(yield* Reader.resolveCommit(head.path, headRef))
          if (headSha === undefined) return yield* Errors.notFound()
          if (head.repo.id !== base.repo.id) yield* Merge.fetchCommit(base.path, head.path, headSha)
          // Three dots: from the merge base, as Forgejo compares.
          const start =
            dots === "..."
              ? Option.getOrElse(yield* Merge.mergeBase(base.path, baseSha, headSha), () => baseSha)
              : baseSha
          return { base: start, head: headSha }
        })

      return PullsService.of({
        compare: compareRefs,
        create,
        findAgit,
        openAgit,
        pushAgit,
        list,
        get: findPull,
        byMergeCommit: (opened, sha) =>
          Effect.gen(function* () {
            const found = yield* pulls.byMergeCommit(opened.repo.id, sha.toLowerCase())
            if (Option.isNone(found)) return yield* Errors.notFound()
            return yield* load(found.value, baseOf(opened))
          }),
        pinned: (opened) => Effect.flatMap(pulls.pinned(opened.repo.id), (rows) => loadMany(rows, baseOf(opened))),
        getByBaseHead,
        edit,
        isMerged: (opened, index) => Effect.map(findPull(opened, index), (l) => l.pull.hasMerged),
        defaultMergeMessage,
        merge,
        // Only a schedule's merge is finished this way (AutoMerge.ts).
        completeMerge: (loaded, doer, commit, baseSha, deleteBranch) =>
          afterMove(loaded, doer, commit, baseSha, deleteBranch, true),
        update,
        deleteBranch,
        check: (pullId) => Effect.flatMap(pulls.forChecks([pullId]), (found) => check(found.get(pullId))),
        reload,
        start,
        resume
      })
    })
  )
}

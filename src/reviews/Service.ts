// Pull request reviews (Forgejo's routers/api/v1/repo/pull_review.go, services/pull/review.go,
// models/issues/review.go, review_request.go; CONTRACT-PULLS §12):
//
// - A review is a `reviews` row of Forgejo's types; inline comments join the caller's pending
//   review (made for them when there is none), and submitting converts that pending review.
//   Submitted reviews leave a `review` timeline comment (pending ones none: they are the
//   reviewer's alone until submitted).
// - Inline comments are refused (422, nothing stored) on a path or line the pull request's diff
//   does not show, where Forgejo stores them without a hunk. Each keeps the hunk cut around its line
//   and, on the new side, the commit `git blame` names for the line.
// - `official` (whitelisted or a code writer, `IsOfficialReviewer`) is computed for approvals and
//   rejections, and only the reviewer's latest one keeps it; `stale` when the pull request's diff
//   changed since the reviewed commit. A push to the head (PullRequestSynchronized) marks the
//   reviews stale and, with the rule's `dismiss_stale_approvals`, dismisses the approvals.
// - What the reviews mean for a merge is read by src/pulls from the rows (Policy `reviewFacts`).
// - Events: PullRequestReview (submitted), PullRequestReviewRequest, PullRequestReviewDismiss.
import { Context, Effect, Layer, Option } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import { Settings } from "../config/Settings.ts"
import * as Events from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import * as Merge from "../git/Merge.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { isPoster, isRepoAdmin, isWriter, LOCKED_REFUSED, mayComment } from "../issues/Policy.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { IssuesService } from "../issues/Service.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { OrgsRepo, type TeamRow } from "../orgs/Repo.ts"
import { ProtectionService } from "../protection/Service.ts"
import { AutoMergeStore } from "../pulls/AutoMergeStore.ts"
import { PullsRepo } from "../pulls/Repo.ts"
import { type Loaded, PullsService, pullRef } from "../pulls/Service.ts"
import { type OpenedRepository, RepoPolicy, unitEnabled } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { cutDiffAroundLine, lineInDiff } from "./Hunks.ts"
import {
  eventRefusal,
  mayDeleteReview,
  mayListReview,
  reviewTypeOf,
  STALE_DISMISS_MESSAGE,
  submittedName
} from "./Policy.ts"
import { makeReviewPresenter } from "./Present.ts"
import {
  type CodeCommentRow,
  type IssueCodeComment,
  ReviewCommentType,
  type ReviewRow,
  ReviewsRepo,
  ReviewType,
  ViewedState
} from "./Repo.ts"
import type {
  CreatePullReviewComment,
  CreatePullReviewOptions,
  DismissPullReviewOptions,
  PullReview,
  PullReviewComment,
  PullReviewRequestOptions,
  SubmitPullReviewOptions
} from "./Schema.ts"

type ServiceError = Errors.ApiError

/** A comment on one line of the files changed page. */
export interface LineCommentInput {
  readonly path: string
  readonly side: "old" | "new"
  readonly line: number
  readonly body: string
  /** The review whose conversation on this line is answered. */
  readonly reply?: number | undefined
}

/** An inline comment checked against the diff, ready to store. */
interface PreparedComment {
  readonly path: string
  readonly body: string
  readonly line: number
  readonly patch: string
  readonly commitSha: string
}

export class ReviewsService extends Context.Service<
  ReviewsService,
  {
    readonly list: (
      opened: OpenedRepository,
      index: string,
      page: Page | undefined
    ) => Effect.Effect<{ readonly rows: Array<PullReview>; readonly total: number }, ServiceError>
    readonly create: (
      opened: OpenedRepository,
      index: string,
      input: CreatePullReviewOptions
    ) => Effect.Effect<PullReview, ServiceError>
    readonly get: (opened: OpenedRepository, index: string, id: string) => Effect.Effect<PullReview, ServiceError>
    readonly submit: (
      opened: OpenedRepository,
      index: string,
      id: string,
      input: SubmitPullReviewOptions
    ) => Effect.Effect<PullReview, ServiceError>
    readonly remove: (opened: OpenedRepository, index: string, id: string) => Effect.Effect<void, ServiceError>
    readonly comments: (
      opened: OpenedRepository,
      index: string,
      id: string
    ) => Effect.Effect<Array<PullReviewComment>, ServiceError>
    readonly addComment: (
      opened: OpenedRepository,
      index: string,
      id: string,
      input: CreatePullReviewComment
    ) => Effect.Effect<PullReviewComment, ServiceError>
    readonly getComment: (
      opened: OpenedRepository,
      index: string,
      id: string,
      commentId: string
    ) => Effect.Effect<PullReviewComment, ServiceError>
    readonly deleteComment: (
      opened: OpenedRepository,
      index: string,
      id: string,
      commentId: string
    ) => Effect.Effect<void, ServiceError>
    readonly dismiss: (
      opened: OpenedRepository,
      index: string,
      id: string,
      input: DismissPullReviewOptions,
      dismissed: boolean
    ) => Effect.Effect<PullReview, ServiceError>
    readonly request: (
      opened: OpenedRepository,
      index: string,
      input: PullReviewRequestOptions,
      add: boolean
    ) => Effect.Effect<Array<PullReview>, ServiceError>
    // --- the web's files changed page (src/web/pages/PullFiles.ts) ---
    /** The pull request and its diff's range: from the merge base (`base`) to the head commit. */
    readonly diffRange: (
      opened: OpenedRepository,
      index: string
    ) => Effect.Effect<{ readonly loaded: Loaded; readonly head: string; readonly base: string }, ServiceError>
    /** The diff's range of a loaded pull request: its head commit and where its diff starts. */
    readonly rangeOf: (loaded: Loaded) => Effect.Effect<{ readonly head: string; readonly base: string }>
    /** The code comments the caller may see: those of submitted reviews, and the caller's pending ones. */
    readonly visibleCodeComments: (
      opened: OpenedRepository,
      loaded: Loaded
    ) => Effect.Effect<ReadonlyArray<IssueCodeComment>>
    /**
     * Forgejo's web `CreateCodeComment`: a comment on a line joins the caller's pending review
     * (made when there is none); `reply` (a review id) answers that review's conversation on the
     * same line at once, as a comment of that review.
     */
    readonly addLineComment: (
      opened: OpenedRepository,
      index: string,
      input: LineCommentInput
    ) => Effect.Effect<number, ServiceError>
    /** Forgejo's `UpdateResolveConversation`: `CanMarkConversation` (the poster, pull writers, official reviewers). */
    readonly resolveConversation: (
      opened: OpenedRepository,
      index: string,
      commentId: string,
      resolved: boolean
    ) => Effect.Effect<void, ServiceError>
    /**
     * Why the caller may not comment on lines or finish a review here (as issue comments: a locked
     * pull request only for writers, never for one the poster or the owner blocked), or undefined.
     */
    readonly reviewRefusal: (opened: OpenedRepository, loaded: Loaded) => Effect.Effect<string | undefined>
    /** Whether the caller may resolve conversations (Forgejo's `CanMarkConversation`). */
    readonly mayResolve: (opened: OpenedRepository, loaded: Loaded) => Effect.Effect<boolean>
    /**
     * Forgejo's web `SubmitReview` ("Finish review"): the caller's pending review (or a new one)
     * submitted as `event` with its inline comments, under the API's rules (own pull request, bodies).
     */
    readonly finish: (
      opened: OpenedRepository,
      index: string,
      input: SubmitPullReviewOptions
    ) => Effect.Effect<PullReview, ServiceError>
    /**
     * Forgejo's `SyncAndGetUserSpecificDiff`: the caller's viewed files at `head` (path → ViewedState);
     * a viewed file that changed since the commit it was viewed at becomes `changed` (and stays so).
     */
    readonly viewedFiles: (
      opened: OpenedRepository,
      loaded: Loaded,
      head: string
    ) => Effect.Effect<Readonly<Record<string, number>>>
    /** Forgejo's `UpdateViewedFiles`: marks files viewed (true) or not (false) at head commit `head`. */
    readonly setViewed: (
      opened: OpenedRepository,
      index: string,
      head: string,
      files: Readonly<Record<string, boolean>>
    ) => Effect.Effect<void, ServiceError>
  }
>()("hearth/reviews/ReviewsService") {
  static readonly layer = Layer.effect(
    ReviewsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* ReviewsRepo
      const pulls = yield* PullsService
      const pullRows = yield* PullsRepo
      const issueRows = yield* IssuesRepo
      const issues = yield* IssuesService
      const users = yield* UsersRepo
      const orgs = yield* OrgsRepo
      const repoRows = yield* ReposRepo
      const repos = yield* ReposService
      const policy = yield* RepoPolicy
      const protection = yield* ProtectionService
      const hub = yield* EventHub
      const autoMerges = yield* AutoMergeStore
      const present = yield* makeReviewPresenter(settings)
      const blocks = yield* BlocksService

      const resolve = (path: string, rev: string) =>
        Effect.map(Effect.orDie(Git.revParse(path, rev)), Option.getOrUndefined)

      /** The pull request's head commit in its base repository. */
      const headOf = (loaded: Loaded) =>
        Effect.map(resolve(loaded.base.path, pullRef(loaded.issue.index)), (sha) => sha ?? loaded.pull.headSha)

      /** Where the pull request's diff starts: the merge base of the base branch and `head`. */
      const diffBaseOf = (loaded: Loaded, head: string) =>
        Effect.gen(function* () {
          if (loaded.pull.hasMerged && loaded.pull.mergeBase !== "") return loaded.pull.mergeBase
          const base = yield* resolve(loaded.base.path, `refs/heads/${loaded.pull.baseBranch}`)
          if (base === undefined) return loaded.pull.mergeBase
          return Option.getOrElse(yield* Merge.mergeBase(loaded.base.path, base, head), () => base)
        })

      // The path is the client's: taken literally (no pathspec magic), its diff read up to a bound.
      const literal = { GIT_LITERAL_PATHSPECS: "1" }
      const fileDiff = (path: string, from: string, to: string, file: string) =>
        Effect.map(
          Effect.orDie(
            Git.inRepo(path, ["diff", "--no-color", "--no-ext-diff", "-M", "--end-of-options", from, to, "--", file], {
              env: literal,
              maxOutput: 16 * 1024 * 1024
            })
          ),
          (r) => r.stdout.toString("utf8")
        )

      /**
       * Forgejo's `checkIfPRContentChanged`: whether going from `before` to `after` changed the
       * pull request's diff (`git diff --name-only <after> <before> <merge base>`, a combined diff:
       * files that differ from both).
       */
      const contentChanged = (loaded: Loaded, before: string, after: string) =>
        Effect.gen(function* () {
          if (
            before === "" ||
            before === Events.ZERO_ID ||
            (yield* resolve(loaded.base.path, `${before}^{commit}`)) === undefined
          )
            return true
          const base = yield* diffBaseOf(loaded, after)
          const out = yield* Effect.orDie(
            Git.inRepo(loaded.base.path, ["diff", "--name-only", "-z", "--end-of-options", after, before, base, "--"])
          )
          return out.stdout.length > 0
        })

      const at = (loaded: Loaded) => ({ owner: loaded.base.owner, repo: loaded.base.repo })
      const issueRef = (loaded: Loaded): Events.IssueRef => ({
        id: loaded.issue.id,
        index: loaded.issue.index,
        isPull: true
      })
      const subjectOf = (loaded: Loaded, doer: Pick<UserRow, "id" | "name">) =>
        Events.subject(loaded.base.owner, loaded.base.repo, doer)

      const idOf = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : 0)

      /**
       * The review `{id}` of the pull request (Forgejo's `prepareSingleReview`): 404 when unknown,
       * of another pull request, or someone else's pending review.
       */
      const findReview = (opened: OpenedRepository, index: string, id: string) =>
        Effect.gen(function* () {
          const loaded = yield* pulls.get(opened, index)
          const n = idOf(id)
          const found = n > 0 ? yield* repo.byId(n) : Option.none<ReviewRow>()
          if (Option.isNone(found) || found.value.issueId !== loaded.issue.id) return yield* Errors.notFound()
          const review = found.value
          if (review.type === ReviewType.pending && review.reviewerId !== opened.caller?.user.id) {
            return yield* Errors.notFound()
          }
          return { loaded, review }
        })

      const presentOne = (loaded: Loaded, review: ReviewRow, viewer: Principal | undefined) =>
        Effect.map(present.reviews(loaded, [review], viewer), (list) => list[0]!)

      const reread = (id: number) => Effect.map(repo.byId(id), Option.getOrThrow)

      // --- inline comments ---

      /** An inline comment checked against the diff (422 for a path or line it does not show). */
      const prepareComment = (loaded: Loaded, head: string, base: string, input: CreatePullReviewComment) =>
        Effect.gen(function* () {
          const path = (input.path ?? "").trim()
          const old = (input.old_position ?? 0) > 0
          const line = old ? input.old_position! : (input.new_position ?? 0)
          if (path === "") return yield* Errors.validationFailed("a review comment needs the `path` of a changed file")
          if (line <= 0) {
            return yield* Errors.validationFailed(
              `a review comment on ${path} needs a line: old_position (old side) or new_position (new side)`
            )
          }
          const diff = yield* fileDiff(loaded.base.path, base, head, path)
          if (diff === "") {
            return yield* Errors.validationFailed(
              `${path} is not changed by the pull request: it has no diff to comment on`
            )
          }
          if (!lineInDiff(diff, line, old)) {
            return yield* Errors.validationFailed(
              `line ${line} of the ${old ? "old" : "new"} side of ${path} is not in the pull request's diff`
            )
          }
          // The commit that last changed the line (Forgejo's `LineBlame` at the pull request's head).
          let commitSha = head
          if (!old) {
            const blame = yield* Git.inRepo(
              loaded.base.path,
              ["blame", "--porcelain", "-L", `${line},${line}`, head, "--", path],
              { env: literal }
            ).pipe(Effect.option)
            const first = Option.isSome(blame) ? blame.value.stdout.toString("utf8").split(" ", 1)[0] : undefined
            if (first !== undefined && Git.isSha(first)) commitSha = first
          }
          return {
            path,
            body: input.body ?? "",
            line: old ? -line : line,
            patch: cutDiffAroundLine(diff, line, old),
            commitSha
          } satisfies PreparedComment
        })

      const storeComment = (loaded: Loaded, doer: UserRow, reviewId: number, c: PreparedComment, when: Date) =>
        repo.insertComment({
          issueId: loaded.issue.id,
          type: ReviewCommentType.code,
          posterId: doer.id,
          body: c.body,
          reviewId,
          treePath: c.path,
          line: c.line,
          patch: c.patch,
          commitSha: c.commitSha,
          at: when
        })

      // --- submission (Forgejo's SubmitReview) ---

      /**
       * Stores inline comments on the doer's pending review (made for them when there is none),
       * then converts it (or makes a new review) to `type`. Git work (official, stale, hunks) is done
       * before, outside the transaction.
       */
      const submitReview = (
        loaded: Loaded,
        doer: UserRow,
        type: ReviewType,
        body: string,
        commitId: string,
        comments: ReadonlyArray<PreparedComment>
      ) =>
        Effect.gen(function* () {
          const head = yield* headOf(loaded)
          const decides = type === ReviewType.approve || type === ReviewType.reject
          const official = decides
            ? yield* protection.isOfficialReviewer(at(loaded), loaded.pull.baseBranch, doer)
            : false
          const stale = decides && commitId !== head ? yield* contentChanged(loaded, commitId, head) : false
          const teamRequests =
            decides && loaded.base.owner.type === "organization"
              ? yield* Effect.filter(
                  (yield* repo.ofIssue(loaded.issue.id)).filter(
                    (r) => r.type === ReviewType.request && r.reviewerTeamId !== null
                  ),
                  (r) => orgs.isTeamMember(r.reviewerTeamId!, doer.id)
                )
              : []
          const now = new Date()
          const result = yield* repo.transaction(
            Effect.gen(function* () {
              let pending = yield* repo.pendingOf(loaded.issue.id, doer.id)
              if (Option.isNone(pending) && comments.length > 0) {
                pending = Option.some(
                  yield* repo.insert({
                    issueId: loaded.issue.id,
                    type: ReviewType.pending,
                    reviewerId: doer.id,
                    content: "",
                    official: false,
                    commitId,
                    stale: false,
                    at: now
                  })
                )
              }
              for (const c of comments) yield* storeComment(loaded, doer, Option.getOrThrow(pending).id, c, now)
              let review: ReviewRow
              if (Option.isSome(pending)) {
                review = yield* repo.update(pending.value.id, { type, content: body, official, commitId, stale }, now)
                // The doer's own request is answered by the review it was pending as.
                if (type !== ReviewType.pending) {
                  for (const r of yield* repo.requestsOf(loaded.issue.id, { userId: doer.id })) yield* repo.delete(r.id)
                }
              } else {
                review = yield* repo.insert({
                  issueId: loaded.issue.id,
                  type,
                  reviewerId: doer.id,
                  content: body,
                  official,
                  commitId,
                  stale,
                  at: now
                })
              }
              // Only the reviewer's latest approval or rejection counts.
              if (decides) yield* repo.clearOfficial(loaded.issue.id, doer.id, review.id)
              for (const r of teamRequests) yield* repo.delete(r.id)
              if (type === ReviewType.pending) return { review, commentId: undefined }
              const commentId = yield* repo.insertComment({
                issueId: loaded.issue.id,
                type: ReviewCommentType.review,
                posterId: doer.id,
                body,
                reviewId: review.id,
                at: now
              })
              yield* issueRows.recountComments(loaded.issue.id)
              yield* issueRows.touchIssue(loaded.issue.id, now)
              return { review, commentId }
            })
          )
          const name = submittedName(type)
          if (name !== undefined && result.commentId !== undefined) {
            // Forgejo's SubmitReview: the body's mentions, then each inline comment's
            // (FindAndUpdateIssueMentions), for the notifications of PullRequestReview.
            const inline = yield* repo.codeComments(result.review.id)
            for (const text of [body, ...inline.map((c) => c.body)]) {
              yield* issues.recordMentions(at(loaded), doer, loaded.issue.id, text)
            }
            yield* hub.publish({
              _tag: "PullRequestReview",
              ...subjectOf(loaded, doer),
              issue: issueRef(loaded),
              review: { id: result.review.id, type: name, content: body },
              commentId: result.commentId,
              codeCommentIds: inline.map((c) => c.id)
            })
          }
          return result.review
        })

      const create = (opened: OpenedRepository, index: string, input: CreatePullReviewOptions) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const loaded = yield* pulls.get(opened, index)
          const event = input.event ?? ""
          const body = input.body ?? ""
          const inline = input.comments ?? []
          const refused = eventRefusal(event, body, inline.length > 0, caller.user.id === loaded.issue.posterId)
          if (refused !== undefined) return yield* Errors.validationFailed(refused)
          const head = yield* headOf(loaded)
          let commitId = (input.commit_id ?? "").trim()
          if (commitId === "") commitId = head
          else {
            const full = yield* resolve(loaded.base.path, `${commitId}^{commit}`)
            if (full === undefined) {
              return yield* Errors.validationFailed(`commit_id ${commitId} is not a commit of the pull request`)
            }
            commitId = full
          }
          // Every inline comment is checked before anything is stored.
          const base = yield* diffBaseOf(loaded, head)
          const prepared: Array<PreparedComment> = []
          for (const c of inline) prepared.push(yield* prepareComment(loaded, head, base, c))
          const review = yield* submitReview(loaded, caller.user, reviewTypeOf(event), body, commitId, prepared)
          return yield* presentOne(loaded, review, caller)
        })

      const submit = (opened: OpenedRepository, index: string, id: string, input: SubmitPullReviewOptions) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const { loaded, review } = yield* findReview(opened, index, id)
          if (review.type !== ReviewType.pending) {
            return yield* Errors.validationFailed("only a pending review can be submitted")
          }
          const event = input.event ?? ""
          const body = input.body ?? ""
          // Forgejo's quirk: the pending review's inline comments do not count here.
          const refused = eventRefusal(event, body, false, caller.user.id === loaded.issue.posterId)
          if (refused !== undefined) return yield* Errors.validationFailed(refused)
          const type = reviewTypeOf(event)
          if (type === ReviewType.pending) return yield* Errors.validationFailed("review stay pending")
          const submitted = yield* submitReview(loaded, caller.user, type, body, yield* headOf(loaded), [])
          return yield* presentOne(loaded, submitted, caller)
        })

      const list = (opened: OpenedRepository, index: string, page: Page | undefined) =>
        Effect.gen(function* () {
          const loaded = yield* pulls.get(opened, index)
          const visible = (yield* repo.ofIssue(loaded.issue.id)).filter((r) => mayListReview(r, opened.caller))
          const shown = page === undefined ? visible : visible.slice(page.offset, page.offset + page.limit)
          return { rows: yield* present.reviews(loaded, shown, opened.caller), total: visible.length }
        })

      const remove = (opened: OpenedRepository, index: string, id: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const { loaded, review } = yield* findReview(opened, index, id)
          if (!mayDeleteReview(review, caller)) {
            return yield* Errors.forbidden("only the reviewer or a site administrator can delete a review")
          }
          if (review.type === ReviewType.request) {
            return yield* Errors.validationFailed(
              "a review request is not a review: take it back through DELETE /pulls/{index}/requested_reviewers"
            )
          }
          // Its code, review and dismiss_review comments go with it (ON DELETE CASCADE).
          yield* repo.transaction(
            Effect.gen(function* () {
              yield* repo.delete(review.id)
              yield* issueRows.recountComments(loaded.issue.id)
            })
          )
        })

      const comments = (opened: OpenedRepository, index: string, id: string) =>
        Effect.gen(function* () {
          const { loaded, review } = yield* findReview(opened, index, id)
          return yield* present.comments(loaded, review, yield* repo.codeComments(review.id), opened.caller)
        })

      const addComment = (opened: OpenedRepository, index: string, id: string, input: CreatePullReviewComment) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const { loaded, review } = yield* findReview(opened, index, id)
          if (review.type === ReviewType.request) {
            return yield* Errors.validationFailed("a review request has no comments: review the pull request instead")
          }
          const head = yield* headOf(loaded)
          const prepared = yield* prepareComment(loaded, head, yield* diffBaseOf(loaded, head), input)
          const commentId = yield* storeComment(loaded, caller.user, review.id, prepared, new Date())
          const stored = (yield* repo.codeComments(review.id)).filter((c) => c.id === commentId)
          return (yield* present.comments(loaded, review, stored, caller))[0]!
        })

      /** The code comment `{comment}` of review `{id}` of the pull request, or 404. */
      const findComment = (opened: OpenedRepository, index: string, id: string, commentId: string) =>
        Effect.gen(function* () {
          const found = yield* findReview(opened, index, id)
          const n = idOf(commentId)
          const row = n > 0 ? yield* repo.commentById(n) : Option.none()
          if (
            Option.isNone(row) ||
            row.value.type !== ReviewCommentType.code ||
            row.value.code.reviewId !== found.review.id
          ) {
            return yield* Errors.notFound()
          }
          return { ...found, comment: row.value.code as CodeCommentRow }
        })

      const getComment = (opened: OpenedRepository, index: string, id: string, commentId: string) =>
        Effect.gen(function* () {
          const { loaded, review, comment } = yield* findComment(opened, index, id, commentId)
          return (yield* present.comments(loaded, review, [comment], opened.caller))[0]!
        })

      const deleteComment = (opened: OpenedRepository, index: string, id: string, commentId: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const { loaded, comment } = yield* findComment(opened, index, id, commentId)
          if (comment.posterId !== caller.user.id && !isWriter(opened)) {
            return yield* Errors.forbidden("only the comment's poster or a writer of the repository can delete it")
          }
          yield* repo.deleteComment(comment.id)
          yield* hub.publish({
            _tag: "IssueComment",
            ...subjectOf(loaded, caller.user),
            issue: issueRef(loaded),
            comment: { id: comment.id },
            action: "deleted"
          })
        })

      // --- dismissals (Forgejo's `dismissReview`) ---

      /** Dismisses reviews with a dismiss_review comment each, and publishes it. */
      const dismissWithComment = (
        loaded: Loaded,
        doer: Pick<UserRow, "id" | "name">,
        reviews: ReadonlyArray<ReviewRow>,
        message: string
      ) =>
        Effect.gen(function* () {
          const now = new Date()
          const made: Array<{ review: ReviewRow; commentId: number }> = []
          yield* repo.transaction(
            Effect.gen(function* () {
              for (const review of reviews) {
                yield* repo.setDismissed([review.id], true, now)
                const commentId = yield* repo.insertComment({
                  issueId: loaded.issue.id,
                  type: ReviewCommentType.dismissReview,
                  posterId: doer.id,
                  body: message,
                  reviewId: review.id,
                  at: now
                })
                made.push({ review, commentId })
              }
              if (reviews.length > 0) yield* issueRows.touchIssue(loaded.issue.id, now)
            })
          )
          for (const { review, commentId } of made) {
            yield* hub.publish({
              _tag: "PullRequestReviewDismiss",
              ...subjectOf(loaded, doer),
              issue: issueRef(loaded),
              review: { id: review.id, ...(review.reviewerId === null ? {} : { reviewerId: review.reviewerId }) },
              commentId
            })
          }
        })

      const dismiss = (
        opened: OpenedRepository,
        index: string,
        id: string,
        input: DismissPullReviewOptions,
        dismissed: boolean
      ) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          // Forgejo checks the role before it looks the review up.
          if (!isRepoAdmin(opened)) return yield* Errors.forbidden("Must be repo admin")
          const { loaded, review } = yield* findReview(opened, index, id)
          if (review.type !== ReviewType.approve && review.type !== ReviewType.reject) {
            return yield* Errors.forbidden(
              "not need to dismiss this review because it's type is not Approve or change request"
            )
          }
          if (loaded.issue.isClosed || loaded.pull.hasMerged) {
            return yield* Errors.forbidden("can't dismiss a review associated to a closed or merged PR")
          }
          if (!dismissed) {
            yield* repo.setDismissed([review.id], false, new Date())
            // An approval back in force may be what a scheduled merge waits for (no event says so).
            yield* autoMerges.reconsider(loaded.pull.id)
          } else {
            const priors =
              input.priors === true
                ? (yield* repo.ofIssue(loaded.issue.id)).filter(
                    (r) =>
                      r.id < review.id &&
                      r.reviewerId === review.reviewerId &&
                      !r.dismissed &&
                      (r.type === ReviewType.approve || r.type === ReviewType.reject)
                  )
                : []
            // The comment is made even when the review was dismissed already (Forgejo).
            yield* dismissWithComment(loaded, caller.user, [review], input.message ?? "")
            if (priors.length > 0)
              yield* repo.setDismissed(
                priors.map((r) => r.id),
                true,
                new Date()
              )
          }
          return yield* presentOne(loaded, yield* reread(review.id), caller)
        })

      // --- review requests (Forgejo's services/issue/assignee.go `ReviewRequest`, `TeamReviewRequest`) ---

      const principalOf = (user: UserRow): Principal => ({ user, scopes: undefined, method: "password" })

      /** Forgejo's `CanDoerChangeReviewRequests`: the poster, the owner, collaborators, org members reaching pulls. */
      const mayChangeRequests = (opened: OpenedRepository, loaded: Loaded, doer: UserRow) =>
        Effect.gen(function* () {
          if (loaded.base.repo.isArchived) return false
          if (doer.id === loaded.issue.posterId || doer.id === loaded.base.owner.id) return true
          if (atLeast(opened.access.mode, "write")) return true
          if (Option.isSome(yield* repoRows.collaboratorMode(loaded.base.repo.id, doer.id))) return true
          if (loaded.base.owner.type !== "organization") return false
          for (const team of yield* orgs.teamsOfUser(loaded.base.owner.id, doer.id)) {
            const reaches =
              team.includesAllRepositories ||
              team.permission === "owner" ||
              (yield* orgs.teamRepoIds(team.id)).has(loaded.base.repo.id)
            const pullsLevel =
              team.permission === "admin" || team.permission === "owner"
                ? team.permission
                : (team.units["repo.pulls"] ?? "none")
            if (reaches && atLeast(pullsLevel, "read")) return true
          }
          return false
        })

      const invalid = (reason: string, doer: UserRow, loaded: Loaded) =>
        Errors.validationFailed(`${reason} [user_id: ${doer.id}, repo_id: ${loaded.base.repo.id}]`)

      /** The latest non-dismissed approve, reject or request row of the user (Forgejo's `GetReviewByIssueIDAndUserID`). */
      const lastReviewOf = (rows: ReadonlyArray<ReviewRow>, userId: number) =>
        [...rows]
          .reverse()
          .find(
            (r) =>
              r.reviewerId === userId &&
              r.reviewerTeamId === null &&
              !r.dismissed &&
              (r.type === ReviewType.approve || r.type === ReviewType.reject || r.type === ReviewType.request)
          )

      const userOf = (name: string) =>
        Effect.gen(function* () {
          const found = name.includes("@") ? yield* users.findByEmail(name) : yield* users.findByName(name)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })

      const request = (opened: OpenedRepository, index: string, input: PullReviewRequestOptions, add: boolean) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("token is required")
          const doer = caller.user
          const loaded = yield* pulls.get(opened, index)
          const canChange = yield* mayChangeRequests(opened, loaded, doer)
          const rows = yield* repo.ofIssue(loaded.issue.id)
          // Every name is looked up and checked before anything changes.
          const reviewers: Array<UserRow> = []
          for (const name of input.reviewers ?? []) {
            const reviewer = yield* userOf(name)
            if (reviewer.type === "organization") {
              return yield* invalid("Organization can't be added as reviewer", doer, loaded)
            }
            const last = lastReviewOf(rows, reviewer.id)
            if (add) {
              const access = yield* policy.access(principalOf(reviewer), loaded.base.repo, loaded.base.owner)
              if (!atLeast(access.mode, "read") || !unitEnabled(loaded.base.repo, "pulls")) {
                return yield* invalid("Reviewer can't read", doer, loaded)
              }
              if (reviewer.id === loaded.issue.posterId) {
                return yield* invalid("poster of pr can't be reviewer", doer, loaded)
              }
              const posterReRequests =
                doer.id === loaded.issue.posterId && last !== undefined && last.type !== ReviewType.request
              if (!canChange && !posterReRequests) return yield* invalid("Doer can't choose reviewer", doer, loaded)
              if (
                last !== undefined &&
                last.type !== ReviewType.request &&
                (loaded.issue.isClosed || loaded.pull.hasMerged)
              ) {
                return yield* Errors.forbidden("cannot request a re-review on a closed or merged PR")
              }
            } else {
              const selfRemoval = last?.type === ReviewType.request && reviewer.id === doer.id
              if (!canChange && !selfRemoval) return yield* invalid("Doer can't remove reviewer", doer, loaded)
            }
            reviewers.push(reviewer)
          }
          const teams: Array<TeamRow> = []
          // Team requests exist only in an organisation's repositories; elsewhere they are ignored.
          if (loaded.base.owner.type === "organization") {
            for (const name of input.team_reviewers ?? []) {
              const team = yield* orgs.findTeamByName(loaded.base.owner.id, name)
              if (Option.isNone(team)) return yield* Errors.notFound()
              if (add && loaded.base.repo.isPrivate) {
                const reaches =
                  team.value.includesAllRepositories ||
                  team.value.permission === "owner" ||
                  (yield* orgs.teamRepoIds(team.value.id)).has(loaded.base.repo.id)
                if (!reaches) return yield* invalid("Reviewing team can't read repo", doer, loaded)
              }
              if (!canChange)
                return yield* invalid(add ? "Doer can't choose reviewer" : "Doer can't remove reviewer", doer, loaded)
              teams.push(team.value)
            }
          }
          const created: Array<ReviewRow> = []
          const notices: Array<{ reviewer: UserRow; commentId: number }> = []
          const branch = loaded.pull.baseBranch
          for (const reviewer of reviewers) {
            const last = lastReviewOf(yield* repo.ofIssue(loaded.issue.id), reviewer.id)
            const official = yield* protection.isOfficialReviewer(at(loaded), branch, reviewer)
            const now = new Date()
            if (add) {
              // Asking again someone already asked changes nothing.
              if (last?.type === ReviewType.request) continue
              const made = yield* repo.transaction(
                Effect.gen(function* () {
                  const review = yield* repo.insert({
                    issueId: loaded.issue.id,
                    type: ReviewType.request,
                    reviewerId: reviewer.id,
                    content: "",
                    official,
                    commitId: "",
                    stale: false,
                    at: now
                  })
                  if (official) yield* repo.clearOfficial(loaded.issue.id, reviewer.id, review.id)
                  const commentId = yield* repo.insertComment({
                    issueId: loaded.issue.id,
                    type: ReviewCommentType.reviewRequest,
                    posterId: doer.id,
                    assigneeId: reviewer.id,
                    at: now
                  })
                  return { review, commentId }
                })
              )
              created.push(made.review)
              notices.push({ reviewer, commentId: made.commentId })
            } else {
              if (last?.type !== ReviewType.request) continue
              const commentId = yield* repo.transaction(
                Effect.gen(function* () {
                  yield* repo.delete(last.id)
                  // The reviewer's latest approval or rejection counts again.
                  if (official) {
                    const previous = [...(yield* repo.ofIssue(loaded.issue.id))]
                      .reverse()
                      .find(
                        (r) =>
                          r.reviewerId === reviewer.id &&
                          (r.type === ReviewType.approve || r.type === ReviewType.reject)
                      )
                    if (previous !== undefined) yield* repo.update(previous.id, { official: true }, previous.updatedAt)
                  }
                  return yield* repo.insertComment({
                    issueId: loaded.issue.id,
                    type: ReviewCommentType.reviewRequest,
                    posterId: doer.id,
                    assigneeId: reviewer.id,
                    removedAssignee: true,
                    at: now
                  })
                })
              )
              notices.push({ reviewer, commentId })
            }
          }
          for (const team of teams) {
            const existing = yield* repo.requestsOf(loaded.issue.id, { teamId: team.id })
            const now = new Date()
            if (add) {
              if (existing.length > 0) continue
              const official = yield* protection.isOfficialReviewerTeam(at(loaded), branch, team)
              const made = yield* repo.transaction(
                Effect.gen(function* () {
                  const review = yield* repo.insert({
                    issueId: loaded.issue.id,
                    type: ReviewType.request,
                    reviewerId: null,
                    reviewerTeamId: team.id,
                    content: "",
                    official,
                    commitId: "",
                    stale: false,
                    at: now
                  })
                  const commentId = yield* repo.insertComment({
                    issueId: loaded.issue.id,
                    type: ReviewCommentType.reviewRequest,
                    posterId: doer.id,
                    assigneeTeamId: team.id,
                    at: now
                  })
                  return { review, commentId }
                })
              )
              created.push(made.review)
              // Every member but the poster hears of a team's request (Forgejo's `TeamReviewRequest`).
              const members = yield* orgs.listTeamMembers(team.id, { offset: 0, limit: 10_000 })
              for (const member of members.rows) {
                if (member.id !== loaded.issue.posterId) notices.push({ reviewer: member, commentId: made.commentId })
              }
            } else {
              if (existing.length === 0) continue
              yield* repo.transaction(
                Effect.gen(function* () {
                  for (const r of existing) yield* repo.delete(r.id)
                  yield* repo.insertComment({
                    issueId: loaded.issue.id,
                    type: ReviewCommentType.reviewRequest,
                    posterId: doer.id,
                    assigneeTeamId: team.id,
                    removedAssignee: true,
                    at: now
                  })
                })
              )
            }
          }
          if (created.length > 0 || notices.length > 0) yield* issueRows.touchIssue(loaded.issue.id, new Date())
          for (const notice of notices) {
            // Nobody is told of asking themself.
            if (notice.reviewer.id === doer.id) continue
            yield* hub.publish({
              _tag: "PullRequestReviewRequest",
              ...subjectOf(loaded, doer),
              issue: issueRef(loaded),
              reviewer: Events.doerOf(notice.reviewer),
              requested: add,
              commentId: notice.commentId
            })
          }
          return yield* present.reviews(loaded, created, caller)
        })

      // --- pushes to the head (§12.7) ---

      const onSynchronized = (event: Extract<Events.Event, { _tag: "PullRequestSynchronized" }>) =>
        Effect.gen(function* () {
          const pull = (yield* pullRows.byIssueIds([event.issue.id])).get(event.issue.id)
          if (pull === undefined) return
          const baseRow = yield* repoRows.findById(pull.baseRepoId)
          if (Option.isNone(baseRow)) return
          const owner = yield* users.findById(baseRow.value.ownerId)
          const issue = yield* issueRows.issueById(event.issue.id)
          if (Option.isNone(owner) || Option.isNone(issue)) return
          const base = { repo: baseRow.value, owner: owner.value, path: repos.pathOf(owner.value, baseRow.value) }
          const loaded: Loaded = { pull, issue: issue.value, base, head: undefined }
          const changed = yield* contentChanged(loaded, event.before, event.after)
          yield* repo.markStale(loaded.issue.id, event.after, changed)
          if (!changed) return
          const rule = yield* protection.ruleFor(base.repo.id, pull.baseBranch)
          if (Option.isNone(rule) || !rule.value.dismissStaleApprovals) return
          const approvals = (yield* repo.ofIssue(loaded.issue.id)).filter(
            (r) => r.type === ReviewType.approve && !r.dismissed
          )
          yield* dismissWithComment(loaded, event.doer, approvals, STALE_DISMISS_MESSAGE)
        })

      yield* hub.subscribe({
        name: "reviews",
        handle: (event) => (event._tag === "PullRequestSynchronized" ? onSynchronized(event) : Effect.void)
      })

      // --- the web's files changed page ---

      const rangeOf = (loaded: Loaded) =>
        Effect.gen(function* () {
          const head = yield* headOf(loaded)
          return { head, base: yield* diffBaseOf(loaded, head) }
        })

      const diffRange = (opened: OpenedRepository, index: string) =>
        Effect.gen(function* () {
          const loaded = yield* pulls.get(opened, index)
          return { loaded, ...(yield* rangeOf(loaded)) }
        })

      const visibleCodeComments = (opened: OpenedRepository, loaded: Loaded) =>
        Effect.map(repo.issueCodeComments(loaded.issue.id), (rows) =>
          rows.filter(
            (c) =>
              c.reviewType !== ReviewType.request &&
              (c.reviewType !== ReviewType.pending || c.reviewerId === opened.caller?.user.id)
          )
        )

      const addLineComment = (opened: OpenedRepository, index: string, input: LineCommentInput) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("sign in to comment")
          const loaded = yield* pulls.get(opened, index)
          yield* ensureMayReview(opened, loaded)
          if (input.body.trim() === "") return yield* Errors.validationFailed("a comment cannot be empty")
          const signed = input.side === "old" ? -input.line : input.line
          const now = new Date()
          if (input.reply !== undefined) {
            // The conversation answered: a visible review of this pull request with a comment on the line.
            const thread = (yield* visibleCodeComments(opened, loaded)).find(
              (c) => c.reviewId === input.reply && c.treePath === input.path && c.line === signed
            )
            if (thread === undefined) return yield* Errors.notFound()
            return yield* repo.insertComment({
              issueId: loaded.issue.id,
              type: ReviewCommentType.code,
              posterId: caller.user.id,
              body: input.body,
              reviewId: thread.reviewId,
              treePath: thread.treePath,
              line: thread.line,
              patch: thread.patch,
              commitSha: thread.commitSha,
              at: now
            })
          }
          const head = yield* headOf(loaded)
          const prepared = yield* prepareComment(loaded, head, yield* diffBaseOf(loaded, head), {
            path: input.path,
            body: input.body,
            ...(input.side === "old" ? { old_position: input.line } : { new_position: input.line })
          })
          return yield* repo.transaction(
            Effect.gen(function* () {
              const pending = yield* repo.pendingOf(loaded.issue.id, caller.user.id)
              const review = Option.isSome(pending)
                ? pending.value
                : yield* repo.insert({
                    issueId: loaded.issue.id,
                    type: ReviewType.pending,
                    reviewerId: caller.user.id,
                    content: "",
                    official: false,
                    commitId: head,
                    stale: false,
                    at: now
                  })
              return yield* storeComment(loaded, caller.user, review.id, prepared, now)
            })
          )
        })

      const reviewRefusal = (opened: OpenedRepository, loaded: Loaded) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return "sign in to review"
          if (!mayComment(opened, loaded.issue)) return LOCKED_REFUSED
          const blocked = yield* Effect.flip(
            blocks.ensureNotBlocked([{ id: loaded.issue.posterId }, opened.owner], caller.user)
          ).pipe(Effect.option)
          return Option.isSome(blocked) ? blocked.value.message : undefined
        })

      /** reviewRefusal as a 403. */
      const ensureMayReview = (opened: OpenedRepository, loaded: Loaded) =>
        Effect.flatMap(reviewRefusal(opened, loaded), (refused) =>
          refused === undefined ? Effect.void : Effect.fail(Errors.forbidden(refused))
        )

      const mayResolve = (opened: OpenedRepository, loaded: Loaded) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return false
          if (isPoster(caller, loaded.issue) || isWriter(opened)) return true
          return yield* protection.isOfficialReviewer(at(loaded), loaded.pull.baseBranch, caller.user)
        })

      const resolveConversation = (opened: OpenedRepository, index: string, commentId: string, resolved: boolean) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("sign in to resolve a conversation")
          const loaded = yield* pulls.get(opened, index)
          const n = idOf(commentId)
          const comment = (yield* visibleCodeComments(opened, loaded)).find((c) => c.id === n)
          if (comment === undefined) return yield* Errors.notFound()
          yield* ensureMayReview(opened, loaded)
          if (!(yield* mayResolve(opened, loaded))) {
            return yield* Errors.forbidden(
              "only the pull request's poster, its writers and official reviewers can resolve a conversation"
            )
          }
          yield* repo.setResolved(comment.id, resolved ? caller.user.id : null)
        })

      const finish = (opened: OpenedRepository, index: string, input: SubmitPullReviewOptions) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("sign in to review")
          const loaded = yield* pulls.get(opened, index)
          yield* ensureMayReview(opened, loaded)
          const event = input.event ?? ""
          const body = input.body ?? ""
          const type = reviewTypeOf(event)
          if (type === ReviewType.pending) return yield* Errors.validationFailed("choose how to submit the review")
          const pending = yield* repo.pendingOf(loaded.issue.id, caller.user.id)
          const hasComments = Option.isSome(pending) && (yield* repo.codeComments(pending.value.id)).length > 0
          const refused = eventRefusal(event, body, hasComments, isPoster(caller, loaded.issue))
          if (refused !== undefined) return yield* Errors.validationFailed(refused)
          const review = yield* submitReview(loaded, caller.user, type, body, yield* headOf(loaded), [])
          return yield* presentOne(loaded, review, caller)
        })

      /** The paths changed between two commits (`git diff --name-only`), or undefined when git cannot tell. */
      const changedBetween = (path: string, from: string, to: string) =>
        Effect.map(
          Effect.option(
            Git.inRepo(path, ["diff", "--name-only", "-z", "--no-renames", "--end-of-options", from, to, "--"])
          ),
          (out) =>
            Option.isSome(out)
              ? new Set(
                  out.value.stdout
                    .toString("utf8")
                    .split("\0")
                    .filter((p) => p !== "")
                )
              : undefined
        )

      const viewedFiles = (opened: OpenedRepository, loaded: Loaded, head: string) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return {}
          const state = yield* repo.reviewStateOf(caller.user.id, loaded.pull.id)
          if (Option.isNone(state)) return {}
          const files: Record<string, number> = { ...state.value.files }
          if (state.value.commitSha === head) return files
          const viewed = Object.keys(files).filter((p) => files[p] === ViewedState.viewed)
          if (viewed.length === 0) return files
          // A commit git no longer has: Forgejo assumes nothing changed.
          const changed = yield* changedBetween(loaded.base.path, state.value.commitSha, head)
          const marks: Record<string, number> = {}
          for (const path of viewed) if (changed?.has(path) === true) marks[path] = ViewedState.changed
          if (Object.keys(marks).length > 0) {
            // Kept on the row it was found on, so that it survives until the file is viewed again.
            yield* repo.saveReviewState(
              caller.user.id,
              loaded.pull.id,
              state.value.commitSha,
              { ...state.value.files, ...marks },
              new Date()
            )
          }
          return { ...files, ...marks }
        })

      const setViewed = (
        opened: OpenedRepository,
        index: string,
        head: string,
        files: Readonly<Record<string, boolean>>
      ) =>
        Effect.gen(function* () {
          const caller = opened.caller
          if (caller === undefined) return yield* Errors.unauthorized("sign in to mark files as viewed")
          const loaded = yield* pulls.get(opened, index)
          if (!Git.isSha(head))
            return yield* Errors.validationFailed("the head commit the files were viewed at is missing")
          const newest = yield* repo.reviewStateOf(caller.user.id, loaded.pull.id)
          const merged: Record<string, number> = Option.isSome(newest) ? { ...newest.value.files } : {}
          for (const [path, viewed] of Object.entries(files)) {
            if (viewed) merged[path] = ViewedState.viewed
            else delete merged[path]
          }
          yield* repo.saveReviewState(caller.user.id, loaded.pull.id, head, merged, new Date())
        })

      return ReviewsService.of({
        diffRange,
        rangeOf,
        visibleCodeComments,
        addLineComment,
        resolveConversation,
        reviewRefusal,
        mayResolve,
        finish,
        viewedFiles,
        setViewed,
        list,
        create,
        get: (opened, index, id) =>
          Effect.flatMap(findReview(opened, index, id), ({ loaded, review }) =>
            presentOne(loaded, review, opened.caller)
          ),
        submit,
        remove,
        comments,
        addComment,
        getComment,
        deleteComment,
        dismiss,
        request
      })
    })
  )
}

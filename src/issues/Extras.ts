// Reactions, issue subscriptions and pins (Forgejo's routers/api/v1/repo/issue_reaction.go,
// issue_subscription.go, issue_pin.go; CONTRACT-ISSUES §11, §12, §14). Forgejo sends no webhook
// for any of them (§16.1), so nothing is published on the event hub; a pin or unpin writes its
// timeline comment. Where Forgejo answers 500 (pin limit reached, position < 1) or `null` for an
// empty reaction list, Hearth answers 400/422 and `[]`.
import { Context, Effect, Layer, Option } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser, type User } from "../users/Schema.ts"
import { IssueExtrasRepo, type ReactionRow, type ReactionTarget } from "./ExtrasRepo.ts"
import { makeLookup } from "./Lookup.ts"
import { isWriter } from "./Policy.ts"
import { commentType, makePresenter } from "./Present.ts"
import { type IssueRow, IssuesRepo } from "./Repo.ts"
import type { Issue } from "./Schema.ts"
import { placeOf } from "./Service.ts"

type ServiceError = Errors.ApiError

/** Forgejo's default [repository.issue] LOCK_REASONS, the reasons one may give for locking an issue. */
export const LOCK_REASONS: ReadonlyArray<string> = ["Too heated", "Off-topic", "Resolved", "Spam"]

export interface Reaction {
  readonly user: User
  readonly content: string
  readonly created_at: string
}

export interface WatchInfo {
  readonly subscribed: boolean
  readonly ignored: boolean
  readonly reason: null
  readonly created_at: string
  readonly url: string
  readonly repository_url: string
}

export class IssueExtras extends Context.Service<
  IssueExtras,
  {
    readonly issueReactions: (
      opened: OpenedRepository,
      index: string,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<Reaction>; readonly total: number }, ServiceError>
    readonly commentReactions: (
      opened: OpenedRepository,
      id: string
    ) => Effect.Effect<ReadonlyArray<Reaction>, ServiceError>
    /**
     * The reactions of the issue and of each of its comments (by comment id), read at once: one
     * query for the reactions and one for their users, whatever the number of comments.
     */
    readonly allReactions: (
      opened: OpenedRepository,
      index: string
    ) => Effect.Effect<
      { readonly issue: ReadonlyArray<Reaction>; readonly comments: ReadonlyMap<number, ReadonlyArray<Reaction>> },
      ServiceError
    >
    /** `created: false`: the caller had already given it (200). */
    readonly react: (
      opened: OpenedRepository,
      on: { readonly index: string } | { readonly commentId: string },
      content: string,
      add: boolean
    ) => Effect.Effect<{ readonly reaction: Reaction; readonly created: boolean } | undefined, ServiceError>

    readonly subscribers: (
      opened: OpenedRepository,
      index: string,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<User>; readonly total: number }, ServiceError>
    readonly checkSubscription: (opened: OpenedRepository, index: string) => Effect.Effect<WatchInfo, ServiceError>
    /** true: the subscription changed (201); false: it already was so (200). */
    readonly setSubscription: (
      opened: OpenedRepository,
      index: string,
      login: string,
      watch: boolean
    ) => Effect.Effect<boolean, ServiceError>

    readonly pin: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    /**
     * Forgejo's web `LockIssue`/`UnlockIssue` (no API route): writers only; the reason one of
     * LOCK_REASONS or none; a `lock`/`unlock` comment (the reason as its body). Locking a locked
     * issue, or unlocking an unlocked one, is refused (Forgejo's `lock_duplicate`/`unlock_error`).
     */
    readonly lock: (opened: OpenedRepository, index: string, reason: string) => Effect.Effect<void, ServiceError>
    readonly unlock: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    readonly unpin: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    readonly movePin: (opened: OpenedRepository, index: string, position: string) => Effect.Effect<void, ServiceError>
    readonly pinned: (opened: OpenedRepository) => Effect.Effect<ReadonlyArray<Issue>, ServiceError>
    readonly newPinAllowed: (
      opened: OpenedRepository
    ) => Effect.Effect<{ readonly issues: boolean; readonly pull_requests: boolean }>
  }
>()("hearth/issues/IssueExtras") {
  static readonly layer = Layer.effect(
    IssueExtras,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* IssuesRepo
      const extras = yield* IssueExtrasRepo
      const users = yield* UsersRepo
      const blocks = yield* BlocksService
      const present = yield* makePresenter(settings)
      const allowed = settings.ui.REACTIONS
      const maxPinned = settings["repository.issue"].MAX_PINNED

      const { findIssue, findComment } = yield* makeLookup
      const doerOf = (opened: OpenedRepository) =>
        opened.caller === undefined
          ? Effect.fail(Errors.unauthorized("token is required"))
          : Effect.succeed(opened.caller)

      const presentReactions = (rows: ReadonlyArray<ReactionRow>, viewer: Principal | undefined) =>
        Effect.map(users.findByIds(rows.map((r) => r.userId)), (people) =>
          rows.map(
            (r): Reaction => ({
              user: toApiUser(settings, people.get(r.userId) ?? ghostUser, viewer),
              content: r.type,
              created_at: formatTime(r.createdAt)
            })
          )
        )

      const issueApiUrl = (opened: OpenedRepository, issue: IssueRow) =>
        `${settings.server.ROOT_URL}api/v1/repos/${opened.owner.name}/${opened.repo.name}/issues/${issue.index}`

      /** Forgejo's `CheckIssueWatch`: an explicit row wins; otherwise taking part subscribes. */
      const isSubscribed = (issue: IssueRow, userId: number) =>
        Effect.flatMap(extras.explicitWatch(issue.id, userId), (explicit) =>
          explicit !== undefined ? Effect.succeed(explicit) : extras.participates(issue.id, issue.repoId, userId)
        )

      const presentAll = (rows: ReadonlyArray<ReactionRow>, viewer: Principal | undefined) =>
        Effect.map(presentReactions(rows, viewer), (all) => {
          const issue: Array<Reaction> = []
          const comments = new Map<number, Array<Reaction>>()
          all.forEach((reaction, i) => {
            const commentId = rows[i]!.commentId
            if (commentId === null) issue.push(reaction)
            else comments.set(commentId, [...(comments.get(commentId) ?? []), reaction])
          })
          return { issue, comments }
        })

      const pinComment = (issue: IssueRow, doer: Principal, type: "pin" | "unpin") =>
        repo.insertComment({ issueId: issue.id, type: commentType(type), posterId: doer.user.id, at: new Date() })

      return IssueExtras.of({
        issueReactions: (opened, index, window) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const found = yield* extras.reactions({ issueId: issue.id, commentId: null }, allowed, window)
            return { rows: yield* presentReactions(found.rows, opened.caller), total: found.total }
          }),
        commentReactions: (opened, id) =>
          Effect.gen(function* () {
            const { comment, issue } = yield* findComment(opened, id)
            const found = yield* extras.reactions({ issueId: issue.id, commentId: comment.id }, allowed, undefined)
            return yield* presentReactions(found.rows, opened.caller)
          }),
        allReactions: (opened, index) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            return yield* presentAll(yield* extras.allReactions(issue.id, allowed), opened.caller)
          }),
        react: (opened, on, content, add) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            let target: ReactionTarget
            let blockers: Array<{ readonly id: number }>
            let issue: IssueRow
            if ("index" in on) {
              issue = yield* findIssue(opened, on.index)
              target = { issueId: issue.id, commentId: null }
              blockers = [{ id: issue.posterId }, opened.owner]
            } else {
              const found = yield* findComment(opened, on.commentId)
              issue = found.issue
              target = { issueId: issue.id, commentId: found.comment.id }
              blockers = [{ id: found.comment.posterId }, { id: issue.posterId }, opened.owner]
            }
            if (issue.isLocked && !isWriter(opened)) {
              return yield* Errors.forbidden("no permission to change reaction")
            }
            if (!add) {
              // Removing a reaction that is not there, or not allowed, changes nothing (200).
              yield* extras.removeReaction(target, doer.user.id, content)
              return undefined
            }
            if (!allowed.includes(content)) return yield* Errors.forbidden(`'${content}' is not an allowed reaction`)
            yield* blocks.ensureNotBlocked(blockers, doer.user)
            const { row, created } = yield* extras.addReaction(target, doer.user.id, content)
            return {
              reaction: {
                user: toApiUser(settings, doer.user, doer),
                content: row.type,
                created_at: formatTime(row.createdAt)
              },
              created
            }
          }),

        subscribers: (opened, index, window) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const found = yield* extras.subscribers(issue.id, window)
            const people = yield* users.findByIds(found.ids)
            const rows = found.ids.flatMap((id) => {
              const user = people.get(id)
              return user === undefined ? [] : [toApiUser(settings, user, opened.caller)]
            })
            return { rows, total: found.total }
          }),
        checkSubscription: (opened, index) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            const subscribed = yield* isSubscribed(issue, doer.user.id)
            return {
              subscribed,
              ignored: !subscribed,
              reason: null,
              created_at: formatTime(issue.createdAt),
              url: `${issueApiUrl(opened, issue)}/subscriptions`,
              repository_url: `${settings.server.ROOT_URL}api/v1/repos/${opened.owner.name}/${opened.repo.name}`
            }
          }),
        setSubscription: (opened, index, login, watch) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            const user = yield* users.findByName(login)
            if (Option.isNone(user)) return yield* Errors.notFound()
            if (user.value.id !== doer.user.id && !doer.user.isAdmin) {
              return yield* Errors.forbidden(
                `${doer.user.name} is not permitted to change subscriptions for ${user.value.name}`
              )
            }
            if ((yield* isSubscribed(issue, user.value.id)) === watch) return false
            yield* extras.setWatch(issue.id, user.value.id, watch)
            return true
          }),

        pin: (opened, index) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            const outcome = yield* extras.pin(issue.id, maxPinned)
            if (outcome === "full") {
              return yield* Errors.badRequest(
                `the maximum number of pinned ${issue.isPull ? "pull requests" : "issues"} (${maxPinned}) has been reached`
              )
            }
            if (outcome === "pinned") yield* pinComment(issue, doer, "pin")
          }),
        lock: (opened, index, reason) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            if (!isWriter(opened)) return yield* Errors.forbidden("only the repository's writers may lock an issue")
            if (reason !== "" && !LOCK_REASONS.includes(reason)) {
              return yield* Errors.validationFailed(`the reason should be one of: ${LOCK_REASONS.join(", ")}`)
            }
            if (issue.isLocked) return yield* Errors.validationFailed("this issue is already locked")
            yield* repo.transaction(
              Effect.gen(function* () {
                const at = new Date()
                yield* repo.updateIssue(issue.id, { isLocked: true }, at)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: commentType("lock"),
                  posterId: doer.user.id,
                  body: reason,
                  at
                })
              })
            )
          }),
        unlock: (opened, index) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            if (!isWriter(opened)) return yield* Errors.forbidden("only the repository's writers may unlock an issue")
            if (!issue.isLocked) return yield* Errors.validationFailed("this issue is not locked")
            yield* repo.transaction(
              Effect.gen(function* () {
                const at = new Date()
                yield* repo.updateIssue(issue.id, { isLocked: false }, at)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: commentType("unlock"),
                  posterId: doer.user.id,
                  at
                })
              })
            )
          }),
        unpin: (opened, index) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            if (yield* extras.unpin(issue.id)) yield* pinComment(issue, doer, "unpin")
          }),
        movePin: (opened, index, position) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const to = /^-?\d{1,9}$/.test(position) ? Number(position) : Number.NaN
            if (!(to >= 1)) return yield* Errors.validationFailed(`position must be a number from 1: ${position}`)
            yield* extras.movePin(issue.id, to)
          }),
        pinned: (opened) =>
          Effect.gen(function* () {
            const ids = yield* extras.pinnedIssueIds(opened.repo.id, false)
            const rows = yield* repo.issuesByIds(ids)
            const order = new Map(ids.map((id, i) => [id, i]))
            const sorted = [...rows].sort((a, b) => order.get(a.id)! - order.get(b.id)!)
            return yield* present.issues(sorted, () => placeOf(opened), opened.caller)
          }),
        newPinAllowed: (opened) =>
          Effect.map(
            Effect.all([extras.pinnedCount(opened.repo.id, false), extras.pinnedCount(opened.repo.id, true)]),
            ([issues, pulls]) => ({ issues: issues < maxPinned, pull_requests: pulls < maxPinned })
          )
      })
    })
  )
}

// Activity feeds (Forgejo's services/feed and models/activities/action.go). An in-process event hub
// subscriber writes the actions Forgejo's feed notifier writes, with its `op_type` and `content`
// (NewIssue, IssueChangeStatus, CreateIssueComment, NewPullRequest, MergePullRequest,
// PullRequestReview, RenameRepository, TransferRepository, CreateRepository, ForkRepository,
// PushCommits/CreateRef/DeleteRef and their mirror forms, NewRelease), one row per feed
// (`NotifyWatchers`: the doer's, the owning organization's, each watcher's). A push's commits are
// read from git in a fiber of their own, so the push is answered without waiting for them.
//
// Reading (Forgejo's `GetFeeds` / `activityQueryCondition`): a reader sees an action only in a
// repository it may see (site admins everything); a user's feed shows actions in private
// repositories only to the user and site admins (`IncludePrivate`), an organization's only to its
// members; a user who keeps their activity private (`keep_activity_private`) shows an empty feed
// and heatmap to everyone but themself and site admins (`ActivityReadable`).
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type * as Events from "../events/Events.ts"
import { EventHub, type Known } from "../events/Hub.ts"
import { pushedCommits } from "../git/PushedCommits.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { isWorkInProgress, makePresenter } from "../issues/Present.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import type { TeamRow } from "../orgs/Repo.ts"
import { RepoPolicy, searchFilter } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser } from "../users/Schema.ts"
import type { Activity } from "./Api.ts"
import { type OpName, opName, opNumber } from "./Ops.ts"
import { type ActionRow, ActivitiesRepo, type FeedQuery, type NewAction } from "./Repo.ts"

const ZERO = "0000000000000000000000000000000000000000"
/** Forgejo's `[ui] FEED_MAX_COMMIT_NUM`: the commits a push's action keeps. */
const FEED_MAX_COMMIT_NUM = 5

/** Forgejo's `PushCommit` (modules/repository/commits.go), as its JSON names it. */
interface PushCommit {
  readonly Sha1: string
  readonly Message: string
  readonly AuthorEmail: string
  readonly AuthorName: string
  readonly CommitterEmail: string
  readonly CommitterName: string
  readonly Timestamp: string
}

/** Forgejo's `PushCommits` JSON: what a push's action keeps in `content`. */
interface PushCommits {
  readonly Commits: ReadonlyArray<PushCommit>
  readonly HeadCommit: PushCommit | null
  readonly CompareURL: string
  readonly Len: number
}

const EMPTY_PUSH: PushCommits = { Commits: [], HeadCommit: null, CompareURL: "", Len: 0 }

/**
 * A comment's first 200 bytes, as Forgejo's `CreateIssueComment` cuts it: a Latin word broken at
 * the cut is dropped for an ellipsis.
 */
export const truncateComment = (text: string): string => {
  const bytes = Buffer.from(text, "utf8")
  if (bytes.length <= 200) return text
  let end = 200
  // Never inside a UTF-8 sequence.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end--
  const cut = bytes.subarray(0, end).toString("utf8")
  const space = cut.lastIndexOf(" ")
  return space !== -1 && Buffer.byteLength(cut) - Buffer.byteLength(cut.slice(0, space)) < 15
    ? `${cut.slice(0, space)}…`
    : cut
}

/** `YYYY-MM-DD` as the UTC day it names, or undefined when it is not one. */
export const parseDay = (raw: string): readonly [Date, Date] | undefined => {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw)
  if (match === null) return undefined
  const from = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])))
  if (Number.isNaN(from.getTime()) || from.toISOString().slice(0, 10) !== raw) return undefined
  return [from, new Date(from.getTime() + 86_400_000)]
}

export interface FeedOptions {
  readonly date?: string | undefined
}

export interface Listed {
  readonly items: ReadonlyArray<Activity>
  readonly total: number
}

export class ActivitiesService extends Context.Service<
  ActivitiesService,
  {
    readonly userFeed: (
      viewer: Principal | undefined,
      user: UserRow,
      options: FeedOptions & { readonly onlyPerformedBy: boolean },
      page: Page
    ) => Effect.Effect<Listed, Errors.ValidationFailed>
    readonly orgFeed: (
      viewer: Principal | undefined,
      org: UserRow,
      options: FeedOptions,
      page: Page
    ) => Effect.Effect<Listed, Errors.ValidationFailed>
    readonly teamFeed: (
      viewer: Principal,
      team: TeamRow,
      options: FeedOptions,
      page: Page
    ) => Effect.Effect<Listed, Errors.ValidationFailed>
    readonly repoFeed: (
      viewer: Principal | undefined,
      repo: RepoRow,
      options: FeedOptions,
      page: Page
    ) => Effect.Effect<Listed, Errors.ValidationFailed>
    /** Forgejo's `GetUserHeatmapDataByUser`: the last year, per 15 minutes. */
    readonly heatmap: (
      viewer: Principal | undefined,
      user: UserRow
    ) => Effect.Effect<Array<{ readonly timestamp: number; readonly contributions: number }>>
  }
>()("hearth/activities/ActivitiesService") {
  static readonly layer = Layer.effect(
    ActivitiesService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const hub = yield* EventHub
      const store = yield* ActivitiesRepo
      const repos = yield* ReposRepo
      const reposService = yield* ReposService
      const users = yield* UsersRepo
      const issues = yield* IssuesRepo
      const policy = yield* RepoPolicy
      const orgs = yield* OrgPolicy
      const presenter = yield* RepoPresenter
      const issuePresenter = yield* makePresenter(settings)

      // --- recording (services/feed/action.go) ---

      const record = (action: NewAction) => store.record(action)

      const issueTitle = (event: { readonly issue: Events.IssueRef }, known: Known) =>
        known.issue?.id === event.issue.id
          ? Effect.succeed(known.issue.title)
          : Effect.map(issues.issueById(event.issue.id), (found) => (Option.isSome(found) ? found.value.title : ""))

      const commentBody = (id: number) =>
        Effect.map(issues.commentById(id), (found) => (Option.isSome(found) ? found.value.body : ""))

      /** Commits `before..after` (a new branch: its last ones), newest first, as Forgejo's feed keeps them. */
      const pushCommits = (event: Events.RepositoryEvent, known: Known, update: Events.RefUpdate) =>
        Effect.gen(function* () {
          const repo = known.repo?.id === event.repo.id ? Option.some(known.repo) : yield* repos.findById(event.repo.id)
          if (Option.isNone(repo)) return EMPTY_PUSH
          const owner =
            known.owner?.id === repo.value.ownerId
              ? Option.some(known.owner)
              : yield* users.findById(repo.value.ownerId)
          if (Option.isNone(owner)) return EMPTY_PUSH
          const created = update.before === ZERO
          // The one reader of a push's commits (src/git/PushedCommits.ts), shared with the webhook payloads.
          const read = yield* pushedCommits(
            reposService.pathOf(owner.value, repo.value),
            update.before,
            update.after,
            FEED_MAX_COMMIT_NUM
          )
          const listed = read.commits.map(
            (c): PushCommit => ({
              Sha1: c.sha,
              Message: `${c.message.replace(/\n+$/, "")}\n`,
              AuthorEmail: c.authorEmail,
              AuthorName: c.authorName,
              CommitterEmail: c.committerEmail,
              CommitterName: c.committerName,
              Timestamp: c.committerDate
            })
          )
          const total = read.total
          const commits = listed.slice(0, FEED_MAX_COMMIT_NUM)
          return {
            Commits: commits,
            HeadCommit: commits[0] ?? null,
            CompareURL:
              created || commits.length === 0
                ? ""
                : `${encodeURIComponent(event.repo.ownerName)}/${encodeURIComponent(event.repo.name)}/compare/${update.before}...${update.after}`,
            Len: total
          } satisfies PushCommits
        })

      const onPush = (event: Extract<Events.Event, { _tag: "PushCommits" }>, known: Known, created: Date) =>
        Effect.forEach(
          event.refs,
          (update) =>
            Effect.gen(function* () {
              const isTag = update.ref.startsWith("refs/tags/")
              const deleted = update.after === ZERO
              const base = {
                actUserId: event.doer.id,
                repoId: event.repo.id,
                isPrivate: event.repo.private,
                refName: update.ref,
                created
              }
              if (event.via === "mirror") {
                // SyncPushCommits, SyncCreateRef, SyncDeleteRef: in the owner's name.
                const op: OpName = deleted
                  ? "mirror_sync_delete"
                  : update.before === ZERO
                    ? "mirror_sync_create"
                    : "mirror_sync_push"
                const content =
                  op === "mirror_sync_push" ? JSON.stringify(yield* pushCommits(event, known, update)) : ""
                return yield* record({ ...base, actUserId: event.repo.ownerId, opType: opNumber(op), content })
              }
              if (isTag)
                return yield* record({
                  ...base,
                  opType: opNumber(deleted ? "delete_tag" : "push_tag"),
                  content: JSON.stringify(EMPTY_PUSH)
                })
              if (deleted) return yield* record({ ...base, opType: opNumber("delete_branch") })
              if (!update.ref.startsWith("refs/heads/")) return
              const content = JSON.stringify(yield* pushCommits(event, known, update))
              return yield* record({ ...base, opType: opNumber("commit_repo"), content })
            }),
          { discard: true }
        )

      const handle = (event: Events.Event, known: Known): Effect.Effect<void, unknown> => {
        // A user's rename is no repository's action: Forgejo records none.
        if (event._tag === "RenameUser") return Effect.void
        const created = new Date()
        const base = { actUserId: event.doer.id, repoId: event.repo.id, isPrivate: event.repo.private, created }
        switch (event._tag) {
          case "CreateRepository":
          case "ForkRepository":
            return record({ ...base, opType: opNumber("create_repo") })
          case "RenameRepository":
            return record({ ...base, opType: opNumber("rename_repo"), content: event.oldName })
          case "TransferRepository":
            return record({
              ...base,
              opType: opNumber("transfer_repo"),
              content: `${event.oldOwnerName}/${event.repo.name}`
            })
          case "PushCommits":
            // Reading the commits is git work: the push is answered without waiting for it.
            return Effect.asVoid(
              Effect.forkDetach(
                onPush(event, known, created).pipe(
                  Effect.catchCause((cause) =>
                    Effect.logWarning(
                      `could not record the activity of a push to ${event.repo.ownerName}/${event.repo.name}`,
                      cause
                    )
                  )
                )
              )
            )
          case "Issues": {
            const isPull = event.issue.isPull
            const index = event.issue.index
            switch (event.action) {
              case "opened":
                return Effect.flatMap(issueTitle(event, known), (title) =>
                  record({
                    ...base,
                    opType: opNumber(isPull ? "create_pull_request" : "create_issue"),
                    content: `${index}|${title}`
                  })
                )
              case "closed":
                if (event.merged === true)
                  return Effect.flatMap(issueTitle(event, known), (title) =>
                    record({
                      ...base,
                      opType: opNumber(event.autoMerged === true ? "auto_merge_pull_request" : "merge_pull_request"),
                      content: `${index}|${title}`
                    })
                  )
                return record({
                  ...base,
                  opType: opNumber(isPull ? "close_pull_request" : "close_issue"),
                  content: `${index}|`
                })
              case "reopened":
                return record({
                  ...base,
                  opType: opNumber(isPull ? "reopen_pull_request" : "reopen_issue"),
                  content: `${index}|`
                })
              case "edited": {
                // Forgejo's IssueChangeTitle: a pull request whose title lost its work-in-progress prefix.
                const from = event.changes?.title?.from
                if (!isPull || from === undefined || !isWorkInProgress(from)) return Effect.void
                return Effect.flatMap(issueTitle(event, known), (title) =>
                  isWorkInProgress(title)
                    ? Effect.void
                    : record({
                        ...base,
                        opType: opNumber("pull_request_ready_for_review"),
                        content: `${index}|${title}`
                      })
                )
              }
              default:
                return Effect.void
            }
          }
          case "PullRequestReviewDismiss":
            // Forgejo's PullReviewDismiss: "index|reviewer|the dismissal's message".
            return Effect.gen(function* () {
              const reviewerId = event.review.reviewerId
              const reviewer = reviewerId === undefined ? Option.none() : yield* users.findById(reviewerId)
              const message = yield* commentBody(event.commentId)
              yield* record({
                ...base,
                opType: opNumber("pull_review_dismissed"),
                commentId: event.commentId,
                content: `${event.issue.index}|${Option.isSome(reviewer) ? reviewer.value.name : ""}|${message}`
              })
            })
          case "IssueComment":
            if (event.action !== "created") return Effect.void
            return Effect.flatMap(commentBody(event.comment.id), (body) =>
              record({
                ...base,
                opType: opNumber(event.issue.isPull ? "comment_pull" : "comment_issue"),
                commentId: event.comment.id,
                content: `${event.issue.index}|${truncateComment(body)}`
              })
            )
          case "PullRequestReview":
            return Effect.gen(function* () {
              const index = event.issue.index
              for (const id of event.codeCommentIds ?? []) {
                const body = yield* commentBody(id)
                yield* record({
                  ...base,
                  opType: opNumber("comment_pull"),
                  commentId: id,
                  content: `${index}|${body.split("\n")[0]}`
                })
              }
              if (event.review.type === "comment" && event.review.content.trim() === "") return
              const op: OpName =
                event.review.type === "approved"
                  ? "approve_pull_request"
                  : event.review.type === "rejected"
                    ? "reject_pull_request"
                    : "comment_pull"
              yield* record({
                ...base,
                opType: opNumber(op),
                commentId: event.commentId,
                content: `${index}|${event.review.content.split("\n")[0]}`
              })
            })
          case "Release":
            if (event.action !== "published") return Effect.void
            return record({
              ...base,
              actUserId: event.release.publisherId ?? event.doer.id,
              opType: opNumber("publish_release"),
              content: event.release.title,
              refName: event.release.tagName
            })
          default:
            return Effect.void
        }
      }
      yield* hub.subscribe({ name: "activity feeds", handle, afterAnswer: true })

      // --- reading (routers/api/v1/…/ListXActivityFeeds) ---

      const dayOf = (date: string | undefined) =>
        date === undefined || date === ""
          ? Effect.succeed(undefined)
          : Option.match(Option.fromNullishOr(parseDay(date)), {
              onNone: () =>
                Effect.fail(Errors.validationFailed(`date must be a day written YYYY-MM-DD, not "${date}"`)),
              onSome: Effect.succeed
            })

      /** Forgejo's `ToActivity` for each row, with the reader's permissions on each repository. */
      const present = (viewer: Principal | undefined, rows: ReadonlyArray<ActionRow>) =>
        Effect.gen(function* () {
          const repoRows = new Map(
            (yield* repos.findByIds([...new Set(rows.map((r) => r.repoId))])).map((r) => [r.id, r])
          )
          const people = yield* users.findByIds([
            ...new Set([...rows.map((r) => r.actUserId), ...[...repoRows.values()].map((r) => r.ownerId)])
          ])
          const kept = rows.filter((r) => repoRows.has(r.repoId) && people.has(repoRows.get(r.repoId)!.ownerId))
          const items = [...new Set(kept.map((r) => r.repoId))].map((id) => {
            const repo = repoRows.get(id)!
            return { repo, owner: people.get(repo.ownerId)! }
          })
          const access = yield* policy.accessMany(viewer, items)
          const presented = yield* presenter.present(
            viewer,
            items.map((item, i) => ({ ...item, access: access[i]! }))
          )
          const repoJson = new Map(items.map((item, i) => [item.repo.id, presented[i]!]))
          const activities: Array<Activity> = []
          for (const row of kept) {
            const op = opName(row.opType)
            if (op === undefined) continue
            const repo = repoRows.get(row.repoId)!
            const owner = people.get(repo.ownerId)!
            let comment: Activity["comment"]
            if (row.commentId !== 0) {
              const found = yield* issues.commentById(row.commentId)
              const issue = Option.isSome(found) ? yield* issues.issueById(found.value.issueId) : Option.none()
              if (Option.isSome(found) && Option.isSome(issue)) {
                const [one] = yield* issuePresenter.comments([found.value], () => issue.value, {
                  id: repo.id,
                  ownerName: owner.name,
                  name: repo.name
                })
                comment = one
              }
            }
            activities.push({
              id: row.id,
              user_id: row.userId,
              op_type: op,
              act_user_id: row.actUserId,
              act_user: toApiUser(settings, people.get(row.actUserId) ?? ghostUser, viewer),
              repo_id: row.repoId,
              repo: repoJson.get(row.repoId)!,
              comment_id: row.commentId,
              ...(comment === undefined ? {} : { comment }),
              ref_name: row.refName,
              is_private: row.isPrivate,
              content: row.content,
              created: formatTime(row.created)
            })
          }
          return activities
        })

      const list = (viewer: Principal | undefined, query: FeedQuery, page: Page) =>
        Effect.gen(function* () {
          const { rows, total } = yield* store.feed(query, page)
          return { items: yield* present(viewer, rows), total }
        })

      const isSelfOrAdmin = (viewer: Principal | undefined, user: UserRow) =>
        viewer !== undefined && (viewer.user.isAdmin || viewer.user.id === user.id)

      /** Forgejo's `ActivityReadable`. */
      const readable = (viewer: Principal | undefined, user: UserRow) =>
        !user.keepActivityPrivate || isSelfOrAdmin(viewer, user)

      const visibleTo = (viewer: Principal | undefined) => searchFilter(viewer, true)
      const NOTHING: Listed = { items: [], total: 0 }

      return ActivitiesService.of({
        userFeed: (viewer, user, options, page) =>
          Effect.gen(function* () {
            const between = yield* dayOf(options.date)
            if (!readable(viewer, user)) return NOTHING
            return yield* list(
              viewer,
              {
                userId: user.id,
                actUserId: options.onlyPerformedBy ? user.id : undefined,
                includePrivate: isSelfOrAdmin(viewer, user),
                visible: visibleTo(viewer),
                between
              },
              page
            )
          }),
        orgFeed: (viewer, org, options, page) =>
          Effect.gen(function* () {
            const between = yield* dayOf(options.date)
            // Forgejo's ListOrgActivityFeeds: private repositories' actions for members and site admins.
            const member = viewer !== undefined && (viewer.user.isAdmin || (yield* orgs.isMember(org, viewer.user)))
            return yield* list(
              viewer,
              { userId: org.id, includePrivate: member, visible: visibleTo(viewer), between },
              page
            )
          }),
        teamFeed: (viewer, team, options, page) =>
          Effect.gen(function* () {
            const between = yield* dayOf(options.date)
            return yield* list(
              viewer,
              {
                team: { id: team.id, orgId: team.orgId, includesAll: team.includesAllRepositories },
                includePrivate: true,
                visible: visibleTo(viewer),
                between
              },
              page
            )
          }),
        repoFeed: (viewer, repo, options, page) =>
          Effect.gen(function* () {
            const between = yield* dayOf(options.date)
            return yield* list(viewer, { repoId: repo.id, includePrivate: true, between }, page)
          }),
        heatmap: (viewer, user) =>
          readable(viewer, user)
            ? store.heatmap(
                {
                  userId: user.id,
                  // A person's heatmap counts what they did; an organization's everything in its feed.
                  actUserId: user.type === "organization" ? undefined : user.id,
                  includePrivate: true,
                  visible: visibleTo(viewer)
                },
                new Date(Date.now() - 365 * 86_400_000)
              )
            : Effect.succeed([])
      })
    })
  )
}

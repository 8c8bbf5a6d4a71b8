// Notifications (Forgejo's services/uinotification and routers/api/v1/notify; CONTRACT-ISSUES
// §16.2). An event hub subscriber turns issue activity into one thread per receiver and issue:
// a new issue, a new comment and a close or reopen notify who subscribed to the issue, the
// repository's watchers and the issue's participants (its poster and commenters), but not who
// unsubscribed from it, and the users the new text mentions; an assignment notifies the assignee. Never the doer, never someone who blocked the
// doer, never someone who may not read the issue (a private repository's issues notify nobody
// outside it; the mentions the core records are already limited to readers).
//
// The subscriber is an in-process one: it runs inside `publish`, right after the change's commit,
// so a thread exists when the change's request is answered. A failure is logged by the hub.
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type * as Events from "../events/Events.ts"
import { EventHub, type Known } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { type IssueRow, IssuesRepo } from "../issues/Repo.ts"
import { parseTime } from "../issues/Service.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { mentionCandidates } from "../markdown/References.ts"
import { RepoPolicy, unitEnabled } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import type { Repository } from "../repos/Schema.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { type NotificationFilter, type NotificationRow, NotificationsRepo, Source, Status } from "./Repo.ts"

export interface NotificationThread {
  readonly id: number
  readonly repository: Repository
  readonly subject: {
    readonly title: string
    readonly url: string
    readonly latest_comment_url: string
    readonly html_url: string
    readonly latest_comment_html_url: string
    readonly type: string
    readonly state: string
  }
  readonly unread: boolean
  readonly pinned: boolean
  readonly updated_at: string
  readonly url: string
}

/** The list and mark-read query of Forgejo's `getFindNotificationOptions` / `ReadNotifications`. */
export interface ListQuery {
  readonly all?: string | undefined
  readonly statusTypes: ReadonlyArray<string>
  readonly subjectTypes: ReadonlyArray<string>
  readonly since?: string | undefined
  readonly before?: string | undefined
}

const STATUS_NAMES: Record<string, number> = { unread: Status.unread, read: Status.read, pinned: Status.pinned }
const SOURCE_NAMES: Record<string, number> = {
  issue: Source.issue,
  pull: Source.pull,
  commit: Source.commit,
  repository: Source.repository
}

/** Forgejo's `statusStringsToNotificationStatuses`: unknown names are ignored; none known gives `fallback`. */
export const statusesOf = (names: ReadonlyArray<string>, fallback: ReadonlyArray<string>): Array<number> => {
  const known = (list: ReadonlyArray<string>) =>
    list.map((n) => STATUS_NAMES[n.trim().toLowerCase()]).filter((n): n is number => n !== undefined)
  const statuses = known(names)
  return statuses.length > 0 ? statuses : known(fallback)
}

const GO_ZERO_TIME = new Date("0001-01-01T00:00:00Z").getTime()

/** Forgejo's `FormBool`: Go's `strconv.ParseBool`. */
const formBool = (raw: string | undefined) => raw !== undefined && ["1", "t", "T", "TRUE", "true", "True"].includes(raw)

export class NotificationsService extends Context.Service<
  NotificationsService,
  {
    readonly list: (
      caller: Principal,
      repoId: number | undefined,
      query: ListQuery,
      window: Page
    ) => Effect.Effect<{ readonly rows: Array<NotificationThread>; readonly total: number }, Errors.ValidationFailed>
    readonly unreadCount: (caller: Principal) => Effect.Effect<number>
    readonly markRead: (
      caller: Principal,
      repoId: number | undefined,
      query: {
        readonly all?: string | undefined
        readonly statusTypes: ReadonlyArray<string>
        readonly toStatus?: string | undefined
        readonly lastReadAt?: string | undefined
      }
    ) => Effect.Effect<Array<NotificationThread>, Errors.BadRequest>
    readonly thread: (
      caller: Principal,
      id: string
    ) => Effect.Effect<NotificationThread, Errors.NotFound | Errors.Forbidden>
    readonly markThread: (
      caller: Principal,
      id: string,
      toStatus: string | undefined
    ) => Effect.Effect<NotificationThread, Errors.NotFound | Errors.Forbidden>
  }
>()("hearth/notifications/NotificationsService") {
  static readonly layer = Layer.effect(
    NotificationsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* NotificationsRepo
      const issues = yield* IssuesRepo
      const repos = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const presenter = yield* RepoPresenter
      const hub = yield* EventHub

      /** Forgejo's `CheckRepoUnitUser`: the receiver may read the repository's issues (or pulls) unit. */
      const mayRead = (user: UserRow, target: RepoRow, owner: UserRow, isPull: boolean) =>
        Effect.gen(function* () {
          if (user.type !== "user" || !unitEnabled(target, isPull ? "pulls" : "issues")) return false
          const access = yield* policy.access({ user, scopes: undefined, method: "password" }, target, owner)
          return atLeast(access.mode, "read")
        })

      /**
       * Forgejo's `createOrUpdateIssueNotifications`, once per event: with `watchers`, who
       * explicitly subscribed to the issue, the repository's watchers and the issue's participants,
       * minus who explicitly unsubscribed from it; then `receivers` (the assignee, a reviewer) and
       * the users `text(issue)` mentions; minus the doer and whoever blocked the doer; those who
       * may read the issue get their thread in one statement. (Forgejo notifies the watchers, then
       * the mentioned: one upsert of both is the same, the second would only touch the first's row.)
       */
      const notify = (
        event: { readonly repo: Events.RepositoryRef; readonly doer: Events.Doer; readonly issue: Events.IssueRef },
        known: Known,
        commentId: number | null,
        who: {
          readonly watchers?: boolean
          readonly receivers?: ReadonlyArray<number>
          readonly text?: (issue: IssueRow) => Effect.Effect<string | undefined>
          readonly toDoer?: boolean
        }
      ) =>
        Effect.gen(function* () {
          // What the producer handed over is not read again.
          const issue =
            known.issue?.id === event.issue.id ? Option.some(known.issue) : yield* issues.issueById(event.issue.id)
          const target =
            known.repo?.id === event.repo.id ? Option.some(known.repo) : yield* repos.findById(event.repo.id)
          if (Option.isNone(issue) || Option.isNone(target)) return
          const owner =
            known.owner?.id === target.value.ownerId
              ? Option.some(known.owner)
              : yield* users.findById(target.value.ownerId)
          if (Option.isNone(owner)) return
          const text = who.text === undefined ? undefined : yield* who.text(issue.value)
          const found = yield* repo.receivers({
            issueId: issue.value.id,
            repoId: target.value.id,
            posterId: issue.value.posterId,
            doerId: event.doer.id,
            watchers: who.watchers === true,
            userIds: who.receivers ?? [],
            mentionedNames: text === undefined ? [] : mentionCandidates(text, 50).map((name) => name.toLowerCase()),
            toDoer: who.toDoer === true
          })
          const allowed: Array<number> = []
          for (const user of found) {
            if (yield* mayRead(user, target.value, owner.value, issue.value.isPull)) allowed.push(user.id)
          }
          yield* repo.upsertIssue({
            userIds: allowed,
            repoId: target.value.id,
            issueId: issue.value.id,
            isPull: issue.value.isPull,
            commentId,
            doerId: event.doer.id
          })
        })

      /** A comment's text, for its mentions. */
      const commentText = (id: number) => () =>
        Effect.map(issues.commentById(id), (comment) => (Option.isSome(comment) ? comment.value.body : undefined))

      const handle = (event: Events.Event, known: Known): Effect.Effect<void> => {
        switch (event._tag) {
          case "Issues":
            switch (event.action) {
              case "opened":
                return notify(event, known, null, { watchers: true, text: (issue) => Effect.succeed(issue.body) })
              case "closed":
              case "reopened":
                return notify(event, known, null, { watchers: true })
              case "assigned":
                return event.assignee === undefined
                  ? Effect.void
                  : notify(event, known, null, { receivers: [event.assignee.id] })
              default:
                return Effect.void
            }
          case "IssueComment":
            if (event.action !== "created") return Effect.void
            return notify(event, known, event.comment.id, { watchers: true, text: commentText(event.comment.id) })
          // Reviews (Forgejo's `PullRequestReview`, `PullReviewDismiss`): the pull request's
          // watchers and participants, the poster among them; a request only the requested user.
          case "PullRequestReview":
            // Then who the body mentions, and who each inline comment mentions (Forgejo's
            // PullRequestReview and PullRequestCodeComment with their mentions).
            return Effect.gen(function* () {
              yield* notify(event, known, event.commentId, {
                watchers: true,
                text: () => Effect.succeed(event.review.content)
              })
              for (const id of event.codeCommentIds ?? []) {
                yield* notify(event, known, id, { text: commentText(id) })
              }
            })
          case "PullRequestReviewDismiss":
            return notify(event, known, event.commentId, { watchers: true })
          case "PullRequestReviewRequest":
            return event.requested
              ? notify(event, known, event.commentId, { receivers: [event.reviewer.id] })
              : Effect.void
          // The scheduler hears that their scheduled merge failed, though the entry is in their name.
          case "PullAutoMergeFailed":
            return notify(event, known, event.commentId, { receivers: [event.doer.id], toDoer: true })
          default:
            return Effect.void
        }
      }
      yield* hub.subscribe({ name: "notifications", handle, afterAnswer: true })

      // --- reading them (routers/api/v1/notify) ---

      const present = (caller: Principal, rows: ReadonlyArray<NotificationRow>) =>
        Effect.gen(function* () {
          const issueIds = rows.flatMap((r) => (r.issueId === null ? [] : [r.issueId]))
          const issueRows = new Map<number, IssueRow>(
            (yield* issues.issuesByIds(issueIds)).map((i) => [i.id, i] as const)
          )
          const lastComments = yield* repo.lastCommentIds(issueIds)
          const repoRows = yield* repos.findByIds([...new Set(rows.map((r) => r.repoId))])
          const owners = yield* users.findByIds([...new Set(repoRows.map((r) => r.ownerId))])
          const items = repoRows.flatMap((r) => {
            const owner = owners.get(r.ownerId)
            return owner === undefined ? [] : [{ repo: r, owner, access: { mode: "read", code: "read" } as const }]
          })
          // Forgejo presents the repository with read access only (the receiver may read it).
          const presented = yield* presenter.present(caller, items)
          const byRepo = new Map(presented.map((p, i) => [items[i]!.repo.id, { json: p, item: items[i]! }] as const))
          const threads: Array<NotificationThread> = []
          for (const row of rows) {
            const place = byRepo.get(row.repoId)
            if (place === undefined) continue
            const issue = row.issueId === null ? undefined : issueRows.get(row.issueId)
            const repoPath = `${encodeURIComponent(place.item.owner.name)}/${encodeURIComponent(place.item.repo.name)}`
            const last = issue === undefined ? undefined : lastComments.get(issue.id)
            const htmlUrl =
              issue === undefined
                ? ""
                : `${settings.server.ROOT_URL}${repoPath}/${issue.isPull ? "pulls" : "issues"}/${issue.index}`
            threads.push({
              id: row.id,
              repository: place.json,
              subject: {
                title: issue?.title ?? "",
                url:
                  issue === undefined
                    ? ""
                    : `${settings.server.ROOT_URL}api/v1/repos/${repoPath}/issues/${issue.index}`,
                latest_comment_url:
                  last === undefined
                    ? ""
                    : `${settings.server.ROOT_URL}api/v1/repos/${repoPath}/issues/comments/${last}`,
                html_url: htmlUrl,
                latest_comment_html_url: last === undefined ? "" : `${htmlUrl}#issuecomment-${last}`,
                type:
                  row.source === Source.pull
                    ? "Pull"
                    : row.source === Source.commit
                      ? "Commit"
                      : row.source === Source.repository
                        ? "Repository"
                        : "Issue",
                state: issue === undefined ? "" : issue.isClosed ? "closed" : "open"
              },
              unread: row.status === Status.unread,
              pinned: row.status === Status.pinned,
              updated_at: formatTime(row.updatedAt),
              url: `${settings.server.ROOT_URL}api/v1/notifications/threads/${row.id}`
            })
          }
          return threads
        })

      const filterOf = (caller: Principal, repoId: number | undefined, query: ListQuery) =>
        Effect.gen(function* () {
          const since = query.since === undefined || query.since === "" ? undefined : yield* parseTime(query.since)
          const before = query.before === undefined || query.before === "" ? undefined : yield* parseTime(query.before)
          const sources = query.subjectTypes
            .map((t) => SOURCE_NAMES[t.trim().toLowerCase()])
            .filter((s): s is number => s !== undefined)
          return {
            userId: caller.user.id,
            repoId,
            statuses: formBool(query.all) ? undefined : statusesOf(query.statusTypes, ["unread", "pinned"]),
            // Subject types given but none known: nothing matches (Forgejo's empty source list).
            sources: query.subjectTypes.length > 0 && sources.length === 0 ? [0] : sources,
            since,
            before
          } satisfies NotificationFilter
        })

      const findThread = (caller: Principal, raw: string) =>
        Effect.gen(function* () {
          const id = /^\d{1,15}$/.test(raw) ? Number(raw) : 0
          const row = id > 0 ? yield* repo.byId(id) : undefined
          if (row === undefined) return yield* Errors.notFound()
          if (row.userId !== caller.user.id && !caller.user.isAdmin) {
            return yield* Errors.forbidden(
              `only user itself and admin are allowed to read/change this thread ${row.id}`
            )
          }
          return row
        })

      const one = (caller: Principal, row: NotificationRow) =>
        Effect.flatMap(present(caller, [row]), (list) =>
          list[0] === undefined ? Effect.fail(Errors.notFound()) : Effect.succeed(list[0])
        )

      return NotificationsService.of({
        list: (caller, repoId, query, window) =>
          Effect.gen(function* () {
            const filter = yield* filterOf(caller, repoId, query)
            const total = yield* repo.count(filter)
            const rows = yield* repo.list(filter, window)
            return { rows: yield* present(caller, rows), total }
          }),
        unreadCount: (caller) => repo.count({ userId: caller.user.id, statuses: [Status.unread] }),
        markRead: (caller, repoId, query) =>
          Effect.gen(function* () {
            let before: Date | undefined
            if (query.lastReadAt !== undefined && query.lastReadAt.trim() !== "") {
              const parsed = yield* Effect.mapError(parseTime(query.lastReadAt.trim()), (e) =>
                Errors.badRequest(e.message)
              )
              // Go's zero time means "no bound".
              if (parsed.getTime() !== GO_ZERO_TIME) before = parsed
            }
            const rows = yield* repo.list(
              {
                userId: caller.user.id,
                repoId,
                statuses: formBool(query.all) ? undefined : statusesOf(query.statusTypes, ["unread"]),
                before
              },
              undefined
            )
            const target = statusesOf(query.toStatus === undefined ? [] : [query.toStatus], ["read"])[0]!
            const changed: Array<NotificationRow> = []
            for (const row of rows) {
              const updated = yield* repo.setStatus(row.id, target)
              if (updated !== undefined) changed.push(updated)
            }
            return yield* present(caller, changed)
          }),
        thread: (caller, id) => Effect.flatMap(findThread(caller, id), (row) => one(caller, row)),
        markThread: (caller, id, toStatus) =>
          Effect.gen(function* () {
            const row = yield* findThread(caller, id)
            const target = statusesOf(toStatus === undefined ? [] : [toStatus], ["read"])[0]!
            const updated = yield* repo.setStatus(row.id, target)
            return yield* one(caller, updated ?? row)
          })
      })
    })
  )
}

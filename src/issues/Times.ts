// Time tracking (Forgejo's routers/api/v1/repo/issue_tracked_time.go, issue_stopwatch.go): tracked
// times of an issue, a repository and the caller, manual times, resets, and stopwatches. It is on
// when `[service] ENABLE_TIMETRACKING` is and the repository's `internal_tracker.enable_time_tracker`
// (default `[service] DEFAULT_ENABLE_TIMETRACKING`); with `allow_only_contributors_to_track_time`
// only writers, the poster and assignees track time (Forgejo's `CanUseTimetracker`). Status codes
// are Forgejo's (400 `time tracking disabled`, 403 with an empty body, 409 for stopwatches); where
// Forgejo answers 500 (an unknown `user_name`) or lets a time of another issue be deleted through
// this one, Hearth answers 422 and 404. Forgejo sends no webhook for time tracking (§16.1).
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { type OpenedRepository, RepoPolicy, unitEnabled } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { trackerSettings } from "../repos/Schema.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { ghostUser } from "../users/Schema.ts"
import { isPoster, isRepoAdmin, isWriter } from "./Policy.ts"
import { makePresenter, type RepoPlace } from "./Present.ts"
import { type IssueRow, IssuesRepo } from "./Repo.ts"
import type { TrackedTime } from "./Schema.ts"
import { parseTime, placeOf } from "./Service.ts"
import { IssueTimesRepo, type TimesFilter, type TrackedTimeRow } from "./TimesRepo.ts"

type ServiceError = Errors.ApiError

export interface StopWatch {
  readonly created: string
  readonly seconds: number
  readonly duration: string
  readonly issue_index: number
  readonly issue_title: string
  readonly repo_owner_name: string
  readonly repo_name: string
}

export interface TimesQuery {
  readonly user?: string | undefined
  readonly since?: string | undefined
  readonly before?: string | undefined
}

/** AddTimeOption. */
export interface AddTimeOption {
  readonly time: number
  readonly created?: string | undefined
  readonly user_name?: string | undefined
}

const DISABLED = "time tracking disabled"
const NOT_ALLOWED = "query by user not allowed; not enough rights"
const CONTRIBUTORS_ONLY = "only writers, the poster and assignees may track time on this issue"

/** Forgejo's `util.SecToTime`: the two largest units, e.g. `1 minute 6 seconds`, `14 hours 33 minutes`. */
export const secToTime = (total: number): string => {
  const duration = Math.max(0, Math.floor(total))
  let days = Math.floor(duration / 86400)
  const years = Math.floor(days / 365)
  days -= years * 365
  const months = Math.floor((days * 12) / 365)
  days -= Math.floor((months * 365) / 12)
  const weeks = Math.floor(days / 7)
  days -= weeks * 7
  const hours = Math.floor(duration / 3600) % 24
  const minutes = Math.floor(duration / 60) % 60
  const seconds = duration % 60
  const pair: Array<[number, string]> =
    years > 0
      ? [
          [years, "year"],
          [months, "month"]
        ]
      : months > 0
        ? [
            [months, "month"],
            [weeks, "week"]
          ]
        : weeks > 0
          ? [
              [weeks, "week"],
              [days, "day"]
            ]
          : days > 0
            ? [
                [days, "day"],
                [hours, "hour"]
              ]
            : hours > 0
              ? [
                  [hours, "hour"],
                  [minutes, "minute"]
                ]
              : [
                  [minutes, "minute"],
                  [seconds, "second"]
                ]
  return pair
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n} ${unit}${n > 1 ? "s" : ""}`)
    .join(" ")
}

export class IssueTimes extends Context.Service<
  IssueTimes,
  {
    readonly issueTimes: (
      opened: OpenedRepository,
      index: string,
      query: TimesQuery,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<TrackedTime>; readonly total: number }, ServiceError>
    readonly repoTimes: (
      opened: OpenedRepository,
      query: TimesQuery,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<TrackedTime>; readonly total: number }, ServiceError>
    /** The deprecated GET /repos/{o}/{r}/times/{user}: every time of one user, unpaged. */
    readonly userRepoTimes: (
      opened: OpenedRepository,
      login: string
    ) => Effect.Effect<ReadonlyArray<TrackedTime>, ServiceError>
    readonly myTimes: (
      caller: Principal,
      query: TimesQuery,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<TrackedTime>; readonly total: number }, ServiceError>
    readonly addTime: (
      opened: OpenedRepository,
      index: string,
      input: AddTimeOption
    ) => Effect.Effect<TrackedTime, ServiceError>
    readonly resetTime: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    readonly deleteTime: (opened: OpenedRepository, index: string, id: string) => Effect.Effect<void, ServiceError>
    readonly stopwatch: (
      opened: OpenedRepository,
      index: string,
      action: "start" | "stop" | "delete"
    ) => Effect.Effect<void, ServiceError>
    readonly myStopwatches: (
      caller: Principal,
      window: Page | undefined
    ) => Effect.Effect<{ readonly rows: ReadonlyArray<StopWatch>; readonly total: number }, ServiceError>
  }
>()("hearth/issues/IssueTimes") {
  static readonly layer = Layer.effect(
    IssueTimes,
    Effect.gen(function* () {
      const settings = yield* Settings
      const issues = yield* IssuesRepo
      const times = yield* IssueTimesRepo
      const users = yield* UsersRepo
      const repos = yield* ReposRepo
      const policy = yield* RepoPolicy
      const present = yield* makePresenter(settings)

      const enabledIn = (repo: RepoRow) => trackerSettings(settings, repo).enable_time_tracker
      const doerOf = (opened: { readonly caller: Principal | undefined }) =>
        opened.caller === undefined
          ? Effect.fail(Errors.unauthorized("token is required"))
          : Effect.succeed(opened.caller)
      const findIssue = (opened: OpenedRepository, index: string) =>
        Effect.gen(function* () {
          const n = /^\d{1,15}$/.test(index) ? Number(index) : 0
          const found = n < 1 ? Option.none<IssueRow>() : yield* issues.issueByIndex(opened.repo.id, n)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })

      /** Forgejo's `CanUseTimetracker`. */
      const canUse = (opened: OpenedRepository, issue: IssueRow, caller: Principal) =>
        Effect.gen(function* () {
          const tracker = trackerSettings(settings, opened.repo)
          if (!tracker.enable_time_tracker) return false
          if (!tracker.allow_only_contributors_to_track_time || isWriter(opened) || isPoster(caller, issue)) return true
          const assigned = yield* issues.assigneesOf([issue.id])
          return (assigned.get(issue.id) ?? []).includes(caller.user.id)
        })
      /** The refusal of a caller who may not track time here: 400 when it is off, else 403 (Forgejo: empty body). */
      const ensureCanUse = (opened: OpenedRepository, issue: IssueRow, caller: Principal) =>
        Effect.flatMap(canUse(opened, issue, caller), (ok) =>
          ok
            ? Effect.void
            : Effect.fail(enabledIn(opened.repo) ? Errors.forbidden(CONTRIBUTORS_ONLY) : Errors.badRequest(DISABLED))
        )

      const optionalTime = (raw: string | undefined) =>
        raw === undefined || raw === "" ? Effect.succeed(undefined) : parseTime(raw)

      /** Forgejo's `user` filter: writers and site admins may name anyone; others only see their own. */
      const userFilter = (opened: OpenedRepository, caller: Principal, login: string | undefined) =>
        Effect.gen(function* () {
          let userId: number | undefined
          if (login !== undefined && login.trim() !== "") {
            const user = yield* users.findByName(login.trim())
            if (Option.isNone(user)) return yield* Errors.notFound()
            userId = user.value.id
          }
          const mayChoose = caller.user.isAdmin || userId === caller.user.id || isWriter(opened)
          if (mayChoose) return userId
          if (userId === undefined) return caller.user.id
          return yield* Errors.forbidden(NOT_ALLOWED)
        })

      /** TrackedTime JSON, each with its issue as `viewer` sees it (null where it may not read it any more). */
      const presentTimes = (
        rows: ReadonlyArray<TrackedTimeRow>,
        viewer: Principal | undefined,
        known?: OpenedRepository
      ) =>
        Effect.gen(function* () {
          const people = yield* users.findByIds([...new Set(rows.map((r) => r.userId))])
          const issueRows = yield* issues.issuesByIds([...new Set(rows.map((r) => r.issueId))])
          const places = new Map<number, RepoPlace | undefined>()
          if (known !== undefined) places.set(known.repo.id, placeOf(known))
          for (const issue of issueRows) {
            if (places.has(issue.repoId)) continue
            const repo = yield* repos.findById(issue.repoId)
            const owner = Option.isSome(repo) ? yield* users.findById(repo.value.ownerId) : Option.none<UserRow>()
            if (Option.isNone(repo) || Option.isNone(owner)) {
              places.set(issue.repoId, undefined)
              continue
            }
            const access = yield* policy.access(viewer, repo.value, owner.value)
            const readable = atLeast(access.mode, "read") && unitEnabled(repo.value, issue.isPull ? "pulls" : "issues")
            places.set(
              issue.repoId,
              readable ? { id: repo.value.id, ownerName: owner.value.name, name: repo.value.name } : undefined
            )
          }
          const shownIssues = issueRows.filter((i) => places.get(i.repoId) !== undefined)
          const presented = yield* present.issues(shownIssues, (i) => places.get(i.repoId)!, viewer)
          const byId = new Map(presented.map((p) => [p.id, p]))
          return rows.map(
            (t): TrackedTime => ({
              id: t.id,
              created: formatTime(t.createdAt),
              time: t.time,
              user_id: t.userId,
              user_name: (people.get(t.userId) ?? ghostUser).name,
              issue_id: t.issueId,
              issue: byId.get(t.issueId) ?? null
            })
          )
        })

      const listed = (filter: TimesFilter, window: Page | undefined, viewer: Principal, known?: OpenedRepository) =>
        Effect.gen(function* () {
          const found = yield* times.list(filter, window)
          return { rows: yield* presentTimes(found.rows, viewer, known), total: found.total }
        })

      return IssueTimes.of({
        issueTimes: (opened, index, query, window) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            if (!enabledIn(opened.repo)) return yield* Errors.notFound()
            const issue = yield* findIssue(opened, index)
            const userId = yield* userFilter(opened, caller, query.user)
            const since = yield* optionalTime(query.since)
            const before = yield* optionalTime(query.before)
            return yield* listed({ issueId: issue.id, userId, since, before }, window, caller, opened)
          }),
        repoTimes: (opened, query, window) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            if (!enabledIn(opened.repo)) return yield* Errors.badRequest(DISABLED)
            const userId = yield* userFilter(opened, caller, query.user)
            const since = yield* optionalTime(query.since)
            const before = yield* optionalTime(query.before)
            return yield* listed({ repoId: opened.repo.id, userId, since, before }, window, caller, opened)
          }),
        userRepoTimes: (opened, login) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            if (!enabledIn(opened.repo)) return yield* Errors.badRequest(DISABLED)
            const user = yield* users.findByName(login)
            if (Option.isNone(user)) return yield* Errors.notFound()
            if (!isRepoAdmin(opened) && user.value.id !== caller.user.id) return yield* Errors.forbidden(NOT_ALLOWED)
            const found = yield* listed({ repoId: opened.repo.id, userId: user.value.id }, undefined, caller, opened)
            return found.rows
          }),
        myTimes: (caller, query, window) =>
          Effect.gen(function* () {
            const since = yield* optionalTime(query.since)
            const before = yield* optionalTime(query.before)
            return yield* listed({ userId: caller.user.id, since, before }, window, caller)
          }),

        addTime: (opened, index, input) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            yield* ensureCanUse(opened, issue, caller)
            if (!Number.isSafeInteger(input.time) || input.time <= 0) {
              return yield* Errors.validationFailed("[Time]: Required (a positive number of seconds)")
            }
            // Repository admins may book time for someone else, site admins for anyone; others
            // always book their own (the name is ignored, as in Forgejo).
            let user = caller.user
            const named = input.user_name ?? ""
            if (named !== "" && ((isRepoAdmin(opened) && named !== caller.user.name) || caller.user.isAdmin)) {
              const found = yield* users.findByName(named)
              if (Option.isNone(found) || found.value.type !== "user") {
                return yield* Errors.validationFailed(`user does not exist [name: ${named}]`)
              }
              user = found.value
            }
            const created =
              input.created === undefined || input.created === "" ? new Date() : yield* parseTime(input.created)
            const time = yield* times.add(issue.id, user.id, input.time, created)
            const [shown] = yield* presentTimes([time], caller, opened)
            return shown!
          }),
        resetTime: (opened, index) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            yield* ensureCanUse(opened, issue, caller)
            const removed = yield* times.resetUser(issue.id, caller.user.id, new Date())
            if (removed === undefined) return yield* Errors.notFound()
          }),
        deleteTime: (opened, index, rawId) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            yield* ensureCanUse(opened, issue, caller)
            const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0
            const time = id === 0 ? undefined : yield* times.byId(id)
            if (time === undefined || time.deleted || time.issueId !== issue.id) return yield* Errors.notFound()
            // Only its user and site admins delete a time (403; Forgejo's body is empty).
            if (!caller.user.isAdmin && time.userId !== caller.user.id) {
              return yield* Errors.forbidden("only the user who tracked a time or a site admin may delete it")
            }
            if (!(yield* times.deleteOne(time, new Date()))) return yield* Errors.notFound()
          }),

        stopwatch: (opened, index, action) =>
          Effect.gen(function* () {
            const caller = yield* doerOf(opened)
            const issue = yield* findIssue(opened, index)
            // Forgejo's prepareIssueStopwatch: writers only, then CanUseTimetracker (403; Forgejo's body is empty).
            if (!isWriter(opened) || !(yield* canUse(opened, issue, caller))) {
              return yield* Errors.forbidden(
                "user should have write permission and time tracking on to use a stopwatch"
              )
            }
            const at = new Date()
            const running = (yield* times.stopwatch(caller.user.id, issue.id)) !== undefined
            if (action === "start") {
              if (running || !(yield* times.start(caller.user.id, issue.id, at))) {
                return yield* Errors.conflict("cannot start a stopwatch again if it already exists")
              }
              return
            }
            const done =
              running &&
              (action === "stop"
                ? (yield* times.finish(caller.user.id, issue.id, at)) !== undefined
                : yield* times.cancel(caller.user.id, issue.id, at))
            if (!done) return yield* Errors.conflict("cannot stop/cancel a non existent stopwatch")
          }),
        myStopwatches: (caller, window) =>
          Effect.gen(function* () {
            const found = yield* times.stopwatchesOf(caller.user.id, window)
            const now = Date.now()
            const rows: Array<StopWatch> = []
            for (const sw of found.rows) {
              const repo = yield* repos.findById(sw.repoId)
              const owner = Option.isSome(repo) ? yield* users.findById(repo.value.ownerId) : Option.none<UserRow>()
              const seconds = Math.max(0, Math.floor((now - sw.createdAt.getTime()) / 1000))
              rows.push({
                created: formatTime(sw.createdAt),
                seconds,
                duration: secToTime(seconds),
                issue_index: sw.index,
                issue_title: sw.title,
                repo_owner_name: Option.isSome(owner) ? owner.value.name : "",
                repo_name: Option.isSome(repo) ? repo.value.name : ""
              })
            }
            return { rows, total: found.total }
          })
      })
    })
  )
}

// The tracker's rules (Forgejo's services/issue, models/issues, routers/api/v1/repo/issue*.go;
// CONTRACT-ISSUES §3–§9). Every change is written first and its event published after it
// committed (src/events). The `updated_at` override (§4) is resolved once per request into `at`,
// the time every write of that request stores.
import { Context, Effect, Layer, Option } from "effect"
import { BlocksService } from "../blocks/Service.ts"
import { Settings } from "../config/Settings.ts"
import * as Events from "../events/Events.ts"
import { EventHub, type Known } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { mentionCandidates } from "../markdown/References.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsRepo } from "../orgs/Repo.ts"
import { type OpenedRepository, RepoPolicy, searchFilter, unitEnabled } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { trackerSettings } from "../repos/Schema.ts"
import { AccountPolicy } from "../users/Policy.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { IssueDepsRepo } from "./DepsRepo.ts"
import { makeLookup, parseTime, resolveUpdatedAt } from "./Lookup.ts"
import { isRepoAdmin, isWriter, LOCKED_REFUSED, MERGED_STATE_REFUSED, mayComment, mayEditIssue } from "./Policy.ts"
import { commentType, makePresenter, REF_NEUTERED, type RepoPlace } from "./Present.ts"
import {
  type CommentRow,
  type IssueFilter,
  type IssueRow,
  type IssueSort,
  IssuesRepo,
  type LabelRow,
  type Listed,
  type MilestoneRow
} from "./Repo.ts"
import type {
  Comment,
  CreateIssueOption,
  CreateLabelOption,
  CreateMilestoneOption,
  EditIssueOption,
  EditLabelOption,
  EditMilestoneOption,
  Issue,
  Label,
  Milestone,
  TimelineComment
} from "./Schema.ts"
import { IssueTimesRepo } from "./TimesRepo.ts"

const T = {
  comment: commentType("comment"),
  reopen: commentType("reopen"),
  close: commentType("close"),
  issueRef: commentType("issue_ref"),
  commentRef: commentType("comment_ref"),
  pullRef: commentType("pull_ref"),
  label: commentType("label"),
  milestone: commentType("milestone"),
  assignees: commentType("assignees"),
  changeTitle: commentType("change_title"),
  addedDeadline: commentType("added_deadline"),
  modifiedDeadline: commentType("modified_deadline"),
  removedDeadline: commentType("removed_deadline"),
  code: commentType("code"),
  review: commentType("review"),
  dismissReview: commentType("dismiss_review"),
  changeIssueRef: commentType("change_issue_ref")
}
/** Comment types whose body can be edited (Forgejo's `HasContentSupport`). */
const CONTENT_TYPES = [T.comment, T.code, T.review, T.dismissReview]

export const placeOf = (opened: OpenedRepository): RepoPlace => ({
  id: opened.repo.id,
  ownerName: opened.owner.name,
  name: opened.repo.name
})

export { parseTime } from "./Lookup.ts"

const optionalTime = (raw: string | null | undefined) =>
  raw === undefined || raw === null || raw === "" ? Effect.succeed(undefined) : parseTime(raw)

/** 23:59:59 of the calendar day of `raw` in the offset it was written in (Forgejo's deadline rule). */
const endOfDay = (raw: string, date: Date): Date => {
  const offset = /([+-])(\d{2}):(\d{2})$/.exec(raw)
  const minutes = offset === null ? 0 : (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3]))
  const local = new Date(date.getTime() + minutes * 60_000)
  const end = Date.UTC(local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate(), 23, 59, 59)
  return new Date(end - minutes * 60_000)
}

const day = (date: Date) => date.toISOString().slice(0, 10)

/** Forgejo's `NormalizeColor` and its check: `#`-less lower-case six hex digits. */
export const normalizeColor = (raw: string): Effect.Effect<string, Errors.ValidationFailed> => {
  let color = raw.trim().toLowerCase().replace(/^#/, "")
  if (/^[0-9a-f]{3}$/.test(color)) color = [...color].map((c) => c + c).join("")
  return /^[0-9a-f]{6}$/.test(color)
    ? Effect.succeed(color)
    : Effect.fail(Errors.validationFailed(`bad color code: #${color}`))
}

/** The scope of an exclusive label: the name before its last `/`, when that is neither first nor last. */
export const exclusiveScope = (label: Pick<LabelRow, "name" | "exclusive">): string | undefined => {
  if (!label.exclusive) return undefined
  const at = label.name.lastIndexOf("/")
  return at <= 0 || at === label.name.length - 1 ? undefined : label.name.slice(0, at)
}

/** Go's `strconv.ParseInt(s, 0, 64)`: decimal, or 0x/0o/0b prefixed; undefined when not a number. */
const parseGoInt = (raw: string): number | undefined => {
  if (!/^[+-]?(0[xX][0-9a-fA-F]+|0[oO]?[0-7]+|0[bB][01]+|[1-9]\d*|0)$/.test(raw)) return undefined
  const negative = raw.startsWith("-")
  const body = raw.replace(/^[+-]/, "")
  const value = /^0[0-7]+$/.test(body) ? Number.parseInt(body, 8) : Number(body.replace(/^0[oO]/, "0o"))
  return Number.isSafeInteger(value) ? (negative ? -value : value) : undefined
}

/** Cuts to `max` UTF-8 bytes without splitting a character (Forgejo's `util.EllipsisDisplayString`-free cut). */
const cutBytes = (text: string, max: number) => {
  if (Buffer.byteLength(text) <= max) return text
  let out = ""
  for (const ch of text) {
    if (Buffer.byteLength(out + ch) > max) break
    out += ch
  }
  return out
}

export interface IssueListQuery {
  readonly state?: string | undefined
  readonly labels?: string | undefined
  readonly q?: string | undefined
  readonly type?: string | undefined
  readonly milestones?: string | undefined
  readonly since?: string | undefined
  readonly before?: string | undefined
  readonly created_by?: string | undefined
  readonly assigned_by?: string | undefined
  readonly mentioned_by?: string | undefined
  readonly sort?: string | undefined
}

export interface IssueSearchQuery extends IssueListQuery {
  readonly owner?: string | undefined
  readonly team?: string | undefined
  readonly priority_repo_id?: string | undefined
  readonly assigned?: string | undefined
  readonly created?: string | undefined
  readonly mentioned?: string | undefined
  readonly review_requested?: string | undefined
  readonly reviewed?: string | undefined
}

const SORTS: ReadonlyArray<IssueSort> = [
  "latest",
  "oldest",
  "recentupdate",
  "leastupdate",
  "mostcomment",
  "leastcomment",
  "nearduedate",
  "farduedate"
]
const sortOf = (raw: string | undefined): IssueSort => SORTS.find((s) => s === raw) ?? "latest"
const stateOf = (raw: string | undefined): "open" | "closed" | "all" =>
  raw === "closed" ? "closed" : raw === "all" ? "all" : "open"
const commaList = (raw: string | undefined) =>
  (raw ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "")

/** The keyword of `q` as Forgejo's database indexer applies it: its last plain token. */
const keywordOf = (raw: string | undefined): string | undefined => {
  if (raw === undefined || raw.includes("\u0000")) return undefined
  const tokens = raw.match(/"[^"]*"|\S+/g) ?? []
  const plain = tokens
    .map((t) => t.replace(/^"|"$/g, ""))
    .filter((t) => !/^-?(is|sort|modified|author|assignee|review|mentions):/.test(t))
    .map((t) => t.replace(/^\+/, ""))
    .filter((t) => t !== "" && !t.startsWith("-"))
  return plain.at(-1)
}

/** A reference found in a text: `#N`, `owner/repo#N` or an issue URL of this instance. */
interface Reference {
  readonly owner: string | undefined
  readonly repo: string | undefined
  readonly index: number
}

export const findReferences = (text: string, rootUrl: string): Array<Reference> => {
  const found: Array<Reference> = []
  const root = rootUrl.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
  const url = new RegExp(`${root}([A-Za-z0-9_][-A-Za-z0-9_.]*)/([-A-Za-z0-9_.]+)/(?:issues|pulls)/(\\d{1,10})`, "g")
  for (const m of text.matchAll(url)) found.push({ owner: m[1], repo: m[2], index: Number(m[3]) })
  const withoutUrls = text.replace(url, " ")
  const refs = /(?:^|[\s([{])(?:([A-Za-z0-9_][-A-Za-z0-9_.]*)\/([-A-Za-z0-9_.]+))?#(\d{1,10})(?=$|[\s.,:;!?)\]}'"])/g
  for (const m of withoutUrls.matchAll(refs)) found.push({ owner: m[1], repo: m[2], index: Number(m[3]) })
  return found
}

type ServiceError = Errors.ApiError

/** What a pull request adds to its issue's creation (see `create`). */
export interface PullPart {
  readonly within: (issue: IssueRow) => Effect.Effect<void>
}

export class IssuesService extends Context.Service<
  IssuesService,
  {
    readonly list: (
      opened: OpenedRepository,
      query: IssueListQuery,
      page: Page
    ) => Effect.Effect<Listed<Issue>, ServiceError>
    readonly search: (
      viewer: Principal | undefined,
      query: IssueSearchQuery,
      page: Page
    ) => Effect.Effect<Listed<Issue>, ServiceError>
    readonly get: (opened: OpenedRepository, index: string) => Effect.Effect<Issue, ServiceError>
    /**
     * `pull`: the issue of a pull request (src/pulls), whose `within` writes the pull request's own
     * row in the same transaction, before any event is published.
     */
    readonly create: (
      opened: OpenedRepository,
      input: CreateIssueOption,
      pull?: PullPart
    ) => Effect.Effect<Issue, ServiceError>
    readonly edit: (
      opened: OpenedRepository,
      index: string,
      input: EditIssueOption
    ) => Effect.Effect<Issue, ServiceError>
    readonly remove: (opened: OpenedRepository, index: string) => Effect.Effect<void, ServiceError>
    readonly setDeadline: (
      opened: OpenedRepository,
      index: string,
      raw: string | null
    ) => Effect.Effect<Date | null, ServiceError>

    readonly listComments: (
      opened: OpenedRepository,
      index: string,
      since: string | undefined,
      before: string | undefined
    ) => Effect.Effect<Listed<Comment>, ServiceError>
    readonly listRepoComments: (
      opened: OpenedRepository,
      since: string | undefined,
      before: string | undefined,
      window: Page | undefined
    ) => Effect.Effect<Listed<Comment>, ServiceError>
    readonly createComment: (
      opened: OpenedRepository,
      index: string,
      body: string | null | undefined,
      updatedAt: string | null | undefined
    ) => Effect.Effect<Comment, ServiceError>
    /** `undefined`: the comment is of a generated type (204). */
    readonly getComment: (opened: OpenedRepository, id: string) => Effect.Effect<Comment | undefined, ServiceError>
    readonly editComment: (
      opened: OpenedRepository,
      id: string,
      body: string | null | undefined,
      updatedAt: string | null | undefined
    ) => Effect.Effect<Comment | undefined, ServiceError>
    readonly deleteComment: (opened: OpenedRepository, id: string) => Effect.Effect<void, ServiceError>
    readonly timeline: (
      opened: OpenedRepository,
      index: string,
      since: string | undefined,
      before: string | undefined,
      window: Page | undefined
    ) => Effect.Effect<Listed<TimelineComment>, ServiceError>

    readonly listRepoLabels: (
      opened: OpenedRepository,
      sort: string | undefined,
      window: Page | undefined
    ) => Effect.Effect<Listed<Label>>
    readonly getRepoLabel: (opened: OpenedRepository, id: string) => Effect.Effect<Label, ServiceError>
    readonly createRepoLabel: (opened: OpenedRepository, input: CreateLabelOption) => Effect.Effect<Label, ServiceError>
    readonly editRepoLabel: (
      opened: OpenedRepository,
      id: string,
      input: EditLabelOption
    ) => Effect.Effect<Label, ServiceError>
    readonly deleteRepoLabel: (opened: OpenedRepository, id: string) => Effect.Effect<void, ServiceError>
    readonly listOrgLabels: (
      viewer: Principal | undefined,
      org: string,
      sort: string | undefined,
      window: Page | undefined
    ) => Effect.Effect<Listed<Label>, ServiceError>
    readonly getOrgLabel: (viewer: Principal, org: string, id: string) => Effect.Effect<Label, ServiceError>
    readonly createOrgLabel: (
      caller: Principal,
      org: string,
      input: CreateLabelOption
    ) => Effect.Effect<Label, ServiceError>
    readonly editOrgLabel: (
      caller: Principal,
      org: string,
      id: string,
      input: EditLabelOption
    ) => Effect.Effect<Label, ServiceError>
    readonly deleteOrgLabel: (caller: Principal, org: string, id: string) => Effect.Effect<void, ServiceError>

    readonly issueLabels: (opened: OpenedRepository, index: string) => Effect.Effect<Array<Label>, ServiceError>
    readonly changeIssueLabels: (
      opened: OpenedRepository,
      index: string,
      mode: "add" | "replace",
      labels: ReadonlyArray<unknown> | null | undefined,
      updatedAt: string | null | undefined
    ) => Effect.Effect<Array<Label>, ServiceError>
    readonly removeIssueLabel: (
      opened: OpenedRepository,
      index: string,
      identifier: string,
      updatedAt: string | null | undefined
    ) => Effect.Effect<void, ServiceError>
    readonly clearIssueLabels: (
      opened: OpenedRepository,
      index: string,
      updatedAt: string | null | undefined
    ) => Effect.Effect<void, ServiceError>

    readonly listMilestones: (
      opened: OpenedRepository,
      state: string | undefined,
      name: string | undefined,
      window: Page | undefined
    ) => Effect.Effect<Listed<Milestone>>
    readonly getMilestone: (opened: OpenedRepository, id: string) => Effect.Effect<Milestone, ServiceError>
    readonly createMilestone: (
      opened: OpenedRepository,
      input: CreateMilestoneOption
    ) => Effect.Effect<Milestone, ServiceError>
    readonly editMilestone: (
      opened: OpenedRepository,
      id: string,
      input: EditMilestoneOption
    ) => Effect.Effect<Milestone, ServiceError>
    readonly deleteMilestone: (opened: OpenedRepository, id: string) => Effect.Effect<void, ServiceError>

    /**
     * Which of `refs` exist and the account `viewerId` (anonymous when undefined) may read, as
     * `owner/repo#index` (lower-cased): the markdown renderer links only those.
     */
    /**
     * Records whom `text` (written by `doer` in an issue or pull request of `place`) mentions, as
     * issue comments do: only readers of the repository, never one who blocked `doer`; the
     * notifications of a text name those (reviews and their inline comments use it too).
     */
    readonly recordMentions: (
      place: { readonly owner: UserRow; readonly repo: RepoRow },
      doer: UserRow,
      issueId: number,
      text: string
    ) => Effect.Effect<void>

    /**
     * Closes `issue` in `doer`'s name, as the forge itself does (Forgejo's `issue_service.ChangeStatus`
     * from `CloseBranchPulls`): no permission asked; a `close` comment and `Issues`/`closed`.
     * False, changing nothing, when it is closed already or still has open dependencies.
     */
    readonly closeAs: (
      place: { readonly owner: UserRow; readonly repo: RepoRow },
      issue: IssueRow,
      doer: Pick<UserRow, "id" | "name">
    ) => Effect.Effect<boolean>

    readonly visibleReferences: (
      viewerId: number | undefined,
      refs: ReadonlyArray<{ readonly owner: string; readonly repo: string; readonly index: number }>
    ) => Effect.Effect<ReadonlySet<string>>
  }
>()("hearth/issues/IssuesService") {
  static readonly layer = Layer.effect(
    IssuesService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const repo = yield* IssuesRepo
      const deps = yield* IssueDepsRepo
      const times = yield* IssueTimesRepo
      const users = yield* UsersRepo
      const repos = yield* ReposRepo
      const policy = yield* RepoPolicy
      const orgs = yield* OrgPolicy
      const orgRows = yield* OrgsRepo
      const blocks = yield* BlocksService
      const accounts = yield* AccountPolicy
      const hub = yield* EventHub
      const present = yield* makePresenter(settings)
      const { findIssue, findComment } = yield* makeLookup

      const subjectOf = (opened: OpenedRepository, doer: UserRow) => Events.subject(opened.owner, opened.repo, doer)
      const issueRef = (issue: IssueRow): Events.IssueRef => ({
        id: issue.id,
        index: issue.index,
        isPull: issue.isPull
      })
      const publishAll = (events: ReadonlyArray<Events.Event>, known?: Known) =>
        Effect.forEach(events, (event) => hub.publishKnown(event, known ?? {}), { discard: true })

      const doerOf = (opened: OpenedRepository) =>
        opened.caller === undefined
          ? Effect.fail(Errors.unauthorized("token is required"))
          : Effect.succeed(opened.caller.user)

      const presentOne = (opened: OpenedRepository, issue: IssueRow) =>
        Effect.map(
          present.issues([issue], () => placeOf(opened), opened.caller),
          (list) => list[0]!
        )

      const reread = (opened: OpenedRepository, issue: IssueRow) =>
        Effect.flatMap(repo.issueById(issue.id), (row) =>
          presentOne(
            opened,
            Option.getOrElse(row, () => issue)
          )
        )

      /**
       * The users `text` mentions, for the `mentioned_by` filter (and notifications later): as
       * Forgejo's `ResolveIssueMentionsByVisibility`, only those who may read the repository, and
       * never one who blocked the author.
       */
      const recordMentions = (
        opened: { readonly owner: UserRow; readonly repo: RepoRow },
        doer: UserRow,
        issueId: number,
        text: string
      ) =>
        Effect.gen(function* () {
          const ids: Array<number> = []
          for (const name of mentionCandidates(text, 50)) {
            const found = yield* users.findByName(name)
            if (Option.isNone(found) || found.value.type !== "user") continue
            const user = found.value
            const access = yield* policy.access(
              { user, scopes: undefined, method: "password" },
              opened.repo,
              opened.owner
            )
            if (!atLeast(access.mode, "read") || (yield* blocks.isBlocked(user, doer))) continue
            ids.push(user.id)
          }
          yield* repo.addMentions(issueId, ids)
        })

      // --- cross-references (models/issues/issue_xref.go) ---

      /** The issues `text` (written in `source`'s repository by `doer`) references that `doer` may read. */
      const referencedIssues = (
        opened: OpenedRepository,
        doer: Principal | undefined,
        source: IssueRow,
        text: string
      ) =>
        Effect.gen(function* () {
          const targets = new Map<number, IssueRow>()
          for (const ref of findReferences(text, settings.server.ROOT_URL)) {
            let repoId = opened.repo.id
            if (ref.owner !== undefined && ref.repo !== undefined) {
              const owner = yield* users.findByName(ref.owner)
              if (Option.isNone(owner)) continue
              const target = yield* repos.findByName(owner.value.id, ref.repo)
              if (Option.isNone(target)) continue
              if (target.value.id !== opened.repo.id) {
                // Only into a repository whose issues the author may read.
                const access = yield* policy.access(doer, target.value, owner.value)
                if (!atLeast(access.mode, "read") || !unitEnabled(target.value, "issues")) continue
              }
              repoId = target.value.id
            }
            const issue = yield* repo.issueByIndex(repoId, ref.index)
            if (Option.isNone(issue) || issue.value.id === source.id) continue
            targets.set(issue.value.id, issue.value)
          }
          return [...targets.values()]
        })

      /**
       * Makes the reference comments of one text (an issue's title and body, or one comment)
       * match what it references now: new ones are written, vanished ones neutered.
       */
      const syncReferences = (
        opened: OpenedRepository,
        doer: Principal | undefined,
        source: IssueRow,
        comment: CommentRow | undefined,
        text: string,
        at: Date,
        fresh = false
      ) =>
        Effect.gen(function* () {
          if (doer === undefined) return
          const targets = yield* referencedIssues(opened, doer, source, text)
          // A source written just now (`fresh`) has made no reference yet: nothing to read.
          const existing = fresh ? [] : yield* repo.referencesFrom(source.id, comment?.id ?? null)
          const wanted = new Set(targets.map((t) => t.id))
          for (const ref of existing) {
            if (!wanted.has(ref.issueId) && ref.refAction !== REF_NEUTERED)
              yield* repo.setRefAction(ref.id, REF_NEUTERED, at)
            if (wanted.has(ref.issueId) && ref.refAction === REF_NEUTERED) yield* repo.setRefAction(ref.id, 0, at)
          }
          const have = new Set(existing.map((r) => r.issueId))
          for (const target of targets) {
            if (have.has(target.id)) continue
            yield* repo.insertComment({
              issueId: target.id,
              type: comment !== undefined ? T.commentRef : source.isPull ? T.pullRef : T.issueRef,
              posterId: doer.user.id,
              refRepoId: source.repoId,
              refIssueId: source.id,
              refCommentId: comment?.id ?? null,
              refIsPull: source.isPull,
              at
            })
            yield* repo.touchIssue(target.id, at)
          }
        })

      const neuterReferences = (source: IssueRow, comment: CommentRow, at: Date) =>
        Effect.gen(function* () {
          for (const ref of yield* repo.referencesFrom(source.id, comment.id)) {
            if (ref.refAction !== REF_NEUTERED) yield* repo.setRefAction(ref.id, REF_NEUTERED, at)
          }
        })

      // --- labels ---

      const orgIdOf = (opened: OpenedRepository) => (opened.owner.type === "organization" ? opened.owner.id : null)

      /** Labels usable on the repository's issues: its own and its organization's. */
      const usable = (opened: OpenedRepository, label: LabelRow) =>
        label.repoId === opened.repo.id || (label.orgId !== null && label.orgId === orgIdOf(opened))

      const labelJson = (opened: OpenedRepository) => (l: LabelRow) =>
        present.label(l, opened.owner.name, opened.repo.name)

      /** Adds `label` to the issue, removing the other labels of its exclusive scope first. */
      const attachLabel = (issue: IssueRow, label: LabelRow, current: Array<LabelRow>, doer: UserRow, at: Date) =>
        Effect.gen(function* () {
          if (current.some((l) => l.id === label.id)) return false
          const scope = exclusiveScope(label)
          if (scope !== undefined) {
            for (const other of current.filter((l) => l.id !== label.id && exclusiveScope(l) === scope)) {
              yield* detachLabel(issue, other, doer, at)
              current.splice(current.indexOf(other), 1)
            }
          }
          yield* repo.addIssueLabel(issue.id, label.id)
          yield* repo.insertComment({
            issueId: issue.id,
            type: T.label,
            posterId: doer.id,
            labelId: label.id,
            body: "1",
            at
          })
          current.push(label)
          return true
        })

      const detachLabel = (issue: IssueRow, label: LabelRow, doer: UserRow, at: Date) =>
        Effect.gen(function* () {
          if (!(yield* repo.removeIssueLabel(issue.id, label.id))) return false
          yield* repo.insertComment({
            issueId: issue.id,
            type: T.label,
            posterId: doer.id,
            labelId: label.id,
            body: "",
            at
          })
          return true
        })

      const currentLabels = (issue: IssueRow) =>
        Effect.map(repo.labelsOf([issue.id]), (m) => [...(m.get(issue.id) ?? [])])

      /** `labels` of IssueLabelsOption: all ids or all names (Forgejo's two 400s), resolved to usable labels in name order. */
      const resolveLabelList = (labels: ReadonlyArray<unknown>) =>
        Effect.gen(function* () {
          const allInts = labels.every((l) => typeof l === "number" && Number.isInteger(l))
          const allStrings = labels.every((l) => typeof l === "string")
          if (!allInts && !allStrings) {
            const other = labels.some((l) => typeof l !== "number" && typeof l !== "string")
            return yield* Errors.badRequest(
              other ? "a label must be an integer or a string" : "labels should be an array of strings or integers"
            )
          }
          return { ints: allInts, values: labels }
        })

      const lookUpLabels = (opened: OpenedRepository, list: { ints: boolean; values: ReadonlyArray<unknown> }) =>
        Effect.map(
          list.ints
            ? repo.labelsByIds(list.values as ReadonlyArray<number>)
            : repo.labelsByNames(opened.repo.id, orgIdOf(opened), list.values as ReadonlyArray<string>),
          (rows) => {
            const sorted = rows
              .filter((l) => usable(opened, l))
              .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id))
            // Of several exclusive labels of one scope the one whose name sorts last wins (Forgejo
            // adds them in name order); the others are not added only to be taken off again.
            const lastOfScope = new Map<string, number>()
            for (const l of sorted) {
              const scope = exclusiveScope(l)
              if (scope !== undefined) lastOfScope.set(scope, l.id)
            }
            return sorted.filter((l) => {
              const scope = exclusiveScope(l)
              return scope === undefined || lastOfScope.get(scope) === l.id
            })
          }
        )

      // --- assignees ---

      /** Forgejo's assignee checks: the login exists and may be assigned (write access to the repository). */
      const resolveAssignees = (opened: OpenedRepository, logins: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          const out: Array<UserRow> = []
          for (const login of logins) {
            if (login === "") continue
            const user = yield* users.findByName(login)
            if (Option.isNone(user) || user.value.type !== "user") {
              return yield* Errors.validationFailed(
                `Assignee does not exist: [name: user does not exist [uid: 0, name: ${login}]]`
              )
            }
            const access = yield* policy.access(
              { user: user.value, scopes: undefined, method: "password" },
              opened.repo,
              opened.owner
            )
            if (!atLeast(access.mode, "write")) {
              return yield* Errors.validationFailed(
                `user doesn't have access to repo [user_id: ${user.value.id}, repo_name: ${opened.repo.name}]`
              )
            }
            if (!out.some((u) => u.id === user.value.id)) out.push(user.value)
          }
          return out
        })

      const assignmentEvents = (
        opened: OpenedRepository,
        issue: IssueRow,
        doer: UserRow,
        added: ReadonlyArray<UserRow>,
        removed: ReadonlyArray<UserRow>
      ): Array<Events.Event> => [
        ...added.map(
          (u): Events.Event => ({
            _tag: "Issues",
            ...subjectOf(opened, doer),
            issue: issueRef(issue),
            action: "assigned",
            assignee: Events.doerOf(u)
          })
        ),
        ...removed.map(
          (u): Events.Event => ({
            _tag: "Issues",
            ...subjectOf(opened, doer),
            issue: issueRef(issue),
            action: "unassigned",
            assignee: Events.doerOf(u)
          })
        )
      ]

      // --- milestones ---

      const findMilestone = (opened: OpenedRepository, raw: string) =>
        Effect.gen(function* () {
          const id = parseGoInt(raw)
          if (id !== undefined && id !== 0) {
            const [byId] = yield* repo.milestonesByIds([id])
            if (byId !== undefined && byId.repoId === opened.repo.id) return byId
          }
          const byName = yield* repo.milestoneByName(opened.repo.id, raw)
          if (Option.isNone(byName)) return yield* Errors.notFound()
          return byName.value
        })

      const milestoneJson = (m: MilestoneRow) => present.milestone(m)

      const requireWriter = (opened: OpenedRepository) =>
        isWriter(opened)
          ? Effect.void
          : Effect.fail(Errors.forbidden("user should have a permission to write to a repo"))

      const mayChangeComment = (opened: OpenedRepository, comment: CommentRow) =>
        isWriter(opened) || (opened.caller !== undefined && opened.caller.user.id === comment.posterId)

      const presentComment = (opened: OpenedRepository, issue: IssueRow, comment: CommentRow) =>
        Effect.map(
          present.comments([comment], () => issue, placeOf(opened)),
          (list) => list[0]!
        )

      // --- the issue list filters (§3.1) ---

      const userIdByLogin = (login: string | undefined) =>
        Effect.gen(function* () {
          if (login === undefined || login === "") return undefined
          const user = yield* users.findByName(login)
          if (Option.isNone(user)) return yield* Errors.notFound()
          return user.value.id
        })

      const listFilter = (opened: OpenedRepository, query: IssueListQuery) =>
        Effect.gen(function* () {
          const labelNames = commaList(query.labels)
          const labels =
            labelNames.length === 0 ? [] : yield* repo.labelsByNames(opened.repo.id, orgIdOf(opened), labelNames)
          const milestoneIds: Array<number> = []
          for (const entry of commaList(query.milestones)) {
            const byName = yield* repo.milestoneByName(opened.repo.id, entry)
            if (Option.isSome(byName)) milestoneIds.push(byName.value.id)
            else if (/^\d+$/.test(entry)) {
              const [byId] = yield* repo.milestonesByIds([Number(entry)])
              if (byId !== undefined && byId.repoId === opened.repo.id) milestoneIds.push(byId.id)
            }
          }
          // Pull requests too, where the pulls unit is on (Forgejo: asking for them there otherwise is 404).
          const pulls = unitEnabled(opened.repo, "pulls")
          if (query.type === "pulls" && !pulls) return yield* Errors.notFound()
          return {
            repoIds: [opened.repo.id],
            state: stateOf(query.state),
            isPull: query.type === "pulls" ? true : query.type === "issues" || !pulls ? false : undefined,
            allLabelIds: labels.map((l) => l.id),
            milestoneIds,
            keyword: keywordOf(query.q),
            since: yield* optionalTime(query.since),
            before: yield* optionalTime(query.before),
            posterId: yield* userIdByLogin(query.created_by),
            assigneeId: yield* userIdByLogin(query.assigned_by),
            mentionedId: yield* userIdByLogin(query.mentioned_by),
            sort: sortOf(query.sort)
          } satisfies IssueFilter
        })

      const milestoneIssueTouch = (milestoneId: number | null, at: Date, forwardOnly: boolean) =>
        milestoneId === null ? Effect.void : repo.touchMilestone(milestoneId, at, forwardOnly)

      /** Closes or reopens `issue` (the checks done): its comment by `doer`, the doer's stopwatch, the milestone's counts. */
      const changeState = (issue: IssueRow, close: boolean, doer: Pick<UserRow, "id">, at: Date) =>
        Effect.gen(function* () {
          yield* repo.setClosed(issue, close, at)
          // Closing stops the doer's stopwatch on it (Forgejo's FinishIssueStopwatchIfPossible).
          if (close) yield* times.finish(doer.id, issue.id, new Date())
          yield* repo.insertComment({ issueId: issue.id, type: close ? T.close : T.reopen, posterId: doer.id, at })
          const after = yield* repo.issueById(issue.id)
          const milestoneId = Option.isSome(after) ? after.value.milestoneId : issue.milestoneId
          yield* milestoneIssueTouch(milestoneId, at, false)
        })

      return IssuesService.of({
        recordMentions,
        closeAs: (place, issue, doer) =>
          Effect.gen(function* () {
            const current = yield* repo.issueById(issue.id)
            if (Option.isNone(current) || current.value.isClosed) return false
            // Forgejo's ErrDependenciesLeft: such an issue stays open (CloseBranchPulls skips it).
            if (
              trackerSettings(settings, place.repo).enable_issue_dependencies &&
              (yield* deps.hasOpenBlockers(issue.id))
            ) {
              return false
            }
            yield* changeState(current.value, true, doer, new Date())
            yield* hub.publish({
              _tag: "Issues",
              ...Events.subject(place.owner, place.repo, doer),
              issue: issueRef(current.value),
              action: "closed"
            })
            return true
          }),

        list: (opened, query, page) =>
          Effect.gen(function* () {
            const filter = yield* listFilter(opened, query)
            const found = yield* repo.listIssues(filter, page)
            return { rows: yield* present.issues(found.rows, () => placeOf(opened), opened.caller), total: found.total }
          }),

        search: (viewer, query, page) =>
          Effect.gen(function* () {
            let ownerId: number | undefined
            let owner: UserRow | undefined
            if (query.owner !== undefined && query.owner !== "") {
              const found = yield* users.findByName(query.owner)
              if (Option.isNone(found))
                return yield* Errors.badRequest(`user does not exist [uid: 0, name: ${query.owner}]`)
              owner = found.value
              ownerId = owner.id
            }
            let places = yield* repos.visibleWithIssues(searchFilter(viewer, true), ownerId)
            if (query.team !== undefined && query.team !== "") {
              if (owner === undefined)
                return yield* Errors.badRequest("Owner organisation is required for filtering on team")
              const team = yield* orgRows.findTeamByName(owner.id, query.team)
              if (Option.isNone(team)) {
                return yield* Errors.badRequest(
                  `team does not exist [org_id ${owner.id}, team_id 0, name: ${query.team}]`
                )
              }
              if (!team.value.includesAllRepositories) {
                const ids = yield* orgRows.teamRepoIds(team.value.id)
                places = places.filter((p) => ids.has(p.id))
              }
            }
            const me = viewer?.user.id
            const yes = (raw: string | undefined) => raw === "true" || raw === "1"
            const priority = query.priority_repo_id === undefined ? undefined : Number(query.priority_repo_id)
            const filter: IssueFilter = {
              repoIds: places.map((p) => p.id),
              state: stateOf(query.state),
              ...(query.type === "pulls" ? { isPull: true } : query.type === "issues" ? { isPull: false } : {}),
              anyLabelNames: commaList(query.labels),
              milestoneNames: commaList(query.milestones),
              keyword: keywordOf(query.q),
              since: yield* optionalTime(query.since),
              before: yield* optionalTime(query.before),
              posterId: me !== undefined && yes(query.created) ? me : undefined,
              assigneeId: me !== undefined && yes(query.assigned) ? me : undefined,
              mentionedId: me !== undefined && yes(query.mentioned) ? me : undefined,
              reviewRequestedId: me !== undefined && yes(query.review_requested) ? me : undefined,
              reviewedId: me !== undefined && yes(query.reviewed) ? me : undefined,
              priorityRepoId:
                priority !== undefined && Number.isSafeInteger(priority) && priority > 0 ? priority : undefined,
              sort: sortOf(query.sort)
            }
            const found = yield* repo.listIssues(filter, page)
            const byId = new Map(places.map((p) => [p.id, p]))
            return { rows: yield* present.issues(found.rows, (i) => byId.get(i.repoId)!, viewer), total: found.total }
          }),

        get: (opened, index) => Effect.flatMap(findIssue(opened, index), (issue) => presentOne(opened, issue)),

        create: (opened, input, pull) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            yield* blocks.ensureNotBlocked([opened.owner], doer)
            const title = cutBytes((input.title ?? "").trim(), 255)
            if (title === "") return yield* Errors.validationFailed("[Title]: Required")
            const writer = isWriter(opened)
            // Non-writers' labels, milestone, assignees and due date are dropped (Forgejo).
            const assignees = writer
              ? yield* resolveAssignees(opened, [
                  ...(input.assignee ? [input.assignee] : []),
                  ...(input.assignees ?? [])
                ])
              : []
            const deadline = writer ? ((yield* optionalTime(input.due_date)) ?? null) : null
            let milestone: MilestoneRow | undefined
            if (writer && input.milestone !== undefined && input.milestone !== null && input.milestone > 0) {
              const [found] = yield* repo.milestonesByIds([input.milestone])
              if (found !== undefined && found.repoId === opened.repo.id) milestone = found
            }
            const labels =
              writer && input.labels !== undefined && input.labels !== null
                ? (yield* repo.labelsByIds(input.labels)).filter((l) => usable(opened, l))
                : []
            const at = new Date()
            const body = input.body ?? ""
            const issue = yield* repo.transaction(
              Effect.gen(function* () {
                const issue = yield* repo.insertIssue({
                  repoId: opened.repo.id,
                  posterId: doer.id,
                  title,
                  body,
                  ref: input.ref ?? "",
                  milestoneId: milestone?.id ?? null,
                  deadline,
                  at,
                  isPull: pull !== undefined
                })
                if (pull !== undefined) yield* pull.within(issue)
                // No exclusive-scope de-duplication at creation, as Forgejo. The labels and their
                // comments in one statement each (issue 18: a create's round trips).
                yield* repo.addIssueLabels(
                  issue.id,
                  labels.map((label) => label.id)
                )
                yield* repo.insertComments(
                  labels.map((label) => ({
                    issueId: issue.id,
                    type: T.label,
                    posterId: doer.id,
                    labelId: label.id,
                    body: "1",
                    at
                  }))
                )
                if (milestone !== undefined) {
                  yield* repo.insertComment({
                    issueId: issue.id,
                    type: T.milestone,
                    posterId: doer.id,
                    milestoneId: milestone.id,
                    oldMilestoneId: 0,
                    at
                  })
                  yield* repo.touchMilestone(milestone.id, at, false)
                }
                for (const user of assignees) {
                  yield* repo.addAssignee(issue.id, user.id)
                  yield* repo.insertComment({
                    issueId: issue.id,
                    type: T.assignees,
                    posterId: doer.id,
                    assigneeId: user.id,
                    at
                  })
                }
                if (input.closed === true) {
                  yield* repo.setClosed(issue, true, at)
                  yield* repo.insertComment({ issueId: issue.id, type: T.close, posterId: doer.id, at })
                }
                yield* recordMentions(opened, doer, issue.id, `${title}\n${body}`)
                return issue
              })
            )
            yield* syncReferences(opened, opened.caller, issue, undefined, `${title}\n${body}`, at, true)
            const about = { _tag: "Issues" as const, ...subjectOf(opened, doer), issue: issueRef(issue) }
            yield* publishAll(
              [
                { ...about, action: "opened" },
                ...(labels.length > 0 ? [{ ...about, action: "label_updated" as const }] : []),
                ...(milestone !== undefined
                  ? [{ ...about, action: "milestoned" as const, milestoneId: milestone.id }]
                  : []),
                ...assignmentEvents(opened, issue, doer, assignees, []),
                ...(input.closed === true ? [{ ...about, action: "closed" as const }] : [])
              ],
              // The new issue as inserted (closing it changes nothing the subscribers use).
              { issue, repo: opened.repo, owner: opened.owner }
            )
            // The row as inserted is the row, unless closing or the pull request changed it; its
            // labels and assignees are those just written (in the order their reads give).
            if (input.closed === true || pull !== undefined) return yield* reread(opened, issue)
            const assigneeIds = [...new Set(assignees.map((u) => u.id))].sort((a, b) => a - b)
            const [shown] = yield* present.issues(
              [issue],
              () => placeOf(opened),
              opened.caller,
              undefined,
              new Map([[issue.id, { labels, assigneeIds }]])
            )
            return shown!
          }),

        edit: (opened, index, input) =>
          Effect.gen(function* () {
            // The steps of Forgejo's `EditIssue`, in its order; each is kept when a later one fails.
            const issue = yield* findIssue(opened, index)
            if (!mayEditIssue(opened, issue)) {
              return yield* Errors.forbidden("user should be the poster or have write permission")
            }
            const given = yield* resolveUpdatedAt(opened, issue, input.updated_at)
            // A merged pull request stays closed, whatever `state` says (checked before any change).
            if (issue.isPull && input.state !== undefined && input.state !== null) {
              if ((yield* repo.pullStatesOf([issue.id])).get(issue.id)?.merged === true) {
                return yield* Errors.preconditionFailed(MERGED_STATE_REFUSED)
              }
            }
            const at = given ?? new Date()
            const doer = opened.caller!.user
            const writer = isWriter(opened)
            const about = { _tag: "Issues" as const, ...subjectOf(opened, doer), issue: issueRef(issue) }
            const events: Array<Events.Event> = []
            let textChanged = false
            const title = (input.title ?? "").trim()
            if (title !== "" && title !== issue.title) {
              const cut = cutBytes(title, 255)
              yield* repo.updateIssue(issue.id, { title: cut }, at)
              yield* repo.insertComment({
                issueId: issue.id,
                type: T.changeTitle,
                posterId: doer.id,
                oldTitle: issue.title,
                newTitle: cut,
                at
              })
              events.push({ ...about, action: "edited", changes: { title: { from: issue.title } } })
              textChanged = true
            }
            if (input.body !== undefined && input.body !== null && input.body !== issue.body) {
              yield* repo.updateIssue(issue.id, { body: input.body }, at)
              yield* recordMentions(opened, doer, issue.id, input.body)
              events.push({ ...about, action: "edited", changes: { body: { from: issue.body } } })
              textChanged = true
            }
            if (input.ref !== undefined && input.ref !== null && input.ref !== issue.ref) {
              yield* repo.updateIssue(issue.id, { ref: input.ref }, at)
              yield* repo.insertComment({
                issueId: issue.id,
                type: T.changeIssueRef,
                posterId: doer.id,
                oldRef: issue.ref,
                newRef: input.ref,
                at
              })
            }
            if (writer && (input.due_date !== undefined || input.unset_due_date !== undefined)) {
              let deadline: Date | null
              if (input.unset_due_date === true) deadline = null
              else if (input.due_date === undefined || input.due_date === null || input.due_date === "") {
                return yield* Errors.badRequest("The due_date cannot be empty")
              } else deadline = endOfDay(input.due_date, yield* parseTime(input.due_date))
              const before = issue.deadline
              if ((before?.getTime() ?? null) !== (deadline?.getTime() ?? null)) {
                yield* repo.updateIssue(issue.id, { deadline }, at)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: deadline === null ? T.removedDeadline : before === null ? T.addedDeadline : T.modifiedDeadline,
                  posterId: doer.id,
                  body:
                    deadline === null
                      ? day(before!)
                      : before === null
                        ? day(deadline)
                        : `${day(deadline)}|${day(before)}`,
                  at
                })
              }
            }
            if (writer && (input.assignees !== undefined || input.assignee !== undefined)) {
              const wanted = yield* resolveAssignees(opened, [
                ...(input.assignee ? [input.assignee] : []),
                ...(input.assignees ?? [])
              ])
              const current = (yield* repo.assigneesOf([issue.id])).get(issue.id) ?? []
              const added = wanted.filter((u) => !current.includes(u.id))
              const removedIds = current.filter((id) => !wanted.some((u) => u.id === id))
              const removed = [...(yield* users.findByIds(removedIds)).values()]
              for (const u of added) {
                yield* repo.addAssignee(issue.id, u.id)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: T.assignees,
                  posterId: doer.id,
                  assigneeId: u.id,
                  at
                })
              }
              for (const u of removed) {
                yield* repo.removeAssignee(issue.id, u.id)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: T.assignees,
                  posterId: doer.id,
                  assigneeId: u.id,
                  removedAssignee: true,
                  at
                })
              }
              if (added.length + removed.length > 0) yield* repo.touchIssue(issue.id, at)
              events.push(...assignmentEvents(opened, issue, doer, added, removed))
            }
            if (writer && input.milestone !== undefined && input.milestone !== null) {
              const next = input.milestone > 0 ? input.milestone : null
              if (next !== issue.milestoneId) {
                if (next !== null) {
                  const [found] = yield* repo.milestonesByIds([next])
                  if (found === undefined || found.repoId !== opened.repo.id) {
                    return yield* Errors.validationFailed(
                      `milestone does not exist [id: ${next}, repo_id: ${opened.repo.id}]`
                    )
                  }
                }
                yield* repo.updateIssue(issue.id, { milestoneId: next }, at)
                yield* repo.insertComment({
                  issueId: issue.id,
                  type: T.milestone,
                  posterId: doer.id,
                  oldMilestoneId: issue.milestoneId ?? 0,
                  milestoneId: next ?? 0,
                  at
                })
                // With `updated_at` the milestones only move forward (§4.3); without, the recount sets now.
                yield* milestoneIssueTouch(issue.milestoneId, at, given !== undefined)
                yield* milestoneIssueTouch(next, at, given !== undefined)
                events.push(
                  next === null
                    ? { ...about, action: "demilestoned", milestoneId: issue.milestoneId! }
                    : { ...about, action: "milestoned", milestoneId: next }
                )
              }
            }
            if (input.state !== undefined && input.state !== null) {
              const close = input.state === "closed"
              if (close !== issue.isClosed) {
                // Forgejo's ErrDependenciesLeft (reopening is never checked).
                if (
                  close &&
                  trackerSettings(settings, opened.repo).enable_issue_dependencies &&
                  (yield* deps.hasOpenBlockers(issue.id))
                ) {
                  return yield* Errors.preconditionFailed(
                    "cannot close this issue because it still has open dependencies"
                  )
                }
                yield* changeState(issue, close, doer, at)
                events.push({ ...about, action: close ? "closed" : "reopened" })
              }
            }
            if (textChanged) {
              const after = yield* repo.issueById(issue.id)
              if (Option.isSome(after)) {
                yield* syncReferences(
                  opened,
                  opened.caller,
                  after.value,
                  undefined,
                  `${after.value.title}\n${after.value.body}`,
                  at
                )
              }
            }
            yield* publishAll(events)
            return yield* reread(opened, issue)
          }),

        remove: (opened, index) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            if (!isRepoAdmin(opened)) {
              return yield* Errors.forbidden(
                "user should be an owner or a collaborator with admin write of a repository"
              )
            }
            yield* repo.transaction(repo.deleteIssue(issue))
            if (issue.milestoneId !== null) yield* repo.touchMilestone(issue.milestoneId, new Date(), false)
          }),

        setDeadline: (opened, index, raw) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            if (!isWriter(opened)) return yield* Errors.forbidden("Not repo writer")
            const parsed = raw === null || raw === "" ? undefined : yield* parseTime(raw)
            const deadline = parsed === undefined || parsed.getUTCFullYear() <= 1 ? null : endOfDay("Z", parsed)
            const before = issue.deadline
            const at = new Date()
            if ((before?.getTime() ?? null) !== (deadline?.getTime() ?? null)) {
              yield* repo.updateIssue(issue.id, { deadline }, at)
              yield* repo.insertComment({
                issueId: issue.id,
                type: deadline === null ? T.removedDeadline : before === null ? T.addedDeadline : T.modifiedDeadline,
                posterId: opened.caller!.user.id,
                body:
                  deadline === null
                    ? day(before!)
                    : before === null
                      ? day(deadline)
                      : `${day(deadline)}|${day(before)}`,
                at
              })
            }
            return deadline
          }),

        listComments: (opened, index, since, before) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const found = yield* repo.listComments(
              { issueId: issue.id },
              { types: [T.comment], since: yield* optionalTime(since), before: yield* optionalTime(before) },
              undefined
            )
            return { rows: yield* present.comments(found.rows, () => issue, placeOf(opened)), total: found.total }
          }),

        listRepoComments: (opened, since, before, window) =>
          Effect.gen(function* () {
            const found = yield* repo.listComments(
              { repoId: opened.repo.id, pulls: false },
              { types: [T.comment], since: yield* optionalTime(since), before: yield* optionalTime(before) },
              window
            )
            const issues = new Map(
              (yield* repo.issuesByIds([...new Set(found.rows.map((c) => c.issueId))])).map((i) => [i.id, i])
            )
            return {
              rows: yield* present.comments(found.rows, (c) => issues.get(c.issueId)!, placeOf(opened)),
              total: found.total
            }
          }),

        createComment: (opened, index, body, updatedAt) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const doer = yield* doerOf(opened)
            if (!mayComment(opened, issue)) return yield* Errors.forbidden(LOCKED_REFUSED)
            yield* blocks.ensureNotBlocked([{ id: issue.posterId }, opened.owner], doer)
            if (body === undefined || body === null || body === "")
              return yield* Errors.validationFailed("[Body]: Required")
            const given = yield* resolveUpdatedAt(opened, issue, updatedAt)
            const at = given ?? new Date()
            const comment = yield* repo.transaction(
              Effect.gen(function* () {
                const comment = yield* repo.insertComment({
                  issueId: issue.id,
                  type: T.comment,
                  posterId: doer.id,
                  body,
                  at
                })
                yield* repo.touchIssue(issue.id, at)
                yield* repo.recountComments(issue.id)
                yield* recordMentions(opened, doer, issue.id, body)
                return comment
              })
            )
            yield* syncReferences(opened, opened.caller, issue, comment, body, at)
            yield* hub.publish({
              _tag: "IssueComment",
              ...subjectOf(opened, doer),
              issue: issueRef(issue),
              comment: { id: comment.id },
              action: "created"
            })
            return yield* presentComment(opened, issue, comment)
          }),

        getComment: (opened, id) =>
          Effect.gen(function* () {
            const { comment, issue } = yield* findComment(opened, id)
            if (comment.type !== T.comment) return undefined
            return yield* presentComment(opened, issue, comment)
          }),

        editComment: (opened, id, body, updatedAt) =>
          Effect.gen(function* () {
            const { comment, issue } = yield* findComment(opened, id)
            if (!mayChangeComment(opened, comment)) {
              return yield* Errors.forbidden("user should be the poster or have write permission")
            }
            if (body === undefined || body === null) return yield* Errors.validationFailed("[Body]: Required")
            if (!CONTENT_TYPES.includes(comment.type)) return undefined
            const given = yield* resolveUpdatedAt(opened, issue, updatedAt)
            const at = given ?? new Date()
            yield* repo.updateComment(comment.id, body, at)
            // SPEC Behavior 1: with `updated_at` the edit also dates the issue.
            if (given !== undefined) yield* repo.touchIssue(issue.id, at)
            yield* recordMentions(opened, opened.caller!.user, issue.id, body)
            yield* syncReferences(opened, opened.caller, issue, comment, body, at)
            yield* hub.publish({
              _tag: "IssueComment",
              ...subjectOf(opened, opened.caller!.user),
              issue: issueRef(issue),
              comment: { id: comment.id },
              action: "edited",
              changes: { body: { from: comment.body } }
            })
            const after = yield* repo.commentById(comment.id)
            return yield* presentComment(
              opened,
              issue,
              Option.getOrElse(after, () => comment)
            )
          }),

        deleteComment: (opened, id) =>
          Effect.gen(function* () {
            const { comment, issue } = yield* findComment(opened, id)
            if (!mayChangeComment(opened, comment)) {
              return yield* Errors.forbidden("user should be the poster or have write permission")
            }
            // Forgejo answers 204 for a generated comment and keeps it.
            if (comment.type !== T.comment) return
            const at = new Date()
            yield* repo.transaction(
              Effect.gen(function* () {
                yield* neuterReferences(issue, comment, at)
                yield* repo.deleteComment(comment.id)
                yield* repo.recountComments(issue.id)
              })
            )
            yield* hub.publish({
              _tag: "IssueComment",
              ...subjectOf(opened, opened.caller!.user),
              issue: issueRef(issue),
              comment: { id: comment.id },
              action: "deleted"
            })
          }),

        timeline: (opened, index, since, before, window) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const found = yield* repo.listComments(
              { issueId: issue.id },
              { excludeTypes: [T.code], since: yield* optionalTime(since), before: yield* optionalTime(before) },
              window
            )
            // Cross-references from repositories the reader may not read are left out.
            // So are the issues of dependency comments (`dependent_issue` stays null for them).
            const sources = yield* repo.issuesByIds([
              ...new Set(
                found.rows.flatMap((c) =>
                  [c.refIssueId, c.dependentIssueId].filter((id) => id !== null && id !== undefined)
                )
              )
            ])
            const references = new Map<number, { issue: IssueRow; place: RepoPlace }>()
            for (const source of sources) {
              if (source.repoId === opened.repo.id) {
                references.set(source.id, { issue: source, place: placeOf(opened) })
                continue
              }
              const sourceRepo = yield* repos.findById(source.repoId)
              if (Option.isNone(sourceRepo)) continue
              const owner = yield* users.findById(sourceRepo.value.ownerId)
              if (Option.isNone(owner)) continue
              const access = yield* policy.access(opened.caller, sourceRepo.value, owner.value)
              if (!atLeast(access.mode, "read") || !unitEnabled(sourceRepo.value, "issues")) continue
              references.set(source.id, {
                issue: source,
                place: { id: sourceRepo.value.id, ownerName: owner.value.name, name: sourceRepo.value.name }
              })
            }
            const rows = found.rows.filter((c) => c.refIssueId === null || references.has(c.refIssueId))
            const hidden = found.rows.length - rows.length
            return {
              rows: yield* present.timeline(
                rows,
                issue,
                placeOf(opened),
                opened.caller,
                references,
                yield* times.byIds(rows.flatMap((c) => (c.timeId === null || c.timeId === undefined ? [] : [c.timeId])))
              ),
              total: found.total - hidden
            }
          }),

        listRepoLabels: (opened, sort, window) =>
          Effect.map(repo.listLabels({ repoId: opened.repo.id }, sort ?? "", window), (found) => ({
            rows: found.rows.map(labelJson(opened)),
            total: found.total
          })),

        getRepoLabel: (opened, id) =>
          Effect.gen(function* () {
            const label = /^\d+$/.test(id)
              ? yield* repo.labelById(Number(id))
              : Option.fromNullishOr(
                  (yield* repo.labelsByNames(opened.repo.id, null, [id])).find((l) => l.repoId === opened.repo.id)
                )
            if (Option.isNone(label) || label.value.repoId !== opened.repo.id) return yield* Errors.notFound()
            return labelJson(opened)(label.value)
          }),

        createRepoLabel: (opened, input) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const values = yield* newLabelValues(input)
            const label = yield* repo.insertLabel({ ...values, repo_id: opened.repo.id })
            return labelJson(opened)(label)
          }),

        editRepoLabel: (opened, id, input) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const label = /^\d+$/.test(id) ? yield* repo.labelById(Number(id)) : Option.none<LabelRow>()
            if (Option.isNone(label) || label.value.repoId !== opened.repo.id) return yield* Errors.notFound()
            const updated = yield* repo.updateLabel(label.value.id, yield* labelChanges(input, label.value))
            return labelJson(opened)(updated)
          }),

        deleteRepoLabel: (opened, id) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const label = /^\d+$/.test(id) ? yield* repo.labelById(Number(id)) : Option.none<LabelRow>()
            // Forgejo answers 204 for an unknown label too, and changes nothing.
            if (Option.isSome(label) && label.value.repoId === opened.repo.id) yield* repo.deleteLabel(label.value.id)
          }),

        listOrgLabels: (viewer, orgName, sort, window) =>
          Effect.gen(function* () {
            const org = yield* findOrg(orgName, viewer)
            const found = yield* repo.listLabels({ orgId: org.id }, sort ?? "", window)
            return { rows: found.rows.map((l) => present.label(l, org.name)), total: found.total }
          }),

        getOrgLabel: (viewer, orgName, id) =>
          Effect.gen(function* () {
            const org = yield* findOrg(orgName, viewer)
            const label = yield* findOrgLabel(org, id, true)
            return present.label(label, org.name)
          }),

        createOrgLabel: (caller, orgName, input) =>
          Effect.gen(function* () {
            const org = yield* ownedOrg(caller, orgName)
            const values = yield* newLabelValues(input)
            return present.label(yield* repo.insertLabel({ ...values, org_id: org.id }), org.name)
          }),

        editOrgLabel: (caller, orgName, id, input) =>
          Effect.gen(function* () {
            const org = yield* ownedOrg(caller, orgName)
            const label = yield* findOrgLabel(org, id, false)
            return present.label(yield* repo.updateLabel(label.id, yield* labelChanges(input, label)), org.name)
          }),

        deleteOrgLabel: (caller, orgName, id) =>
          Effect.gen(function* () {
            const org = yield* ownedOrg(caller, orgName)
            const label = /^\d+$/.test(id) ? yield* repo.labelById(Number(id)) : Option.none<LabelRow>()
            if (Option.isSome(label) && label.value.orgId === org.id) yield* repo.deleteLabel(label.value.id)
          }),

        issueLabels: (opened, index) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            return (yield* currentLabels(issue)).map(labelJson(opened))
          }),

        changeIssueLabels: (opened, index, mode, labels, updatedAt) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            const list = yield* resolveLabelList(labels ?? [])
            if (!isWriter(opened)) return yield* Errors.forbidden("user should have a permission to write to a repo")
            const given = yield* resolveUpdatedAt(opened, issue, updatedAt)
            const at = given ?? new Date()
            const doer = opened.caller!.user
            const wanted = yield* lookUpLabels(opened, list)
            const changed = yield* repo.transaction(
              Effect.gen(function* () {
                const current = yield* currentLabels(issue)
                let changed = false
                if (mode === "replace") {
                  for (const label of [...current]) {
                    if (wanted.some((w) => w.id === label.id)) continue
                    if (yield* detachLabel(issue, label, doer, at)) changed = true
                    current.splice(current.indexOf(label), 1)
                  }
                }
                for (const label of wanted) if (yield* attachLabel(issue, label, current, doer, at)) changed = true
                if (changed) yield* repo.touchIssue(issue.id, at)
                return changed
              })
            )
            void changed
            // Forgejo fires `label_updated` even when nothing changed.
            yield* hub.publish({
              _tag: "Issues",
              ...subjectOf(opened, doer),
              issue: issueRef(issue),
              action: "label_updated"
            })
            return (yield* currentLabels(issue)).map(labelJson(opened))
          }),

        removeIssueLabel: (opened, index, identifier, updatedAt) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            if (!isWriter(opened)) return yield* Errors.forbidden("user should have a permission to write to a repo")
            const given = yield* resolveUpdatedAt(opened, issue, updatedAt)
            const at = given ?? new Date()
            // Forgejo's order: a repository label by name, an organization label by name, then an id.
            const orgId = orgIdOf(opened)
            const byName = yield* repo.labelsByNames(opened.repo.id, orgId, [identifier])
            let label = byName.find((l) => l.repoId === opened.repo.id) ?? byName.find((l) => l.orgId !== null)
            if (label === undefined && /^\d+$/.test(identifier)) {
              const byId = yield* repo.labelById(Number(identifier))
              if (Option.isSome(byId) && usable(opened, byId.value)) label = byId.value
            }
            if (label === undefined) {
              return yield* Errors.validationFailed(
                /^\d+$/.test(identifier)
                  ? "label does not exist [label_id: 0]"
                  : orgId !== null
                    ? `label does not exist [label_id: 0, org_id: ${orgId}]`
                    : `label does not exist [label_id: 0, repo_id: ${opened.repo.id}]`
              )
            }
            const found = label
            const removed = yield* repo.transaction(
              Effect.gen(function* () {
                const removed = yield* detachLabel(issue, found, opened.caller!.user, at)
                if (removed) yield* repo.touchIssue(issue.id, at)
                return removed
              })
            )
            if (removed) {
              yield* hub.publish({
                _tag: "Issues",
                ...subjectOf(opened, opened.caller!.user),
                issue: issueRef(issue),
                action: "label_updated"
              })
            }
          }),

        clearIssueLabels: (opened, index, updatedAt) =>
          Effect.gen(function* () {
            const issue = yield* findIssue(opened, index)
            if (!isWriter(opened)) return yield* Errors.forbidden("user should have a permission to write to a repo")
            const given = yield* resolveUpdatedAt(opened, issue, updatedAt)
            const at = given ?? new Date()
            const doer = opened.caller!.user
            yield* repo.transaction(
              Effect.gen(function* () {
                const current = yield* currentLabels(issue)
                for (const label of current) yield* detachLabel(issue, label, doer, at)
                if (current.length > 0) yield* repo.touchIssue(issue.id, at)
              })
            )
            yield* hub.publish({
              _tag: "Issues",
              ...subjectOf(opened, doer),
              issue: issueRef(issue),
              action: "label_cleared"
            })
          }),

        listMilestones: (opened, state, name, window) =>
          Effect.map(
            repo.listMilestones(
              opened.repo.id,
              state === "open" || state === "closed" ? state : "all",
              name ?? "",
              window
            ),
            (found) => ({ rows: found.rows.map(milestoneJson), total: found.total })
          ),

        getMilestone: (opened, id) => Effect.map(findMilestone(opened, id), milestoneJson),

        createMilestone: (opened, input) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const deadline = yield* optionalTime(input.due_on)
            const now = new Date()
            const closed = input.state === "closed"
            const created = yield* repo.insertMilestone({
              repo_id: opened.repo.id,
              name: (input.title ?? "").trim(),
              content: input.description ?? "",
              deadline: deadline ?? null,
              is_closed: closed,
              closed_at: closed ? now : null,
              created_at: now,
              updated_at: now
            })
            return milestoneJson(created)
          }),

        editMilestone: (opened, id, input) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const milestone = yield* findMilestone(opened, id)
            const now = new Date()
            const values: Record<string, unknown> = { updated_at: now }
            const title = (input.title ?? "").trim()
            if (title !== "") values.name = title
            if (input.description !== undefined && input.description !== null) values.content = input.description
            const deadline = yield* optionalTime(input.due_on)
            // A deadline cannot be removed through the API (Forgejo).
            if (deadline !== undefined) values.deadline = deadline
            if (input.state !== undefined && input.state !== null) {
              const close = input.state === "closed"
              values.is_closed = close
              if (close && !milestone.isClosed) values.closed_at = now
              if (!close) values.closed_at = null
            }
            yield* repo.updateMilestone(milestone.id, values)
            const [after] = yield* repo.milestonesByIds([milestone.id])
            return milestoneJson(after!)
          }),

        deleteMilestone: (opened, id) =>
          Effect.gen(function* () {
            yield* requireWriter(opened)
            const milestone = yield* findMilestone(opened, id)
            yield* repo.deleteMilestone(milestone.id)
          }),

        visibleReferences: (viewerId, refs) =>
          Effect.gen(function* () {
            const account = viewerId === undefined ? undefined : Option.getOrUndefined(yield* users.findById(viewerId))
            const viewer: Principal | undefined =
              account === undefined ? undefined : { user: account, scopes: undefined, method: "password" }
            const out = new Set<string>()
            const access = new Map<string, number | undefined>()
            for (const ref of refs) {
              const key = `${ref.owner}/${ref.repo}`.toLowerCase()
              if (!access.has(key)) {
                let repoId: number | undefined
                const owner = yield* users.findByName(ref.owner)
                if (Option.isSome(owner)) {
                  const target = yield* repos.findByName(owner.value.id, ref.repo)
                  if (Option.isSome(target) && unitEnabled(target.value, "issues")) {
                    const mode = yield* policy.access(viewer, target.value, owner.value)
                    if (atLeast(mode.mode, "read")) repoId = target.value.id
                  }
                }
                access.set(key, repoId)
              }
              const repoId = access.get(key)
              if (repoId === undefined) continue
              if (Option.isSome(yield* repo.issueByIndex(repoId, ref.index))) out.add(`${key}#${ref.index}`)
            }
            return out
          })
      })

      function newLabelValues(input: CreateLabelOption) {
        return Effect.gen(function* () {
          const name = (input.name ?? "").trim()
          if (name === "") return yield* Errors.validationFailed("[Name]: Required")
          if (input.color === undefined || input.color === null || input.color.trim() === "") {
            return yield* Errors.validationFailed("[Color]: Required")
          }
          return {
            name,
            color: yield* normalizeColor(input.color),
            description: input.description ?? "",
            exclusive: input.exclusive ?? false,
            archived_at: input.is_archived === true ? new Date() : null
          }
        })
      }

      /** EditLabelOption: only what is given changes (an absent `is_archived` keeps the label as it is). */
      function labelChanges(input: EditLabelOption, label: LabelRow) {
        return Effect.gen(function* () {
          const values: Record<string, unknown> = {}
          if (input.name !== undefined && input.name !== null) {
            const name = input.name.trim()
            if (name === "") return yield* Errors.validationFailed("[Name]: Required")
            values.name = name
          }
          if (input.color !== undefined && input.color !== null) values.color = yield* normalizeColor(input.color)
          if (input.description !== undefined && input.description !== null) values.description = input.description
          if (input.exclusive !== undefined && input.exclusive !== null) values.exclusive = input.exclusive
          if (input.is_archived !== undefined && input.is_archived !== null) {
            values.archived_at = input.is_archived ? (label.archivedAt ?? new Date()) : null
          }
          return values
        })
      }

      /**
       * The organization `name`, 404 when there is none or `viewer` may not see it (Forgejo's label
       * routes skip that check; Hearth never shows what a caller may not see).
       */
      function findOrg(name: string, viewer: Principal | undefined) {
        return Effect.gen(function* () {
          const org = yield* users.findByName(name)
          if (Option.isNone(org) || org.value.type !== "organization") return yield* Errors.notFound()
          if (!(yield* accounts.canSee(viewer, org.value))) return yield* Errors.notFound()
          return org.value
        })
      }

      function ownedOrg(caller: Principal, name: string) {
        return Effect.gen(function* () {
          const org = yield* findOrg(name, caller)
          if (!caller.user.isAdmin && !(yield* orgs.isOwner(org, caller.user))) {
            return yield* Errors.forbidden("Must be an organization owner")
          }
          return org
        })
      }

      function findOrgLabel(org: UserRow, id: string, byName: boolean) {
        return Effect.gen(function* () {
          const label = /^\d+$/.test(id)
            ? yield* repo.labelById(Number(id))
            : byName
              ? Option.fromNullishOr((yield* repo.labelsByNames(-1, org.id, [id]))[0])
              : Option.none<LabelRow>()
          if (Option.isNone(label) || label.value.orgId !== org.id) return yield* Errors.notFound()
          return label.value
        })
      }
    })
  )
}

// Rows to API objects (Forgejo's services/convert issue.go, issue_comment.go, label.go): the
// people, labels and milestones of a page of issues are read in a few batched queries.
import { Effect } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime } from "../http/Json.ts"
import type { UserRow } from "../users/Repo.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser } from "../users/Schema.ts"
import { type AttachmentRow, AttachmentsRepo } from "./AttachmentsRepo.ts"
import { toApiAttachment } from "./AttachmentsSchema.ts"
import { type CommentRow, type IssueRow, IssuesRepo, type LabelRow, type MilestoneRow } from "./Repo.ts"
import type { Comment, Issue, Label, Milestone, TimelineComment, TrackedTime } from "./Schema.ts"
import type { TrackedTimeRow } from "./TimesRepo.ts"

/** The repository an issue lives in, for its URLs and `repository` member. */
export interface RepoPlace {
  readonly id: number
  readonly ownerName: string
  readonly name: string
}

const path = (place: RepoPlace) => `${encodeURIComponent(place.ownerName)}/${encodeURIComponent(place.name)}`

export const labelUrl = (settings: SettingsShape, label: LabelRow, ownerName: string, repoName: string) =>
  label.orgId !== null
    ? `${settings.server.ROOT_URL}api/v1/orgs/${encodeURIComponent(ownerName)}/labels/${label.id}`
    : `${settings.server.ROOT_URL}api/v1/repos/${encodeURIComponent(ownerName)}/${encodeURIComponent(repoName)}/labels/${label.id}`

export const toLabel = (settings: SettingsShape, label: LabelRow, ownerName: string, repoName = ""): Label => ({
  id: label.id,
  name: label.name,
  exclusive: label.exclusive,
  is_archived: label.archivedAt !== null,
  color: label.color,
  description: label.description,
  url: labelUrl(settings, label, ownerName, repoName)
})

export const toMilestone = (m: MilestoneRow): Milestone => ({
  id: m.id,
  title: m.name,
  description: m.content,
  state: m.isClosed ? "closed" : "open",
  open_issues: m.numIssues - m.numClosedIssues,
  closed_issues: m.numClosedIssues,
  created_at: formatTime(m.createdAt),
  updated_at: formatTime(m.updatedAt),
  closed_at: m.isClosed && m.closedAt !== null ? formatTime(m.closedAt) : null,
  due_on: m.deadline === null ? null : formatTime(m.deadline)
})

export const issueHtmlUrl = (settings: SettingsShape, place: RepoPlace, issue: Pick<IssueRow, "index" | "isPull">) =>
  `${settings.server.ROOT_URL}${path(place)}/${issue.isPull ? "pulls" : "issues"}/${issue.index}`

/** Forgejo's comment type names by number (CONTRACT-ISSUES §7). */
export const COMMENT_TYPES = [
  "comment",
  "reopen",
  "close",
  "issue_ref",
  "commit_ref",
  "comment_ref",
  "pull_ref",
  "label",
  "milestone",
  "assignees",
  "change_title",
  "delete_branch",
  "start_tracking",
  "stop_tracking",
  "add_time_manual",
  "cancel_tracking",
  "added_deadline",
  "modified_deadline",
  "removed_deadline",
  "add_dependency",
  "remove_dependency",
  "code",
  "review",
  "lock",
  "unlock",
  "change_target_branch",
  "delete_time_manual",
  "review_request",
  "merge_pull",
  "pull_push",
  "project",
  "project_board",
  "dismiss_review",
  "change_issue_ref",
  "pull_scheduled_merge",
  "pull_cancel_scheduled_merge",
  "pin",
  "unpin",
  "action_aggregator"
] as const
export type CommentTypeName = (typeof COMMENT_TYPES)[number]
export const commentType = (name: CommentTypeName): number => COMMENT_TYPES.indexOf(name)

const REF_ACTIONS = ["none", "closes", "reopens", "neutered"] as const
export const REF_NEUTERED = 3

/** `[repository.pull-request] WORK_IN_PROGRESS_PREFIXES` (Forgejo's default): a draft's title starts with one. */
export const WIP_PREFIXES = ["WIP:", "[WIP]"]
export const isWorkInProgress = (title: string) =>
  WIP_PREFIXES.some((prefix) => title.toUpperCase().startsWith(prefix.toUpperCase()))

/** The issue JSON's `pull_request` member of a pull request (Forgejo's PullRequestMeta). */
const pullRequestMeta = (
  settings: SettingsShape,
  place: RepoPlace,
  issue: IssueRow,
  state: { readonly merged: boolean; readonly mergedAt: Date | null } | undefined
) => ({
  merged: state?.merged ?? false,
  merged_at: state?.merged === true && state.mergedAt !== null ? formatTime(state.mergedAt) : null,
  draft: isWorkInProgress(issue.title),
  html_url: issueHtmlUrl(settings, place, issue)
})

export const makePresenter = (settings: SettingsShape) =>
  Effect.gen(function* () {
    const users = yield* UsersRepo
    const repo = yield* IssuesRepo
    const attachments = yield* AttachmentsRepo

    const usersById = (ids: Iterable<number>) => users.findByIds([...new Set(ids)])
    const userOf = (map: ReadonlyMap<number, UserRow>, id: number): UserRow => map.get(id) ?? ghostUser

    /**
     * Issues of one repository (or of several, each with its place), as `viewer` sees them.
     * `pullStates`: the pull requests' merged state when the caller holds their rows (not read again).
     * `created`: what the caller has just written of these issues, nothing else having been added
     * (no attachment yet): their labels and assignees are not read back.
     */
    const issues = (
      rows: ReadonlyArray<IssueRow>,
      placeOf: (issue: IssueRow) => RepoPlace,
      viewer: Principal | undefined,
      pullStates?: ReadonlyMap<number, { readonly merged: boolean; readonly mergedAt: Date | null }>,
      created?: ReadonlyMap<
        number,
        { readonly labels: ReadonlyArray<LabelRow>; readonly assigneeIds: ReadonlyArray<number> }
      >
    ): Effect.Effect<Array<Issue>> =>
      Effect.gen(function* () {
        if (rows.length === 0) return []
        const ids = rows.map((r) => r.id)
        const milestoneIds = [...new Set(rows.flatMap((r) => (r.milestoneId === null ? [] : [r.milestoneId])))]
        const [{ labels, assignees, milestones, attachments: assets }, pulls] = yield* Effect.all([
          created !== undefined
            ? Effect.map(repo.milestonesByIds(milestoneIds), (milestones) => ({
                labels: new Map([...created].map(([id, c]) => [id, [...c.labels]])),
                assignees: new Map([...created].map(([id, c]) => [id, [...c.assigneeIds]])),
                milestones,
                attachments: new Map<number, never>()
              }))
            : repo.partsOf(ids, milestoneIds),
          pullStates !== undefined
            ? Effect.succeed(pullStates)
            : repo.pullStatesOf(rows.filter((r) => r.isPull).map((r) => r.id))
        ])
        const people = yield* usersById([...rows.map((r) => r.posterId), ...[...assignees.values()].flat()])
        const milestoneById = new Map(milestones.map((m) => [m.id, m]))
        return rows.map((issue): Issue => {
          const place = placeOf(issue)
          const assigned = (assignees.get(issue.id) ?? []).map((id) =>
            toApiUser(settings, userOf(people, id), undefined)
          )
          const milestone = issue.milestoneId === null ? undefined : milestoneById.get(issue.milestoneId)
          return {
            id: issue.id,
            url: `${settings.server.ROOT_URL}api/v1/repos/${path(place)}/issues/${issue.index}`,
            html_url: issueHtmlUrl(settings, place, issue),
            number: issue.index,
            user: toApiUser(settings, userOf(people, issue.posterId), viewer),
            original_author: "",
            original_author_id: 0,
            title: issue.title,
            body: issue.body,
            ref: issue.ref,
            assets: (assets.get(issue.id) ?? []).map((a) => toApiAttachment(settings, a)),
            labels: (labels.get(issue.id) ?? []).map((l) => toLabel(settings, l, place.ownerName, place.name)),
            milestone: milestone === undefined ? null : toMilestone(milestone),
            assignee: assigned[0] ?? null,
            assignees: assigned.length === 0 ? null : assigned,
            state: issue.isClosed ? "closed" : "open",
            is_locked: issue.isLocked,
            comments: issue.numComments,
            created_at: formatTime(issue.createdAt),
            updated_at: formatTime(issue.updatedAt),
            closed_at: issue.isClosed && issue.closedAt !== null ? formatTime(issue.closedAt) : null,
            due_date: issue.deadline === null ? null : formatTime(issue.deadline),
            pull_request: issue.isPull ? pullRequestMeta(settings, place, issue, pulls.get(issue.id)) : null,
            repository: {
              id: place.id,
              name: place.name,
              owner: place.ownerName,
              full_name: `${place.ownerName}/${place.name}`
            },
            pin_order: issue.pinOrder
          }
        })
      })

    const commentOf = (
      c: CommentRow,
      issue: IssueRow,
      place: RepoPlace,
      poster: UserRow,
      assets: ReadonlyMap<number, ReadonlyArray<AttachmentRow>> = new Map()
    ): Comment => {
      const html = issueHtmlUrl(settings, place, issue)
      return {
        id: c.id,
        html_url: `${html}#issuecomment-${c.id}`,
        pull_request_url: issue.isPull ? html : "",
        issue_url: issue.isPull ? "" : html,
        // Forgejo renders a comment's poster as for an anonymous viewer.
        user: toApiUser(settings, poster, undefined),
        original_author: "",
        original_author_id: 0,
        body: c.body,
        assets: (assets.get(c.id) ?? []).map((a) => toApiAttachment(settings, a)),
        created_at: formatTime(c.createdAt),
        updated_at: formatTime(c.updatedAt)
      }
    }

    const comments = (rows: ReadonlyArray<CommentRow>, issueOf: (c: CommentRow) => IssueRow, place: RepoPlace) =>
      Effect.map(
        Effect.all([
          usersById(rows.map((c) => c.posterId)),
          attachments.ofComments(
            rows.map((c) => c.id),
            rows.length > 0 && rows.every((c) => c.issueId === rows[0]!.issueId) ? rows[0]!.issueId : undefined
          )
        ]),
        ([people, assets]) => rows.map((c) => commentOf(c, issueOf(c), place, userOf(people, c.posterId), assets))
      )

    /**
     * A timeline. `references` holds the issues (with their places) that cross-reference comments
     * come from, already narrowed to what the viewer may read.
     */
    const timeline = (
      rows: ReadonlyArray<CommentRow>,
      issue: IssueRow,
      place: RepoPlace,
      viewer: Principal | undefined,
      references: ReadonlyMap<number, { readonly issue: IssueRow; readonly place: RepoPlace }>,
      /** The tracked times time-tracking comments record (Forgejo shows them without their issue). */
      trackedTimes: ReadonlyArray<TrackedTimeRow> = []
    ): Effect.Effect<Array<TimelineComment>> =>
      Effect.gen(function* () {
        const people = yield* usersById(
          rows.flatMap((c) => [c.posterId, ...(c.assigneeId === null ? [] : [c.assigneeId])])
        )
        const labelRows = yield* repo.labelsByIds([
          ...new Set(rows.flatMap((c) => (c.labelId === null ? [] : [c.labelId])))
        ])
        const labelById = new Map(labelRows.map((l) => [l.id, l]))
        const milestoneRows = yield* repo.milestonesByIds([
          ...new Set(
            rows.flatMap((c) => [c.milestoneId, c.oldMilestoneId].filter((id): id is number => id !== null && id > 0))
          )
        ])
        const milestoneById = new Map(milestoneRows.map((m) => [m.id, m]))
        const refIssues = [...references.values()]
        const presented = yield* issues(
          refIssues.map((r) => r.issue),
          (i) => references.get(i.id)!.place,
          viewer
        )
        const presentedById = new Map(presented.map((p) => [p.id, p]))
        const refComments = new Map<number, Comment>()
        for (const c of rows) {
          if (c.refCommentId === null || c.refIssueId === null) continue
          const ref = references.get(c.refIssueId)
          if (ref === undefined) continue
          const source = yield* repo.commentById(c.refCommentId)
          if (source._tag === "Some") {
            const poster = yield* usersById([source.value.posterId])
            refComments.set(c.id, commentOf(source.value, ref.issue, ref.place, userOf(poster, source.value.posterId)))
          }
        }
        const timeById = new Map(trackedTimes.map((t) => [t.id, t]))
        const trackedTime = (id: number | null | undefined): TrackedTime | null => {
          const t = id === null || id === undefined ? undefined : timeById.get(id)
          if (t === undefined) return null
          return {
            id: t.id,
            created: formatTime(t.createdAt),
            time: t.time,
            user_id: t.userId,
            user_name: people.get(t.userId)?.name ?? "",
            issue_id: t.issueId,
            issue: null
          }
        }
        const milestone = (id: number | null) => {
          const m = id === null ? undefined : milestoneById.get(id)
          return m === undefined ? null : toMilestone(m)
        }
        return rows.map((c): TimelineComment => {
          const base = commentOf(c, issue, place, userOf(people, c.posterId))
          const label = c.labelId === null ? undefined : labelById.get(c.labelId)
          return {
            id: c.id,
            type: COMMENT_TYPES[c.type] ?? "comment",
            html_url: base.html_url,
            pull_request_url: base.pull_request_url,
            issue_url: base.issue_url,
            user: base.user,
            body: c.body,
            created_at: base.created_at,
            updated_at: base.updated_at,
            old_project_id: 0,
            project_id: 0,
            old_milestone: milestone(c.oldMilestoneId),
            milestone: milestone(c.milestoneId),
            tracked_time: trackedTime(c.timeId),
            old_title: c.oldTitle,
            new_title: c.newTitle,
            old_ref: c.oldRef,
            new_ref: c.newRef,
            ref_issue: c.refIssueId === null ? null : (presentedById.get(c.refIssueId) ?? null),
            ref_comment: refComments.get(c.id) ?? null,
            ref_action: REF_ACTIONS[c.refAction] ?? "none",
            ref_commit_sha: "",
            review_id: c.reviewId ?? 0,
            label: label === undefined ? null : toLabel(settings, label, place.ownerName, place.name),
            assignee: c.assigneeId === null ? null : toApiUser(settings, userOf(people, c.assigneeId), undefined),
            assignee_team: null,
            removed_assignee: c.removedAssignee,
            resolve_doer: null,
            dependent_issue:
              c.dependentIssueId === null || c.dependentIssueId === undefined
                ? null
                : (presentedById.get(c.dependentIssueId) ?? null)
          }
        })
      })

    return {
      issues,
      comments,
      timeline,
      label: (label: LabelRow, ownerName: string, repoName = "") => toLabel(settings, label, ownerName, repoName),
      milestone: toMilestone
    }
  })

export type Presenter = Effect.Success<ReturnType<typeof makePresenter>>

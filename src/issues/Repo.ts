// SQL for issues, comments, labels, milestones and assignees (tables in migration 0018_issues).
// Rules live in Service.ts; every write takes its time (`at`) from the service, so that the
// `updated_at` override (CONTRACT-ISSUES §4) reaches every row the request writes.
import { Array as Arr, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"
import { withDates } from "../db/JsonRows.ts"
import type { Page } from "../http/Pagination.ts"
import { type AttachmentRow, toAttachment } from "./AttachmentsRepo.ts"

export interface IssueRow {
  readonly id: number
  readonly repoId: number
  readonly index: number
  readonly posterId: number
  readonly title: string
  readonly body: string
  readonly ref: string
  readonly isPull: boolean
  readonly isClosed: boolean
  readonly isLocked: boolean
  readonly milestoneId: number | null
  readonly numComments: number
  readonly deadline: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly closedAt: Date | null
  /** Position among the repository's pinned issues (or pull requests); 0 when not pinned. */
  readonly pinOrder: number
}

export interface CommentRow {
  readonly id: number
  readonly issueId: number
  readonly type: number
  readonly posterId: number
  readonly body: string
  readonly labelId: number | null
  readonly oldMilestoneId: number | null
  readonly milestoneId: number | null
  readonly assigneeId: number | null
  readonly removedAssignee: boolean
  readonly oldTitle: string
  readonly newTitle: string
  readonly oldRef: string
  readonly newRef: string
  readonly refRepoId: number | null
  readonly refIssueId: number | null
  readonly refCommentId: number | null
  readonly refAction: number
  readonly refIsPull: boolean
  /** The other issue of an add/remove_dependency comment (migration 0022). */
  readonly dependentIssueId?: number | null
  /** The tracked time a time-tracking comment records (migration 0022). */
  readonly timeId?: number | null
  /** The review a review, code or dismiss_review comment belongs to (migration 0027). */
  readonly reviewId?: number | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface LabelRow {
  readonly id: number
  readonly repoId: number | null
  readonly orgId: number | null
  readonly name: string
  readonly exclusive: boolean
  readonly color: string
  readonly description: string
  readonly archivedAt: Date | null
  readonly numIssues: number
}

export interface MilestoneRow {
  readonly id: number
  readonly repoId: number
  readonly name: string
  readonly content: string
  readonly isClosed: boolean
  readonly deadline: Date | null
  readonly closedAt: Date | null
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly numIssues: number
  readonly numClosedIssues: number
}

export interface Listed<A> {
  readonly rows: ReadonlyArray<A>
  readonly total: number
}

type Row = Record<string, any>
const num = (v: unknown) => Number(v)
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v))

/** The columns `toIssue` reads: what another table's query selects to bring an issue along (prefixed). */
export const ISSUE_COLUMNS = [
  "id",
  "repo_id",
  "index",
  "poster_id",
  "title",
  "body",
  "ref",
  "is_pull",
  "is_closed",
  "is_locked",
  "milestone_id",
  "num_comments",
  "deadline",
  "created_at",
  "updated_at",
  "closed_at",
  "pin_order"
] as const

export const toIssue = (r: Row): IssueRow => ({
  id: num(r.id),
  repoId: num(r.repo_id),
  index: num(r.index),
  posterId: num(r.poster_id),
  title: r.title,
  body: r.body,
  ref: r.ref,
  isPull: r.is_pull,
  isClosed: r.is_closed,
  isLocked: r.is_locked,
  milestoneId: numOrNull(r.milestone_id),
  numComments: num(r.num_comments),
  deadline: r.deadline ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  closedAt: r.closed_at ?? null,
  pinOrder: num(r.pin_order ?? 0)
})

/** A comment's row; the columns a list of plain comments leaves out (listComments) take their defaults. */
const toComment = (r: Row): CommentRow => ({
  id: num(r.id),
  issueId: num(r.issue_id),
  type: num(r.type),
  posterId: num(r.poster_id),
  body: r.body,
  labelId: numOrNull(r.label_id),
  oldMilestoneId: numOrNull(r.old_milestone_id),
  milestoneId: numOrNull(r.milestone_id),
  assigneeId: numOrNull(r.assignee_id),
  removedAssignee: r.removed_assignee ?? false,
  oldTitle: r.old_title ?? "",
  newTitle: r.new_title ?? "",
  oldRef: r.old_ref ?? "",
  newRef: r.new_ref ?? "",
  refRepoId: numOrNull(r.ref_repo_id),
  refIssueId: numOrNull(r.ref_issue_id),
  refCommentId: numOrNull(r.ref_comment_id),
  refAction: num(r.ref_action ?? 0),
  refIsPull: r.ref_is_pull ?? false,
  dependentIssueId: numOrNull(r.dependent_issue_id),
  timeId: numOrNull(r.time_id),
  reviewId: numOrNull(r.review_id),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const toLabel = (r: Row): LabelRow => ({
  id: num(r.id),
  repoId: numOrNull(r.repo_id),
  orgId: numOrNull(r.org_id),
  name: r.name,
  exclusive: r.exclusive,
  color: r.color,
  description: r.description,
  archivedAt: r.archived_at ?? null,
  numIssues: num(r.num_issues ?? 0)
})

const toMilestone = (r: Row): MilestoneRow => ({
  id: num(r.id),
  repoId: num(r.repo_id),
  name: r.name,
  content: r.content,
  isClosed: r.is_closed,
  deadline: r.deadline ?? null,
  closedAt: r.closed_at ?? null,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  numIssues: num(r.num_issues),
  numClosedIssues: num(r.num_closed_issues)
})

/** `%term%` for ILIKE, with LIKE's own characters taken literally. */
export const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export type IssueSort =
  | "latest"
  | "oldest"
  | "recentupdate"
  | "leastupdate"
  | "mostcomment"
  | "leastcomment"
  | "nearduedate"
  | "farduedate"

/** What a list of issues is narrowed to (Forgejo's `IssuesOptions`). */
export interface IssueFilter {
  /** The repositories searched (one for a repository's list). */
  readonly repoIds: ReadonlyArray<number>
  readonly state: "open" | "closed" | "all"
  readonly isPull?: boolean | undefined
  /** Every one of these labels (a repository's list). */
  readonly allLabelIds?: ReadonlyArray<number> | undefined
  /** Any label with one of these names (the instance-wide search). */
  readonly anyLabelNames?: ReadonlyArray<string> | undefined
  readonly milestoneIds?: ReadonlyArray<number> | undefined
  /** Milestones by name, case-insensitively (the instance-wide search). */
  readonly milestoneNames?: ReadonlyArray<string> | undefined
  readonly keyword?: string | undefined
  readonly since?: Date | undefined
  readonly before?: Date | undefined
  readonly posterId?: number | undefined
  readonly assigneeId?: number | undefined
  readonly mentionedId?: number | undefined
  /** Pull requests asking this user (or one of their teams) for a review, not their own (Forgejo's `ReviewRequestedID`). */
  readonly reviewRequestedId?: number | undefined
  /** Pull requests this user (or one of their teams) reviewed, not their own (Forgejo's `ReviewedID`). */
  readonly reviewedId?: number | undefined
  readonly priorityRepoId?: number | undefined
  readonly sort: IssueSort
}

export type NewComment = Partial<Omit<CommentRow, "id" | "createdAt" | "updatedAt">> & {
  readonly issueId: number
  readonly type: number
  readonly posterId: number
  readonly at: Date
}

/** A new comment as its row. */
const commentRow = (c: NewComment) => ({
  issue_id: c.issueId,
  type: c.type,
  poster_id: c.posterId,
  body: c.body ?? "",
  label_id: c.labelId ?? null,
  old_milestone_id: c.oldMilestoneId ?? null,
  milestone_id: c.milestoneId ?? null,
  assignee_id: c.assigneeId ?? null,
  removed_assignee: c.removedAssignee ?? false,
  old_title: c.oldTitle ?? "",
  new_title: c.newTitle ?? "",
  old_ref: c.oldRef ?? "",
  new_ref: c.newRef ?? "",
  ref_repo_id: c.refRepoId ?? null,
  ref_issue_id: c.refIssueId ?? null,
  ref_comment_id: c.refCommentId ?? null,
  ref_action: c.refAction ?? 0,
  ref_is_pull: c.refIsPull ?? false,
  created_at: c.at,
  updated_at: c.at
})

/** A page of issues' labels, assignees, milestones and attachments (IssuesRepo.partsOf). */
export interface IssueParts {
  readonly labels: ReadonlyMap<number, Array<LabelRow>>
  readonly assignees: ReadonlyMap<number, Array<number>>
  readonly milestones: ReadonlyArray<MilestoneRow>
  readonly attachments: ReadonlyMap<number, Array<AttachmentRow>>
}

export class IssuesRepo extends Context.Service<
  IssuesRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** Takes the repository's next number (shared with pull requests) and inserts the issue, in the caller's transaction. */
    readonly insertIssue: (input: {
      readonly repoId: number
      readonly posterId: number
      readonly title: string
      readonly body: string
      readonly ref: string
      readonly milestoneId: number | null
      readonly deadline: Date | null
      readonly at: Date
      /** A pull request's issue (its row in pull_requests is src/pulls' to write). */
      readonly isPull?: boolean | undefined
    }) => Effect.Effect<IssueRow>
    readonly issueByIndex: (repoId: number, index: number) => Effect.Effect<Option.Option<IssueRow>>
    readonly issueById: (id: number) => Effect.Effect<Option.Option<IssueRow>>
    readonly issuesByIds: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<IssueRow>>
    readonly listIssues: (filter: IssueFilter, window: Page) => Effect.Effect<Listed<IssueRow>>
    readonly updateIssue: (
      id: number,
      fields: Partial<Pick<IssueRow, "title" | "body" | "ref" | "milestoneId" | "deadline" | "isLocked">>,
      at: Date
    ) => Effect.Effect<void>
    /** Writes `updated_at` alone. */
    readonly touchIssue: (id: number, at: Date) => Effect.Effect<void>
    /** Closes or reopens, keeping the repository's counters exact. */
    readonly setClosed: (issue: IssueRow, closed: boolean, at: Date) => Effect.Effect<void>
    /** Deletes the issue and what hangs off it, keeping the counters exact (its number is never reused). */
    readonly deleteIssue: (issue: IssueRow) => Effect.Effect<void>
    readonly recountComments: (issueId: number) => Effect.Effect<void>
    /** Whether each of these pull requests' issues is merged, and when (the issue JSON's `pull_request`). */
    readonly pullStatesOf: (
      issueIds: ReadonlyArray<number>
    ) => Effect.Effect<ReadonlyMap<number, { readonly merged: boolean; readonly mergedAt: Date | null }>>

    readonly assigneesOf: (issueIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, Array<number>>>
    readonly addAssignee: (issueId: number, userId: number) => Effect.Effect<boolean>
    readonly removeAssignee: (issueId: number, userId: number) => Effect.Effect<boolean>
    readonly addMentions: (issueId: number, userIds: ReadonlyArray<number>) => Effect.Effect<void>

    readonly labelsOf: (issueIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, Array<LabelRow>>>
    /**
     * What the JSON of a page of issues shows besides their rows, in one statement: `labelsOf`,
     * `assigneesOf`, `milestonesByIds` (of `milestoneIds`) and the issues' own attachments
     * (AttachmentsRepo.ofIssues), each as those give it.
     */
    readonly partsOf: (
      issueIds: ReadonlyArray<number>,
      milestoneIds: ReadonlyArray<number>
    ) => Effect.Effect<IssueParts>
    readonly labelsByIds: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<LabelRow>>
    /** Labels of the repository and (for an organization's repository) of `orgId`, with these names. */
    readonly labelsByNames: (
      repoId: number,
      orgId: number | null,
      names: ReadonlyArray<string>
    ) => Effect.Effect<ReadonlyArray<LabelRow>>
    readonly listLabels: (
      owner: { readonly repoId: number } | { readonly orgId: number },
      sort: string,
      window: Page | undefined
    ) => Effect.Effect<Listed<LabelRow>>
    readonly labelById: (id: number) => Effect.Effect<Option.Option<LabelRow>>
    readonly insertLabel: (values: Record<string, unknown>) => Effect.Effect<LabelRow>
    readonly updateLabel: (id: number, values: Record<string, unknown>) => Effect.Effect<LabelRow>
    readonly deleteLabel: (id: number) => Effect.Effect<void>
    readonly addIssueLabel: (issueId: number, labelId: number) => Effect.Effect<boolean>
    /** Several labels of one issue in one statement (a new issue's: one round trip, not one per label). */
    readonly addIssueLabels: (issueId: number, labelIds: ReadonlyArray<number>) => Effect.Effect<void>
    readonly removeIssueLabel: (issueId: number, labelId: number) => Effect.Effect<boolean>

    readonly listMilestones: (
      repoId: number,
      state: "open" | "closed" | "all",
      name: string,
      window: Page | undefined
    ) => Effect.Effect<Listed<MilestoneRow>>
    readonly milestonesByIds: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyArray<MilestoneRow>>
    readonly milestoneByName: (repoId: number, name: string) => Effect.Effect<Option.Option<MilestoneRow>>
    readonly insertMilestone: (values: Record<string, unknown>) => Effect.Effect<MilestoneRow>
    readonly updateMilestone: (id: number, values: Record<string, unknown>) => Effect.Effect<void>
    /** Moves the milestone's `updated_at` to `at`, or only forward when `forwardOnly`. */
    readonly touchMilestone: (id: number, at: Date, forwardOnly: boolean) => Effect.Effect<void>
    readonly deleteMilestone: (id: number) => Effect.Effect<void>

    readonly insertComment: (comment: NewComment) => Effect.Effect<CommentRow>
    /** Several comments in one statement; their ids follow the order given. */
    readonly insertComments: (comments: ReadonlyArray<NewComment>) => Effect.Effect<void>
    readonly commentById: (id: number) => Effect.Effect<Option.Option<CommentRow>>
    /** Comments of one issue or of a repository's issues, oldest first; `types` narrows them. */
    readonly listComments: (
      where: { readonly issueId: number } | { readonly repoId: number; readonly pulls: boolean | undefined },
      options: {
        readonly types?: ReadonlyArray<number> | undefined
        readonly excludeTypes?: ReadonlyArray<number> | undefined
        readonly since?: Date | undefined
        readonly before?: Date | undefined
      },
      window: Page | undefined
    ) => Effect.Effect<Listed<CommentRow>>
    readonly updateComment: (id: number, body: string, at: Date) => Effect.Effect<void>
    readonly deleteComment: (id: number) => Effect.Effect<void>
    /** The cross-reference comments a source (issue text or comment) has written. */
    readonly referencesFrom: (
      refIssueId: number,
      refCommentId: number | null
    ) => Effect.Effect<ReadonlyArray<CommentRow>>
    readonly setRefAction: (commentId: number, action: number, at: Date) => Effect.Effect<void>
  }
>()("hearth/issues/IssuesRepo") {
  static readonly layer = Layer.effect(
    IssuesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const windowOf = (window: Page | undefined) =>
        window === undefined ? sql`` : sql`LIMIT ${window.limit} OFFSET ${window.offset}`
      const one = <A>(rows: ReadonlyArray<Row>, f: (r: Row) => A) =>
        rows.length === 0 ? Option.none<A>() : Option.some(f(rows[0]!))
      const withIssueCount = sql`l.*, l.open_issues + l.closed_issues + l.open_pulls + l.closed_pulls AS num_issues`
      const milestoneColumns = sql`m.*,
        (SELECT count(*) FROM issues i WHERE i.milestone_id = m.id) AS num_issues,
        (SELECT count(*) FROM issues i WHERE i.milestone_id = m.id AND i.is_closed) AS num_closed_issues`

      const counterColumn = (isPull: boolean) =>
        isPull
          ? { all: sql`num_pulls`, closed: sql`num_closed_pulls` }
          : { all: sql`num_issues`, closed: sql`num_closed_issues` }

      const issueWhere = (f: IssueFilter) => {
        const parts = [sql`i.repo_id IN ${sql.in(f.repoIds.length === 0 ? [0] : f.repoIds)}`]
        if (f.state !== "all") parts.push(sql`i.is_closed = ${f.state === "closed"}`)
        if (f.isPull !== undefined) parts.push(sql`i.is_pull = ${f.isPull}`)
        if (f.allLabelIds !== undefined && f.allLabelIds.length > 0) {
          // A semi-join the planner can run either way (the label's rows first, or the issues in
          // page order probing the label), not a count per issue of the repository (bench:issues).
          const ids = [...new Set(f.allLabelIds)]
          parts.push(
            ids.length === 1
              ? sql`i.id IN (SELECT il.issue_id FROM issue_labels il WHERE il.label_id = ${ids[0]!})`
              : sql`i.id IN (SELECT il.issue_id FROM issue_labels il WHERE il.label_id IN ${sql.in(ids)}
                  GROUP BY il.issue_id HAVING count(*) = ${ids.length})`
          )
        }
        if (f.anyLabelNames !== undefined && f.anyLabelNames.length > 0) {
          parts.push(sql`i.id IN (SELECT il.issue_id FROM issue_labels il JOIN labels l ON l.id = il.label_id
            WHERE l.name IN ${sql.in(f.anyLabelNames)})`)
        }
        if (f.milestoneIds !== undefined && f.milestoneIds.length > 0)
          parts.push(sql`i.milestone_id IN ${sql.in(f.milestoneIds)}`)
        if (f.milestoneNames !== undefined && f.milestoneNames.length > 0) {
          parts.push(sql`i.milestone_id IN (SELECT m.id FROM milestones m
            WHERE lower(m.name) IN ${sql.in(f.milestoneNames.map((n) => n.toLowerCase()))})`)
        }
        if (f.keyword !== undefined && f.keyword !== "") {
          const pattern = likePattern(f.keyword)
          // One branch per trigram index (title, body, comment bodies), so that each is a bitmap
          // scan of its index; an OR across them with a sub-select reads every issue.
          parts.push(sql`i.id IN (SELECT t.id FROM issues t WHERE t.title ILIKE ${pattern}
            UNION SELECT b.id FROM issues b WHERE b.body ILIKE ${pattern}
            UNION SELECT c.issue_id FROM comments c WHERE c.type = 0 AND c.body ILIKE ${pattern})`)
        }
        if (f.since !== undefined) parts.push(sql`i.updated_at >= ${f.since}`)
        if (f.before !== undefined) parts.push(sql`i.updated_at <= ${f.before}`)
        if (f.posterId !== undefined) parts.push(sql`i.poster_id = ${f.posterId}`)
        if (f.assigneeId !== undefined)
          parts.push(sql`i.id IN (SELECT a.issue_id FROM issue_assignees a WHERE a.assignee_id = ${f.assigneeId})`)
        if (f.mentionedId !== undefined)
          parts.push(sql`i.id IN (SELECT m.issue_id FROM issue_mentions m WHERE m.user_id = ${f.mentionedId})`)
        if (f.reviewRequestedId !== undefined) {
          // Forgejo's applyReviewRequestedCondition: a request row that is the latest approve,
          // reject or request of its reviewer (a review given since answers the request).
          const me = f.reviewRequestedId
          parts.push(sql`i.poster_id <> ${me}`)
          parts.push(sql`i.id IN (SELECT r.issue_id FROM reviews r WHERE r.type = 4
            AND (r.reviewer_id = ${me} OR r.reviewer_team_id IN (SELECT tu.team_id FROM team_users tu WHERE tu.user_id = ${me}))
            AND r.id IN (SELECT max(x.id) FROM reviews x WHERE x.issue_id = r.issue_id AND x.type IN (1, 3, 4)
              GROUP BY x.reviewer_id, x.reviewer_team_id))`)
        }
        if (f.reviewedId !== undefined) {
          // Forgejo's applyReviewedCondition: a review (not a request; not a pending one, which no
          // one else sees yet) by the user or their team, or a comment of theirs (plain, code, review).
          const me = f.reviewedId
          parts.push(sql`i.poster_id <> ${me}`)
          parts.push(sql`(i.id IN (SELECT r.issue_id FROM reviews r WHERE r.type NOT IN (0, 4)
            AND (r.reviewer_id = ${me} OR r.reviewer_team_id IN (SELECT tu.team_id FROM team_users tu WHERE tu.user_id = ${me})))
            OR i.id IN (SELECT c.issue_id FROM comments c LEFT JOIN reviews cr ON cr.id = c.review_id
              WHERE c.poster_id = ${me} AND c.type IN (0, 21, 22) AND (cr.id IS NULL OR cr.type <> 0)))`)
        }
        return sql.and(parts)
      }

      // The count of a repository's list filtered by one of its own labels and nothing else but the
      // state and kind, read from the label's counts (migration 0046) instead of counting the
      // matching issues; any other filter (one added later too) counts them.
      const countedByLabel = (f: IssueFilter) => {
        const { repoIds, state, isPull, allLabelIds, sort: _sort, priorityRepoId: _priority, ...others } = f
        const labelIds = [...new Set(allLabelIds ?? [])]
        const unfiltered = Object.values(others).every(
          (v) => v === undefined || v === "" || (Array.isArray(v) && v.length === 0)
        )
        if (!unfiltered || repoIds.length !== 1 || labelIds.length !== 1) return undefined
        const columns = [
          ...(isPull !== true ? [["open_issues", "closed_issues"] as const] : []),
          ...(isPull !== false ? [["open_pulls", "closed_pulls"] as const] : [])
        ].flatMap(([open, closed]) => (state === "open" ? [open] : state === "closed" ? [closed] : [open, closed]))
        return sql`SELECT ${sql.unsafe(columns.join(" + "))} AS n FROM labels
          WHERE id = ${labelIds[0]!} AND repo_id = ${repoIds[0]!}`
      }

      // Forgejo's models/issues/issue_search.go `applySorts`.
      const dueDate = sql`LEAST(i.deadline, (SELECT m.deadline FROM milestones m WHERE m.id = i.milestone_id))`
      const orderOf = (f: IssueFilter) => {
        const priority =
          f.priorityRepoId !== undefined ? sql`CASE WHEN i.repo_id = ${f.priorityRepoId} THEN 0 ELSE 1 END, ` : sql``
        switch (f.sort) {
          case "oldest":
            return sql`${priority}i.created_at ASC, i.id ASC`
          case "recentupdate":
            return sql`${priority}i.updated_at DESC, i.created_at DESC, i.id DESC`
          case "leastupdate":
            return sql`${priority}i.updated_at ASC, i.created_at ASC, i.id ASC`
          case "mostcomment":
            return sql`${priority}i.num_comments DESC, i.created_at DESC, i.id DESC`
          case "leastcomment":
            return sql`${priority}i.num_comments ASC, i.created_at DESC, i.id DESC`
          case "nearduedate":
            return sql`${priority}${dueDate} ASC NULLS LAST, i.created_at DESC, i.id DESC`
          case "farduedate":
            return sql`${priority}${dueDate} DESC NULLS LAST, i.created_at DESC, i.id DESC`
          default:
            return sql`${priority}i.created_at DESC, i.id DESC`
        }
      }

      // A keyword's page: each of its three matches (title, body, a comment) found with the other
      // filters on the issue's own row, the first two without reading the issue again, the sort's
      // columns carried; only the page's issues read whole. The matching issue read for every
      // match, then all of them carried through the count and the sort, took 1.2× the time
      // (bench:issues' search, 1,980 matches on the embedded database).
      const keywordPage = (filter: IssueFilter, window: Page) => {
        const others = issueWhere({ ...filter, keyword: undefined })
        const pattern = likePattern(filter.keyword ?? "")
        const carried = sql`i.id, i.repo_id, i.created_at, i.updated_at, i.num_comments, i.deadline, i.milestone_id`
        return sql`WITH matched AS (
            SELECT ${carried} FROM issues i WHERE ${others} AND i.title ILIKE ${pattern}
            UNION SELECT ${carried} FROM issues i WHERE ${others} AND i.body ILIKE ${pattern}
            UNION SELECT ${carried} FROM comments c JOIN issues i ON i.id = c.issue_id
              WHERE ${others} AND c.type = 0 AND c.body ILIKE ${pattern}
          ), page AS (
            SELECT i.id, count(*) OVER () AS total_matches, row_number() OVER (ORDER BY ${orderOf(filter)}) AS at
            FROM matched i ORDER BY at LIMIT ${window.limit} OFFSET ${window.offset}
          )
          SELECT i.*, page.total_matches FROM page JOIN issues i ON i.id = page.id ORDER BY page.at`
      }

      return IssuesRepo.of(
        sqlBoundary({
          transaction: transaction(sql),
          insertIssue: (input) =>
            Effect.gen(function* () {
              // One counter row per repository: the row lock holds concurrent creates back until
              // this transaction ends, and a rollback gives the number back (no gaps, no duplicates).
              // The number, the row and the repository's count in one statement (one round trip,
              // which the embedded database makes in JavaScript).
              const { all } = counterColumn(input.isPull === true)
              const rows = yield* sql`WITH counter AS (
                  INSERT INTO issue_index (repo_id, max_index) VALUES (${input.repoId}, 1)
                  ON CONFLICT (repo_id) DO UPDATE SET max_index = issue_index.max_index + 1 RETURNING max_index
                ), counted AS (
                  UPDATE repositories SET ${all} = ${all} + 1 WHERE id = ${input.repoId}
                )
                INSERT INTO issues (repo_id, index, poster_id, title, body, ref, milestone_id, deadline, is_pull,
                  created_at, updated_at)
                VALUES (${input.repoId}, (SELECT max_index FROM counter), ${input.posterId}, ${input.title},
                  ${input.body}, ${input.ref}, ${input.milestoneId}, ${input.deadline}, ${input.isPull === true},
                  ${input.at}, ${input.at})
                RETURNING *`
              return toIssue(rows[0]!)
            }),
          issueByIndex: (repoId, index) =>
            Effect.map(sql`SELECT * FROM issues WHERE repo_id = ${repoId} AND index = ${index}`, (rows) =>
              one(rows, toIssue)
            ),
          issueById: (id) => Effect.map(sql`SELECT * FROM issues WHERE id = ${id}`, (rows) => one(rows, toIssue)),
          issuesByIds: (ids) =>
            ids.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT * FROM issues WHERE id = ANY(${ids}::int8[])`, (rows) => rows.map(toIssue)),
          listIssues: (filter, window) =>
            Effect.gen(function* () {
              const where = issueWhere(filter)
              // The total beside the page, in the same statement, where it can be (bench:issues): a
              // keyword's matches are all found before the first can be ordered, and counted in that
              // one pass; one label's total is its counts' row. Past the last page there is no row
              // to carry it, and an organization's label has no counts' row for the repository:
              // counted below.
              const keyword = filter.keyword !== undefined && filter.keyword !== ""
              const byLabel = keyword ? undefined : countedByLabel(filter)
              const paged = keyword
                ? yield* keywordPage(filter, window)
                : byLabel === undefined
                  ? []
                  : yield* sql`SELECT i.*, (${byLabel}) AS total_matches FROM issues i WHERE ${where}
                      ORDER BY ${orderOf(filter)} LIMIT ${window.limit} OFFSET ${window.offset}`
              const carried = paged[0]?.total_matches
              if (carried !== undefined && carried !== null) return { rows: paged.map(toIssue), total: num(carried) }
              const labelled = byLabel === undefined ? [] : yield* byLabel
              const [count] =
                labelled.length > 0 ? labelled : yield* sql`SELECT count(*) AS n FROM issues i WHERE ${where}`
              const rows = yield* sql`SELECT i.* FROM issues i WHERE ${where} ORDER BY ${orderOf(filter)}
                LIMIT ${window.limit} OFFSET ${window.offset}`
              return { rows: rows.map(toIssue), total: num(count!.n) }
            }),
          updateIssue: (id, fields, at) => {
            const values: Record<string, unknown> = { updated_at: at }
            if (fields.title !== undefined) values.title = fields.title
            if (fields.body !== undefined) values.body = fields.body
            if (fields.ref !== undefined) values.ref = fields.ref
            if (fields.milestoneId !== undefined) values.milestone_id = fields.milestoneId
            if (fields.deadline !== undefined) values.deadline = fields.deadline
            if (fields.isLocked !== undefined) values.is_locked = fields.isLocked
            return Effect.asVoid(sql`UPDATE issues SET ${sql.update(values)} WHERE id = ${id}`)
          },
          touchIssue: (id, at) => Effect.asVoid(sql`UPDATE issues SET updated_at = ${at} WHERE id = ${id}`),
          setClosed: (issue, closed, at) =>
            Effect.gen(function* () {
              const changed = yield* sql`UPDATE issues SET is_closed = ${closed}, closed_at = ${closed ? at : null},
                updated_at = ${at} WHERE id = ${issue.id} AND is_closed = ${!closed} RETURNING id`
              if (changed.length === 0) return
              const column = counterColumn(issue.isPull).closed
              yield* sql`UPDATE repositories SET ${column} = ${column} + ${closed ? 1 : -1} WHERE id = ${issue.repoId}`
            }),
          deleteIssue: (issue) =>
            Effect.gen(function* () {
              const gone = yield* sql`DELETE FROM issues WHERE id = ${issue.id} RETURNING is_closed, is_pull, pin_order`
              if (gone.length === 0) return
              // A pinned issue is unpinned first (Forgejo): the later pins move up.
              if (num(gone[0]!.pin_order) > 0) {
                yield* sql`UPDATE issues SET pin_order = pin_order - 1 WHERE repo_id = ${issue.repoId}
                  AND is_pull = ${issue.isPull} AND pin_order > ${gone[0]!.pin_order}`
              }
              const { all, closed } = counterColumn(issue.isPull)
              const closedDelta = gone[0]!.is_closed ? 1 : 0
              yield* sql`UPDATE repositories SET ${all} = ${all} - 1, ${closed} = ${closed} - ${closedDelta}
                WHERE id = ${issue.repoId}`
            }),
          recountComments: (issueId) =>
            Effect.asVoid(sql`UPDATE issues SET num_comments =
              (SELECT count(*) FROM comments c WHERE c.issue_id = ${issueId} AND c.type IN (0, 22)) WHERE id = ${issueId}`),
          pullStatesOf: (issueIds) =>
            issueIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT issue_id, has_merged, merged_at FROM pull_requests WHERE issue_id = ANY(${issueIds}::int8[])`,
                  (rows) =>
                    new Map(
                      rows.map((r) => [
                        num(r.issue_id),
                        { merged: r.has_merged === true, mergedAt: (r.merged_at as Date | null) ?? null }
                      ])
                    )
                ),

          assigneesOf: (issueIds) =>
            issueIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT issue_id, assignee_id FROM issue_assignees WHERE issue_id = ANY(${issueIds}::int8[])
                    ORDER BY assignee_id`,
                  (rows) => {
                    const map = new Map<number, Array<number>>()
                    for (const r of rows) {
                      const list = map.get(num(r.issue_id)) ?? []
                      list.push(num(r.assignee_id))
                      map.set(num(r.issue_id), list)
                    }
                    return map
                  }
                ),
          addAssignee: (issueId, userId) =>
            Effect.map(
              sql`INSERT INTO issue_assignees (issue_id, assignee_id) VALUES (${issueId}, ${userId})
                ON CONFLICT DO NOTHING RETURNING issue_id`,
              (rows) => rows.length > 0
            ),
          removeAssignee: (issueId, userId) =>
            Effect.map(
              sql`DELETE FROM issue_assignees WHERE issue_id = ${issueId} AND assignee_id = ${userId} RETURNING issue_id`,
              (rows) => rows.length > 0
            ),
          addMentions: (issueId, userIds) =>
            userIds.length === 0
              ? Effect.void
              : Effect.asVoid(
                  sql`INSERT INTO issue_mentions (issue_id, user_id)
                    SELECT ${issueId}, u.id FROM users u WHERE u.id IN ${sql.in(userIds)} ON CONFLICT DO NOTHING`
                ),

          partsOf: (issueIds, milestoneIds) =>
            issueIds.length === 0 && milestoneIds.length === 0
              ? Effect.succeed({ labels: new Map(), assignees: new Map(), milestones: [], attachments: new Map() })
              : Effect.map(
                  // Four reads in one round trip (each as its own query below): on the embedded
                  // database every statement costs the main thread a parse, a plan and its protocol.
                  sql`SELECT
                    (SELECT json_agg(x ORDER BY x.name, x.id)::text FROM (
                      SELECT l.*, array_agg(il.issue_id) AS for_issues FROM issue_labels il
                      JOIN labels l ON l.id = il.label_id
                      WHERE il.issue_id = ANY(${issueIds}::int8[]) GROUP BY l.id) x) AS labels,
                    (SELECT json_agg(json_build_array(a.issue_id, a.assignee_id) ORDER BY a.assignee_id)::text
                      FROM issue_assignees a WHERE a.issue_id = ANY(${issueIds}::int8[])) AS assignees,
                    ${
                      milestoneIds.length === 0
                        ? sql`NULL`
                        : sql`(SELECT json_agg(x)::text FROM (SELECT ${milestoneColumns} FROM milestones m
                            WHERE m.id IN ${sql.in(milestoneIds)}) x)`
                    } AS milestones,
                    (SELECT json_agg(t ORDER BY t.id)::text FROM attachments t
                      WHERE t.issue_id = ANY(${issueIds}::int8[]) AND t.comment_id IS NULL) AS attachments`,
                  (rows): IssueParts => {
                    const r = rows[0]!
                    const parsed = (column: string): ReadonlyArray<any> =>
                      r[column] === null || r[column] === undefined ? [] : JSON.parse(String(r[column]))
                    const labels = new Map<number, Array<LabelRow>>()
                    for (const row of parsed("labels")) {
                      const label = toLabel(withDates(row, ["archived_at", "created_at", "updated_at"]))
                      for (const issueId of row.for_issues as ReadonlyArray<unknown>) {
                        const list = labels.get(num(issueId)) ?? []
                        list.push(label)
                        labels.set(num(issueId), list)
                      }
                    }
                    const assignees = new Map<number, Array<number>>()
                    for (const [issueId, userId] of parsed("assignees")) {
                      const list = assignees.get(num(issueId)) ?? []
                      list.push(num(userId))
                      assignees.set(num(issueId), list)
                    }
                    const attachments = new Map<number, Array<AttachmentRow>>()
                    for (const row of parsed("attachments")) {
                      const attachment = toAttachment(withDates(row, ["created_at"]))
                      const list = attachments.get(attachment.issueId)
                      if (list === undefined) attachments.set(attachment.issueId, [attachment])
                      else list.push(attachment)
                    }
                    const milestones = parsed("milestones").map((row) =>
                      toMilestone(withDates(row, ["deadline", "closed_at", "created_at", "updated_at"]))
                    )
                    return { labels, assignees, milestones, attachments }
                  }
                ),
          labelsOf: (issueIds) =>
            issueIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  // Each label once with the issues it is on (a page's issues share a few labels: a
                  // row per pair repeated every label's columns, which the embedded database hands
                  // over one value at a time); in label order, so each issue's list is too.
                  sql`SELECT l.*, array_agg(il.issue_id) AS for_issues FROM issue_labels il
                    JOIN labels l ON l.id = il.label_id
                    WHERE il.issue_id = ANY(${issueIds}::int8[]) GROUP BY l.id ORDER BY l.name, l.id`,
                  (rows) => {
                    const map = new Map<number, Array<LabelRow>>()
                    for (const r of rows) {
                      const label = toLabel(r)
                      for (const issueId of r.for_issues as ReadonlyArray<unknown>) {
                        const list = map.get(num(issueId)) ?? []
                        list.push(label)
                        map.set(num(issueId), list)
                      }
                    }
                    return map
                  }
                ),
          labelsByIds: (ids) =>
            ids.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT * FROM labels WHERE id IN ${sql.in(ids)} ORDER BY name, id`, (rows) =>
                  rows.map(toLabel)
                ),
          labelsByNames: (repoId, orgId, names) =>
            names.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`SELECT * FROM labels WHERE (repo_id = ${repoId} OR org_id = ${orgId ?? -1})
                    AND name IN ${sql.in(names)} ORDER BY name, id`,
                  (rows) => rows.map(toLabel)
                ),
          listLabels: (owner, sort, window) =>
            Effect.gen(function* () {
              const where = "repoId" in owner ? sql`l.repo_id = ${owner.repoId}` : sql`l.org_id = ${owner.orgId}`
              const order =
                sort === "reversealphabetically"
                  ? sql`l.name DESC, l.id DESC`
                  : sort === "leastissues"
                    ? sql`num_issues ASC, l.name, l.id`
                    : sort === "mostissues"
                      ? sql`num_issues DESC, l.name, l.id`
                      : sql`l.name ASC, l.id ASC`
              const [count] = yield* sql`SELECT count(*) AS n FROM labels l WHERE ${where}`
              const rows =
                yield* sql`SELECT ${withIssueCount} FROM labels l WHERE ${where} ORDER BY ${order} ${windowOf(window)}`
              return { rows: rows.map(toLabel), total: num(count!.n) }
            }),
          labelById: (id) =>
            Effect.map(sql`SELECT ${withIssueCount} FROM labels l WHERE l.id = ${id}`, (rows) => one(rows, toLabel)),
          insertLabel: (values) =>
            Effect.map(sql`INSERT INTO labels ${sql.insert(values)} RETURNING *`, (rows) => toLabel(rows[0]!)),
          updateLabel: (id, values) =>
            Effect.map(
              sql`UPDATE labels SET ${sql.update({ ...values, updated_at: new Date() })} WHERE id = ${id} RETURNING *`,
              (rows) => toLabel(rows[0]!)
            ),
          deleteLabel: (id) => Effect.asVoid(sql`DELETE FROM labels WHERE id = ${id}`),
          addIssueLabels: (issueId, labelIds) => {
            const rows: Array<Record<string, unknown>> = labelIds.map((labelId) => ({
              issue_id: issueId,
              label_id: labelId
            }))
            return Arr.isReadonlyArrayNonEmpty(rows)
              ? Effect.asVoid(sql`INSERT INTO issue_labels ${sql.insert(rows)} ON CONFLICT DO NOTHING`)
              : Effect.void
          },
          addIssueLabel: (issueId, labelId) =>
            Effect.map(
              sql`INSERT INTO issue_labels (issue_id, label_id) VALUES (${issueId}, ${labelId})
                ON CONFLICT DO NOTHING RETURNING issue_id`,
              (rows) => rows.length > 0
            ),
          removeIssueLabel: (issueId, labelId) =>
            Effect.map(
              sql`DELETE FROM issue_labels WHERE issue_id = ${issueId} AND label_id = ${labelId} RETURNING issue_id`,
              (rows) => rows.length > 0
            ),

          listMilestones: (repoId, state, name, window) =>
            Effect.gen(function* () {
              const parts = [sql`m.repo_id = ${repoId}`]
              if (state !== "all") parts.push(sql`m.is_closed = ${state === "closed"}`)
              if (name !== "") parts.push(sql`m.name ILIKE ${likePattern(name)}`)
              const where = sql.and(parts)
              const [count] = yield* sql`SELECT count(*) AS n FROM milestones m WHERE ${where}`
              // Forgejo orders by deadline (none = year 9999, last), then name.
              const rows = yield* sql`SELECT ${milestoneColumns} FROM milestones m WHERE ${where}
                ORDER BY m.deadline ASC NULLS LAST, m.name ASC, m.id ASC ${windowOf(window)}`
              return { rows: rows.map(toMilestone), total: num(count!.n) }
            }),
          milestonesByIds: (ids) =>
            ids.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT ${milestoneColumns} FROM milestones m WHERE m.id IN ${sql.in(ids)}`, (rows) =>
                  rows.map(toMilestone)
                ),
          milestoneByName: (repoId, name) =>
            Effect.map(
              sql`SELECT ${milestoneColumns} FROM milestones m WHERE m.repo_id = ${repoId} AND m.name = ${name}
                ORDER BY m.id LIMIT 1`,
              (rows) => one(rows, toMilestone)
            ),
          insertMilestone: (values) =>
            Effect.map(sql`INSERT INTO milestones ${sql.insert(values)} RETURNING id`, (rows) => ({
              id: num(rows[0]!.id)
            })).pipe(
              Effect.flatMap(({ id }) => sql`SELECT ${milestoneColumns} FROM milestones m WHERE m.id = ${id}`),
              Effect.map((rows) => toMilestone(rows[0]!))
            ),
          updateMilestone: (id, values) =>
            Effect.asVoid(sql`UPDATE milestones SET ${sql.update(values)} WHERE id = ${id}`),
          touchMilestone: (id, at, forwardOnly) =>
            Effect.asVoid(
              forwardOnly
                ? sql`UPDATE milestones SET updated_at = GREATEST(updated_at, ${at}) WHERE id = ${id}`
                : sql`UPDATE milestones SET updated_at = ${at} WHERE id = ${id}`
            ),
          deleteMilestone: (id) => Effect.asVoid(sql`DELETE FROM milestones WHERE id = ${id}`),

          insertComment: (c) =>
            Effect.map(sql`INSERT INTO comments ${sql.insert(commentRow(c))} RETURNING *`, (rows) =>
              toComment(rows[0]!)
            ),
          insertComments: (comments) => {
            const rows: Array<Record<string, unknown>> = comments.map(commentRow)
            return Arr.isReadonlyArrayNonEmpty(rows)
              ? Effect.asVoid(sql`INSERT INTO comments ${sql.insert(rows)}`)
              : Effect.void
          },
          commentById: (id) => Effect.map(sql`SELECT * FROM comments WHERE id = ${id}`, (rows) => one(rows, toComment)),
          listComments: (where, options, window) =>
            Effect.gen(function* () {
              const parts =
                "issueId" in where
                  ? [sql`c.issue_id = ${where.issueId}`]
                  : [
                      sql`c.issue_id IN (SELECT i.id FROM issues i WHERE i.repo_id = ${where.repoId}${
                        where.pulls === undefined ? sql`` : sql` AND i.is_pull = ${where.pulls}`
                      })`
                    ]
              if (options.types !== undefined) parts.push(sql`c.type IN ${sql.in(options.types)}`)
              if (options.excludeTypes !== undefined) parts.push(sql`c.type NOT IN ${sql.in(options.excludeTypes)}`)
              if (options.since !== undefined) parts.push(sql`c.updated_at >= ${options.since}`)
              if (options.before !== undefined) parts.push(sql`c.updated_at <= ${options.before}`)
              const condition = sql.and(parts)
              // Plain comments use none of the other types' columns: left out, the embedded database
              // hands over 7 values a comment instead of 24 (an issue's 200 comments: 0.3–0.5× the time).
              const plain = options.types?.every((t) => t === 0) === true
              const columns = plain
                ? sql`c.id, c.issue_id, c.type, c.poster_id, c.body, c.created_at, c.updated_at`
                : sql`c.*`
              const rows =
                yield* sql`SELECT ${columns} FROM comments c WHERE ${condition} ORDER BY c.created_at, c.id ${windowOf(window)}`
              // Unpaged, the rows are the total (an issue's comments and timeline: one statement fewer).
              if (window === undefined) return { rows: rows.map(toComment), total: rows.length }
              const [count] = yield* sql`SELECT count(*) AS n FROM comments c WHERE ${condition}`
              return { rows: rows.map(toComment), total: num(count!.n) }
            }),
          updateComment: (id, body, at) =>
            Effect.asVoid(sql`UPDATE comments SET body = ${body}, updated_at = ${at} WHERE id = ${id}`),
          deleteComment: (id) => Effect.asVoid(sql`DELETE FROM comments WHERE id = ${id}`),
          referencesFrom: (refIssueId, refCommentId) =>
            Effect.map(
              sql`SELECT * FROM comments WHERE ref_issue_id = ${refIssueId} AND type IN (3, 5, 6)
                AND ${refCommentId === null ? sql`ref_comment_id IS NULL` : sql`ref_comment_id = ${refCommentId}`}`,
              (rows) => rows.map(toComment)
            ),
          setRefAction: (commentId, action, at) =>
            Effect.asVoid(sql`UPDATE comments SET ref_action = ${action}, updated_at = ${at} WHERE id = ${commentId}`)
        })
      )
    })
  )
}

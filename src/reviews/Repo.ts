// SQL for pull request reviews (migration 0027_reviews): the `reviews` rows and the comments that
// hang off them (`review`, `code`, `review_request`, `dismiss_review`). Rules live in Service.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"

/** Forgejo's ReviewType (models/issues/review.go). */
export const ReviewType = { pending: 0, approve: 1, comment: 2, reject: 3, request: 4 } as const
export type ReviewType = (typeof ReviewType)[keyof typeof ReviewType]

/** Forgejo's comment types of reviews (models/issues/comment.go). */
export const ReviewCommentType = { code: 21, review: 22, reviewRequest: 27, dismissReview: 32 } as const

export interface ReviewRow {
  readonly id: number
  readonly issueId: number
  readonly type: ReviewType
  /** null for a team's request, or when the reviewer's account is gone (the ghost). */
  readonly reviewerId: number | null
  readonly reviewerTeamId: number | null
  readonly content: string
  readonly official: boolean
  readonly commitId: string
  readonly stale: boolean
  readonly dismissed: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** An inline (code) comment of a review. */
export interface CodeCommentRow {
  readonly id: number
  readonly issueId: number
  readonly reviewId: number
  readonly posterId: number
  readonly body: string
  readonly treePath: string
  /** Forgejo's signed line: negative on the old side, positive on the new side. */
  readonly line: number
  /** The cut diff hunk, with the file's diff headers. */
  readonly patch: string
  readonly commitSha: string
  readonly resolveDoerId: number | null
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** A code comment with what the files page needs of its review. */
export interface IssueCodeComment extends CodeCommentRow {
  readonly reviewType: ReviewType
  readonly reviewerId: number | null
}

/** Forgejo's `ViewedState`: a file marked viewed, or viewed before its content changed. */
export const ViewedState = { viewed: 1, changed: 2 } as const

export interface ReviewStateRow {
  readonly commitSha: string
  /** path → ViewedState */
  readonly files: Readonly<Record<string, number>>
}

const parseStates = (raw: unknown): Record<string, number> => {
  try {
    const value: unknown = JSON.parse(String(raw ?? "{}"))
    if (value === null || typeof value !== "object" || Array.isArray(value)) return {}
    const out: Record<string, number> = {}
    for (const [path, state] of Object.entries(value)) if (typeof state === "number") out[path] = state
    return out
  } catch {
    return {}
  }
}

/** A pull request's review requests (users, teams) and its review summaries counted (`review_comments`). */
export interface PullReviewSummary {
  readonly userIds: ReadonlyArray<number>
  readonly teamIds: ReadonlyArray<number>
  readonly comments: number
}

export interface NewReview {
  readonly issueId: number
  readonly type: ReviewType
  readonly reviewerId: number | null
  readonly reviewerTeamId?: number | null | undefined
  readonly content: string
  readonly official: boolean
  readonly commitId: string
  readonly stale: boolean
  readonly at: Date
}

/** A comment row of a review's types (its other columns stay at their defaults). */
export interface NewReviewComment {
  readonly issueId: number
  readonly type: number
  readonly posterId: number
  readonly body?: string | undefined
  readonly reviewId?: number | null | undefined
  readonly treePath?: string | undefined
  readonly line?: number | undefined
  readonly patch?: string | undefined
  readonly commitSha?: string | undefined
  readonly assigneeId?: number | null | undefined
  readonly assigneeTeamId?: number | null | undefined
  readonly removedAssignee?: boolean | undefined
  readonly at: Date
}

type Row = Record<string, any>
const num = (v: unknown) => Number(v)
const numOrNull = (v: unknown) => (v === null || v === undefined ? null : Number(v))

const toReview = (r: Row): ReviewRow => ({
  id: num(r.id),
  issueId: num(r.issue_id),
  type: num(r.type) as ReviewType,
  reviewerId: numOrNull(r.reviewer_id),
  reviewerTeamId: numOrNull(r.reviewer_team_id),
  content: r.content,
  official: r.official === true,
  commitId: r.commit_id,
  stale: r.stale === true,
  dismissed: r.dismissed === true,
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const toCode = (r: Row): CodeCommentRow => ({
  id: num(r.id),
  issueId: num(r.issue_id),
  reviewId: num(r.review_id),
  posterId: num(r.poster_id),
  body: r.body,
  treePath: r.tree_path,
  line: num(r.line),
  patch: r.patch,
  commitSha: r.commit_sha,
  resolveDoerId: numOrNull(r.resolve_doer_id),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const first = <A>(rows: ReadonlyArray<Row>, f: (r: Row) => A): Option.Option<A> =>
  rows.length === 0 ? Option.none() : Option.some(f(rows[0]!))

export class ReviewsRepo extends Context.Service<
  ReviewsRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly byId: (id: number) => Effect.Effect<Option.Option<ReviewRow>>
    /** Every review row of a pull request's issue, oldest first (Forgejo's created, id order). */
    readonly ofIssue: (issueId: number) => Effect.Effect<ReadonlyArray<ReviewRow>>
    /** The reviewer's pending review of the pull request, if any. */
    readonly pendingOf: (issueId: number, reviewerId: number) => Effect.Effect<Option.Option<ReviewRow>>
    /** The user's (or team's) open review request rows. */
    readonly requestsOf: (
      issueId: number,
      who: { readonly userId: number } | { readonly teamId: number }
    ) => Effect.Effect<ReadonlyArray<ReviewRow>>
    readonly insert: (review: NewReview) => Effect.Effect<ReviewRow>
    readonly update: (
      id: number,
      fields: Partial<Pick<ReviewRow, "type" | "content" | "official" | "commitId" | "stale">>,
      at: Date
    ) => Effect.Effect<ReviewRow>
    readonly delete: (id: number) => Effect.Effect<void>
    readonly setDismissed: (ids: ReadonlyArray<number>, dismissed: boolean, at: Date) => Effect.Effect<void>
    /** The user's other reviews of the pull request lose `official` (only the latest one counts). */
    readonly clearOfficial: (issueId: number, reviewerId: number, exceptId: number) => Effect.Effect<void>
    /**
     * After a push to the head: when the diff `changed`, every review whose commit is not `head`
     * becomes stale (Forgejo's `MarkReviewsAsStale`); those of `head` are fresh in any case
     * (`MarkReviewsAsNotStale`).
     */
    readonly markStale: (issueId: number, head: string, changed: boolean) => Effect.Effect<void>
    /**
     * Forgejo's requested reviewers: per user, the latest non-dismissed approve, reject or request
     * row, ordered by its update time; and the teams with an open request. For many issues at once.
     */
    readonly requestedOf: (issueIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, PullReviewSummary>>

    readonly insertComment: (comment: NewReviewComment) => Effect.Effect<number>
    /** The review's summary comment (type 22), if any. */
    readonly summaryCommentOf: (reviewId: number) => Effect.Effect<Option.Option<number>>
    readonly summaryCommentsOf: (reviewIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, number>>
    readonly setSummaryBody: (reviewId: number, body: string, at: Date) => Effect.Effect<void>
    /** A review's code comments in file and line order. */
    readonly codeComments: (reviewId: number) => Effect.Effect<ReadonlyArray<CodeCommentRow>>
    readonly codeCommentCounts: (reviewIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, number>>
    /** A comment of any type by id, with the repository of its issue (for the comment routes). */
    readonly commentById: (
      id: number
    ) => Effect.Effect<Option.Option<{ readonly type: number; readonly repoId: number; readonly code: CodeCommentRow }>>
    readonly deleteComment: (id: number) => Effect.Effect<void>

    /** Every code comment of the pull request's issue with its review's type and reviewer (the files page). */
    readonly issueCodeComments: (issueId: number) => Effect.Effect<ReadonlyArray<IssueCodeComment>>
    /** Forgejo's `MarkConversation`: the comment's `resolve_doer_id` set (resolved) or cleared. */
    readonly setResolved: (commentId: number, doerId: number | null) => Effect.Effect<void>
    /** The user's newest viewed-files state of the pull request (0036 `review_state`). */
    readonly reviewStateOf: (userId: number, pullId: number) => Effect.Effect<Option.Option<ReviewStateRow>>
    /** Stores the user's viewed files for the pull request at `commitSha` (one row per head commit). */
    readonly saveReviewState: (
      userId: number,
      pullId: number,
      commitSha: string,
      files: Readonly<Record<string, number>>,
      at: Date
    ) => Effect.Effect<void>
  }
>()("hearth/reviews/ReviewsRepo") {
  static readonly layer = Layer.effect(
    ReviewsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return ReviewsRepo.of(
        sqlBoundary({
          transaction: transaction(sql),
          byId: (id) => Effect.map(sql`SELECT * FROM reviews WHERE id = ${id}`, (rows) => first(rows, toReview)),
          ofIssue: (issueId) =>
            Effect.map(sql`SELECT * FROM reviews WHERE issue_id = ${issueId} ORDER BY created_at, id`, (rows) =>
              rows.map(toReview)
            ),
          pendingOf: (issueId, reviewerId) =>
            Effect.map(
              sql`SELECT * FROM reviews WHERE issue_id = ${issueId} AND reviewer_id = ${reviewerId}
                AND type = ${ReviewType.pending} ORDER BY id DESC LIMIT 1`,
              (rows) => first(rows, toReview)
            ),
          requestsOf: (issueId, who) =>
            Effect.map(
              "userId" in who
                ? sql`SELECT * FROM reviews WHERE issue_id = ${issueId} AND reviewer_id = ${who.userId}
                    AND reviewer_team_id IS NULL AND type = ${ReviewType.request} ORDER BY id`
                : sql`SELECT * FROM reviews WHERE issue_id = ${issueId} AND reviewer_team_id = ${who.teamId}
                    AND type = ${ReviewType.request} ORDER BY id`,
              (rows) => rows.map(toReview)
            ),
          insert: (r) =>
            Effect.map(
              sql`INSERT INTO reviews ${sql.insert({
                issue_id: r.issueId,
                type: r.type,
                reviewer_id: r.reviewerId,
                reviewer_team_id: r.reviewerTeamId ?? null,
                content: r.content,
                official: r.official,
                commit_id: r.commitId,
                stale: r.stale,
                created_at: r.at,
                updated_at: r.at
              })} RETURNING *`,
              (rows) => toReview(rows[0]!)
            ),
          update: (id, fields, at) =>
            Effect.map(
              sql`UPDATE reviews SET ${sql.update({
                ...(fields.type !== undefined ? { type: fields.type } : {}),
                ...(fields.content !== undefined ? { content: fields.content } : {}),
                ...(fields.official !== undefined ? { official: fields.official } : {}),
                ...(fields.commitId !== undefined ? { commit_id: fields.commitId } : {}),
                ...(fields.stale !== undefined ? { stale: fields.stale } : {}),
                updated_at: at
              })} WHERE id = ${id} RETURNING *`,
              (rows) => toReview(rows[0]!)
            ),
          delete: (id) => Effect.asVoid(sql`DELETE FROM reviews WHERE id = ${id}`),
          setDismissed: (ids, dismissed, at) =>
            ids.length === 0
              ? Effect.void
              : Effect.asVoid(
                  sql`UPDATE reviews SET dismissed = ${dismissed}, updated_at = ${at} WHERE id IN ${sql.in(ids)}`
                ),
          clearOfficial: (issueId, reviewerId, exceptId) =>
            Effect.asVoid(
              sql`UPDATE reviews SET official = false WHERE issue_id = ${issueId} AND reviewer_id = ${reviewerId}
                AND id <> ${exceptId} AND official`
            ),
          markStale: (issueId, head, changed) =>
            Effect.asVoid(
              changed
                ? sql`UPDATE reviews SET stale = (commit_id <> ${head}) WHERE issue_id = ${issueId}`
                : sql`UPDATE reviews SET stale = false WHERE issue_id = ${issueId} AND commit_id = ${head}`
            ),
          requestedOf: (issueIds) =>
            Effect.gen(function* () {
              const out = new Map<number, { userIds: Array<number>; teamIds: Array<number>; comments: number }>()
              if (issueIds.length === 0) return out
              for (const id of issueIds) out.set(id, { userIds: [], teamIds: [], comments: 0 })
              // Users asked (their newest review a request or a verdict), teams asked, and the review
              // summaries counted: one statement for a page, each part in its own order.
              const rows = yield* sql`SELECT kind, issue_id, id, n FROM (
                  SELECT 0 AS kind, r.issue_id, r.reviewer_id AS id, 0::bigint AS n, r.updated_at AS at, r.id AS ord
                    FROM reviews r WHERE r.id IN (
                      SELECT max(id) FROM reviews WHERE issue_id = ANY(${issueIds}::int8[]) AND reviewer_team_id IS NULL
                        AND reviewer_id IS NOT NULL AND type IN (${ReviewType.approve}, ${ReviewType.reject}, ${ReviewType.request})
                        AND NOT dismissed GROUP BY issue_id, reviewer_id)
                  UNION ALL
                  SELECT 1, issue_id, reviewer_team_id, 0::bigint, updated_at, id FROM reviews
                    WHERE issue_id = ANY(${issueIds}::int8[]) AND reviewer_team_id IS NOT NULL AND type = ${ReviewType.request}
                  UNION ALL
                  SELECT 2, issue_id, NULL, count(*), NULL, NULL FROM comments
                    WHERE issue_id = ANY(${issueIds}::int8[]) AND type = ${ReviewCommentType.review} GROUP BY issue_id
                ) parts ORDER BY kind, at, ord`
              for (const r of rows) {
                const entry = out.get(num(r.issue_id))
                if (entry === undefined) continue
                const kind = num(r.kind)
                if (kind === 0) entry.userIds.push(num(r.id))
                else if (kind === 1) entry.teamIds.push(num(r.id))
                else entry.comments = num(r.n)
              }
              return out
            }),

          insertComment: (c) =>
            Effect.map(
              sql`INSERT INTO comments ${sql.insert({
                issue_id: c.issueId,
                type: c.type,
                poster_id: c.posterId,
                body: c.body ?? "",
                review_id: c.reviewId ?? null,
                tree_path: c.treePath ?? "",
                line: c.line ?? 0,
                patch: c.patch ?? "",
                commit_sha: c.commitSha ?? "",
                assignee_id: c.assigneeId ?? null,
                assignee_team_id: c.assigneeTeamId ?? null,
                removed_assignee: c.removedAssignee ?? false,
                created_at: c.at,
                updated_at: c.at
              })} RETURNING id`,
              (rows) => num(rows[0]!.id)
            ),
          summaryCommentOf: (reviewId) =>
            Effect.map(
              sql`SELECT id FROM comments WHERE review_id = ${reviewId} AND type = ${ReviewCommentType.review}
                ORDER BY id LIMIT 1`,
              (rows) => first(rows, (r) => num(r.id))
            ),
          summaryCommentsOf: (reviewIds) =>
            reviewIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT review_id, min(id) AS id FROM comments WHERE review_id = ANY(${reviewIds}::int8[])
                    AND type = ${ReviewCommentType.review} GROUP BY review_id`,
                  (rows) => new Map(rows.map((r) => [num(r.review_id), num(r.id)] as const))
                ),
          setSummaryBody: (reviewId, body, at) =>
            Effect.asVoid(
              sql`UPDATE comments SET body = ${body}, updated_at = ${at}
                WHERE review_id = ${reviewId} AND type = ${ReviewCommentType.review}`
            ),
          codeComments: (reviewId) =>
            Effect.map(
              sql`SELECT * FROM comments WHERE review_id = ${reviewId} AND type = ${ReviewCommentType.code}
                ORDER BY tree_path, abs(line), line, id`,
              (rows) => rows.map(toCode)
            ),
          codeCommentCounts: (reviewIds) =>
            reviewIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT review_id, count(*) AS n FROM comments WHERE review_id = ANY(${reviewIds}::int8[])
                    AND type = ${ReviewCommentType.code} GROUP BY review_id`,
                  (rows) => new Map(rows.map((r) => [num(r.review_id), num(r.n)] as const))
                ),
          commentById: (id) =>
            Effect.map(
              sql`SELECT c.*, i.repo_id AS issue_repo_id FROM comments c JOIN issues i ON i.id = c.issue_id
                WHERE c.id = ${id}`,
              (rows) =>
                first(rows, (r) => ({
                  type: num(r.type),
                  repoId: num(r.issue_repo_id),
                  code: toCode({ ...r, review_id: r.review_id ?? 0 })
                }))
            ),
          deleteComment: (id) => Effect.asVoid(sql`DELETE FROM comments WHERE id = ${id}`),

          issueCodeComments: (issueId) =>
            Effect.map(
              sql`SELECT c.*, r.type AS review_type, r.reviewer_id AS review_reviewer_id FROM comments c
                JOIN reviews r ON r.id = c.review_id
                WHERE c.issue_id = ${issueId} AND c.type = ${ReviewCommentType.code}
                ORDER BY c.tree_path, c.line, c.created_at, c.id`,
              (rows) =>
                rows.map((r) => ({
                  ...toCode(r),
                  reviewType: num(r.review_type) as ReviewType,
                  reviewerId: numOrNull(r.review_reviewer_id)
                }))
            ),
          setResolved: (commentId, doerId) =>
            Effect.asVoid(sql`UPDATE comments SET resolve_doer_id = ${doerId} WHERE id = ${commentId}`),
          reviewStateOf: (userId, pullId) =>
            Effect.map(
              sql`SELECT commit_sha, updated_files FROM review_state WHERE user_id = ${userId} AND pull_id = ${pullId}
                ORDER BY updated_at DESC, id DESC LIMIT 1`,
              (rows) => first(rows, (r) => ({ commitSha: String(r.commit_sha), files: parseStates(r.updated_files) }))
            ),
          saveReviewState: (userId, pullId, commitSha, files, at) =>
            Effect.asVoid(
              sql`INSERT INTO review_state ${sql.insert({
                user_id: userId,
                pull_id: pullId,
                commit_sha: commitSha,
                updated_files: JSON.stringify(files),
                updated_at: at
              })} ON CONFLICT (user_id, pull_id, commit_sha)
                DO UPDATE SET updated_files = EXCLUDED.updated_files, updated_at = EXCLUDED.updated_at`
            )
        })
      )
    })
  )
}

// Review rules that need no database (Forgejo's routers/api/v1/repo/pull_review.go
// `preparePullReviewType`, models/issues/review.go, services/convert/pull_review.go): the event a
// client sends as a review type, the state names the API shows, who may delete or dismiss, and
// what a pull request's reviews mean for its merge (CONTRACT-PULLS §12.7, §13.3).
import type { Principal } from "../http/Caller.ts"
import { type ReviewRow, ReviewType } from "./Repo.ts"

/** The review type of an event: anything but the three names (`""`, `PENDING`, even `APPROVE`) is pending. */
export const reviewTypeOf = (event: string): ReviewType =>
  event === "APPROVED"
    ? ReviewType.approve
    : event === "REQUEST_CHANGES"
      ? ReviewType.reject
      : event === "COMMENT"
        ? ReviewType.comment
        : ReviewType.pending

/**
 * Forgejo's `preparePullReviewType` refusals (422), in its order: an own pull request cannot be
 * approved or rejected; REQUEST_CHANGES and PENDING need a body; COMMENT a body or inline comments.
 */
export const eventRefusal = (
  event: string,
  body: string,
  hasComments: boolean,
  isPoster: boolean
): string | undefined => {
  const type = reviewTypeOf(event)
  const hasBody = body.trim() !== ""
  if (type === ReviewType.approve && isPoster) return "approve your own pull is not allowed"
  if (type === ReviewType.reject && isPoster) return "reject your own pull is not allowed"
  if (type === ReviewType.comment)
    return hasBody || hasComments ? undefined : `review event ${event} requires a body or a comment`
  if (type === ReviewType.approve) return undefined
  return hasBody ? undefined : `review event ${event} requires a body`
}

/** The API's `state` of a review type (Forgejo's ReviewStateType). */
export const stateName = (type: ReviewType): string => {
  switch (type) {
    case ReviewType.pending:
      return "PENDING"
    case ReviewType.approve:
      return "APPROVED"
    case ReviewType.comment:
      return "COMMENT"
    case ReviewType.reject:
      return "REQUEST_CHANGES"
    case ReviewType.request:
      return "REQUEST_REVIEW"
  }
}

/** The hook event name a submitted review's type becomes (and the hub event's `review.type`). */
export const submittedName = (type: ReviewType): "approved" | "rejected" | "comment" | undefined =>
  type === ReviewType.approve
    ? "approved"
    : type === ReviewType.reject
      ? "rejected"
      : type === ReviewType.comment
        ? "comment"
        : undefined

/** Someone else's pending review is hidden from everyone but site admins (the list); the get answers 404. */
export const mayListReview = (review: ReviewRow, caller: Principal | undefined): boolean =>
  review.type !== ReviewType.pending || caller?.user.isAdmin === true || caller?.user.id === review.reviewerId

/** Forgejo's `DeletePullReview`: the reviewer or a site admin. */
export const mayDeleteReview = (review: ReviewRow, caller: Principal): boolean =>
  caller.user.isAdmin || caller.user.id === review.reviewerId

/** What a pull request's reviews mean for its merge (Forgejo's `GetGrantedApprovalsCount`, `MergeBlockedBy…`). */
export const reviewFacts = (rows: ReadonlyArray<ReviewRow>) => ({
  approvals: rows
    .filter((r) => r.type === ReviewType.approve && !r.dismissed && r.reviewerId !== null)
    .map((r) => ({ userId: r.reviewerId!, official: r.official, stale: r.stale })),
  rejected: rows.some((r) => r.type === ReviewType.reject && r.official && !r.dismissed),
  officialRequests: rows.some((r) => r.type === ReviewType.request && r.official)
})

/** The content of the dismiss_review comment a push makes with `dismiss_stale_approvals` (Forgejo's). */
export const STALE_DISMISS_MESSAGE =
  "New commits pushed, approval review dismissed automatically according to repository settings"

// Review API objects (Forgejo's modules/structs/pull_review.go: PullReview, PullReviewComment) and
// option bodies (CreatePullReviewOptions, CreatePullReviewComment, SubmitPullReviewOptions,
// DismissPullReviewOptions, PullReviewRequestOptions); CONTRACT-PULLS §3.4, §12.
import { Schema } from "effect"
import { Id, Timestamp } from "../http/Json.ts"
import { Team } from "../orgs/Schema.ts"
import { User } from "../users/Schema.ts"

export const PullReview = Schema.Struct({
  id: Id,
  user: Schema.NullOr(User),
  team: Schema.NullOr(Team),
  state: Schema.String,
  body: Schema.String,
  commit_id: Schema.String,
  stale: Schema.Boolean,
  official: Schema.Boolean,
  dismissed: Schema.Boolean,
  comments_count: Schema.Int,
  submitted_at: Timestamp,
  updated_at: Timestamp,
  html_url: Schema.String,
  pull_request_url: Schema.String
}).annotate({ identifier: "PullReview" })
export type PullReview = typeof PullReview.Type

export const PullReviewComment = Schema.Struct({
  id: Id,
  body: Schema.String,
  user: Schema.NullOr(User),
  resolver: Schema.NullOr(User),
  pull_request_review_id: Id,
  created_at: Timestamp,
  updated_at: Timestamp,
  path: Schema.String,
  commit_id: Schema.String,
  original_commit_id: Schema.String,
  diff_hunk: Schema.String,
  position: Schema.Int,
  original_position: Schema.Int,
  html_url: Schema.String,
  pull_request_url: Schema.String
}).annotate({ identifier: "PullReviewComment" })
export type PullReviewComment = typeof PullReviewComment.Type

const opt = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

export const CreatePullReviewComment = Schema.Struct({
  path: opt(Schema.String),
  body: opt(Schema.String),
  old_position: opt(Schema.Int),
  new_position: opt(Schema.Int)
}).annotate({ identifier: "CreatePullReviewComment" })
export type CreatePullReviewComment = typeof CreatePullReviewComment.Type

export const CreatePullReviewOptions = Schema.Struct({
  event: opt(Schema.String),
  body: opt(Schema.String),
  commit_id: opt(Schema.String),
  comments: opt(Schema.Array(CreatePullReviewComment))
}).annotate({ identifier: "CreatePullReviewOptions" })
export type CreatePullReviewOptions = typeof CreatePullReviewOptions.Type

export const SubmitPullReviewOptions = Schema.Struct({
  event: opt(Schema.String),
  body: opt(Schema.String)
}).annotate({ identifier: "SubmitPullReviewOptions" })
export type SubmitPullReviewOptions = typeof SubmitPullReviewOptions.Type

export const DismissPullReviewOptions = Schema.Struct({
  message: opt(Schema.String),
  priors: opt(Schema.Boolean)
}).annotate({ identifier: "DismissPullReviewOptions" })
export type DismissPullReviewOptions = typeof DismissPullReviewOptions.Type

export const PullReviewRequestOptions = Schema.Struct({
  reviewers: opt(Schema.Array(Schema.String)),
  team_reviewers: opt(Schema.Array(Schema.String))
}).annotate({ identifier: "PullReviewRequestOptions" })
export type PullReviewRequestOptions = typeof PullReviewRequestOptions.Type

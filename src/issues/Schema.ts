// The tracker's API objects (Forgejo's modules/structs: Issue, Comment, TimelineComment, Label,
// Milestone) and option bodies, with their converters (services/convert). Times as Forgejo prints them.
import { Schema } from "effect"
import { Id, Timestamp } from "../http/Json.ts"
import { User } from "../users/Schema.ts"

const Time = Timestamp
const NullTime = Schema.NullOr(Timestamp)

export const Label = Schema.Struct({
  id: Id,
  name: Schema.String,
  exclusive: Schema.Boolean,
  is_archived: Schema.Boolean,
  color: Schema.String,
  description: Schema.String,
  url: Schema.String
}).annotate({ identifier: "Label" })
export type Label = typeof Label.Type

export const Milestone = Schema.Struct({
  id: Id,
  title: Schema.String,
  description: Schema.String,
  state: Schema.Literals(["open", "closed"]),
  open_issues: Schema.Int,
  closed_issues: Schema.Int,
  created_at: Time,
  updated_at: Time,
  closed_at: NullTime,
  due_on: NullTime
}).annotate({ identifier: "Milestone" })
export type Milestone = typeof Milestone.Type

export const RepositoryMeta = Schema.Struct({
  id: Id,
  name: Schema.String,
  owner: Schema.String,
  full_name: Schema.String
})

export const Issue = Schema.Struct({
  id: Id,
  url: Schema.String,
  html_url: Schema.String,
  number: Schema.Int,
  user: User,
  original_author: Schema.String,
  original_author_id: Schema.Int,
  title: Schema.String,
  body: Schema.String,
  ref: Schema.String,
  assets: Schema.Array(Schema.Unknown),
  labels: Schema.Array(Label),
  milestone: Schema.NullOr(Milestone),
  assignee: Schema.NullOr(User),
  assignees: Schema.NullOr(Schema.Array(User)),
  state: Schema.Literals(["open", "closed"]),
  is_locked: Schema.Boolean,
  comments: Schema.Int,
  created_at: Time,
  updated_at: Time,
  closed_at: NullTime,
  due_date: NullTime,
  pull_request: Schema.NullOr(Schema.Unknown),
  repository: RepositoryMeta,
  pin_order: Schema.Int
}).annotate({ identifier: "Issue" })
export type Issue = typeof Issue.Type

export const Comment = Schema.Struct({
  id: Id,
  html_url: Schema.String,
  pull_request_url: Schema.String,
  issue_url: Schema.String,
  user: User,
  original_author: Schema.String,
  original_author_id: Schema.Int,
  body: Schema.String,
  assets: Schema.Array(Schema.Unknown),
  created_at: Time,
  updated_at: Time
}).annotate({ identifier: "Comment" })
export type Comment = typeof Comment.Type

/** Forgejo's TrackedTime (services/convert `ToTrackedTime`); `issue` and `user_name` only when loaded. */
export const TrackedTime = Schema.Struct({
  id: Id,
  created: Time,
  time: Schema.Int,
  user_id: Id,
  user_name: Schema.String,
  issue_id: Id,
  issue: Schema.NullOr(Issue)
}).annotate({ identifier: "TrackedTime" })
export type TrackedTime = typeof TrackedTime.Type

export const TimelineComment = Schema.Struct({
  id: Id,
  type: Schema.String,
  html_url: Schema.String,
  pull_request_url: Schema.String,
  issue_url: Schema.String,
  user: User,
  body: Schema.String,
  created_at: Time,
  updated_at: Time,
  old_project_id: Schema.Int,
  project_id: Schema.Int,
  old_milestone: Schema.NullOr(Milestone),
  milestone: Schema.NullOr(Milestone),
  tracked_time: Schema.NullOr(TrackedTime),
  old_title: Schema.String,
  new_title: Schema.String,
  old_ref: Schema.String,
  new_ref: Schema.String,
  ref_issue: Schema.NullOr(Issue),
  ref_comment: Schema.NullOr(Comment),
  ref_action: Schema.String,
  ref_commit_sha: Schema.String,
  review_id: Schema.Int,
  label: Schema.NullOr(Label),
  assignee: Schema.NullOr(User),
  assignee_team: Schema.Null,
  removed_assignee: Schema.Boolean,
  resolve_doer: Schema.NullOr(User),
  dependent_issue: Schema.NullOr(Issue)
}).annotate({ identifier: "TimelineComment" })
export type TimelineComment = typeof TimelineComment.Type

const opt = <S extends Schema.Top>(schema: S) => Schema.optionalKey(schema)
const optNull = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

/** `updated_at` as every carrier takes it (a JSON date-time, or null). */
const UpdatedAt = optNull(Schema.String)

// Required members are optional here and checked by the service, for Forgejo's `[Title]: Required`.
export const CreateIssueOption = Schema.Struct({
  title: optNull(Schema.String),
  body: optNull(Schema.String),
  ref: optNull(Schema.String),
  assignee: optNull(Schema.String),
  assignees: optNull(Schema.Array(Schema.String)),
  due_date: optNull(Schema.String),
  milestone: optNull(Schema.Number),
  labels: optNull(Schema.Array(Schema.Number)),
  closed: optNull(Schema.Boolean)
}).annotate({ identifier: "CreateIssueOption" })
export type CreateIssueOption = typeof CreateIssueOption.Type

export const EditIssueOption = Schema.Struct({
  title: optNull(Schema.String),
  body: optNull(Schema.String),
  ref: optNull(Schema.String),
  assignee: optNull(Schema.String),
  assignees: optNull(Schema.Array(Schema.String)),
  milestone: optNull(Schema.Number),
  state: optNull(Schema.String),
  due_date: optNull(Schema.String),
  unset_due_date: optNull(Schema.Boolean),
  updated_at: UpdatedAt
}).annotate({ identifier: "EditIssueOption" })
export type EditIssueOption = typeof EditIssueOption.Type

export const CreateIssueCommentOption = Schema.Struct({
  body: optNull(Schema.String),
  updated_at: UpdatedAt
}).annotate({ identifier: "CreateIssueCommentOption" })

export const EditIssueCommentOption = Schema.Struct({
  body: optNull(Schema.String),
  updated_at: UpdatedAt
}).annotate({ identifier: "EditIssueCommentOption" })

/** `labels` is checked by hand: all ids or all names (Forgejo's 400s). */
export const IssueLabelsOption = Schema.Struct({
  labels: optNull(Schema.Array(Schema.Unknown)),
  updated_at: UpdatedAt
}).annotate({ identifier: "IssueLabelsOption" })

export const DeleteLabelsOption = Schema.Struct({ updated_at: UpdatedAt }).annotate({
  identifier: "DeleteLabelsOption"
})

export const CreateLabelOption = Schema.Struct({
  name: optNull(Schema.String),
  color: optNull(Schema.String),
  description: opt(Schema.String),
  exclusive: opt(Schema.Boolean),
  is_archived: opt(Schema.Boolean)
}).annotate({ identifier: "CreateLabelOption" })
export type CreateLabelOption = typeof CreateLabelOption.Type

export const EditLabelOption = Schema.Struct({
  name: optNull(Schema.String),
  color: optNull(Schema.String),
  description: optNull(Schema.String),
  exclusive: optNull(Schema.Boolean),
  is_archived: optNull(Schema.Boolean)
}).annotate({ identifier: "EditLabelOption" })
export type EditLabelOption = typeof EditLabelOption.Type

export const CreateMilestoneOption = Schema.Struct({
  title: optNull(Schema.String),
  description: optNull(Schema.String),
  due_on: optNull(Schema.String),
  state: optNull(Schema.String)
}).annotate({ identifier: "CreateMilestoneOption" })
export type CreateMilestoneOption = typeof CreateMilestoneOption.Type

export const EditMilestoneOption = Schema.Struct({
  title: optNull(Schema.String),
  description: optNull(Schema.String),
  due_on: optNull(Schema.String),
  state: optNull(Schema.String)
}).annotate({ identifier: "EditMilestoneOption" })
export type EditMilestoneOption = typeof EditMilestoneOption.Type

export const EditDeadlineOption = Schema.Struct({ due_date: Schema.NullOr(Schema.String) }).annotate({
  identifier: "EditDeadlineOption"
})
export const IssueDeadline = Schema.Struct({ due_date: Schema.String }).annotate({ identifier: "IssueDeadline" })

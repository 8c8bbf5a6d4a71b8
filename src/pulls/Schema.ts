// Pull request API objects (Forgejo's modules/structs/pull.go: PullRequest, PRBranchInfo,
// ChangedFile) and option bodies (CreatePullRequestOption, EditPullRequestOption,
// MergePullRequestOption); CONTRACT-PULLS §3, §4, §6, §8.1.
import { Schema } from "effect"
import { Id, Timestamp } from "../http/Json.ts"
import { Label, Milestone } from "../issues/Schema.ts"
import { Team } from "../orgs/Schema.ts"
import { Repository } from "../repos/Schema.ts"
import { User } from "../users/Schema.ts"

const NullTime = Schema.NullOr(Timestamp)

export const PRBranchInfo = Schema.Struct({
  label: Schema.String,
  ref: Schema.String,
  sha: Schema.String,
  repo_id: Id,
  repo: Schema.NullOr(Repository)
}).annotate({ identifier: "PRBranchInfo" })
export type PRBranchInfo = typeof PRBranchInfo.Type

export const PullRequest = Schema.Struct({
  id: Id,
  url: Schema.String,
  number: Schema.Int,
  user: User,
  title: Schema.String,
  body: Schema.String,
  labels: Schema.Array(Label),
  milestone: Schema.NullOr(Milestone),
  assignee: Schema.NullOr(User),
  assignees: Schema.NullOr(Schema.Array(User)),
  requested_reviewers: Schema.Array(User),
  requested_reviewers_teams: Schema.Array(Team),
  state: Schema.Literals(["open", "closed"]),
  draft: Schema.Boolean,
  is_locked: Schema.Boolean,
  comments: Schema.Int,
  review_comments: Schema.Int,
  additions: Schema.Int,
  deletions: Schema.Int,
  changed_files: Schema.Int,
  html_url: Schema.String,
  diff_url: Schema.String,
  patch_url: Schema.String,
  mergeable: Schema.Boolean,
  merged: Schema.Boolean,
  merged_at: NullTime,
  merge_commit_sha: Schema.NullOr(Schema.String),
  merged_by: Schema.NullOr(User),
  allow_maintainer_edit: Schema.Boolean,
  base: PRBranchInfo,
  head: PRBranchInfo,
  merge_base: Schema.String,
  due_date: NullTime,
  created_at: Timestamp,
  updated_at: Timestamp,
  closed_at: NullTime,
  pin_order: Schema.Int,
  flow: Schema.Int
}).annotate({ identifier: "PullRequest" })
export type PullRequest = typeof PullRequest.Type

export const ChangedFile = Schema.Struct({
  filename: Schema.String,
  previous_filename: Schema.optionalKey(Schema.String),
  status: Schema.String,
  additions: Schema.Int,
  deletions: Schema.Int,
  changes: Schema.Int,
  html_url: Schema.String,
  contents_url: Schema.String,
  raw_url: Schema.String
}).annotate({ identifier: "ChangedFile" })
export type ChangedFile = typeof ChangedFile.Type

const optNull = <S extends Schema.Top>(schema: S) => Schema.optionalKey(Schema.NullOr(schema))

// Required members are optional here and checked by the service, for Forgejo's `[Head]: Required`.
export const CreatePullRequestOption = Schema.Struct({
  head: optNull(Schema.String),
  base: optNull(Schema.String),
  title: optNull(Schema.String),
  body: optNull(Schema.String),
  assignee: optNull(Schema.String),
  assignees: optNull(Schema.Array(Schema.String)),
  milestone: optNull(Schema.Number),
  labels: optNull(Schema.Array(Schema.Number)),
  due_date: optNull(Schema.String)
}).annotate({ identifier: "CreatePullRequestOption" })
export type CreatePullRequestOption = typeof CreatePullRequestOption.Type

export const EditPullRequestOption = Schema.Struct({
  title: optNull(Schema.String),
  body: optNull(Schema.String),
  base: optNull(Schema.String),
  assignee: optNull(Schema.String),
  assignees: optNull(Schema.Array(Schema.String)),
  milestone: optNull(Schema.Number),
  labels: optNull(Schema.Array(Schema.Number)),
  state: optNull(Schema.String),
  due_date: optNull(Schema.String),
  unset_due_date: optNull(Schema.Boolean),
  allow_maintainer_edit: optNull(Schema.Boolean)
}).annotate({ identifier: "EditPullRequestOption" })
export type EditPullRequestOption = typeof EditPullRequestOption.Type

/**
 * MergePullRequestOption. The first four keys have no JSON tag in Forgejo, and Go's decoder matches
 * keys without regard to case (`do` works): the handler reads the body itself (`mergeOptionOf`).
 */
export const MergePullRequestOption = Schema.Struct({
  Do: Schema.optionalKey(Schema.String),
  MergeTitleField: Schema.optionalKey(Schema.String),
  MergeMessageField: Schema.optionalKey(Schema.String),
  MergeCommitID: Schema.optionalKey(Schema.String),
  head_commit_id: Schema.optionalKey(Schema.String),
  force_merge: Schema.optionalKey(Schema.Boolean),
  merge_when_checks_succeed: Schema.optionalKey(Schema.Boolean),
  delete_branch_after_merge: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "MergePullRequestOption" })
export type MergePullRequestOption = typeof MergePullRequestOption.Type

export const MERGE_DO = ["merge", "rebase", "rebase-merge", "squash", "fast-forward-only", "manually-merged"] as const
export type MergeDo = (typeof MERGE_DO)[number]

/** The body of POST /pulls/{index}/merge, its keys matched as Go matches them (case-insensitively). */
export const mergeOptionOf = (body: unknown): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (typeof body !== "object" || body === null || Array.isArray(body)) return out
  const known = [
    "Do",
    "MergeTitleField",
    "MergeMessageField",
    "MergeCommitID",
    "head_commit_id",
    "force_merge",
    "merge_when_checks_succeed",
    "delete_branch_after_merge"
  ]
  for (const [key, value] of Object.entries(body)) {
    const name = known.find((k) => k.toLowerCase() === key.toLowerCase())
    if (name !== undefined && !(name in out)) out[name] = value
  }
  return out
}

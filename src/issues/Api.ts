// The tracker's routes (Forgejo's routers/api/v1/repo/issue.go, issue_comment.go, issue_label.go,
// label.go, milestone.go, org/label.go; CONTRACT-ISSUES §3, §5–§9), with Forgejo's operationIds.
// Issue routes need the issues unit (404 when it is off); label and milestone reads only the
// repository. The finer rules (poster or writer, admins for `updated_at`) are the service's.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import {
  Comment,
  CreateIssueCommentOption,
  CreateIssueOption,
  CreateLabelOption,
  CreateMilestoneOption,
  EditDeadlineOption,
  EditIssueCommentOption,
  EditIssueOption,
  EditLabelOption,
  EditMilestoneOption,
  Issue,
  IssueDeadline,
  IssueLabelsOption,
  Label,
  Milestone,
  TimelineComment
} from "./Schema.ts"

const read = { signedIn: false, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const write = { signedIn: true, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
/** Forgejo's `mustNotBeArchived` (423) on issue and comment creation and comment edits. */
const writeUnarchived = {
  signedIn: true,
  scopes: ["issue"],
  repo: { role: "read", unit: "issues", changes: "mirrors" }
} as const
const admin = { signedIn: true, scopes: ["issue"], repo: { role: "admin", unit: "issues" } } as const
/** Labels and milestones: no unit check on reads (Forgejo). */
const repoRead = { signedIn: false, scopes: ["issue"], repo: { role: "read" } } as const
const repoWrite = { signedIn: true, scopes: ["issue"], repo: { role: "write" } } as const

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withIndex = { ...ownerRepo, index: Schema.String }
const withId = { ...ownerRepo, id: Schema.String }
const sinceBefore = { since: Schema.optional(Schema.String), before: Schema.optional(Schema.String) }

const listQuery = {
  state: Schema.optional(Schema.String),
  labels: Schema.optional(Schema.String),
  q: Schema.optional(Schema.String),
  type: Schema.optional(Schema.String),
  milestones: Schema.optional(Schema.String),
  ...sinceBefore,
  created_by: Schema.optional(Schema.String),
  assigned_by: Schema.optional(Schema.String),
  mentioned_by: Schema.optional(Schema.String),
  sort: Schema.optional(Schema.String),
  ...PageQuery
}

const Issues = Schema.Array(Issue)
const Labels = Schema.Array(Label)
const created = <S extends Schema.Top>(schema: S) => schema.pipe(HttpApiSchema.status(201))

export class IssuesApi extends HttpApiGroup.make("issues").add(
  HttpApiEndpoint.get("searchIssues", "/repos/issues/search", {
    query: {
      ...listQuery,
      owner: Schema.optional(Schema.String),
      team: Schema.optional(Schema.String),
      priority_repo_id: Schema.optional(Schema.String),
      assigned: Schema.optional(Schema.String),
      created: Schema.optional(Schema.String),
      mentioned: Schema.optional(Schema.String),
      review_requested: Schema.optional(Schema.String),
      reviewed: Schema.optional(Schema.String)
    },
    success: Issues
  })
    .annotate(OpenApi.Identifier, "issueSearchIssues")
    .annotate(Access, { signedIn: false, scopes: ["issue"] }),
  HttpApiEndpoint.get("listIssues", "/repos/:owner/:repo/issues", {
    params: ownerRepo,
    query: listQuery,
    success: Issues
  })
    .annotate(OpenApi.Identifier, "issueListIssues")
    .annotate(Access, read),
  HttpApiEndpoint.post("createIssue", "/repos/:owner/:repo/issues", {
    params: ownerRepo,
    payload: CreateIssueOption,
    success: created(Issue)
  })
    .annotate(OpenApi.Identifier, "issueCreateIssue")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.get("listRepoComments", "/repos/:owner/:repo/issues/comments", {
    params: ownerRepo,
    query: { ...sinceBefore, ...PageQuery },
    success: Schema.Array(Comment)
  })
    .annotate(OpenApi.Identifier, "issueGetRepoComments")
    .annotate(Access, read),
  HttpApiEndpoint.get("getComment", "/repos/:owner/:repo/issues/comments/:id", {
    params: withId,
    // 204 for a comment of a generated type (Forgejo).
    success: Comment
  })
    .annotate(OpenApi.Identifier, "issueGetComment")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editComment", "/repos/:owner/:repo/issues/comments/:id", {
    params: withId,
    payload: EditIssueCommentOption,
    // 204 for a comment of a generated type (Forgejo).
    success: Comment
  })
    .annotate(OpenApi.Identifier, "issueEditComment")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.delete("deleteComment", "/repos/:owner/:repo/issues/comments/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteComment")
    .annotate(Access, write),
  HttpApiEndpoint.get("getIssue", "/repos/:owner/:repo/issues/:index", { params: withIndex, success: Issue })
    .annotate(OpenApi.Identifier, "issueGetIssue")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editIssue", "/repos/:owner/:repo/issues/:index", {
    params: withIndex,
    payload: EditIssueOption,
    // Forgejo answers an edit with 201.
    success: created(Issue)
  })
    .annotate(OpenApi.Identifier, "issueEditIssue")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteIssue", "/repos/:owner/:repo/issues/:index", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDelete")
    .annotate(Access, admin),
  HttpApiEndpoint.post("editDeadline", "/repos/:owner/:repo/issues/:index/deadline", {
    params: withIndex,
    payload: EditDeadlineOption,
    success: created(IssueDeadline)
  })
    .annotate(OpenApi.Identifier, "issueEditIssueDeadline")
    .annotate(Access, write),
  HttpApiEndpoint.get("listComments", "/repos/:owner/:repo/issues/:index/comments", {
    params: withIndex,
    query: sinceBefore,
    success: Schema.Array(Comment)
  })
    .annotate(OpenApi.Identifier, "issueGetComments")
    .annotate(Access, read),
  HttpApiEndpoint.post("createComment", "/repos/:owner/:repo/issues/:index/comments", {
    params: withIndex,
    payload: CreateIssueCommentOption,
    success: created(Comment)
  })
    .annotate(OpenApi.Identifier, "issueCreateComment")
    .annotate(Access, writeUnarchived),
  HttpApiEndpoint.patch("editCommentDeprecated", "/repos/:owner/:repo/issues/:index/comments/:id", {
    params: { ...withIndex, id: Schema.String },
    payload: EditIssueCommentOption,
    // 204 for a comment of a generated type (Forgejo).
    success: Comment
  })
    .annotate(OpenApi.Identifier, "issueEditCommentDeprecated")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteCommentDeprecated", "/repos/:owner/:repo/issues/:index/comments/:id", {
    params: { ...withIndex, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteCommentDeprecated")
    .annotate(Access, write),
  HttpApiEndpoint.get("timeline", "/repos/:owner/:repo/issues/:index/timeline", {
    params: withIndex,
    query: { ...sinceBefore, ...PageQuery },
    success: Schema.Array(TimelineComment)
  })
    .annotate(OpenApi.Identifier, "issueGetCommentsAndTimeline")
    .annotate(Access, read),
  HttpApiEndpoint.get("issueLabels", "/repos/:owner/:repo/issues/:index/labels", { params: withIndex, success: Labels })
    .annotate(OpenApi.Identifier, "issueGetLabels")
    .annotate(Access, read),
  HttpApiEndpoint.post("addIssueLabels", "/repos/:owner/:repo/issues/:index/labels", {
    params: withIndex,
    payload: IssueLabelsOption,
    success: Labels
  })
    .annotate(OpenApi.Identifier, "issueAddLabel")
    .annotate(Access, write),
  HttpApiEndpoint.put("replaceIssueLabels", "/repos/:owner/:repo/issues/:index/labels", {
    params: withIndex,
    payload: IssueLabelsOption,
    success: Labels
  })
    .annotate(OpenApi.Identifier, "issueReplaceLabels")
    .annotate(Access, write),
  // DeleteLabelsOption is an optional JSON body on DELETE: the handler reads it.
  HttpApiEndpoint.delete("clearIssueLabels", "/repos/:owner/:repo/issues/:index/labels", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueClearLabels")
    .annotate(Access, write),
  HttpApiEndpoint.delete("removeIssueLabel", "/repos/:owner/:repo/issues/:index/labels/:identifier", {
    params: { ...withIndex, identifier: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueRemoveLabel")
    .annotate(Access, write)
) {}

const labelSort = { sort: Schema.optional(Schema.String), ...PageQuery }

export class LabelsApi extends HttpApiGroup.make("labels").add(
  HttpApiEndpoint.get("listLabels", "/repos/:owner/:repo/labels", {
    params: ownerRepo,
    query: labelSort,
    success: Labels
  })
    .annotate(OpenApi.Identifier, "issueListLabels")
    .annotate(Access, repoRead),
  HttpApiEndpoint.post("createLabel", "/repos/:owner/:repo/labels", {
    params: ownerRepo,
    payload: CreateLabelOption,
    success: created(Label)
  })
    .annotate(OpenApi.Identifier, "issueCreateLabel")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getLabel", "/repos/:owner/:repo/labels/:id", { params: withId, success: Label })
    .annotate(OpenApi.Identifier, "issueGetLabel")
    .annotate(Access, repoRead),
  HttpApiEndpoint.patch("editLabel", "/repos/:owner/:repo/labels/:id", {
    params: withId,
    payload: EditLabelOption,
    success: Label
  })
    .annotate(OpenApi.Identifier, "issueEditLabel")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("deleteLabel", "/repos/:owner/:repo/labels/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteLabel")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("listOrgLabels", "/orgs/:org/labels", {
    params: { org: Schema.String },
    query: labelSort,
    success: Labels
  })
    .annotate(OpenApi.Identifier, "orgListLabels")
    .annotate(Access, { signedIn: false, scopes: ["organization"] }),
  HttpApiEndpoint.post("createOrgLabel", "/orgs/:org/labels", {
    params: { org: Schema.String },
    payload: CreateLabelOption,
    success: created(Label)
  })
    .annotate(OpenApi.Identifier, "orgCreateLabel")
    .annotate(Access, { signedIn: true, scopes: ["organization"] }),
  HttpApiEndpoint.get("getOrgLabel", "/orgs/:org/labels/:id", {
    params: { org: Schema.String, id: Schema.String },
    success: Label
  })
    .annotate(OpenApi.Identifier, "orgGetLabel")
    .annotate(Access, { signedIn: true, scopes: ["organization"] }),
  HttpApiEndpoint.patch("editOrgLabel", "/orgs/:org/labels/:id", {
    params: { org: Schema.String, id: Schema.String },
    payload: EditLabelOption,
    success: Label
  })
    .annotate(OpenApi.Identifier, "orgEditLabel")
    .annotate(Access, { signedIn: true, scopes: ["organization"] }),
  HttpApiEndpoint.delete("deleteOrgLabel", "/orgs/:org/labels/:id", {
    params: { org: Schema.String, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "orgDeleteLabel")
    .annotate(Access, { signedIn: true, scopes: ["organization"] })
) {}

export class MilestonesApi extends HttpApiGroup.make("milestones").add(
  HttpApiEndpoint.get("listMilestones", "/repos/:owner/:repo/milestones", {
    params: ownerRepo,
    query: { state: Schema.optional(Schema.String), name: Schema.optional(Schema.String), ...PageQuery },
    success: Schema.Array(Milestone)
  })
    .annotate(OpenApi.Identifier, "issueGetMilestonesList")
    .annotate(Access, repoRead),
  HttpApiEndpoint.post("createMilestone", "/repos/:owner/:repo/milestones", {
    params: ownerRepo,
    payload: CreateMilestoneOption,
    success: created(Milestone)
  })
    .annotate(OpenApi.Identifier, "issueCreateMilestone")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getMilestone", "/repos/:owner/:repo/milestones/:id", { params: withId, success: Milestone })
    .annotate(OpenApi.Identifier, "issueGetMilestone")
    .annotate(Access, repoRead),
  HttpApiEndpoint.patch("editMilestone", "/repos/:owner/:repo/milestones/:id", {
    params: withId,
    payload: EditMilestoneOption,
    success: Milestone
  })
    .annotate(OpenApi.Identifier, "issueEditMilestone")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("deleteMilestone", "/repos/:owner/:repo/milestones/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteMilestone")
    .annotate(Access, repoWrite)
) {}

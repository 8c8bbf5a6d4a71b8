// Routes of reactions, issue subscriptions and pins (Forgejo's routers/api/v1/repo/issue_reaction.go,
// issue_subscription.go, issue_pin.go; CONTRACT-ISSUES §11, §12, §14), with Forgejo's operationIds.
// Status codes that depend on the outcome (201/200) are set by the handlers.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import { User } from "../users/Schema.ts"
import { Issue } from "./Schema.ts"

const read = { signedIn: false, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const write = { signedIn: true, scopes: ["issue"], repo: { role: "read", unit: "issues" } } as const
const admin = { signedIn: true, scopes: ["issue"], repo: { role: "admin", unit: "issues" } } as const

const withIndex = { owner: Schema.String, repo: Schema.String, index: Schema.String }
const withId = { owner: Schema.String, repo: Schema.String, id: Schema.String }

export const Reaction = Schema.Struct({ user: User, content: Schema.String, created_at: Schema.String })
export const EditReactionOption = Schema.Struct({ content: Schema.optional(Schema.String) })
export const WatchInfo = Schema.Struct({
  subscribed: Schema.Boolean,
  ignored: Schema.Boolean,
  reason: Schema.Null,
  created_at: Schema.String,
  url: Schema.String,
  repository_url: Schema.String
})
export const NewIssuePinsAllowed = Schema.Struct({ issues: Schema.Boolean, pull_requests: Schema.Boolean })

const Reactions = Schema.Array(Reaction)

export class IssueExtrasApi extends HttpApiGroup.make("issueExtras").add(
  HttpApiEndpoint.get("issueReactions", "/repos/:owner/:repo/issues/:index/reactions", {
    params: withIndex,
    query: PageQuery,
    success: Reactions
  })
    .annotate(OpenApi.Identifier, "issueGetIssueReactions")
    .annotate(Access, read),
  // EditReactionOption is read by the handlers (also a JSON body on DELETE).
  HttpApiEndpoint.post("postIssueReaction", "/repos/:owner/:repo/issues/:index/reactions", {
    params: withIndex,
    success: Reaction.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issuePostIssueReaction")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteIssueReaction", "/repos/:owner/:repo/issues/:index/reactions", {
    params: withIndex,
    success: HttpApiSchema.Empty(200)
  })
    .annotate(OpenApi.Identifier, "issueDeleteIssueReaction")
    .annotate(Access, write),
  HttpApiEndpoint.get("commentReactions", "/repos/:owner/:repo/issues/comments/:id/reactions", {
    params: withId,
    success: Reactions
  })
    .annotate(OpenApi.Identifier, "issueGetCommentReactions")
    .annotate(Access, read),
  HttpApiEndpoint.post("postCommentReaction", "/repos/:owner/:repo/issues/comments/:id/reactions", {
    params: withId,
    success: Reaction.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issuePostCommentReaction")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteCommentReaction", "/repos/:owner/:repo/issues/comments/:id/reactions", {
    params: withId,
    success: HttpApiSchema.Empty(200)
  })
    .annotate(OpenApi.Identifier, "issueDeleteCommentReaction")
    .annotate(Access, write),

  HttpApiEndpoint.get("subscriptions", "/repos/:owner/:repo/issues/:index/subscriptions", {
    params: withIndex,
    query: PageQuery,
    success: Schema.Array(User)
  })
    .annotate(OpenApi.Identifier, "issueSubscriptions")
    .annotate(Access, read),
  HttpApiEndpoint.get("checkSubscription", "/repos/:owner/:repo/issues/:index/subscriptions/check", {
    params: withIndex,
    success: WatchInfo
  })
    .annotate(OpenApi.Identifier, "issueCheckSubscription")
    .annotate(Access, write),
  HttpApiEndpoint.put("addSubscription", "/repos/:owner/:repo/issues/:index/subscriptions/:user", {
    params: { ...withIndex, user: Schema.String },
    success: HttpApiSchema.Empty(201)
  })
    .annotate(OpenApi.Identifier, "issueAddSubscription")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteSubscription", "/repos/:owner/:repo/issues/:index/subscriptions/:user", {
    params: { ...withIndex, user: Schema.String },
    success: HttpApiSchema.Empty(201)
  })
    .annotate(OpenApi.Identifier, "issueDeleteSubscription")
    .annotate(Access, write),

  HttpApiEndpoint.post("pinIssue", "/repos/:owner/:repo/issues/:index/pin", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "pinIssue")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("unpinIssue", "/repos/:owner/:repo/issues/:index/pin", {
    params: withIndex,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "unpinIssue")
    .annotate(Access, admin),
  HttpApiEndpoint.patch("moveIssuePin", "/repos/:owner/:repo/issues/:index/pin/:position", {
    params: { ...withIndex, position: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "moveIssuePin")
    .annotate(Access, admin),
  HttpApiEndpoint.get("pinnedIssues", "/repos/:owner/:repo/issues/pinned", {
    params: { owner: Schema.String, repo: Schema.String },
    success: Schema.Array(Issue)
  })
    .annotate(OpenApi.Identifier, "repoListPinnedIssues")
    .annotate(Access, read),
  HttpApiEndpoint.get("newPinAllowed", "/repos/:owner/:repo/new_pin_allowed", {
    params: { owner: Schema.String, repo: Schema.String },
    success: NewIssuePinsAllowed
  })
    .annotate(OpenApi.Identifier, "repoNewPinAllowed")
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read" } })
) {}

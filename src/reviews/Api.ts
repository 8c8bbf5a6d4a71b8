// Review routes (Forgejo's routers/api/v1/repo/pull_review.go; CONTRACT-PULLS §1 route table, §12)
// with Forgejo's operationIds. Like every pull request route they need the pulls unit (404 when
// it is off or unreadable); reads are open to anonymous callers of public repositories, changes
// need a signed-in caller. No archive check (Forgejo has none on reviews); the finer rules
// (own pull request, repository admin, pending reviews of others) are the service's.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { PageQuery } from "../http/Pagination.ts"
import {
  CreatePullReviewComment,
  CreatePullReviewOptions,
  DismissPullReviewOptions,
  PullReview,
  PullReviewComment,
  PullReviewRequestOptions,
  SubmitPullReviewOptions
} from "./Schema.ts"

const read = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "pulls" } } as const
const write = { signedIn: true, scopes: ["repository"], repo: { role: "read", unit: "pulls" } } as const

const withIndex = { owner: Schema.String, repo: Schema.String, index: Schema.String }
const withId = { ...withIndex, id: Schema.String }
const withComment = { ...withId, comment: Schema.String }
const Reviews = Schema.Array(PullReview)

export class ReviewsApi extends HttpApiGroup.make("reviews").add(
  HttpApiEndpoint.get("listReviews", "/repos/:owner/:repo/pulls/:index/reviews", {
    params: withIndex,
    query: PageQuery,
    success: Reviews
  })
    .annotate(OpenApi.Identifier, "repoListPullReviews")
    .annotate(Access, read),
  HttpApiEndpoint.post("createReview", "/repos/:owner/:repo/pulls/:index/reviews", {
    params: withIndex,
    payload: CreatePullReviewOptions,
    success: PullReview
  })
    .annotate(OpenApi.Identifier, "repoCreatePullReview")
    .annotate(Access, write),
  HttpApiEndpoint.get("getReview", "/repos/:owner/:repo/pulls/:index/reviews/:id", {
    params: withId,
    success: PullReview
  })
    .annotate(OpenApi.Identifier, "repoGetPullReview")
    .annotate(Access, read),
  HttpApiEndpoint.post("submitReview", "/repos/:owner/:repo/pulls/:index/reviews/:id", {
    params: withId,
    payload: SubmitPullReviewOptions,
    success: PullReview
  })
    .annotate(OpenApi.Identifier, "repoSubmitPullReview")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteReview", "/repos/:owner/:repo/pulls/:index/reviews/:id", {
    params: withId,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeletePullReview")
    .annotate(Access, write),
  HttpApiEndpoint.get("listReviewComments", "/repos/:owner/:repo/pulls/:index/reviews/:id/comments", {
    params: withId,
    success: Schema.Array(PullReviewComment)
  })
    .annotate(OpenApi.Identifier, "repoGetPullReviewComments")
    .annotate(Access, read),
  // Forgejo answers 200, not 201.
  HttpApiEndpoint.post("createReviewComment", "/repos/:owner/:repo/pulls/:index/reviews/:id/comments", {
    params: withId,
    payload: CreatePullReviewComment.annotate({ identifier: "CreatePullReviewCommentOptions" }),
    success: PullReviewComment
  })
    .annotate(OpenApi.Identifier, "repoCreatePullReviewComment")
    .annotate(Access, write),
  HttpApiEndpoint.get("getReviewComment", "/repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment", {
    params: withComment,
    success: PullReviewComment
  })
    .annotate(OpenApi.Identifier, "repoGetPullReviewComment")
    .annotate(Access, read),
  HttpApiEndpoint.delete("deleteReviewComment", "/repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment", {
    params: withComment,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeletePullReviewComment")
    .annotate(Access, write),
  HttpApiEndpoint.post("dismissReview", "/repos/:owner/:repo/pulls/:index/reviews/:id/dismissals", {
    params: withId,
    payload: DismissPullReviewOptions,
    success: PullReview
  })
    .annotate(OpenApi.Identifier, "repoDismissPullReview")
    .annotate(Access, write),
  HttpApiEndpoint.post("undismissReview", "/repos/:owner/:repo/pulls/:index/reviews/:id/undismissals", {
    params: withId,
    success: PullReview
  })
    .annotate(OpenApi.Identifier, "repoUnDismissPullReview")
    .annotate(Access, write),
  HttpApiEndpoint.post("requestReviews", "/repos/:owner/:repo/pulls/:index/requested_reviewers", {
    params: withIndex,
    payload: PullReviewRequestOptions,
    success: Reviews.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreatePullReviewRequests")
    .annotate(Access, write),
  HttpApiEndpoint.delete("cancelReviewRequests", "/repos/:owner/:repo/pulls/:index/requested_reviewers", {
    params: withIndex,
    payload: PullReviewRequestOptions,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeletePullReviewRequests")
    .annotate(Access, write)
) {}

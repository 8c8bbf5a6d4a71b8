import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { PullReview, PullReviewComment } from "./Schema.ts"
import { ReviewsService } from "./Service.ts"

const Reviews = Schema.Array(PullReview)
const noContent = HttpServerResponse.empty({ status: 204 })

export const ReviewsHttp = apiGroup(HearthApi, "reviews", (handlers) =>
  Effect.gen(function* () {
    const reviews = yield* ReviewsService
    return handlers
      .handle("listReviews", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          // Forgejo lists every review without `page`, a page of `limit` with it.
          const { page, window } = yield* resolveWindow(query)
          const found = yield* reviews.list(opened, params.index, window)
          yield* setListHeaders(page, found.total)
          return respond(Reviews, found.rows)
        })
      )
      .handle("createReview", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReview, yield* reviews.create(opened, params.index, payload))
        })
      )
      .handle("getReview", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReview, yield* reviews.get(opened, params.index, params.id))
        })
      )
      .handle("submitReview", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReview, yield* reviews.submit(opened, params.index, params.id, payload))
        })
      )
      .handle("deleteReview", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* reviews.remove(opened, params.index, params.id)
          return noContent
        })
      )
      .handle("listReviewComments", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Schema.Array(PullReviewComment), yield* reviews.comments(opened, params.index, params.id))
        })
      )
      .handle("createReviewComment", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReviewComment, yield* reviews.addComment(opened, params.index, params.id, payload))
        })
      )
      .handle("getReviewComment", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReviewComment, yield* reviews.getComment(opened, params.index, params.id, params.comment))
        })
      )
      .handle("deleteReviewComment", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* reviews.deleteComment(opened, params.index, params.id, params.comment)
          return noContent
        })
      )
      .handle("dismissReview", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReview, yield* reviews.dismiss(opened, params.index, params.id, payload, true))
        })
      )
      .handle("undismissReview", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(PullReview, yield* reviews.dismiss(opened, params.index, params.id, {}, false))
        })
      )
      .handle("requestReviews", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Reviews, yield* reviews.request(opened, params.index, payload, true), 201)
        })
      )
      .handle("cancelReviewRequests", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* reviews.request(opened, params.index, payload, false)
          return noContent
        })
      )
  })
)

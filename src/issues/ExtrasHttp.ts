import { Effect, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { User } from "../users/Schema.ts"
import { IssueExtras } from "./Extras.ts"
import { NewIssuePinsAllowed, Reaction, WatchInfo } from "./ExtrasApi.ts"
import { Issue } from "./Schema.ts"

const status = (code: number) => HttpServerResponse.empty({ status: code })

/** EditReactionOption `{content}`, read by hand: DELETE carries it as a JSON body too. */
const reactionContent = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  if (text.trim() === "") return ""
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return yield* Errors.validationFailed("the body is not valid JSON")
  }
  const value = typeof body === "object" && body !== null ? (body as { content?: unknown }).content : undefined
  if (value === undefined || value === null) return ""
  if (typeof value !== "string") return yield* Errors.validationFailed("content: Expected a string")
  return value
})

export const IssueExtrasHttp = apiGroup(HearthApi, "issueExtras", (handlers) =>
  Effect.gen(function* () {
    const extras = yield* IssueExtras
    const react = (on: { readonly index: string } | { readonly commentId: string }, add: boolean) =>
      Effect.gen(function* () {
        const opened = yield* CurrentRepo
        const outcome = yield* extras.react(opened, on, yield* reactionContent, add)
        return outcome === undefined ? status(200) : respond(Reaction, outcome.reaction, outcome.created ? 201 : 200)
      })
    return handlers
      .handle("issueReactions", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* extras.issueReactions(opened, params.index, window)
          yield* setListHeaders(page, found.total)
          return respond(Schema.Array(Reaction), [...found.rows])
        })
      )
      .handle("postIssueReaction", ({ params }) => react({ index: params.index }, true))
      .handle("deleteIssueReaction", ({ params }) => react({ index: params.index }, false))
      .handle("commentReactions", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Schema.Array(Reaction), [...(yield* extras.commentReactions(opened, params.id))])
        })
      )
      .handle("postCommentReaction", ({ params }) => react({ commentId: params.id }, true))
      .handle("deleteCommentReaction", ({ params }) => react({ commentId: params.id }, false))
      .handle("subscriptions", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* extras.subscribers(opened, params.index, window)
          yield* setListHeaders(page, found.total)
          return respond(Schema.Array(User), [...found.rows])
        })
      )
      .handle("checkSubscription", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(WatchInfo, yield* extras.checkSubscription(opened, params.index))
        })
      )
      .handle("addSubscription", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const changed = yield* extras.setSubscription(opened, params.index, params.user, true)
          return status(changed ? 201 : 200)
        })
      )
      .handle("deleteSubscription", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          // Forgejo answers an unsubscription with 201 too.
          const changed = yield* extras.setSubscription(opened, params.index, params.user, false)
          return status(changed ? 201 : 200)
        })
      )
      .handle("pinIssue", ({ params }) => Effect.flatMap(CurrentRepo, (opened) => extras.pin(opened, params.index)))
      .handle("unpinIssue", ({ params }) => Effect.flatMap(CurrentRepo, (opened) => extras.unpin(opened, params.index)))
      .handle("moveIssuePin", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => extras.movePin(opened, params.index, params.position))
      )
      .handle("pinnedIssues", () =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Schema.Array(Issue), [...(yield* extras.pinned(opened))])
        })
      )
      .handle("newPinAllowed", () =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(NewIssuePinsAllowed, yield* extras.newPinAllowed(opened))
        })
      )
  })
)

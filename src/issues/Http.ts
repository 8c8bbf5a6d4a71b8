import { Effect, Option, Schema } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime, respond } from "../http/Json.ts"
import { resolvePage, resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { Comment, Issue, Label, Milestone, TimelineComment } from "./Schema.ts"
import { IssuesService } from "./Service.ts"

const noContent = HttpServerResponse.empty({ status: 204 })

/** DeleteLabelsOption: an optional JSON body on DELETE (`{"updated_at": …}`). */
const optionalUpdatedAt = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  if (text.trim() === "") return undefined
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    return yield* Errors.validationFailed("the body is not valid JSON")
  }
  const value = typeof body === "object" && body !== null ? (body as { updated_at?: unknown }).updated_at : undefined
  if (value === undefined || value === null) return undefined
  if (typeof value !== "string") return yield* Errors.validationFailed("updated_at: Expected a date-time string")
  return value
})

const Issues = Schema.Array(Issue)
const Comments = Schema.Array(Comment)
const Labels = Schema.Array(Label)

export const IssuesHttp = apiGroup(HearthApi, "issues", (handlers) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService
    return handlers
      .handle("searchIssues", ({ query }) =>
        Effect.gen(function* () {
          // Forgejo's search pages by [ui] ISSUE_PAGING_NUM (20) unless `limit` is given.
          const page = yield* resolvePage({ page: query.page, limit: query.limit ?? "20" }, 50)
          const viewer = Option.getOrUndefined(yield* Caller)
          const found = yield* issues.search(viewer, query, page)
          yield* setListHeaders(page, found.total, { withLink: true })
          return respond(Issues, [...found.rows])
        })
      )
      .handle("listIssues", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const page = yield* resolvePage(query, 50)
          const found = yield* issues.list(opened, query, page)
          yield* setListHeaders(page, found.total, { withLink: true })
          return respond(Issues, [...found.rows])
        })
      )
      .handle("createIssue", ({ payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Issue, yield* issues.create(opened, payload), 201)
        })
      )
      .handle("getIssue", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Issue, yield* issues.get(opened, params.index))
        })
      )
      .handle("editIssue", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Issue, yield* issues.edit(opened, params.index, payload), 201)
        })
      )
      .handle("deleteIssue", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => issues.remove(opened, params.index))
      )
      .handle("editDeadline", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const deadline = yield* issues.setDeadline(opened, params.index, payload.due_date)
          return respond(Schema.Struct({ due_date: Schema.String }), { due_date: formatTime(deadline) }, 201)
        })
      )
      .handle("listRepoComments", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* issues.listRepoComments(opened, query.since, query.before, window)
          yield* setListHeaders(page, found.total)
          return respond(Comments, [...found.rows])
        })
      )
      .handle("listComments", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const found = yield* issues.listComments(opened, params.index, query.since, query.before)
          yield* setListHeaders(yield* resolvePage({}), found.total)
          return respond(Comments, [...found.rows])
        })
      )
      .handle("createComment", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const comment = yield* issues.createComment(opened, params.index, payload.body, payload.updated_at)
          return respond(Comment, comment, 201)
        })
      )
      .handle("getComment", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const comment = yield* issues.getComment(opened, params.id)
          return comment === undefined ? noContent : respond(Comment, comment)
        })
      )
      .handle("editComment", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const comment = yield* issues.editComment(opened, params.id, payload.body, payload.updated_at)
          return comment === undefined ? noContent : respond(Comment, comment)
        })
      )
      .handle("editCommentDeprecated", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const comment = yield* issues.editComment(opened, params.id, payload.body, payload.updated_at)
          return comment === undefined ? noContent : respond(Comment, comment)
        })
      )
      .handle("deleteComment", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => issues.deleteComment(opened, params.id))
      )
      .handle("deleteCommentDeprecated", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => issues.deleteComment(opened, params.id))
      )
      .handle("timeline", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* issues.timeline(opened, params.index, query.since, query.before, window)
          yield* setListHeaders(page, found.total)
          return respond(Schema.Array(TimelineComment), [...found.rows])
        })
      )
      .handle("issueLabels", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Labels, yield* issues.issueLabels(opened, params.index))
        })
      )
      .handle("addIssueLabels", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const labels = yield* issues.changeIssueLabels(
            opened,
            params.index,
            "add",
            payload.labels,
            payload.updated_at
          )
          return respond(Labels, labels)
        })
      )
      .handle("replaceIssueLabels", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const labels = yield* issues.changeIssueLabels(
            opened,
            params.index,
            "replace",
            payload.labels,
            payload.updated_at
          )
          return respond(Labels, labels)
        })
      )
      .handle("clearIssueLabels", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* issues.clearIssueLabels(opened, params.index, yield* optionalUpdatedAt)
        })
      )
      .handle("removeIssueLabel", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* issues.removeIssueLabel(opened, params.index, params.identifier, yield* optionalUpdatedAt)
        })
      )
  })
)

export const LabelsHttp = apiGroup(HearthApi, "labels", (handlers) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService
    return handlers
      .handle("listLabels", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* issues.listRepoLabels(opened, query.sort, window)
          yield* setListHeaders(page, found.total)
          return respond(Labels, [...found.rows])
        })
      )
      .handle("createLabel", ({ payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Label, yield* issues.createRepoLabel(opened, payload), 201)
        })
      )
      .handle("getLabel", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Label, yield* issues.getRepoLabel(opened, params.id))
        })
      )
      .handle("editLabel", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Label, yield* issues.editRepoLabel(opened, params.id, payload))
        })
      )
      .handle("deleteLabel", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => issues.deleteRepoLabel(opened, params.id))
      )
      .handle("listOrgLabels", ({ params, query }) =>
        Effect.gen(function* () {
          const { page, window } = yield* resolveWindow(query)
          const found = yield* issues.listOrgLabels(
            Option.getOrUndefined(yield* Caller),
            params.org,
            query.sort,
            window
          )
          yield* setListHeaders(page, found.total)
          return respond(Labels, [...found.rows])
        })
      )
      .handle("createOrgLabel", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return respond(Label, yield* issues.createOrgLabel(caller, params.org, payload), 201)
        })
      )
      .handle("getOrgLabel", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return respond(Label, yield* issues.getOrgLabel(caller, params.org, params.id))
        })
      )
      .handle("editOrgLabel", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return respond(Label, yield* issues.editOrgLabel(caller, params.org, params.id, payload))
        })
      )
      .handle("deleteOrgLabel", ({ params }) =>
        Effect.flatMap(signedInCaller, (caller) => issues.deleteOrgLabel(caller, params.org, params.id))
      )
  })
)

export const MilestonesHttp = apiGroup(HearthApi, "milestones", (handlers) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService
    return handlers
      .handle("listMilestones", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { page, window } = yield* resolveWindow(query)
          const found = yield* issues.listMilestones(opened, query.state, query.name, window)
          yield* setListHeaders(page, found.total)
          return respond(Schema.Array(Milestone), [...found.rows])
        })
      )
      .handle("createMilestone", ({ payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Milestone, yield* issues.createMilestone(opened, payload), 201)
        })
      )
      .handle("getMilestone", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Milestone, yield* issues.getMilestone(opened, params.id))
        })
      )
      .handle("editMilestone", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Milestone, yield* issues.editMilestone(opened, params.id, payload))
        })
      )
      .handle("deleteMilestone", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => issues.deleteMilestone(opened, params.id))
      )
  })
)

import { Effect, Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { TrackedTime } from "./Schema.ts"
import { IssueTimes } from "./Times.ts"
import { StopWatch } from "./TimesApi.ts"

const TrackedTimes = Schema.Array(TrackedTime)

export const IssueTimesHttp = apiGroup(HearthApi, "issueTimes", (handlers) =>
  Effect.gen(function* () {
    const times = yield* IssueTimes
    // Forgejo pages these lists only when `page` is given; X-Total-Count is always the total.
    const listed = <Q extends { readonly page?: string | undefined; readonly limit?: string | undefined }>(
      query: Q,
      read: (window: Parameters<typeof times.repoTimes>[2]) => ReturnType<typeof times.repoTimes>
    ) =>
      Effect.gen(function* () {
        const { page, window } = yield* resolveWindow(query)
        const found = yield* read(window)
        yield* setListHeaders(page, found.total)
        return respond(TrackedTimes, [...found.rows])
      })
    const stopwatch = (index: string, action: "start" | "stop" | "delete") =>
      Effect.gen(function* () {
        yield* times.stopwatch(yield* CurrentRepo, index, action)
        return HttpServerResponse.empty({ status: action === "delete" ? 204 : 201 })
      })
    return handlers
      .handle("issueTimes", ({ params, query }) =>
        Effect.flatMap(CurrentRepo, (opened) =>
          listed(query, (window) => times.issueTimes(opened, params.index, query, window))
        )
      )
      .handle("addTime", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(TrackedTime, yield* times.addTime(opened, params.index, payload))
        })
      )
      .handle("resetTime", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => times.resetTime(opened, params.index))
      )
      .handle("deleteTime", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => times.deleteTime(opened, params.index, params.id))
      )
      .handle("startStopwatch", ({ params }) => stopwatch(params.index, "start"))
      .handle("stopStopwatch", ({ params }) => stopwatch(params.index, "stop"))
      .handle("deleteStopwatch", ({ params }) => stopwatch(params.index, "delete"))
      .handle("repoTimes", ({ query }) =>
        Effect.flatMap(CurrentRepo, (opened) => listed(query, (window) => times.repoTimes(opened, query, window)))
      )
      .handle("userRepoTimes", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(TrackedTimes, [...(yield* times.userRepoTimes(opened, params.user))])
        })
      )
      .handle("myTimes", ({ query }) =>
        Effect.flatMap(signedInCaller, (caller) => listed(query, (window) => times.myTimes(caller, query, window)))
      )
      .handle("myStopwatches", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { page, window } = yield* resolveWindow(query)
          const found = yield* times.myStopwatches(caller, window)
          yield* setListHeaders(page, found.total)
          return respond(Schema.Array(StopWatch), [...found.rows])
        })
      )
  })
)

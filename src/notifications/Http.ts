// Notification handlers: the caller, the repeatable query keys and the paging, then the service.
import { Effect, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { NotificationCount, NotificationThread } from "./Api.ts"
import { NotificationsService } from "./Service.ts"

/** Every value of a repeatable query key (Forgejo's `FormStrings`), from the request's own URL. */
const formStrings = (name: string) =>
  Effect.map(HttpServerRequest.HttpServerRequest, (request) =>
    new URL(request.url, "http://placeholder").searchParams.getAll(name).filter((v) => v !== "")
  )

const listQuery = (query: { all?: string | undefined; since?: string | undefined; before?: string | undefined }) =>
  Effect.gen(function* () {
    return {
      all: query.all,
      since: query.since,
      before: query.before,
      statusTypes: yield* formStrings("status-types"),
      subjectTypes: yield* formStrings("subject-type")
    }
  })

const readQuery = (query: {
  all?: string | undefined
  last_read_at?: string | undefined
  "to-status"?: string | undefined
}) =>
  Effect.gen(function* () {
    return {
      all: query.all,
      lastReadAt: query.last_read_at,
      toStatus: query["to-status"],
      statusTypes: yield* formStrings("status-types")
    }
  })

const Threads = Schema.Array(NotificationThread)

export const NotificationsHttp = apiGroup(HearthApi, "notifications", (handlers) =>
  Effect.gen(function* () {
    const notifications = yield* NotificationsService
    const list = (
      repoId: number | undefined,
      query: Parameters<typeof listQuery>[0] & { page?: string | undefined; limit?: string | undefined }
    ) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const page = yield* resolvePage(query)
        const found = yield* notifications.list(caller, repoId, yield* listQuery(query), page)
        yield* setListHeaders(page, found.total)
        return respond(Threads, found.rows as never)
      })
    const read = (repoId: number | undefined, query: Parameters<typeof readQuery>[0]) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const changed = yield* notifications.markRead(caller, repoId, yield* readQuery(query))
        return respond(Threads, changed as never, 205)
      })
    return handlers
      .handle("listNotifications", ({ query }) => list(undefined, query))
      .handle("readNotifications", ({ query }) => read(undefined, query))
      .handle("newNotifications", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return respond(NotificationCount, { new: yield* notifications.unreadCount(caller) })
        })
      )
      .handle("getThread", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return respond(NotificationThread, (yield* notifications.thread(caller, params.id)) as never)
        })
      )
      .handle("readThread", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const thread = yield* notifications.markThread(caller, params.id, query["to-status"])
          return respond(NotificationThread, thread as never, 205)
        })
      )
      .handle("listRepoNotifications", ({ query }) =>
        Effect.flatMap(CurrentRepo, (opened) => list(opened.repo.id, query))
      )
      .handle("readRepoNotifications", ({ query }) =>
        Effect.flatMap(CurrentRepo, (opened) => read(opened.repo.id, query))
      )
  })
)

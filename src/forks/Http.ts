// Handlers of the forks group.
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { ForksService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export const ForksHttp = HttpApiBuilder.group(HearthApi, "forks", (handlers) =>
  Effect.gen(function* () {
    const forks = yield* ForksService
    const presenter = yield* RepoPresenter
    return handlers
      .handle("listForks", ({ query }) =>
        Effect.gen(function* () {
          const source = yield* CurrentRepo
          const viewer = source.caller
          const { page, window } = yield* resolveWindow(query)
          const { items, total } = yield* forks.list(viewer, source, window)
          yield* setListHeaders(page, total)
          return yield* presenter.present(viewer, items)
        })
      )
      .handle("createFork", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const opened = yield* CurrentRepo
          const { repo, owner } = yield* forks.fork(caller, opened, payload)
          return yield* presenter.one(caller, { repo, owner, access: OWNER_ACCESS })
        })
      )
  })
)

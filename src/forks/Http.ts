// Handlers of the forks group.

import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { ForksService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export const ForksHttp = HttpApiBuilder.group(HearthApi, "forks", (handlers) =>
  Effect.gen(function* () {
    const forks = yield* ForksService
    const presenter = yield* RepoPresenter
    const events = yield* EventHub
    return handlers
      .handle("listForks", ({ params, query }) =>
        Effect.gen(function* () {
          const viewer = Option.getOrUndefined(yield* Caller)
          const { page, window } = yield* resolveWindow(query)
          const { items, total } = yield* forks.list(viewer, params.owner, params.repo, window)
          yield* setListHeaders(page, total)
          return yield* presenter.present(viewer, items)
        })
      )
      .handle("createFork", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { repo, owner } = yield* forks.fork(caller, params.owner, params.repo, payload)
          const source = { id: repo.forkId ?? 0, fullName: `${params.owner}/${params.repo}` }
          yield* events.publish({ _tag: "ForkRepository", ...subject(owner, repo, caller.user), source })
          return yield* presenter.one(caller, { repo, owner, access: OWNER_ACCESS })
        })
      )
  })
)

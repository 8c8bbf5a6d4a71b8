// Handlers of the forks group.
import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Federation } from "../../federation/Service.ts"
import { HearthApi } from "../Api.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { ForksService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export const ForksHttp = HttpApiBuilder.group(HearthApi, "forks", (handlers) =>
  Effect.gen(function* () {
    const forks = yield* ForksService
    const presenter = yield* RepoPresenter
    const federation = yield* Federation
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
          yield* federation.announce({
            kind: "forked",
            doer: caller.user,
            owner,
            repo,
            source: `${params.owner}/${params.repo}`
          })
          return yield* presenter.one(caller, { repo, owner, access: OWNER_ACCESS })
        })
      )
  })
)

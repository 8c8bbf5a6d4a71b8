// Handlers of the transfers group. The answer shows the repository as the caller now sees it.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { Repository } from "../repos/Schema.ts"
import { type Transferred, TransfersService } from "./Service.ts"

export const TransfersHttp = apiGroup(HearthApi, "transfers", (handlers) =>
  Effect.gen(function* () {
    const transfers = yield* TransfersService
    const presenter = yield* RepoPresenter
    const policy = yield* RepoPolicy

    const shown = (result: Effect.Effect<Transferred, any>) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const { repo, owner } = yield* result
        const access = yield* policy.access(caller, repo, owner)
        return yield* presenter.one(caller, { repo, owner, access })
      })

    return handlers
      .handle("transferRepo", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const result = yield* transfers.start(caller, yield* CurrentRepo, {
            new_owner: payload.new_owner,
            team_ids: payload.team_ids ?? undefined
          })
          const body = yield* shown(Effect.succeed(result))
          return result.done ? body : respond(Repository, body, 201)
        })
      )
      .handle("acceptTransfer", () =>
        Effect.gen(function* () {
          return yield* shown(transfers.accept(yield* signedInCaller, yield* CurrentRepo))
        })
      )
      .handle("rejectTransfer", () =>
        Effect.gen(function* () {
          return yield* shown(transfers.reject(yield* signedInCaller, yield* CurrentRepo))
        })
      )
  })
)

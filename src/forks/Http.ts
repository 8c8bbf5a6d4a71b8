// Handlers of the forks group.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPresenter } from "../repos/Present.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ForksService } from "./Service.ts"
import { ForkSync } from "./Sync.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export const ForksHttp = apiGroup(HearthApi, "forks", (handlers) =>
  Effect.gen(function* () {
    const forks = yield* ForksService
    const presenter = yield* RepoPresenter
    const sync = yield* ForkSync
    const info = (branch: (repo: RepoRow) => string) =>
      Effect.flatMap(CurrentRepo, (fork) => sync.info(fork.caller, fork, branch(fork.repo)))
    const syncBranch = (branch: (repo: RepoRow) => string) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const fork = yield* CurrentRepo
        yield* sync.sync(caller, fork, branch(fork.repo))
      })
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
      .handle("syncForkDefaultInfo", () => info((repo) => repo.defaultBranch))
      .handle("syncForkDefault", () => syncBranch((repo) => repo.defaultBranch))
      .handle("syncForkBranchInfo", ({ params }) => info(() => params.branch))
      .handle("syncForkBranch", ({ params }) => syncBranch(() => params.branch))
  })
)

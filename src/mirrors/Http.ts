// Handlers of the mirrors group.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { formatGoDuration } from "../lib/Duration.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPresenter } from "../repos/Present.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { PushMirror } from "./Api.ts"
import type { PushMirrorRow } from "./Repo.ts"
import { MirrorsService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

/** Forgejo's convert.ToPushMirror; the address never carries credentials. */
const toApiPushMirror = (repo: RepoRow, mirror: PushMirrorRow): PushMirror => ({
  repo_name: repo.name,
  remote_name: mirror.remoteName,
  remote_address: mirror.remoteAddress,
  created: formatTime(mirror.createdAt),
  last_update: formatTime(mirror.lastUpdate),
  last_error: mirror.lastError,
  interval: formatGoDuration(mirror.intervalSeconds),
  sync_on_commit: mirror.syncOnCommit,
  branch_filter: mirror.branchFilter,
  public_key: ""
})

export const MirrorsHttp = apiGroup(HearthApi, "mirrors", (handlers) =>
  Effect.gen(function* () {
    const mirrors = yield* MirrorsService
    const presenter = yield* RepoPresenter
    return handlers
      .handle("migrate", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { repo, owner } = yield* mirrors.migrate(caller, payload)
          return yield* presenter.one(caller, { repo, owner, access: OWNER_ACCESS })
        })
      )
      .handle("mirrorSync", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          yield* mirrors.syncPull(caller, yield* CurrentRepo)
        })
      )
      .handle("convert", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const opened = yield* CurrentRepo
          const repo = yield* mirrors.convert(opened)
          return yield* presenter.one(caller, { ...opened, repo })
        })
      )
      .handle("listPushMirrors", ({ query }) =>
        Effect.gen(function* () {
          const page = yield* resolvePage(query)
          const { repo, rows, total } = yield* mirrors.listPush(yield* CurrentRepo, page)
          yield* setListHeaders(page, total)
          return rows.map((row) => toApiPushMirror(repo, row))
        })
      )
      .handle("addPushMirror", ({ payload }) =>
        Effect.gen(function* () {
          const { repo, mirror } = yield* mirrors.addPush(yield* CurrentRepo, payload)
          return toApiPushMirror(repo, mirror)
        })
      )
      .handle("getPushMirror", ({ params }) =>
        Effect.gen(function* () {
          const { repo, mirror } = yield* mirrors.getPush(yield* CurrentRepo, params.name)
          return toApiPushMirror(repo, mirror)
        })
      )
      .handle("deletePushMirror", ({ params }) =>
        Effect.gen(function* () {
          yield* mirrors.deletePush(yield* CurrentRepo, params.name)
        })
      )
      .handle("syncPushMirrors", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          yield* mirrors.syncPush(caller, yield* CurrentRepo)
        })
      )
  })
)

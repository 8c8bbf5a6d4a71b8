// Handlers of the package management routes (Api.ts). Whose packages and with which access is
// decided once here (PackagePolicy.accessMode): an owner the caller may not see is a 404 (Forgejo:
// 403), as is a version that does not exist — looked up only once the owner is seen (Forgejo
// looks first, so that 403 and 404 told existence apart); changes need write on the packages (403).
import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { siteAdmin } from "../admin/Policy.ts"
import { Caller, type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { UsersRepo } from "../users/Repo.ts"
import { PackageCleanup, type RuleInput } from "./Cleanup.ts"
import { PackagePolicy } from "./Policy.ts"
import { toPackageFile } from "./Present.ts"
import type { CleanupRuleRow } from "./Repo.ts"
import { PackagesService } from "./Service.ts"

const NO_PERMISSION = "user should have specific permission or be a site admin"

export const PackagesHttp = apiGroup(HearthApi, "packages", (handlers) =>
  Effect.gen(function* () {
    const users = yield* UsersRepo
    const policy = yield* PackagePolicy
    const service = yield* PackagesService

    /** The owner of the path, for a caller who may `need` its packages. */
    const openOwner = (name: string, need: "read" | "write") =>
      Effect.gen(function* () {
        const caller = Option.getOrUndefined(yield* Caller)
        const found = yield* users.findByName(name)
        if (Option.isNone(found)) return yield* Errors.notFound()
        const owner = found.value
        const mode = yield* policy.accessMode(caller, owner)
        if (mode === "none") return yield* Errors.notFound()
        if (caller?.scopes?.publicOnly === true && owner.visibility === "private")
          return yield* Errors.forbidden("token scope is limited to public packages")
        if (!atLeast(mode, need)) return yield* Errors.forbidden(NO_PERMISSION)
        return { owner, caller }
      })

    const openVersion = (
      params: { readonly owner: string; readonly type: string; readonly name: string; readonly version: string },
      need: "read" | "write"
    ) =>
      Effect.gen(function* () {
        const opened = yield* openOwner(params.owner, need)
        const row = yield* service.version(opened.owner, params.type, params.name, params.version)
        return { ...opened, row }
      })

    return handlers
      .handle("listPackages", ({ params, query }) =>
        Effect.gen(function* () {
          const { owner, caller } = yield* openOwner(params.owner, "read")
          const page = yield* resolvePage(query)
          const listed = yield* service.list(caller, owner, { type: query.type, q: query.q }, page)
          yield* setListHeaders(page, listed.total, { withLink: true })
          return listed.items
        })
      )
      .handle("getPackage", ({ params }) =>
        Effect.gen(function* () {
          const { owner, caller, row } = yield* openVersion(params, "read")
          return yield* service.present(caller, owner, row)
        })
      )
      .handle("deletePackage", ({ params }) =>
        Effect.gen(function* () {
          const caller: Principal = yield* signedInCaller
          const { owner, row } = yield* openVersion(params, "write")
          yield* service.removeVersion(caller, owner, row)
        })
      )
      .handle("listPackageFiles", ({ params }) =>
        Effect.gen(function* () {
          const { row } = yield* openVersion(params, "read")
          return (yield* service.files(row)).map(toPackageFile)
        })
      )
      .handle("linkPackage", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner } = yield* openOwner(params.owner, "write")
          yield* service.link(caller, owner, params.type, params.name, params.repo_name)
        })
      )
      .handle("unlinkPackage", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner } = yield* openOwner(params.owner, "write")
          yield* service.unlink(caller, owner, params.type, params.name)
        })
      )
  })
)

/** A rule as the admin routes show it (the owner by name). */
const toApiRule = (rule: CleanupRuleRow, ownerName: string) => ({
  id: rule.id,
  owner: ownerName,
  type: rule.type,
  enabled: rule.enabled,
  keep_count: rule.keepCount,
  keep_pattern: rule.keepPattern,
  remove_days: rule.removeDays,
  remove_pattern: rule.removePattern,
  match_full_name: rule.matchFullName
})

const ruleInput = (payload: {
  readonly enabled?: boolean
  readonly keep_count?: number
  readonly keep_pattern?: string
  readonly remove_days?: number
  readonly remove_pattern?: string
  readonly match_full_name?: boolean
}): RuleInput => ({
  enabled: payload.enabled,
  keepCount: payload.keep_count,
  keepPattern: payload.keep_pattern,
  removeDays: payload.remove_days,
  removePattern: payload.remove_pattern,
  matchFullName: payload.match_full_name
})

export const PackageCleanupHttp = apiGroup(HearthApi, "packageCleanup", (handlers) =>
  Effect.gen(function* () {
    const users = yield* UsersRepo
    const cleanup = yield* PackageCleanup
    const ownerName = (id: number) =>
      Effect.map(users.findById(id), (found) => (Option.isSome(found) ? found.value.name : ""))
    const shown = (rule: CleanupRuleRow) => Effect.map(ownerName(rule.ownerId), (name) => toApiRule(rule, name))
    const parseId = (raw: string) =>
      /^\d{1,15}$/.test(raw) ? Effect.succeed(Number(raw)) : Effect.fail(Errors.notFound())

    return handlers
      .handle("listCleanupRules", ({ query }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          let ownerId: number | undefined
          if (query.owner !== undefined && query.owner !== "") {
            const owner = yield* users.findByName(query.owner)
            if (Option.isNone(owner)) return yield* Errors.notFound()
            ownerId = owner.value.id
          }
          return yield* Effect.forEach(yield* cleanup.list(ownerId), shown)
        })
      )
      .handle("createCleanupRule", ({ payload }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          const owner = yield* users.findByName(payload.owner)
          if (Option.isNone(owner))
            return yield* Errors.validationFailed(`user does not exist [name: ${payload.owner}]`)
          const rule = yield* cleanup.create(owner.value.id, payload.type, ruleInput(payload))
          return toApiRule(rule, owner.value.name)
        })
      )
      .handle("editCleanupRule", ({ params, payload }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          return yield* shown(yield* cleanup.edit(yield* parseId(params.id), ruleInput(payload)))
        })
      )
      .handle("deleteCleanupRule", ({ params }) =>
        Effect.gen(function* () {
          yield* siteAdmin
          yield* cleanup.remove(yield* parseId(params.id))
        })
      )
      .handle("runCleanupRules", () =>
        Effect.gen(function* () {
          yield* siteAdmin
          return { removed: yield* cleanup.run }
        })
      )
  })
)

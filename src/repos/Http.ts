import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import { HearthApi } from "../http/Api.ts"
import { Caller, type Principal, signedInCaller } from "../http/Authentication.ts"
import * as Errors from "../http/Errors.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { RepoPolicy } from "./Policy.ts"
import type { RepoFilter, RepoRow } from "./Repo.ts"
import type { CreateRepoOption } from "./Schema.ts"
import { toApiRepo } from "./Schema.ts"
import { ReposService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const

export const ReposHttp = HttpApiBuilder.group(HearthApi, "repos", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const repos = yield* ReposService
    const policy = yield* RepoPolicy
    const orgPolicy = yield* OrgPolicy
    const orgs = yield* OrgsService
    const accounts = yield* AccountPolicy
    const users = yield* UsersRepo

    const viewerOf = Effect.map(Caller, Option.getOrUndefined)

    const accountById = (id: number) =>
      Effect.flatMap(Effect.orDie(users.findById(id)), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.die(new Error(`repository owner ${id} is missing`)))

    /** A user or org by name, or 404. */
    const accountByName = (name: string) =>
      Effect.flatMap(Effect.orDie(users.findByName(name)), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound()))

    /** The repository `owner/name` and its owner, or 404; visibility is checked by the caller. */
    const findRepo = (ownerName: string, name: string) =>
      Effect.gen(function*() {
        const owner = yield* accountByName(ownerName)
        const repo = yield* repos.get(owner, name)
        return { owner, repo }
      })

    /** Converts rows for a viewer, each with the viewer's own permissions. */
    const present = (rows: ReadonlyArray<RepoRow>, viewer: Principal | undefined, knownOwner?: UserRow) =>
      Effect.forEach(rows, (repo) =>
        Effect.gen(function*() {
          const owner = knownOwner ?? (yield* accountById(repo.ownerId))
          const access = yield* policy.access(viewer, repo, owner)
          return toApiRepo(settings, repo, owner, access, viewer)
        }))

    /** What a viewer may list of one owner whose account it may already see. */
    const ownedFilter = (viewer: Principal | undefined): RepoFilter =>
      viewer === undefined
        ? { publicOwners: ["public", "limited", "private"] }
        : viewer.user.isAdmin && viewer.scopes?.publicOnly !== true
        ? { all: true, publicOwners: [] }
        : {
          publicOwners: viewer.user.restricted ? [] : ["public", "limited", "private"],
          viewerId: viewer.user.id,
          publicOnly: viewer.scopes?.publicOnly === true
        }

    const listOf = (owner: UserRow, query: { page?: string | undefined; limit?: string | undefined }) =>
      Effect.gen(function*() {
        const viewer = yield* viewerOf
        yield* accounts.ensureVisible(viewer, owner)
        const page = yield* resolvePage(query)
        const { rows, total } = yield* repos.listOwnedBy(owner, ownedFilter(viewer), page)
        yield* setListHeaders(page, total, { withLink: true })
        return yield* present(rows, viewer, owner)
      })

    const create = (owner: UserRow, caller: Principal, payload: CreateRepoOption) =>
      Effect.map(repos.create(owner, payload), (repo) => toApiRepo(settings, repo, owner, OWNER_ACCESS, caller))

    /** POST /orgs/{org}/repos and its deprecated alias: 422 unknown org, 404 invisible, 403 no right. */
    const createInOrg = (orgName: string, payload: CreateRepoOption) =>
      Effect.gen(function*() {
        const caller = yield* signedInCaller
        const org = yield* orgs.get(orgName).pipe(
          Effect.mapError(() => Errors.validationFailed(`org does not exist [id: 0, name: ${orgName}]`))
        )
        yield* accounts.ensureVisible(caller, org)
        if (!(yield* orgPolicy.canCreateOrgRepo(org, caller.user))) {
          return yield* Errors.forbidden("Given user is not allowed to create repository in organization.")
        }
        return yield* create(org, caller, payload)
      })

    return handlers
      .handle("createMyRepo", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* signedInCaller
          return yield* create(caller.user, caller, payload)
        }))
      .handle("createOrgRepo", ({ params, payload }) => createInOrg(params.org, payload))
      .handle("createOrgRepoDeprecated", ({ params, payload }) => createInOrg(params.org, payload))
      .handle("listMyRepos", ({ query }) =>
        Effect.gen(function*() {
          const caller = yield* signedInCaller
          const page = yield* resolvePage(query)
          const { rows, total } = yield* repos.listAccessible(
            caller.user,
            caller.scopes?.publicOnly === true,
            (query.order_by ?? "").trim(),
            page
          )
          yield* setListHeaders(page, total, { withLink: true })
          return yield* present(rows, caller)
        }))
      .handle("listUserRepos", ({ params, query }) =>
        Effect.gen(function*() {
          return yield* listOf(yield* accountByName(params.username), query)
        }))
      .handle("listOrgRepos", ({ params, query }) =>
        Effect.gen(function*() {
          const org = yield* orgs.get(params.org)
          return yield* listOf(org, query)
        }))
      .handle("getRepo", ({ params }) =>
        Effect.gen(function*() {
          const viewer = yield* viewerOf
          const { owner, repo } = yield* findRepo(params.owner, params.repo)
          const access = yield* policy.ensureVisible(viewer, repo, owner)
          return toApiRepo(settings, repo, owner, access, viewer)
        }))
      .handle("getRepoById", ({ params }) =>
        Effect.gen(function*() {
          const viewer = yield* viewerOf
          const id = /^\d{1,15}$/.test(params.id) ? Number(params.id) : 0
          const repo = yield* repos.getById(id)
          const owner = yield* accountById(repo.ownerId)
          const access = yield* policy.ensureVisible(viewer, repo, owner)
          return toApiRepo(settings, repo, owner, access, viewer)
        }))
      .handle("deleteRepo", ({ params }) =>
        Effect.gen(function*() {
          const caller = yield* signedInCaller
          const { owner, repo } = yield* findRepo(params.owner, params.repo)
          yield* policy.ensureAccess(caller, repo, owner, "owner")
          yield* repos.remove(owner, repo)
        }))
  }))

import { Effect, Option } from "effect"
import { HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { edited, subject } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import { Caller, type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { parseFormBool } from "../http/Query.ts"
import { searchOrFailure } from "../http/SearchFailure.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { OrgPolicy } from "../orgs/Policy.ts"
import { OrgsService } from "../orgs/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { CurrentRepo } from "./Assignment.ts"
import { makeAddCollaborator } from "./Collaborators.ts"
import { makeGenerate } from "./Generate.ts"
import { RepoPolicy, searchFilter } from "./Policy.ts"
import { RepoPresenter } from "./Present.ts"
import { REPO_SEARCH_SORTS, type RepoFilter, type RepoRow, type RepoSearchSort, ReposRepo } from "./Repo.ts"
import type { CreateRepoOption } from "./Schema.ts"
import { ReposService } from "./Service.ts"

const OWNER_ACCESS = { mode: "owner", code: "owner" } as const
const READ_ACCESS = { mode: "read", code: "read" } as const

/** A positive integer form value, or `undefined` (non-numeric values are no filter). */
const formId = (value: string | undefined): number | undefined => {
  const n = /^\d{1,15}$/.test(value ?? "") ? Number(value) : 0
  return n > 0 ? n : undefined
}

const SEARCH_MODES = ["fork", "source", "mirror", "collaborative"] as const

export const ReposHttp = apiGroup(HearthApi, "repos", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const repos = yield* ReposService
    const policy = yield* RepoPolicy
    const presenter = yield* RepoPresenter
    const orgPolicy = yield* OrgPolicy
    const orgs = yield* OrgsService
    const accounts = yield* AccountPolicy
    const users = yield* UsersRepo
    const repoRows = yield* ReposRepo
    const events = yield* EventHub
    const addCollaborator = yield* makeAddCollaborator
    const generate = yield* makeGenerate

    const viewerOf = Effect.map(Caller, Option.getOrUndefined)

    const accountById = (id: number) =>
      Effect.flatMap(users.findById(id), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.die(new Error(`repository owner ${id} is missing`))
      )

    /** A user or org by name, or 404. */
    const accountByName = (name: string) =>
      Effect.flatMap(users.findByName(name), (found) =>
        Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound())
      )

    /** Converts rows for a viewer, each with the viewer's own permissions. */
    const present = (rows: ReadonlyArray<RepoRow>, viewer: Principal | undefined, knownOwner?: UserRow) =>
      Effect.gen(function* () {
        const owners = new Map<number, UserRow>()
        if (knownOwner !== undefined) owners.set(knownOwner.id, knownOwner)
        const items: Array<{ repo: RepoRow; owner: UserRow }> = []
        for (const repo of rows) {
          if (!owners.has(repo.ownerId)) owners.set(repo.ownerId, yield* accountById(repo.ownerId))
          items.push({ repo, owner: owners.get(repo.ownerId)! })
        }
        const access = yield* policy.accessMany(viewer, items)
        return yield* presenter.present(
          viewer,
          items.map((item, i) => ({ ...item, access: access[i]! }))
        )
      })

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
      Effect.gen(function* () {
        const viewer = yield* viewerOf
        yield* accounts.ensureVisible(viewer, owner)
        const page = yield* resolvePage(query)
        const { rows, total } = yield* repos.listOwnedBy(owner, ownedFilter(viewer), page)
        yield* setListHeaders(page, total, { withLink: true })
        return yield* present(rows, viewer, owner)
      })

    /** A new repository of `owner` (charged to its quota: 413 when over), as the caller sees it. */
    const create = (owner: UserRow, caller: Principal, payload: CreateRepoOption) =>
      Effect.gen(function* () {
        const repo = yield* repos.create(owner, payload, caller.user)
        return yield* presenter.one(caller, { repo, owner, access: OWNER_ACCESS })
      })

    /** POST /orgs/{org}/repos and its deprecated alias: 422 unknown org, 404 invisible, 403 no right. */
    const createInOrg = (orgName: string, payload: CreateRepoOption) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const org = yield* orgs
          .get(orgName)
          .pipe(Effect.mapError(() => Errors.validationFailed(`org does not exist [id: 0, name: ${orgName}]`)))
        yield* accounts.ensureVisible(caller, org)
        if (!(yield* orgPolicy.canCreateOrgRepo(org, caller.user))) {
          return yield* Errors.forbidden("Given user is not allowed to create repository in organization.")
        }
        return yield* create(org, caller, payload)
      })

    /** The named user for the collaborator routes; Forgejo answers an unknown name with 422. */
    const collaboratorByName = (name: string) =>
      Effect.flatMap(users.findByName(name), (found) =>
        Option.isSome(found)
          ? Effect.succeed(found.value)
          : Effect.fail(Errors.validationFailed(`user does not exist [uid: 0, name: ${name}]`))
      )

    return handlers
      .handle("editRepo", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner, repo } = yield* CurrentRepo
          const updated = yield* repos.edit(owner, repo, payload)
          yield* Effect.forEach(edited(owner, repo, updated, caller.user), events.publish)
          return yield* presenter.one(caller, {
            repo: updated,
            owner,
            access: yield* policy.access(caller, updated, owner)
          })
        })
      )
      .handle("searchRepos", ({ query }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const page = yield* resolvePage(query, settings.ui.EXPLORE_PAGING_NUM)
          const mode = query.mode ?? ""
          if (mode !== "" && !(SEARCH_MODES as ReadonlyArray<string>).includes(mode)) {
            return yield* Errors.validationFailed(`Invalid search mode: "${mode}"`)
          }
          let sort: RepoSearchSort = "name"
          let desc = false
          if (query.sort !== undefined && query.sort !== "") {
            const order = query.order === undefined || query.order === "" ? "asc" : query.order
            if (order !== "asc" && order !== "desc")
              return yield* Errors.validationFailed(`Invalid sort order: "${order}"`)
            if (!(REPO_SEARCH_SORTS as ReadonlyArray<string>).includes(query.sort)) {
              return yield* Errors.validationFailed(`Invalid sort mode: "${query.sort}"`)
            }
            sort = query.sort as RepoSearchSort
            desc = order === "desc"
          }
          const filter = searchFilter(viewer, parseFormBool(query.private) !== false)
          const keywords = (query.q ?? "")
            .split(",")
            .map((k) => k.trim().toLowerCase())
            .filter((k) => k !== "")
          const found = yield* searchOrFailure(
            "repository search",
            repos.search(
              {
                filter,
                keywords,
                topicOnly: parseFormBool(query.topic) === true,
                ownerId: formId(query.uid),
                exclusive: parseFormBool(query.exclusive) === true,
                isPrivate: parseFormBool(query.is_private),
                template: parseFormBool(query.template),
                archived: parseFormBool(query.archived),
                mode: mode === "" ? undefined : (mode as (typeof SEARCH_MODES)[number]),
                starredBy: formId(query.starredBy),
                sort,
                desc
              },
              page
            )
          )
          if (HttpServerResponse.isHttpServerResponse(found)) return found
          const { owners, rows, total } = found
          yield* setListHeaders(page, total, { withLink: true })
          const items = yield* Effect.forEach(rows, (repo) =>
            Effect.map(
              owners.has(repo.ownerId) ? Effect.succeed(owners.get(repo.ownerId)!) : accountById(repo.ownerId),
              (owner) => ({ repo, owner })
            )
          )
          // Anonymous callers only get public repositories they may read: nothing to look up.
          const access = viewer === undefined ? items.map(() => READ_ACCESS) : yield* policy.accessMany(viewer, items)
          return {
            ok: true,
            data: yield* presenter.present(
              viewer,
              items.map((item, i) => ({ ...item, access: access[i]! }))
            )
          }
        })
      )
      .handle("listCollaborators", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { repo } = yield* CurrentRepo
          const page = yield* resolvePage(query)
          const { rows, total } = yield* repos.listCollaborators(repo, page)
          yield* setListHeaders(page, total)
          return rows.map((c) => toApiUser(settings, c.user, caller))
        })
      )
      .handle("checkCollaborator", ({ params }) =>
        Effect.gen(function* () {
          const { repo } = yield* CurrentRepo
          const user = yield* collaboratorByName(params.collaborator)
          if (Option.isNone(yield* repoRows.collaboratorMode(repo.id, user.id))) {
            return yield* Errors.notFound()
          }
        })
      )
      .handle("addCollaborator", ({ params, payload }) =>
        Effect.gen(function* () {
          const { owner, repo } = yield* CurrentRepo
          const user = yield* collaboratorByName(params.collaborator)
          yield* addCollaborator(owner, repo, user, payload.permission ?? "write")
        })
      )
      .handle("deleteCollaborator", ({ params }) =>
        Effect.gen(function* () {
          const { repo } = yield* CurrentRepo
          const user = yield* collaboratorByName(params.collaborator)
          yield* repos.removeCollaborator(repo, user)
        })
      )
      .handle("collaboratorPermission", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner, repo, access: mine } = yield* CurrentRepo
          const self = caller.user.lowerName === params.collaborator.toLowerCase()
          if (!caller.user.isAdmin && !self && !atLeast(mine.mode, "admin")) {
            return yield* Errors.forbidden(
              "Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own"
            )
          }
          const user = yield* accountByName(params.collaborator)
          // The user's own access (as a password sign-in: no token scopes narrow it).
          const access = yield* policy.access({ user, scopes: undefined, method: "password" }, repo, owner)
          return { permission: access.mode, role_name: access.mode, user: toApiUser(settings, user, caller) }
        })
      )
      .handle("createMyRepo", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          return yield* create(caller.user, caller, payload)
        })
      )
      .handle("createOrgRepo", ({ params, payload }) => createInOrg(params.org, payload))
      .handle("createOrgRepoDeprecated", ({ params, payload }) => createInOrg(params.org, payload))
      .handle("listMyRepos", ({ query }) =>
        Effect.gen(function* () {
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
        })
      )
      .handle("listUserRepos", ({ params, query }) =>
        Effect.gen(function* () {
          return yield* listOf(yield* accountByName(params.username), query)
        })
      )
      .handle("listOrgRepos", ({ params, query }) =>
        Effect.gen(function* () {
          const org = yield* orgs.get(params.org)
          return yield* listOf(org, query)
        })
      )
      .handle("getRepo", () =>
        Effect.gen(function* () {
          const { caller, owner, repo, access } = yield* CurrentRepo
          return yield* presenter.one(caller, { repo, owner, access })
        })
      )
      .handle("generateRepo", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const made = yield* generate(caller, yield* CurrentRepo, payload)
          return yield* presenter.one(caller, { ...made, access: OWNER_ACCESS })
        })
      )
      .handle("getRepoById", ({ params }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const id = /^\d{1,15}$/.test(params.id) ? Number(params.id) : 0
          const repo = yield* repos.getById(id)
          const owner = yield* accountById(repo.ownerId)
          const access = yield* policy.ensureVisible(viewer, repo, owner)
          return yield* presenter.one(viewer, { repo, owner, access })
        })
      )
      .handle("deleteRepo", () =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner, repo } = yield* CurrentRepo
          yield* repos.remove(owner, repo)
          yield* events.publish({ _tag: "DeleteRepository", ...subject(owner, repo, caller.user) })
        })
      )
  })
)

import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { Caller, type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { type AccessMode, accessRank, atLeast } from "../lib/AccessMode.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { RepoPresenter } from "../repos/Present.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { AccountRename } from "../users/Rename.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { UsersService } from "../users/Service.ts"
import { OrgPolicy } from "./Policy.ts"
import type { OrgFilter } from "./Repo.ts"
import { toApiOrg, toApiTeam } from "./Schema.ts"
import { OrgsService } from "./Service.ts"

/** Forgejo's `FormBool`: "true", "1", "t", … are true; anything else false. */
const formBool = (value: string) => ["1", "t", "true"].includes(value.trim().toLowerCase())

/** Forgejo's refusal of the repository team routes for a repository of an individual user. */
const NOT_AN_ORG_REPO = "repo is not owned by an organization"

export const OrgsHttp = apiGroup(HearthApi, "orgs", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const orgs = yield* OrgsService
    const users = yield* UsersService
    const accounts = yield* AccountPolicy
    const policy = yield* OrgPolicy
    const renamer = yield* AccountRename
    const repos = yield* ReposService
    const repoPolicy = yield* RepoPolicy
    const presenter = yield* RepoPresenter

    const viewerOf = Effect.gen(function* () {
      return Option.getOrUndefined(yield* Caller)
    })

    /** The org by name, or 404 when the viewer may not see it (403 for public-only tokens). */
    const visibleOrg = (name: string, viewer: Principal | undefined) =>
      Effect.gen(function* () {
        const org = yield* orgs.get(name)
        yield* accounts.ensureVisible(viewer, org)
        return org
      })

    /** Accounts a viewer may see in lists: its visibility levels, plus the orgs it belongs to. */
    const visibleTo = (viewer: Principal | undefined): OrgFilter => ({
      visibilities: accounts.visibleLevels(viewer),
      memberId: viewer !== undefined && viewer.scopes?.publicOnly !== true ? viewer.user.id : undefined
    })

    /** Everything, except that public-only tokens see public accounts only. */
    const everything = (viewer: Principal): OrgFilter =>
      viewer.scopes?.publicOnly === true ? { visibilities: ["public"] } : { visibilities: [], all: true }

    const isMemberOrAdmin = (org: UserRow, viewer: Principal | undefined) =>
      viewer === undefined
        ? Effect.succeed(false)
        : viewer.user.isAdmin
          ? Effect.succeed(true)
          : policy.isMember(org, viewer.user)

    /**
     * A user named in a membership route: 404 unless it exists and the caller may see it, or it
     * already belongs to the org (members stay manageable whatever their visibility).
     */
    const memberTarget = (username: string, caller: Principal, org: UserRow) =>
      Effect.gen(function* () {
        const user = yield* users.get(username)
        if (yield* accounts.canSee(caller, user)) return user
        if (Option.isSome(yield* orgs.membership(org, user))) return user
        return yield* Errors.notFound()
      })

    /** The team of a /teams/{id} route, with its org, if the caller may see it. */
    const visibleTeam = (id: string) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const team = yield* orgs.getTeam(id)
        const org = yield* orgs.getById(team.orgId)
        yield* policy.ensureTeamVisible(caller, org, team)
        if (caller.scopes?.publicOnly === true && org.visibility !== "public") {
          return yield* Errors.forbidden("token scope is limited to public orgs")
        }
        return { caller, team, org }
      })

    const userList = (rows: ReadonlyArray<UserRow>, viewer: Principal | undefined) =>
      rows.map((u) => toApiUser(settings, u, viewer))

    /**
     * The repository of a /teams/{id}/repos/{org}/{repo} path: one of the team's organization
     * (Forgejo looks it up there by name), else 404.
     */
    const teamRepoTarget = (org: UserRow, orgName: string, repoName: string) =>
      orgName.toLowerCase() === org.lowerName ? repos.get(org, repoName) : Effect.fail(Errors.notFound())

    /** Forgejo's `AddTeamRepository`/`RemoveTeamRepository` check: admin of the repository itself. */
    const ensureRepoAdmin = (caller: Principal, org: UserRow, repo: RepoRow) =>
      Effect.gen(function* () {
        const access = yield* repoPolicy.access(caller, repo, org)
        if (!atLeast(access.mode, "admin")) {
          return yield* Errors.forbidden("Must have admin-level access to the repository")
        }
      })

    /** The organization owning the repository of a /repos/{o}/{r}/teams path (422 for a user's). */
    const repoOrg = Effect.gen(function* () {
      const opened = yield* CurrentRepo
      if (opened.owner.type !== "organization") return yield* Errors.validationFailed(NOT_AN_ORG_REPO)
      return opened
    })

    /** Forgejo's `changeRepoTeam` rule: owners, or repository admins when the org lets them. */
    const ensureTeamAccessChange = (owner: UserRow, mode: AccessMode) =>
      owner.repoAdminChangeTeamAccess || atLeast(mode, "owner")
        ? Effect.void
        : Effect.fail(Errors.forbidden("user is nor repo admin nor owner"))

    return handlers
      .handle("listOrgs", ({ query }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.list(visibleTo(viewer), page)
          yield* setListHeaders(page, total, { withLink: true })
          return rows.map((o) => toApiOrg(settings, o, viewer))
        })
      )
      .handle("createOrg", ({ payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* orgs.create(caller.user, payload)
          return toApiOrg(settings, org, caller)
        })
      )
      .handle("getOrg", ({ params }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          return toApiOrg(settings, yield* visibleOrg(params.org, viewer), viewer)
        })
      )
      .handle("editOrg", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureOwner(caller, org)
          return toApiOrg(settings, yield* orgs.update(org, payload), caller)
        })
      )
      .handle("deleteOrg", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureOwner(caller, org)
          yield* orgs.remove(org)
        })
      )
      .handle("listMyOrgs", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.listOfUser(caller.user, false, everything(caller), page)
          yield* setListHeaders(page, total, { withLink: true })
          return rows.map((o) => toApiOrg(settings, o, caller))
        })
      )
      .handle("listUserOrgs", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const user = yield* users.visible(caller, params.username)
          const page = yield* resolvePage(query)
          // The user and admins see every membership; others only public memberships (Forgejo's
          // default for a new member is concealed) in orgs they may see.
          const self = caller.user.isAdmin || caller.user.id === user.id
          const { rows, total } = self
            ? yield* orgs.listOfUser(user, false, everything(caller), page)
            : yield* orgs.listOfUser(user, true, visibleTo(caller), page)
          yield* setListHeaders(page, total, { withLink: true })
          return rows.map((o) => toApiOrg(settings, o, caller))
        })
      )

      .handle("listMembers", ({ params, query }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const org = yield* visibleOrg(params.org, viewer)
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.visibleMembers(org, viewer, page)
          yield* setListHeaders(page, total)
          return userList(rows, viewer)
        })
      )
      .handle("isMember", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          const user = yield* users.get(params.username)
          const membership = yield* orgs.membership(org, user)
          if (yield* isMemberOrAdmin(org, caller)) {
            if (Option.isNone(membership)) return yield* Errors.notFound()
            return
          }
          // Outsiders learn only public memberships (Forgejo redirects them to public_members).
          if (Option.isNone(membership) || !membership.value.isPublic || !(yield* accounts.canSee(caller, user))) {
            return yield* Errors.notFound()
          }
        })
      )
      .handle("removeMember", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureOwner(caller, org)
          const user = yield* memberTarget(params.username, caller, org)
          yield* orgs.removeMember(org, user)
        })
      )
      .handle("listPublicMembers", ({ params, query }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const org = yield* visibleOrg(params.org, viewer)
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.members(org, { publicOnly: true, users: visibleTo(viewer) }, page)
          yield* setListHeaders(page, total)
          return userList(rows, viewer)
        })
      )
      .handle("isPublicMember", ({ params }) =>
        Effect.gen(function* () {
          const viewer = yield* viewerOf
          const org = yield* visibleOrg(params.org, viewer)
          const user = yield* users.get(params.username)
          const membership = yield* orgs.membership(org, user)
          if (Option.isNone(membership) || !membership.value.isPublic || !(yield* accounts.canSee(viewer, user))) {
            return yield* Errors.notFound()
          }
        })
      )
      .handle("publicizeMember", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureMember(caller, org)
          const user = yield* users.get(params.username)
          if (user.id !== caller.user.id) return yield* Errors.forbidden("Cannot publicize another member")
          yield* orgs.setMembershipPublic(org, user, true)
        })
      )
      .handle("concealMember", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureMember(caller, org)
          const user = yield* users.get(params.username)
          if (user.id !== caller.user.id) return yield* Errors.forbidden("Cannot conceal another member")
          yield* orgs.setMembershipPublic(org, user, false)
        })
      )

      .handle("listTeams", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureMember(caller, org)
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.listTeams(org, page)
          yield* setListHeaders(page, total)
          return rows.map((t) => toApiTeam(t))
        })
      )
      .handle("createTeam", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureOwner(caller, org)
          return toApiTeam(yield* orgs.createTeam(org, payload))
        })
      )
      .handle("getTeam", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          return toApiTeam(team, toApiOrg(settings, org, caller))
        })
      )
      .handle("editTeam", ({ params, payload }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          return toApiTeam(yield* orgs.updateTeam(team, payload))
        })
      )
      .handle("deleteTeam", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          yield* orgs.deleteTeam(team)
        })
      )
      .handle("listTeamMembers", ({ params, query }) =>
        Effect.gen(function* () {
          const { caller, team } = yield* visibleTeam(params.id)
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.teamMembers(team, page)
          yield* setListHeaders(page, total)
          return userList(rows, caller)
        })
      )
      .handle("getTeamMember", ({ params }) =>
        Effect.gen(function* () {
          const { caller, team } = yield* visibleTeam(params.id)
          const user = yield* users.get(params.username)
          if (!(yield* orgs.isTeamMember(team, user))) return yield* Errors.notFound()
          return toApiUser(settings, user, caller)
        })
      )
      .handle("addTeamMember", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          yield* orgs.addTeamMember(team, yield* memberTarget(params.username, caller, org))
        })
      )
      .handle("removeTeamMember", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          yield* orgs.removeTeamMember(team, yield* memberTarget(params.username, caller, org))
        })
      )

      .handle("renameOrg", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureOwner(caller, org)
          yield* renamer.rename(org, payload.new_name, {
            taken: (name) => `user already exists [name: ${name}]`,
            doer: caller.user
          })
        })
      )
      .handle("searchTeams", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const org = yield* visibleOrg(params.org, caller)
          yield* policy.ensureMember(caller, org)
          const page = yield* resolvePage(query)
          const includeDesc = (query.include_desc ?? "") === "" || formBool(query.include_desc ?? "")
          // Only site admins search every team; others the teams they are in (Forgejo's SearchTeam).
          const { rows, total } = yield* orgs.searchTeams(
            org,
            {
              keyword: (query.q ?? "").trim(),
              includeDesc,
              memberId: caller.user.isAdmin ? undefined : caller.user.id
            },
            page
          )
          yield* setListHeaders(page, total, { withLink: true })
          return { ok: true, data: rows.map((t) => toApiTeam(t)) }
        })
      )
      .handle("listTeamRepos", ({ params, query }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.teamRepos(team, page)
          const items = rows.map((repo) => ({ repo, owner: org }))
          const access = yield* repoPolicy.accessMany(caller, items)
          yield* setListHeaders(page, total)
          return yield* presenter.present(
            caller,
            items.map((item, i) => ({ ...item, access: access[i]! }))
          )
        })
      )
      .handle("getTeamRepo", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          const repo = yield* teamRepoTarget(org, params.org, params.repo)
          if (!(yield* orgs.teamHasRepo(team, repo))) return yield* Errors.notFound()
          const access = yield* repoPolicy.access(caller, repo, org)
          return yield* presenter.one(caller, { repo, owner: org, access })
        })
      )
      .handle("addTeamRepo", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          const repo = yield* teamRepoTarget(org, params.org, params.repo)
          yield* ensureRepoAdmin(caller, org, repo)
          yield* orgs.addTeamRepo(team, repo)
        })
      )
      .handle("removeTeamRepo", ({ params }) =>
        Effect.gen(function* () {
          const { caller, org, team } = yield* visibleTeam(params.id)
          yield* policy.ensureOwner(caller, org)
          const repo = yield* teamRepoTarget(org, params.org, params.repo)
          yield* ensureRepoAdmin(caller, org, repo)
          yield* orgs.removeTeamRepo(team, repo)
        })
      )
      .handle("listRepoTeams", () =>
        Effect.gen(function* () {
          const { owner, repo } = yield* repoOrg
          return (yield* orgs.teamsOfRepo(owner, repo)).map((t) => toApiTeam(t))
        })
      )
      .handle("checkRepoTeam", ({ params }) =>
        Effect.gen(function* () {
          const { owner, repo } = yield* repoOrg
          const team = yield* orgs.teamByName(owner, params.team)
          if (!(yield* orgs.teamHasRepo(team, repo))) return yield* Errors.notFound()
          return toApiTeam(team)
        })
      )
      .handle("addRepoTeam", ({ params }) =>
        Effect.gen(function* () {
          const { owner, repo, access } = yield* repoOrg
          yield* ensureTeamAccessChange(owner, access.mode)
          const team = yield* orgs.teamByName(owner, params.team)
          if (yield* orgs.teamHasRepo(team, repo)) {
            return yield* Errors.validationFailed(`team '${team.name}' is already added to repo`)
          }
          yield* orgs.addTeamRepo(team, repo)
        })
      )
      .handle("deleteRepoTeam", ({ params }) =>
        Effect.gen(function* () {
          const { owner, repo, access } = yield* repoOrg
          yield* ensureTeamAccessChange(owner, access.mode)
          const team = yield* orgs.teamByName(owner, params.team)
          if (!(yield* orgs.teamHasRepo(team, repo))) {
            return yield* Errors.validationFailed(`team '${team.name}' was not added to repo`)
          }
          yield* orgs.removeTeamRepo(team, repo)
        })
      )
      .handle("listMyTeams", ({ query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const page = yield* resolvePage(query)
          const { rows, total } = yield* orgs.teamsOfUser(caller.user, page)
          const orgsById = new Map<number, UserRow>()
          for (const team of rows) {
            if (!orgsById.has(team.orgId)) orgsById.set(team.orgId, yield* orgs.getById(team.orgId))
          }
          yield* setListHeaders(page, total)
          return rows.map((t) => toApiTeam(t, toApiOrg(settings, orgsById.get(t.orgId)!, caller)))
        })
      )
      .handle("userOrgPermissions", ({ params }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const user = yield* users.visible(caller, params.username)
          const org = yield* visibleOrg(params.org, caller)
          const { level, canCreateRepository } = yield* orgs.permissionsOf(org, user)
          const rank = accessRank(level)
          return {
            can_create_repository: canCreateRepository,
            can_read: rank > accessRank("none"),
            can_write: rank > accessRank("read"),
            is_admin: rank > accessRank("write"),
            is_owner: rank > accessRank("admin")
          }
        })
      )
  })
)

// Organization and team rules: names shared with users (one namespace), the Owners team made with
// the org, team permissions and units as Forgejo resolves them, and an org that always keeps at
// least one owner. Org membership is the union of team memberships (kept by OrgsRepo).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { onAlreadyExists, transaction as sqlTransaction } from "../db/Boundary.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { ACCESS_MODES, type AccessMode, accessRank, isAccessMode } from "../lib/AccessMode.ts"
import { NAME_MAX, userNameProblem } from "../lib/Names.ts"
import { PackagesRepo } from "../packages/Repo.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { AccountPolicy } from "../users/Policy.ts"
import { type UserRow, UsersRepo, type UserWrite } from "../users/Repo.ts"
import { emailProblem, UsersService } from "../users/Service.ts"
import { OrgPolicy, OWNER_TEAM_NAME, UNIT_KEYS } from "./Policy.ts"
import { type Listed, type OrgFilter, OrgsRepo, type TeamRow, type TeamWrite } from "./Repo.ts"
import type { CreateOrgOption, CreateTeamOption, EditOrgOption, EditTeamOption } from "./Schema.ts"

const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))

const maxSize = (field: string, value: string | undefined, max: number) =>
  value !== undefined && value.length > max ? `[${field}]: MaxSize (${max})` : undefined

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:"
  } catch {
    return false
  }
}

/** Why an org's descriptive fields are refused (Forgejo's binding rules), or `undefined`. */
const orgFieldsProblem = (input: EditOrgOption): string | undefined =>
  maxSize("FullName", input.full_name, 100) ??
  maxSize("Email", input.email, 255) ??
  (input.email !== undefined && input.email !== "" ? emailProblem(input.email) : undefined) ??
  maxSize("Description", input.description, 255) ??
  maxSize("Website", input.website, 255) ??
  (input.website !== undefined && input.website !== "" && !isHttpUrl(input.website)
    ? `[Website]: must be a valid http or https URL: "${input.website}"`
    : undefined) ??
  maxSize("Location", input.location, 50)

const TEAM_NAME = /^[\w.-]+$/
const RESERVED_TEAM_NAMES = new Set(["new"])

const teamNameProblem = (name: string): string | undefined => {
  if (name.length === 0) return "[Name]: Required"
  if (name.length > NAME_MAX.team) return `[Name]: MaxSize (${NAME_MAX.team})`
  if (!TEAM_NAME.test(name)) {
    return `[Name]: must contain only alphanumeric, dash ('-'), underscore ('_') and dot ('.') characters: "${name}"`
  }
  if (RESERVED_TEAM_NAMES.has(name.toLowerCase())) return `name is reserved [name: ${name}]`
  return undefined
}

const isUnitKey = (key: string) => (UNIT_KEYS as ReadonlyArray<string>).includes(key)

/** Validates `units_map` into unit → access mode. */
const parseUnitsMap = (map: Readonly<Record<string, string>>) =>
  Effect.gen(function* () {
    const out: Record<string, AccessMode> = {}
    for (const [key, mode] of Object.entries(map)) {
      if (!isUnitKey(key)) {
        return yield* invalid(`[UnitsMap]: unknown unit "${key}"; known units: ${UNIT_KEYS.join(", ")}`)
      }
      if (!isAccessMode(mode)) {
        return yield* invalid(
          `[UnitsMap]: invalid access mode "${mode}" for unit "${key}": use ${ACCESS_MODES.join(", ")}`
        )
      }
      out[key] = mode
    }
    return out
  })

const checkUnits = (units: ReadonlyArray<string>) => {
  const unknown = units.find((u) => !isUnitKey(u))
  return unknown === undefined
    ? Effect.void
    : invalid(`[Units]: unknown unit "${unknown}"; known units: ${UNIT_KEYS.join(", ")}`)
}

/**
 * Forgejo's MinUnitAccessMode: the lowest level above none among the units (external wiki and
 * tracker granted read do not count), or none when every unit is none.
 */
const minUnitAccess = (units: Readonly<Record<string, AccessMode>>): AccessMode => {
  let result: AccessMode = "none"
  for (const [key, mode] of Object.entries(units)) {
    if ((key === "repo.ext_wiki" || key === "repo.ext_issues") && mode === "read") continue
    if (mode !== "none" && (result === "none" || accessRank(mode) < accessRank(result))) result = mode
  }
  return result
}

const allUnitsAt = (mode: AccessMode, keys: ReadonlyArray<string> = UNIT_KEYS) =>
  Object.fromEntries(keys.map((key) => [key, mode])) as Record<string, AccessMode>

export class OrgsService extends Context.Service<
  OrgsService,
  {
    /** The organization of that name (case-insensitive), or 404 (also for individual users). */
    readonly get: (name: string) => Effect.Effect<UserRow, Errors.NotFound>
    readonly getById: (id: number) => Effect.Effect<UserRow, Errors.NotFound>
    /** Creates an org with its Owners team, the creator its only member. */
    readonly create: (
      creator: UserRow,
      input: CreateOrgOption
    ) => Effect.Effect<UserRow, Errors.Forbidden | Errors.ValidationFailed>
    readonly update: (org: UserRow, input: EditOrgOption) => Effect.Effect<UserRow, Errors.ValidationFailed>
    /** Deletes the organization; refused (422) while it still owns repositories. */
    readonly remove: (org: UserRow) => Effect.Effect<void, Errors.ValidationFailed>
    readonly list: (filter: OrgFilter, page: Page) => Effect.Effect<Listed<UserRow>>
    /**
     * The organizations `user` may create repositories in (member of a team that may, or an owner:
     * Forgejo's `CanCreateOrgRepo`), by name: the owners a web form offers besides the user.
     */
    readonly repoOwnersFor: (user: UserRow) => Effect.Effect<ReadonlyArray<UserRow>>
    readonly listOfUser: (
      user: UserRow,
      publicOnly: boolean,
      filter: OrgFilter,
      page: Page
    ) => Effect.Effect<Listed<UserRow>>
    readonly members: (
      org: UserRow,
      options: { readonly publicOnly: boolean; readonly users: OrgFilter },
      page: Page
    ) => Effect.Effect<Listed<UserRow>>
    /**
     * The members `viewer` may see (Forgejo's `GET /orgs/{org}/members`): members and site admins
     * see every member; everyone else the public memberships of users they may see.
     */
    readonly visibleMembers: (org: UserRow, viewer: Principal | undefined, page: Page) => Effect.Effect<Listed<UserRow>>
    readonly membership: (org: UserRow, user: UserRow) => Effect.Effect<Option.Option<{ isPublic: boolean }>>
    readonly setMembershipPublic: (
      org: UserRow,
      user: UserRow,
      isPublic: boolean
    ) => Effect.Effect<void, Errors.NotFound>
    /** Removes a user from every team of the org; refused for the org's last owner. */
    readonly removeMember: (org: UserRow, user: UserRow) => Effect.Effect<void, Errors.ValidationFailed>

    /** A team by its id as given in a path, or 404. */
    readonly getTeam: (id: string) => Effect.Effect<TeamRow, Errors.NotFound>
    readonly listTeams: (org: UserRow, page: Page) => Effect.Effect<Listed<TeamRow>>
    readonly createTeam: (org: UserRow, input: CreateTeamOption) => Effect.Effect<TeamRow, Errors.ValidationFailed>
    readonly updateTeam: (team: TeamRow, input: EditTeamOption) => Effect.Effect<TeamRow, Errors.ValidationFailed>
    /** Deletes a team; the owner team cannot be deleted. */
    readonly deleteTeam: (team: TeamRow) => Effect.Effect<void, Errors.ValidationFailed>
    readonly teamMembers: (team: TeamRow, page: Page) => Effect.Effect<Listed<UserRow>>
    readonly isTeamMember: (team: TeamRow, user: UserRow) => Effect.Effect<boolean>
    /** Adds a user (never an org) to a team, and so to the org; idempotent. */
    readonly addTeamMember: (team: TeamRow, user: UserRow) => Effect.Effect<void, Errors.ValidationFailed>
    /** Removes a user from a team; refused for the last member of the owner team. Idempotent. */
    readonly removeTeamMember: (team: TeamRow, user: UserRow) => Effect.Effect<void, Errors.ValidationFailed>

    /** The repositories the team reaches (all of its org's when it includes all). */
    readonly teamRepos: (team: TeamRow, page: Page) => Effect.Effect<Listed<RepoRow>>
    /** Whether the team reaches the repository (Forgejo's `HasRepository`). */
    readonly teamHasRepo: (team: TeamRow, repo: RepoRow) => Effect.Effect<boolean>
    /** Gives the team a repository of its organization (422 for another owner's); idempotent. */
    readonly addTeamRepo: (team: TeamRow, repo: RepoRow) => Effect.Effect<void, Errors.ValidationFailed>
    /** Takes a repository from the team; a team that includes all repositories keeps them (Forgejo). */
    readonly removeTeamRepo: (team: TeamRow, repo: RepoRow) => Effect.Effect<void>
    /** The teams of the repository's organization that reach it, owners first. */
    readonly teamsOfRepo: (org: UserRow, repo: RepoRow) => Effect.Effect<Array<TeamRow>>
    /** A team of the org by name, or 404 with Forgejo's `ErrTeamNotExist` message. */
    readonly teamByName: (org: UserRow, name: string) => Effect.Effect<TeamRow, Errors.NotFound>
    readonly searchTeams: (
      org: UserRow,
      options: { readonly keyword: string; readonly includeDesc: boolean; readonly memberId: number | undefined },
      page: Page
    ) => Effect.Effect<Listed<TeamRow>>
    readonly teamsOfUser: (user: UserRow, page: Page) => Effect.Effect<Listed<TeamRow>>
    /**
     * Forgejo's `GetOrgUserMaxAuthorizeLevel` and `CanCreateOrgRepo` for a user (site admins are
     * not special here).
     */
    readonly permissionsOf: (
      org: UserRow,
      user: UserRow
    ) => Effect.Effect<{ readonly level: AccessMode; readonly canCreateRepository: boolean }>
  }
>()("hearth/orgs/OrgsService") {
  static readonly layer = Layer.effect(
    OrgsService,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const users = yield* UsersRepo
      const accounts = yield* UsersService
      const repo = yield* OrgsRepo
      const repositories = yield* ReposService
      const policy = yield* OrgPolicy
      const visibility = yield* AccountPolicy
      const packages = yield* PackagesRepo

      const orgValues = (input: EditOrgOption): UserWrite => {
        const values: { -readonly [K in keyof UserWrite]: UserWrite[K] } = {}
        if (input.full_name !== undefined) values.full_name = input.full_name
        if (input.email !== undefined) values.email = input.email
        if (input.description !== undefined) values.description = input.description
        if (input.website !== undefined) values.website = input.website
        if (input.location !== undefined) values.location = input.location
        if (input.visibility !== undefined && input.visibility !== "") values.visibility = input.visibility
        if (input.repo_admin_change_team_access !== undefined) {
          values.repo_admin_change_team_access = input.repo_admin_change_team_access
        }
        return values
      }

      const nameTaken = (name: string) => Errors.validationFailed(`user already exists [name: ${name}]`)
      const teamTaken = (org: UserRow, name: string) =>
        Errors.validationFailed(`team already exists [org_id: ${org.id}, name: ${name.toLowerCase()}]`)
      const lastOwner = (user: UserRow) =>
        Errors.validationFailed(
          `user is the last member of owner team [uid: ${user.id}]: an organization must keep at least one owner`
        )

      /** Fails when removing `user` would leave the org's owner team empty; call inside a transaction. */
      const guardLastOwner = (orgId: number, user: UserRow) =>
        Effect.gen(function* () {
          const owners = yield* repo.ownerTeam(orgId)
          if (Option.isNone(owners)) return
          yield* repo.lockTeam(owners.value.id)
          if (!(yield* repo.isTeamMember(owners.value.id, user.id))) return
          const count = yield* repo.countTeamMembers(owners.value.id)
          if (count <= 1) return yield* Effect.fail(lastOwner(user))
        })

      // Rule failures roll the transaction back and stay typed; database errors are defects.
      const transaction = sqlTransaction(sql)

      const getById = (id: number) =>
        Effect.flatMap(users.findById(id), (found) =>
          Option.isSome(found) && found.value.type === "organization"
            ? Effect.succeed(found.value)
            : Effect.fail(Errors.notFound())
        )

      /** The team's permission and units after applying a create/edit option (Forgejo's rules). */
      const resolveAccess = (
        input: {
          readonly permission?: string
          readonly units?: ReadonlyArray<string>
          readonly units_map?: Readonly<Record<string, string>>
        },
        current: TeamRow | undefined
      ): Effect.Effect<{ permission?: AccessMode; units?: Record<string, AccessMode> }, Errors.ValidationFailed> =>
        Effect.gen(function* () {
          const unitsMap =
            input.units_map !== undefined && Object.keys(input.units_map).length > 0
              ? yield* parseUnitsMap(input.units_map)
              : undefined
          const units = input.units !== undefined && input.units.length > 0 ? input.units : undefined
          if (units !== undefined) yield* checkUnits(units)
          const given =
            input.permission !== undefined && input.permission !== "" ? (input.permission as AccessMode) : undefined
          if (given === undefined && unitsMap === undefined) {
            if (current === undefined) {
              return yield* invalid("[Permission]: a permission (read, write or admin) or a units_map is required")
            }
            if (units === undefined) return {}
          }
          let permission: AccessMode = given ?? current?.permission ?? "none"
          // Below admin, the units decide the level (Forgejo: the lowest unit level above none).
          if (accessRank(permission) < accessRank("admin") && unitsMap !== undefined) {
            permission = minUnitAccess(unitsMap)
          }
          if (accessRank(permission) >= accessRank("admin")) return { permission, units: {} }
          if (unitsMap !== undefined) return { permission, units: unitsMap }
          if (units !== undefined) return { permission, units: allUnitsAt(permission, units) }
          // No units given: keep the team's units (all of them for a former admin team) at the new level.
          const keep =
            current !== undefined && Object.keys(current.units).length > 0
              ? Object.entries(current.units)
                  .filter(([, mode]) => mode !== "none")
                  .map(([key]) => key)
              : UNIT_KEYS
          const relevelled = { ...(current?.units ?? {}), ...allUnitsAt(permission, keep) }
          return { permission, units: relevelled }
        })

      return OrgsService.of({
        get: (name) =>
          Effect.flatMap(users.findByName(name), (found) =>
            Option.isSome(found) && found.value.type === "organization"
              ? Effect.succeed(found.value)
              : Effect.fail(Errors.notFound())
          ),
        getById,

        create: (creator, input) =>
          Effect.gen(function* () {
            if (!creator.isAdmin && !creator.allowCreateOrganization) {
              return yield* Errors.forbidden("Create organization not allowed")
            }
            const problem = userNameProblem(input.username) ?? orgFieldsProblem(input)
            if (problem !== undefined) return yield* invalid(problem)
            if (Option.isSome(yield* users.findByName(input.username))) {
              return yield* Effect.fail(nameTaken(input.username))
            }
            const created = Effect.gen(function* () {
              const org = yield* users.insert({
                ...orgValues(input),
                type: 1,
                name: input.username,
                login_name: ""
              })
              const owners = yield* repo.insertTeam(org.id, {
                name: OWNER_TEAM_NAME,
                permission: "owner",
                includesAllRepositories: true,
                canCreateOrgRepo: true
              })
              yield* repo.addTeamMember(owners, creator.id)
              return org
            })
            // A concurrent create of the same name loses on the unique index; the transaction
            // has rolled back by the time the error is mapped.
            return yield* transaction(created).pipe(onAlreadyExists(() => nameTaken(input.username)))
          }),

        update: (org, input) =>
          Effect.gen(function* () {
            const problem = orgFieldsProblem(input)
            if (problem !== undefined) return yield* invalid(problem)
            // orgValues never renames, so the name's unique index cannot refuse this update.
            return yield* Effect.orDie(users.update(org.id, orgValues(input)))
          }),

        // Teams and memberships go with the org row (ON DELETE CASCADE).
        remove: (org) =>
          Effect.gen(function* () {
            if ((yield* repositories.countOwnedBy(org)) > 0) {
              return yield* Errors.validationFailed(
                `organization still has ownership of repositories [uid: ${org.id}]: delete or transfer them first`
              )
            }
            // Forgejo's ErrUserOwnPackages: an organization's packages are never purged with it.
            if (yield* packages.ownerHasPackages(org.id)) {
              return yield* Errors.validationFailed(
                `organization still has ownership of packages [uid: ${org.id}]: delete them first`
              )
            }
            yield* accounts.remove(org)
          }),

        list: (filter, page) => repo.listOrgs(filter, page),
        repoOwnersFor: (user) =>
          Effect.gen(function* () {
            const { rows } = yield* repo.listOrgsOfUser(
              user.id,
              false,
              { visibilities: [], all: true },
              { limit: 1000, offset: 0 }
            )
            const allowed = yield* Effect.forEach(rows, (org) => policy.canCreateOrgRepo(org, user))
            return rows.filter((_, i) => allowed[i])
          }),
        listOfUser: (user, publicOnly, filter, page) => repo.listOrgsOfUser(user.id, publicOnly, filter, page),
        members: (org, options, page) => repo.listMembers(org.id, options, page),
        visibleMembers: (org, viewer, page) =>
          Effect.gen(function* () {
            const insider = viewer !== undefined && (viewer.user.isAdmin || (yield* policy.isMember(org, viewer.user)))
            const publicOnlyToken = viewer?.scopes?.publicOnly === true
            const options: { publicOnly: boolean; users: OrgFilter } = insider
              ? {
                  publicOnly: false,
                  users: publicOnlyToken ? { visibilities: ["public"] } : { visibilities: [], all: true }
                }
              : {
                  publicOnly: true,
                  users: {
                    visibilities: visibility.visibleLevels(viewer),
                    memberId: viewer !== undefined && !publicOnlyToken ? viewer.user.id : undefined
                  }
                }
            return yield* repo.listMembers(org.id, options, page)
          }),
        membership: (org, user) => repo.membership(org.id, user.id),
        setMembershipPublic: (org, user, isPublic) =>
          Effect.gen(function* () {
            if (Option.isNone(yield* repo.membership(org.id, user.id))) return yield* Errors.notFound()
            yield* repo.setMembershipPublic(org.id, user.id, isPublic)
          }),
        removeMember: (org, user) =>
          transaction(
            Effect.gen(function* () {
              yield* guardLastOwner(org.id, user)
              yield* repo.removeOrgMember(org.id, user.id)
            })
          ),

        getTeam: (id) =>
          /^\d{1,15}$/.test(id)
            ? Effect.flatMap(
                repo.findTeam(Number(id)),
                Option.match({
                  onNone: () => Effect.fail(Errors.notFound()),
                  onSome: Effect.succeed
                })
              )
            : Effect.fail(Errors.notFound()),
        listTeams: (org, page) => repo.listTeams(org.id, page),

        createTeam: (org, input) =>
          Effect.gen(function* () {
            const problem = teamNameProblem(input.name) ?? maxSize("Description", input.description, 255)
            if (problem !== undefined) return yield* invalid(problem)
            const access = yield* resolveAccess(input, undefined)
            if (Option.isSome(yield* repo.findTeamByName(org.id, input.name))) {
              return yield* Effect.fail(teamTaken(org, input.name))
            }
            return yield* repo
              .insertTeam(org.id, {
                name: input.name,
                description: input.description ?? "",
                includesAllRepositories: input.includes_all_repositories ?? false,
                canCreateOrgRepo: input.can_create_org_repo ?? false,
                permission: access.permission ?? "none",
                units: access.units ?? {}
              })
              .pipe(onAlreadyExists(() => teamTaken(org, input.name)))
          }),

        updateTeam: (team, input) =>
          Effect.gen(function* () {
            const isOwnerTeam = team.permission === "owner"
            const values: { -readonly [K in keyof TeamWrite]: TeamWrite[K] } = {}
            if (input.name !== undefined && input.name !== "" && input.name !== team.name) {
              // Owners are found by this team: it keeps its name (Forgejo's UI refuses it too).
              if (isOwnerTeam) return yield* invalid(`the ${team.name} team cannot be renamed`)
              const problem = teamNameProblem(input.name)
              if (problem !== undefined) return yield* invalid(problem)
              const existing = yield* repo.findTeamByName(team.orgId, input.name)
              if (Option.isSome(existing) && existing.value.id !== team.id) {
                return yield* invalid(`team already exists [org_id: ${team.orgId}, name: ${input.name.toLowerCase()}]`)
              }
              values.name = input.name
            }
            if (input.description !== undefined) {
              const problem = maxSize("Description", input.description, 255)
              if (problem !== undefined) return yield* invalid(problem)
              values.description = input.description
            }
            // The owner team always reaches every repository, with every right; the option is ignored.
            if (!isOwnerTeam) {
              if (input.can_create_org_repo !== undefined) values.canCreateOrgRepo = input.can_create_org_repo
              if (input.includes_all_repositories !== undefined) {
                values.includesAllRepositories = input.includes_all_repositories
              }
              const access = yield* resolveAccess(input, team)
              if (access.permission !== undefined) values.permission = access.permission
              if (access.units !== undefined) values.units = access.units
            }
            return yield* repo
              .updateTeam(team.id, values)
              .pipe(
                Effect.catchTag("AlreadyExists", () =>
                  invalid(`team already exists [org_id: ${team.orgId}, name: ${(input.name ?? "").toLowerCase()}]`)
                )
              )
          }),

        deleteTeam: (team) =>
          team.permission === "owner"
            ? invalid(`the ${team.name} team cannot be deleted: it holds the organization's owners`)
            : transaction(repo.deleteTeam(team)),

        teamMembers: (team, page) => repo.listTeamMembers(team.id, page),
        isTeamMember: (team, user) => repo.isTeamMember(team.id, user.id),
        addTeamMember: (team, user) =>
          user.type === "organization"
            ? invalid(`an organization cannot be a team member [name: ${user.name}]`)
            : transaction(repo.addTeamMember(team, user.id)),
        removeTeamMember: (team, user) =>
          transaction(
            Effect.gen(function* () {
              if (team.permission === "owner") yield* guardLastOwner(team.orgId, user)
              yield* repo.removeTeamMember(team, user.id)
            })
          ),

        teamRepos: (team, page) => repo.listTeamRepos(team, page),
        teamHasRepo: (team, target) =>
          target.ownerId !== team.orgId
            ? Effect.succeed(false)
            : team.includesAllRepositories
              ? Effect.succeed(true)
              : Effect.map(repo.teamRepoIds(team.id), (ids) => ids.has(target.id)),
        addTeamRepo: (team, target) =>
          target.ownerId !== team.orgId
            ? invalid("repository does not belong to team's organization")
            : repo.addTeamRepo(team.id, target.id),
        removeTeamRepo: (team, target) =>
          team.includesAllRepositories ? Effect.void : repo.removeTeamRepo(team.id, target.id),
        teamsOfRepo: (org, target) => repo.teamsOfRepo(org.id, target.id),
        teamByName: (org, name) =>
          Effect.flatMap(repo.findTeamByName(org.id, name), (found) =>
            Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound())
          ),
        searchTeams: (org, options, page) => repo.searchTeams(org.id, options, page),
        teamsOfUser: (user, page) => repo.teamsOfUserEverywhere(user.id, page),
        permissionsOf: (org, user) =>
          Effect.map(repo.teamsOfUser(org.id, user.id), (teams) => ({
            level: teams.reduce<AccessMode>(
              (best, t) => (accessRank(t.permission) > accessRank(best) ? t.permission : best),
              "none"
            ),
            canCreateRepository: teams.some((t) => t.permission === "owner" || t.canCreateOrgRepo)
          }))
      })
    })
  )
}

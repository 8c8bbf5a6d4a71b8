// SQL for organizations: org rows live in `users` (type 1); teams, team members and org members.
// `org_users` is kept as the union of the org's team memberships (plus the public flag).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"
import type { AccessMode } from "../lib/AccessMode.ts"
import { type RepoRow, toRepoRow } from "../repos/Repo.ts"
import { toUserRow, type UserRow, type Visibility } from "../users/Repo.ts"

export interface TeamRow {
  readonly id: number
  readonly orgId: number
  readonly name: string
  readonly lowerName: string
  readonly description: string
  readonly permission: AccessMode
  readonly includesAllRepositories: boolean
  readonly canCreateOrgRepo: boolean
  /** Unit key → access mode, for teams below admin (admin and owner teams reach every unit). */
  readonly units: Readonly<Record<string, AccessMode>>
  readonly createdAt: Date
}

type Row = Record<string, any>

const parseUnits = (text: string): Record<string, AccessMode> => {
  if (text === "") return {}
  try {
    const parsed = JSON.parse(text)
    return typeof parsed === "object" && parsed !== null ? parsed : {}
  } catch {
    return {}
  }
}

const toTeamRow = (r: Row): TeamRow => ({
  id: Number(r.id),
  orgId: Number(r.org_id),
  name: r.name,
  lowerName: r.lower_name,
  description: r.description,
  permission: r.permission,
  includesAllRepositories: r.includes_all_repositories,
  canCreateOrgRepo: r.can_create_org_repo,
  units: parseUnits(r.units),
  createdAt: r.created_at
})

export interface TeamWrite {
  readonly name?: string
  readonly description?: string
  readonly permission?: AccessMode
  readonly includesAllRepositories?: boolean
  readonly canCreateOrgRepo?: boolean
  readonly units?: Readonly<Record<string, AccessMode>>
}

const teamColumns = (values: TeamWrite): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  if (values.name !== undefined) {
    out.name = values.name
    out.lower_name = values.name.toLowerCase()
  }
  if (values.description !== undefined) out.description = values.description
  if (values.permission !== undefined) out.permission = values.permission
  if (values.includesAllRepositories !== undefined) out.includes_all_repositories = values.includesAllRepositories
  if (values.canCreateOrgRepo !== undefined) out.can_create_org_repo = values.canCreateOrgRepo
  if (values.units !== undefined) out.units = Object.keys(values.units).length === 0 ? "" : JSON.stringify(values.units)
  return out
}

/** Which accounts a list shows: these visibilities, plus orgs `memberId` belongs to. */
export interface OrgFilter {
  readonly visibilities: ReadonlyArray<Visibility>
  /** Also include any org this user is a member of, whatever its visibility. */
  readonly memberId?: number | undefined
  /** Everything (site admins). */
  readonly all?: boolean | undefined
}

export interface Paging {
  readonly limit: number
  readonly offset: number
}

export interface Listed<A> {
  readonly rows: Array<A>
  readonly total: number
}

export class OrgsRepo extends Context.Service<
  OrgsRepo,
  {
    /** Orgs a viewer may see, by name. */
    readonly listOrgs: (filter: OrgFilter, page: Paging) => Effect.Effect<Listed<UserRow>>
    /** Orgs `userId` belongs to (only publicly when `publicOnly`), narrowed by `filter`. */
    readonly listOrgsOfUser: (
      userId: number,
      publicOnly: boolean,
      filter: OrgFilter,
      page: Paging
    ) => Effect.Effect<Listed<UserRow>>
    /** Members of an org (only public ones when `publicOnly`); `users` narrows by user visibility. */
    readonly listMembers: (
      orgId: number,
      options: { readonly publicOnly: boolean; readonly users: OrgFilter },
      page: Paging
    ) => Effect.Effect<Listed<UserRow>>
    /** The membership row, if the user belongs to the org. */
    readonly membership: (orgId: number, userId: number) => Effect.Effect<Option.Option<{ isPublic: boolean }>>
    readonly setMembershipPublic: (orgId: number, userId: number, isPublic: boolean) => Effect.Effect<void>

    readonly findTeam: (id: number) => Effect.Effect<Option.Option<TeamRow>>
    /** The repositories given to a team that does not include all of its organization's. */
    readonly teamRepoIds: (teamId: number) => Effect.Effect<ReadonlySet<number>>
    readonly addTeamRepo: (teamId: number, repoId: number) => Effect.Effect<void>
    readonly removeTeamRepo: (teamId: number, repoId: number) => Effect.Effect<void>
    /**
     * The repositories a team reaches, by name: every repository of its organization when it
     * includes all of them (Forgejo fills `team_repo` for those; Hearth does not), else those given to it.
     */
    readonly listTeamRepos: (team: TeamRow, page: Paging) => Effect.Effect<Listed<RepoRow>>
    /** The teams of `orgId` reaching `repoId`, the owner team first, then by name (Forgejo's `GetRepoTeams`). */
    readonly teamsOfRepo: (orgId: number, repoId: number) => Effect.Effect<Array<TeamRow>>
    /**
     * The teams of `orgId` whose name (or description, with `includeDesc`) contains `keyword`,
     * among those `memberId` belongs to when given (Forgejo's `SearchTeam`).
     */
    readonly searchTeams: (
      orgId: number,
      options: { readonly keyword: string; readonly includeDesc: boolean; readonly memberId: number | undefined },
      page: Paging
    ) => Effect.Effect<Listed<TeamRow>>
    /** Every team `userId` belongs to, in any organization, by organization then team name. */
    readonly teamsOfUserEverywhere: (userId: number, page: Paging) => Effect.Effect<Listed<TeamRow>>
    readonly findTeamByName: (orgId: number, name: string) => Effect.Effect<Option.Option<TeamRow>>
    readonly ownerTeam: (orgId: number) => Effect.Effect<Option.Option<TeamRow>>
    readonly listTeams: (orgId: number, page: Paging) => Effect.Effect<Listed<TeamRow>>
    /** The teams of `orgId` that `userId` is in. */
    readonly teamsOfUser: (orgId: number, userId: number) => Effect.Effect<Array<TeamRow>>
    readonly insertTeam: (
      orgId: number,
      values: TeamWrite & { readonly name: string; readonly permission: AccessMode }
    ) => Effect.Effect<TeamRow, AlreadyExists>
    readonly updateTeam: (id: number, values: TeamWrite) => Effect.Effect<TeamRow, AlreadyExists>
    /** Deletes a team and drops org memberships no other team of the org carries. */
    readonly deleteTeam: (team: TeamRow) => Effect.Effect<void>
    /** Locks the team row until the transaction ends (serializes member changes of one team). */
    readonly lockTeam: (id: number) => Effect.Effect<void>

    readonly listTeamMembers: (teamId: number, page: Paging) => Effect.Effect<Listed<UserRow>>
    readonly countTeamMembers: (teamId: number) => Effect.Effect<number>
    readonly isTeamMember: (teamId: number, userId: number) => Effect.Effect<boolean>
    /** Adds a user to a team and to the org (no-op when already there). */
    readonly addTeamMember: (team: TeamRow, userId: number) => Effect.Effect<void>
    /** Removes a user from a team, and from the org when no other team of it remains. */
    readonly removeTeamMember: (team: TeamRow, userId: number) => Effect.Effect<void>
    /** Removes a user from every team of the org and from the org. */
    readonly removeOrgMember: (orgId: number, userId: number) => Effect.Effect<void>
  }
>()("hearth/orgs/OrgsRepo") {
  static readonly layer = Layer.effect(
    OrgsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const oneTeam = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullishOr(rows[0]), toTeamRow)

      /** The SQL condition selecting accounts (alias `u`) a filter lets through. */
      const visibleCondition = (filter: OrgFilter): Fragment => {
        if (filter.all === true) return sql`true`
        const levels = filter.visibilities.length > 0 ? sql`u.visibility IN ${sql.in(filter.visibilities)}` : sql`false`
        if (filter.memberId === undefined) return levels
        return sql`(${levels} OR u.id = ${filter.memberId} OR EXISTS (
          SELECT 1 FROM org_users m WHERE m.org_id = u.id AND m.user_id = ${filter.memberId}))`
      }

      const listed = (where: Fragment, from: Fragment, page: Paging, order: string) =>
        Effect.gen(function* () {
          const [count] = yield* sql`SELECT count(*) AS n FROM ${from} WHERE ${where}`
          const rows = yield* sql`SELECT u.* FROM ${from} WHERE ${where}
            ORDER BY ${sql.literal(order)} LIMIT ${page.limit} OFFSET ${page.offset}`
          return { rows: rows.map(toUserRow), total: Number(count!.n) }
        })

      // Drops org memberships of these users that no team of the org carries any more.
      const pruneMemberships = (orgId: number, userIds: ReadonlyArray<number>) =>
        userIds.length === 0
          ? Effect.void
          : Effect.asVoid(sql`DELETE FROM org_users o
          WHERE o.org_id = ${orgId} AND o.user_id IN ${sql.in(userIds)}
            AND NOT EXISTS (SELECT 1 FROM team_users t WHERE t.org_id = o.org_id AND t.user_id = o.user_id)`)

      return OrgsRepo.of(
        sqlBoundary({
          listOrgs: (filter, page) =>
            listed(sql`u.type = 1 AND ${visibleCondition(filter)}`, sql`users u`, page, "u.lower_name ASC"),
          listOrgsOfUser: (userId, publicOnly, filter, page) =>
            listed(
              sql.and([
                sql`u.type = 1`,
                sql`o.user_id = ${userId}`,
                publicOnly ? sql`o.is_public` : sql`true`,
                visibleCondition(filter)
              ]),
              sql`users u JOIN org_users o ON o.org_id = u.id`,
              page,
              "u.lower_name ASC"
            ),
          listMembers: (orgId, options, page) =>
            listed(
              sql.and([
                sql`o.org_id = ${orgId}`,
                options.publicOnly ? sql`o.is_public` : sql`true`,
                visibleCondition(options.users)
              ]),
              sql`users u JOIN org_users o ON o.user_id = u.id`,
              page,
              "u.lower_name ASC"
            ),
          membership: (orgId, userId) =>
            Effect.map(sql`SELECT is_public FROM org_users WHERE org_id = ${orgId} AND user_id = ${userId}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (r) => ({ isPublic: Boolean(r.is_public) }))
            ),
          setMembershipPublic: (orgId, userId, isPublic) =>
            Effect.asVoid(sql`UPDATE org_users SET is_public = ${isPublic}
            WHERE org_id = ${orgId} AND user_id = ${userId}`),

          teamRepoIds: (teamId) =>
            Effect.map(
              sql`SELECT repo_id FROM team_repos WHERE team_id = ${teamId}`,
              (rows) => new Set(rows.map((r) => Number(r.repo_id)))
            ),
          addTeamRepo: (teamId, repoId) =>
            Effect.asVoid(
              sql`INSERT INTO team_repos (team_id, repo_id) VALUES (${teamId}, ${repoId}) ON CONFLICT DO NOTHING`
            ),
          removeTeamRepo: (teamId, repoId) =>
            Effect.asVoid(sql`DELETE FROM team_repos WHERE team_id = ${teamId} AND repo_id = ${repoId}`),
          listTeamRepos: (team, page) =>
            Effect.gen(function* () {
              const where = team.includesAllRepositories
                ? sql`r.owner_id = ${team.orgId}`
                : sql`r.owner_id = ${team.orgId} AND r.id IN (SELECT repo_id FROM team_repos WHERE team_id = ${team.id})`
              const [count] = yield* sql`SELECT count(*) AS n FROM repositories r WHERE ${where}`
              const rows = yield* sql`SELECT r.* FROM repositories r WHERE ${where}
              ORDER BY r.lower_name ASC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toRepoRow), total: Number(count!.n) }
            }),
          teamsOfRepo: (orgId, repoId) =>
            Effect.map(
              sql`SELECT t.* FROM teams t WHERE t.org_id = ${orgId} AND (t.includes_all_repositories
                OR EXISTS (SELECT 1 FROM team_repos x WHERE x.team_id = t.id AND x.repo_id = ${repoId}))
              ORDER BY CASE WHEN t.permission = 'owner' THEN 0 ELSE 1 END, t.lower_name`,
              (rows) => rows.map(toTeamRow)
            ),
          searchTeams: (orgId, options, page) =>
            Effect.gen(function* () {
              const like = `%${options.keyword.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c)}%`
              const where = sql.and([
                sql`t.org_id = ${orgId}`,
                options.keyword === ""
                  ? sql`true`
                  : options.includeDesc
                    ? sql`(t.lower_name LIKE ${like} OR lower(t.description) LIKE ${like})`
                    : sql`t.lower_name LIKE ${like}`,
                options.memberId === undefined
                  ? sql`true`
                  : sql`EXISTS (SELECT 1 FROM team_users m WHERE m.team_id = t.id AND m.user_id = ${options.memberId})`
              ])
              const [count] = yield* sql`SELECT count(*) AS n FROM teams t WHERE ${where}`
              const rows = yield* sql`SELECT t.* FROM teams t WHERE ${where}
              ORDER BY t.lower_name ASC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toTeamRow), total: Number(count!.n) }
            }),
          teamsOfUserEverywhere: (userId, page) =>
            Effect.gen(function* () {
              const from = sql`teams t JOIN team_users m ON m.team_id = t.id JOIN users o ON o.id = t.org_id`
              const [count] = yield* sql`SELECT count(*) AS n FROM ${from} WHERE m.user_id = ${userId}`
              const rows = yield* sql`SELECT t.* FROM ${from} WHERE m.user_id = ${userId}
              ORDER BY o.lower_name ASC, t.lower_name ASC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toTeamRow), total: Number(count!.n) }
            }),
          findTeam: (id) => Effect.map(sql`SELECT * FROM teams WHERE id = ${id}`, oneTeam),
          findTeamByName: (orgId, name) =>
            Effect.map(
              sql`SELECT * FROM teams WHERE org_id = ${orgId} AND lower_name = ${name.toLowerCase()}`,
              oneTeam
            ),
          ownerTeam: (orgId) =>
            Effect.map(
              sql`SELECT * FROM teams WHERE org_id = ${orgId} AND permission = 'owner' ORDER BY id LIMIT 1`,
              oneTeam
            ),
          listTeams: (orgId, page) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM teams WHERE org_id = ${orgId}`
              const rows = yield* sql`SELECT * FROM teams WHERE org_id = ${orgId}
              ORDER BY lower_name ASC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toTeamRow), total: Number(count!.n) }
            }),
          teamsOfUser: (orgId, userId) =>
            Effect.map(
              sql`SELECT t.* FROM teams t JOIN team_users m ON m.team_id = t.id
              WHERE t.org_id = ${orgId} AND m.user_id = ${userId} ORDER BY t.lower_name`,
              (rows) => rows.map(toTeamRow)
            ),
          insertTeam: (orgId, values) =>
            uniqueViolation(
              Effect.map(
                sql`INSERT INTO teams ${sql.insert({ org_id: orgId, ...teamColumns(values) })} RETURNING *`,
                (rows) => toTeamRow(rows[0]!)
              )
            ),
          updateTeam: (id, values) => {
            const set = teamColumns(values)
            if (Object.keys(set).length === 0) {
              return Effect.map(sql`SELECT * FROM teams WHERE id = ${id}`, (rows) => toTeamRow(rows[0]!))
            }
            return uniqueViolation(
              Effect.map(sql`UPDATE teams SET ${sql.update(set)} WHERE id = ${id} RETURNING *`, (rows) =>
                toTeamRow(rows[0]!)
              )
            )
          },
          deleteTeam: (team) =>
            Effect.gen(function* () {
              const members = yield* sql`DELETE FROM team_users WHERE team_id = ${team.id} RETURNING user_id`
              yield* sql`DELETE FROM teams WHERE id = ${team.id}`
              yield* pruneMemberships(
                team.orgId,
                members.map((r) => Number(r.user_id))
              )
            }),
          lockTeam: (id) => Effect.asVoid(sql`SELECT id FROM teams WHERE id = ${id} FOR UPDATE`),

          listTeamMembers: (teamId, page) =>
            listed(
              sql`m.team_id = ${teamId}`,
              sql`users u JOIN team_users m ON m.user_id = u.id`,
              page,
              "u.lower_name ASC"
            ),
          countTeamMembers: (teamId) =>
            Effect.map(sql`SELECT count(*) AS n FROM team_users WHERE team_id = ${teamId}`, (rows) =>
              Number(rows[0]!.n)
            ),
          isTeamMember: (teamId, userId) =>
            Effect.map(
              sql`SELECT 1 FROM team_users WHERE team_id = ${teamId} AND user_id = ${userId}`,
              (rows) => rows.length > 0
            ),
          addTeamMember: (team, userId) =>
            Effect.gen(function* () {
              yield* sql`INSERT INTO team_users (team_id, user_id, org_id) VALUES (${team.id}, ${userId}, ${team.orgId})
              ON CONFLICT DO NOTHING`
              yield* sql`INSERT INTO org_users (org_id, user_id) VALUES (${team.orgId}, ${userId}) ON CONFLICT DO NOTHING`
            }),
          removeTeamMember: (team, userId) =>
            Effect.gen(function* () {
              yield* sql`DELETE FROM team_users WHERE team_id = ${team.id} AND user_id = ${userId}`
              yield* pruneMemberships(team.orgId, [userId])
            }),
          removeOrgMember: (orgId, userId) =>
            Effect.gen(function* () {
              yield* sql`DELETE FROM team_users WHERE org_id = ${orgId} AND user_id = ${userId}`
              yield* sql`DELETE FROM org_users WHERE org_id = ${orgId} AND user_id = ${userId}`
            })
        })
      )
    })
  )
}

// SQL for repositories and their collaborators. Rules live in Service.ts and Policy.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"
import { jsonRows } from "../db/JsonRows.ts"
import type { Page } from "../http/Pagination.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"

export interface RepoRow {
  readonly id: number
  readonly ownerId: number
  readonly name: string
  readonly lowerName: string
  readonly description: string
  readonly website: string
  readonly originalUrl: string
  readonly defaultBranch: string
  readonly objectFormatName: "sha1" | "sha256"
  readonly isPrivate: boolean
  readonly isEmpty: boolean
  readonly isArchived: boolean
  readonly isTemplate: boolean
  readonly isFork: boolean
  readonly forkId: number | null
  readonly isMirror: boolean
  readonly size: number
  readonly numStars: number
  readonly numForks: number
  readonly numWatches: number
  readonly numIssues: number
  readonly numClosedIssues: number
  readonly numPulls: number
  readonly numClosedPulls: number
  readonly numReleases: number
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly archivedAt: Date | null
  /** Go duration text ("8h0m0s"); empty unless set by PATCH. */
  readonly mirrorInterval: string
  readonly enablePrune: boolean
  readonly units: RepoUnits
  readonly pulls: PullSettings
  /** The internal tracker's settings; null: not set, the `[service]` default applies (migration 0022). */
  readonly tracker: TrackerSettings
  /** `ready`, or `creating` while a job (a fork) is still filling its git data. */
  readonly status: "ready" | "creating" | "broken" | "pending_transfer"
  /** Topic names, most used first (kept by src/topics). */
  readonly topics: ReadonlyArray<string>
  /** The largest language of the default branch, "" until counted (kept by src/languages). */
  readonly primaryLanguage: string
  /** The sha256 of the uploaded avatar in the blob storage (src/avatars); "" when none. */
  readonly avatar: string
}

/** The unit switches of EditRepoOption that Hearth stores. */
export interface RepoUnits {
  readonly hasIssues: boolean
  readonly hasWiki: boolean
  readonly hasPullRequests: boolean
  readonly hasProjects: boolean
  readonly hasReleases: boolean
  readonly hasPackages: boolean
  readonly hasActions: boolean
}

/** Forgejo's merge styles (models/repo/pull.go `MergeStyle`). */
export const MERGE_STYLES = [
  "merge",
  "rebase",
  "rebase-merge",
  "squash",
  "fast-forward-only",
  "manually-merged",
  "rebase-update-only"
] as const
/** Forgejo's update styles (`UpdateStyle`). */
export const UPDATE_STYLES = ["merge", "rebase"] as const

/** Forgejo's `IssuesConfig` of the issues unit (InternalTracker); null: the `[service]` default. */
export interface TrackerSettings {
  readonly enableTimeTracker: boolean | null
  readonly allowOnlyContributorsToTrackTime: boolean | null
  readonly enableIssueDependencies: boolean | null
}

/** The pull request settings (Forgejo's `PullRequestsConfig` of the pulls unit; migration 0014). */
export interface PullSettings {
  readonly ignoreWhitespaceConflicts: boolean
  readonly allowMerge: boolean
  readonly allowRebase: boolean
  readonly allowRebaseMerge: boolean
  readonly allowSquash: boolean
  readonly allowFastForwardOnly: boolean
  readonly allowManualMerge: boolean
  readonly autodetectManualMerge: boolean
  readonly allowRebaseUpdate: boolean
  readonly defaultDeleteBranchAfterMerge: boolean
  readonly defaultMergeStyle: string
  readonly defaultUpdateStyle: string
  readonly defaultAllowMaintainerEdit: boolean
  /**
   * Hearth's own switch beside Forgejo's: retarget the pull requests based on a merged pull
   * request's head branch when it is deleted (the instance's RETARGET_CHILDREN_ON_MERGE too; 0028).
   */
  readonly retargetChildrenOnMerge: boolean
}

/** Columns PATCH /repos/{o}/{r} may change. */
export interface RepoChanges {
  readonly name?: string
  readonly lower_name?: string
  readonly description?: string
  readonly website?: string
  readonly is_private?: boolean
  readonly is_template?: boolean
  readonly default_branch?: string
  readonly is_archived?: boolean
  readonly archived_at?: Date | null
  readonly enable_prune?: boolean
  readonly mirror_interval?: string
  readonly has_issues?: boolean
  readonly has_wiki?: boolean
  readonly has_pull_requests?: boolean
  readonly has_projects?: boolean
  readonly has_releases?: boolean
  readonly has_packages?: boolean
  readonly has_actions?: boolean
  readonly ignore_whitespace_conflicts?: boolean
  readonly allow_merge_commits?: boolean
  readonly allow_rebase?: boolean
  readonly allow_rebase_explicit?: boolean
  readonly allow_squash_merge?: boolean
  readonly allow_fast_forward_only_merge?: boolean
  readonly allow_manual_merge?: boolean
  readonly autodetect_manual_merge?: boolean
  readonly allow_rebase_update?: boolean
  readonly default_delete_branch_after_merge?: boolean
  readonly default_merge_style?: string
  readonly default_update_style?: string
  readonly default_allow_maintainer_edit?: boolean
  readonly retarget_children_on_merge?: boolean
  readonly enable_time_tracker?: boolean
  readonly allow_only_contributors_to_track_time?: boolean
  readonly enable_issue_dependencies?: boolean
  readonly avatar?: string
}

/** A collaborator: the user row and its level. */
export interface Collaborator {
  readonly user: UserRow
  readonly mode: CollaboratorMode
}

/** GET /repos/search, resolved (names to ids, modes checked). */
export interface RepoSearch {
  readonly filter: RepoFilter
  /** Lower-cased keywords, OR'ed; a keyword with one "/" also matches owner/name. */
  readonly keywords: ReadonlyArray<string>
  /** `topic=true`: the keywords match exact topic names only (not names, not parts of topics). */
  readonly topicOnly?: boolean | undefined
  readonly ownerId?: number | undefined
  readonly exclusive: boolean
  readonly isPrivate?: boolean | undefined
  readonly mode?: "fork" | "source" | "mirror" | "collaborative" | undefined
  readonly starredBy?: number | undefined
  readonly template?: boolean | undefined
  readonly archived?: boolean | undefined
  readonly sort: RepoSearchSort
  readonly desc: boolean
}

export const REPO_SEARCH_SORTS = [
  "alpha",
  "created",
  "updated",
  "size",
  "git_size",
  "lfs_size",
  "id",
  "stars",
  "forks"
] as const
export type RepoSearchSort = (typeof REPO_SEARCH_SORTS)[number] | "name"

export type CollaboratorMode = "read" | "write" | "admin"

export type NewRepo = {
  readonly owner_id: number
  readonly name: string
  readonly lower_name: string
  readonly description: string
  readonly default_branch: string
  readonly is_private: boolean
  readonly is_template?: boolean
  readonly is_fork?: boolean
  readonly fork_id?: number
  readonly is_empty?: boolean
  readonly status?: RepoRow["status"]
}

/** Which repositories of a list the viewer may see. */
export interface RepoFilter {
  /** Everything (site admins). */
  readonly all?: boolean
  /** Public repositories count (false for none, e.g. never). */
  readonly publicOwners: ReadonlyArray<"public" | "limited" | "private">
  /** A signed-in viewer: its own, collaborations and team repos are visible as well. */
  readonly viewerId?: number | undefined
  /** Public-only tokens: private repositories are never listed. */
  readonly publicOnly?: boolean
}

// A viewer's reach inside an org: a team that covers every repository (owner teams do).
const teamReachOf = (sql: SqlClient, userId: number) =>
  sql`r.owner_id IN (SELECT t.org_id FROM teams t JOIN team_users tu ON tu.team_id = t.id
    WHERE tu.user_id = ${userId} AND (t.includes_all_repositories OR t.permission = 'owner'))`

/**
 * The condition `filter` puts on a repository `r` joined with its owner `o`: the one rule of which
 * repositories a viewer may see in a list (searches, an owner's list, the activity feeds). A
 * viewer reaches its own, its collaborations, every repository of an organization through a team
 * that covers them all, and the ones given to its teams (Forgejo's `AccessibleRepoIDsQuery`).
 * Uncorrelated `IN (subquery)` forms throughout: PostgreSQL evaluates each once (a hashed subplan)
 * instead of probing per repository, which keeps searches over many rows fast.
 */
export const visibleRepoCondition = (sql: SqlClient, filter: RepoFilter) => {
  if (filter.all === true) return sql`TRUE`
  const publicRepos =
    filter.publicOwners.length === 0
      ? sql`FALSE`
      : sql`(NOT r.is_private AND o.visibility IN ${sql.in(filter.publicOwners)})`
  if (filter.viewerId === undefined) return publicRepos
  const id = filter.viewerId
  const reach = sql`(r.owner_id = ${id}
    OR r.id IN (SELECT c.repo_id FROM collaborations c WHERE c.user_id = ${id})
    OR ${teamReachOf(sql, id)}
    OR r.id IN (SELECT tr.repo_id FROM team_repos tr JOIN team_users tu ON tu.team_id = tr.team_id
      WHERE tu.user_id = ${id})
    OR (NOT r.is_private AND r.owner_id IN (SELECT org_id FROM org_users WHERE user_id = ${id})))`
  return filter.publicOnly === true
    ? sql`(NOT r.is_private AND (${publicRepos} OR ${reach}))`
    : sql`(${publicRepos} OR ${reach})`
}

/** `order_by` of GET /user/repos (Forgejo's OrderByFlatMap plus `name` and `id`). */
export const REPO_ORDERS = [
  "name",
  "id",
  "newest",
  "oldest",
  "recentupdate",
  "leastupdate",
  "alphabetically",
  "reversealphabetically",
  "size",
  "reversesize",
  "gitsize",
  "reversegitsize",
  "lfssize",
  "reverselfssize",
  "moststars",
  "feweststars",
  "mostforks",
  "fewestforks"
] as const
export type RepoOrder = (typeof REPO_ORDERS)[number]

// Hearth keeps one size (git); LFS sizes are all zero, so those orders fall back to the id.
const ORDER_SQL: Record<RepoOrder, string> = {
  name: "r.lower_name ASC",
  id: "r.id ASC",
  newest: "r.created_at DESC",
  oldest: "r.created_at ASC",
  recentupdate: "r.updated_at DESC",
  leastupdate: "r.updated_at ASC",
  alphabetically: "r.lower_name ASC",
  reversealphabetically: "r.lower_name DESC",
  size: "r.size ASC",
  reversesize: "r.size DESC",
  gitsize: "r.size ASC",
  reversegitsize: "r.size DESC",
  lfssize: "r.id ASC",
  reverselfssize: "r.id ASC",
  moststars: "r.num_stars DESC",
  feweststars: "r.num_stars ASC",
  mostforks: "r.num_forks DESC",
  fewestforks: "r.num_forks ASC"
}

// Hearth keeps one size (git); LFS sizes are all zero, so that sort falls back to the id.
const SEARCH_ORDER_SQL: Record<RepoSearchSort, ReadonlyArray<string>> = {
  name: ["r.lower_name"],
  alpha: ["o.lower_name", "r.lower_name"],
  created: ["r.created_at"],
  updated: ["r.updated_at"],
  size: ["r.size"],
  git_size: ["r.size"],
  lfs_size: ["r.id"],
  id: ["r.id"],
  stars: ["r.num_stars"],
  forks: ["r.num_forks"]
}

/** `%term%` with LIKE's own wildcards escaped. */
const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** A page of search results with their owners (fetched in one query, not one per row). */
export interface SearchPage extends Listed<RepoRow> {
  readonly owners: ReadonlyMap<number, UserRow>
}

export interface Listed<A> {
  readonly rows: Array<A>
  readonly total: number
}

type Row = Record<string, any>

/** A repository row's timestamps. */
const REPO_DATES = ["created_at", "updated_at", "archived_at"]

export const toRepoRow = (r: Row): RepoRow => ({
  id: Number(r.id),
  ownerId: Number(r.owner_id),
  name: r.name,
  lowerName: r.lower_name,
  description: r.description,
  website: r.website,
  originalUrl: r.original_url,
  defaultBranch: r.default_branch,
  objectFormatName: r.object_format_name,
  isPrivate: r.is_private,
  isEmpty: r.is_empty,
  isArchived: r.is_archived,
  isTemplate: r.is_template,
  isFork: r.is_fork,
  forkId: r.fork_id === null ? null : Number(r.fork_id),
  isMirror: r.is_mirror,
  size: Number(r.size),
  numStars: Number(r.num_stars),
  numForks: Number(r.num_forks),
  numWatches: Number(r.num_watches),
  numIssues: Number(r.num_issues),
  numClosedIssues: Number(r.num_closed_issues),
  numPulls: Number(r.num_pulls),
  numClosedPulls: Number(r.num_closed_pulls),
  numReleases: Number(r.num_releases),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  archivedAt: r.archived_at ?? null,
  mirrorInterval: r.mirror_interval ?? "",
  enablePrune: r.enable_prune ?? true,
  status: r.status ?? "ready",
  topics: typeof r.topics === "string" ? (JSON.parse(r.topics) as Array<string>) : [],
  primaryLanguage: r.primary_language ?? "",
  avatar: r.avatar ?? "",
  units: {
    hasIssues: r.has_issues ?? true,
    hasWiki: r.has_wiki ?? true,
    hasPullRequests: r.has_pull_requests ?? true,
    hasProjects: r.has_projects ?? true,
    hasReleases: r.has_releases ?? true,
    hasPackages: r.has_packages ?? true,
    hasActions: r.has_actions ?? false
  },
  pulls: {
    ignoreWhitespaceConflicts: r.ignore_whitespace_conflicts ?? false,
    allowMerge: r.allow_merge_commits ?? true,
    allowRebase: r.allow_rebase ?? true,
    allowRebaseMerge: r.allow_rebase_explicit ?? true,
    allowSquash: r.allow_squash_merge ?? true,
    allowFastForwardOnly: r.allow_fast_forward_only_merge ?? true,
    allowManualMerge: r.allow_manual_merge ?? false,
    autodetectManualMerge: r.autodetect_manual_merge ?? false,
    allowRebaseUpdate: r.allow_rebase_update ?? true,
    defaultDeleteBranchAfterMerge: r.default_delete_branch_after_merge ?? false,
    defaultMergeStyle: r.default_merge_style ?? "merge",
    defaultUpdateStyle: r.default_update_style ?? "merge",
    defaultAllowMaintainerEdit: r.default_allow_maintainer_edit ?? false,
    retargetChildrenOnMerge: r.retarget_children_on_merge ?? true
  },
  tracker: {
    enableTimeTracker: r.enable_time_tracker ?? null,
    allowOnlyContributorsToTrackTime: r.allow_only_contributors_to_track_time ?? null,
    enableIssueDependencies: r.enable_issue_dependencies ?? null
  }
})

export class ReposRepo extends Context.Service<
  ReposRepo,
  {
    readonly findByName: (ownerId: number, name: string) => Effect.Effect<Option.Option<RepoRow>>
    readonly findById: (id: number) => Effect.Effect<Option.Option<RepoRow>>
    readonly insert: (values: NewRepo) => Effect.Effect<RepoRow, AlreadyExists>
    readonly remove: (id: number) => Effect.Effect<void>
    readonly setStatus: (id: number, status: RepoRow["status"]) => Effect.Effect<void>
    /** Repositories whose git data a job is still (or was, before a crash) making. */
    readonly beingCreated: Effect.Effect<Array<RepoRow>>
    readonly adjustNumForks: (id: number, delta: number) => Effect.Effect<void>
    /** Every fork of `sourceId`, by id. */
    readonly forksOf: (sourceId: number) => Effect.Effect<Array<RepoRow>>
    /** The fork of `sourceId` that `ownerId` owns, if any. */
    readonly forkOwnedBy: (sourceId: number, ownerId: number) => Effect.Effect<Option.Option<RepoRow>>
    readonly findByIds: (ids: ReadonlyArray<number>) => Effect.Effect<Array<RepoRow>>
    /** The repository an old `owner/name` (renamed or transferred) now is, if any. */
    readonly redirectOf: (ownerId: number, lowerName: string) => Effect.Effect<Option.Option<number>>
    /** Remembers that `owner/name` was `repoId` (replacing an older redirect of that name). */
    readonly addRedirect: (ownerId: number, lowerName: string, repoId: number) => Effect.Effect<void>
    /** A new repository takes the name: the old redirect goes. */
    readonly removeRedirect: (ownerId: number, lowerName: string) => Effect.Effect<void>
    /**
     * Moves the repository from `fromId` to `toId`; none when it is no longer `fromId`'s (another
     * transfer got there first).
     */
    readonly changeOwner: (
      id: number,
      fromId: number,
      toId: number
    ) => Effect.Effect<Option.Option<RepoRow>, AlreadyExists>
    readonly collaboratorMode: (repoId: number, userId: number) => Effect.Effect<Option.Option<CollaboratorMode>>
    /** The user's collaboration levels on several repositories, in one query. */
    readonly collaboratorModes: (
      repoIds: ReadonlyArray<number>,
      userId: number
    ) => Effect.Effect<ReadonlyMap<number, CollaboratorMode>>
    /** Repositories owned by `ownerId` that pass the filter, by id. */
    readonly listOwnedBy: (ownerId: number, filter: RepoFilter, page: Page) => Effect.Effect<Listed<RepoRow>>
    readonly countOwnedBy: (ownerId: number) => Effect.Effect<number>
    /** Lowers the star and watch counters of the repositories `userId` starred or watched (before it is deleted). */
    readonly releaseCountsOfUser: (userId: number) => Effect.Effect<void>
    /** What a push changed: emptiness, size in bytes, default branch; touches updated_at. */
    readonly recordPush: (
      id: number,
      state: { readonly isEmpty: boolean; readonly sizeBytes: number; readonly defaultBranch: string }
    ) => Effect.Effect<void>
    readonly allOwnedBy: (ownerId: number) => Effect.Effect<Array<RepoRow>>
    /** What the user owns, collaborates on, or reaches through an org team, by name. */
    readonly listAccessible: (
      userId: number,
      publicOnly: boolean,
      order: RepoOrder,
      page: Page
    ) => Effect.Effect<Listed<RepoRow>>
    readonly update: (id: number, changes: RepoChanges) => Effect.Effect<RepoRow, AlreadyExists>
    readonly listCollaborators: (repoId: number, page: Page) => Effect.Effect<Listed<Collaborator>>
    readonly setCollaborator: (repoId: number, userId: number, mode: CollaboratorMode) => Effect.Effect<void>
    /** Whether there was one to remove. */
    readonly removeCollaborator: (repoId: number, userId: number) => Effect.Effect<boolean>
    /** One page of GET /repos/search and the total, in two queries. */
    readonly search: (search: RepoSearch, page: Page) => Effect.Effect<SearchPage>
    /**
     * The repositories `filter` lets a viewer see that have the issues unit on (optionally of one
     * owner), with their owner's name: where GET /repos/issues/search looks.
     */
    readonly visibleWithIssues: (
      filter: RepoFilter,
      ownerId: number | undefined
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly name: string; readonly ownerName: string }>>
    /** Runs `effect` in a transaction (the row is only kept when the disk work succeeds). */
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>()("hearth/repos/ReposRepo") {
  static readonly layer = Layer.effect(
    ReposRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullishOr(rows[0]), toRepoRow)
      const oneJson = (rows: ReadonlyArray<Row>) => one(jsonRows(rows, REPO_DATES))

      const teamReach = (userId: number) => teamReachOf(sql, userId)
      const visibleCondition = (filter: RepoFilter) => visibleRepoCondition(sql, filter)

      return ReposRepo.of(
        sqlBoundary({
          // Read on every repository request: the row as one JSON value (src/db/JsonRows.ts).
          findByName: (ownerId, name) =>
            Effect.map(
              sql`SELECT row_to_json(r)::text AS j FROM repositories r
                WHERE owner_id = ${ownerId} AND lower_name = ${name.toLowerCase()}`,
              oneJson
            ),
          findById: (id) =>
            Effect.map(sql`SELECT row_to_json(r)::text AS j FROM repositories r WHERE id = ${id}`, oneJson),
          insert: (values) =>
            uniqueViolation(
              Effect.map(sql`INSERT INTO repositories ${sql.insert(values)} RETURNING *`, (rows) => toRepoRow(rows[0]!))
            ),
          remove: (id) => Effect.asVoid(sql`DELETE FROM repositories WHERE id = ${id}`),
          setStatus: (id, status) => Effect.asVoid(sql`UPDATE repositories SET status = ${status} WHERE id = ${id}`),
          beingCreated: Effect.map(sql`SELECT * FROM repositories WHERE status = 'creating' ORDER BY id`, (rows) =>
            rows.map(toRepoRow)
          ),
          adjustNumForks: (id, delta) =>
            Effect.asVoid(sql`UPDATE repositories SET num_forks = GREATEST(num_forks + ${delta}, 0) WHERE id = ${id}`),
          forksOf: (sourceId) =>
            Effect.map(sql`SELECT * FROM repositories WHERE fork_id = ${sourceId} ORDER BY id`, (rows) =>
              rows.map(toRepoRow)
            ),
          forkOwnedBy: (sourceId, ownerId) =>
            Effect.map(
              sql`SELECT * FROM repositories WHERE fork_id = ${sourceId} AND owner_id = ${ownerId} LIMIT 1`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toRepoRow)
            ),
          redirectOf: (ownerId, lowerName) =>
            Effect.map(
              sql`SELECT repo_id FROM repo_redirects WHERE owner_id = ${ownerId} AND lower_name = ${lowerName}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => Number(r.repo_id))
            ),
          addRedirect: (ownerId, lowerName, repoId) =>
            Effect.asVoid(sql`INSERT INTO repo_redirects (owner_id, lower_name, repo_id) VALUES (${ownerId}, ${lowerName}, ${repoId})
            ON CONFLICT (owner_id, lower_name) DO UPDATE SET repo_id = EXCLUDED.repo_id`),
          removeRedirect: (ownerId, lowerName) =>
            Effect.asVoid(sql`DELETE FROM repo_redirects WHERE owner_id = ${ownerId} AND lower_name = ${lowerName}`),
          changeOwner: (id, fromId, toId) =>
            uniqueViolation(
              Effect.map(
                sql`UPDATE repositories SET owner_id = ${toId}, updated_at = now()
                WHERE id = ${id} AND owner_id = ${fromId} RETURNING *`,
                (rows) => Option.map(Option.fromNullishOr(rows[0]), toRepoRow)
              )
            ),
          findByIds: (ids) =>
            ids.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT * FROM repositories WHERE id = ANY(${ids}::int8[])`, (rows) =>
                  rows.map(toRepoRow)
                ),
          collaboratorMode: (repoId, userId) =>
            Effect.map(sql`SELECT mode FROM collaborations WHERE repo_id = ${repoId} AND user_id = ${userId}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (r) => r.mode as CollaboratorMode)
            ),
          collaboratorModes: (repoIds, userId) =>
            repoIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT repo_id, mode FROM collaborations WHERE user_id = ${userId} AND repo_id = ANY(${repoIds}::int8[])`,
                  (rows) => new Map(rows.map((r) => [Number(r.repo_id), r.mode as CollaboratorMode]))
                ),
          recordPush: (id, state) =>
            Effect.asVoid(sql`UPDATE repositories SET is_empty = ${state.isEmpty}, size = ${state.sizeBytes},
            default_branch = ${state.defaultBranch}, updated_at = now() WHERE id = ${id}`),
          releaseCountsOfUser: (userId) =>
            Effect.andThen(
              sql`UPDATE repositories SET num_stars = GREATEST(num_stars - 1, 0)
              WHERE id IN (SELECT repo_id FROM stars WHERE user_id = ${userId})`,
              sql`UPDATE repositories SET num_watches = GREATEST(num_watches - 1, 0)
              WHERE id IN (SELECT repo_id FROM watches WHERE user_id = ${userId} AND mode <> 'dont')`
            ),
          countOwnedBy: (ownerId) =>
            Effect.map(sql`SELECT count(*) AS n FROM repositories WHERE owner_id = ${ownerId}`, (rows) =>
              Number(rows[0]!.n)
            ),
          allOwnedBy: (ownerId) =>
            Effect.map(sql`SELECT * FROM repositories WHERE owner_id = ${ownerId} ORDER BY id`, (rows) =>
              rows.map(toRepoRow)
            ),
          visibleWithIssues: (filter, ownerId) =>
            Effect.map(
              sql`SELECT r.id, r.name, o.name AS owner_name FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE r.has_issues AND ${visibleCondition(filter)}${ownerId === undefined ? sql`` : sql` AND r.owner_id = ${ownerId}`}`,
              (rows) =>
                rows.map((r) => ({ id: Number(r.id), name: r.name as string, ownerName: r.owner_name as string }))
            ),
          listOwnedBy: (ownerId, filter, page) =>
            Effect.gen(function* () {
              const where = sql`r.owner_id = ${ownerId} AND ${visibleCondition(filter)}`
              const [count] = yield* sql`SELECT count(*) AS n FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE ${where}`
              const rows = yield* sql`SELECT r.* FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE ${where} ORDER BY r.id LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toRepoRow), total: Number(count!.n) }
            }),
          listAccessible: (userId, publicOnly, order, page) =>
            Effect.gen(function* () {
              const where = sql`(r.owner_id = ${userId}
              OR EXISTS (SELECT 1 FROM collaborations c WHERE c.repo_id = r.id AND c.user_id = ${userId})
              OR ${teamReach(userId)})${publicOnly ? sql` AND NOT r.is_private` : sql``}`
              const [count] = yield* sql`SELECT count(*) AS n FROM repositories r WHERE ${where}`
              const rows = yield* sql`SELECT r.* FROM repositories r WHERE ${where}
              ORDER BY ${sql.unsafe(ORDER_SQL[order])}, r.id LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toRepoRow), total: Number(count!.n) }
            }),
          update: (id, changes) =>
            uniqueViolation(
              Effect.map(
                Object.keys(changes).length === 0
                  ? sql`SELECT * FROM repositories WHERE id = ${id}`
                  : sql`UPDATE repositories SET ${sql.update(changes as Record<string, unknown>)}, updated_at = now()
                WHERE id = ${id} RETURNING *`,
                (rows) => toRepoRow(rows[0]!)
              )
            ),
          listCollaborators: (repoId, page) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM collaborations WHERE repo_id = ${repoId}`
              const rows = yield* sql`SELECT u.*, c.mode AS collaboration_mode FROM collaborations c
              JOIN users u ON u.id = c.user_id WHERE c.repo_id = ${repoId}
              ORDER BY u.lower_name LIMIT ${page.limit} OFFSET ${page.offset}`
              return {
                rows: rows.map((r) => ({ user: toUserRow(r), mode: r.collaboration_mode as CollaboratorMode })),
                total: Number(count!.n)
              }
            }),
          setCollaborator: (repoId, userId, mode) =>
            Effect.asVoid(sql`INSERT INTO collaborations (repo_id, user_id, mode) VALUES (${repoId}, ${userId}, ${mode})
            ON CONFLICT (repo_id, user_id) DO UPDATE SET mode = EXCLUDED.mode, updated_at = now()`),
          removeCollaborator: (repoId, userId) =>
            Effect.map(
              sql`DELETE FROM collaborations WHERE repo_id = ${repoId} AND user_id = ${userId} RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          search: (search, page) =>
            Effect.gen(function* () {
              const conditions = [visibleCondition(search.filter)]
              // Forgejo's SearchRepositoryCondition: a topic containing a keyword (equal to one with
              // `topic=true`) matches too.
              const byTopic = (keywords: ReadonlyArray<string>) =>
                sql`r.id IN (SELECT rt.repo_id FROM repo_topics rt JOIN topics t ON t.id = rt.topic_id WHERE ${sql.or(
                  keywords.map((k) =>
                    search.topicOnly === true ? sql`t.name = ${k}` : sql`t.name LIKE ${likePattern(k)}`
                  )
                )})`
              if (search.keywords.length > 0 && search.topicOnly === true) conditions.push(byTopic(search.keywords))
              else if (search.keywords.length > 0) {
                conditions.push(
                  sql`(${byTopic(search.keywords)} OR ${sql.or(
                    search.keywords.map((k) => {
                      const byName = sql`r.lower_name LIKE ${likePattern(k)}`
                      const slash = k.indexOf("/")
                      if (slash < 0 || k.indexOf("/", slash + 1) >= 0) return byName
                      return sql`(${byName} OR (o.lower_name LIKE ${likePattern(k.slice(0, slash))}
                    AND r.lower_name LIKE ${likePattern(k.slice(slash + 1))}))`
                    })
                  )})`
                )
              }
              if (search.ownerId !== undefined) {
                const id = search.ownerId
                conditions.push(
                  search.exclusive
                    ? sql`r.owner_id = ${id}`
                    : sql`(r.owner_id = ${id}
                    OR r.id IN (SELECT c.repo_id FROM collaborations c WHERE c.user_id = ${id})
                    OR ${teamReach(id)})`
                )
              }
              if (search.isPrivate !== undefined) conditions.push(sql`r.is_private = ${search.isPrivate}`)
              if (search.template !== undefined) conditions.push(sql`r.is_template = ${search.template}`)
              if (search.archived !== undefined) conditions.push(sql`r.is_archived = ${search.archived}`)
              if (search.starredBy !== undefined) {
                conditions.push(
                  sql`EXISTS (SELECT 1 FROM stars s WHERE s.repo_id = r.id AND s.user_id = ${search.starredBy})`
                )
              }
              switch (search.mode) {
                case "fork":
                  conditions.push(sql`r.is_fork`)
                  break
                case "source":
                  conditions.push(sql`NOT r.is_fork AND NOT r.is_mirror`)
                  break
                case "mirror":
                  conditions.push(sql`r.is_mirror`)
                  break
                case "collaborative":
                  // Repositories the searched user reaches without owning them; no mirrors.
                  conditions.push(sql`NOT r.is_mirror`)
                  if (search.ownerId !== undefined) conditions.push(sql`r.owner_id <> ${search.ownerId}`)
                  break
              }
              const where = sql.and(conditions)
              const [count] = yield* sql`SELECT count(*) AS n FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE ${where}`
              const order = SEARCH_ORDER_SQL[search.sort]
              const direction = search.desc ? "DESC" : "ASC"
              // With `owner/name` keywords, repositories of a matching owner come first.
              const owners = search.keywords
                .filter((k) => k.split("/").length === 2)
                .map((k) => likePattern(k.split("/")[0]!))
              const ownerFirst =
                owners.length === 0
                  ? sql``
                  : sql`(${sql.or(owners.map((pattern) => sql`o.lower_name LIKE ${pattern}`))}) DESC, `
              const rows = yield* sql`SELECT r.* FROM repositories r JOIN users o ON o.id = r.owner_id WHERE ${where}
              ORDER BY ${ownerFirst}${sql.unsafe(order.map((column) => `${column} ${direction}`).join(", "))}, r.id ${sql.unsafe(
                direction
              )} LIMIT ${page.limit} OFFSET ${page.offset}`
              const ownerIds = [...new Set(rows.map((r) => Number(r.owner_id)))]
              const ownerRows =
                ownerIds.length === 0 ? [] : yield* sql`SELECT * FROM users WHERE id = ANY(${ownerIds}::int8[])`
              return {
                rows: rows.map(toRepoRow),
                total: Number(count!.n),
                owners: new Map(ownerRows.map((o) => [Number(o.id), toUserRow(o)]))
              }
            }),
          transaction: (effect) => sql.withTransaction(effect)
        })
      )
    })
  )
}

// SQL for repositories and their collaborators. Rules live in Service.ts and Policy.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import type { Page } from "../http/Pagination.ts"

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
}

export type CollaboratorMode = "read" | "write" | "admin"

export type NewRepo = {
  readonly owner_id: number
  readonly name: string
  readonly lower_name: string
  readonly description: string
  readonly default_branch: string
  readonly is_private: boolean
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

export interface Listed<A> {
  readonly rows: Array<A>
  readonly total: number
}

type Row = Record<string, any>

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
  archivedAt: r.archived_at ?? null
})

export class ReposRepo extends Context.Service<ReposRepo, {
  readonly findByName: (ownerId: number, name: string) => Effect.Effect<Option.Option<RepoRow>, SqlError>
  readonly findById: (id: number) => Effect.Effect<Option.Option<RepoRow>, SqlError>
  readonly insert: (values: NewRepo) => Effect.Effect<RepoRow, SqlError>
  readonly remove: (id: number) => Effect.Effect<void, SqlError>
  readonly collaboratorMode: (repoId: number, userId: number) => Effect.Effect<Option.Option<CollaboratorMode>, SqlError>
  /** Repositories owned by `ownerId` that pass the filter, by id. */
  readonly listOwnedBy: (ownerId: number, filter: RepoFilter, page: Page) => Effect.Effect<Listed<RepoRow>, SqlError>
  readonly countOwnedBy: (ownerId: number) => Effect.Effect<number, SqlError>
  /** What a push changed: emptiness, size in bytes, default branch; touches updated_at. */
  readonly recordPush: (
    id: number,
    state: { readonly isEmpty: boolean; readonly sizeBytes: number; readonly defaultBranch: string }
  ) => Effect.Effect<void, SqlError>
  readonly allOwnedBy: (ownerId: number) => Effect.Effect<Array<RepoRow>, SqlError>
  /** What the user owns, collaborates on, or reaches through an org team, by name. */
  readonly listAccessible: (userId: number, publicOnly: boolean, order: RepoOrder, page: Page) => Effect.Effect<Listed<RepoRow>, SqlError>
  /** Runs `effect` in a transaction (the row is only kept when the disk work succeeds). */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError, R>
}>()("hearth/repos/ReposRepo") {
  static readonly layer = Layer.effect(
    ReposRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullishOr(rows[0]), toRepoRow)

      // A viewer's reach inside an org: a team that covers every repository (owner teams do).
      const teamReach = (userId: number) =>
        sql`r.owner_id IN (SELECT t.org_id FROM teams t JOIN team_users tu ON tu.team_id = t.id
          WHERE tu.user_id = ${userId} AND (t.includes_all_repositories OR t.permission = 'owner'))`

      const visibleCondition = (filter: RepoFilter) => {
        if (filter.all === true) return sql`TRUE`
        const publicRepos = filter.publicOwners.length === 0
          ? sql`FALSE`
          : sql`(NOT r.is_private AND o.visibility IN ${sql.in(filter.publicOwners)})`
        if (filter.viewerId === undefined) return publicRepos
        const id = filter.viewerId
        const reach = sql`(r.owner_id = ${id}
          OR EXISTS (SELECT 1 FROM collaborations c WHERE c.repo_id = r.id AND c.user_id = ${id})
          OR ${teamReach(id)}
          OR (NOT r.is_private AND r.owner_id IN (SELECT org_id FROM org_users WHERE user_id = ${id})))`
        return filter.publicOnly === true
          ? sql`(NOT r.is_private AND (${publicRepos} OR ${reach}))`
          : sql`(${publicRepos} OR ${reach})`
      }

      return ReposRepo.of({
        findByName: (ownerId, name) =>
          Effect.map(
            sql`SELECT * FROM repositories WHERE owner_id = ${ownerId} AND lower_name = ${name.toLowerCase()}`,
            one
          ),
        findById: (id) => Effect.map(sql`SELECT * FROM repositories WHERE id = ${id}`, one),
        insert: (values) =>
          Effect.map(sql`INSERT INTO repositories ${sql.insert(values)} RETURNING *`, (rows) => toRepoRow(rows[0]!)),
        remove: (id) => Effect.asVoid(sql`DELETE FROM repositories WHERE id = ${id}`),
        collaboratorMode: (repoId, userId) =>
          Effect.map(
            sql`SELECT mode FROM collaborations WHERE repo_id = ${repoId} AND user_id = ${userId}`,
            (rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => r.mode as CollaboratorMode)
          ),
        recordPush: (id, state) =>
          Effect.asVoid(sql`UPDATE repositories SET is_empty = ${state.isEmpty}, size = ${state.sizeBytes},
            default_branch = ${state.defaultBranch}, updated_at = now() WHERE id = ${id}`),
        countOwnedBy: (ownerId) =>
          Effect.map(sql`SELECT count(*) AS n FROM repositories WHERE owner_id = ${ownerId}`, (rows) => Number(rows[0]!.n)),
        allOwnedBy: (ownerId) =>
          Effect.map(sql`SELECT * FROM repositories WHERE owner_id = ${ownerId} ORDER BY id`, (rows) => rows.map(toRepoRow)),
        listOwnedBy: (ownerId, filter, page) =>
          Effect.gen(function*() {
            const where = sql`r.owner_id = ${ownerId} AND ${visibleCondition(filter)}`
            const [count] = yield* sql`SELECT count(*) AS n FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE ${where}`
            const rows = yield* sql`SELECT r.* FROM repositories r JOIN users o ON o.id = r.owner_id
              WHERE ${where} ORDER BY r.id LIMIT ${page.limit} OFFSET ${page.offset}`
            return { rows: rows.map(toRepoRow), total: Number(count!.n) }
          }),
        listAccessible: (userId, publicOnly, order, page) =>
          Effect.gen(function*() {
            const where = sql`(r.owner_id = ${userId}
              OR EXISTS (SELECT 1 FROM collaborations c WHERE c.repo_id = r.id AND c.user_id = ${userId})
              OR ${teamReach(userId)})${publicOnly ? sql` AND NOT r.is_private` : sql``}`
            const [count] = yield* sql`SELECT count(*) AS n FROM repositories r WHERE ${where}`
            const rows = yield* sql`SELECT r.* FROM repositories r WHERE ${where}
              ORDER BY ${sql.unsafe(ORDER_SQL[order])}, r.id LIMIT ${page.limit} OFFSET ${page.offset}`
            return { rows: rows.map(toRepoRow), total: Number(count!.n) }
          }),
        transaction: (effect) => sql.withTransaction(effect)
      })
    })
  )
}

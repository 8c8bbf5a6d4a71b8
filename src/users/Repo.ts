// SQL for accounts: individual users and organizations share the `users` table (type 0 / 1).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"

export type Visibility = "public" | "limited" | "private"

export interface UserRow {
  readonly id: number
  readonly type: "user" | "organization"
  readonly name: string
  readonly lowerName: string
  readonly fullName: string
  readonly email: string
  readonly keepEmailPrivate: boolean
  readonly passwdHash: string
  readonly mustChangePassword: boolean
  readonly loginName: string
  readonly sourceId: number
  readonly visibility: Visibility
  readonly isAdmin: boolean
  readonly isActive: boolean
  readonly prohibitLogin: boolean
  readonly restricted: boolean
  readonly allowCreateOrganization: boolean
  readonly maxRepoCreation: number
  readonly repoAdminChangeTeamAccess: boolean
  readonly location: string
  readonly website: string
  readonly description: string
  readonly pronouns: string
  readonly language: string
  /** The web theme chosen (`/user/settings`); empty: the instance's [ui] DEFAULT_THEME. */
  readonly theme: string
  /** "unified" or "split" when chosen; empty: unified. */
  readonly diffViewStyle: string
  readonly keepActivityPrivate: boolean
  readonly keepPronounsPrivate: boolean
  readonly enableRepoUnitHints: boolean
  /** The sha256 of the uploaded avatar in the blob storage (src/avatars); "" when none. */
  readonly avatar: string
  readonly numFollowers: number
  readonly numFollowing: number
  readonly numStars: number
  readonly numRepos: number
  readonly createdAt: Date
  readonly updatedAt: Date
  readonly lastLogin: Date | null
}

type Row = Record<string, any>

const CACHE_TTL_MS = 5_000
const CACHE_MAX = 10_000

export const toUserRow = (r: Row): UserRow => ({
  id: Number(r.id),
  type: Number(r.type) === 1 ? "organization" : "user",
  name: r.name,
  lowerName: r.lower_name,
  fullName: r.full_name,
  email: r.email,
  keepEmailPrivate: r.keep_email_private,
  passwdHash: r.passwd_hash,
  mustChangePassword: r.must_change_password,
  loginName: r.login_name,
  sourceId: Number(r.source_id),
  visibility: r.visibility,
  isAdmin: r.is_admin,
  isActive: r.is_active,
  prohibitLogin: r.prohibit_login,
  restricted: r.restricted,
  allowCreateOrganization: r.allow_create_organization,
  maxRepoCreation: Number(r.max_repo_creation),
  repoAdminChangeTeamAccess: r.repo_admin_change_team_access,
  location: r.location,
  website: r.website,
  description: r.description,
  pronouns: r.pronouns,
  language: r.language,
  theme: r.theme ?? "",
  diffViewStyle: r.diff_view_style ?? "",
  keepActivityPrivate: r.keep_activity_private ?? false,
  keepPronounsPrivate: r.keep_pronouns_private ?? false,
  enableRepoUnitHints: r.enable_repo_unit_hints ?? true,
  avatar: r.avatar ?? "",
  numFollowers: Number(r.num_followers),
  numFollowing: Number(r.num_following),
  numStars: Number(r.num_stars),
  numRepos: Number(r.num_repos),
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  lastLogin: r.last_login ?? null
})

/** Columns a caller may set when creating or editing an account (snake_case, as stored). */
export interface UserWrite {
  readonly type?: 0 | 1
  readonly name?: string
  readonly full_name?: string
  readonly email?: string
  readonly keep_email_private?: boolean
  readonly passwd_hash?: string
  readonly must_change_password?: boolean
  readonly login_name?: string
  readonly source_id?: number
  readonly visibility?: Visibility
  readonly is_admin?: boolean
  readonly is_active?: boolean
  readonly prohibit_login?: boolean
  readonly restricted?: boolean
  readonly allow_create_organization?: boolean
  readonly max_repo_creation?: number
  readonly repo_admin_change_team_access?: boolean
  readonly location?: string
  readonly website?: string
  readonly description?: string
  readonly pronouns?: string
  readonly language?: string
  readonly theme?: string
  readonly diff_view_style?: string
  readonly keep_activity_private?: boolean
  readonly keep_pronouns_private?: boolean
  readonly enable_repo_unit_hints?: boolean
  readonly avatar?: string
  /** Only when creating an account with an explicit creation time (migrations from elsewhere). */
  readonly created_at?: Date
  readonly updated_at?: Date
}

export type UserSort = "oldest" | "newest" | "alphabetically" | "reversealphabetically" | "recentupdate" | "leastupdate"

export interface UserSearch {
  readonly type: "user" | "organization"
  /** Lower-cased substring of name or full name; e-mail matches only where the viewer may see it. */
  readonly keyword?: string | undefined
  readonly id?: number | undefined
  /** Visibilities included in the result (besides the viewer itself when `viewerIncluded`). */
  readonly visibilities: ReadonlyArray<Visibility>
  /** The caller: its own e-mail always matches, and it sees itself when `viewerIncluded`. */
  readonly viewerId?: number | undefined
  readonly viewerIncluded?: boolean | undefined
  readonly viewerIsAdmin: boolean
  /** Admin filters (Forgejo's `GET /admin/users`): exact login name, authentication source. */
  readonly loginName?: string | undefined
  readonly sourceId?: number | undefined
  readonly sort: UserSort
  readonly limit: number
  readonly offset: number
}

// Names compare byte-wise ("C") so that the order is the same on PostgreSQL and PGlite whatever
// their default collation; ids break ties so that pages never overlap.
const orderBy: Record<UserSort, string> = {
  oldest: "created_at ASC, id ASC",
  newest: "created_at DESC, id DESC",
  alphabetically: 'lower_name COLLATE "C" ASC, id ASC',
  reversealphabetically: 'lower_name COLLATE "C" DESC, id DESC',
  recentupdate: "updated_at DESC, id DESC",
  leastupdate: "updated_at ASC, id ASC"
}

export class UsersRepo extends Context.Service<
  UsersRepo,
  {
    readonly findById: (id: number) => Effect.Effect<Option.Option<UserRow>>
    /** The accounts with these ids that exist, by id (one query for a list's owners). */
    readonly findByIds: (ids: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, UserRow>>
    /**
     * Changes on every write to `users` (and again when its transaction commits): caches of rows
     * elsewhere (the token cache) compare it to know their copy may be stale.
     */
    readonly writes: () => number
    /** Case-insensitive lookup of a user or organization by name. */
    readonly findByName: (name: string) => Effect.Effect<Option.Option<UserRow>>
    readonly findByEmail: (email: string) => Effect.Effect<Option.Option<UserRow>>
    /**
     * The accounts holding an address, as primary or as an added one (activated, or with its
     * activation still pending): an address belongs to one account only.
     */
    readonly emailHolders: (email: string) => Effect.Effect<Array<number>>
    /** `AlreadyExists` when the name is taken (unique index; a concurrent insert can win the race). */
    readonly insert: (values: UserWrite & { readonly name: string }) => Effect.Effect<UserRow, AlreadyExists>
    readonly update: (id: number, values: UserWrite) => Effect.Effect<UserRow, AlreadyExists>
    readonly remove: (id: number) => Effect.Effect<void>
    readonly search: (q: UserSearch) => Effect.Effect<{ rows: Array<UserRow>; total: number }>
    readonly list: (
      type: "user" | "organization",
      limit: number,
      offset: number
    ) => Effect.Effect<{ rows: Array<UserRow>; total: number }>
    readonly countAdmins: Effect.Effect<number>
    /** Individual accounts (organizations not counted). */
    readonly countUsers: Effect.Effect<number>
    readonly touchLastLogin: (id: number) => Effect.Effect<void>
    /** Lowers the starred-repository count of everyone who starred `repoId` (before it is deleted). */
    readonly releaseStarsOfRepository: (repoId: number) => Effect.Effect<void>
    /** Adds `delta` to the account's repository count (never below zero). */
    readonly adjustNumRepos: (id: number, delta: number) => Effect.Effect<void>
    /** Adds `delta` to the user's star count (`starred_repos_count`, never below zero). */
    readonly adjustNumStars: (id: number, delta: number) => Effect.Effect<void>
    /** Adds `delta` to the follower's `num_following` and the followed account's `num_followers`. */
    readonly adjustFollowCounts: (followerId: number, followedId: number, delta: number) => Effect.Effect<void>
    /** The account an old name (of a renamed account) now belongs to (Forgejo's `LookupUserRedirect`). */
    readonly redirectOf: (name: string) => Effect.Effect<Option.Option<number>>
    /** Records `name` as an old name of `userId` (replacing what it pointed to before). */
    readonly addRedirect: (name: string, userId: number) => Effect.Effect<void>
    /** The name is an account's own again: no redirect from it. */
    readonly removeRedirect: (name: string) => Effect.Effect<void>
  }
>()("hearth/users/UsersRepo") {
  static readonly layer = Layer.effect(
    UsersRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Row>) => Option.map(Option.fromNullishOr(rows[0]), toUserRow)

      // Look-ups by name serve nearly every request (profiles, owners in paths), and by id most
      // others (owners of repositories, posters), so found rows are
      // kept for a few seconds. Every write to `users` goes through this repo and clears the
      // cache, now and again after its transaction commits; a row read inside a transaction is
      // cached only once that transaction commits (`afterCommit` drops it on rollback). Another
      // node's writes are seen within CACHE_TTL_MS.
      const cache = new Map<string, { readonly row: UserRow; readonly expires: number }>()
      let generation = 0
      const clear = Effect.sync(() => {
        generation++
        cache.clear()
      })
      const written = <A, E, R>(write: Effect.Effect<A, E, R>) =>
        Effect.tap(write, () => Effect.andThen(clear, sql.afterCommit(clear)))
      /**
       * A look-up through the cache: `key` a lower-case name, or `#` and an id (no name has a `#`).
       * The statement is built only on a miss (a hit, most requests' case, costs a map look-up).
       */
      const cached = (key: string, query: () => Effect.Effect<ReadonlyArray<Row>, SqlError>) => {
        const hit = cache.get(key)
        if (hit !== undefined && hit.expires > Date.now()) return Effect.succeed(Option.some(hit.row))
        const started = generation
        return Effect.tap(Effect.map(query(), one), (found) =>
          Option.isNone(found)
            ? Effect.void
            : sql.afterCommit(
                Effect.sync(() => {
                  if (started !== generation) return
                  if (cache.size >= CACHE_MAX) cache.clear()
                  cache.set(key, { row: found.value, expires: Date.now() + CACHE_TTL_MS })
                })
              )
        )
      }

      const search = (q: UserSearch) =>
        Effect.gen(function* () {
          const conditions = [sql`type = ${q.type === "organization" ? 1 : 0}`]
          const visible = q.visibilities.length > 0 ? sql`visibility IN ${sql.in(q.visibilities)}` : sql`false`
          conditions.push(
            q.viewerId !== undefined && q.viewerIncluded === true ? sql`(${visible} OR id = ${q.viewerId})` : visible
          )
          if (q.id !== undefined) conditions.push(sql`id = ${q.id}`)
          if (q.loginName !== undefined && q.loginName !== "") conditions.push(sql`login_name = ${q.loginName}`)
          if (q.sourceId !== undefined) conditions.push(sql`source_id = ${q.sourceId}`)
          if (q.keyword !== undefined && q.keyword !== "") {
            const like = `%${q.keyword.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c)}%`
            const emailVisible = q.viewerIsAdmin
              ? sql`true`
              : q.viewerId === undefined
                ? sql`NOT keep_email_private`
                : sql`(NOT keep_email_private OR id = ${q.viewerId})`
            conditions.push(
              sql`(lower_name LIKE ${like} OR lower(full_name) LIKE ${like} OR (${emailVisible} AND lower(email) LIKE ${like}))`
            )
          }
          const where = sql.and(conditions)
          const [count] = yield* sql`SELECT count(*) AS n FROM users WHERE ${where}`
          const rows = yield* sql`SELECT * FROM users WHERE ${where}
            ORDER BY ${sql.literal(orderBy[q.sort])} LIMIT ${q.limit} OFFSET ${q.offset}`
          return { rows: rows.map(toUserRow), total: Number(count!.n) }
        })

      return UsersRepo.of(
        sqlBoundary({
          writes: () => generation,
          findById: (id) => cached(`#${id}`, () => sql`SELECT * FROM users WHERE id = ${id}`),
          findByIds: (ids) => {
            // The cached rows first; one statement for the rest, which are cached in turn.
            const found = new Map<number, UserRow>()
            const missing: Array<number> = []
            const now = Date.now()
            for (const id of new Set(ids)) {
              const hit = cache.get(`#${id}`)
              if (hit !== undefined && hit.expires > now) found.set(id, hit.row)
              else missing.push(id)
            }
            // By id, as the table gives them (callers that list the values see one order).
            const byId = () => new Map([...found].sort(([a], [b]) => a - b))
            if (missing.length === 0) return Effect.succeed(byId())
            const started = generation
            return Effect.flatMap(sql`SELECT * FROM users WHERE id = ANY(${missing}::int8[])`, (rows) => {
              const read = rows.map(toUserRow)
              for (const user of read) found.set(user.id, user)
              return Effect.map(
                sql.afterCommit(
                  Effect.sync(() => {
                    if (started !== generation) return
                    if (cache.size + read.length > CACHE_MAX) cache.clear()
                    const expires = Date.now() + CACHE_TTL_MS
                    for (const row of read) cache.set(`#${row.id}`, { row, expires })
                  })
                ),
                byId
              )
            })
          },
          findByName: (name) => {
            const key = name.toLowerCase()
            return cached(key, () => sql`SELECT * FROM users WHERE lower_name = ${key}`)
          },
          findByEmail: (email) =>
            Effect.map(sql`SELECT * FROM users WHERE lower(email) = ${email.toLowerCase()} AND type = 0`, one),
          emailHolders: (email) =>
            Effect.map(
              sql`SELECT id FROM users WHERE lower(email) = ${email.toLowerCase()} AND type = 0
              UNION SELECT user_id AS id FROM email_addresses WHERE lower_email = ${email.toLowerCase()}
                AND (is_activated OR activation_expires > now())`,
              (rows) => rows.map((r) => Number(r.id))
            ),
          insert: (values) =>
            written(
              uniqueViolation(
                Effect.tap(
                  Effect.map(
                    sql`INSERT INTO users ${sql.insert({ ...values, lower_name: values.name.toLowerCase() })} RETURNING *`,
                    (rows) => toUserRow(rows[0]!)
                  ),
                  // A new account taking a renamed account's old name ends its redirect (Forgejo's
                  // DeleteUserRedirect on creation): it never comes back when the new one goes.
                  () => sql`DELETE FROM user_redirects WHERE lower_name = ${values.name.toLowerCase()}`
                )
              )
            ),
          update: (id, values) => {
            const { updated_at: _ignored, ...set }: Record<string, unknown> = { ...values }
            if (values.name !== undefined) set.lower_name = values.name.toLowerCase()
            // The database's clock, as for created_at: the two are compared when sorting.
            const assignments =
              Object.keys(set).length === 0 ? sql`updated_at = now()` : sql`${sql.update(set)}, updated_at = now()`
            return written(
              uniqueViolation(
                Effect.map(sql`UPDATE users SET ${assignments} WHERE id = ${id} RETURNING *`, (rows) =>
                  toUserRow(rows[0]!)
                )
              )
            )
          },
          // The follow rows go with the account (foreign keys cascade): the counters of the other
          // side of each are lowered first.
          remove: (id) =>
            written(
              Effect.asVoid(
                sql.withTransaction(
                  Effect.andThen(
                    Effect.andThen(
                      sql`UPDATE users SET num_following = GREATEST(num_following - 1, 0)
                WHERE id IN (SELECT user_id FROM follows WHERE follow_id = ${id})`,
                      sql`UPDATE users SET num_followers = GREATEST(num_followers - 1, 0)
                WHERE id IN (SELECT follow_id FROM follows WHERE user_id = ${id})`
                    ),
                    sql`DELETE FROM users WHERE id = ${id}`
                  )
                )
              )
            ),
          search,
          list: (type, limit, offset) =>
            Effect.gen(function* () {
              const t = type === "organization" ? 1 : 0
              const [count] = yield* sql`SELECT count(*) AS n FROM users WHERE type = ${t}`
              const rows = yield* sql`SELECT * FROM users WHERE type = ${t} ORDER BY id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toUserRow), total: Number(count!.n) }
            }),
          countAdmins: Effect.map(sql`SELECT count(*) AS n FROM users WHERE is_admin AND type = 0`, (rows) =>
            Number(rows[0]!.n)
          ),
          countUsers: Effect.map(sql`SELECT count(*) AS n FROM users WHERE type = 0`, (rows) => Number(rows[0]!.n)),
          touchLastLogin: (id) => written(Effect.asVoid(sql`UPDATE users SET last_login = now() WHERE id = ${id}`)),
          releaseStarsOfRepository: (repoId) =>
            written(
              Effect.asVoid(sql`UPDATE users SET num_stars = GREATEST(num_stars - 1, 0)
            WHERE id IN (SELECT user_id FROM stars WHERE repo_id = ${repoId})`)
            ),
          adjustNumRepos: (id, delta) =>
            written(
              Effect.asVoid(sql`UPDATE users SET num_repos = GREATEST(num_repos + ${delta}, 0) WHERE id = ${id}`)
            ),
          adjustNumStars: (id, delta) =>
            written(
              Effect.asVoid(sql`UPDATE users SET num_stars = GREATEST(num_stars + ${delta}, 0) WHERE id = ${id}`)
            ),
          adjustFollowCounts: (followerId, followedId, delta) =>
            written(
              Effect.asVoid(
                Effect.andThen(
                  sql`UPDATE users SET num_following = GREATEST(num_following + ${delta}, 0) WHERE id = ${followerId}`,
                  sql`UPDATE users SET num_followers = GREATEST(num_followers + ${delta}, 0) WHERE id = ${followedId}`
                )
              )
            ),
          redirectOf: (name) =>
            Effect.map(sql`SELECT user_id FROM user_redirects WHERE lower_name = ${name.toLowerCase()}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), (r) => Number(r.user_id))
            ),
          addRedirect: (name, userId) =>
            Effect.asVoid(sql`INSERT INTO user_redirects (lower_name, user_id) VALUES (${name.toLowerCase()}, ${userId})
              ON CONFLICT (lower_name) DO UPDATE SET user_id = EXCLUDED.user_id`),
          removeRedirect: (name) =>
            Effect.asVoid(sql`DELETE FROM user_redirects WHERE lower_name = ${name.toLowerCase()}`)
        })
      )
    })
  )
}

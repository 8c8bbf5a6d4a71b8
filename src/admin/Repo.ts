// SQL the admin user routes need beyond the users table: what an account still belongs to.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"

export interface EmailEntry {
  readonly email: string
  readonly verified: boolean
  readonly primary: boolean
  readonly userId: number
  readonly username: string
}

export class AdminRepo extends Context.Service<
  AdminRepo,
  {
    /** How many organizations the user is a member of. */
    readonly countOrgMemberships: (userId: number) => Effect.Effect<number>
    /** Organizations whose owners (members of a team with the `owner` permission) are this user alone. */
    readonly soleOwnedOrgs: (userId: number) => Effect.Effect<Array<UserRow>>
    /** Whether no account (user or organization) exists yet. */
    readonly noAccounts: Effect.Effect<boolean>
    /**
     * Every user's e-mail addresses, primary and added ones, whose address, login or full name
     * contains `keyword` (Forgejo's `SearchEmails`), by address.
     */
    readonly searchEmails: (
      keyword: string,
      page: { readonly limit: number; readonly offset: number }
    ) => Effect.Effect<{ rows: Array<EmailEntry>; total: number }>
  }
>()("hearth/admin/AdminRepo") {
  static readonly layer = Layer.effect(
    AdminRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return AdminRepo.of(
        sqlBoundary({
          countOrgMemberships: (userId) =>
            Effect.map(sql`SELECT count(*) AS n FROM org_users WHERE user_id = ${userId}`, (rows) =>
              Number(rows[0]!.n)
            ),
          soleOwnedOrgs: (userId) =>
            Effect.map(
              sql`SELECT o.* FROM users o WHERE o.type = 1
              AND EXISTS (
                SELECT 1 FROM teams t JOIN team_users m ON m.team_id = t.id
                WHERE t.org_id = o.id AND t.permission = 'owner' AND m.user_id = ${userId})
              AND NOT EXISTS (
                SELECT 1 FROM teams t JOIN team_users m ON m.team_id = t.id
                WHERE t.org_id = o.id AND t.permission = 'owner' AND m.user_id <> ${userId})
              ORDER BY o.id`,
              (rows) => rows.map(toUserRow)
            ),
          searchEmails: (keyword, page) =>
            Effect.gen(function* () {
              const like = `%${keyword.toLowerCase().replace(/[\\%_]/g, (c) => "\\" + c)}%`
              // The primary address lives on the account; added ones in email_addresses.
              const all = sql`(SELECT u.id AS user_id, u.name AS username, u.lower_name, lower(u.full_name) AS full_name,
                  u.email, lower(u.email) AS lower_email, true AS verified, true AS is_primary, 0 AS eid
                FROM users u WHERE u.type = 0 AND u.email <> ''
                UNION ALL
                SELECT u.id, u.name, u.lower_name, lower(u.full_name), e.email, e.lower_email, e.is_activated, false, e.id
                FROM email_addresses e JOIN users u ON u.id = e.user_id WHERE e.lower_email <> lower(u.email)) x`
              const where =
                keyword === ""
                  ? sql`true`
                  : sql`(x.lower_email LIKE ${like} OR x.lower_name LIKE ${like} OR x.full_name LIKE ${like})`
              const [count] = yield* sql`SELECT count(*) AS n FROM ${all} WHERE ${where}`
              const rows = yield* sql`SELECT * FROM ${all} WHERE ${where}
                ORDER BY x.lower_email ASC, x.is_primary DESC, x.eid ASC LIMIT ${page.limit} OFFSET ${page.offset}`
              return {
                total: Number(count!.n),
                rows: rows.map((r) => ({
                  email: String(r.email),
                  verified: Boolean(r.verified),
                  primary: Boolean(r.is_primary),
                  userId: Number(r.user_id),
                  username: String(r.username)
                }))
              }
            }),
          noAccounts: Effect.map(
            sql`SELECT NOT EXISTS (SELECT 1 FROM users) AS empty`,
            (rows) => rows[0]!.empty === true
          )
        })
      )
    })
  )
}

// SQL the admin user routes need beyond the users table: what an account still belongs to.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"

export class AdminRepo extends Context.Service<
  AdminRepo,
  {
    /** How many organizations the user is a member of. */
    readonly countOrgMemberships: (userId: number) => Effect.Effect<number>
    /** Organizations whose owners (members of a team with the `owner` permission) are this user alone. */
    readonly soleOwnedOrgs: (userId: number) => Effect.Effect<Array<UserRow>>
    /** Whether no account (user or organization) exists yet. */
    readonly noAccounts: Effect.Effect<boolean>
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
          noAccounts: Effect.map(
            sql`SELECT NOT EXISTS (SELECT 1 FROM users) AS empty`,
            (rows) => rows[0]!.empty === true
          )
        })
      )
    })
  )
}

// The accounts that may hold access to a repository beyond what is public: its owner, its
// collaborators, the members of its owning organization's teams — and, for reviewers of a public
// repository, its watchers. Only candidates: RepoPolicy decides what each may do.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { toUserRow, type UserRow } from "../users/Repo.ts"

export class AssigneesRepo extends Context.Service<
  AssigneesRepo,
  {
    /** Active individual accounts, by name. */
    readonly candidates: (
      repo: { readonly id: number; readonly ownerId: number },
      withWatchers: boolean
    ) => Effect.Effect<ReadonlyArray<UserRow>>
  }
>()("hearth/assignees/AssigneesRepo") {
  static readonly layer = Layer.effect(
    AssigneesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return {
        candidates: (repo, withWatchers) =>
          Effect.orDie(
            Effect.map(
              sql`SELECT * FROM users u
                WHERE u.type = 0 AND u.is_active AND (
                  u.id = ${repo.ownerId}
                  OR u.id IN (SELECT user_id FROM collaborations WHERE repo_id = ${repo.id})
                  OR u.id IN (SELECT user_id FROM team_users WHERE org_id = ${repo.ownerId})
                  ${withWatchers ? sql`OR u.id IN (SELECT user_id FROM watches WHERE repo_id = ${repo.id} AND mode <> 'dont')` : sql``}
                )
                ORDER BY u.lower_name`,
              (rows) => rows.map(toUserRow)
            )
          )
      }
    })
  )
}

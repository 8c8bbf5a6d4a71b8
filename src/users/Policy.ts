// Who may see an account (Forgejo's `IsUserVisibleToViewer`): what a viewer may not see is answered 404.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { dieOnSqlError } from "../db/Boundary.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { UserRow, Visibility } from "./Repo.ts"

export class AccountPolicy extends Context.Service<
  AccountPolicy,
  {
    /** Whether `viewer` may see the account at all. */
    readonly canSee: (viewer: Principal | undefined, target: UserRow) => Effect.Effect<boolean>
    /** 404 when the viewer may not see it; 403 when a public-only token reaches a non-public one. */
    readonly ensureVisible: (
      viewer: Principal | undefined,
      target: UserRow
    ) => Effect.Effect<void, Errors.NotFound | Errors.Forbidden>
    /** The visibilities a viewer sees in searches and lists (besides itself). */
    readonly visibleLevels: (viewer: Principal | undefined) => ReadonlyArray<Visibility>
  }
>()("hearth/users/AccountPolicy") {
  static readonly layer = Layer.effect(
    AccountPolicy,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const isOrgMember = (orgId: number, userId: number) =>
        dieOnSqlError(
          Effect.map(
            sql`SELECT 1 FROM org_users WHERE org_id = ${orgId} AND user_id = ${userId}`,
            (rows) => rows.length > 0
          )
        )

      const canSee = (viewer: Principal | undefined, target: UserRow): Effect.Effect<boolean> => {
        if (target.visibility === "public") return Effect.succeed(true)
        if (viewer === undefined) return Effect.succeed(false)
        const me = viewer.user
        if (me.isAdmin || me.id === target.id) return Effect.succeed(true)
        if (target.type === "organization") {
          if (target.visibility === "limited" && !me.restricted) return Effect.succeed(true)
          return isOrgMember(target.id, me.id)
        }
        return Effect.succeed(target.visibility === "limited" && !me.restricted)
      }

      return AccountPolicy.of({
        canSee,
        ensureVisible: (viewer, target) =>
          // Public accounts, the common case, need no further look-up.
          target.visibility === "public"
            ? Effect.void
            : Effect.gen(function* () {
                if (!(yield* canSee(viewer, target))) return yield* Errors.notFound()
                if (viewer?.scopes?.publicOnly === true && target.visibility !== "public") {
                  return yield* Errors.forbidden(
                    target.type === "organization"
                      ? "token scope is limited to public orgs"
                      : "token scope is limited to public users"
                  )
                }
              }),
        visibleLevels: (viewer) => {
          if (viewer === undefined || viewer.scopes?.publicOnly === true) return ["public"]
          if (viewer.user.isAdmin) return ["public", "limited", "private"]
          return viewer.user.restricted ? [] : ["public", "limited"]
        }
      })
    })
  )
}

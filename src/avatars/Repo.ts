// SQL for avatars: the current avatar of an account or repository (locked while it is replaced),
// and whether a hash is some account's or repository's avatar (what `/avatars/{hash}` may serve).
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { transaction } from "../db/Boundary.ts"

export type AvatarOwner = "user" | "repo"

const TABLE = { user: "users", repo: "repositories" } as const

export class AvatarsRepo extends Context.Service<
  AvatarsRepo,
  {
    /** The stored avatar of the row, "" when none, locked until the caller's transaction ends. */
    readonly lockCurrent: (owner: AvatarOwner, id: number) => Effect.Effect<string>
    /** Some account (`user`) or repository (`repo`) has this avatar. */
    readonly inUse: (owner: AvatarOwner, hash: string) => Effect.Effect<boolean>
    /** Runs `effect` in one transaction. */
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>()("hearth/avatars/AvatarsRepo") {
  static readonly layer = Layer.effect(
    AvatarsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return AvatarsRepo.of({
        lockCurrent: (owner, id) =>
          Effect.orDie(
            Effect.map(
              sql`SELECT avatar FROM ${sql(TABLE[owner])} WHERE id = ${id} FOR UPDATE`,
              (rows) => (rows[0]?.avatar as string | undefined) ?? ""
            )
          ),
        inUse: (owner, hash) =>
          Effect.orDie(
            Effect.map(
              sql`SELECT 1 FROM ${sql(TABLE[owner])} WHERE avatar = ${hash} LIMIT 1`,
              (rows) => rows.length > 0
            )
          ),
        transaction: transaction(sql)
      })
    })
  )
}

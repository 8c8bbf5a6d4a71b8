// SQL for repository flags.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export class FlagsRepo extends Context.Service<
  FlagsRepo,
  {
    /** By name. */
    readonly list: (repoId: number) => Effect.Effect<ReadonlyArray<string>>
    readonly has: (repoId: number, name: string) => Effect.Effect<boolean>
    readonly add: (repoId: number, name: string) => Effect.Effect<void>
    readonly remove: (repoId: number, name: string) => Effect.Effect<void>
    /** Exactly these flags afterwards (none for an empty list). */
    readonly replace: (repoId: number, names: ReadonlyArray<string>) => Effect.Effect<void>
  }
>()("hearth/flags/FlagsRepo") {
  static readonly layer = Layer.effect(
    FlagsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const add = (repoId: number, name: string) =>
        sql`INSERT INTO repo_flags (repo_id, name) VALUES (${repoId}, ${name}) ON CONFLICT DO NOTHING`
      return {
        list: (repoId) =>
          Effect.orDie(
            Effect.map(sql`SELECT name FROM repo_flags WHERE repo_id = ${repoId} ORDER BY name`, (rows) =>
              rows.map((r) => String(r.name))
            )
          ),
        has: (repoId, name) =>
          Effect.orDie(
            Effect.map(
              sql`SELECT 1 FROM repo_flags WHERE repo_id = ${repoId} AND name = ${name}`,
              (rows) => rows.length > 0
            )
          ),
        add: (repoId, name) => Effect.orDie(Effect.asVoid(add(repoId, name))),
        remove: (repoId, name) =>
          Effect.orDie(Effect.asVoid(sql`DELETE FROM repo_flags WHERE repo_id = ${repoId} AND name = ${name}`)),
        replace: (repoId, names) =>
          Effect.orDie(
            sql.withTransaction(
              Effect.andThen(
                sql`DELETE FROM repo_flags WHERE repo_id = ${repoId}`,
                Effect.forEach(new Set(names), (name) => add(repoId, name), { discard: true })
              )
            )
          )
      }
    })
  )
}

// SQL for repository languages: the primary language kept on the repository row (Forgejo's
// `language_stat.is_primary`), shown as the Repository JSON's `language`.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

export class LanguagesRepo extends Context.Service<
  LanguagesRepo,
  {
    /** Records the repository's primary language ("" for none); its `updated_at` stays. */
    readonly setPrimary: (repoId: number, language: string) => Effect.Effect<void>
  }
>()("hearth/languages/LanguagesRepo") {
  static readonly layer = Layer.effect(
    LanguagesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return LanguagesRepo.of(
        sqlBoundary({
          setPrimary: (repoId, language) =>
            Effect.asVoid(
              sql`UPDATE repositories SET primary_language = ${language}
              WHERE id = ${repoId} AND primary_language <> ${language}`
            )
        })
      )
    })
  )
}

// The database side of rendering: which `@names` of a document may become mention links.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

/** Who reads the rendered document: decides which limited and private accounts it may name. */
export interface MentionViewer {
  readonly id: number
  readonly isAdmin: boolean
}

export class MarkdownRepo extends Context.Service<
  MarkdownRepo,
  {
    /**
     * Of `lowerNames`, those of accounts the viewer may see (public; limited to a signed-in viewer;
     * private to itself and administrators), in one query.
     */
    readonly mentionable: (
      lowerNames: ReadonlyArray<string>,
      viewer: MentionViewer | undefined
    ) => Effect.Effect<Set<string>>
  }
>()("hearth/markdown/MarkdownRepo") {
  static readonly layer = Layer.effect(
    MarkdownRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return MarkdownRepo.of(
        sqlBoundary({
          mentionable: (lowerNames, viewer) => {
            if (lowerNames.length === 0) return Effect.succeed(new Set<string>())
            const visible =
              viewer === undefined
                ? sql`visibility = 'public'`
                : viewer.isAdmin
                  ? sql`true`
                  : sql`(visibility IN ('public', 'limited') OR id = ${viewer.id})`
            return Effect.map(
              sql<{
                lower_name: string
              }>`SELECT lower_name FROM users WHERE lower_name IN ${sql.in(lowerNames)} AND ${visible}`,
              (rows) => new Set(rows.map((r) => r.lower_name))
            )
          }
        })
      )
    })
  )
}

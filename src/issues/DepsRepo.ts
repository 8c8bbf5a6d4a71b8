// SQL for issue dependencies (table `issue_dependencies` of migration 0022_issue_deps_times). A row
// says `issue_id` is blocked by `dependency_id`. Rules live in Deps.ts.
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"
import { commentType } from "./Present.ts"

type Row = Record<string, any>
const num = (v: unknown) => Number(v)

export class IssueDepsRepo extends Context.Service<
  IssueDepsRepo,
  {
    /**
     * Makes `issueId` depend on `dependencyId` and writes the `add_dependency` comment in both
     * issues; "exists" when it already does, "circular" when `dependencyId` already depends on
     * `issueId`, directly or through others.
     */
    readonly add: (
      issueId: number,
      dependencyId: number,
      doerId: number,
      at: Date
    ) => Effect.Effect<"added" | "exists" | "circular">
    /** Removes the dependency and writes the `remove_dependency` comments; false when there was none. */
    readonly remove: (issueId: number, dependencyId: number, doerId: number, at: Date) => Effect.Effect<boolean>
    /** Ids of the issues blocking `issueId`, oldest link first. */
    readonly blockers: (issueId: number) => Effect.Effect<ReadonlyArray<number>>
    /** Ids of the issues `issueId` blocks, oldest link first. */
    readonly blocking: (issueId: number) => Effect.Effect<ReadonlyArray<number>>
    /** Forgejo's `IssueNoDependenciesLeft`, negated: some issue blocking this one is still open. */
    readonly hasOpenBlockers: (issueId: number) => Effect.Effect<boolean>
  }
>()("hearth/issues/IssueDepsRepo") {
  static readonly layer = Layer.effect(
    IssueDepsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const tx = transaction(sql)
      /** Forgejo's `createIssueDependencyComment`: one comment in each issue, naming the other. */
      const comments = (issueId: number, dependencyId: number, doerId: number, type: number, at: Date) =>
        sql`INSERT INTO comments (issue_id, type, poster_id, dependent_issue_id, created_at, updated_at)
          VALUES (${issueId}, ${type}, ${doerId}, ${dependencyId}, ${at}, ${at}),
                 (${dependencyId}, ${type}, ${doerId}, ${issueId}, ${at}, ${at})`
      const ids = (rows: ReadonlyArray<Row>) => rows.map((r) => num(r.id))
      return IssueDepsRepo.of(
        sqlBoundary({
          add: (issueId, dependencyId, doerId, at) =>
            tx(
              Effect.gen(function* () {
                // Both issues locked in id order, so two opposite links cannot both pass the cycle check.
                yield* sql`SELECT id FROM issues WHERE id IN (${issueId}, ${dependencyId}) ORDER BY id FOR UPDATE`
                const [existing] = yield* sql`SELECT 1 AS one FROM issue_dependencies
                  WHERE issue_id = ${issueId} AND dependency_id = ${dependencyId}`
                if (existing !== undefined) return "exists" as const
                // Does the dependency (transitively) depend on the issue already?
                const [cycle] = yield* sql`WITH RECURSIVE chain (id) AS (
                    SELECT dependency_id FROM issue_dependencies WHERE issue_id = ${dependencyId}
                    UNION SELECT d.dependency_id FROM issue_dependencies d JOIN chain c ON d.issue_id = c.id
                  ) SELECT 1 AS one FROM chain WHERE id = ${issueId} LIMIT 1`
                if (cycle !== undefined) return "circular" as const
                yield* sql`INSERT INTO issue_dependencies (issue_id, dependency_id, user_id, created_at)
                  VALUES (${issueId}, ${dependencyId}, ${doerId}, ${at})`
                yield* comments(issueId, dependencyId, doerId, commentType("add_dependency"), at)
                return "added" as const
              })
            ),
          remove: (issueId, dependencyId, doerId, at) =>
            tx(
              Effect.gen(function* () {
                const removed = yield* sql`DELETE FROM issue_dependencies
                  WHERE issue_id = ${issueId} AND dependency_id = ${dependencyId} RETURNING issue_id`
                if (removed.length === 0) return false
                yield* comments(issueId, dependencyId, doerId, commentType("remove_dependency"), at)
                return true
              })
            ),
          blockers: (issueId) =>
            Effect.map(
              sql`SELECT dependency_id AS id FROM issue_dependencies WHERE issue_id = ${issueId}
                ORDER BY created_at, dependency_id`,
              ids
            ),
          blocking: (issueId) =>
            Effect.map(
              sql`SELECT issue_id AS id FROM issue_dependencies WHERE dependency_id = ${issueId}
                ORDER BY created_at, issue_id`,
              ids
            ),
          hasOpenBlockers: (issueId) =>
            Effect.map(
              sql`SELECT EXISTS (SELECT 1 FROM issue_dependencies d JOIN issues i ON i.id = d.dependency_id
                WHERE d.issue_id = ${issueId} AND NOT i.is_closed) AS yes`,
              (rows) => Boolean(rows[0]!.yes)
            )
        })
      )
    })
  )
}

// A PostgreSQL database of a test's own on TEST_DATABASE_URL's server (light: the run's global
// setup uses it without loading the application).
import * as PgClient from "@effect/sql-pg/PgClient"
import { Context, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

/**
 * A database of its own on the server at `adminUrl`, dropped when the scope closes; with
 * `create: false`, only a fresh name (for a test that has Hearth create it), dropped all the same.
 */
export const freshPostgresDatabase = (
  adminUrl: string,
  options: { readonly create?: boolean; readonly template?: string } = {}
) =>
  Effect.gen(function* () {
    const name = `hearth_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`
    const admin = (statement: (sql: SqlClient) => Effect.Effect<unknown, unknown>) =>
      Effect.scoped(
        Effect.gen(function* () {
          const context = yield* Layer.build(PgClient.layer({ url: Redacted.make(adminUrl), maxConnections: 1 }))
          yield* statement(Context.get(context, SqlClient))
        })
      )
    yield* Effect.acquireRelease(
      options.create === false
        ? Effect.void
        : admin((sql) =>
            options.template === undefined
              ? sql`CREATE DATABASE ${sql(name)}`
              : sql`CREATE DATABASE ${sql(name)} TEMPLATE ${sql(options.template)}`
          ),
      () => admin((sql) => sql`DROP DATABASE IF EXISTS ${sql(name)} WITH (FORCE)`).pipe(Effect.ignore)
    )
    const url = new URL(adminUrl)
    url.pathname = `/${name}`
    return url.toString()
  })

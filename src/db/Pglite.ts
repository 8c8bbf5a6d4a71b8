// Embedded PostgreSQL: in-process PGlite behind an `effect/sql` client, so the rest of Hearth
// sees the same `SqlClient` (and the same PostgreSQL compiler) as with a real server.
// PGlite is a single backend: every statement and every transaction holds one permit, so
// transactions are serialized and never interleave with other statements.
import { PGlite, types } from "@electric-sql/pglite"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import {
  ConnectionError,
  ConstraintError,
  DeadlockError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"
import { mkdirSync } from "node:fs"

/** Decode like `@effect/sql-pg`: int8 as `bigint`, timestamps as `Date`. */
const parsers = {
  [types.INT8]: (x: string) => BigInt(x),
  [types.TIMESTAMPTZ]: (x: string) => new Date(x),
  [types.TIMESTAMP]: (x: string) => new Date(x + "Z")
}

const classify = (cause: unknown, operation: string): SqlErrorReason => {
  const fields = cause as { code?: string; constraint?: string; message?: string }
  const props = { cause, message: `PGlite: ${fields.message ?? String(cause)}`, operation }
  const code = fields.code
  if (code === "23505") return new UniqueViolation({ ...props, constraint: fields.constraint ?? "unknown" })
  if (code?.startsWith("23")) return new ConstraintError(props)
  if (code?.startsWith("42")) return new SqlSyntaxError(props)
  if (code?.startsWith("08")) return new ConnectionError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  return new UnknownError(props)
}

const run = <A>(operation: string, f: () => Promise<A>): Effect.Effect<A, SqlError> =>
  Effect.tryPromise({ try: f, catch: (cause) => new SqlError({ reason: classify(cause, operation) }) })

const makeConnection = (db: PGlite): Connection => {
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    run("execute", () => db.query<Record<string, unknown>>(sql, params as Array<unknown>)).pipe(
      Effect.map((r) => r.rows)
    )
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    run("execute", () => db.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" })).pipe(
      Effect.map((r) => r.rows)
    )
  const execute = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ) => transformRows ? Effect.map(rows(sql, params), transformRows) : rows(sql, params)
  return {
    execute,
    executeUnprepared: execute,
    executeRaw: (sql, params) => run("execute", () => db.query(sql, params as Array<unknown>)),
    executeValues: values,
    executeValuesUnprepared: values,
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}

export interface PgliteOptions {
  /** Directory of the database files; `undefined` keeps everything in memory (tests). */
  readonly dataDir?: string | undefined
}

/** Opens PGlite for the scope's lifetime and builds a `SqlClient` on it. */
export const make = (options: PgliteOptions): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const dataDir = options.dataDir
    // PGlite's own mkdir is not recursive.
    if (dataDir !== undefined) mkdirSync(dataDir, { recursive: true })
    const db = yield* Effect.acquireRelease(
      run("connect", () => PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), parsers })),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    const connection = makeConnection(db)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: yield* Semaphore.make(1),
      isTransaction: () => db.isInTransaction()
    })
    return yield* SqlClient.make({
      ...acquirers,
      driver: "pglite",
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]],
      prepareTransactionControls: true,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
    })
  })

export const layer = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))

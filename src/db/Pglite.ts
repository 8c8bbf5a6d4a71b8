// Embedded PostgreSQL: in-process PGlite behind an `effect/sql` client, so the rest of Hearth
// sees the same `SqlClient` (and the same PostgreSQL compiler) as with a real server.
//
// Kept deliberately close to `@effect/sql-pg`, so that code tested on one back-end behaves the
// same on the other (test/db.test.ts runs one suite against both):
// - PGlite is a single backend: every statement and every transaction holds one permit, so
//   transactions are serialized and never interleave with statements of other fibers. A
//   transaction therefore stalls all other database work: keep transactions short, and never wait
//   inside one for work done on another fiber that needs the database (it would wait forever).
// - Parameters are bound with the types `@effect/sql-pg` infers from the JS value (boolean →
//   bool, integer → int4/int8, bigint → int8, Date → timestamptz, Uint8Array → bytea, arrays of
//   those → arrays; strings and null untyped), so `SELECT ${true}` is a boolean on both and a
//   mismatched comparison fails on both. `PgTypes` parameters (e.g. `PgTypes.jsonb(value)`) are
//   honoured; a plain object cannot be bound (as with sql-pg): pass JSON as
//   `${JSON.stringify(x)}::jsonb` or `PgTypes.jsonb(x)`.
// - Results: int8/count(*) as `bigint`, timestamp(tz) as `Date`, date as "YYYY-MM-DD", time as
//   `bigint` microseconds. Not aligned (Hearth does not use them): `interval` is PGlite's text
//   ("1 day") where sql-pg gives an object, and `regclass` is its name where sql-pg gives the oid.
// - COMMIT of an aborted transaction (a statement failed and the error was caught) fails with an
//   `SqlError` instead of silently rolling back — PostgreSQL answers such a COMMIT with ROLLBACK.
// - Errors are classified by SQLSTATE exactly as sql-pg does (UniqueViolation with the
//   constraint name, SqlSyntaxError, …); `cause` is PGlite's error with `code`, `detail`, ….
// - Streaming (`sql.stream`, `executeStream`) works but reads the whole result first: PGlite has
//   no incremental row delivery, so a stream is not a way to bound memory on this back-end.
//
// Memory (figures in infra/bench/README.md, "The embedded database's memory"): PostgreSQL runs
// inside one WebAssembly memory, which never shrinks and whose every written page stays resident
// for the life of the process. So what PostgreSQL allocates at start is paid in full, for good:
// - shared_buffers is 16 MB here, not PGlite's 128 MB (in the WASM build PostgreSQL's shared memory
//   is written in full when it is created, so all of it is resident from the start: 151 → 29 MB
//   of WASM memory resident at idle). Hearth's database of a small forge fits (a fresh one is ~40 MB on disk,
//   mostly catalogs and WAL, read in a few pages at a time); a page not cached is read from the
//   data dir through Node's fs and the OS page cache. `[database] EMBEDDED_SHARED_BUFFERS`.
//   wal_buffers follows it (1/32: 4 MB → 512 kB).
// - The WASM memory's initial size (PGlite's `initialMemory`, 128 MB) cannot be smaller: it is
//   the module's declared minimum. It costs only address space; pages count once written.
// - work_mem (4 MB), maintenance_work_mem (64 MB) and temp_buffers (8 MB) are PostgreSQL's
//   defaults: limits reached only by a large sort, an index build over a large table or
//   temporary tables (Hearth makes none). As with any allocation in the WASM memory, what one
//   statement reaches stays resident until the process exits.
// - A new data dir is initialised (initdb) in a child process, not here: initdb runs a second
//   PostgreSQL instance, copies its whole WASM memory and the new data dir as a tar archive,
//   which brought this process to ~600 MB and left ~90 MB behind in the C heap after it was
//   freed (a server started on a fresh data dir idled at 311–321 MB against 217–230 MB on an
//   existing one). The child exits and gives all of it back.

import { execFile } from "node:child_process"
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import { PGlite, types } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { Effect, Layer, type Scope, Semaphore, Stream } from "effect"
import * as Reactivity from "effect/reactivity/Reactivity"
import * as SqlClient from "effect/sql/SqlClient"
import type { Connection } from "effect/sql/SqlConnection"
import {
  AuthenticationError,
  AuthorizationError,
  ConnectionError,
  ConstraintError,
  DeadlockError,
  LockTimeoutError,
  SerializationError,
  SqlError,
  type SqlErrorReason,
  SqlSyntaxError,
  StatementTimeoutError,
  UniqueViolation,
  UnknownError
} from "effect/sql/SqlError"
import { packagePath } from "../lib/PackageRoot.ts"

/** "HH:MM:SS[.ffffff]" → microseconds since midnight, as sql-pg decodes `time`. */
const timeToMicros = (x: string): bigint => {
  const [h = "0", m = "0", s = "0"] = x.split(":")
  const [whole = "0", fraction = ""] = s.split(".")
  return (
    ((BigInt(h) * 60n + BigInt(m)) * 60n + BigInt(whole)) * 1_000_000n + BigInt(fraction.padEnd(6, "0").slice(0, 6))
  )
}

/** Decode like `@effect/sql-pg`: int8 as `bigint`, timestamps as `Date`, date as text. */
const parsers = {
  [types.INT8]: (x: string) => BigInt(x),
  [types.TIMESTAMPTZ]: (x: string) => new Date(x),
  [types.TIMESTAMP]: (x: string) => new Date(x.replace(" ", "T") + "Z"),
  [types.DATE]: (x: string) => x,
  [types.TIME]: timeToMicros
}

const INT32_MIN = -2147483648
const INT32_MAX = 2147483647

class BindError extends Error {}

/** The parameter type `@effect/sql-pg` would bind for a JS value (0 = let the server infer). */
const scalarType = (value: unknown): readonly [oid: number, value: unknown] => {
  if (PgTypes.isParameter(value)) return [value.oid, value.value]
  if (value === null || value === undefined) return [0, null]
  switch (typeof value) {
    case "boolean":
      return [PgTypes.OID.bool, value]
    case "bigint":
      return [PgTypes.OID.int8, value]
    case "number":
      if (Number.isInteger(value)) {
        if (value >= INT32_MIN && value <= INT32_MAX) return [PgTypes.OID.int4, value]
        if (Number.isSafeInteger(value)) return [PgTypes.OID.int8, BigInt(value)]
      }
      return [PgTypes.OID.float8, value]
    case "string":
      return [0, value]
  }
  if (value instanceof Date) return [PgTypes.OID.timestamptz, value]
  if (value instanceof Uint8Array) return [PgTypes.OID.bytea, value]
  throw new BindError(`Cannot infer a PostgreSQL type for ${String(value)}`)
}

const paramType = (value: unknown): readonly [oid: number, value: unknown] => {
  if (!Array.isArray(value)) return scalarType(value)
  if (value.length === 0) return [0, "{}"] // the statement decides the array type
  let elementOid: number | undefined
  const values = value.map((element) => {
    if (Array.isArray(element)) throw new BindError("Nested array parameters are not supported")
    const [oid0, v] = scalarType(element)
    if (v === null) return null
    const oid = oid0 === 0 ? PgTypes.OID.text : oid0
    if (elementOid === undefined) elementOid = oid
    else if (elementOid !== oid) throw new BindError("Array parameter elements must have the same inferred OID")
    return v
  })
  if (elementOid === undefined) throw new BindError("Cannot infer the type of an array containing only null values")
  const arrayOid = PgTypes.arrayOidFor(elementOid)
  if (arrayOid === undefined) throw new BindError(`No array type known for element OID ${elementOid}`)
  return [arrayOid, values]
}

const bind = (params: ReadonlyArray<unknown>) => {
  const values: Array<unknown> = []
  const paramTypes: Array<number> = []
  for (const param of params) {
    const [oid, value] = paramType(param)
    paramTypes.push(oid)
    values.push(value)
  }
  return { values, paramTypes }
}

/** SQLSTATE → reason, the same mapping as `@effect/sql-pg`. */
const classify = (cause: unknown, operation: string): SqlErrorReason => {
  const fields = cause as { code?: unknown; constraint?: unknown; message?: unknown }
  const text = typeof fields?.message === "string" ? fields.message : String(cause)
  const props = { cause, message: `PGlite: ${text}`, operation }
  const code = typeof fields?.code === "string" ? fields.code : undefined
  if (code === undefined) return new UnknownError(props)
  if (code.startsWith("08")) return new ConnectionError(props)
  if (code.startsWith("28")) return new AuthenticationError(props)
  if (code === "42501") return new AuthorizationError(props)
  if (code.startsWith("42")) return new SqlSyntaxError(props)
  if (code === "23505") {
    const constraint =
      typeof fields.constraint === "string" && fields.constraint.trim() !== "" ? fields.constraint.trim() : "unknown"
    return new UniqueViolation({ ...props, constraint })
  }
  if (code.startsWith("23")) return new ConstraintError(props)
  if (code === "40P01") return new DeadlockError(props)
  if (code === "40001") return new SerializationError(props)
  if (code === "55P03") return new LockTimeoutError(props)
  if (code === "57014") return new StatementTimeoutError(props)
  return new UnknownError(props)
}

const run = <A>(operation: string, f: () => Promise<A>): Effect.Effect<A, SqlError> =>
  Effect.tryPromise({ try: f, catch: (cause) => new SqlError({ reason: classify(cause, operation) }) })

type Rows = ReadonlyArray<any>

// ---------------------------------------------------------------- statements
// Each statement goes to PGlite as PostgreSQL's extended protocol in one call, as a named
// prepared statement parsed and planned once per text: `db.query` parses and plans every
// statement anew (unnamed) and crosses into WebAssembly six times for it (parse, two describes,
// bind, execute, sync). Measured on PGlite alone (Liftoff only, as `serve` runs it): a primary-key
// SELECT 377 → 100 µs, a page of 50 JSON rows 1.30 → 0.81 ms (infra/bench/README.md, issue 19,
// session 36). Results are made as `db.query` makes them (its parsers, `rows`, `fields`,
// `command`, `affectedRows`), errors are its `DatabaseError`s.

/**
 * Statements kept prepared; past it the least recently used is closed. Each keeps its parse tree
 * and plan in the WebAssembly memory, which never shrinks: 512 page-sized statements, each run 6
 * times (a generic plan cached), took 21 MB (PGlite alone); Hearth's hot paths use far fewer.
 */
const PREPARED_STATEMENTS = 256

/** A frontend message: its type byte, its length, its body. */
const message = (type: string, body: Buffer): Buffer => {
  const out = Buffer.allocUnsafe(5 + body.length)
  out[0] = type.charCodeAt(0)
  out.writeInt32BE(4 + body.length, 1)
  body.copy(out, 5)
  return out
}
const text0 = (s: string) => Buffer.from(`${s}\0`)
const int16 = (n: number) => {
  const b = Buffer.allocUnsafe(2)
  b.writeInt16BE(n)
  return b
}
const int32 = (n: number) => {
  const b = Buffer.allocUnsafe(4)
  b.writeInt32BE(n)
  return b
}
const parseMessage = (name: string, sql: string, types: ReadonlyArray<number>) =>
  message("P", Buffer.concat([text0(name), text0(sql), int16(types.length), ...types.map(int32)]))
const bindMessage = (name: string, values: ReadonlyArray<string | null>) => {
  const parts: Array<Buffer> = [text0(""), text0(name), int16(0), int16(values.length)]
  for (const value of values) {
    if (value === null) parts.push(int32(-1))
    else {
      const bytes = Buffer.from(value)
      parts.push(int32(bytes.length), bytes)
    }
  }
  parts.push(int16(0))
  return message("B", Buffer.concat(parts))
}
const DESCRIBE_PORTAL = message("D", Buffer.from("P\0"))
const EXECUTE = message("E", Buffer.concat([text0(""), int32(0)]))
const SYNC = message("S", Buffer.alloc(0))
const closeMessage = (name: string) => message("C", Buffer.concat([Buffer.from("S"), text0(name)]))

interface BackendMessage {
  readonly name: string
  readonly fields?: ReadonlyArray<any>
  readonly text?: string
}

/** `db.query`'s result from the messages of one statement. */
const resultOf = (db: PGlite, messages: ReadonlyArray<BackendMessage>, rowMode: "array" | undefined) => {
  const parsers = (db as unknown as { parsers: Record<number, (x: string, oid: number) => unknown> }).parsers
  let fields: Array<{ name: string; dataTypeID: number }> = []
  const rows: Array<unknown> = []
  let command: string | undefined
  let affectedRows = 0
  let rowCount: number | undefined
  for (const m of messages) {
    if (m.name === "rowDescription") {
      fields = m.fields!.map((f: { name: string; dataTypeID: number }) => ({ name: f.name, dataTypeID: f.dataTypeID }))
    } else if (m.name === "dataRow") {
      const values = m.fields!.map((value: string | null, i: number) => {
        if (value === null) return null
        const parse = parsers[fields[i]!.dataTypeID]
        return parse === undefined ? value : parse(value, fields[i]!.dataTypeID)
      })
      if (rowMode === "array") rows.push(values)
      else {
        const row: Record<string, unknown> = {}
        for (let i = 0; i < fields.length; i++) row[fields[i]!.name] = values[i]
        rows.push(row)
      }
    } else if (m.name === "commandComplete") {
      const words = m.text!.split(" ")
      command = words[0]
      const n = Number.parseInt(words[words.length - 1]!, 10)
      if (["INSERT", "UPDATE", "DELETE", "COPY", "MERGE"].includes(command!)) affectedRows += n
      if (!Number.isNaN(n)) rowCount = n
    }
  }
  return {
    rows,
    fields,
    affectedRows,
    ...(command === undefined ? {} : { command }),
    ...(rowCount === undefined ? {} : { rowCount })
  }
}

/** Runs statements as named prepared statements of `db` (see above); one at a time (the permit). */
const makeStatements = (db: PGlite) => {
  const prepared = new Map<string, string>() // types and text → statement name, least recently used first
  let counter = 0
  const serializers = (db as unknown as { serializers: Record<number, (x: unknown) => string> }).serializers
  const serialize = (value: unknown, oid: number): string | null => {
    if (value === null || value === undefined) return null
    const write = serializers[oid]
    return write === undefined ? String(value) : write(value)
  }
  const send = (bytes: Buffer) =>
    db.execProtocol(bytes, { throwOnError: false }) as Promise<{ messages: ReadonlyArray<BackendMessage> }>
  const statement = async (
    sql: string,
    params: ReadonlyArray<unknown>,
    rowMode: "array" | undefined,
    retried = false
  ): Promise<any> => {
    const { paramTypes, values } = bind(params)
    // A prepared statement's parameter types are fixed: the same text with other types (an
    // integer past int4, say) is another statement.
    const key = `${paramTypes.join(",")} ${sql}`
    const known = prepared.get(key)
    const name = known ?? `h${++counter}`
    const parts: Array<Buffer> = []
    if (known === undefined) {
      // The least recently used closed first: before anything that may fail (after an error
      // PostgreSQL skips the messages up to the Sync).
      if (prepared.size >= PREPARED_STATEMENTS) {
        const [oldest, oldName] = prepared.entries().next().value!
        prepared.delete(oldest)
        parts.push(closeMessage(oldName))
      }
      parts.push(parseMessage(name, sql, paramTypes))
    } else prepared.delete(key) // set again below: the most recently used last
    parts.push(
      bindMessage(
        name,
        values.map((v, i) => serialize(v, paramTypes[i]!))
      ),
      DESCRIBE_PORTAL,
      EXECUTE,
      SYNC
    )
    const { messages } = await send(Buffer.concat(parts))
    if (known !== undefined || messages.some((m) => m.name === "parseComplete")) prepared.set(key, name)
    const error = messages.find((m) => m.name === "error") as (Error & { code?: string }) | undefined
    if (error === undefined) return resultOf(db, messages, rowMode)
    // A table changed under a prepared statement ("cached plan must not change result type"):
    // prepared again, once.
    if (error.code === "0A000" && known !== undefined && !retried) {
      prepared.delete(key)
      await send(Buffer.concat([closeMessage(name), SYNC]))
      return statement(sql, params, rowMode, true)
    }
    throw Object.assign(error, { query: sql, params })
  }
  return statement
}

const makeConnection = (db: PGlite): Connection => {
  const statements = makeStatements(db)
  const query = <T>(sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
    run("execute", (): Promise<{ rows: Array<T> }> => statements(sql, params, rowMode))
  const rows = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query<Record<string, unknown>>(sql, params), (r): Rows => r.rows)
  const values = (sql: string, params: ReadonlyArray<unknown>) =>
    Effect.map(query<Array<unknown>>(sql, params, "array"), (r) => r.rows)
  const execute = (
    sql: string,
    params: ReadonlyArray<unknown>,
    transformRows: (<A extends object>(row: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined
  ): Effect.Effect<Rows, SqlError> => (transformRows ? Effect.map(rows(sql, params), transformRows) : rows(sql, params))
  return {
    execute,
    executeUnprepared: execute,
    executeRaw: (sql, params) => query(sql, params),
    executeValues: values,
    executeValuesUnprepared: values,
    executeStream: (sql, params, transformRows) => Stream.fromIterableEffect(execute(sql, params, transformRows))
  }
}

/** PostgreSQL answers COMMIT of an aborted transaction with ROLLBACK: report it, as sql-pg does. */
const commit = (conn: Connection): Effect.Effect<void, SqlError> =>
  Effect.flatMap(conn.executeRaw("COMMIT", []), (result) =>
    (result as { command?: string }).command === "ROLLBACK"
      ? Effect.fail(
          new SqlError({
            reason: new UnknownError({
              cause: new Error("COMMIT rolled back an aborted transaction"),
              message: "PGlite: COMMIT rolled back an aborted transaction",
              operation: "commit"
            })
          })
        )
      : Effect.void
  )

export interface PgliteOptions {
  /** Directory of the database files; `undefined` keeps everything in memory (tests). */
  readonly dataDir?: string | undefined
  /** PostgreSQL's shared_buffers, in its own syntax ("16MB"); see the memory notes above. */
  readonly sharedBuffers?: string | undefined
}

/** The embedded database's planner cost of a page read out of order (PostgreSQL's is 4). */
export const EMBEDDED_RANDOM_PAGE_COST = 1.1

/** The embedded database's shared_buffers when nothing else is said (and `auto`'s least). */
export const DEFAULT_SHARED_BUFFERS = "16MB"

/** Bytes of the files under `dir`, recursively (a missing dir has none). */
const bytesUnder = (dir: string): number => {
  let total = 0
  const entries = (() => {
    try {
      return readdirSync(dir, { withFileTypes: true })
    } catch {
      return []
    }
  })()
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) total += bytesUnder(path)
    else if (entry.isFile()) total += statSync(path).size
  }
  return total
}

/**
 * `[database] EMBEDDED_SHARED_BUFFERS = auto` (the default): a sixteenth of the tables' and
 * indexes' size on disk, from 16 MB (a small forge: the memory notes above) to 128 MB (a tracker
 * of 100,000 issues — 1.9 GB here — searched at 0.57× the time 16 MB took; bench:issues).
 */
export const autoSharedBuffers = (dataDir: string): string => {
  const mb = Math.ceil(bytesUnder(join(dataDir, "base")) / 16 / 2 ** 20)
  return `${Math.min(128, Math.max(16, mb))}MB`
}

// Run from the sources also when the server runs from the bundle (one small module, once per data dir).
const INITDB_SCRIPT = packagePath("src/db/PgliteInitdb.ts")

/**
 * Creates the database files of a new data dir in a child process (see the memory notes above):
 * into `<dataDir>.initdb` first, moved into place once complete, so that an interrupted initdb
 * leaves no half-made database behind. A data dir that is not empty (and holds no database) is
 * initialised in place, as PGlite itself would. The child gets `--liftoff-only`: initdb's SQL
 * runs once, so optimising it only costs memory (peak 1,068 against 633 MB, measured with 128 MB
 * of shared_buffers) and CPU.
 */
const initdbInChild = (dataDir: string, signal: AbortSignal): Promise<void> => {
  const inPlace = readdirSync(dataDir).length > 0
  const target = inPlace ? dataDir : `${dataDir}.initdb`
  if (!inPlace) rmSync(target, { recursive: true, force: true })
  return new Promise<void>((resolve, reject) => {
    execFile(
      process.execPath,
      ["--liftoff-only", INITDB_SCRIPT, target],
      { signal, maxBuffer: 1024 * 1024 },
      (error, _stdout, stderr) => {
        if (error !== null) {
          const detail = stderr.trim().split("\n").at(-1) ?? ""
          return reject(new Error(`initdb failed in ${target}: ${detail === "" ? error.message : detail}`))
        }
        try {
          if (!inPlace) renameSync(target, dataDir) // onto the empty directory
          resolve()
        } catch (e) {
          reject(e)
        }
      }
    )
  })
}

/** Opens PGlite for the scope's lifetime and builds a `SqlClient` on it. */
export const make = (
  options: PgliteOptions
): Effect.Effect<SqlClient.SqlClient, SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function* () {
    const dataDir = options.dataDir
    if (dataDir !== undefined) {
      // PGlite's own mkdir is not recursive.
      mkdirSync(dataDir, { recursive: true })
      if (!existsSync(`${dataDir}/PG_VERSION`)) {
        yield* Effect.tryPromise({
          try: (signal) => initdbInChild(dataDir, signal),
          catch: (cause) => new SqlError({ reason: classify(cause, "connect") })
        })
      }
    }
    const startParams = [
      ...PGlite.defaultStartParams,
      // Every page PGlite reads comes from the OS's page cache through the same file calls, in
      // order or not: PostgreSQL's default 4 (a disk's seek) made the planner scan whole tables
      // rather than probe an index (bench:issues' search: a sequential scan of 70,000 issues for
      // 1,980 matches, 2.3× the time). 1.1 is PostgreSQL's own advice for cached data.
      "-c",
      `random_page_cost=${EMBEDDED_RANDOM_PAGE_COST}`,
      "-c",
      `shared_buffers=${
        options.sharedBuffers === "auto"
          ? dataDir === undefined
            ? DEFAULT_SHARED_BUFFERS
            : autoSharedBuffers(dataDir)
          : (options.sharedBuffers ?? DEFAULT_SHARED_BUFFERS)
      }`
    ]
    const db = yield* Effect.acquireRelease(
      run("connect", () =>
        // pg_trgm: the issue search's trigram indexes (migration 0018).
        PGlite.create({ ...(dataDir === undefined ? {} : { dataDir }), parsers, startParams, extensions: { pg_trgm } })
      ),
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
      commit,
      releaseSavepoint: (name) => `RELEASE SAVEPOINT ${name}`
    })
  })

export const layer = (options: PgliteOptions): Layer.Layer<SqlClient.SqlClient, SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(options)).pipe(Layer.provide(Reactivity.layer))

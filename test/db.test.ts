// The database client contract Hearth relies on, run against the embedded PGlite client (a temp
// data dir, behind the data-dir lock, as `serve` opens it) and, when TEST_DATABASE_URL is set,
// against PostgreSQL (a fresh database) — the same expectations for both back-ends.

import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from "node:fs"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import * as PgTypes from "@effect/sql-pg/PgTypes"
import { Context, Data, Deferred, Effect, Exit, Fiber, Layer, Scope, Stream } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Settings from "../src/config/Settings.ts"
import * as Database from "../src/db/Database.ts"
import * as DataDirLock from "../src/db/DataDirLock.ts"
import * as Pglite from "../src/db/Pglite.ts"
import { ISSUE_COLUMNS } from "../src/issues/Repo.ts"
import { PULL_COLUMNS } from "../src/pulls/Repo.ts"
import { freshPostgresDatabase } from "./support/hearth.ts"

const testDatabaseUrl = process.env.TEST_DATABASE_URL
const backends = [
  { name: "embedded PGlite", postgres: false },
  ...(testDatabaseUrl ? [{ name: "PostgreSQL", postgres: true }] : [])
]

/** A fresh place for a database: a temp data dir, or a new PostgreSQL database. */
interface Location {
  readonly settings: Settings.SettingsShape
  readonly dispose: () => Promise<void>
}

const freshLocation = async (postgres: boolean): Promise<Location> => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-db-test-"))
  const scope = Effect.runSync(Scope.make())
  const database = postgres
    ? {
        DB_TYPE: "postgres",
        DATABASE_URL: await Effect.runPromise(Scope.provide(freshPostgresDatabase(testDatabaseUrl!), scope))
      }
    : { DB_TYPE: "embedded" }
  return {
    settings: Settings.resolveSettings({ server: { APP_DATA_PATH: dataDir }, database }),
    dispose: async () => {
      await Effect.runPromise(Scope.close(scope, Exit.void))
      rmSync(dataDir, { recursive: true, force: true })
    }
  }
}

interface Db {
  readonly sql: SqlClient
  readonly run: <A, E>(effect: Effect.Effect<A, E, SqlClient>) => Promise<A>
  readonly close: () => Promise<void>
}

/** Opens the configured client exactly as the server does (`Database.clientLayer`). */
const open = async (settings: Settings.SettingsShape): Promise<Db> => {
  const scope = Effect.runSync(Scope.make())
  const context = await Effect.runPromise(
    Layer.buildWithScope(Database.clientLayer.pipe(Layer.provide(Settings.layerValue(settings))), scope)
  ).catch(async (e) => {
    await Effect.runPromise(Scope.close(scope, Exit.void))
    throw e
  })
  const sql = Context.get(context, SqlClient)
  return {
    sql,
    run: (effect) => Effect.runPromise(Effect.provideService(effect, SqlClient, sql)),
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

/** Runs `f` with the client. */
const withSql = <A, E, R>(f: (sql: SqlClient) => Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient
    return yield* f(sql)
  })

// biome-ignore lint/complexity/noBannedTypes: an Effect tagged error without fields takes `{}`
class Boom extends Data.TaggedError("Boom")<{}> {}

const reasonOf = (e: unknown) => (isSqlError(e) ? e.reason._tag : `not an SqlError: ${String(e)}`)

/** Runs `effect` and returns its failure (the test fails if it succeeds). */
const failureOf = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.flip(effect)

/** True when the session is inside an open transaction: now() stands still there. */
const inTransaction = Effect.gen(function* () {
  const sql = yield* SqlClient
  const [a] = yield* sql<{ t: Date }>`SELECT now() AS t`
  yield* Effect.sleep("15 millis")
  const [b] = yield* sql<{ t: Date }>`SELECT now() AS t`
  return a!.t.getTime() === b!.t.getTime()
})

describe.each(backends)("SqlClient on $name", ({ postgres }) => {
  let location: Location
  let db: Db
  let firstRun: ReadonlyArray<readonly [number, string]>

  beforeAll(async () => {
    location = await freshLocation(postgres)
    db = await open(location.settings)
    firstRun = await db.run(Database.migrate)
  })
  afterAll(async () => {
    await db?.close()
    await location?.dispose()
  })

  describe("migrations", () => {
    it("apply every migration once, record each, and re-running applies nothing", async () => {
      const expected = (await Effect.runPromise(Database.migrations)).map(([id, name]) => [id, name])
      expect(expected.length).toBeGreaterThan(0)
      expect(firstRun.map(([id, name]) => [id, name])).toEqual(expected)
      expect(await db.run(Database.migrate)).toEqual([])
      const recorded = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return yield* sql<{ migration_id: number; name: string }>`
          SELECT migration_id, name FROM hearth_migrations ORDER BY migration_id`
        })
      )
      expect(recorded.map((r) => [r.migration_id, r.name])).toEqual(expected)
    })

    it("leave the column lists other tables' queries select (a page of pull requests) naming real columns, and every column of pull_requests but its created_at", async () => {
      const columnsOf = (table: string) =>
        db.run(
          Effect.map(
            withSql(
              (sql) => sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns
                WHERE table_schema = current_schema() AND table_name = ${table}`
            ),
            (rows) => new Set(rows.map((r) => r.column_name))
          )
        )
      const pulls = await columnsOf("pull_requests")
      // A column added to the table must be added to the list (or here, if no query reads it).
      expect(new Set(PULL_COLUMNS)).toEqual(new Set([...pulls].filter((c) => c !== "created_at")))
      const issues = await columnsOf("issues")
      expect(ISSUE_COLUMNS.filter((c) => !issues.has(c))).toEqual([])
    })

    it("keep data and the applied migrations across a restart", async () => {
      const place = await freshLocation(postgres)
      try {
        const first = await open(place.settings)
        await first.run(
          Effect.gen(function* () {
            yield* Database.migrate
            const sql = yield* SqlClient
            yield* sql`INSERT INTO users ${sql.insert({ name: "Kept", lower_name: "kept" })}`
          })
        )
        await first.close()
        const second = await open(place.settings)
        try {
          expect(await second.run(Database.migrate)).toEqual([])
          const rows = await second.run(withSql((sql) => sql`SELECT name FROM users`))
          expect(rows).toEqual([{ name: "Kept" }])
        } finally {
          await second.close()
        }
      } finally {
        await place.dispose()
      }
    })
  })

  describe("types", () => {
    it("decodes int8 and count(*) as bigint, timestamptz as Date, like @effect/sql-pg", async () => {
      const row = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`INSERT INTO users ${sql.insert({ name: "Typed", lower_name: "typed" })}`
          const [row] = yield* sql<Record<string, unknown>>`
          SELECT u.id, u.created_at, u.last_login, u.is_admin, u.max_repo_creation, u.type,
                 (SELECT count(*) FROM users) AS n, 1.5::numeric AS dec, 2.5::float8 AS f,
                 '{"a":[1,"x"]}'::jsonb AS j, '2024-02-03'::date AS d,
                 '2024-02-03 04:05:06.789'::timestamp AS ts,
                 ARRAY[1, 2]::int8[] AS big_array, ARRAY[now()] AS time_array, ARRAY['a', 'b'] AS text_array,
                 '\\x00ff'::bytea AS bytes
          FROM users u WHERE lower_name = 'typed'`
          return row!
        })
      )
      expect(typeof row.id).toBe("bigint")
      expect(typeof row.n).toBe("bigint")
      expect(row.n).toBeGreaterThanOrEqual(1n)
      expect(row.created_at).toBeInstanceOf(Date)
      expect(Math.abs((row.created_at as Date).getTime() - Date.now())).toBeLessThan(60_000)
      expect(row.last_login).toBeNull()
      expect(row.is_admin).toBe(false)
      expect(row.max_repo_creation).toBe(-1) // int4
      expect(row.type).toBe(0) // int2
      expect(row.dec).toBe("1.5") // numeric keeps its precision as text
      expect(row.f).toBe(2.5)
      expect(row.j).toEqual({ a: [1, "x"] })
      expect(row.d).toBe("2024-02-03")
      expect(row.ts).toEqual(new Date("2024-02-03T04:05:06.789Z"))
      expect(row.big_array).toEqual([1n, 2n])
      expect((row.time_array as Array<unknown>)[0]).toBeInstanceOf(Date)
      expect(row.text_array).toEqual(["a", "b"])
      expect(row.bytes).toEqual(new Uint8Array([0, 255]))
    })
  })

  describe("parameters", () => {
    it("round-trip text with quotes and unicode, null, booleans, numbers, bigint, Date, bytes", async () => {
      const text = `O'Brien "quoted" \\ back; -- not a comment /* nor this */ $1 ü 日本語 🎉`
      const when = new Date("2024-05-06T07:08:09.123Z")
      const big = 9_007_199_254_740_993n // beyond Number.MAX_SAFE_INTEGER
      const row = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const [row] = yield* sql<Record<string, unknown>>`
          SELECT ${text}::text AS text, ${null}::text AS nothing, ${true} AS yes, ${false}::boolean AS no,
                 ${42} AS int, ${3_000_000_000} AS wide, ${1.25} AS float, ${big} AS big, ${when} AS at,
                 ${new Uint8Array([0, 1, 254, 255])}::bytea AS bytes`
          return row!
        })
      )
      expect(row).toEqual({
        text,
        nothing: null,
        yes: true,
        no: false,
        int: 42,
        wide: 3_000_000_000n, // an integer beyond int4 binds as int8, as sql-pg does
        float: 1.25,
        big,
        at: when,
        bytes: new Uint8Array([0, 1, 254, 255])
      })
    })

    it("store and find values through sql.insert, sql.in, arrays and jsonb", async () => {
      const result = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`CREATE TABLE params_items (id bigserial PRIMARY KEY, label text, flag boolean, tags text[], data jsonb)`
          const labels = ["plain", "it's", "日本", "emoji 🎉", ""]
          for (const [i, label] of labels.entries()) {
            yield* sql`INSERT INTO params_items ${sql.insert({ label, flag: i % 2 === 0, tags: [label, "t"] })}`
          }
          yield* sql`INSERT INTO params_items ${sql.insert({ label: null, flag: null })}`
          const found = yield* sql<{ label: string }>`
          SELECT label FROM params_items WHERE label IN ${sql.in(["it's", "日本", "absent"])} ORDER BY id`
          const none = yield* sql`SELECT label FROM params_items WHERE label IN ${sql.in([])}`
          const nulls = yield* sql<{
            n: bigint
          }>`SELECT count(*) AS n FROM params_items WHERE label IS NULL AND flag IS NULL`
          const flagged = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM params_items WHERE flag = ${true}`
          const any = yield* sql<{ label: string }>`
          SELECT label FROM params_items WHERE id = ANY(${[1, 3]}) ORDER BY id`
          const tagged = yield* sql<{ tags: Array<string> }>`SELECT tags FROM params_items WHERE label = ${"it's"}`
          // JSON goes in as text cast to jsonb, or as a typed PgTypes parameter (both back-ends).
          const doc = { name: "x'y", list: [1, 2, { deep: true }], none: null, uni: "ü" }
          yield* sql`UPDATE params_items SET data = ${JSON.stringify(doc)}::jsonb WHERE id = 1`
          yield* sql`UPDATE params_items SET data = ${PgTypes.jsonb(doc)} WHERE id = 2`
          const docs = yield* sql<{ data: unknown; name: string }>`
          SELECT data, data->>'name' AS name FROM params_items WHERE id IN (1, 2) ORDER BY id`
          return { found, none, nulls, flagged, any, tagged, docs, doc }
        })
      )
      expect(result.found.map((r) => r.label)).toEqual(["it's", "日本"])
      expect(result.none).toEqual([])
      expect(result.nulls[0]!.n).toBe(1n)
      expect(result.flagged[0]!.n).toBe(3n)
      expect(result.any.map((r) => r.label)).toEqual(["plain", "日本"])
      expect(result.tagged[0]!.tags).toEqual(["it's", "t"])
      expect(result.docs).toEqual([
        { data: result.doc, name: "x'y" },
        { data: result.doc, name: "x'y" }
      ])
    })

    it("refuse to bind a plain object (use JSON text or PgTypes.jsonb), on both back-ends", async () => {
      const error = await db.run(
        failureOf(
          Effect.gen(function* () {
            const sql = yield* SqlClient
            return yield* sql`SELECT ${{ a: 1 } as unknown as string}::jsonb AS v`
          })
        )
      )
      expect(isSqlError(error)).toBe(true)
      expect(await db.run(withSql((sql) => sql`SELECT 1 AS ok`))).toEqual([{ ok: 1 }])
    })
  })

  describe("transactions", () => {
    beforeAll(() => db.run(withSql((sql) => sql`CREATE TABLE tx_items (label text PRIMARY KEY)`)))
    const insert = (label: string) => withSql((sql) => sql`INSERT INTO tx_items VALUES (${label})`)
    const exists = (label: string) =>
      db.run(withSql((sql) => sql`SELECT 1 FROM tx_items WHERE label = ${label}`)).then((r) => r.length === 1)

    it("commit on success", async () => {
      await db.run(withSql((sql) => sql.withTransaction(Effect.andThen(insert("c1"), insert("c2")))))
      expect(await exists("c1")).toBe(true)
      expect(await exists("c2")).toBe(true)
    })

    it("roll back on a typed failure, and the failure is returned as is", async () => {
      const error = await db.run(
        failureOf(withSql((sql) => sql.withTransaction(Effect.andThen(insert("f1"), Effect.fail(new Boom())))))
      )
      expect(error).toBeInstanceOf(Boom)
      expect(await exists("f1")).toBe(false)
    })

    it("roll back on a defect", async () => {
      const exit = await db.run(
        Effect.exit(withSql((sql) => sql.withTransaction(Effect.andThen(insert("d1"), Effect.die(new Error("bug"))))))
      )
      expect(Exit.hasDies(exit)).toBe(true)
      expect(await exists("d1")).toBe(false)
    })

    it("roll back when the fiber is interrupted, and the client stays usable", async () => {
      await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const started = yield* Deferred.make<void>()
          const fiber = yield* Effect.forkChild(
            sql.withTransaction(
              Effect.gen(function* () {
                yield* insert("i1")
                yield* Deferred.succeed(started, undefined)
                return yield* Effect.never
              })
            )
          )
          yield* Deferred.await(started)
          yield* Fiber.interrupt(fiber)
        })
      )
      expect(await exists("i1")).toBe(false)
      expect(await db.run(inTransaction)).toBe(false)
    })

    it("nest as savepoints: an inner failure rolls back only the inner part", async () => {
      await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql.withTransaction(
            Effect.gen(function* () {
              yield* insert("n-outer-1")
              const inner = yield* Effect.flip(
                sql.withTransaction(Effect.andThen(insert("n-inner-failed"), Effect.fail(new Boom())))
              )
              expect(inner).toBeInstanceOf(Boom)
              yield* sql.withTransaction(insert("n-inner-kept"))
              yield* insert("n-outer-2")
            })
          )
        })
      )
      expect(await exists("n-outer-1")).toBe(true)
      expect(await exists("n-inner-failed")).toBe(false)
      expect(await exists("n-inner-kept")).toBe(true)
      expect(await exists("n-outer-2")).toBe(true)
    })

    it("roll back the inner parts too when the outer transaction fails", async () => {
      await db.run(
        Effect.flip(
          withSql((sql) =>
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql.withTransaction(insert("o-inner"))
                return yield* new Boom()
              })
            )
          )
        )
      )
      expect(await exists("o-inner")).toBe(false)
    })

    it("refuse to COMMIT a transaction whose statement failed and was caught; nothing is kept", async () => {
      const error = await db.run(
        failureOf(
          withSql((sql) =>
            sql.withTransaction(
              Effect.gen(function* () {
                yield* insert("a1")
                yield* Effect.ignore(insert("a1")) // duplicate key: the transaction is now aborted
              })
            )
          )
        )
      )
      expect(isSqlError(error)).toBe(true)
      expect((error as SqlError).message).toContain("COMMIT rolled back an aborted transaction")
      expect(await exists("a1")).toBe(false)
      expect(await db.run(inTransaction)).toBe(false)
    })

    it("surface a failed COMMIT (deferred unique constraint) as UniqueViolation and leave no transaction open", async () => {
      await db.run(
        withSql(
          (sql) => sql`CREATE TABLE tx_deferred (k int CONSTRAINT tx_deferred_k UNIQUE DEFERRABLE INITIALLY DEFERRED)`
        )
      )
      const error = await db.run(
        failureOf(
          withSql((sql) =>
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`INSERT INTO tx_deferred VALUES (1)`
                yield* sql`INSERT INTO tx_deferred VALUES (1)` // accepted until COMMIT checks it
              })
            )
          )
        )
      )
      expect(reasonOf(error)).toBe("UniqueViolation")
      expect(await db.run(inTransaction)).toBe(false)
      const rows = await db.run(withSql((sql) => sql`SELECT k FROM tx_deferred`))
      expect(rows).toEqual([])
      await db.run(withSql((sql) => sql`INSERT INTO tx_deferred VALUES (2)`))
      expect(await db.run(withSql((sql) => sql`SELECT k FROM tx_deferred`))).toEqual([{ k: 2 }])
    })
  })

  describe("concurrency", () => {
    it("answers 50 queries in parallel, each with its own result", async () => {
      const results = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return yield* Effect.forEach(
            Array.from({ length: 50 }, (_, i) => i),
            (i) => sql<{ i: number; h: string }>`SELECT ${i}::int AS i, md5(${String(i)}) AS h FROM pg_sleep(0.001)`,
            { concurrency: "unbounded" }
          )
        })
      )
      expect(results.map((rows) => rows[0]!.i)).toEqual(Array.from({ length: 50 }, (_, i) => i))
      const { createHash } = await import("node:crypto")
      for (const [i, rows] of results.entries())
        expect(rows[0]!.h).toBe(createHash("md5").update(String(i)).digest("hex"))
    })

    it("keeps a counter exact under 20 concurrent read-modify-write transactions", async () => {
      const value = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`CREATE TABLE counter (id int PRIMARY KEY, n int NOT NULL)`
          yield* sql`INSERT INTO counter VALUES (1, 0)`
          yield* Effect.forEach(
            Array.from({ length: 20 }),
            () =>
              sql.withTransaction(
                Effect.gen(function* () {
                  const [row] = yield* sql<{ n: number }>`SELECT n FROM counter WHERE id = 1 FOR UPDATE`
                  yield* Effect.sleep("2 millis")
                  yield* sql`UPDATE counter SET n = ${row!.n + 1} WHERE id = 1`
                })
              ),
            { concurrency: "unbounded", discard: true }
          )
          const [row] = yield* sql<{ n: number }>`SELECT n FROM counter WHERE id = 1`
          return row!.n
        })
      )
      expect(value).toBe(20)
    })

    it(
      postgres
        ? "isolates an open transaction: other statements run meanwhile and do not see its rows"
        : "serializes an open transaction: another fiber's statement waits for the COMMIT, then sees the row",
      async () => {
        const result = await db.run(
          Effect.gen(function* () {
            const sql = yield* SqlClient
            yield* sql`CREATE TABLE serial_items (id int)`
            const inserted = yield* Deferred.make<void>()
            let committedAt = 0
            const tx = yield* Effect.forkChild(
              sql
                .withTransaction(
                  Effect.gen(function* () {
                    yield* sql`INSERT INTO serial_items VALUES (1)`
                    yield* Deferred.succeed(inserted, undefined)
                    yield* Effect.sleep("300 millis")
                  })
                )
                .pipe(Effect.tap(() => Effect.sync(() => (committedAt = Date.now()))))
            )
            yield* Deferred.await(inserted)
            const [row] = yield* sql<{ n: bigint }>`SELECT count(*) AS n FROM serial_items`
            const answeredAt = Date.now()
            yield* Fiber.join(tx)
            return { seen: row!.n, answeredAt, committedAt }
          })
        )
        if (postgres) {
          expect(result.seen).toBe(0n)
          expect(result.answeredAt).toBeLessThan(result.committedAt)
        } else {
          expect(result.seen).toBe(1n)
          // The statement was answered only once the transaction had committed (the COMMIT runs
          // before withTransaction returns, so "committedAt" is taken a moment later).
          expect(result.answeredAt).toBeGreaterThanOrEqual(result.committedAt - 50)
        }
      }
    )
  })

  describe("errors", () => {
    it("reports a unique violation as SqlError UniqueViolation naming the constraint", async () => {
      const error = await db.run(
        failureOf(
          Effect.gen(function* () {
            const sql = yield* SqlClient
            yield* sql`INSERT INTO users ${sql.insert({ name: "Twice", lower_name: "twice" })}`
            yield* sql`INSERT INTO users ${sql.insert({ name: "TWICE", lower_name: "twice" })}`
          })
        )
      )
      expect(reasonOf(error)).toBe("UniqueViolation")
      expect((error as SqlError).reason).toMatchObject({ constraint: "users_lower_name_key" })
    })

    it("reports NOT NULL, CHECK and foreign-key violations as ConstraintError", async () => {
      const errors = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return yield* Effect.all([
            failureOf(sql`INSERT INTO users (name, lower_name) VALUES (${null}, 'nn')`),
            failureOf(sql`INSERT INTO users (name, lower_name, visibility) VALUES ('c', 'c', 'secret')`),
            failureOf(sql`INSERT INTO access_tokens (user_id, name, token_hash, token_last_eight, scopes)
                        VALUES (${999_999}, 'n', 'h', 'e', '')`)
          ])
        })
      )
      expect(errors.map(reasonOf)).toEqual(["ConstraintError", "ConstraintError", "ConstraintError"])
    })

    it("reports a syntax error or unknown table as SqlSyntaxError and stays usable", async () => {
      const errors = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return [yield* failureOf(sql.unsafe("SELEC 1")), yield* failureOf(sql`SELECT * FROM no_such_table`)]
        })
      )
      expect(errors.map(reasonOf)).toEqual(["SqlSyntaxError", "SqlSyntaxError"])
      expect(await db.run(withSql((sql) => sql`SELECT 1 AS ok`))).toEqual([{ ok: 1 }])
      expect(await db.run(inTransaction)).toBe(false)
    })

    it("rolls back a transaction that failed with an SQL error and stays usable", async () => {
      const error = await db.run(
        failureOf(
          withSql((sql) =>
            sql.withTransaction(
              Effect.gen(function* () {
                yield* sql`CREATE TABLE err_items (id int)`
                yield* sql`INSERT INTO err_items VALUES (1)`
                yield* sql.unsafe("SELEC 1")
              })
            )
          )
        )
      )
      expect(reasonOf(error)).toBe("SqlSyntaxError")
      const tables = await db.run(
        withSql((sql) => sql`SELECT 1 FROM information_schema.tables WHERE table_name = 'err_items'`)
      )
      expect(tables).toEqual([]) // DDL is transactional too
      expect(await db.run(inTransaction)).toBe(false)
    })
  })

  describe("prepared statements", () => {
    it("a statement run again after its table changed gives the new columns", async () => {
      const rows = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`CREATE TABLE prepared_t (a int)`
          yield* sql`INSERT INTO prepared_t VALUES (1)`
          for (let i = 0; i < 3; i++) yield* sql`SELECT * FROM prepared_t`
          yield* sql`ALTER TABLE prepared_t ADD COLUMN b text DEFAULT 'x'`
          return yield* sql`SELECT * FROM prepared_t`
        })
      )
      expect(rows).toEqual([{ a: 1, b: "x" }])
    })

    it.skipIf(postgres)("prepares each text once, and keeps at most 256 (PGlite)", async () => {
      const prepared = (sql: SqlClient) =>
        Effect.map(sql<{ n: bigint }>`SELECT count(*) AS n FROM pg_prepared_statements`, (rows) => Number(rows[0]!.n))
      const [before, again, many] = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          yield* sql`SELECT ${1}::int AS one`
          const before = yield* prepared(sql)
          for (let i = 0; i < 20; i++) yield* sql`SELECT ${i}::int AS one`
          const again = yield* prepared(sql)
          for (let i = 0; i < 400; i++) yield* sql.unsafe(`SELECT ${i} AS n`)
          return [before, again, yield* prepared(sql)] as const
        })
      )
      expect(again).toBe(before)
      expect(many).toBeLessThanOrEqual(256)
      expect(many).toBeGreaterThan(250)
    })

    it("a text run with parameters of other types is bound with those types", async () => {
      const values = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const out: Array<unknown> = []
          for (const v of [1, 2 ** 40, 1.5, 1e20, "text"]) out.push((yield* sql`SELECT ${v} AS v`)[0]!.v)
          return out
        })
      )
      expect(values).toEqual([1, 2n ** 40n, 1.5, 1e20, "text"])
    })

    it("a statement that failed, to parse or to run, runs again as it should", async () => {
      const [syntax, again, divided, fine] = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          const divide = (by: number) => sql<{ q: number }>`SELECT 10 / ${by}::int AS q`
          return [
            reasonOf(yield* failureOf(sql.unsafe("SELEC 1"))),
            reasonOf(yield* failureOf(sql.unsafe("SELEC 1"))),
            reasonOf(yield* failureOf(divide(0))),
            yield* divide(5)
          ] as const
        })
      )
      expect([syntax, again]).toEqual(["SqlSyntaxError", "SqlSyntaxError"])
      expect(divided).toBe("UnknownError")
      expect(fine).toEqual([{ q: 2 }])
    })
  })

  describe("result shapes", () => {
    it("streams rows with sql.stream (PGlite reads the whole result first; see Pglite.ts)", async () => {
      const rows = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return yield* Stream.runCollect(sql<{ g: number }>`SELECT g FROM generate_series(1, 1000) g`.stream)
        })
      )
      expect(Array.from(rows).map((r) => r.g)).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1))
    })

    it("returns value rows with .values and raw results with .raw", async () => {
      const [values, raw] = await db.run(
        Effect.gen(function* () {
          const sql = yield* SqlClient
          return [
            yield* sql`SELECT 1::int AS a, 'x' AS b UNION ALL SELECT 2, 'y'`.values,
            yield* sql`SELECT 1 AS one`.raw
          ] as const
        })
      )
      expect(values).toEqual([
        [1, "x"],
        [2, "y"]
      ])
      expect(raw).toBeTruthy()
    })
  })
})

describe("data-dir lock", () => {
  const dirs: Array<string> = []
  const freshDir = () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-lock-test-"))
    dirs.push(dir)
    return dir
  }
  afterAll(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true })
  })
  const lockFile = (dir: string) => join(dir, "hearth.lock")
  /** Takes the lock, reads the file while held, releases it. */
  const holdOnce = (dir: string) =>
    Effect.runPromise(Effect.scoped(Effect.map(DataDirLock.acquire(dir), () => readFileSync(lockFile(dir), "utf8"))))
  const refusal = (dir: string) => Effect.runPromise(Effect.flip(Effect.scoped(DataDirLock.acquire(dir))))

  it("is held by the embedded client while open: a second client on the same dir fails, and the file goes on close", async () => {
    const place = await freshLocation(false)
    try {
      const first = await open(place.settings)
      const lock = lockFile(place.settings.server.APP_DATA_PATH)
      expect(readFileSync(lock, "utf8")).toBe(`${process.pid}\n${hostname()}\n`)
      await expect(open(place.settings)).rejects.toThrow(/in use by another Hearth process \(this process, pid \d+\)/)
      await first.close()
      expect(existsSync(lock)).toBe(false)
    } finally {
      await place.dispose()
    }
  })

  it("refuses a lock held by a live process on this host, naming its pid", async () => {
    const dir = freshDir()
    writeFileSync(lockFile(dir), `${process.ppid}\n${hostname()}\n`)
    const error = await refusal(dir)
    expect(error).toBeInstanceOf(DataDirLock.DataDirLocked)
    expect(error.message).toContain(`(pid ${process.ppid})`)
    expect(error.message).toContain(dir)
    expect(readFileSync(lockFile(dir), "utf8")).toBe(`${process.ppid}\n${hostname()}\n`) // left alone
  })

  it("takes over a stale lock: a dead pid, our own pid (restarted as the same pid), another host, garbage", async () => {
    const dead = 2 ** 22 + 12345 // above Linux's pid_max: never a running process
    for (const content of [
      `${dead}\n${hostname()}\n`,
      `${process.pid}\n${hostname()}\n`,
      `${process.ppid}\nother-host\n`,
      "garbage"
    ]) {
      const dir = freshDir()
      writeFileSync(lockFile(dir), content)
      expect(await holdOnce(dir), content).toBe(`${process.pid}\n${hostname()}\n`)
      expect(existsSync(lockFile(dir))).toBe(false)
    }
  })
})

describe("the embedded database's memory (src/db/Pglite.ts)", () => {
  const places: Array<Location> = []
  afterAll(async () => {
    for (const place of places) await place.dispose()
  })
  const showSharedBuffers = (settings: Settings.SettingsShape) =>
    open(settings).then(async (db) => {
      try {
        const [row] = await db.run(withSql((sql) => sql<{ shared_buffers: string }>`SHOW shared_buffers`))
        return row!.shared_buffers
      } finally {
        await db.close()
      }
    })

  it("runs PostgreSQL with 16MB of shared_buffers on a small database, or [database] EMBEDDED_SHARED_BUFFERS", async () => {
    const place = await freshLocation(false)
    places.push(place)
    expect(await showSharedBuffers(place.settings)).toBe("16MB")
    const tuned = Settings.resolveSettings({
      server: { APP_DATA_PATH: place.settings.server.APP_DATA_PATH },
      database: { DB_TYPE: "embedded", EMBEDDED_SHARED_BUFFERS: "48mb" }
    })
    expect(await showSharedBuffers(tuned)).toBe("48MB")
  })

  it("plans with a random page cost of cached data (1.1), not a disk's (4): an index probe is not a seek", async () => {
    const place = await freshLocation(false)
    places.push(place)
    const db = await open(place.settings)
    try {
      const [row] = await db.run(withSql((sql) => sql<{ random_page_cost: string }>`SHOW random_page_cost`))
      expect(row!.random_page_cost).toBe("1.1")
    } finally {
      await db.close()
    }
  })

  it("sizes shared_buffers by the database with EMBEDDED_SHARED_BUFFERS = auto: a sixteenth, from 16MB to 128MB", () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-auto-buffers-"))
    try {
      expect(Pglite.autoSharedBuffers(dir)).toBe("16MB")
      mkdirSync(join(dir, "base", "5"), { recursive: true })
      // Sparse files: their size counts, no disk is used.
      for (const file of ["1", "2"]) {
        writeFileSync(join(dir, "base", "5", file), "")
        truncateSync(join(dir, "base", "5", file), 512 * 2 ** 20)
      }
      expect(Pglite.autoSharedBuffers(dir)).toBe("64MB")
      truncateSync(join(dir, "base", "5", "2"), 4 * 2 ** 30)
      expect(Pglite.autoSharedBuffers(dir)).toBe("128MB")
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("reads EMBEDDED_SHARED_BUFFERS in PostgreSQL's units and refuses anything else, naming the key", () => {
    const resolve = (value: string) =>
      Settings.resolveSettings({ database: { EMBEDDED_SHARED_BUFFERS: value } }).database.EMBEDDED_SHARED_BUFFERS
    expect(resolve("16MB")).toBe("16MB")
    expect(resolve(" Auto ")).toBe("auto")
    expect(Settings.resolveSettings({}).database.EMBEDDED_SHARED_BUFFERS).toBe("auto")
    expect(resolve(" 256 kb ")).toBe("256kB")
    expect(resolve("1gb")).toBe("1GB")
    for (const bad of ["16", "16M", "16MiB", "64kB", "2GB", "-1MB", "1.5MB", "lots"]) {
      expect(() => resolve(bad), bad).toThrow(`invalid setting [database] EMBEDDED_SHARED_BUFFERS = "${bad}"`)
    }
  })

  it("creates a new data dir's database beside it and moves it in, replacing what an interrupted creation left", async () => {
    const place = await freshLocation(false)
    places.push(place)
    const dir = join(place.settings.server.APP_DATA_PATH, "db")
    // What a server killed while creating its database leaves: a partial copy beside `db`.
    mkdirSync(join(`${dir}.initdb`, "base"), { recursive: true })
    writeFileSync(join(`${dir}.initdb`, "PG_VERSION"), "garbage")
    const db = await open(place.settings)
    try {
      const [row] = await db.run(withSql((sql) => sql<{ one: number }>`SELECT 1 AS one`))
      expect(row).toEqual({ one: 1 })
    } finally {
      await db.close()
    }
    expect(readFileSync(join(dir, "PG_VERSION"), "utf8").trim()).toMatch(/^\d+$/)
    expect(existsSync(`${dir}.initdb`)).toBe(false)
  })
})

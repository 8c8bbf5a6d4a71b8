// The embedded database's autovacuum. PGlite runs PostgreSQL as a single backend, without the
// autovacuum launcher PostgreSQL has: left alone, the embedded database never gathers statistics
// (the planner guesses every table's contents), never marks pages all-visible (no index-only scans)
// and never reclaims the rows updates and deletes leave behind. So the server does what autovacuum
// would, by its default thresholds, table by table: ANALYZE a table once more than 50 rows + 10 %
// of it changed since its last analysis, VACUUM (and ANALYZE) it once more than 50 + 20 % of it are
// dead rows. The embedded database answers one statement at a time, so a table's pass holds the
// others back while it runs (seconds for the largest tables of a forge with 100,000 issues): the
// thresholds make that rare, and each pass is logged with its duration.
// (bench:issues: a tracker of 100,000 issues copied into a fresh embedded database and never
// analyzed planned its label list at 20 ms a page; 7 ms once analyzed.)
import { Duration, Effect, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Settings } from "../config/Settings.ts"

/** How long after start-up the first pass runs, and then how often. */
const FIRST_PASS = Duration.minutes(1)
const INTERVAL = Duration.minutes(10)

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/** One pass: the tables past autovacuum's thresholds, vacuumed or analyzed. Answers what it did. */
export const maintainOnce: Effect.Effect<
  Array<{ table: string; action: "vacuum" | "analyze" }>,
  unknown,
  SqlClient
> = Effect.gen(function* () {
  const sql = yield* SqlClient
  // A table never analyzed (or whose statistics a crash lost) counts everything it holds as changed.
  const due = yield* sql<{ relname: string; vacuum: boolean }>`SELECT relname,
        n_dead_tup > 50 + 0.2 * n_live_tup AS vacuum
      FROM pg_stat_user_tables
      WHERE schemaname = 'public' AND (n_dead_tup > 50 + 0.2 * n_live_tup
        OR n_mod_since_analyze > 50 + 0.1 * n_live_tup
        OR (last_analyze IS NULL AND n_live_tup > 50))
      ORDER BY relname`
  const done: Array<{ table: string; action: "vacuum" | "analyze" }> = []
  for (const row of due) {
    const action = row.vacuum ? "vacuum" : "analyze"
    const started = performance.now()
    yield* sql.unsafe(`${action === "vacuum" ? "VACUUM (ANALYZE)" : "ANALYZE"} ${quoteIdentifier(row.relname)}`)
    const ms = Math.round(performance.now() - started)
    yield* Effect.logInfo(
      `embedded database: ${action === "vacuum" ? "vacuumed" : "analyzed"} ${row.relname} in ${ms} ms`
    )
    done.push({ table: row.relname, action })
  }
  return done
})

/** On the embedded database, a pass a minute after start-up and every ten minutes after it. */
export const startEmbeddedMaintenance = Effect.gen(function* () {
  const settings = yield* Settings
  if (settings.database.DB_TYPE === "postgres") return
  const context = yield* Effect.context<SqlClient>()
  yield* Effect.forkScoped(
    Effect.sleep(FIRST_PASS).pipe(
      Effect.andThen(
        Effect.repeat(
          maintainOnce.pipe(
            Effect.provide(context),
            Effect.ignoreCause({ log: "Warn", message: "embedded database: maintenance failed" })
          ),
          Schedule.spaced(INTERVAL)
        )
      )
    )
  )
})

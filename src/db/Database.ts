// The database behind Hearth: PostgreSQL (`[database] DB_TYPE = postgres`, or DATABASE_URL) or
// the embedded PGlite under `<APP_DATA_PATH>/db`. Both give one `SqlClient` and run one
// migration set at start.

import { join } from "node:path"
import * as PgClient from "@effect/sql-pg/PgClient"
import { Effect, Layer, Option, Redacted } from "effect"
import * as Migrator from "effect/sql/Migrator"
import { SqlClient } from "effect/sql/SqlClient"
import { isSqlError } from "effect/sql/SqlError"
import { Settings } from "../config/Settings.ts"
import * as DataDirLock from "./DataDirLock.ts"
import m0001 from "./migrations/0001_foundation.ts"
import m0002 from "./migrations/0002_repositories.ts"
import m0003 from "./migrations/0003_repository_settings.ts"
import m0004 from "./migrations/0004_jobs.ts"
import m0005 from "./migrations/0005_mirrors.ts"
import m0006 from "./migrations/0006_transfers.ts"
import m0007 from "./migrations/0007_identity.ts"
import m0008 from "./migrations/0008_keys.ts"
import m0009 from "./migrations/0009_quota.ts"
import m0010 from "./migrations/0010_federation.ts"
import m0011 from "./migrations/0011_storage.ts"
import m0012 from "./migrations/0012_blocking.ts"
import m0013 from "./migrations/0013_topics.ts"
import m0015 from "./migrations/0015_events.ts"
import m0016 from "./migrations/0016_repo_units.ts"
import m0017 from "./migrations/0017_web_sessions.ts"
import m0018 from "./migrations/0018_issues.ts"
import m0019 from "./migrations/0019_issue_extras.ts"
import m0020 from "./migrations/0020_notifications.ts"
import m0021 from "./migrations/0021_attachments.ts"
import m0022 from "./migrations/0022_issue_deps_times.ts"
import m0023 from "./migrations/0023_pulls.ts"
import m0024 from "./migrations/0024_protection_statuses.ts"
import m0025 from "./migrations/0025_webhooks.ts"
import m0026 from "./migrations/0026_releases.ts"
import m0027 from "./migrations/0027_reviews.ts"
import m0028 from "./migrations/0028_agit.ts"
import m0029 from "./migrations/0029_automerge.ts"
import m0030 from "./migrations/0030_issue_indexes.ts"
import m0032 from "./migrations/0032_packages.ts"
import m0033 from "./migrations/0033_pull_stats.ts"
import m0034 from "./migrations/0034_blob_blake2b.ts"
import m0035 from "./migrations/0035_container_uploads.ts"
import m0036 from "./migrations/0036_review_state.ts"
import m0037 from "./migrations/0037_user_redirects.ts"
import m0039 from "./migrations/0039_blob_later_digests.ts"
import m0041 from "./migrations/0041_user_settings.ts"
import m0042 from "./migrations/0042_repo_flags.ts"
import m0043 from "./migrations/0043_avatars.ts"
import m0044 from "./migrations/0044_actions.ts"
import m0045 from "./migrations/0045_avatar_release.ts"
import m0046 from "./migrations/0046_label_counts.ts"

export const migrations = Migrator.fromRecord({
  "0001_foundation": m0001,
  "0002_repositories": m0002,
  "0003_repository_settings": m0003,
  "0004_jobs": m0004,
  "0005_mirrors": m0005,
  "0006_transfers": m0006,
  "0007_identity": m0007,
  "0008_keys": m0008,
  "0009_quota": m0009,
  "0010_federation": m0010,
  "0011_storage": m0011,
  "0012_blocking": m0012,
  "0013_topics": m0013,
  "0015_events": m0015,
  "0016_repo_units": m0016,
  "0017_web_sessions": m0017,
  "0018_issues": m0018,
  "0019_issue_extras": m0019,
  "0020_notifications": m0020,
  "0021_attachments": m0021,
  "0022_issue_deps_times": m0022,
  "0023_pulls": m0023,
  "0024_protection_statuses": m0024,
  "0025_webhooks": m0025,
  "0026_releases": m0026,
  "0027_reviews": m0027,
  "0028_agit": m0028,
  "0029_automerge": m0029,
  "0030_issue_indexes": m0030,
  "0032_packages": m0032,
  "0033_pull_stats": m0033,
  "0034_blob_blake2b": m0034,
  "0035_container_uploads": m0035,
  "0036_review_state": m0036,
  "0037_user_redirects": m0037,
  "0039_blob_later_digests": m0039,
  "0041_user_settings": m0041,
  "0042_repo_flags": m0042,
  "0043_avatars": m0043,
  "0044_actions": m0044,
  "0045_avatar_release": m0045,
  "0046_label_counts": m0046
})

const runMigrations = Migrator.make({})({ loader: migrations, table: "hearth_migrations" })

/** Applies pending migrations; returns what it applied. */
export const migrate = runMigrations

const postgres = (url: string, maxConnections: number) =>
  PgClient.layer({ url: Redacted.make(url), maxConnections, applicationName: "hearth" })

/** PostgreSQL's answer when the database named in the connection does not exist (SQLSTATE 3D000). */
export const isMissingDatabase = (error: unknown): boolean =>
  isSqlError(error) && (error.reason.cause as { code?: unknown } | undefined)?.code === "3D000"

const quoteIdentifier = (name: string) => `"${name.replaceAll('"', '""')}"`

/**
 * `hearth migrate` on PostgreSQL: when the configured database does not exist, creates it as
 * `createdb` would, connected with the same role to the server's `postgres` database — which works
 * when the role may create databases (CREATEDB) and otherwise fails with PostgreSQL's reason.
 * Answers the name it created. Any other connection failure is left to the migration to report.
 */
export const createMissingDatabase: Effect.Effect<Option.Option<string>, unknown, Settings> = Effect.gen(function* () {
  const db = (yield* Settings).database
  if (db.DB_TYPE !== "postgres") return Option.none()
  const run = (url: string, statement: string) =>
    Effect.gen(function* () {
      const sql = yield* SqlClient
      yield* sql.unsafe(statement)
    }).pipe(Effect.provide(postgres(url, 1)))
  const missing = yield* run(db.DATABASE_URL, "SELECT 1").pipe(
    Effect.as(false),
    Effect.catchIf(isMissingDatabase, () => Effect.succeed(true))
  )
  if (!missing) return Option.none()
  const maintenance = new URL(db.DATABASE_URL)
  const name = decodeURIComponent(maintenance.pathname.slice(1))
  maintenance.pathname = "/postgres"
  yield* run(maintenance.href, `CREATE DATABASE ${quoteIdentifier(name)}`)
  return Option.some(name)
})

/** The configured client, without migrations (what `hearth migrate` and tests build on). */
export const clientLayer: Layer.Layer<SqlClient, unknown, Settings> = Layer.unwrap(
  Effect.gen(function* () {
    const settings = yield* Settings
    const db = settings.database
    if (db.DB_TYPE === "postgres") return postgres(db.DATABASE_URL, db.MAX_OPEN_CONNS)
    const dir = settings.server.APP_DATA_PATH
    // Loaded only when used: a server on PostgreSQL does not carry the embedded engine's code.
    const Pglite = yield* Effect.promise(() => import("./Pglite.ts"))
    return Layer.unwrap(
      Effect.as(
        DataDirLock.acquire(dir),
        Pglite.layer({ dataDir: join(dir, "db"), sharedBuffers: db.EMBEDDED_SHARED_BUFFERS })
      )
    )
  })
)

/** The client with the schema brought up to date. */
export const layer: Layer.Layer<SqlClient, unknown, Settings> = Layer.effectDiscard(runMigrations).pipe(
  Layer.provideMerge(clientLayer)
)

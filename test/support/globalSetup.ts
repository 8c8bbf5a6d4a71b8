// Built once per test run, before any test file starts: an empty database with every migration
// applied, which each test file's server starts from instead of initialising and migrating its own
// (test/support/hearth.ts `startHearth`). On the embedded database that is a PGlite data directory
// copied per file (initdb in WASM plus the migrations took 8–20 s per file on this 2-core machine;
// the copy and a start on it 2–4 s); on PostgreSQL a template database that each file's
// `CREATE DATABASE … TEMPLATE` copies. Tests of initdb and of the migrations themselves make their
// own databases and are not affected.
//
// Also built once per run: the production bundle (infra/build.ts), which the tests that start
// `hearth` as a process run (test/support/spawn.ts `hearthEntry`) — what `npx hearth` runs once
// built, and about a second of CPU less per process than the sources (infra/bench/README.md,
// "Start-up and the tests' processes — session 40").
import { execFile } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join, resolve } from "node:path"
import { Effect, Exit, Layer, Scope } from "effect"
import type { TestProject } from "vitest/node"
import * as Settings from "../../src/config/Settings.ts"
import * as Database from "../../src/db/Database.ts"
import { freshPostgresDatabase } from "./postgres.ts"

declare module "vitest" {
  export interface ProvidedContext {
    /** A directory whose `db` is a migrated PGlite data directory (embedded runs). */
    embeddedTemplate: string
    /** The name of a migrated database on TEST_DATABASE_URL's server (PostgreSQL runs). */
    postgresTemplate: string
    /** The run's bundle (hearth.mjs), built from the sources as they are now. */
    hearthEntry: string
  }
}

const root = resolve(import.meta.dirname, "../..")

/** Builds the bundle into a directory of its own inside the package (where it finds node_modules). */
const buildBundle = async () => {
  mkdirSync(join(root, ".tmp"), { recursive: true })
  const dir = mkdtempSync(join(root, ".tmp", "test-bundle-"))
  await new Promise<void>((done, fail) =>
    execFile(
      join(root, "node_modules/.bin/node"),
      ["infra/build.ts", "--out-dir", dir],
      { cwd: root },
      (error, _out, err) =>
        error === null ? done() : fail(new Error(`the tests' bundle (infra/build.ts) failed to build: ${err}`))
    )
  )
  return dir
}

/** Applies every migration to the database `raw` names, then closes it. */
const migrate = (raw: Settings.RawSettings) => {
  const settings = Settings.resolveSettings({ ...raw, log: { LEVEL: "Error" } })
  return Effect.runPromise(
    Effect.scoped(Effect.asVoid(Layer.build(Database.layer.pipe(Layer.provide(Settings.layerValue(settings))))))
  )
}

export default async function setup(project: TestProject) {
  const bundle = await buildBundle()
  project.provide("hearthEntry", join(bundle, "hearth.mjs"))
  const removeBundle = () => rmSync(bundle, { recursive: true, force: true })
  const postgres = process.env.TEST_DATABASE_URL
  if (postgres !== undefined && postgres !== "") {
    // Dropped when the run ends, as each file's own database is when the file ends.
    const scope = Effect.runSync(Scope.make())
    const url = await Effect.runPromise(Scope.provide(freshPostgresDatabase(postgres), scope))
    const dir = mkdtempSync(join(tmpdir(), "hearth-test-template-"))
    await migrate({ server: { APP_DATA_PATH: dir }, database: { DB_TYPE: "postgres", DATABASE_URL: url } })
    rmSync(dir, { recursive: true, force: true })
    project.provide("postgresTemplate", new URL(url).pathname.slice(1))
    project.provide("embeddedTemplate", "")
    return async () => {
      removeBundle()
      await Effect.runPromise(Scope.close(scope, Exit.void))
    }
  }
  const dir = mkdtempSync(join(tmpdir(), "hearth-test-template-"))
  await migrate({ server: { APP_DATA_PATH: dir }, database: { DB_TYPE: "embedded" } })
  project.provide("embeddedTemplate", dir)
  project.provide("postgresTemplate", "")
  return () => {
    removeBundle()
    rmSync(dir, { recursive: true, force: true })
  }
}

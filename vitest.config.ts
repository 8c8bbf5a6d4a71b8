import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One migrated database per run, copied by each file's server (test/support/globalSetup.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    // A test file's servers run in its worker, so the worker starts V8 as `hearth serve` does
    // (src/cli.ts): the embedded database's WASM compiled by Liftoff only. Without it each file's
    // fresh process spends seconds of CPU optimizing PGlite's hottest functions (its SQL parser)
    // that a file's few hundred queries never pay back: measured 71 → 57 s of CPU for 8 files.
    execArgv: ["--liftoff-only"],
    // Each test file starts its own server and database; two cores run two files at a time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})

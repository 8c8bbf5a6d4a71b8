import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One migrated database per run, copied by each file's server (test/support/globalSetup.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    // Each test file starts its own server and database; two cores run two files at a time.
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 120_000
  }
})

import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One migrated database per run, copied by each file's server (test/support/globalSetup.ts).
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    // A worker runs its files one after another in one process, the sources imported once: each
    // file's own import was 13 % of the suite's time, and the embedded half of a run went 1,331 →
    // 1,038 s (infra/bench/README.md, "The tests share their worker's process"). Each file still
    // starts its own servers and databases; a test that needs a process's first state of a module
    // (test/web-highlighter-warmup.test.ts) loads a fresh copy of it.
    isolate: false,
    // A test file's servers run in its worker, so the worker starts V8 as `hearth serve` does
    // (src/cli.ts): the embedded database's WASM compiled by Liftoff only. Without it each file's
    // fresh process spends seconds of CPU optimizing PGlite's hottest functions (its SQL parser)
    // that a file's few hundred queries never pay back: 8 files took 71 → 59 s of CPU (medians of
    // 3 and 4 runs, infra/bench/README.md "Test suite time"). On PostgreSQL it changes nothing.
    execArgv: ["--liftoff-only"],
    // Each test file starts its own server and database; two cores run two files at a time.
    maxWorkers: 2,
    testTimeout: 30_000,
    // expect.poll's default of 1 s is less than a browser's form round trip on a loaded machine
    // (two test files, a server and Chromium on two cores): a passing check then failed in CI.
    expect: { poll: { timeout: 10_000 } },
    hookTimeout: 120_000
  }
})

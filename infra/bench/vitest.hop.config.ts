// `npm run bench:webhooks-hop` (infra/bench/webhooks-hop.test.ts): the test harness's in-process
// server, whose event hub is started only when the benchmark says so.
import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["infra/bench/webhooks-hop.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    pool: "forks",
    execArgv: ["--liftoff-only"],
    testTimeout: 1_800_000,
    hookTimeout: 300_000
  }
})

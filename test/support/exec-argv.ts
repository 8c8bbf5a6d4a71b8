// Preloaded into a spawned `hearth` command (NODE_OPTIONS="--import …", see test/cli.test.ts):
// appends the V8 options the process runs with (`process.execArgv`) as one JSON line to
// EXEC_ARGV_FILE when it exits, so a test sees those of the process the command re-executed into.
import { appendFileSync } from "node:fs"

process.on("exit", () => {
  const file = process.env.EXEC_ARGV_FILE
  if (file !== undefined) appendFileSync(file, `${JSON.stringify(process.execArgv)}\n`)
})

// Preloaded into a spawned `hearth serve` (NODE_OPTIONS="--import …", see test/startup-modules.test.ts):
// records the URL of every module the process loads, ES modules and `require` alike, and writes
// them, one a line, to LOADED_MODULES_FILE when the process gets SIGUSR2.
import { writeFileSync } from "node:fs"
import { registerHooks } from "node:module"

const loaded: Array<string> = []
registerHooks({
  load(url, context, next) {
    loaded.push(url)
    return next(url, context)
  }
})
process.on("SIGUSR2", () => {
  const file = process.env.LOADED_MODULES_FILE
  if (file !== undefined) writeFileSync(file, `${loaded.join("\n")}\n`)
})

// `npm run bench:packages` (issue 21): every part in infra/bench/packages/*.ts, one after the
// other in name order (each a standalone benchmark with its own baseline in the same run; one
// part can be run alone with `node infra/bench/packages/<part>.ts`). Exits 1 if a part fails.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { join } from "node:path"
import { log, nodeBin, root } from "./support.ts"

const dir = join(root, "infra/bench/packages")
const only = process.env.BENCH_PARTS?.split(",").map((p) => p.trim())
const parts = readdirSync(dir)
  .filter((name) => name.endsWith(".ts"))
  .sort()
  .filter((name) => only === undefined || only.includes(name.slice(0, -3)))
let failed = 0
for (const part of parts) {
  log(`packages: ${part}`)
  const result = spawnSync(nodeBin, [join(dir, part)], { cwd: root, stdio: "inherit" })
  if (result.status !== 0) {
    failed++
    log(`packages: ${part} exited with ${result.status ?? result.signal}`)
  }
}
process.exit(failed > 0 ? 1 : 0)

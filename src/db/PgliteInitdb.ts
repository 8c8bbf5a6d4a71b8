// Creates the embedded database's files (PostgreSQL's initdb, through PGlite) in the directory
// given as the only argument, then exits: src/db/Pglite.ts runs it as a child process so that the
// server never holds the memory initdb needs (see the memory notes there). It stops if its parent
// goes away, so that a server killed during start-up leaves no initdb running.
import { PGlite } from "@electric-sql/pglite"

const dataDir = process.argv[2]
if (dataDir === undefined || dataDir === "") {
  process.stderr.write("usage: PgliteInitdb.ts DATA_DIR\n")
  process.exit(2)
}
// The parent holds our stdin open while it lives: its end means the parent is gone.
process.stdin
  .on("end", () => process.exit(1))
  .on("error", () => process.exit(1))
  .resume()
try {
  // The instance PGlite starts once initdb is done is only closed again: a small cache will do
  // (128 MB of shared_buffers would be written in full; this process's peak 633 → 558–571 MB).
  const db = await PGlite.create({ dataDir, startParams: [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"] })
  await db.close()
} catch (error) {
  process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
process.exit(0)

// The embedded database's autovacuum (src/db/Maintenance.ts): a table past autovacuum's thresholds
// is analyzed (changed rows) or vacuumed (dead rows), and one that is not is left alone. The pass
// itself runs on either database (the probe table is kept from PostgreSQL's own autovacuum); the
// server starts it on the embedded one only.
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maintainOnce } from "../src/db/Maintenance.ts"
import { type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
}, 60_000)
afterAll(() => hearth?.close())

const exec = (statement: string) => hearth.sql((sql) => Effect.asVoid(sql.unsafe(statement))) as Promise<void>
/** The pass, on the probe table only (the suite's own tables may be due too). */
const pass = async () => {
  // The statistics of the statements just run, flushed now rather than within the second.
  await exec("SELECT pg_stat_force_next_flush()")
  const done = await hearth.run(maintainOnce)
  return done.filter((d) => d.table === "maintenance_probe").map((d) => d.action)
}

describe("the embedded database's maintenance", () => {
  it("analyzes a table after many changes, vacuums it after many deletions, and leaves it alone otherwise", async () => {
    await exec("CREATE TABLE maintenance_probe (id integer PRIMARY KEY, note text) WITH (autovacuum_enabled = false)")
    await exec("INSERT INTO maintenance_probe SELECT g, 'n' FROM generate_series(1, 400) g")
    expect(await pass()).toEqual(["analyze"])
    const analyzed = await hearth.sql(
      (sql) =>
        sql`SELECT last_analyze, n_mod_since_analyze FROM pg_stat_user_tables WHERE relname = 'maintenance_probe'`
    )
    expect(analyzed[0]!.last_analyze).not.toBeNull()
    // A few changes: below the thresholds.
    await exec("UPDATE maintenance_probe SET note = 'm' WHERE id <= 20")
    expect(await pass()).toEqual([])
    await exec("DELETE FROM maintenance_probe WHERE id > 100")
    expect(await pass()).toEqual(["vacuum"])
    const vacuumed = await hearth.sql(
      (sql) => sql`SELECT last_vacuum, n_dead_tup FROM pg_stat_user_tables WHERE relname = 'maintenance_probe'`
    )
    expect(vacuumed[0]!.last_vacuum).not.toBeNull()
    expect(Number(vacuumed[0]!.n_dead_tup)).toBe(0)
    expect(await pass()).toEqual([])
    await exec("DROP TABLE maintenance_probe")
  }, 60_000)
})

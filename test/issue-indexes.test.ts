// Migration 0030_issue_indexes (bench:issues, issue 18): the trigram indexes of the issue search
// keep no GIN pending list (the embedded database has no autovacuum to merge one, and every
// search reads it in full), and each issue state has its small (repo_id, is_pull, id) index for
// the list and search counts. A search still finds what was written after the migration.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"

let hearth: Hearth

const indexes = () =>
  hearth.run(
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return yield* sql<{ relname: string; reloptions: Array<string> | null; def: string }>`
        SELECT c.relname, c.reloptions, pg_get_indexdef(c.oid) AS def FROM pg_class c
        WHERE c.relkind = 'i' AND c.relname IN ('issues_title_trgm', 'issues_body_trgm', 'comments_body_trgm',
          'issues_open_ids', 'issues_closed_ids') ORDER BY c.relname`
    })
  )

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name: "proj" })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

describe("0030_issue_indexes", () => {
  it("writes the trigram indexes directly (fastupdate off), with no pending list", async () => {
    const rows = await indexes()
    const trigram = rows.filter((r) => r.relname.endsWith("_trgm"))
    expect(trigram.map((r) => r.relname)).toEqual(["comments_body_trgm", "issues_body_trgm", "issues_title_trgm"])
    for (const row of trigram) expect(row.reloptions ?? []).toContain("fastupdate=off")
  })

  it("has a (repo_id, is_pull, id) index per issue state", async () => {
    const byName = new Map((await indexes()).map((r) => [r.relname, r.def]))
    expect(byName.get("issues_open_ids")).toMatch(/\(repo_id, is_pull, id\) WHERE \(NOT is_closed\)/)
    expect(byName.get("issues_closed_ids")).toMatch(/\(repo_id, is_pull, id\) WHERE is_closed/)
  })

  it("still finds new titles, bodies and comments by keyword, and counts them", async () => {
    const post = (path: string, body: unknown) =>
      request(hearth, "POST", `/repos/alice/proj${path}`, basic("alice"), body)
    await post("/issues", { title: "a wombat in the title" })
    await post("/issues", { title: "plain", body: "a wombat in the body" })
    const third = await json(await post("/issues", { title: "other" }))
    await post(`/issues/${third.number}/comments`, { body: "a wombat in a comment" })
    await post("/issues", { title: "nothing here" })
    const res = await request(hearth, "GET", "/repos/alice/proj/issues?q=wombat&sort=oldest", basic("alice"))
    expect(res.headers.get("x-total-count")).toBe("3")
    expect((await json(res)).map((i: { title: string }) => i.title)).toEqual([
      "a wombat in the title",
      "plain",
      "other"
    ])
  })
})

// Issue 23 item 6: a repository's flags (Forgejo's `repo_flag`), free-form names that site
// administrators put on repositories to mark them for themselves or their tools.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE repo_flags (
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name text NOT NULL,
    PRIMARY KEY (repo_id, name)
  )`
})

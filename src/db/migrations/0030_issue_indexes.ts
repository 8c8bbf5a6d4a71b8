// What the issue list and search need at scale (bench:issues, issue 18).
//
// Counting: the list and search answers carry X-Total-Count, and counting the matches of a label
// or a keyword joins them with the repository's issues of one state. These partial indexes hold
// only (repo_id, is_pull, id) of one state, so the count is an index-only scan of a few pages
// instead of a read of every issue row with its title and body (EXPLAIN ANALYZE over 100,000
// issues: the label count 130–200 → 38–52 ms, the keyword count 150 → 62 ms, on a loaded machine).
//
// The trigram indexes (0018) without GIN's pending list: with `fastupdate` on, new entries wait
// in an unsorted list that every search reads in full until a VACUUM merges them, and the embedded
// database has no autovacuum, so they waited until the list reached 4 MB (3,000 bodies: a search
// 33 ms with the list, 1 ms without). Written straight into the index, each insert pays a little
// instead; what is pending now is merged here.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

const TRIGRAM_INDEXES = ["issues_title_trgm", "issues_body_trgm", "comments_body_trgm"] as const

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE INDEX issues_open_ids ON issues (repo_id, is_pull, id) WHERE NOT is_closed`
  yield* sql`CREATE INDEX issues_closed_ids ON issues (repo_id, is_pull, id) WHERE is_closed`
  for (const name of TRIGRAM_INDEXES) {
    yield* sql`ALTER INDEX ${sql(name)} SET (fastupdate = off)`
    yield* sql`SELECT gin_clean_pending_list(${name}::regclass)`
  }
})

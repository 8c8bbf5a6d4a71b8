// Issue 19 ("Speed"): a pull request's `additions`, `deletions` and `changed_files` (Forgejo's
// `git diff --shortstat {merge base}...{head}`), stored by the mergeability job with the merge base
// and head they were counted for, so that listing pull requests runs no `git diff` per pull request
// (src/pulls/Present.ts counts them itself only when the stored ones are for other commits).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE pull_requests
    ADD COLUMN stats_merge_base text NOT NULL DEFAULT '',
    ADD COLUMN stats_head_sha text NOT NULL DEFAULT '',
    ADD COLUMN additions integer NOT NULL DEFAULT 0,
    ADD COLUMN deletions integer NOT NULL DEFAULT 0,
    ADD COLUMN changed_files integer NOT NULL DEFAULT 0`
})

// Issue 19 items 2 and 9: a repository's own switch for retargeting the pull requests based on a
// merged pull request's head branch when that branch is deleted (src/pulls/Service.ts); the
// instance's `[repository.pull-request] RETARGET_CHILDREN_ON_MERGE` must be on as well. AGit pull
// requests (`flow` = 1, since 0023) need no column of their own.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE repositories ADD COLUMN retarget_children_on_merge boolean NOT NULL DEFAULT true`
})

// Scheduled merges (Forgejo's models/pull/automerge.go `pull_auto_merge`): at most one per pull
// request, with who scheduled it and how to merge (style, title and message as they will be used,
// whether to delete the head branch). `merging_commit`/`merging_base` are written just before the
// base branch is moved to the merge's commit, so that a merge cut off by a crash between moving
// the branch and recording the merge is finished, not made twice (src/pulls/AutoMerge.ts).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE pull_auto_merges (
    id bigserial PRIMARY KEY,
    pull_id bigint NOT NULL UNIQUE REFERENCES pull_requests (id) ON DELETE CASCADE,
    doer_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    merge_style text NOT NULL,
    title text NOT NULL DEFAULT '',
    message text NOT NULL DEFAULT '',
    delete_branch boolean NOT NULL DEFAULT false,
    merging_commit text,
    merging_base text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX pull_auto_merges_doer ON pull_auto_merges (doer_id)`
})

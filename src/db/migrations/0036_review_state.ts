// "Viewed" markers of the files changed page (Forgejo's models/pull/review_state.go `ReviewState`):
// per user, pull request and head commit, the files the user marked as viewed, as JSON
// `{path: state}` with Forgejo's states (1 viewed, 2 changed since it was viewed). The page reads
// the newest row of the user; after a push it writes one for the new head in which a viewed file
// whose content changed since is `changed` (Forgejo's `SyncAndGetUserSpecificDiff`).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE review_state (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    pull_id bigint NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    commit_sha text NOT NULL,
    updated_files text NOT NULL DEFAULT '{}',
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, pull_id, commit_sha)
  )`
  yield* sql`CREATE INDEX review_state_newest ON review_state (user_id, pull_id, updated_at)`
})

// Issue 23 item 4: activity feeds (Forgejo's `action` table, models/activities/action.go). One row
// per feed an action shows in, as Forgejo's `NotifyWatchers` writes them: the doer's own (user_id =
// act_user_id, the "original" the repository and team feeds read), the owning organization's, and
// each watcher's. The repository's rows go with it; a comment's row keeps its id (presented only
// while the comment exists).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE actions (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    act_user_id bigint NOT NULL,
    op_type smallint NOT NULL,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    comment_id bigint,
    is_private boolean NOT NULL DEFAULT false,
    ref_name text NOT NULL DEFAULT '',
    content text NOT NULL DEFAULT '',
    created timestamptz NOT NULL DEFAULT now()
  )`
  // The user and organization feeds (and the heatmap: user_id, act_user_id, created).
  yield* sql`CREATE INDEX actions_user_feed ON actions (user_id, created)`
  // The repository and team feeds read the originals only.
  yield* sql`CREATE INDEX actions_repo_feed ON actions (repo_id, created) WHERE user_id = act_user_id`
})

// Repository transfers (pending until the recipient accepts), the redirects that keep old names
// working after a transfer or a rename, and repositories given to particular teams.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE repo_transfers (
    repo_id bigint PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    doer_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    recipient_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    team_ids text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE repo_redirects (
    owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    lower_name text NOT NULL,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (owner_id, lower_name)
  )`
  yield* sql`CREATE TABLE team_repos (
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, repo_id)
  )`
  yield* sql`CREATE INDEX team_repos_repo ON team_repos (repo_id)`
})

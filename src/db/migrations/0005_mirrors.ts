// Pull mirrors (a repository kept in sync with a remote it was migrated from) and push mirrors
// (remotes a repository is pushed to). Credentials are stored sealed with [security] SECRET_KEY;
// addresses never carry them. A pull mirror's interval is the repository's `mirror_interval`
// (PATCH /repos/{o}/{r} changes it); the scheduler reads it with `last_attempt_at`.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE pull_mirrors (
    repo_id bigint PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    remote_address text NOT NULL,
    credentials text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    -- The last successful sync (the Repository's mirror_updated).
    updated_at timestamptz,
    -- The last time a sync was started (by the schedule or by hand).
    last_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text NOT NULL DEFAULT ''
  )`
  yield* sql`CREATE TABLE push_mirrors (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    remote_name text NOT NULL,
    remote_address text NOT NULL,
    credentials text NOT NULL DEFAULT '',
    sync_on_commit boolean NOT NULL DEFAULT false,
    -- Seconds; 0: only on commit or by hand.
    interval_seconds double precision NOT NULL DEFAULT 0,
    branch_filter text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    last_update timestamptz,
    last_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error text NOT NULL DEFAULT '',
    UNIQUE (repo_id, remote_name)
  )`
})

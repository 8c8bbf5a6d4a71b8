// Background jobs (forks now; mirror syncs, deliveries later): what a user or an admin can read
// about each one. The durable state that resumes them after a crash is effect/cluster's own
// `cluster_*` tables; this table is the readable account of it. Repositories being made by a job
// are `status = 'creating'` until it finishes.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE repositories ADD COLUMN status text NOT NULL DEFAULT 'ready'`
  yield* sql`CREATE TABLE jobs (
    id bigserial PRIMARY KEY,
    kind text NOT NULL,
    idempotency_key text NOT NULL UNIQUE,
    repo_id bigint REFERENCES repositories (id) ON DELETE CASCADE,
    doer_id bigint REFERENCES users (id) ON DELETE SET NULL,
    state text NOT NULL DEFAULT 'queued',
    attempts integer NOT NULL DEFAULT 0,
    last_error text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    finished_at timestamptz
  )`
  yield* sql`CREATE INDEX jobs_repo ON jobs (repo_id, id)`
  yield* sql`CREATE INDEX jobs_state ON jobs (state, id)`
})

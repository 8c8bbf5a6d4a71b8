// Issue dependencies and time tracking (Forgejo's models/issues dependency.go, tracked_time.go,
// stopwatch.go). A dependency row says `issue_id` is blocked by `dependency_id` (both may live in
// different repositories). Tracked times are soft-deleted as Forgejo does (`deleted`), so that a
// timeline comment can still show what was removed. One stopwatch per user and issue. Timeline
// comments gain the dependent issue (add/remove_dependency) and the tracked time they record.
// The internal tracker settings of a repository are NULL until set: NULL follows the `[service]`
// defaults (DEFAULT_ENABLE_TIMETRACKING, DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME,
// DEFAULT_ENABLE_DEPENDENCIES).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE issue_dependencies (
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    dependency_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issue_id, dependency_id),
    CHECK (issue_id <> dependency_id)
  )`
  yield* sql`CREATE INDEX issue_dependencies_dependency ON issue_dependencies (dependency_id)`
  yield* sql`CREATE TABLE tracked_times (
    id bigserial PRIMARY KEY,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id bigint NOT NULL,
    time bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    deleted boolean NOT NULL DEFAULT false
  )`
  yield* sql`CREATE INDEX tracked_times_issue ON tracked_times (issue_id, id) WHERE NOT deleted`
  yield* sql`CREATE INDEX tracked_times_user ON tracked_times (user_id, id) WHERE NOT deleted`
  yield* sql`CREATE TABLE stopwatches (
    id bigserial PRIMARY KEY,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, issue_id)
  )`
  yield* sql`ALTER TABLE comments
    ADD COLUMN dependent_issue_id bigint REFERENCES issues (id) ON DELETE CASCADE,
    ADD COLUMN time_id bigint REFERENCES tracked_times (id) ON DELETE SET NULL`
  yield* sql`ALTER TABLE repositories
    ADD COLUMN enable_time_tracker boolean,
    ADD COLUMN allow_only_contributors_to_track_time boolean,
    ADD COLUMN enable_issue_dependencies boolean`
})

// Notifications (Forgejo's models/activities/notification.go): one thread per user and issue,
// created unread and brought back to unread (and to the top) by new activity on the issue.
// `status` is Forgejo's NotificationStatus (1 unread, 2 read, 3 pinned), `source` its
// NotificationSource (1 issue, 2 pull request, 3 commit, 4 repository).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE notifications (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    status smallint NOT NULL DEFAULT 1 CHECK (status IN (1, 2, 3)),
    source smallint NOT NULL CHECK (source IN (1, 2, 3, 4)),
    issue_id bigint REFERENCES issues (id) ON DELETE CASCADE,
    comment_id bigint,
    updated_by bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, issue_id)
  )`
  yield* sql`CREATE INDEX notifications_user ON notifications (user_id, updated_at DESC, id DESC)`
  yield* sql`CREATE INDEX notifications_repo ON notifications (repo_id)`
})

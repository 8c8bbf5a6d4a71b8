// The tracker's extras (Forgejo's models/issues reaction.go, issue_watch.go, issue_pin.go):
// reactions on issues and comments, explicit per-issue subscriptions (they override the automatic
// rule: poster, assignees, commenters, repository watchers), and the pin order of pinned issues
// (0: not pinned). Attachments get their own migration with the code that uses them.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE reactions (
    id bigserial PRIMARY KEY,
    type text NOT NULL,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    comment_id bigint REFERENCES comments (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX reactions_one ON reactions (issue_id, COALESCE(comment_id, 0), user_id, type)`
  yield* sql`CREATE TABLE issue_watches (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    is_watching boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (issue_id, user_id)
  )`
  yield* sql`CREATE INDEX issue_watches_user ON issue_watches (user_id)`
  yield* sql`ALTER TABLE issues ADD COLUMN pin_order integer NOT NULL DEFAULT 0`
  yield* sql`CREATE INDEX issues_pinned ON issues (repo_id, is_pull, pin_order) WHERE pin_order > 0`
})

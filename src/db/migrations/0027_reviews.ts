// Pull request reviews (Forgejo's models/issues/review.go, comment.go): one `reviews` row per
// review, review request (type 4, a user's or a team's) or pending review, and its timeline
// entries as comments of Forgejo's types — `review` (22) with the review's body, `code` (21) per
// inline comment (path, signed line: negative for the old side, the blamed commit and the cut
// diff hunk), `review_request` (27, the requested user or team), `dismiss_review` (32). A review's
// comments go with it. `type` is Forgejo's ReviewType: 0 pending, 1 approve, 2 comment, 3 reject
// (request changes), 4 request.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE reviews (
    id bigserial PRIMARY KEY,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    type smallint NOT NULL,
    reviewer_id bigint REFERENCES users (id) ON DELETE SET NULL,
    reviewer_team_id bigint REFERENCES teams (id) ON DELETE CASCADE,
    content text NOT NULL DEFAULT '',
    official boolean NOT NULL DEFAULT false,
    commit_id text NOT NULL DEFAULT '',
    stale boolean NOT NULL DEFAULT false,
    dismissed boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX reviews_issue ON reviews (issue_id, created_at, id)`
  yield* sql`CREATE INDEX reviews_reviewer ON reviews (reviewer_id) WHERE reviewer_id IS NOT NULL`
  yield* sql`ALTER TABLE comments
    ADD COLUMN review_id bigint REFERENCES reviews (id) ON DELETE CASCADE,
    ADD COLUMN tree_path text NOT NULL DEFAULT '',
    ADD COLUMN line bigint NOT NULL DEFAULT 0,
    ADD COLUMN patch text NOT NULL DEFAULT '',
    ADD COLUMN commit_sha text NOT NULL DEFAULT '',
    ADD COLUMN assignee_team_id bigint REFERENCES teams (id) ON DELETE CASCADE,
    ADD COLUMN resolve_doer_id bigint`
  yield* sql`CREATE INDEX comments_review ON comments (review_id) WHERE review_id IS NOT NULL`
})

// The issue tracker's core (Forgejo's models/issues): issues and their per-repository numbers,
// comments (every generated type of the timeline), labels of a repository or an organization,
// milestones, assignees and mentions. Issue numbers come from one counter row per repository
// (Forgejo's `issue_index` resource table), shared with pull requests, bumped in the creating
// transaction so that numbers have no gaps or duplicates. Milestone counts are counted from
// `issues` when read, so they can never drift. The `q` search uses trigram indexes (pg_trgm, which
// PostgreSQL's contrib and PGlite both ship).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
  yield* sql`CREATE TABLE issue_index (
    repo_id bigint PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    max_index bigint NOT NULL
  )`
  yield* sql`CREATE TABLE milestones (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name text NOT NULL,
    content text NOT NULL DEFAULT '',
    is_closed boolean NOT NULL DEFAULT false,
    deadline timestamptz,
    closed_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX milestones_repo ON milestones (repo_id)`
  yield* sql`CREATE TABLE issues (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    index bigint NOT NULL,
    poster_id bigint NOT NULL,
    title text NOT NULL,
    body text NOT NULL DEFAULT '',
    ref text NOT NULL DEFAULT '',
    is_pull boolean NOT NULL DEFAULT false,
    is_closed boolean NOT NULL DEFAULT false,
    is_locked boolean NOT NULL DEFAULT false,
    milestone_id bigint REFERENCES milestones (id) ON DELETE SET NULL,
    num_comments integer NOT NULL DEFAULT 0,
    deadline timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    closed_at timestamptz,
    UNIQUE (repo_id, index)
  )`
  yield* sql`CREATE INDEX issues_repo_state ON issues (repo_id, is_closed, created_at DESC)`
  yield* sql`CREATE INDEX issues_milestone ON issues (milestone_id) WHERE milestone_id IS NOT NULL`
  yield* sql`CREATE INDEX issues_poster ON issues (poster_id)`
  yield* sql`CREATE INDEX issues_title_trgm ON issues USING gin (title gin_trgm_ops)`
  yield* sql`CREATE INDEX issues_body_trgm ON issues USING gin (body gin_trgm_ops)`
  yield* sql`CREATE TABLE labels (
    id bigserial PRIMARY KEY,
    repo_id bigint REFERENCES repositories (id) ON DELETE CASCADE,
    org_id bigint REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    exclusive boolean NOT NULL DEFAULT false,
    color text NOT NULL,
    description text NOT NULL DEFAULT '',
    archived_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((repo_id IS NULL) <> (org_id IS NULL))
  )`
  yield* sql`CREATE INDEX labels_repo ON labels (repo_id) WHERE repo_id IS NOT NULL`
  yield* sql`CREATE INDEX labels_org ON labels (org_id) WHERE org_id IS NOT NULL`
  yield* sql`CREATE TABLE issue_labels (
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    label_id bigint NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
  )`
  yield* sql`CREATE INDEX issue_labels_label ON issue_labels (label_id, issue_id)`
  yield* sql`CREATE TABLE issue_assignees (
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    assignee_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, assignee_id)
  )`
  yield* sql`CREATE INDEX issue_assignees_user ON issue_assignees (assignee_id)`
  // Who an issue's texts mention (the `mentioned_by` filter; notifications later).
  yield* sql`CREATE TABLE issue_mentions (
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, user_id)
  )`
  yield* sql`CREATE INDEX issue_mentions_user ON issue_mentions (user_id)`
  // One row per timeline entry; `type` is Forgejo's CommentType number (CONTRACT-ISSUES §7). The
  // columns a type does not use stay at their defaults. Attachments (a later slice) hang off
  // comment ids.
  yield* sql`CREATE TABLE comments (
    id bigserial PRIMARY KEY,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    type smallint NOT NULL,
    poster_id bigint NOT NULL,
    body text NOT NULL DEFAULT '',
    label_id bigint REFERENCES labels (id) ON DELETE CASCADE,
    old_milestone_id bigint,
    milestone_id bigint,
    assignee_id bigint,
    removed_assignee boolean NOT NULL DEFAULT false,
    old_title text NOT NULL DEFAULT '',
    new_title text NOT NULL DEFAULT '',
    old_ref text NOT NULL DEFAULT '',
    new_ref text NOT NULL DEFAULT '',
    ref_repo_id bigint,
    ref_issue_id bigint REFERENCES issues (id) ON DELETE CASCADE,
    ref_comment_id bigint,
    ref_action smallint NOT NULL DEFAULT 0,
    ref_is_pull boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX comments_issue ON comments (issue_id, created_at, id)`
  yield* sql`CREATE INDEX comments_ref_issue ON comments (ref_issue_id) WHERE ref_issue_id IS NOT NULL`
  yield* sql`CREATE INDEX comments_body_trgm ON comments USING gin (body gin_trgm_ops) WHERE type = 0`
})

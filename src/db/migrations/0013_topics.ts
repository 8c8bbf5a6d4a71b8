// Repository topics (Forgejo's `topic` and `repo_topic` tables). A topic's repository count is
// counted from `repo_topics` when read rather than kept in a column, so deleting a repository
// (which cascades here) can never leave it wrong. `repositories.topics` keeps each repository's
// topic names as JSON text, most used first, as Forgejo's `repository.topics` column, for the
// Repository JSON. Also the repository's primary language (Forgejo's `language_stat.is_primary`).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE topics (
    id bigserial PRIMARY KEY,
    name text NOT NULL UNIQUE CHECK (name ~ '^[a-z0-9][-.a-z0-9]*$' AND length(name) <= 35),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE repo_topics (
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    topic_id bigint NOT NULL REFERENCES topics (id) ON DELETE CASCADE,
    PRIMARY KEY (repo_id, topic_id)
  )`
  yield* sql`CREATE INDEX repo_topics_topic ON repo_topics (topic_id)`
  yield* sql`ALTER TABLE repositories ADD COLUMN topics text NOT NULL DEFAULT '[]'`
  // The largest language of the default branch (src/languages), the Repository JSON's `language`.
  yield* sql`ALTER TABLE repositories ADD COLUMN primary_language text NOT NULL DEFAULT ''`
})

// Repositories and who reaches them besides owners and org teams: collaborators, stars, watches.
// An owner cannot be deleted while it owns repositories (no cascade): the bare repositories on
// disk must be removed with their rows, which only the repository service does.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE repositories (
    id bigserial PRIMARY KEY,
    owner_id bigint NOT NULL REFERENCES users (id),
    name text NOT NULL,
    lower_name text NOT NULL,
    description text NOT NULL DEFAULT '',
    website text NOT NULL DEFAULT '',
    original_url text NOT NULL DEFAULT '',
    default_branch text NOT NULL DEFAULT 'main',
    object_format_name text NOT NULL DEFAULT 'sha1' CHECK (object_format_name IN ('sha1', 'sha256')),
    is_private boolean NOT NULL DEFAULT false,
    is_empty boolean NOT NULL DEFAULT true,
    is_archived boolean NOT NULL DEFAULT false,
    is_template boolean NOT NULL DEFAULT false,
    is_fork boolean NOT NULL DEFAULT false,
    fork_id bigint REFERENCES repositories (id) ON DELETE SET NULL,
    is_mirror boolean NOT NULL DEFAULT false,
    -- Bytes on disk (the API shows KiB).
    size bigint NOT NULL DEFAULT 0,
    num_stars integer NOT NULL DEFAULT 0,
    num_forks integer NOT NULL DEFAULT 0,
    num_watches integer NOT NULL DEFAULT 0,
    num_issues integer NOT NULL DEFAULT 0,
    num_closed_issues integer NOT NULL DEFAULT 0,
    num_pulls integer NOT NULL DEFAULT 0,
    num_closed_pulls integer NOT NULL DEFAULT 0,
    num_releases integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    archived_at timestamptz,
    UNIQUE (owner_id, lower_name)
  )`
  yield* sql`CREATE INDEX repositories_lower_name ON repositories (lower_name)`
  yield* sql`CREATE INDEX repositories_fork ON repositories (fork_id)`
  yield* sql`CREATE TABLE collaborations (
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    mode text NOT NULL DEFAULT 'write' CHECK (mode IN ('read', 'write', 'admin')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, user_id)
  )`
  yield* sql`CREATE INDEX collaborations_user ON collaborations (user_id)`
  yield* sql`CREATE TABLE stars (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, repo_id)
  )`
  yield* sql`CREATE INDEX stars_repo ON stars (repo_id)`
  yield* sql`CREATE TABLE watches (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    -- Forgejo's watch modes: normal (explicit), auto (by contributing), dont (explicitly not).
    mode text NOT NULL DEFAULT 'normal' CHECK (mode IN ('normal', 'auto', 'dont')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, repo_id)
  )`
  yield* sql`CREATE INDEX watches_repo ON watches (repo_id)`
})

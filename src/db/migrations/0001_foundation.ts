// Users and organizations (one table, as Forgejo: type 0 = individual, 1 = organization),
// second factors, access tokens, teams and memberships.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE users (
    id bigserial PRIMARY KEY,
    type smallint NOT NULL DEFAULT 0,
    name text NOT NULL,
    lower_name text NOT NULL UNIQUE,
    full_name text NOT NULL DEFAULT '',
    email text NOT NULL DEFAULT '',
    keep_email_private boolean NOT NULL DEFAULT false,
    passwd_hash text NOT NULL DEFAULT '',
    must_change_password boolean NOT NULL DEFAULT false,
    login_name text NOT NULL DEFAULT '',
    source_id bigint NOT NULL DEFAULT 0,
    visibility text NOT NULL DEFAULT 'public' CHECK (visibility IN ('public', 'limited', 'private')),
    is_admin boolean NOT NULL DEFAULT false,
    is_active boolean NOT NULL DEFAULT true,
    prohibit_login boolean NOT NULL DEFAULT false,
    restricted boolean NOT NULL DEFAULT false,
    allow_create_organization boolean NOT NULL DEFAULT true,
    max_repo_creation integer NOT NULL DEFAULT -1,
    repo_admin_change_team_access boolean NOT NULL DEFAULT false,
    location text NOT NULL DEFAULT '',
    website text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    pronouns text NOT NULL DEFAULT '',
    language text NOT NULL DEFAULT '',
    num_followers integer NOT NULL DEFAULT 0,
    num_following integer NOT NULL DEFAULT 0,
    num_stars integer NOT NULL DEFAULT 0,
    num_repos integer NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    last_login timestamptz
  )`
  yield* sql`CREATE INDEX users_lower_email ON users (lower(email))`
  yield* sql`CREATE TABLE two_factor (
    user_id bigint PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
    secret text NOT NULL,
    enabled boolean NOT NULL DEFAULT false,
    last_used_passcode text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE access_tokens (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    token_hash text NOT NULL UNIQUE,
    token_last_eight text NOT NULL,
    scopes text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, name)
  )`
  yield* sql`CREATE TABLE teams (
    id bigserial PRIMARY KEY,
    org_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    lower_name text NOT NULL,
    description text NOT NULL DEFAULT '',
    permission text NOT NULL CHECK (permission IN ('none', 'read', 'write', 'admin', 'owner')),
    includes_all_repositories boolean NOT NULL DEFAULT false,
    can_create_org_repo boolean NOT NULL DEFAULT false,
    units text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, lower_name)
  )`
  yield* sql`CREATE TABLE team_users (
    team_id bigint NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    org_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, user_id)
  )`
  yield* sql`CREATE INDEX team_users_user ON team_users (user_id)`
  yield* sql`CREATE TABLE org_users (
    org_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    is_public boolean NOT NULL DEFAULT false,
    PRIMARY KEY (org_id, user_id)
  )`
  yield* sql`CREATE INDEX org_users_user ON org_users (user_id)`
})

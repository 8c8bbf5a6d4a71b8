// Identity: who follows whom, e-mail addresses beyond the account's primary one, OAuth2
// applications and GPG keys (issue 5).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  // user_id follows follow_id (a user or an organization).
  yield* sql`CREATE TABLE follows (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    follow_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, follow_id),
    CHECK (user_id <> follow_id)
  )`
  yield* sql`CREATE INDEX follows_follow ON follows (follow_id)`
  // Addresses added to an account; its primary address stays users.email. An address is
  // activated by a token (only its SHA-256 is kept) sent to it.
  yield* sql`CREATE TABLE email_addresses (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    email text NOT NULL,
    lower_email text NOT NULL UNIQUE,
    is_activated boolean NOT NULL DEFAULT false,
    activation_hash text,
    activation_expires timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX email_addresses_user ON email_addresses (user_id)`
  yield* sql`CREATE UNIQUE INDEX email_addresses_activation ON email_addresses (activation_hash)`
  // The client secret is kept as a SHA-256 only: it is shown once, when the application is created.
  yield* sql`CREATE TABLE oauth2_applications (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    client_id text NOT NULL UNIQUE,
    client_secret_hash text NOT NULL,
    redirect_uris text NOT NULL,
    confidential_client boolean NOT NULL DEFAULT true,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX oauth2_applications_user ON oauth2_applications (user_id)`
  // One row per OpenPGP key, primary keys and their subkeys (primary_key_id names the parent).
  // `emails` holds the key's identities' addresses; which of them count is decided when read,
  // against the owner's activated addresses at that time.
  yield* sql`CREATE TABLE gpg_keys (
    id bigserial PRIMARY KEY,
    owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    key_id text NOT NULL UNIQUE,
    primary_key_id text NOT NULL DEFAULT '',
    content text NOT NULL,
    emails text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    expires_at timestamptz,
    added_at timestamptz NOT NULL DEFAULT now(),
    can_sign boolean NOT NULL,
    can_encrypt_comms boolean NOT NULL,
    can_encrypt_storage boolean NOT NULL,
    can_certify boolean NOT NULL,
    verified boolean NOT NULL DEFAULT false
  )`
  yield* sql`CREATE INDEX gpg_keys_owner ON gpg_keys (owner_id, primary_key_id)`
  // The armored key as it was added, for the `{user}.gpg` export.
  yield* sql`CREATE TABLE gpg_key_imports (
    key_id text PRIMARY KEY REFERENCES gpg_keys (key_id) ON DELETE CASCADE,
    content text NOT NULL
  )`
})

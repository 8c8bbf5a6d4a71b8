// Federation (ActivityPub): the key pairs of local actors, remote actors seen by the inboxes or
// looked up by local users, remote followers of local users, local users following remote
// actors, federated stars (counted into repositories.num_stars with local ones), stars local
// users gave to remote repositories, published and received activities, the ids of activities
// already handled (replays change nothing), and Fedify's key-value store and delivery queue.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  // owner: "user:<id>" or "instance"; one RSA and one Ed25519 pair each, made once and kept. The
  // private half is sealed with SECRET_KEY.
  yield* sql`CREATE TABLE federation_keys (
    owner text NOT NULL,
    algorithm text NOT NULL CHECK (algorithm IN ('rsa', 'ed25519')),
    private_jwk text NOT NULL,
    public_jwk jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (owner, algorithm)
  )`
  yield* sql`CREATE TABLE federation_actors (
    id bigserial PRIMARY KEY,
    uri text NOT NULL UNIQUE,
    host text NOT NULL,
    type text NOT NULL DEFAULT '',
    preferred_username text NOT NULL DEFAULT '',
    name text NOT NULL DEFAULT '',
    inbox text NOT NULL DEFAULT '',
    shared_inbox text NOT NULL DEFAULT '',
    url text NOT NULL DEFAULT '',
    -- How local users named it (user@host, owner@host/repo), lower case: found again without the network.
    handle text NOT NULL DEFAULT '',
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX federation_actors_handle ON federation_actors (handle) WHERE handle <> ''`
  yield* sql`CREATE TABLE federation_followers (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    actor_id bigint NOT NULL REFERENCES federation_actors (id) ON DELETE CASCADE,
    activity_uri text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, actor_id)
  )`
  yield* sql`CREATE INDEX federation_followers_actor ON federation_followers (actor_id)`
  yield* sql`CREATE TABLE federation_following (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    actor_id bigint NOT NULL REFERENCES federation_actors (id) ON DELETE CASCADE,
    activity_uri text NOT NULL,
    accepted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, actor_id)
  )`
  yield* sql`CREATE INDEX federation_following_actor ON federation_following (actor_id)`
  yield* sql`CREATE TABLE federation_stars (
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    actor_id bigint NOT NULL REFERENCES federation_actors (id) ON DELETE CASCADE,
    activity_uri text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (repo_id, actor_id)
  )`
  yield* sql`CREATE INDEX federation_stars_actor ON federation_stars (actor_id)`
  yield* sql`CREATE TABLE federation_remote_stars (
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    actor_id bigint NOT NULL REFERENCES federation_actors (id) ON DELETE CASCADE,
    activity_uri text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, actor_id)
  )`
  yield* sql`CREATE TABLE federation_outbox (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    activity_uri text NOT NULL UNIQUE,
    activity jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX federation_outbox_user ON federation_outbox (user_id, id)`
  // One activity once per user, though its sender may deliver it to several of their inboxes.
  yield* sql`CREATE TABLE federation_received (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    actor_id bigint NOT NULL REFERENCES federation_actors (id) ON DELETE CASCADE,
    activity_uri text NOT NULL,
    activity jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, activity_uri)
  )`
  yield* sql`CREATE INDEX federation_received_user ON federation_received (user_id, id)`
  yield* sql`CREATE TABLE federation_handled (
    activity_uri text PRIMARY KEY,
    handled_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX federation_handled_at ON federation_handled (handled_at)`
  yield* sql`CREATE TABLE federation_kv (
    key text PRIMARY KEY,
    value jsonb NOT NULL,
    expires_at timestamptz
  )`
  // Outbound deliveries: taken in id order, one at a time per ordering key; a failed one keeps
  // its place (later ones of its key wait) until its attempts run out.
  // The message text is sealed with SECRET_KEY: it carries the sender's private key.
  yield* sql`CREATE TABLE federation_queue (
    id bigserial PRIMARY KEY,
    message text NOT NULL,
    ordering_key text,
    job_key text NOT NULL,
    deliver_at timestamptz NOT NULL DEFAULT now(),
    attempts integer NOT NULL DEFAULT 0,
    locked_until timestamptz
  )`
  yield* sql`CREATE INDEX federation_queue_due ON federation_queue (deliver_at)`
  yield* sql`CREATE INDEX federation_queue_ordering ON federation_queue (ordering_key, id)`
})

// SSH public keys. A user key belongs to its owner; a deploy key's public key has no owner and is
// attached to repositories through deploy_keys (one key may serve several repositories, as Forgejo).
// A fingerprint is unique on the instance: one key authenticates one identity over SSH.
// A principal key names an SSH-certificate principal (content = the name; fingerprint
// `principal:<name>`), as Forgejo's principal keys: certificates naming it sign API requests.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE public_keys (
    id bigserial PRIMARY KEY,
    owner_id bigint REFERENCES users (id) ON DELETE CASCADE,
    name text NOT NULL,
    fingerprint text NOT NULL UNIQUE,
    content text NOT NULL,
    key_type text NOT NULL CHECK (key_type IN ('user', 'deploy', 'principal')),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE UNIQUE INDEX public_keys_owner_name ON public_keys (owner_id, name) WHERE key_type = 'user'`
  yield* sql`CREATE TABLE deploy_keys (
    id bigserial PRIMARY KEY,
    key_id bigint NOT NULL REFERENCES public_keys (id) ON DELETE CASCADE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name text NOT NULL,
    read_only boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (key_id, repo_id),
    UNIQUE (repo_id, name)
  )`
})

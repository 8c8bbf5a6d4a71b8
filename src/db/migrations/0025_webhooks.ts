// Webhooks (Forgejo's models/webhook: `webhook`, `hook_task`). A hook belongs to a repository
// (`repo_id`), to a user or organization (`owner_id`), or to the site (both null): a system hook
// (`is_system`) fires for every repository, a default hook is copied into each new repository.
// `secret` and `authorization_header` are sealed (src/lib/Sealer.ts, purpose "webhook-secrets").
// `copied_from` names the default hook a repository's hook was copied from.
// `events` is Forgejo's HookEvent JSON ({push_only, send_everything, choose_events, events:{…}}).
// A hook task is one delivery: its payload is fixed when queued; each attempt rewrites the
// request, response and outcome; `source_key` makes queueing it idempotent (the event's queue key,
// the hook and the event type), so an event handled twice after a crash queues it once.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE webhooks (
    id bigserial PRIMARY KEY,
    repo_id bigint REFERENCES repositories (id) ON DELETE CASCADE,
    owner_id bigint REFERENCES users (id) ON DELETE CASCADE,
    is_system boolean NOT NULL DEFAULT false,
    type text NOT NULL,
    url text NOT NULL,
    http_method text NOT NULL DEFAULT 'POST',
    content_type smallint NOT NULL DEFAULT 1,
    secret text NOT NULL DEFAULT '',
    authorization_header text NOT NULL DEFAULT '',
    events jsonb NOT NULL,
    branch_filter text NOT NULL DEFAULT '',
    meta jsonb NOT NULL DEFAULT 'null',
    active boolean NOT NULL DEFAULT false,
    last_status smallint NOT NULL DEFAULT 0,
    copied_from bigint,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX webhooks_repo ON webhooks (repo_id, id)`
  yield* sql`CREATE INDEX webhooks_owner ON webhooks (owner_id, id)`
  // A default hook is copied into a repository once, whoever copies it first.
  yield* sql`CREATE UNIQUE INDEX webhooks_copies ON webhooks (repo_id, copied_from) WHERE copied_from IS NOT NULL`
  yield* sql`CREATE TABLE hook_tasks (
    id bigserial PRIMARY KEY,
    hook_id bigint NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    uuid text NOT NULL UNIQUE,
    source_key text UNIQUE,
    event_type text NOT NULL,
    payload text NOT NULL,
    redelivery_of bigint,
    is_delivered boolean NOT NULL DEFAULT false,
    is_succeed boolean NOT NULL DEFAULT false,
    attempts integer NOT NULL DEFAULT 0,
    duration_ms integer NOT NULL DEFAULT 0,
    request jsonb,
    response jsonb,
    delivered_at timestamptz,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX hook_tasks_hook ON hook_tasks (hook_id, id)`
})

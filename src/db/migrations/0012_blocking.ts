// Blocked users (Forgejo's `forgejo_blocked_user`, models/user/block.go): `user_id` (a user or an
// organization) has blocked `block_id`. One row a pair; the row's time is shown as `created_at`
// in the list of blocked users.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE blocked_users (
    id bigserial PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    block_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, block_id),
    CHECK (user_id <> block_id)
  )`
  yield* sql`CREATE INDEX blocked_users_block ON blocked_users (block_id)`
})

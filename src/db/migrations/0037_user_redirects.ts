// Old names of renamed accounts (Forgejo's `user_redirect`): a URL naming the old owner answers a
// 307 to the new one until another account takes the name.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE user_redirects (
    lower_name text PRIMARY KEY,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE
  )`
  yield* sql`CREATE INDEX user_redirects_user ON user_redirects (user_id)`
})

// Issue 23 item 3: uploaded avatars (Forgejo's `user.avatar`, `repository.avatar`). The column
// holds the sha256 of the stored PNG in the blob storage (src/avatars), "" when none; the index
// lets `/avatars/{hash}` serve only blobs that are some account's or repository's avatar.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE users ADD COLUMN avatar text NOT NULL DEFAULT ''`
  yield* sql`ALTER TABLE repositories ADD COLUMN avatar text NOT NULL DEFAULT ''`
  yield* sql`CREATE INDEX users_avatar ON users (avatar) WHERE avatar <> ''`
  yield* sql`CREATE INDEX repositories_avatar ON repositories (avatar) WHERE avatar <> ''`
})

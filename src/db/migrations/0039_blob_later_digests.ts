// A blob's md5, sha1 and sha512 are computed after its upload is answered (only sha256, its name,
// while it streams in: src/storage/Digests.ts), so a row exists for a moment without them. NULL
// means "not computed yet"; the storage fills them in (and blake2b), and a reader that needs one
// computes it then rather than ever showing an empty or wrong value.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE blobs ALTER COLUMN md5 DROP NOT NULL, ALTER COLUMN sha1 DROP NOT NULL,
    ALTER COLUMN sha512 DROP NOT NULL`
})

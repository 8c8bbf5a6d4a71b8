// BLAKE2b-512 of every blob (Forgejo's package_blob.hash_blake2b), beside md5, sha1, sha256 and
// sha512. Blobs stored before this migration keep NULL until the same bytes are put again (the
// put computes it anyway and fills it in): hashing every stored file again at start-up could take
// hours on a large store, and no answer shows it yet (Forgejo's PackageFile JSON has no blake2b).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE blobs ADD COLUMN blake2b text`
})

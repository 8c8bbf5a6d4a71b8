// An avatar's blob is released when its account or repository row goes (Forgejo deletes the
// avatar file with the user or repository): a trigger however the row is deleted — an admin's
// purge, an organization's deletion, a repository's — as for attachments and release assets. The
// storage's sweep then removes the file once nothing else holds the blob.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql.unsafe(`CREATE FUNCTION avatars_release_blob() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE blobs SET refcount = refcount - 1 WHERE sha256 = OLD.avatar AND refcount > 0;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER users_release_avatar AFTER DELETE ON users
    FOR EACH ROW WHEN (OLD.avatar <> '') EXECUTE FUNCTION avatars_release_blob()`
  yield* sql`CREATE TRIGGER repositories_release_avatar AFTER DELETE ON repositories
    FOR EACH ROW WHEN (OLD.avatar <> '') EXECUTE FUNCTION avatars_release_blob()`
})

// Chunked blob uploads of the container registry (Forgejo's `package_blob_upload`,
// routers/api/packages/container): a session per `POST /v2/{image}/blobs/uploads/`, whose bytes so
// far are either one stored blob still held by the session (`sha256`, `hold`: the first PATCH of a
// client that sends the whole blob at once streams straight into the blob storage) or a file under
// [packages] CHUNKED_UPLOAD_PATH named by the session's id. The package cleanup removes sessions
// abandoned for longer than a day, with their bytes.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE container_uploads (
    id text PRIMARY KEY,
    owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    image text NOT NULL,
    size bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    sha256 text,
    hold bigint,
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX container_uploads_updated ON container_uploads (updated_at)`
})

// Attachments of issues and comments (Forgejo's models/repo/attachment.go `Attachment`): a name,
// the blob (src/storage) holding its bytes, the issue it belongs to and, for a comment's, the
// comment (null: the issue's own). `uuid` names it in its download URL (`/attachments/{uuid}`);
// `content_type` is what its first bytes were detected as when it was uploaded (what it is served
// as). `repo_id` is the repository, for the quota of its owner
// (`size:assets:attachments:issues`).
//
// A row holds one reference to its blob. Taking it (`BlobStorage.acquire`, which also ends the
// upload's hold) is the inserting transaction's job; giving it back is this trigger's, so that it
// happens however the row goes — deleted itself, or with its comment, issue, repository or owner
// (ON DELETE CASCADE). A blob left without references is removed with its file by the storage
// sweep (at start-up and every 10 minutes).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE attachments (
    id bigserial PRIMARY KEY,
    uuid uuid NOT NULL UNIQUE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    issue_id bigint NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    comment_id bigint REFERENCES comments (id) ON DELETE CASCADE,
    uploader_id bigint REFERENCES users (id) ON DELETE SET NULL,
    name text NOT NULL,
    size bigint NOT NULL CHECK (size >= 0),
    content_type text NOT NULL,
    sha256 text NOT NULL REFERENCES blobs (sha256),
    download_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX attachments_issue ON attachments (issue_id, id)`
  yield* sql`CREATE INDEX attachments_comment ON attachments (comment_id, id) WHERE comment_id IS NOT NULL`
  yield* sql`CREATE INDEX attachments_repo ON attachments (repo_id)`
  yield* sql`CREATE INDEX attachments_sha256 ON attachments (sha256)`
  yield* sql.unsafe(`CREATE FUNCTION attachments_release_blob() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE blobs SET refcount = refcount - 1 WHERE sha256 = OLD.sha256 AND refcount > 0;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER attachments_release_blob AFTER DELETE ON attachments
    FOR EACH ROW EXECUTE FUNCTION attachments_release_blob()`
})

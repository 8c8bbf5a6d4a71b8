// Releases (Forgejo's models/repo/release.go `Release`): one per repository and tag, the tag
// compared case-insensitively as Forgejo does (`lower_tag_name`). A draft has no git tag yet
// (`sha1` null); publishing creates the tag from `target` when it is missing. Deleting a release
// removes its row and keeps the git tag (Forgejo keeps a tag-only row; Hearth reads tags from git).
//
// Release assets (Forgejo's `Attachment` with a `release_id`) live in their own table beside the
// issue attachments of 0021: an uploaded one holds one reference to its blob (given back by the
// trigger however the row goes, as for issue attachments), an external one has a URL and no blob.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE releases (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    publisher_id bigint REFERENCES users (id) ON DELETE SET NULL,
    tag_name text NOT NULL,
    lower_tag_name text NOT NULL,
    target text NOT NULL DEFAULT '',
    title text NOT NULL DEFAULT '',
    note text NOT NULL DEFAULT '',
    sha1 text,
    is_draft boolean NOT NULL DEFAULT false,
    is_prerelease boolean NOT NULL DEFAULT false,
    hide_archive_links boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repo_id, lower_tag_name)
  )`
  yield* sql`CREATE INDEX releases_repo_created ON releases (repo_id, created_at DESC, id DESC)`
  yield* sql`CREATE TABLE release_assets (
    id bigserial PRIMARY KEY,
    uuid uuid NOT NULL UNIQUE,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    release_id bigint NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    uploader_id bigint REFERENCES users (id) ON DELETE SET NULL,
    name text NOT NULL,
    size bigint NOT NULL DEFAULT 0 CHECK (size >= 0),
    content_type text NOT NULL DEFAULT '',
    sha256 text REFERENCES blobs (sha256),
    external_url text,
    download_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((sha256 IS NULL) <> (external_url IS NULL))
  )`
  yield* sql`CREATE INDEX release_assets_release ON release_assets (release_id, id)`
  yield* sql`CREATE INDEX release_assets_repo ON release_assets (repo_id)`
  yield* sql`CREATE INDEX release_assets_sha256 ON release_assets (sha256) WHERE sha256 IS NOT NULL`
  yield* sql.unsafe(`CREATE FUNCTION release_assets_release_blob() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF OLD.sha256 IS NOT NULL THEN
        UPDATE blobs SET refcount = refcount - 1 WHERE sha256 = OLD.sha256 AND refcount > 0;
      END IF;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER release_assets_release_blob AFTER DELETE ON release_assets
    FOR EACH ROW EXECUTE FUNCTION release_assets_release_blob()`
})

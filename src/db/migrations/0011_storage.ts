// Blob storage (src/storage): one row per stored content, named by its sha256, with its size and
// the digests Forgejo records for package blobs (`package_blob`: md5, sha1, sha256, sha512), and
// how many rows elsewhere (attachments, release assets, package files, avatars) refer to it. The
// last release of a reference removes the row and the file.
//
// A put leaves a hold on the blob until the caller takes its reference (or the hold expires):
// without it, the last reference of an existing blob could be released between a put that found
// it and that put's acquire. Expired holds and blobs with no reference and no live hold are what a
// crash leaves behind; the storage sweep removes them.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE blobs (
    -- Lower-case hex; the file is <PATH>/<sha256[0:2]>/<sha256[2:4]>/<sha256>.
    sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    size bigint NOT NULL CHECK (size >= 0),
    md5 text NOT NULL,
    sha1 text NOT NULL,
    sha512 text NOT NULL,
    refcount integer NOT NULL DEFAULT 0 CHECK (refcount >= 0),
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX blobs_unreferenced ON blobs (sha256) WHERE refcount = 0`
  yield* sql`CREATE TABLE blob_holds (
    id bigserial PRIMARY KEY,
    sha256 text NOT NULL REFERENCES blobs (sha256) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL
  )`
  yield* sql`CREATE INDEX blob_holds_sha256 ON blob_holds (sha256)`
  yield* sql`CREATE INDEX blob_holds_expires_at ON blob_holds (expires_at)`
})

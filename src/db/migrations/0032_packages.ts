// Packages (Forgejo's models/packages: `package`, `package_version`, `package_file`,
// `package_property`, `package_cleanup_rule`; CONTRACT-PACKAGES §1, §9). A package belongs to a
// user or an organization, per type, by lower-cased name (`name` keeps the case of the first
// upload); a version per lower-cased version string; files per version by lower-cased name. A
// file's bytes are a blob of the blob storage (src/storage): each file row holds one reference,
// given back by the delete trigger however the row goes (a version deleted, its package, its
// owner), as release assets do. Forgejo's `package_blob` is the `blobs` table itself.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE packages (
    id bigserial PRIMARY KEY,
    owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    repo_id bigint REFERENCES repositories (id) ON DELETE SET NULL,
    type text NOT NULL,
    name text NOT NULL,
    lower_name text NOT NULL,
    semver_compatible boolean NOT NULL DEFAULT false,
    is_internal boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, type, lower_name)
  )`
  yield* sql`CREATE INDEX packages_repo ON packages (repo_id) WHERE repo_id IS NOT NULL`
  yield* sql`CREATE TABLE package_versions (
    id bigserial PRIMARY KEY,
    package_id bigint NOT NULL REFERENCES packages (id) ON DELETE CASCADE,
    creator_id bigint REFERENCES users (id) ON DELETE SET NULL,
    version text NOT NULL,
    lower_version text NOT NULL,
    is_internal boolean NOT NULL DEFAULT false,
    metadata_json text NOT NULL DEFAULT '',
    download_count bigint NOT NULL DEFAULT 0,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (package_id, lower_version)
  )`
  yield* sql`CREATE INDEX package_versions_created ON package_versions (created_at DESC, id DESC)`
  yield* sql`CREATE TABLE package_files (
    id bigserial PRIMARY KEY,
    version_id bigint NOT NULL REFERENCES package_versions (id) ON DELETE CASCADE,
    sha256 text NOT NULL REFERENCES blobs (sha256),
    size bigint NOT NULL CHECK (size >= 0),
    name text NOT NULL,
    lower_name text NOT NULL,
    composite_key text NOT NULL DEFAULT '',
    is_lead boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (version_id, lower_name, composite_key)
  )`
  yield* sql`CREATE INDEX package_files_sha256 ON package_files (sha256)`
  // ref_type: 0 version, 1 file, 2 package (Forgejo's PropertyType). Rows go with what they describe.
  yield* sql`CREATE TABLE package_properties (
    id bigserial PRIMARY KEY,
    ref_type smallint NOT NULL,
    ref_id bigint NOT NULL,
    name text NOT NULL,
    value text NOT NULL DEFAULT ''
  )`
  yield* sql`CREATE INDEX package_properties_ref ON package_properties (ref_type, ref_id)`
  yield* sql`CREATE TABLE package_cleanup_rules (
    id bigserial PRIMARY KEY,
    owner_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    type text NOT NULL,
    enabled boolean NOT NULL DEFAULT true,
    keep_count integer NOT NULL DEFAULT 0 CHECK (keep_count >= 0),
    keep_pattern text NOT NULL DEFAULT '',
    remove_days integer NOT NULL DEFAULT 0 CHECK (remove_days >= 0),
    remove_pattern text NOT NULL DEFAULT '',
    match_full_name boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (owner_id, type)
  )`
  yield* sql.unsafe(`CREATE FUNCTION package_files_release_blob() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      UPDATE blobs SET refcount = refcount - 1 WHERE sha256 = OLD.sha256 AND refcount > 0;
      DELETE FROM package_properties WHERE ref_type = 1 AND ref_id = OLD.id;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER package_files_release_blob AFTER DELETE ON package_files
    FOR EACH ROW EXECUTE FUNCTION package_files_release_blob()`
  yield* sql.unsafe(`CREATE FUNCTION package_versions_drop_properties() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM package_properties WHERE ref_type = 0 AND ref_id = OLD.id;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER package_versions_drop_properties AFTER DELETE ON package_versions
    FOR EACH ROW EXECUTE FUNCTION package_versions_drop_properties()`
  yield* sql.unsafe(`CREATE FUNCTION packages_drop_properties() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      DELETE FROM package_properties WHERE ref_type = 2 AND ref_id = OLD.id;
      RETURN NULL;
    END
  $$`)
  yield* sql`CREATE TRIGGER packages_drop_properties AFTER DELETE ON packages
    FOR EACH ROW EXECUTE FUNCTION packages_drop_properties()`
})

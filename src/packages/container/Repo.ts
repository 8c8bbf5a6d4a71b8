// SQL of the container registry, beside the common package tables (src/packages/Repo.ts) and its
// own upload sessions (migration 0035_container_uploads). An image is a package of type
// `container`; each tag is a version (an untagged manifest: a version named by its digest) whose
// lead file `manifest.json` is the manifest and whose other files, named by digest, are the blobs
// it references. Blobs pushed but not yet referenced are files of the package's internal version
// UPLOAD_VERSION (Forgejo's `_sha256` upload version), removed by the cleanup after a day.
import { Effect, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { sqlBoundary } from "../../db/Boundary.ts"

export const TYPE = "container"
export const MANIFEST_FILE = "manifest.json"
/** The internal version holding pushed blobs (":" cannot be in a tag, nor start a digest). */
export const UPLOAD_VERSION = "_upload:"

export interface UploadSession {
  readonly id: string
  readonly ownerId: number
  readonly image: string
  readonly size: number
  readonly sha256: string | null
  readonly hold: number | null
}

export interface FoundBlob {
  readonly sha256: string
  readonly size: number
  readonly createdAt: Date
}

export interface FoundManifest extends FoundBlob {
  readonly versionId: number
  readonly metadataJson: string
}

type Row = Record<string, any>

const toSession = (r: Row): UploadSession => ({
  id: r.id,
  ownerId: Number(r.owner_id),
  image: r.image,
  size: Number(r.size),
  sha256: r.sha256 ?? null,
  hold: r.hold === null || r.hold === undefined ? null : Number(r.hold)
})

const toBlob = (r: Row): FoundBlob => ({ sha256: r.sha256, size: Number(r.size), createdAt: r.created_at })

export const makeContainerRepo = Effect.gen(function* () {
  const sql = yield* SqlClient
  const first = <A>(rows: ReadonlyArray<Row>, map: (r: Row) => A) =>
    rows.length === 0 ? Option.none<A>() : Option.some(map(rows[0]!))
  /** The image's package rows (owner, type, lower-cased name). */
  const inImage = (ownerId: number, image: string) =>
    sql`p.owner_id = ${ownerId} AND p.type = ${TYPE} AND p.lower_name = ${image}`

  const methods = {
    /** A blob any version of the image references (a layer, a config, a manifest), by sha256. */
    blob: (ownerId: number, image: string, sha256: string) =>
      Effect.map(
        sql`SELECT f.sha256, f.size, f.created_at FROM package_files f
        JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND f.sha256 = ${sha256} LIMIT 1`,
        (rows) => first(rows, toBlob)
      ),
    /** Which of these blobs (by sha256) the image has, with their sizes: one query for a manifest's references. */
    blobs: (ownerId: number, image: string, sha256s: ReadonlyArray<string>) =>
      sha256s.length === 0
        ? Effect.succeed(new Map<string, number>())
        : Effect.map(
            sql`SELECT DISTINCT f.sha256, f.size FROM package_files f
            JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
            WHERE ${inImage(ownerId, image)} AND f.sha256 IN ${sql.in(sha256s)}`,
            (rows) => new Map(rows.map((r) => [String(r.sha256), Number(r.size)]))
          ),
    /**
     * A pushed blob as a file of the image's upload version, the package and the version made as
     * needed, in one statement (a push keeps two or more blobs, each its own request); the file's
     * id, or none when the upload version has that blob already.
     */
    keepUploaded: (ownerId: number, image: string, sha256: string, size: number) =>
      Effect.map(
        sql`WITH p AS (
          INSERT INTO packages (owner_id, type, name, lower_name, semver_compatible)
          VALUES (${ownerId}, ${TYPE}, ${image}, ${image.toLowerCase()}, false)
          ON CONFLICT (owner_id, type, lower_name) DO UPDATE SET name = packages.name RETURNING id
        ), v AS (
          INSERT INTO package_versions (package_id, version, lower_version, is_internal)
          SELECT id, ${UPLOAD_VERSION}, ${UPLOAD_VERSION}, true FROM p
          ON CONFLICT (package_id, lower_version) DO UPDATE SET version = package_versions.version RETURNING id
        )
        INSERT INTO package_files (version_id, sha256, size, name, lower_name, composite_key, is_lead)
        SELECT id, ${sha256}, ${size}, ${`sha256:${sha256}`}, ${`sha256:${sha256}`}, '', false FROM v
        ON CONFLICT (version_id, lower_name, composite_key) DO NOTHING RETURNING id`,
        (rows) => first(rows, (r) => Number(r.id))
      ),
    /** A manifest of the image by digest, with its version's metadata (the media type). */
    manifestByDigest: (ownerId: number, image: string, sha256: string) =>
      Effect.map(
        sql`SELECT f.sha256, f.size, f.created_at, v.id AS version_id, v.metadata_json FROM package_files f
        JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND NOT v.is_internal AND f.lower_name = ${MANIFEST_FILE}
          AND f.sha256 = ${sha256}
        ORDER BY v.id LIMIT 1`,
        (rows) => first(rows, (r) => ({ ...toBlob(r), versionId: Number(r.version_id), metadataJson: r.metadata_json }))
      ),
    /**
     * Images with at least one manifest, as `owner/image` (lower-cased) after `after` in name order:
     * a page of the catalog before the caller's visibility is applied.
     */
    catalog: (after: string, limit: number) =>
      Effect.map(
        sql`SELECT u.id AS owner_id, u.lower_name || '/' || p.lower_name AS name FROM packages p
        JOIN users u ON u.id = p.owner_id
        WHERE p.type = ${TYPE} AND NOT p.is_internal AND (u.lower_name || '/' || p.lower_name) COLLATE "C" > ${after}
          AND EXISTS (SELECT 1 FROM package_versions v WHERE v.package_id = p.id AND NOT v.is_internal)
        ORDER BY (u.lower_name || '/' || p.lower_name) COLLATE "C" LIMIT ${limit}`,
        (rows) => rows.map((r) => ({ ownerId: Number(r.owner_id), name: String(r.name) }))
      ),
    /** A manifest of the image by tag. */
    manifestByTag: (ownerId: number, image: string, tag: string) =>
      Effect.map(
        sql`SELECT f.sha256, f.size, f.created_at, v.id AS version_id, v.metadata_json FROM package_files f
        JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND NOT v.is_internal AND v.lower_version = ${tag.toLowerCase()}
          AND f.lower_name = ${MANIFEST_FILE}`,
        (rows) => first(rows, (r) => ({ ...toBlob(r), versionId: Number(r.version_id), metadataJson: r.metadata_json }))
      ),
    /** The versions (tags, or the digest of an untagged manifest) whose manifest has that sha256. */
    versionsOfManifest: (ownerId: number, image: string, sha256: string) =>
      Effect.map(
        sql`SELECT DISTINCT v.lower_version FROM package_files f
        JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND NOT v.is_internal AND f.lower_name = ${MANIFEST_FILE}
          AND f.sha256 = ${sha256}`,
        (rows) => rows.map((r) => String(r.lower_version))
      ),
    /** The image's tags in byte order (untagged manifests are no tags), `n` after `last`. */
    tags: (ownerId: number, image: string, last: string, n: number) =>
      Effect.map(
        sql`SELECT v.version FROM package_versions v JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND NOT v.is_internal AND v.version NOT LIKE 'sha256:%'
          AND v.version COLLATE "C" > ${last}
        ORDER BY v.version COLLATE "C" LIMIT ${n}`,
        (rows) => rows.map((r) => String(r.version))
      ),
    /** Whether the image has any manifest (a package with a non-internal version). */
    imageExists: (ownerId: number, image: string) =>
      Effect.map(
        sql`SELECT 1 FROM package_versions v JOIN packages p ON p.id = v.package_id
        WHERE ${inImage(ownerId, image)} AND NOT v.is_internal LIMIT 1`,
        (rows) => rows.length > 0
      ),
    /** Removes a pushed, unreferenced blob from the image's upload version; whether there was one. */
    deleteUploadedBlob: (ownerId: number, image: string, sha256: string) =>
      Effect.map(
        sql`DELETE FROM package_files f USING package_versions v, packages p
        WHERE v.id = f.version_id AND p.id = v.package_id AND ${inImage(ownerId, image)}
          AND v.is_internal AND v.lower_version = ${UPLOAD_VERSION} AND f.sha256 = ${sha256}
        RETURNING f.id`,
        (rows) => rows.length > 0
      ),
    /** Pushed blobs no manifest took within the cutoff (they go; a manifest holds its own references). */
    deleteStaleUploadedBlobs: (before: Date) =>
      Effect.map(
        sql`DELETE FROM package_files f USING package_versions v, packages p
        WHERE v.id = f.version_id AND p.id = v.package_id AND p.type = ${TYPE}
          AND v.is_internal AND v.lower_version = ${UPLOAD_VERSION} AND f.created_at < ${before}
        RETURNING f.id`,
        (rows) => rows.length
      ),
    insertSession: (id: string, ownerId: number, image: string) =>
      Effect.asVoid(sql`INSERT INTO container_uploads (id, owner_id, image) VALUES (${id}, ${ownerId}, ${image})`),
    session: (id: string, ownerId: number, image: string) =>
      Effect.map(
        sql`SELECT * FROM container_uploads WHERE id = ${id} AND owner_id = ${ownerId} AND image = ${image}`,
        (rows) => first(rows, toSession)
      ),
    updateSession: (id: string, size: number, sha256: string | null, hold: number | null) =>
      Effect.asVoid(
        sql`UPDATE container_uploads SET size = ${size}, sha256 = ${sha256}, hold = ${hold}, updated_at = now()
        WHERE id = ${id}`
      ),
    /**
     * Ends a session whose blob went straight into the storage (its one chunk): the row deleted
     * and returned, so that only one request finishes it. None for another session (or none).
     */
    takeStoredSession: (id: string, ownerId: number, image: string) =>
      Effect.map(
        sql`DELETE FROM container_uploads
        WHERE id = ${id} AND owner_id = ${ownerId} AND image = ${image} AND sha256 IS NOT NULL AND hold IS NOT NULL
        RETURNING *`,
        (rows) => first(rows, toSession)
      ),
    /** Deletes the session row; whether it was there (only one request gets true). */
    deleteSession: (id: string) =>
      Effect.map(sql`DELETE FROM container_uploads WHERE id = ${id} RETURNING id`, (rows) => rows.length > 0),
    staleSessions: (before: Date) =>
      Effect.map(sql`SELECT * FROM container_uploads WHERE updated_at < ${before}`, (rows) => rows.map(toSession))
  }
  return sqlBoundary<Bounded<typeof methods>>(methods as never)
})

/** The methods with their SQL errors turned into defects (src/db/Boundary.ts). */
type Bounded<M> = {
  readonly [K in keyof M]: M[K] extends (...args: infer P) => Effect.Effect<infer A, infer E, infer R>
    ? (...args: P) => Effect.Effect<A, Exclude<E, SqlError>, R>
    : never
}

export type ContainerRepo = Effect.Success<typeof makeContainerRepo>

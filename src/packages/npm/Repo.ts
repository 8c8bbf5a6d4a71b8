// SQL of the npm registry over the package tables (migration 0032_packages). A dist-tag is a
// version property `npm.tag` whose value is the tag (Forgejo's npm_module.TagProperty), so a
// version's tags go with it when it is deleted.
import { Effect, Option } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import { dieOnSqlError, transaction } from "../../db/Boundary.ts"
import { PROPERTY_VERSION } from "../Repo.ts"
import type { VersionEntry } from "./Metadata.ts"

export const TYPE = "npm"
export const TAG_PROPERTY = "npm.tag"

/**
 * What a package's documents are built from, in two numbers per part: the count and the highest
 * id of its versions and of their tags. Rows are only inserted and deleted (never updated), and
 * ids only grow, so any change of either set changes the stamp.
 */
export interface Stamp {
  readonly packageId: number
  readonly name: string
  readonly stamp: string
  readonly versions: number
}

export const makeNpmRepo = (sql: SqlClient) => {
  const tx = transaction(sql)
  return {
    stamp: (ownerId: number, lowerName: string): Effect.Effect<Option.Option<Stamp>> =>
      dieOnSqlError(
        Effect.map(
          sql`SELECT p.id, p.name,
            (SELECT count(*) FROM package_versions v WHERE v.package_id = p.id AND NOT v.is_internal) AS n,
            (SELECT coalesce(max(v.id), 0) FROM package_versions v WHERE v.package_id = p.id AND NOT v.is_internal) AS m,
            (SELECT count(*) || ':' || coalesce(max(pp.id), 0) FROM package_properties pp
              WHERE pp.ref_type = ${PROPERTY_VERSION} AND pp.name = ${TAG_PROPERTY}
                AND pp.ref_id IN (SELECT v.id FROM package_versions v WHERE v.package_id = p.id)) AS t
          FROM packages p WHERE p.owner_id = ${ownerId} AND p.type = ${TYPE} AND p.lower_name = ${lowerName}`,
          (rows) => {
            const r = rows[0]
            if (r === undefined) return Option.none()
            return Option.some({
              packageId: Number(r.id),
              name: String(r.name),
              stamp: `${r.n}:${r.m}:${r.t}`,
              versions: Number(r.n)
            })
          }
        )
      ),

    /**
     * The versions of a package with their lead tarball's digests and their tags. The publish
     * records sha1 and sha512 with the blob; a tarball stored by another upload whose digests are
     * not computed yet has them null (`sha256` names the blob to complete them from).
     */
    entries: (
      packageId: number
    ): Effect.Effect<
      Array<Omit<VersionEntry, "sha1" | "sha512"> & { sha256: string; sha1: string | null; sha512: string | null }>
    > =>
      dieOnSqlError(
        Effect.map(
          sql`SELECT v.version, v.created_at, v.metadata_json, f.name AS file_name, f.sha256, b.sha1, b.sha512,
            (SELECT coalesce(string_agg(pp.value, ' ' ORDER BY pp.id), '') FROM package_properties pp
              WHERE pp.ref_type = ${PROPERTY_VERSION} AND pp.ref_id = v.id AND pp.name = ${TAG_PROPERTY}) AS tags
          FROM package_versions v
          JOIN package_files f ON f.version_id = v.id AND f.is_lead
          JOIN blobs b ON b.sha256 = f.sha256
          WHERE v.package_id = ${packageId} AND NOT v.is_internal
          ORDER BY v.id`,
          (rows) =>
            rows.map((r) => ({
              version: String(r.version),
              createdAt: r.created_at as Date,
              metadataJson: String(r.metadata_json),
              fileName: String(r.file_name),
              sha256: String(r.sha256),
              sha1: r.sha1 === null ? null : String(r.sha1),
              sha512: r.sha512 === null ? null : String(r.sha512),
              tags: String(r.tags) === "" ? [] : String(r.tags).split(" ")
            }))
        )
      ),

    /** Points `tag` at the version (taking it from any other version of the package). */
    setTag: (packageId: number, versionId: number, tag: string): Effect.Effect<void> =>
      tx(
        Effect.gen(function* () {
          // One tag change of a package at a time: two would both find the tag free.
          yield* sql`SELECT id FROM packages WHERE id = ${packageId} FOR UPDATE`
          yield* sql`DELETE FROM package_properties WHERE ref_type = ${PROPERTY_VERSION} AND name = ${TAG_PROPERTY}
            AND value = ${tag} AND ref_id IN (SELECT id FROM package_versions WHERE package_id = ${packageId})`
          yield* sql`INSERT INTO package_properties (ref_type, ref_id, name, value)
            VALUES (${PROPERTY_VERSION}, ${versionId}, ${TAG_PROPERTY}, ${tag})`
        })
      ),

    /** Removes `tag` from the package; whether it was there. */
    removeTag: (packageId: number, tag: string): Effect.Effect<boolean> =>
      dieOnSqlError(
        Effect.map(
          sql`DELETE FROM package_properties WHERE ref_type = ${PROPERTY_VERSION} AND name = ${TAG_PROPERTY}
            AND value = ${tag} AND ref_id IN (SELECT id FROM package_versions WHERE package_id = ${packageId})
            RETURNING id`,
          (rows) => rows.length > 0
        )
      ),

    /** The version whose lead file is `lowerFileName`. */
    versionOfFile: (packageId: number, lowerFileName: string): Effect.Effect<Option.Option<string>> =>
      dieOnSqlError(
        Effect.map(
          sql`SELECT v.version FROM package_versions v JOIN package_files f ON f.version_id = v.id
            WHERE v.package_id = ${packageId} AND NOT v.is_internal AND f.lower_name = ${lowerFileName}`,
          (rows) => (rows.length === 0 ? Option.none() : Option.some(String(rows[0]!.version)))
        )
      ),

    /** The owner's npm packages whose name contains `text`, by name, with how many there are. */
    search: (
      ownerId: number,
      text: string,
      limit: number,
      offset: number
    ): Effect.Effect<{ readonly names: Array<string>; readonly total: number }> =>
      dieOnSqlError(
        Effect.gen(function* () {
          const where = sql`p.owner_id = ${ownerId} AND p.type = ${TYPE} AND NOT p.is_internal
            AND strpos(p.lower_name, ${text.toLowerCase()}) > 0
            AND EXISTS (SELECT 1 FROM package_versions v WHERE v.package_id = p.id AND NOT v.is_internal)`
          const [count] = yield* sql`SELECT count(*) AS n FROM packages p WHERE ${where}`
          const rows = yield* sql`SELECT p.lower_name FROM packages p WHERE ${where}
            ORDER BY p.lower_name LIMIT ${limit} OFFSET ${offset}`
          return { names: rows.map((r) => String(r.lower_name)), total: Number(count!.n) }
        })
      )
  }
}

export type NpmRepo = ReturnType<typeof makeNpmRepo>

// SQL for packages (tables in migration 0032_packages). Rules live in Service.ts and Policy.ts.
// A file row holds one reference to its blob: taken by the inserting transaction
// (`BlobStorage.acquire`), given back by the table's delete trigger.
import { Array as Arr, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export interface PackageRow {
  readonly id: number
  readonly ownerId: number
  readonly repoId: number | null
  readonly type: string
  readonly name: string
  readonly lowerName: string
  readonly semverCompatible: boolean
  readonly isInternal: boolean
}

export interface VersionRow {
  readonly id: number
  readonly packageId: number
  readonly creatorId: number | null
  readonly version: string
  readonly lowerVersion: string
  readonly isInternal: boolean
  readonly metadataJson: string
  readonly downloadCount: number
  readonly createdAt: Date
}

/** A version with its package (what the management API lists). */
export interface PackageVersion {
  readonly pkg: PackageRow
  readonly version: VersionRow
}

export interface FileRow {
  readonly id: number
  readonly versionId: number
  readonly sha256: string
  readonly size: number
  readonly name: string
  readonly lowerName: string
  readonly compositeKey: string
  readonly isLead: boolean
  readonly createdAt: Date
  /**
   * The blob's digests (Forgejo's package_blob): null until computed after the upload (see
   * PackagesService.files, which completes them).
   */
  readonly md5: string | null
  readonly sha1: string | null
  readonly sha512: string | null
}

/** A file with its digests computed. */
export interface DigestedFileRow extends FileRow {
  readonly md5: string
  readonly sha1: string
  readonly sha512: string
}

export interface PropertyInput {
  readonly name: string
  readonly value: string
}

/** Forgejo's PropertyType. */
export const PROPERTY_VERSION = 0
export const PROPERTY_FILE = 1
export const PROPERTY_PACKAGE = 2

export interface CleanupRuleRow {
  readonly id: number
  readonly ownerId: number
  readonly type: string
  readonly enabled: boolean
  readonly keepCount: number
  readonly keepPattern: string
  readonly removeDays: number
  readonly removePattern: string
  readonly matchFullName: boolean
}

type Row = Record<string, any>

const toPackage = (r: Row, prefix = ""): PackageRow => ({
  id: Number(r[`${prefix}id`]),
  ownerId: Number(r[`${prefix}owner_id`]),
  repoId: r[`${prefix}repo_id`] === null ? null : Number(r[`${prefix}repo_id`]),
  type: r[`${prefix}type`],
  name: r[`${prefix}name`],
  lowerName: r[`${prefix}lower_name`],
  semverCompatible: Boolean(r[`${prefix}semver_compatible`]),
  isInternal: Boolean(r[`${prefix}is_internal`])
})

const toVersion = (r: Row): VersionRow => ({
  id: Number(r.id),
  packageId: Number(r.package_id),
  creatorId: r.creator_id === null ? null : Number(r.creator_id),
  version: r.version,
  lowerVersion: r.lower_version,
  isInternal: Boolean(r.is_internal),
  metadataJson: r.metadata_json,
  downloadCount: Number(r.download_count),
  createdAt: r.created_at
})

const toFile = (r: Row): FileRow => ({
  id: Number(r.id),
  versionId: Number(r.version_id),
  sha256: r.sha256,
  size: Number(r.size),
  name: r.name,
  lowerName: r.lower_name,
  compositeKey: r.composite_key,
  isLead: Boolean(r.is_lead),
  createdAt: r.created_at,
  md5: r.md5,
  sha1: r.sha1,
  sha512: r.sha512
})

const toRule = (r: Row): CleanupRuleRow => ({
  id: Number(r.id),
  ownerId: Number(r.owner_id),
  type: r.type,
  enabled: Boolean(r.enabled),
  keepCount: Number(r.keep_count),
  keepPattern: r.keep_pattern,
  removeDays: Number(r.remove_days),
  removePattern: r.remove_pattern,
  matchFullName: Boolean(r.match_full_name)
})

/** The package columns of a join, prefixed `p_`. */
const PACKAGE_COLUMNS = `p.id AS p_id, p.owner_id AS p_owner_id, p.repo_id AS p_repo_id, p.type AS p_type,
  p.name AS p_name, p.lower_name AS p_lower_name, p.semver_compatible AS p_semver_compatible,
  p.is_internal AS p_is_internal`

const toJoined = (r: Row): PackageVersion => ({ pkg: toPackage(r, "p_"), version: toVersion(r) })

export interface ListFilter {
  /** Exact type; none (or "all") for every type. */
  readonly type?: string | undefined
  /** Substring of the lower-cased name. */
  readonly q?: string | undefined
}

/** A package file's row, as inserted. */
export interface NewPackageFile {
  readonly versionId: number
  readonly sha256: string
  readonly size: number
  readonly name: string
  readonly compositeKey: string
  readonly isLead: boolean
}

export class PackagesRepo extends Context.Service<
  PackagesRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    /** Finds or inserts the package, locked for the transaction; `created` when it is new. */
    readonly upsertPackage: (p: {
      readonly ownerId: number
      readonly type: string
      readonly name: string
      readonly semverCompatible: boolean
    }) => Effect.Effect<{ readonly pkg: PackageRow; readonly created: boolean }>
    readonly findPackage: (ownerId: number, type: string, lowerName: string) => Effect.Effect<Option.Option<PackageRow>>
    /** A non-internal version by lower-cased version. */
    readonly findVersion: (packageId: number, lowerVersion: string) => Effect.Effect<Option.Option<VersionRow>>
    /** None when the version exists already. */
    readonly insertVersion: (v: {
      readonly packageId: number
      readonly creatorId: number
      readonly version: string
      readonly metadataJson: string
      readonly isInternal: boolean
    }) => Effect.Effect<Option.Option<VersionRow>>
    /** None when a file of that name exists in the version. */
    readonly insertFile: (f: NewPackageFile) => Effect.Effect<Option.Option<{ readonly id: number }>>
    /** Several files in one statement; the sha256 of each inserted (a name the version has already: skipped). */
    readonly insertFiles: (files: ReadonlyArray<NewPackageFile>) => Effect.Effect<Array<string>>
    readonly insertProperties: (
      refType: number,
      refId: number,
      properties: ReadonlyArray<PropertyInput>
    ) => Effect.Effect<void>
    readonly properties: (refType: number, refIds: ReadonlyArray<number>) => Effect.Effect<Array<Row>>
    /** Non-internal versions of the owner and the size of their files (Forgejo's owner limits). */
    readonly ownerTotals: (ownerId: number) => Effect.Effect<{ readonly count: number; readonly size: number }>
    /** Whether the owner has any package with a non-internal version (Forgejo's HasOwnerPackages). */
    readonly ownerHasPackages: (ownerId: number) => Effect.Effect<boolean>
    readonly list: (
      ownerId: number,
      filter: ListFilter,
      page: Page
    ) => Effect.Effect<{ readonly rows: Array<PackageVersion>; readonly total: number }>
    /** A non-internal version by owner, type, lower-cased name and version. */
    readonly versionByName: (
      ownerId: number,
      type: string,
      lowerName: string,
      lowerVersion: string
    ) => Effect.Effect<Option.Option<PackageVersion>>
    /** Non-internal versions of a package, oldest first. */
    readonly versionsOf: (packageId: number) => Effect.Effect<Array<VersionRow>>
    readonly files: (versionId: number) => Effect.Effect<Array<FileRow>>
    /** The files of several versions at once, by version then id. */
    readonly filesOf: (versionIds: ReadonlyArray<number>) => Effect.Effect<Array<FileRow>>
    readonly fileByName: (
      versionId: number,
      lowerName: string,
      compositeKey?: string
    ) => Effect.Effect<Option.Option<FileRow>>
    /** Deletes a version (its files give their blobs back); whether it existed. */
    readonly deleteVersion: (versionId: number) => Effect.Effect<boolean>
    readonly deleteFile: (fileId: number) => Effect.Effect<boolean>
    /** Deletes packages that have no version left; how many. */
    readonly deleteEmptyPackages: Effect.Effect<number>
    readonly setRepo: (packageId: number, repoId: number | null) => Effect.Effect<void>
    readonly countDownload: (versionId: number) => Effect.Effect<void>
    /** The files of the owner's packages, as Forgejo's quota lists them (one row per file). */
    readonly usedFiles: (
      ownerId: number,
      page: Page
    ) => Effect.Effect<{
      readonly rows: Array<{ readonly pkg: PackageRow; readonly version: VersionRow; readonly size: number }>
      readonly total: number
    }>
    readonly rules: (ownerId?: number) => Effect.Effect<Array<CleanupRuleRow>>
    readonly ruleById: (id: number) => Effect.Effect<Option.Option<CleanupRuleRow>>
    /** None when the owner has a rule for that type already. */
    readonly insertRule: (rule: Omit<CleanupRuleRow, "id">) => Effect.Effect<Option.Option<CleanupRuleRow>>
    readonly updateRule: (rule: CleanupRuleRow) => Effect.Effect<Option.Option<CleanupRuleRow>>
    readonly deleteRule: (id: number) => Effect.Effect<boolean>
    /** Non-internal versions of the owner's packages of a type, by package, newest first. */
    readonly versionsForCleanup: (ownerId: number, type: string) => Effect.Effect<Array<PackageVersion>>
  }
>()("hearth/packages/PackagesRepo") {
  static readonly layer = Layer.effect(
    PackagesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const first = <A>(rows: ReadonlyArray<Row>, map: (r: Row) => A) =>
        rows.length === 0 ? Option.none<A>() : Option.some(map(rows[0]!))
      const joined = sql.literal(PACKAGE_COLUMNS)

      return PackagesRepo.of(
        sqlBoundary({
          transaction: transaction(sql),
          upsertPackage: (p) =>
            Effect.map(
              sql`INSERT INTO packages (owner_id, type, name, lower_name, semver_compatible)
              VALUES (${p.ownerId}, ${p.type}, ${p.name}, ${p.name.toLowerCase()}, ${p.semverCompatible})
              ON CONFLICT (owner_id, type, lower_name) DO UPDATE SET name = packages.name
              RETURNING *, (xmax = 0) AS created`,
              (rows) => ({ pkg: toPackage(rows[0]!), created: Boolean(rows[0]!.created) })
            ),
          findPackage: (ownerId, type, lowerName) =>
            Effect.map(
              sql`SELECT * FROM packages WHERE owner_id = ${ownerId} AND type = ${type} AND lower_name = ${lowerName}`,
              (rows) => first(rows, (r) => toPackage(r))
            ),
          findVersion: (packageId, lowerVersion) =>
            Effect.map(
              sql`SELECT * FROM package_versions
              WHERE package_id = ${packageId} AND lower_version = ${lowerVersion} AND NOT is_internal`,
              (rows) => first(rows, toVersion)
            ),
          insertVersion: (v) =>
            Effect.map(
              sql`INSERT INTO package_versions (package_id, creator_id, version, lower_version, metadata_json, is_internal)
              VALUES (${v.packageId}, ${v.creatorId}, ${v.version}, ${v.version.toLowerCase()}, ${v.metadataJson},
                ${v.isInternal})
              ON CONFLICT (package_id, lower_version) DO NOTHING RETURNING *`,
              (rows) => first(rows, toVersion)
            ),
          insertFile: (f) =>
            Effect.map(
              sql`INSERT INTO package_files (version_id, sha256, size, name, lower_name, composite_key, is_lead)
              VALUES (${f.versionId}, ${f.sha256}, ${f.size}, ${f.name}, ${f.name.toLowerCase()}, ${f.compositeKey},
                ${f.isLead})
              ON CONFLICT (version_id, lower_name, composite_key) DO NOTHING RETURNING id`,
              (rows) => first(rows, (r) => ({ id: Number(r.id) }))
            ),
          insertFiles: (files) => {
            const rows = files.map((f) => ({
              version_id: f.versionId,
              sha256: f.sha256,
              size: f.size,
              name: f.name,
              lower_name: f.name.toLowerCase(),
              composite_key: f.compositeKey,
              is_lead: f.isLead
            }))
            if (!Arr.isArrayNonEmpty(rows)) return Effect.succeed([])
            return Effect.map(
              sql`INSERT INTO package_files ${sql.insert(rows)}
              ON CONFLICT (version_id, lower_name, composite_key) DO NOTHING RETURNING sha256`,
              (inserted) => inserted.map((r) => String(r.sha256))
            )
          },
          insertProperties: (refType, refId, properties) =>
            Effect.forEach(
              properties,
              (p) =>
                sql`INSERT INTO package_properties (ref_type, ref_id, name, value)
                VALUES (${refType}, ${refId}, ${p.name}, ${p.value})`,
              { discard: true }
            ),
          properties: (refType, refIds) =>
            refIds.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`SELECT ref_id, name, value FROM package_properties
                  WHERE ref_type = ${refType} AND ref_id IN ${sql.in(refIds)} ORDER BY id`,
                  (rows) => [...rows]
                ),
          ownerTotals: (ownerId) =>
            Effect.map(
              sql`SELECT
                (SELECT count(*) FROM package_versions v JOIN packages p ON p.id = v.package_id
                  WHERE p.owner_id = ${ownerId} AND NOT v.is_internal) AS count,
                (SELECT coalesce(sum(f.size), 0) FROM package_files f
                  JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
                  WHERE p.owner_id = ${ownerId} AND NOT v.is_internal) AS size`,
              (rows) => ({ count: Number(rows[0]!.count), size: Number(rows[0]!.size) })
            ),
          ownerHasPackages: (ownerId) =>
            Effect.map(
              sql`SELECT 1 FROM package_versions v JOIN packages p ON p.id = v.package_id
              WHERE p.owner_id = ${ownerId} AND NOT v.is_internal LIMIT 1`,
              (rows) => rows.length > 0
            ),
          list: (ownerId, filter, page) =>
            Effect.gen(function* () {
              const conditions = [sql`p.owner_id = ${ownerId}`, sql`NOT v.is_internal`, sql`NOT p.is_internal`]
              if (filter.type !== undefined && filter.type !== "" && filter.type !== "all")
                conditions.push(sql`p.type = ${filter.type}`)
              // Forgejo's `LIKE %q%` on the lower-cased name; here the wildcards in q are literal.
              if (filter.q !== undefined && filter.q !== "")
                conditions.push(sql`strpos(p.lower_name, ${filter.q.toLowerCase()}) > 0`)
              const where = sql.and(conditions)
              const [count] = yield* sql`SELECT count(*) AS n FROM package_versions v
                JOIN packages p ON p.id = v.package_id WHERE ${where}`
              const rows = yield* sql`SELECT v.*, ${joined} FROM package_versions v
                JOIN packages p ON p.id = v.package_id WHERE ${where}
                ORDER BY v.created_at DESC, v.id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toJoined), total: Number(count!.n) }
            }),
          versionByName: (ownerId, type, lowerName, lowerVersion) =>
            Effect.map(
              sql`SELECT v.*, ${joined} FROM package_versions v JOIN packages p ON p.id = v.package_id
              WHERE p.owner_id = ${ownerId} AND p.type = ${type} AND p.lower_name = ${lowerName}
                AND v.lower_version = ${lowerVersion} AND NOT v.is_internal`,
              (rows) => first(rows, toJoined)
            ),
          versionsOf: (packageId) =>
            Effect.map(
              sql`SELECT * FROM package_versions WHERE package_id = ${packageId} AND NOT is_internal
              ORDER BY created_at, id`,
              (rows) => rows.map(toVersion)
            ),
          files: (versionId) =>
            Effect.map(
              sql`SELECT f.*, b.md5, b.sha1, b.sha512 FROM package_files f JOIN blobs b ON b.sha256 = f.sha256
              WHERE f.version_id = ${versionId} ORDER BY f.id`,
              (rows) => rows.map(toFile)
            ),
          filesOf: (versionIds) =>
            versionIds.length === 0
              ? Effect.succeed([])
              : Effect.map(
                  sql`SELECT f.*, b.md5, b.sha1, b.sha512 FROM package_files f JOIN blobs b ON b.sha256 = f.sha256
                  WHERE f.version_id IN ${sql.in(versionIds)} ORDER BY f.version_id, f.id`,
                  (rows) => rows.map(toFile)
                ),
          fileByName: (versionId, lowerName, compositeKey = "") =>
            Effect.map(
              sql`SELECT f.*, b.md5, b.sha1, b.sha512 FROM package_files f JOIN blobs b ON b.sha256 = f.sha256
              WHERE f.version_id = ${versionId} AND f.lower_name = ${lowerName}
                AND f.composite_key = ${compositeKey}`,
              (rows) => first(rows, toFile)
            ),
          deleteVersion: (versionId) =>
            Effect.map(
              sql`DELETE FROM package_versions WHERE id = ${versionId} RETURNING id`,
              (rows) => rows.length > 0
            ),
          deleteFile: (fileId) =>
            Effect.map(sql`DELETE FROM package_files WHERE id = ${fileId} RETURNING id`, (rows) => rows.length > 0),
          deleteEmptyPackages: Effect.map(
            sql`DELETE FROM packages p
            WHERE NOT EXISTS (SELECT 1 FROM package_versions v WHERE v.package_id = p.id) RETURNING id`,
            (rows) => rows.length
          ),
          setRepo: (packageId, repoId) =>
            Effect.asVoid(sql`UPDATE packages SET repo_id = ${repoId} WHERE id = ${packageId}`),
          countDownload: (versionId) =>
            Effect.asVoid(sql`UPDATE package_versions SET download_count = download_count + 1 WHERE id = ${versionId}`),
          usedFiles: (ownerId, page) =>
            Effect.gen(function* () {
              // Forgejo's quota: packages linked to a repository of the owner, or unlinked and owned by it.
              const where = sql`(p.owner_id = ${ownerId} AND p.repo_id IS NULL)
                OR p.repo_id IN (SELECT id FROM repositories WHERE owner_id = ${ownerId})`
              const [count] = yield* sql`SELECT count(*) AS n FROM package_files f
                JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id WHERE ${where}`
              const rows = yield* sql`SELECT v.*, ${joined}, f.size AS file_size FROM package_files f
                JOIN package_versions v ON v.id = f.version_id JOIN packages p ON p.id = v.package_id
                WHERE ${where} ORDER BY f.id LIMIT ${page.limit} OFFSET ${page.offset}`
              return {
                rows: rows.map((r) => ({ ...toJoined(r), size: Number(r.file_size) })),
                total: Number(count!.n)
              }
            }),
          rules: (ownerId) =>
            Effect.map(
              ownerId === undefined
                ? sql`SELECT * FROM package_cleanup_rules ORDER BY id`
                : sql`SELECT * FROM package_cleanup_rules WHERE owner_id = ${ownerId} ORDER BY id`,
              (rows) => rows.map(toRule)
            ),
          ruleById: (id) =>
            Effect.map(sql`SELECT * FROM package_cleanup_rules WHERE id = ${id}`, (rows) => first(rows, toRule)),
          insertRule: (r) =>
            Effect.map(
              sql`INSERT INTO package_cleanup_rules (owner_id, type, enabled, keep_count, keep_pattern, remove_days,
                remove_pattern, match_full_name)
              VALUES (${r.ownerId}, ${r.type}, ${r.enabled}, ${r.keepCount}, ${r.keepPattern}, ${r.removeDays},
                ${r.removePattern}, ${r.matchFullName})
              ON CONFLICT (owner_id, type) DO NOTHING RETURNING *`,
              (rows) => first(rows, toRule)
            ),
          updateRule: (r) =>
            Effect.map(
              sql`UPDATE package_cleanup_rules SET enabled = ${r.enabled}, keep_count = ${r.keepCount},
                keep_pattern = ${r.keepPattern}, remove_days = ${r.removeDays}, remove_pattern = ${r.removePattern},
                match_full_name = ${r.matchFullName}
              WHERE id = ${r.id} RETURNING *`,
              (rows) => first(rows, toRule)
            ),
          deleteRule: (id) =>
            Effect.map(sql`DELETE FROM package_cleanup_rules WHERE id = ${id} RETURNING id`, (rows) => rows.length > 0),
          versionsForCleanup: (ownerId, type) =>
            Effect.map(
              sql`SELECT v.*, ${joined} FROM package_versions v JOIN packages p ON p.id = v.package_id
              WHERE p.owner_id = ${ownerId} AND p.type = ${type} AND NOT v.is_internal
              ORDER BY p.id, v.created_at DESC, v.id DESC`,
              (rows) => rows.map(toJoined)
            )
        })
      )
    })
  )
}

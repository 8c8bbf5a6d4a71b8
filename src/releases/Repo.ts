// SQL for releases (tables in migration 0026_releases). Rules live in Service.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { uniqueViolation } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"

export interface ReleaseRow {
  readonly id: number
  readonly repoId: number
  readonly publisherId: number | null
  readonly tagName: string
  readonly target: string
  readonly title: string
  readonly note: string
  readonly sha1: string | null
  readonly isDraft: boolean
  readonly isPrerelease: boolean
  readonly hideArchiveLinks: boolean
  readonly createdAt: Date
}

export interface ReleaseFilter {
  /** Whether drafts may be listed at all (writers). */
  readonly withDrafts: boolean
  readonly draft?: boolean | undefined
  readonly prerelease?: boolean | undefined
  readonly q?: string | undefined
}

/** What a create or an edit writes (every member). */
export interface ReleaseFields {
  readonly tagName: string
  readonly target: string
  readonly title: string
  readonly note: string
  readonly sha1: string | null
  readonly isDraft: boolean
  readonly isPrerelease: boolean
  readonly hideArchiveLinks: boolean
  readonly publisherId: number | null
  /** Move the creation time to now (Forgejo resets it when a draft changes or the tag is made). */
  readonly touch: boolean
}

const toRow = (r: Record<string, any>): ReleaseRow => ({
  id: Number(r.id),
  repoId: Number(r.repo_id),
  publisherId: r.publisher_id === null ? null : Number(r.publisher_id),
  tagName: r.tag_name,
  target: r.target,
  title: r.title,
  note: r.note,
  sha1: r.sha1,
  isDraft: r.is_draft,
  isPrerelease: r.is_prerelease,
  hideArchiveLinks: r.hide_archive_links,
  createdAt: r.created_at
})

/** `%term%` for ILIKE, with LIKE's own characters taken literally. */
const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

export class ReleasesRepo extends Context.Service<
  ReleasesRepo,
  {
    /** Newest first (creation time, then id), as Forgejo lists them. */
    readonly list: (
      repoId: number,
      filter: ReleaseFilter,
      window: Page
    ) => Effect.Effect<{ readonly rows: Array<ReleaseRow>; readonly total: number }>
    readonly byId: (repoId: number, id: number) => Effect.Effect<Option.Option<ReleaseRow>>
    /** The release of a tag, compared case-insensitively (Forgejo's `lower_tag_name`). */
    readonly byTag: (repoId: number, tag: string) => Effect.Effect<Option.Option<ReleaseRow>>
    /** The newest release that is neither a draft nor a pre-release. */
    readonly latest: (repoId: number) => Effect.Effect<Option.Option<ReleaseRow>>
    /** Whether some release (a draft too) names this tag. */
    readonly tagInUse: (repoId: number, tag: string) => Effect.Effect<boolean>
    /** None when the repository has a release of that tag already. */
    readonly insert: (repoId: number, fields: ReleaseFields) => Effect.Effect<Option.Option<ReleaseRow>>
    /** None when the new tag is another release's. */
    readonly update: (repoId: number, id: number, fields: ReleaseFields) => Effect.Effect<Option.Option<ReleaseRow>>
    /** Removes the release and its assets (the trigger gives their blobs back); false when it was not there. */
    readonly remove: (repoId: number, id: number) => Effect.Effect<boolean>
  }
>()("hearth/releases/ReleasesRepo") {
  static readonly layer = Layer.effect(
    ReleasesRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Record<string, any>>) =>
        rows.length === 0 ? Option.none<ReleaseRow>() : Option.some(toRow(rows[0]!))
      /** Keeps `repositories.num_releases` (published releases) up to date. */
      const recount = (repoId: number) =>
        sql`UPDATE repositories SET num_releases =
          (SELECT count(*) FROM releases WHERE repo_id = ${repoId} AND NOT is_draft) WHERE id = ${repoId}`

      return ReleasesRepo.of({
        list: (repoId, filter, window) =>
          Effect.gen(function* () {
            const conditions = [sql`repo_id = ${repoId}`]
            if (!filter.withDrafts) conditions.push(sql`NOT is_draft`)
            if (filter.draft !== undefined) conditions.push(sql`is_draft = ${filter.draft}`)
            if (filter.prerelease !== undefined) conditions.push(sql`is_prerelease = ${filter.prerelease}`)
            if (filter.q !== undefined && filter.q !== "") {
              const pattern = likePattern(filter.q)
              conditions.push(sql`(tag_name ILIKE ${pattern} OR title ILIKE ${pattern} OR note ILIKE ${pattern})`)
            }
            const where = sql.and(conditions)
            const rows = yield* sql`SELECT * FROM releases WHERE ${where}
              ORDER BY created_at DESC, id DESC LIMIT ${window.limit} OFFSET ${window.offset}`
            const [count] = yield* sql`SELECT count(*) AS n FROM releases WHERE ${where}`
            return { rows: rows.map(toRow), total: Number(count!.n) }
          }).pipe(Effect.orDie),
        byId: (repoId, id) =>
          Effect.map(sql`SELECT * FROM releases WHERE repo_id = ${repoId} AND id = ${id}`, one).pipe(Effect.orDie),
        byTag: (repoId, tag) =>
          Effect.map(
            sql`SELECT * FROM releases WHERE repo_id = ${repoId} AND lower_tag_name = ${tag.toLowerCase()}`,
            one
          ).pipe(Effect.orDie),
        latest: (repoId) =>
          Effect.map(
            sql`SELECT * FROM releases WHERE repo_id = ${repoId} AND NOT is_draft AND NOT is_prerelease
              ORDER BY created_at DESC, id DESC LIMIT 1`,
            one
          ).pipe(Effect.orDie),
        tagInUse: (repoId, tag) =>
          Effect.map(
            sql`SELECT 1 FROM releases WHERE repo_id = ${repoId} AND lower_tag_name = ${tag.toLowerCase()}`,
            (rows) => rows.length > 0
          ).pipe(Effect.orDie),
        insert: (repoId, f) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`INSERT INTO releases (repo_id, publisher_id, tag_name, lower_tag_name, target,
                    title, note, sha1, is_draft, is_prerelease, hide_archive_links)
                  VALUES (${repoId}, ${f.publisherId}, ${f.tagName}, ${f.tagName.toLowerCase()}, ${f.target},
                    ${f.title}, ${f.note}, ${f.sha1}, ${f.isDraft}, ${f.isPrerelease}, ${f.hideArchiveLinks})
                  ON CONFLICT (repo_id, lower_tag_name) DO NOTHING RETURNING *`
                yield* recount(repoId)
                return one(rows)
              })
            )
            .pipe(Effect.orDie),
        update: (repoId, id, f) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`UPDATE releases SET publisher_id = ${f.publisherId}, tag_name = ${f.tagName},
                    lower_tag_name = ${f.tagName.toLowerCase()}, target = ${f.target}, title = ${f.title},
                    note = ${f.note}, sha1 = ${f.sha1}, is_draft = ${f.isDraft}, is_prerelease = ${f.isPrerelease},
                    hide_archive_links = ${f.hideArchiveLinks},
                    created_at = CASE WHEN ${f.touch} THEN now() ELSE created_at END
                  WHERE repo_id = ${repoId} AND id = ${id} RETURNING *`
                yield* recount(repoId)
                return one(rows)
              })
            )
            .pipe(
              uniqueViolation,
              Effect.catchTag("AlreadyExists", () => Effect.succeed(Option.none<ReleaseRow>())),
              Effect.orDie
            ),
        remove: (repoId, id) =>
          sql
            .withTransaction(
              Effect.gen(function* () {
                const rows = yield* sql`DELETE FROM releases WHERE repo_id = ${repoId} AND id = ${id} RETURNING id`
                yield* recount(repoId)
                return rows.length > 0
              })
            )
            .pipe(Effect.orDie)
      })
    })
  )
}

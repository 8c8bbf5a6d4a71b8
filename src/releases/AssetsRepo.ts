// SQL for release assets (table release_assets, migration 0026_releases). Rules live in
// Assets.ts; an uploaded asset's blob reference is taken by the inserting transaction
// (`BlobStorage.acquire`) and given back by the table's delete trigger. An external asset has a
// URL and no blob.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"

export interface AssetRow {
  readonly id: number
  readonly uuid: string
  readonly repoId: number
  readonly releaseId: number
  readonly uploaderId: number | null
  readonly name: string
  readonly size: number
  readonly contentType: string
  /** Null for an external asset. */
  readonly sha256: string | null
  /** Set for an external asset only. */
  readonly externalUrl: string | null
  readonly downloadCount: number
  readonly createdAt: Date
}

export interface NewAsset {
  readonly uuid: string
  readonly repoId: number
  readonly releaseId: number
  readonly uploaderId: number
  readonly name: string
  readonly size: number
  readonly contentType: string
  readonly sha256: string | null
  readonly externalUrl: string | null
}

type Row = Record<string, any>
const toAsset = (r: Row): AssetRow => ({
  id: Number(r.id),
  uuid: String(r.uuid),
  repoId: Number(r.repo_id),
  releaseId: Number(r.release_id),
  uploaderId: r.uploader_id === null ? null : Number(r.uploader_id),
  name: r.name,
  size: Number(r.size),
  contentType: r.content_type,
  sha256: r.sha256,
  externalUrl: r.external_url,
  downloadCount: Number(r.download_count),
  createdAt: r.created_at
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class AssetsRepo extends Context.Service<
  AssetsRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly insert: (row: NewAsset) => Effect.Effect<AssetRow>
    readonly byId: (releaseId: number, id: number) => Effect.Effect<Option.Option<AssetRow>>
    readonly byUuid: (uuid: string) => Effect.Effect<Option.Option<AssetRow>>
    /** The first asset of that name (by id), as Forgejo's `GetAttachmentByReleaseIDFileName`. */
    readonly byName: (releaseId: number, name: string) => Effect.Effect<Option.Option<AssetRow>>
    /** Assets of these releases by release, oldest first. */
    readonly ofReleases: (releaseIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, Array<AssetRow>>>
    readonly rename: (id: number, name: string) => Effect.Effect<Option.Option<AssetRow>>
    readonly setExternalUrl: (id: number, url: string) => Effect.Effect<Option.Option<AssetRow>>
    readonly remove: (id: number) => Effect.Effect<boolean>
    readonly countDownload: (id: number) => Effect.Effect<void>
  }
>()("hearth/releases/AssetsRepo") {
  static readonly layer = Layer.effect(
    AssetsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const one = (rows: ReadonlyArray<Row>) => (rows.length === 0 ? Option.none() : Option.some(toAsset(rows[0]!)))
      return AssetsRepo.of(
        sqlBoundary({
          transaction: transaction(sql),
          insert: (a) =>
            Effect.map(
              sql`INSERT INTO release_assets (uuid, repo_id, release_id, uploader_id, name, size, content_type,
                sha256, external_url)
              VALUES (${a.uuid}, ${a.repoId}, ${a.releaseId}, ${a.uploaderId}, ${a.name}, ${a.size},
                ${a.contentType}, ${a.sha256}, ${a.externalUrl})
              RETURNING *`,
              (rows) => toAsset(rows[0]!)
            ),
          byId: (releaseId, id) =>
            Effect.map(sql`SELECT * FROM release_assets WHERE release_id = ${releaseId} AND id = ${id}`, one),
          byUuid: (uuid) =>
            UUID.test(uuid)
              ? Effect.map(sql`SELECT * FROM release_assets WHERE uuid = ${uuid.toLowerCase()}`, one)
              : Effect.succeed(Option.none()),
          byName: (releaseId, name) =>
            Effect.map(
              sql`SELECT * FROM release_assets WHERE release_id = ${releaseId} AND name = ${name} ORDER BY id LIMIT 1`,
              one
            ),
          ofReleases: (releaseIds) =>
            releaseIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT * FROM release_assets WHERE release_id IN ${sql.in(releaseIds)} ORDER BY id`,
                  (rows) => {
                    const map = new Map<number, Array<AssetRow>>()
                    for (const r of rows) {
                      const asset = toAsset(r)
                      const list = map.get(asset.releaseId)
                      if (list === undefined) map.set(asset.releaseId, [asset])
                      else list.push(asset)
                    }
                    return map
                  }
                ),
          rename: (id, name) =>
            Effect.map(sql`UPDATE release_assets SET name = ${name} WHERE id = ${id} RETURNING *`, one),
          setExternalUrl: (id, url) =>
            Effect.map(
              sql`UPDATE release_assets SET external_url = ${url} WHERE id = ${id} AND external_url IS NOT NULL RETURNING *`,
              one
            ),
          remove: (id) =>
            Effect.map(sql`DELETE FROM release_assets WHERE id = ${id} RETURNING id`, (rows) => rows.length > 0),
          countDownload: (id) =>
            Effect.asVoid(sql`UPDATE release_assets SET download_count = download_count + 1 WHERE id = ${id}`)
        })
      )
    })
  )
}

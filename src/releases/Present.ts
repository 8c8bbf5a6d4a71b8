// The Release object (Forgejo's services/convert/release.go `ToAPIRelease`), for the API and for
// the `release` webhook payload.
import { Effect } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime } from "../http/Json.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser } from "../users/Schema.ts"
import type { Release } from "./Api.ts"
import { toApiAsset } from "./Assets.ts"
import { AssetsRepo } from "./AssetsRepo.ts"
import type { ReleaseRow } from "./Repo.ts"

/** What the object is made of: a row, or an event's snapshot of one. */
export type Presentable = Pick<
  ReleaseRow,
  "id" | "tagName" | "target" | "title" | "note" | "isDraft" | "isPrerelease" | "hideArchiveLinks" | "publisherId"
> & { readonly createdAt: Date }

/** A path, each segment escaped (Forgejo's `util.PathEscapeSegments`). */
const escapeSegments = (path: string) => path.split("/").map(encodeURIComponent).join("/")

export const makeReleasePresenter = (settings: SettingsShape) =>
  Effect.gen(function* () {
    const users = yield* UsersRepo
    const assets = yield* AssetsRepo
    const root = settings.server.ROOT_URL
    return (
      where: { readonly ownerName: string; readonly repoName: string },
      rows: ReadonlyArray<Presentable>,
      viewer: Principal | undefined,
      options: { readonly githubFormat?: boolean } = {}
    ) =>
      Effect.gen(function* () {
        const ids = rows.flatMap((r) => (r.publisherId === null ? [] : [r.publisherId]))
        const people = yield* users.findByIds(ids)
        const assetsOf = yield* assets.ofReleases(rows.map((r) => r.id))
        const repoApi = `${root}api/v1/repos/${where.ownerName}/${where.repoName}`
        const repoHtml = `${root}${where.ownerName}/${where.repoName}`
        return rows.map((row): Release => {
          const url = `${repoApi}/releases/${row.id}`
          return {
            id: row.id,
            tag_name: row.tagName,
            target_commitish: row.target,
            name: row.title,
            body: row.note,
            url,
            html_url: `${repoHtml}/releases/tag/${escapeSegments(row.tagName)}`,
            // Always present, even with hide_archive_links (which only hides them in the web UI).
            tarball_url: `${repoHtml}/archive/${row.tagName}.tar.gz`,
            zipball_url: `${repoHtml}/archive/${row.tagName}.zip`,
            hide_archive_links: row.hideArchiveLinks,
            upload_url: options.githubFormat === true ? `${url}/assets{?name,label}` : `${url}/assets`,
            draft: row.isDraft,
            prerelease: row.isPrerelease,
            // Both are the stored creation time, as Forgejo.
            created_at: formatTime(row.createdAt),
            published_at: formatTime(row.createdAt),
            author: toApiUser(
              settings,
              (row.publisherId === null ? undefined : people.get(row.publisherId)) ?? ghostUser,
              viewer
            ),
            assets: (assetsOf.get(row.id) ?? []).map((asset) => toApiAsset(settings, asset)),
            archive_download_count: { zip: 0, tar_gz: 0 }
          }
        })
      })
  })

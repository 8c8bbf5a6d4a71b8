// Handlers of the release routes (Api.ts) and the Release object (Forgejo's
// services/convert/release.go `ToAPIRelease`).
import { Effect } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import { formatTime, respond } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { Attachment } from "../issues/AttachmentsSchema.ts"
import { QuotaService } from "../quota/Service.ts"
import { CurrentRepo, type OpenedRepository } from "../repos/Assignment.ts"
import { UsersRepo } from "../users/Repo.ts"
import { ghostUser, toApiUser } from "../users/Schema.ts"
import { Release } from "./Api.ts"
import { ReleaseAssets } from "./Assets.ts"
import type { ReleaseRow } from "./Repo.ts"
import { ReleasesService } from "./Service.ts"

/** Go's `strconv.ParseBool` as Forgejo's `FormOptionalBool` uses it: anything else is "not given". */
const formOptionalBool = (value: string | undefined): boolean | undefined => {
  if (value === undefined) return undefined
  if (["1", "t", "T", "TRUE", "true", "True"].includes(value)) return true
  if (["0", "f", "F", "FALSE", "false", "False"].includes(value)) return false
  return undefined
}

/** A path, each segment escaped (Forgejo's `util.PathEscapeSegments`). */
const escapeSegments = (path: string) => path.split("/").map(encodeURIComponent).join("/")

export const ReleasesHttp = HttpApiBuilder.group(HearthApi, "releases", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const service = yield* ReleasesService
    const users = yield* UsersRepo
    const quota = yield* QuotaService
    const assets = yield* ReleaseAssets
    const root = settings.server.ROOT_URL

    /** Forgejo's `ToAPIRelease`, for the viewer of `opened`. */
    const present = (opened: OpenedRepository, rows: ReadonlyArray<ReleaseRow>) =>
      Effect.gen(function* () {
        const request = yield* HttpServerRequest.HttpServerRequest
        const github = (request.headers["accept"] ?? "").includes("application/vnd.github+json")
        const ids = rows.flatMap((r) => (r.publisherId === null ? [] : [r.publisherId]))
        const people = yield* users.findByIds(ids)
        const assetsOf = yield* assets.ofReleases(rows.map((r) => r.id))
        const repoApi = `${root}api/v1/repos/${opened.owner.name}/${opened.repo.name}`
        const repoHtml = `${root}${opened.owner.name}/${opened.repo.name}`
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
            upload_url: github ? `${url}/assets{?name,label}` : `${url}/assets`,
            draft: row.isDraft,
            prerelease: row.isPrerelease,
            // Both are the stored creation time, as Forgejo.
            created_at: formatTime(row.createdAt),
            published_at: formatTime(row.createdAt),
            author: toApiUser(
              settings,
              (row.publisherId === null ? undefined : people.get(row.publisherId)) ?? ghostUser,
              opened.caller
            ),
            assets: assetsOf.get(row.id) ?? [],
            archive_download_count: { zip: 0, tar_gz: 0 }
          }
        })
      })
    const presentOne = (opened: OpenedRepository, row: ReleaseRow) =>
      Effect.map(present(opened, [row]), (converted) => converted[0]!)

    /** Create and edit may add a tag: charged to the owner's quota first (Forgejo: `size:repos:all`). */
    const openForGrowth = Effect.gen(function* () {
      const caller = yield* signedInCaller
      const opened = yield* CurrentRepo
      yield* quota.enforce(opened.owner, "size:repos:all")
      return { caller, opened }
    })

    return handlers
      .handle("listReleases", ({ query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const page = yield* resolvePage(query)
          const listed = yield* service.list(
            opened,
            {
              draft: formOptionalBool(query.draft),
              prerelease: formOptionalBool(query["pre-release"]),
              q: query.q
            },
            page
          )
          yield* setListHeaders(page, listed.total, { withLink: true })
          return yield* present(opened, listed.rows)
        })
      )
      .handle("createRelease", ({ payload }) =>
        Effect.gen(function* () {
          const { caller, opened } = yield* openForGrowth
          const saved = yield* service.create(opened, caller, payload)
          return respond(Release, yield* presentOne(opened, saved.release), 201)
        })
      )
      .handle("getLatestRelease", () =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return yield* presentOne(opened, yield* service.latest(opened))
        })
      )
      .handle("getReleaseByTag", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return yield* presentOne(opened, yield* service.byTag(opened, params.tag))
        })
      )
      .handle("deleteReleaseByTag", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* service.remove(opened, yield* service.byTag(opened, params.tag))
        })
      )
      .handle("getRelease", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return yield* presentOne(opened, yield* service.get(opened, params.id))
        })
      )
      .handle("editRelease", ({ params, payload }) =>
        Effect.gen(function* () {
          const { caller, opened } = yield* openForGrowth
          const saved = yield* service.edit(opened, caller, params.id, payload)
          return yield* presentOne(opened, saved.release)
        })
      )
      .handle("deleteRelease", ({ params }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          yield* service.remove(opened, yield* service.get(opened, params.id))
        })
      )
      .handle("listReleaseAssets", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.list(opened, params.id))
      )
      .handle("createReleaseAsset", ({ params, query }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const opened = yield* CurrentRepo
          const request = yield* HttpServerRequest.HttpServerRequest
          return respond(Attachment, yield* assets.create(opened, caller, params.id, request, query), 201)
        })
      )
      .handle("getReleaseAsset", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.get(opened, params.id, params.attachment_id))
      )
      .handle("editReleaseAsset", ({ params, payload }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Attachment, yield* assets.edit(opened, params.id, params.attachment_id, payload), 201)
        })
      )
      .handle("deleteReleaseAsset", ({ params }) =>
        Effect.flatMap(CurrentRepo, (opened) => assets.remove(opened, params.id, params.attachment_id))
      )
  })
)

// Release assets (Forgejo's routers/api/v1/repo/release_attachment.go, services/attachment;
// CONTRACT-WEBHOOKS §3.7): a file uploaded as `multipart/form-data` (the part `attachment`) or as
// the raw request body, or a link to an external URL. Uploaded bytes go to the blob storage as
// they arrive (the same store, reader and serving as issue attachments); the repository owner's
// quota subject is `size:assets:attachments:releases`. Downloads: `/attachments/{uuid}` and
// `/{owner}/{repo}/releases/download/{tag}/{name}`, for whoever may read the release (drafts:
// its writers); an external asset redirects to its URL.
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Settings, type SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import { type Attachment, downloadUrl } from "../issues/AttachmentsSchema.ts"
import { QuotaService } from "../quota/Service.ts"
import { type OpenedRepository, RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { detectContentType, SNIFF_BYTES, typeAllowed } from "../storage/ContentType.ts"
import { contentLength, putRequest } from "../storage/Http.ts"
import { readMultipartUpload } from "../storage/Multipart.ts"
import { BlobStorage, type StoredBlob } from "../storage/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { type AssetRow, AssetsRepo } from "./AssetsRepo.ts"
import { type ReleaseRow, ReleasesRepo } from "./Repo.ts"
import { canWriteReleases } from "./Service.ts"

/** Forgejo's `upload.ErrFileTypeForbidden` (a 400 on this route). */
const TYPE_REFUSED = "This file extension or type is not allowed to be uploaded."
const MB = 1024 * 1024

/** Forgejo's `ToAPIAttachment` for a release asset. */
export const toApiAsset = (settings: SettingsShape, row: AssetRow): Attachment => ({
  id: row.id,
  name: row.name,
  size: row.size,
  download_count: row.downloadCount,
  created_at: formatTime(row.createdAt),
  uuid: row.uuid,
  browser_download_url: row.externalUrl ?? downloadUrl(settings, row.uuid),
  type: row.externalUrl === null ? "attachment" : "external"
})

/** An absolute http(s) URL with a valid port (Forgejo's `validation.IsValidURL` on external assets). */
const validExternalUrl = (raw: string): URL | undefined => {
  try {
    const url = new URL(raw)
    if (url.protocol !== "http:" && url.protocol !== "https:") return undefined
    if (url.hostname === "") return undefined
    return url
  } catch {
    return undefined
  }
}
const invalidUrl = (raw: string) => Errors.badRequest(`invalid external URL: '${raw}'`)

/** What a download serves: a stored file, or a redirect to an external one. */
export type Download =
  | { readonly kind: "stored"; readonly asset: AssetRow & { readonly sha256: string } }
  | { readonly kind: "external"; readonly url: string }

export class ReleaseAssets extends Context.Service<
  ReleaseAssets,
  {
    readonly list: (opened: OpenedRepository, releaseId: string) => Effect.Effect<Array<Attachment>, Errors.NotFound>
    readonly get: (
      opened: OpenedRepository,
      releaseId: string,
      assetId: string
    ) => Effect.Effect<Attachment, Errors.NotFound>
    readonly create: (
      opened: OpenedRepository,
      caller: Principal,
      releaseId: string,
      request: HttpServerRequest.HttpServerRequest,
      query: { readonly name?: string | undefined; readonly external_url?: string | undefined },
      /**
       * A multipart form's fields checked before anything is stored or saved (once before the
       * file, with the fields sent before it, and once after the whole form): the web form's CSRF token.
       */
      checkFields?: (fields: ReadonlyMap<string, string>) => Effect.Effect<void, Errors.ApiError>
    ) => Effect.Effect<Attachment, Errors.ApiError>
    readonly edit: (
      opened: OpenedRepository,
      releaseId: string,
      assetId: string,
      options: { readonly name?: string | null | undefined; readonly browser_download_url?: string | null | undefined }
    ) => Effect.Effect<Attachment, Errors.ApiError>
    readonly remove: (
      opened: OpenedRepository,
      releaseId: string,
      assetId: string
    ) => Effect.Effect<void, Errors.NotFound>
    /** `/attachments/{uuid}` for a release asset; counted as a download. */
    readonly downloadByUuid: (viewer: Principal | undefined, uuid: string) => Effect.Effect<Download, Errors.NotFound>
    /** `/{owner}/{repo}/releases/download/{tag}/{name}`; counted as a download. */
    readonly downloadByName: (
      viewer: Principal | undefined,
      owner: string,
      repo: string,
      tag: string,
      name: string
    ) => Effect.Effect<Download, Errors.NotFound>
  }
>()("hearth/releases/ReleaseAssets") {
  static readonly layer = Layer.effect(
    ReleaseAssets,
    Effect.gen(function* () {
      const settings = yield* Settings
      const assets = yield* AssetsRepo
      const releases = yield* ReleasesRepo
      const storage = yield* BlobStorage
      const quota = yield* QuotaService
      const repos = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const config = settings["repository.release"]
      const json = (row: AssetRow) => toApiAsset(settings, row)
      const parseId = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : undefined)

      /** The release of the path in this repository (drafts too, as Forgejo: writers only reach changes). */
      const findRelease = (opened: OpenedRepository, raw: string) =>
        Effect.gen(function* () {
          const id = parseId(raw)
          const found = id === undefined ? Option.none<ReleaseRow>() : yield* releases.byId(opened.repo.id, id)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })
      /** A release a reader may list the assets of: a draft only for writers (Forgejo's ListReleaseAttachments). */
      const visibleRelease = (opened: OpenedRepository, raw: string) =>
        Effect.flatMap(findRelease(opened, raw), (release) =>
          release.isDraft && !canWriteReleases(opened) ? Effect.fail(Errors.notFound()) : Effect.succeed(release)
        )
      const findAsset = (release: ReleaseRow, raw: string) =>
        Effect.gen(function* () {
          const id = parseId(raw)
          const found = id === undefined ? Option.none<AssetRow>() : yield* assets.byId(release.id, id)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })

      /** The first bytes of a stored blob, for the type check of a raw upload. */
      const headOf = (blob: StoredBlob) =>
        Effect.gen(function* () {
          if (blob.size === 0) return new Uint8Array()
          const opened = yield* Effect.orDie(
            storage.open(blob.sha256, { start: 0, end: Math.min(SNIFF_BYTES, blob.size) - 1 })
          )
          const chunks: Array<Uint8Array> = []
          yield* Effect.promise(async () => {
            for await (const chunk of opened.readable()) chunks.push(chunk as Uint8Array)
          })
          return Buffer.concat(chunks)
        })

      /** Whether the viewer may see the release's assets: the releases unit, and drafts for writers. */
      const mayRead = (viewer: Principal | undefined, release: ReleaseRow) =>
        Effect.gen(function* () {
          if (viewer === undefined && settings.service.REQUIRE_SIGNIN_VIEW) return false
          const repo = yield* repos.findById(release.repoId)
          if (Option.isNone(repo)) return false
          const owner = yield* users.findById(repo.value.ownerId)
          if (Option.isNone(owner)) return false
          const access = yield* policy.access(viewer, repo.value, owner.value)
          const opened = { owner: owner.value, repo: repo.value, access }
          if (repoRefusal(viewer, opened, { role: "read", unit: "releases" }) !== undefined) return false
          return !release.isDraft || repoRefusal(viewer, opened, { role: "write", unit: "releases" }) === undefined
        })

      const served = (asset: AssetRow) =>
        Effect.as(
          assets.countDownload(asset.id),
          asset.externalUrl !== null
            ? ({ kind: "external", url: asset.externalUrl } as const)
            : ({ kind: "stored", asset: { ...asset, sha256: asset.sha256! } } as const)
        )

      return ReleaseAssets.of({
        list: (opened, releaseId) =>
          Effect.gen(function* () {
            const release = yield* visibleRelease(opened, releaseId)
            return ((yield* assets.ofReleases([release.id])).get(release.id) ?? []).map(json)
          }),
        // Forgejo does not check a draft here (quirk); Hearth keeps drafts to their writers.
        get: (opened, releaseId, assetId) =>
          Effect.map(
            Effect.flatMap(visibleRelease(opened, releaseId), (release) => findAsset(release, assetId)),
            json
          ),
        create: (opened, caller, releaseId, request, query, checkFields) =>
          Effect.gen(function* () {
            const release = yield* findRelease(opened, releaseId)
            yield* quota.enforce(opened.owner, "size:assets:attachments:releases")
            const maxSize = config.FILE_MAX_SIZE * MB
            const type = request.headers["content-type"] ?? ""
            const multipart = /^multipart\/form-data/i.test(type)
            let externalUrl =
              query.external_url !== undefined && query.external_url !== "" ? query.external_url : undefined
            let file: { readonly filename: string; readonly head: Uint8Array; readonly blob: StoredBlob } | undefined
            let formName: string | undefined
            if (multipart) {
              const upload = yield* Effect.provideService(
                readMultipartUpload(request, {
                  fileField: "attachment",
                  maxSize,
                  accept: (incoming) =>
                    Effect.gen(function* () {
                      // Refused before the file is stored.
                      if (checkFields !== undefined) yield* checkFields(incoming.fields)
                      const formUrl = incoming.fields.get("external_url")
                      if (externalUrl !== undefined || (formUrl !== undefined && formUrl !== ""))
                        return yield* Errors.badRequest("'attachment' and 'external_url' are mutually exclusive")
                      const name = query.name || incoming.fields.get("name") || incoming.filename
                      if (!typeAllowed(config.ALLOWED_TYPES, name, detectContentType(incoming.head)))
                        return yield* Errors.badRequest(TYPE_REFUSED)
                    })
                }),
                BlobStorage,
                storage
              )
              if (checkFields !== undefined) yield* checkFields(upload.fields)
              file = upload.file
              formName = upload.fields.get("name")
              const formUrl = upload.fields.get("external_url")
              if (formUrl !== undefined && formUrl !== "") {
                if (file !== undefined)
                  return yield* Errors.badRequest("'attachment' and 'external_url' are mutually exclusive")
                externalUrl = formUrl
              }
            } else {
              // The raw body is the file; an absent or empty body is none (CONTRACT-WEBHOOKS §3.7).
              const length = contentLength(request)
              const hasBody = length === undefined ? request.headers["transfer-encoding"] !== undefined : length > 0
              if (hasBody) {
                if (externalUrl !== undefined)
                  return yield* Errors.badRequest("'attachment' and 'external_url' are mutually exclusive")
                const blob = yield* Effect.provideService(putRequest(request, { maxSize }), BlobStorage, storage)
                if (blob.size > 0) file = { filename: "", head: yield* headOf(blob), blob }
              }
            }
            if (file !== undefined) {
              const name = [query.name, formName, file.filename].find((n): n is string => n !== undefined && n !== "")
              if (name === undefined) return yield* Errors.badRequest("Missing 'name' parameter")
              const detected = detectContentType(file.head)
              // A raw body is checked once stored (its first bytes were not seen before).
              if (!multipart && !typeAllowed(config.ALLOWED_TYPES, name, detected))
                return yield* Errors.badRequest(TYPE_REFUSED)
              const stored = file.blob
              const row = yield* assets.transaction(
                Effect.gen(function* () {
                  const row = yield* assets.insert({
                    uuid: randomUUID(),
                    repoId: opened.repo.id,
                    releaseId: release.id,
                    uploaderId: caller.user.id,
                    name,
                    size: stored.size,
                    contentType: detected,
                    sha256: stored.sha256,
                    externalUrl: null
                  })
                  yield* Effect.orDie(storage.acquire(stored))
                  return row
                })
              )
              return json(row)
            }
            if (externalUrl === undefined)
              return yield* Errors.badRequest("One of 'attachment' or 'external_url' is required")
            const url = validExternalUrl(externalUrl)
            if (url === undefined) return yield* invalidUrl(externalUrl)
            const lastSegment = decodeURIComponent(
              url.pathname
                .split("/")
                .filter((s) => s !== "")
                .pop() ?? ""
            )
            const name = [query.name, formName, lastSegment, url.host].find(
              (n): n is string => n !== undefined && n !== ""
            )!
            const row = yield* assets.insert({
              uuid: randomUUID(),
              repoId: opened.repo.id,
              releaseId: release.id,
              uploaderId: caller.user.id,
              name,
              size: 0,
              contentType: "",
              sha256: null,
              externalUrl
            })
            return json(row)
          }),
        edit: (opened, releaseId, assetId, options) =>
          Effect.gen(function* () {
            const release = yield* findRelease(opened, releaseId)
            let asset = yield* findAsset(release, assetId)
            const newUrl = options.browser_download_url
            if (newUrl !== undefined && newUrl !== null && newUrl !== "") {
              if (asset.externalUrl === null) return yield* Errors.badRequest("existing attachment is not external")
              if (validExternalUrl(newUrl) === undefined) return yield* invalidUrl(newUrl)
              // Forgejo answers with the new URL but never saves it (quirk); Hearth saves it.
              asset = Option.getOrElse(yield* assets.setExternalUrl(asset.id, newUrl), () => asset)
            }
            if (options.name !== undefined && options.name !== null && options.name !== "") {
              asset = Option.getOrElse(yield* assets.rename(asset.id, options.name), () => asset)
            }
            return json(asset)
          }),
        remove: (opened, releaseId, assetId) =>
          Effect.gen(function* () {
            const release = yield* findRelease(opened, releaseId)
            const asset = yield* findAsset(release, assetId)
            if (!(yield* assets.remove(asset.id))) return yield* Errors.notFound()
          }),
        downloadByUuid: (viewer, uuid) =>
          Effect.gen(function* () {
            const found = yield* assets.byUuid(uuid)
            if (Option.isNone(found)) return yield* Errors.notFound()
            const release = yield* releases.byId(found.value.repoId, found.value.releaseId)
            if (Option.isNone(release) || !(yield* mayRead(viewer, release.value))) return yield* Errors.notFound()
            return yield* served(found.value)
          }),
        downloadByName: (viewer, ownerName, repoName, tag, name) =>
          Effect.gen(function* () {
            const owner = yield* users.findByName(ownerName)
            if (Option.isNone(owner)) return yield* Errors.notFound()
            const repo = yield* repos.findByName(owner.value.id, repoName)
            if (Option.isNone(repo)) return yield* Errors.notFound()
            const release = yield* releases.byTag(repo.value.id, tag)
            if (Option.isNone(release) || !(yield* mayRead(viewer, release.value))) return yield* Errors.notFound()
            const asset = yield* assets.byName(release.value.id, name)
            if (Option.isNone(asset)) return yield* Errors.notFound()
            return yield* served(asset.value)
          })
      })
    })
  )
}

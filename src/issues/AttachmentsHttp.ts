// Handlers of the attachment routes (AttachmentsApi.ts), and the download route
// `GET /attachments/{uuid}` (Forgejo's web route `repo.GetAttachment`): served to whoever may read
// the attachment's issue (or release, for a release asset) — signed in on the web, or with a token
// or Basic credentials as Forgejo accepts on that path (src/auth/Viewer.ts) — else 404. Streamed
// from the blob storage (src/storage/Serve.ts).
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { makeViewerOf } from "../auth/Viewer.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { ReleaseAssets } from "../releases/Assets.ts"
import { serveDownload } from "../releases/Download.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { serveStored } from "../storage/Serve.ts"
import { BlobStorage } from "../storage/Service.ts"
import { type AttachmentTarget, IssueAttachments } from "./Attachments.ts"
import { Attachment } from "./AttachmentsSchema.ts"

export const IssueAttachmentsHttp = apiGroup(HearthApi, "issueAttachments", (handlers) =>
  Effect.gen(function* () {
    const attachments = yield* IssueAttachments
    const list = (target: AttachmentTarget) => Effect.flatMap(CurrentRepo, (opened) => attachments.list(opened, target))
    const get = (target: AttachmentTarget, id: string) =>
      Effect.flatMap(CurrentRepo, (opened) => attachments.get(opened, target, id))
    const create = (target: AttachmentTarget, query: { name?: string | undefined; updated_at?: string | undefined }) =>
      Effect.gen(function* () {
        const opened = yield* CurrentRepo
        const request = yield* HttpServerRequest.HttpServerRequest
        return respond(Attachment, yield* attachments.create(opened, target, request, query), 201)
      })
    const rename = (target: AttachmentTarget, id: string, name: string | null | undefined) =>
      Effect.gen(function* () {
        const opened = yield* CurrentRepo
        return respond(Attachment, yield* attachments.rename(opened, target, id, name), 201)
      })
    const remove = (target: AttachmentTarget, id: string) =>
      Effect.flatMap(CurrentRepo, (opened) => attachments.remove(opened, target, id))
    return handlers
      .handle("listIssueAttachments", ({ params }) => list({ index: params.index }))
      .handle("createIssueAttachment", ({ params, query }) => create({ index: params.index }, query))
      .handle("getIssueAttachment", ({ params }) => get({ index: params.index }, params.attachment_id))
      .handle("editIssueAttachment", ({ params, payload }) =>
        rename({ index: params.index }, params.attachment_id, payload.name)
      )
      .handle("deleteIssueAttachment", ({ params }) => remove({ index: params.index }, params.attachment_id))
      .handle("listCommentAttachments", ({ params }) => list({ commentId: params.id }))
      .handle("createCommentAttachment", ({ params, query }) => create({ commentId: params.id }, query))
      .handle("getCommentAttachment", ({ params }) => get({ commentId: params.id }, params.attachment_id))
      .handle("editCommentAttachment", ({ params, payload }) =>
        rename({ commentId: params.id }, params.attachment_id, payload.name)
      )
      .handle("deleteCommentAttachment", ({ params }) => remove({ commentId: params.id }, params.attachment_id))
  })
)

/** `GET /attachments/{uuid}`: an issue attachment, else a release asset (src/releases/Assets.ts). */
export const AttachmentDownloadRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const attachments = yield* IssueAttachments
    const releaseAssets = yield* ReleaseAssets
    const storage = yield* BlobStorage
    const viewerOf = yield* makeViewerOf
    const notFound = HttpServerResponse.empty({ status: 404 })

    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const viewer = yield* viewerOf(request)
      const uuid = params.uuid ?? ""
      const found = yield* Effect.option(attachments.download(viewer, uuid))
      if (Option.isSome(found)) return yield* serveStored(request, found.value)
      const asset = yield* Effect.option(releaseAssets.downloadByUuid(viewer, uuid))
      if (Option.isNone(asset)) return notFound
      return yield* serveDownload(request, asset.value)
    }).pipe(Effect.provideService(BlobStorage, storage))
    return HttpRouter.add("GET", "/attachments/:uuid", handler)
  })
)

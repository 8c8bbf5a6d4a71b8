// Handlers of the attachment routes (AttachmentsApi.ts), and the download route
// `GET /attachments/{uuid}` (Forgejo's web route `repo.GetAttachment`): served to whoever may read
// the attachment's issue — signed in on the web, or with a token or Basic credentials as Forgejo
// accepts on that path — else 404. Streamed from the blob storage, a byte range when asked for,
// with a type and disposition that never let an upload act as a page of the forge
// (src/storage/ContentType.ts).
import { Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { parseAuthorization } from "../auth/Authentication.ts"
import { Authenticator } from "../auth/Authenticator.ts"
import type { Principal } from "../http/Caller.ts"
import { respond } from "../http/Json.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { Sessions } from "../sessions/Service.ts"
import { contentDisposition, SERVED_CSP, servedAs } from "../storage/ContentType.ts"
import { parseRange } from "../storage/Http.ts"
import { BlobStorage } from "../storage/Service.ts"
import { SESSION_COOKIE } from "../web/Web.ts"
import { type AttachmentTarget, IssueAttachments } from "./Attachments.ts"
import { Attachment } from "./AttachmentsSchema.ts"

export const IssueAttachmentsHttp = HttpApiBuilder.group(HearthApi, "issueAttachments", (handlers) =>
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

/** `GET /attachments/{uuid}`. */
export const AttachmentDownloadRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const attachments = yield* IssueAttachments
    const storage = yield* BlobStorage
    const authenticator = yield* Authenticator
    const sessions = yield* Sessions
    const notFound = HttpServerResponse.empty({ status: 404 })

    /** The viewer: Authorization (a token, or Basic), else the web session; bad credentials see as anonymous. */
    const viewerOf = (request: HttpServerRequest.HttpServerRequest) =>
      Effect.gen(function* () {
        const credentials = parseAuthorization(request.headers["authorization"])
        if (credentials.kind === "token") {
          return Option.getOrUndefined(yield* Effect.option(authenticator.byToken(credentials.token)))
        }
        if (credentials.kind === "basic") {
          return Option.getOrUndefined(
            yield* Effect.option(
              authenticator.byBasic(
                credentials.username,
                credentials.password,
                request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
              )
            )
          )
        }
        const cookie = request.cookies[SESSION_COOKIE]
        if (cookie === undefined) return undefined
        const session = Option.getOrUndefined(yield* sessions.resolve(cookie))
        return session?.stage === "signed-in"
          ? ({ user: session.user, scopes: undefined, method: "password" } satisfies Principal)
          : undefined
      })

    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const viewer = yield* viewerOf(request)
      const found = yield* Effect.option(attachments.download(viewer, params.uuid ?? ""))
      if (Option.isNone(found)) return notFound
      const attachment = found.value
      const { contentType, inline } = servedAs(attachment.contentType)
      const headers = {
        "content-disposition": contentDisposition(attachment.name, inline),
        "content-security-policy": SERVED_CSP,
        "x-content-type-options": "nosniff",
        "accept-ranges": "bytes",
        // An attachment's bytes never change (a new upload is a new attachment).
        "cache-control": "private, max-age=300",
        etag: `"${attachment.sha256}"`
      }
      const range = parseRange(request.headers["range"], attachment.size)
      if (range === "unsatisfiable") {
        return HttpServerResponse.empty({
          status: 416,
          headers: { ...headers, "content-range": `bytes */${attachment.size}` }
        })
      }
      const opened = yield* Effect.option(storage.open(attachment.sha256, range))
      if (Option.isNone(opened)) return notFound
      const blob = opened.value
      return HttpServerResponse.stream(blob.stream, {
        status: range === undefined ? 200 : 206,
        contentType,
        contentLength: blob.length,
        headers:
          range === undefined
            ? headers
            : { ...headers, "content-range": `bytes ${blob.range.start}-${blob.range.end}/${blob.size}` }
      })
    })
    return HttpRouter.add("GET", "/attachments/:uuid", handler)
  })
)

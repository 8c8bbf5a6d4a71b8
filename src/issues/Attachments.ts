// Attachments of issues and comments (Forgejo's routers/api/v1/repo/issue_attachment.go,
// issue_comment_attachment.go, services/attachment, routers/web/repo/attachment.go
// `ServeAttachment`; CONTRACT-ISSUES §10, §4.3). The bytes live in the blob storage; a row names
// them, and the table's delete trigger gives the blob's reference back whenever a row goes.
//
// Upload: the issue (or comment) is found (404), the caller must be its poster or a writer (403),
// the repository owner's quota must allow more attachments (413), `updated_at` is checked (§4.2),
// then the multipart body is read: the file's first bytes are checked against
// `[attachment] ALLOWED_TYPES` (422) before anything is stored, and the store stops at
// `[attachment] MAX_SIZE` (413, nothing kept). Then, in one transaction, the row, the blob's
// reference and the re-save Forgejo does: the issue's (or comment's) `updated_at` becomes the
// upload's time (T with `updated_at`), and `issues`/`edited` (`issue_comment`/`edited`) is
// published with the unchanged body, as Forgejo's `ChangeContent`/`UpdateComment` fire it.
//
// Where Forgejo answers 500 (no file; a malformed `updated_at`) or `null` (a missing attachment),
// Hearth answers 422 and an empty 404. An issue route only reaches the issue's own attachments
// (Forgejo's also reach its comments', bypassing the comment's permission check).
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { Settings } from "../config/Settings.ts"
import * as Events from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { QuotaService } from "../quota/Service.ts"
import { type OpenedRepository, RepoPolicy, repoRefusal } from "../repos/Policy.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { detectContentType, typeAllowed } from "../storage/ContentType.ts"
import { readMultipartUpload } from "../storage/Multipart.ts"
import { BlobStorage } from "../storage/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { type AttachmentRow, AttachmentsRepo } from "./AttachmentsRepo.ts"
import { type Attachment, toApiAttachment } from "./AttachmentsSchema.ts"
import { makeLookup, resolveUpdatedAt } from "./Lookup.ts"
import { isWriter, mayEditIssue } from "./Policy.ts"
import { type CommentRow, type IssueRow, IssuesRepo } from "./Repo.ts"

type ServiceError = Errors.ApiError

/** What an attachment route names: an issue's own attachments, or a comment's. */
export type AttachmentTarget = { readonly index: string } | { readonly commentId: string }

/** Forgejo's refusals (`canUserWriteIssueAttachment`, `canUserWriteIssueCommentAttachment`). */
const ISSUE_REFUSED = "user should have permission to write issue"
const COMMENT_REFUSED = "user should have permission to edit comment"
/** Forgejo's `upload.ErrFileTypeForbidden`. */
export const TYPE_REFUSED = "This file extension or type is not allowed to be uploaded."

const MB = 1024 * 1024

export class IssueAttachments extends Context.Service<
  IssueAttachments,
  {
    readonly list: (
      opened: OpenedRepository,
      target: AttachmentTarget
    ) => Effect.Effect<Array<Attachment>, ServiceError>
    readonly get: (
      opened: OpenedRepository,
      target: AttachmentTarget,
      id: string
    ) => Effect.Effect<Attachment, ServiceError>
    /** Reads the request's multipart body (`attachment`, `name`, `updated_at`) and stores the file. */
    readonly create: (
      opened: OpenedRepository,
      target: AttachmentTarget,
      request: HttpServerRequest.HttpServerRequest,
      query: { readonly name?: string | undefined; readonly updated_at?: string | undefined }
    ) => Effect.Effect<Attachment, ServiceError>
    readonly rename: (
      opened: OpenedRepository,
      target: AttachmentTarget,
      id: string,
      name: string | null | undefined
    ) => Effect.Effect<Attachment, ServiceError>
    readonly remove: (
      opened: OpenedRepository,
      target: AttachmentTarget,
      id: string
    ) => Effect.Effect<void, ServiceError>
    /**
     * The attachment of `/attachments/{uuid}` for `viewer` (its bytes are the blob it names): 404
     * when there is none or the viewer may not read its issue (anonymous visitors under
     * `[service] REQUIRE_SIGNIN_VIEW` read none); counted as a download.
     */
    readonly download: (viewer: Principal | undefined, uuid: string) => Effect.Effect<AttachmentRow, Errors.NotFound>
  }
>()("hearth/issues/IssueAttachments") {
  static readonly layer = Layer.effect(
    IssueAttachments,
    Effect.gen(function* () {
      const settings = yield* Settings
      const attachments = yield* AttachmentsRepo
      const issuesRepo = yield* IssuesRepo
      const storage = yield* BlobStorage
      const quota = yield* QuotaService
      const hub = yield* EventHub
      const repos = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const { findIssue, findComment } = yield* makeLookup
      const config = settings.attachment
      const json = (row: AttachmentRow) => toApiAttachment(settings, row)

      /** The issue, and the comment when the target is one. */
      const findTarget = (opened: OpenedRepository, target: AttachmentTarget) =>
        "index" in target
          ? Effect.map(findIssue(opened, target.index), (issue) => ({
              issue,
              comment: undefined as CommentRow | undefined
            }))
          : Effect.map(findComment(opened, target.commentId), ({ comment, issue }) => ({
              issue,
              comment: comment as CommentRow | undefined
            }))

      const mayWrite = (opened: OpenedRepository, issue: IssueRow, comment: CommentRow | undefined) =>
        comment === undefined
          ? mayEditIssue(opened, issue)
            ? Effect.void
            : Effect.fail(Errors.forbidden(ISSUE_REFUSED))
          : isWriter(opened) || opened.caller?.user.id === comment.posterId
            ? Effect.void
            : Effect.fail(Errors.forbidden(COMMENT_REFUSED))

      /** The attachment `id` of the target: an issue's own, or the comment's. */
      const findAttachment = (issue: IssueRow, comment: CommentRow | undefined, rawId: string) =>
        Effect.gen(function* () {
          const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0
          const row = id === 0 ? Option.none<AttachmentRow>() : yield* attachments.byId(id)
          if (
            Option.isNone(row) ||
            row.value.issueId !== issue.id ||
            row.value.commentId !== (comment === undefined ? null : comment.id)
          ) {
            return yield* Errors.notFound()
          }
          return row.value
        })

      const doerOf = (opened: OpenedRepository) =>
        opened.caller === undefined
          ? Effect.fail(Errors.unauthorized("token is required"))
          : Effect.succeed(opened.caller.user)

      return IssueAttachments.of({
        list: (opened, target) =>
          Effect.gen(function* () {
            const { issue, comment } = yield* findTarget(opened, target)
            const rows =
              comment === undefined
                ? ((yield* attachments.ofIssues([issue.id])).get(issue.id) ?? [])
                : ((yield* attachments.ofComments([comment.id])).get(comment.id) ?? [])
            return rows.map(json)
          }),

        get: (opened, target, id) =>
          Effect.gen(function* () {
            const { issue, comment } = yield* findTarget(opened, target)
            return json(yield* findAttachment(issue, comment, id))
          }),

        create: (opened, target, request, query) =>
          Effect.gen(function* () {
            const doer = yield* doerOf(opened)
            const { issue, comment } = yield* findTarget(opened, target)
            yield* mayWrite(opened, issue, comment)
            // Charged to the repository's owner (Forgejo's `QuotaTargetRepo`).
            yield* quota.enforce({ id: opened.owner.id, name: opened.owner.name }, "size:assets:attachments:issues")
            const fromQuery = query.updated_at !== undefined && query.updated_at !== ""
            let given = fromQuery ? yield* resolveUpdatedAt(opened, issue, query.updated_at) : undefined
            let checkedForm = false
            const upload = yield* Effect.provideService(
              readMultipartUpload(request, {
                fileField: "attachment",
                maxSize: config.MAX_SIZE * MB,
                accept: (file) =>
                  Effect.gen(function* () {
                    // A form's `updated_at` before the file is checked before the file is stored.
                    const formDate = file.fields.get("updated_at")
                    if (!fromQuery && formDate !== undefined && formDate !== "") {
                      given = yield* resolveUpdatedAt(opened, issue, formDate)
                      checkedForm = true
                    }
                    if (!typeAllowed(config.ALLOWED_TYPES, file.filename, detectContentType(file.head))) {
                      return yield* Errors.validationFailed(TYPE_REFUSED)
                    }
                  })
              }),
              BlobStorage,
              storage
            )
            if (upload.file === undefined) {
              return yield* Errors.validationFailed('attachment: the form has no file in its "attachment" field')
            }
            const formDate = upload.fields.get("updated_at")
            if (!fromQuery && !checkedForm && formDate !== undefined && formDate !== "") {
              given = yield* resolveUpdatedAt(opened, issue, formDate)
            }
            const name = [query.name, upload.fields.get("name"), upload.file.filename].find(
              (n): n is string => n !== undefined && n.trim() !== ""
            )
            if (name === undefined) {
              return yield* Errors.validationFailed("name: the file has no name; give one with the `name` parameter")
            }
            const file = upload.file
            const at = given ?? new Date()
            const row = yield* attachments.transaction(
              Effect.gen(function* () {
                const row = yield* attachments.insert({
                  uuid: randomUUID(),
                  repoId: opened.repo.id,
                  issueId: issue.id,
                  commentId: comment?.id ?? null,
                  uploaderId: doer.id,
                  name,
                  size: file.blob.size,
                  contentType: detectContentType(file.head),
                  sha256: file.blob.sha256,
                  at
                })
                yield* Effect.orDie(storage.acquire(file.blob))
                // Forgejo re-saves what the file is attached to: its `updated_at` moves to `at`.
                if (comment === undefined) yield* issuesRepo.touchIssue(issue.id, at)
                else yield* attachments.touchComment(comment.id, at)
                return row
              })
            )
            const about = Events.subject(opened.owner, opened.repo, doer)
            const issueRef = { id: issue.id, index: issue.index, isPull: issue.isPull }
            yield* hub.publish(
              comment === undefined
                ? {
                    _tag: "Issues",
                    ...about,
                    issue: issueRef,
                    action: "edited",
                    changes: { body: { from: issue.body } }
                  }
                : {
                    _tag: "IssueComment",
                    ...about,
                    issue: issueRef,
                    comment: { id: comment.id },
                    action: "edited",
                    changes: { body: { from: comment.body } }
                  }
            )
            return json(row)
          }),

        rename: (opened, target, id, name) =>
          Effect.gen(function* () {
            const { issue, comment } = yield* findTarget(opened, target)
            yield* mayWrite(opened, issue, comment)
            const row = yield* findAttachment(issue, comment, id)
            // An empty name leaves it as it is (Forgejo).
            if (name === undefined || name === null || name === "") return json(row)
            const renamed = yield* attachments.rename(row.id, name)
            if (Option.isNone(renamed)) return yield* Errors.notFound()
            return json(renamed.value)
          }),

        remove: (opened, target, id) =>
          Effect.gen(function* () {
            const { issue, comment } = yield* findTarget(opened, target)
            yield* mayWrite(opened, issue, comment)
            const row = yield* findAttachment(issue, comment, id)
            if (!(yield* attachments.remove(row.id))) return yield* Errors.notFound()
          }),

        download: (viewer, uuid) =>
          Effect.gen(function* () {
            // As every other route, nothing for anonymous visitors under REQUIRE_SIGNIN_VIEW.
            if (viewer === undefined && settings.service.REQUIRE_SIGNIN_VIEW) return yield* Errors.notFound()
            const found = yield* attachments.byUuid(uuid)
            if (Option.isNone(found)) return yield* Errors.notFound()
            const attachment = found.value
            const repo = yield* repos.findById(attachment.repoId)
            if (Option.isNone(repo)) return yield* Errors.notFound()
            const owner = yield* users.findById(repo.value.ownerId)
            if (Option.isNone(owner)) return yield* Errors.notFound()
            const issueRow = yield* issuesRepo.issueById(attachment.issueId)
            if (Option.isNone(issueRow)) return yield* Errors.notFound()
            const issue = issueRow.value
            const access = yield* policy.access(viewer, repo.value, owner.value)
            // Forgejo's `ServeAttachment`: whoever may read the issue's unit, else 404.
            const refused = repoRefusal(
              viewer,
              { owner: owner.value, repo: repo.value, access },
              { role: "read", unit: issue.isPull ? "pulls" : "issues" }
            )
            if (refused !== undefined) return yield* Errors.notFound()
            yield* attachments.countDownload(attachment.id)
            return attachment
          })
      })
    })
  )
}

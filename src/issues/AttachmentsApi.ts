// Routes of issue and comment attachments (Forgejo's routers/api/v1/repo/issue_attachment.go,
// issue_comment_attachment.go; CONTRACT-ISSUES §10), with Forgejo's operationIds. All of them are
// 404 while `[attachment] ENABLED` is off (Forgejo's `mustEnableAttachments`); changes are 423 on
// an archived repository. The upload's multipart body is read by its handler, as a stream.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import type { AccessRule } from "../http/Access.ts"
import { Access } from "../http/Access.ts"
import { Attachment, EditAttachmentOptions } from "./AttachmentsSchema.ts"

const enabled: AccessRule["enabled"] = (settings) => settings.attachment.ENABLED
const read = {
  signedIn: false,
  scopes: ["issue"],
  enabled,
  repo: { role: "read", unit: "issues" }
} as const satisfies AccessRule
const write = {
  signedIn: true,
  scopes: ["issue"],
  enabled,
  repo: { role: "read", unit: "issues", changes: "mirrors" }
} as const satisfies AccessRule

const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withIndex = { ...ownerRepo, index: Schema.String }
const withId = { ...ownerRepo, id: Schema.String }
const withAttachment = { attachment_id: Schema.String }
const uploadQuery = { name: Schema.optional(Schema.String), updated_at: Schema.optional(Schema.String) }
const Attachments = Schema.Array(Attachment)

/** The upload's body as Forgejo documents it (the handler reads it as a stream, undeclared). */
const multipartBody = {
  requestBody: {
    required: true,
    content: {
      "multipart/form-data": {
        schema: {
          type: "object",
          properties: {
            attachment: { type: "string", format: "binary", description: "attachment to upload" },
            name: { type: "string", description: "name of the attachment (default: the file's name)" },
            updated_at: { type: "string", format: "date-time", description: "time of the upload (admins)" }
          },
          required: ["attachment"]
        }
      }
    }
  }
}

export class IssueAttachmentsApi extends HttpApiGroup.make("issueAttachments").add(
  HttpApiEndpoint.get("listIssueAttachments", "/repos/:owner/:repo/issues/:index/assets", {
    params: withIndex,
    success: Attachments
  })
    .annotate(OpenApi.Identifier, "issueListIssueAttachments")
    .annotate(Access, read),
  HttpApiEndpoint.post("createIssueAttachment", "/repos/:owner/:repo/issues/:index/assets", {
    params: withIndex,
    query: uploadQuery,
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issueCreateIssueAttachment")
    .annotate(OpenApi.Override, multipartBody)
    .annotate(Access, write),
  HttpApiEndpoint.get("getIssueAttachment", "/repos/:owner/:repo/issues/:index/assets/:attachment_id", {
    params: { ...withIndex, ...withAttachment },
    success: Attachment
  })
    .annotate(OpenApi.Identifier, "issueGetIssueAttachment")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editIssueAttachment", "/repos/:owner/:repo/issues/:index/assets/:attachment_id", {
    params: { ...withIndex, ...withAttachment },
    payload: EditAttachmentOptions,
    // Forgejo answers an edit with 201.
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issueEditIssueAttachment")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteIssueAttachment", "/repos/:owner/:repo/issues/:index/assets/:attachment_id", {
    params: { ...withIndex, ...withAttachment },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteIssueAttachment")
    .annotate(Access, write),

  HttpApiEndpoint.get("listCommentAttachments", "/repos/:owner/:repo/issues/comments/:id/assets", {
    params: withId,
    success: Attachments
  })
    .annotate(OpenApi.Identifier, "issueListIssueCommentAttachments")
    .annotate(Access, read),
  HttpApiEndpoint.post("createCommentAttachment", "/repos/:owner/:repo/issues/comments/:id/assets", {
    params: withId,
    query: uploadQuery,
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issueCreateIssueCommentAttachment")
    .annotate(OpenApi.Override, multipartBody)
    .annotate(Access, write),
  HttpApiEndpoint.get("getCommentAttachment", "/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id", {
    params: { ...withId, ...withAttachment },
    success: Attachment
  })
    .annotate(OpenApi.Identifier, "issueGetIssueCommentAttachment")
    .annotate(Access, read),
  HttpApiEndpoint.patch("editCommentAttachment", "/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id", {
    params: { ...withId, ...withAttachment },
    payload: EditAttachmentOptions,
    success: Attachment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "issueEditIssueCommentAttachment")
    .annotate(Access, write),
  HttpApiEndpoint.delete("deleteCommentAttachment", "/repos/:owner/:repo/issues/comments/:id/assets/:attachment_id", {
    params: { ...withId, ...withAttachment },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "issueDeleteIssueCommentAttachment")
    .annotate(Access, write)
) {}

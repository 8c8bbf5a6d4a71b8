// The Attachment object and its edit options (Forgejo's modules/structs/attachment.go,
// services/convert/attachment.go `ToAPIAttachment`).
import { Schema } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import { formatTime, Id, Timestamp } from "../http/Json.ts"
import type { AttachmentRow } from "./AttachmentsRepo.ts"

export const Attachment = Schema.Struct({
  id: Id,
  name: Schema.String,
  size: Schema.Int,
  download_count: Schema.Int,
  created_at: Timestamp,
  uuid: Schema.String,
  browser_download_url: Schema.String,
  type: Schema.Literals(["attachment", "external"])
}).annotate({ identifier: "Attachment" })
export type Attachment = typeof Attachment.Type

/** `browser_download_url` is read and ignored: only external (release) attachments have one to change. */
export const EditAttachmentOptions = Schema.Struct({
  name: Schema.optionalKey(Schema.NullOr(Schema.String)),
  browser_download_url: Schema.optionalKey(Schema.NullOr(Schema.String))
}).annotate({ identifier: "EditAttachmentOptions" })

/** The download URL: `{ROOT_URL}attachments/{uuid}` (served by AttachmentsHttp.ts). */
export const downloadUrl = (settings: SettingsShape, uuid: string) => `${settings.server.ROOT_URL}attachments/${uuid}`

export const toApiAttachment = (settings: SettingsShape, row: AttachmentRow): Attachment => ({
  id: row.id,
  name: row.name,
  size: row.size,
  download_count: row.downloadCount,
  created_at: formatTime(row.createdAt),
  uuid: row.uuid,
  browser_download_url: downloadUrl(settings, row.uuid),
  type: "attachment"
})

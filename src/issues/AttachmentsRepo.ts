// SQL for attachments of issues and comments (migration 0021_attachments). Rules live in
// Attachments.ts; a row's blob reference is taken by the inserting transaction
// (`BlobStorage.acquire`) and given back by the table's delete trigger.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary, transaction } from "../db/Boundary.ts"

export interface AttachmentRow {
  readonly id: number
  readonly uuid: string
  readonly repoId: number
  readonly issueId: number
  readonly commentId: number | null
  readonly uploaderId: number | null
  readonly name: string
  readonly size: number
  readonly contentType: string
  readonly sha256: string
  readonly downloadCount: number
  readonly createdAt: Date
}

export interface NewAttachment {
  readonly uuid: string
  readonly repoId: number
  readonly issueId: number
  readonly commentId: number | null
  readonly uploaderId: number
  readonly name: string
  readonly size: number
  readonly contentType: string
  readonly sha256: string
  readonly at: Date
}

type Row = Record<string, any>
export const toAttachment = (r: Row): AttachmentRow => ({
  id: Number(r.id),
  uuid: String(r.uuid),
  repoId: Number(r.repo_id),
  issueId: Number(r.issue_id),
  commentId: r.comment_id === null ? null : Number(r.comment_id),
  uploaderId: r.uploader_id === null ? null : Number(r.uploader_id),
  name: r.name,
  size: Number(r.size),
  contentType: r.content_type,
  sha256: r.sha256,
  downloadCount: Number(r.download_count),
  createdAt: r.created_at
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class AttachmentsRepo extends Context.Service<
  AttachmentsRepo,
  {
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
    readonly insert: (row: NewAttachment) => Effect.Effect<AttachmentRow>
    readonly byId: (id: number) => Effect.Effect<Option.Option<AttachmentRow>>
    readonly byUuid: (uuid: string) => Effect.Effect<Option.Option<AttachmentRow>>
    /** The issues' own attachments (not their comments'), oldest first, by issue. */
    readonly ofIssues: (issueIds: ReadonlyArray<number>) => Effect.Effect<ReadonlyMap<number, Array<AttachmentRow>>>
    /** The comments' attachments, oldest first, by comment. */
    /**
     * The attachments of these comments, by comment. `issueId`, when all are of one issue, reads
     * them by their issue instead of naming every comment (an issue's 200 comments: one parameter, not 200).
     */
    readonly ofComments: (
      commentIds: ReadonlyArray<number>,
      issueId?: number
    ) => Effect.Effect<ReadonlyMap<number, Array<AttachmentRow>>>
    readonly rename: (id: number, name: string) => Effect.Effect<Option.Option<AttachmentRow>>
    /** Deletes the row (its trigger gives the blob's reference back); false when it was gone. */
    readonly remove: (id: number) => Effect.Effect<boolean>
    readonly countDownload: (id: number) => Effect.Effect<void>
    /** Sets a comment's `updated_at` (an attachment re-saves it, as Forgejo's `UpdateComment`). */
    readonly touchComment: (commentId: number, at: Date) => Effect.Effect<void>
  }
>()("hearth/issues/AttachmentsRepo") {
  static readonly layer = Layer.effect(
    AttachmentsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const grouped = (rows: ReadonlyArray<Row>, key: "issue_id" | "comment_id") => {
        const map = new Map<number, Array<AttachmentRow>>()
        for (const r of rows) {
          const row = toAttachment(r)
          const id = Number(r[key])
          const list = map.get(id)
          if (list === undefined) map.set(id, [row])
          else list.push(row)
        }
        return map
      }
      const one = (rows: ReadonlyArray<Row>) =>
        rows.length === 0 ? Option.none() : Option.some(toAttachment(rows[0]!))
      return AttachmentsRepo.of(
        sqlBoundary({
          transaction: transaction(sql),
          insert: (a) =>
            Effect.map(
              sql`INSERT INTO attachments (uuid, repo_id, issue_id, comment_id, uploader_id, name, size,
                content_type, sha256, created_at)
              VALUES (${a.uuid}, ${a.repoId}, ${a.issueId}, ${a.commentId}, ${a.uploaderId}, ${a.name}, ${a.size},
                ${a.contentType}, ${a.sha256}, ${a.at})
              RETURNING *`,
              (rows) => toAttachment(rows[0]!)
            ),
          byId: (id) => Effect.map(sql`SELECT * FROM attachments WHERE id = ${id}`, one),
          byUuid: (uuid) =>
            UUID.test(uuid)
              ? Effect.map(sql`SELECT * FROM attachments WHERE uuid = ${uuid.toLowerCase()}`, one)
              : Effect.succeed(Option.none()),
          ofIssues: (issueIds) =>
            issueIds.length === 0
              ? Effect.succeed(new Map())
              : Effect.map(
                  sql`SELECT * FROM attachments WHERE issue_id = ANY(${issueIds}::int8[]) AND comment_id IS NULL
                    ORDER BY id`,
                  (rows) => grouped(rows, "issue_id")
                ),
          ofComments: (commentIds, issueId) => {
            if (commentIds.length === 0) return Effect.succeed(new Map())
            if (issueId === undefined)
              return Effect.map(
                sql`SELECT * FROM attachments WHERE comment_id = ANY(${commentIds}::int8[]) ORDER BY id`,
                (rows) => grouped(rows, "comment_id")
              )
            const wanted = new Set(commentIds)
            return Effect.map(
              sql`SELECT * FROM attachments WHERE issue_id = ${issueId} AND comment_id IS NOT NULL ORDER BY id`,
              (rows) =>
                grouped(
                  rows.filter((r) => wanted.has(Number(r.comment_id))),
                  "comment_id"
                )
            )
          },
          rename: (id, name) =>
            Effect.map(sql`UPDATE attachments SET name = ${name} WHERE id = ${id} RETURNING *`, one),
          remove: (id) =>
            Effect.map(sql`DELETE FROM attachments WHERE id = ${id} RETURNING id`, (rows) => rows.length > 0),
          countDownload: (id) =>
            Effect.asVoid(sql`UPDATE attachments SET download_count = download_count + 1 WHERE id = ${id}`),
          touchComment: (commentId, at) =>
            Effect.asVoid(sql`UPDATE comments SET updated_at = ${at} WHERE id = ${commentId}`)
        })
      )
    })
  )
}

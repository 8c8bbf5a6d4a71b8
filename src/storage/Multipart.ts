// A `multipart/form-data` upload (Forgejo's `ctx.Req.FormFile`): the form's fields, and its one
// file stored through `BlobStorage` as it arrives — never whole in memory, never on disk twice.
// The first bytes of the file are read before anything is stored, so a caller can refuse the
// file by what it is (a type not allowed, 422) without storing it; the size limit is the store's
// (413 as soon as it is passed, and nothing is kept).
import { finished, Readable } from "node:stream"
import { type MultipartStream, make as makeParser } from "@effect/platform-node/NodeMultipartParser"
import { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import { decodeField, defaultIsFile, type MultipartError } from "effect/http/MultipartParser"
import * as Errors from "../http/Errors.ts"
import { SNIFF_BYTES } from "./ContentType.ts"
import { requestBody } from "./Http.ts"
import { BlobStorage, type StoredBlob } from "./Service.ts"

/** The largest form field (a name, a date): far above any sensible one. */
const MAX_FIELD_BYTES = 64 * 1024
/** Parts one form may have. */
const MAX_PARTS = 32

/** The file, before it is stored: what a caller looks at to accept or refuse it. */
export interface IncomingFile {
  /** The file name the client sent (may be empty). */
  readonly filename: string
  /** Its first bytes (up to SNIFF_BYTES; all of it when shorter). */
  readonly head: Uint8Array
  /** The fields of the form that came before the file. */
  readonly fields: ReadonlyMap<string, string>
}

export interface MultipartUpload {
  readonly fields: ReadonlyMap<string, string>
  readonly file: { readonly filename: string; readonly head: Uint8Array; readonly blob: StoredBlob } | undefined
}

const refusal = (error: MultipartError) =>
  error._tag === "ReachedLimit"
    ? Errors.payloadTooLarge(
        error.limit === "MaxParts"
          ? `the form has more than ${MAX_PARTS} parts`
          : `a form field is larger than ${MAX_FIELD_BYTES / 1024} KiB`
      )
    : Errors.badRequest(
        error._tag === "EndNotReached"
          ? "the multipart body ends before its closing boundary"
          : "the body is not valid multipart/form-data"
      )

const isMultipartError = (error: unknown): error is MultipartError =>
  typeof error === "object" &&
  error !== null &&
  ["InvalidBoundary", "BadHeaders", "InvalidDisposition", "ReachedLimit", "EndNotReached"].includes(
    (error as { _tag?: string })._tag ?? ""
  )

/**
 * Reads the request's multipart form. The file of field `fileField` (the only file read; another
 * file is a 422), or with `fileField` undefined the first file of any field, is shown to `accept`
 * with its first bytes, then stored with at most `maxSize` bytes; the stored blob is held until
 * the caller's `acquire(blob)`. Fields after the file are read too. No file: `file` is undefined.
 */
export const readMultipartUpload = <E, R, PE = never, PR = never>(
  request: HttpServerRequest.HttpServerRequest,
  options: {
    readonly fileField: string | undefined
    readonly maxSize: number
    readonly accept: (file: IncomingFile) => Effect.Effect<void, E, R>
    /** Stores the file's bytes instead of `BlobStorage.put` with `maxSize` (a registry's own limits, or reading it on the way). */
    readonly put?: (body: Readable) => Effect.Effect<StoredBlob, PE | Errors.PayloadTooLarge | Errors.BadRequest, PR>
  }
): Effect.Effect<
  MultipartUpload,
  E | PE | Errors.PayloadTooLarge | Errors.BadRequest | Errors.ValidationFailed,
  R | PR | BlobStorage
> =>
  Effect.gen(function* () {
    const type = request.headers["content-type"] ?? ""
    const where = options.fileField === undefined ? "a file field" : `its "${options.fileField}" field`
    if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) {
      return yield* Errors.validationFailed(`the body must be multipart/form-data with the file in ${where}`)
    }
    const storage = yield* BlobStorage
    const source = requestBody(request)
    let parser: MultipartStream
    try {
      parser = makeParser({
        headers: request.headers,
        maxParts: MAX_PARTS,
        maxFieldSize: MAX_FIELD_BYTES,
        isFile: (info) => info.name === options.fileField || defaultIsFile(info)
      })
    } catch {
      return yield* Errors.badRequest("the body is not valid multipart/form-data")
    }
    // The first parser error, for the answer (a file part being read fails with it too).
    let failure: MultipartError | undefined
    parser.on("error", (error: MultipartError) => {
      failure ??= error
    })
    source.pipe(parser)
    // `pipe` does not forward the source's errors or a premature close.
    const stopWatching = finished(source, { readable: true, writable: false }, (error) => {
      stopWatching()
      if (error) parser.destroy(error)
    })
    const release = Effect.sync(() => {
      stopWatching()
      source.unpipe(parser)
      parser.destroy()
    })
    const parserFailed = (error: unknown) =>
      isMultipartError(failure ?? error)
        ? refusal((failure ?? error) as MultipartError)
        : Errors.badRequest("the upload was cut off before its end")
    const parts = parser[Symbol.asyncIterator]()
    const next = Effect.tryPromise({ try: () => parts.next(), catch: parserFailed })
    const nextChunk = (chunks: AsyncIterator<unknown>) =>
      Effect.tryPromise({ try: () => chunks.next(), catch: parserFailed })

    return yield* Effect.gen(function* () {
      const fields = new Map<string, string>()
      let file: MultipartUpload["file"]
      for (;;) {
        const step = yield* next
        if (step.done === true) break
        const part = step.value
        if (part._tag === "Field") {
          fields.set(part.info.name, decodeField(part.info, part.value))
          continue
        }
        if ((options.fileField !== undefined && part.info.name !== options.fileField) || file !== undefined) {
          return yield* Errors.validationFailed(
            `unexpected file in the form's "${part.info.name}" field: only one file, ` +
              `${options.fileField === undefined ? "the first" : `in "${options.fileField}"`}, is read`
          )
        }
        // The first bytes, then the same stream on: one pass over the body.
        const chunks = part[Symbol.asyncIterator]()
        const head: Array<Uint8Array> = []
        let headSize = 0
        let ended = false
        while (headSize < SNIFF_BYTES) {
          const chunk = yield* nextChunk(chunks)
          if (chunk.done === true) {
            ended = true
            break
          }
          head.push(chunk.value as Uint8Array)
          headSize += (chunk.value as Uint8Array).byteLength
        }
        const first = Buffer.concat(head)
        const filename = part.filename ?? ""
        yield* options.accept({ filename, head: first, fields: new Map(fields) })
        const body = Readable.from(
          (async function* () {
            yield first
            if (ended) return
            for (;;) {
              const chunk = await chunks.next()
              if (chunk.done === true) return
              yield chunk.value as Uint8Array
            }
          })()
        )
        // A body the parser gave up on is refused for the parser's reason.
        const blob: StoredBlob = yield* Effect.mapError(
          options.put === undefined ? storage.put(body, { maxSize: options.maxSize }) : options.put(body),
          (error) => (error instanceof Errors.BadRequest && failure !== undefined ? refusal(failure) : error)
        )
        file = { filename, head: first, blob }
      }
      return { fields, file }
    }).pipe(Effect.ensuring(release))
  })

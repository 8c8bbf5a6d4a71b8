// Serving a stored file (an issue attachment, a release asset) to a browser or a client: streamed
// from the blob storage, a byte range when asked for, with a type and disposition that never let
// an upload act as a page of the forge (ContentType.ts).
import type { Readable } from "node:stream"
import { toIncomingMessage } from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Option } from "effect"
import { type HttpServerRequest, HttpServerResponse } from "effect/http"
import { contentDisposition, SERVED_CSP, servedAs } from "./ContentType.ts"
import { parseRange } from "./Http.ts"
import { poolFor } from "./Send.ts"
import { BlobStorage, type OpenedBlob } from "./Service.ts"

/**
 * The body of a response sending `blob` to `request`'s client: read into a few buffers reused
 * once the socket has sent them (src/storage/Send.ts), when the request has a socket to watch.
 */
export const blobBody = (request: HttpServerRequest.HttpServerRequest, blob: OpenedBlob): Readable => {
  const watching = poolFor(toIncomingMessage(request))
  if (watching === undefined) return blob.readable()
  const body = blob.readable(watching.pool)
  body.once("close", watching.stop)
  return body
}

/** What is served: its name, detected type, size and blob. */
export interface ServedFile {
  readonly name: string
  readonly contentType: string
  readonly size: number
  readonly sha256: string
}

/** The response for `file` (200, 206 for a range, 416, or 404 when its blob is gone). */
export const serveStored = (request: HttpServerRequest.HttpServerRequest, file: ServedFile) =>
  Effect.gen(function* () {
    const storage = yield* BlobStorage
    const { contentType, inline } = servedAs(file.contentType)
    const headers = {
      "content-disposition": contentDisposition(file.name, inline),
      "content-security-policy": SERVED_CSP,
      "x-content-type-options": "nosniff",
      "accept-ranges": "bytes",
      // A stored file's bytes never change (a new upload is a new attachment).
      "cache-control": "private, max-age=300",
      etag: `"${file.sha256}"`
    }
    const range = parseRange(request.headers["range"], file.size)
    if (range === "unsatisfiable") {
      return HttpServerResponse.empty({ status: 416, headers: { ...headers, "content-range": `bytes */${file.size}` } })
    }
    const opened = yield* Effect.option(storage.open(file.sha256, range))
    if (Option.isNone(opened)) return HttpServerResponse.empty({ status: 404 })
    const blob = opened.value
    // The file's Node stream, piped to the socket by the server (a `raw` body): the Effect stream
    // costs a fiber step per 64 KiB chunk, which held downloads to half a plain file server's speed
    // (infra/bench/README.md, "Issue 20: release assets").
    return HttpServerResponse.raw(blobBody(request, blob), {
      status: range === undefined ? 200 : 206,
      contentType,
      contentLength: blob.length,
      headers:
        range === undefined
          ? headers
          : { ...headers, "content-range": `bytes ${blob.range.start}-${blob.range.end}/${blob.size}` }
    })
  })

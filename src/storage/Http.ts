// Uploads and downloads of blobs over HTTP: what a handler storing a request body (an attachment,
// a release asset, a package file) or serving a blob needs around `BlobStorage`.

import { Readable } from "node:stream"
import { toIncomingMessage } from "@effect/platform-node/NodeHttpServerRequest"
import * as NodeStream from "@effect/platform-node/NodeStream"
import type { Effect } from "effect"
import type { HttpServerRequest } from "effect/http"
import type * as Errors from "../http/Errors.ts"
import { BlobStorage, type ByteRange, type StoredBlob } from "./Service.ts"

/** The Node request itself when there is one (no copy, native backpressure), else the platform's body stream. */
export const requestBody = (request: HttpServerRequest.HttpServerRequest): Readable => {
  const source = toIncomingMessage(request) as unknown
  return source instanceof Readable ? source : NodeStream.toReadableNever(request.stream)
}

/** The announced body size (`Content-Length`), when there is one (not with chunked bodies). */
export const contentLength = (request: HttpServerRequest.HttpServerRequest): number | undefined => {
  const value = request.headers["content-length"]
  // Node's parser has already refused a malformed or contradictory Content-Length.
  return value === undefined || !/^\d+$/.test(value) ? undefined : Number(value)
}

/**
 * Stores the request's body: over `maxSize` is a 413, before reading when Content-Length says so,
 * else as soon as the limit is passed; either way nothing is kept. The stored blob is held until
 * the caller's `acquire(blob)`. What is left unread of a refused body is the HTTP server's
 * business: effect's NodeHttpServer discards up to 256 KiB of it to keep the connection, and
 * past that answers with `Connection: close` and closes gracefully once the client has the answer.
 */
export const putRequest = (
  request: HttpServerRequest.HttpServerRequest,
  options: { readonly maxSize: number }
): Effect.Effect<StoredBlob, Errors.PayloadTooLarge | Errors.BadRequest, BlobStorage> =>
  BlobStorage.use((storage) =>
    storage.put(requestBody(request), { maxSize: options.maxSize, length: contentLength(request) })
  )

/**
 * A `Range` header for a blob of `size` bytes: one range (`bytes=a-b`, `bytes=a-`, `bytes=-n`) →
 * its inclusive offsets; one that starts past the end → "unsatisfiable" (416); none, several, or
 * one that cannot be read → undefined (the whole blob, as RFC 9110 allows a server to answer).
 */
export const parseRange = (header: string | undefined, size: number): ByteRange | "unsatisfiable" | undefined => {
  if (header === undefined) return undefined
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim())
  if (m === null || (m[1] === "" && m[2] === "")) return undefined
  if (m[1] === "") {
    // The last n bytes.
    const n = Number(m[2])
    if (n === 0 || size === 0) return "unsatisfiable"
    return { start: Math.max(0, size - n), end: size - 1 }
  }
  const start = Number(m[1])
  if (m[2] !== "" && Number(m[2]) < start) return undefined
  if (start >= size) return "unsatisfiable"
  return { start, end: m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1) }
}

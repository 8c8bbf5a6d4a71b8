// JSON value conventions shared by every resource (Forgejo's modules/structs, services/convert).
import { randomBytes } from "node:crypto"
import type { Schema } from "effect"
import { Schema as S } from "effect"
import { HttpServerResponse } from "effect/http"

/** Go's zero time, what Forgejo shows for an unset timestamp. */
export const ZERO_TIME = "0001-01-01T00:00:00Z"

/** RFC 3339 with whole seconds in UTC, as Forgejo prints times. */
export const formatTime = (date: Date | null | undefined): string =>
  date === null || date === undefined ? ZERO_TIME : `${date.toISOString().slice(0, 19)}Z`

/** A timestamp in API responses (documented as date-time). */
export const Timestamp = S.String.annotate({ format: "date-time" })

/** An int64 id. */
export const Id = S.Int

/**
 * Answers `value`, already in the shape of `schema` because our own converter built it, as JSON
 * without running it through the schema's encoder again (a measurable share of a hot GET). The
 * endpoint's declared success schema still documents it, and the tests validate the shapes.
 */
export const respond = <A>(_schema: Schema.Codec<A, A>, value: NoInfer<A>, status = 200) =>
  HttpServerResponse.jsonUnsafe(value, { status })

/** The stand-in `SharedJson.ref` leaves in an answer: unforgeable (NUL cannot be stored in PostgreSQL text, and the nonce is this process's). */
const SHARED_MARK = `\u0000${randomBytes(8).toString("hex")}:`
const SHARED_MARKED = new RegExp(`"\\\\u0000${SHARED_MARK.slice(1)}(\\d+)\\\\u0000"`, "g")

/**
 * Writes an object that an answer repeats once, and copies its JSON wherever it appears: a page of
 * 50 pull requests holds its repository's JSON under every base and head, four fifths of its 254 KB,
 * and `JSON.stringify` wrote it 100 times (issue 19's profiles).
 */
export class SharedJson {
  private readonly texts: Array<string> = []
  private readonly marks = new Map<object, string>()

  /** A stand-in for `value` in the answer given to `bytes`, written there as `value`'s JSON. */
  ref<A extends object>(value: A): A {
    let mark = this.marks.get(value)
    if (mark === undefined) {
      mark = `${SHARED_MARK}${this.texts.length}\u0000`
      this.texts.push(JSON.stringify(value))
      this.marks.set(value, mark)
    }
    return mark as unknown as A
  }

  /**
   * `value` as JSON in UTF-8: the text around the stand-ins encoded, each shared object's JSON
   * encoded once and copied in (no 254 KB string built only to be encoded again on its way out).
   */
  bytes(value: unknown): Buffer {
    const text = JSON.stringify(value)
    const shared = this.texts.map((json) => Buffer.from(json))
    const parts: Array<string | Buffer> = []
    let at = 0
    let length = 0
    for (const found of text.matchAll(SHARED_MARKED)) {
      const before = text.slice(at, found.index)
      const json = shared[Number(found[1])]!
      parts.push(before, json)
      length += Buffer.byteLength(before) + json.length
      at = found.index + found[0].length
    }
    const rest = text.slice(at)
    parts.push(rest)
    length += Buffer.byteLength(rest)
    const out = Buffer.allocUnsafe(length)
    let offset = 0
    for (const part of parts) offset += typeof part === "string" ? out.write(part, offset) : part.copy(out, offset)
    return out
  }

  /** The answer, as `respond` gives it. */
  respond(value: unknown, status = 200) {
    return HttpServerResponse.uint8Array(this.bytes(value), { status, contentType: "application/json" })
  }
}

// JSON value conventions shared by every resource (Forgejo's modules/structs, services/convert).
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

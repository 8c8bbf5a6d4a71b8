// JSON value conventions shared by every resource (CONTRACT §1.9).
import { Schema } from "effect"

/** Go's zero time, what Forgejo shows for an unset timestamp. */
export const ZERO_TIME = "0001-01-01T00:00:00Z"

/** RFC 3339 with whole seconds in UTC, as Forgejo prints times. */
export const formatTime = (date: Date | null | undefined): string =>
  date === null || date === undefined ? ZERO_TIME : date.toISOString().replace(/\.\d{3}Z$/, "Z")

/** A timestamp in API responses (documented as date-time). */
export const Timestamp = Schema.String.annotate({ format: "date-time" })

/** An int64 id. */
export const Id = Schema.Int

// Forgejo's search routes (`/repos/search`, `/users/search`) answer their own shape on failure —
// `{ok: false, error}` with 500 — not the usual `{message, url}`. The cause is logged, never sent:
// it holds the database's own text. A database outage is left to the renderer (503), and so is
// an interruption.
import { Cause, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { databaseUnavailableIn } from "../health/Database.ts"

/** `search`'s result, or the failure answer (logged as `${what} failed`) when it fails or dies. */
export const searchOrFailure = <A, E, R>(
  what: string,
  search: Effect.Effect<A, E, R>
): Effect.Effect<A | HttpServerResponse.HttpServerResponse, E, R> =>
  Effect.catchCause(search, (cause) =>
    Cause.hasInterruptsOnly(cause) || databaseUnavailableIn(cause) !== undefined
      ? Effect.failCause(cause)
      : Effect.as(
          Effect.logError(`${what} failed`, cause),
          HttpServerResponse.jsonUnsafe({ ok: false, error: "internal server error" }, { status: 500 })
        )
  )

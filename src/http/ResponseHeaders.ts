// Headers added to the current request's response from inside a handler (e.g. X-Total-Count),
// without changing the handler's declared success type.
import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"

export const append = (headers: Record<string, string>) =>
  HttpEffect.appendPreResponseHandler((_request, response) =>
    Effect.succeed(HttpServerResponse.setHeaders(response, headers))
  )

// API-wide response rules: every error is answered as `{message, url}` (404 empty), request
// decoding failures are 422 naming the field, oversized bodies 413, an unreachable database 503
// with Retry-After, other defects are logged and 500.
import { Cause, Effect, Layer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiError, HttpApiMiddleware } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import { answerOutage } from "../health/Database.ts"
import * as Errors from "./Errors.ts"

export class ErrorResponses extends HttpApiMiddleware.Service<ErrorResponses>()("hearth/http/ErrorResponses", {
  error: Errors.commonErrors
}) {}

const KIND_WHERE: Record<HttpApiError.HttpApiSchemaError["kind"], string> = {
  Payload: "",
  Body: "",
  Params: "path ",
  Query: "query ",
  Headers: "header ",
  ResponseHeaders: ""
}

/**
 * A request-decoding failure as one line, in Forgejo's "[Field]: rule" style: Effect's
 * `Missing key\n  at ["name"]` becomes `[name]: Missing key`, nested paths are dotted
 * (`[scopes.0]: Expected string`), query and path parameters are marked as such
 * (`query [page]: …`), and a body that is not JSON at all says so.
 */
export const describeSchemaError = (error: HttpApiError.HttpApiSchemaError): string => {
  const text = error.cause.message
  const at = /\n\s*at (\[.*\])\s*$/.exec(text)
  const message = (at === null ? text : text.slice(0, at.index)).trim()
  const where = KIND_WHERE[error.kind] ?? ""
  // A check that words its own refusal in Forgejo's style (`[Name]: MaxSize (255)`, Input.ts).
  if (/^\[\w+\]: /.test(message)) return message
  if (at === null) {
    if (where !== "") return `${where.trim()}: ${message}`
    return message === "Expected a valid JSON body" ? "request body is not valid JSON" : `request body: ${message}`
  }
  const path = [...at[1]!.matchAll(/\[("?)(.*?)\1\]/g)].map((m) => m[2]).join(".")
  return `${where}[${path}]: ${message}`
}

const isBodyTooLarge = (defect: unknown): boolean => {
  const reason = (defect as { reason?: { reason?: unknown; _tag?: unknown } } | undefined)?.reason
  return reason?.reason === "BodyTooLarge"
}

export const ErrorResponsesLive = Layer.effect(
  ErrorResponses,
  Effect.gen(function* () {
    const settings = yield* Settings
    const url = `${settings.server.ROOT_URL}api/swagger`
    const json = (status: number, message: string, headers?: Record<string, string>, extra?: object) =>
      HttpServerResponse.jsonUnsafe({ message, url, ...extra }, { status, ...(headers ? { headers } : {}) })

    // Anything that is not an API error passes through untouched (`never`: it is not ours to type).
    const render = (error: unknown): Effect.Effect<HttpServerResponse.HttpServerResponse> => {
      if (HttpApiError.HttpApiSchemaError.is(error)) return Effect.succeed(json(422, describeSchemaError(error)))
      if (HttpApiError.HttpApiPayloadTooLarge.is(error)) return Effect.succeed(json(413, error.message))
      const status = Errors.statusOfError(error)
      if (status === undefined) return Effect.fail(error as never)
      if (status === 404) return Effect.succeed(HttpServerResponse.empty({ status: 404 }))
      const message = (error as { message: string }).message
      if (error instanceof Errors.TooManyRequests) {
        return Effect.succeed(json(429, message, { "retry-after": String(error.retryAfterSeconds) }))
      }
      if (error instanceof Errors.PayloadTooLarge && error.user_id !== undefined) {
        return Effect.succeed(json(413, message, undefined, { user_id: error.user_id, username: error.username }))
      }
      if (error instanceof Errors.ValidationFailed && error.invalidTopics !== undefined) {
        return Effect.succeed(json(422, message, undefined, { invalidTopics: error.invalidTopics }))
      }
      return Effect.succeed(json(status, message))
    }

    return ErrorResponses.of((httpEffect) =>
      httpEffect.pipe(
        // The API answers an unaccepted body type itself, as plain text: give it the error shape.
        Effect.flatMap((response) =>
          response.status !== 415
            ? Effect.succeed(response)
            : HttpServerRequest.HttpServerRequest.useSync((request) =>
                json(415, `unsupported Content-Type: ${request.headers["content-type"] ?? "(none)"}`)
              )
        ),
        Effect.catch(render),
        Effect.catchCause((cause) => {
          if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause)
          const defect = Cause.squash(cause)
          if (defect instanceof Errors.RepositoryMoved) {
            return HttpServerRequest.HttpServerRequest.useSync((request) =>
              HttpServerResponse.empty({
                status: 307,
                headers: { location: new URL(defect.relocate(request.url), settings.server.ROOT_URL).toString() }
              })
            )
          }
          if (isBodyTooLarge(defect)) {
            return Effect.succeed(json(413, `request body is larger than ${settings.server.MAX_REQUEST_BODY} bytes`))
          }
          // The database is down: not a bug of this request, and one log line per outage.
          const outage = answerOutage(cause, url)
          if (outage !== undefined) return outage
          return Effect.logError("unhandled error while answering a request", cause).pipe(
            Effect.as(json(500, "internal server error"))
          )
        })
      )
    )
  })
)

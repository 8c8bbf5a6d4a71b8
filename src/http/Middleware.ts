// API-wide response rules: every error is answered as `{message, url}` (404 empty), request
// decoding failures are 422 naming the field, oversized bodies 413, an unreachable database 503
// with Retry-After, other defects are logged and 500.
import { Cause, Effect, Layer, Option } from "effect"
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

/** Fields an error carries for a header rather than for the body (TooManyRequests' `Retry-After`). */
const HEADER_FIELDS: Record<string, string> = { retryAfterSeconds: "retry-after" }
const BODY_FIELDS = new Set(["_tag", "message", "url"])

/**
 * The fields of an error's class beyond `message` and `url`: in the body (PayloadTooLarge's
 * `user_id`/`username`, as Forgejo's quota refusal), or as headers (`HEADER_FIELDS`); unset ones left out.
 */
const fieldsOf = (error: object) => {
  const fields = (error.constructor as { readonly fields?: object } | undefined)?.fields ?? {}
  const extra: Record<string, unknown> = {}
  let headers: Record<string, string> | undefined
  for (const key of Object.keys(fields)) {
    const value = (error as Record<string, unknown>)[key]
    if (BODY_FIELDS.has(key) || value === undefined) continue
    const header = HEADER_FIELDS[key]
    if (header === undefined) extra[key] = value
    else headers = { ...headers, [header]: String(value) }
  }
  return { extra, headers }
}

export const ErrorResponsesLive = Layer.effect(
  ErrorResponses,
  Effect.gen(function* () {
    const settings = yield* Settings
    const url = `${settings.server.ROOT_URL}api/swagger`
    const json = (status: number, message: string, headers?: Record<string, string>, extra?: object) =>
      HttpServerResponse.jsonUnsafe({ message, url, ...extra }, { status, ...(headers ? { headers } : {}) })

    // The one rule for refusals: an error whose class declares its status (`httpApiStatus`) is
    // answered with it. Anything else (`undefined`: it is not ours to type) ends as a defect below.
    const render = (
      error: unknown
    ): Effect.Effect<HttpServerResponse.HttpServerResponse, never, HttpServerRequest.HttpServerRequest> | undefined => {
      if (HttpApiError.HttpApiSchemaError.is(error)) return Effect.succeed(json(422, describeSchemaError(error)))
      if (HttpApiError.HttpApiPayloadTooLarge.is(error)) return Effect.succeed(json(413, error.message))
      if (error instanceof Errors.RepositoryMoved) {
        return HttpServerRequest.HttpServerRequest.useSync((request) =>
          HttpServerResponse.empty({
            status: 307,
            headers: { location: new URL(error.relocate(request.url), settings.server.ROOT_URL).toString() }
          })
        )
      }
      const status = Errors.statusOf(error)
      if (status === undefined) return undefined
      if (status === 404) return Effect.succeed(HttpServerResponse.empty({ status: 404 }))
      const { extra, headers } = fieldsOf(error as object)
      const message = (error as { message?: unknown }).message
      return Effect.succeed(json(status, typeof message === "string" ? message : "", headers, extra))
    }

    // What went wrong, as a response: a typed error (when no defect came with it) by `render`,
    // else a body over the limit (413), the database down (503), any other defect (500, logged).
    const onFailure = (cause: Cause.Cause<unknown>) => {
      if (Cause.hasInterruptsOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
      if (!Cause.hasDies(cause)) {
        const error = Cause.findErrorOption(cause)
        const rendered = Option.isSome(error) ? render(error.value) : undefined
        if (rendered !== undefined) return rendered
      }
      const defect = Cause.squash(cause)
      if (isBodyTooLarge(defect)) {
        return Effect.succeed(json(413, `request body is larger than ${settings.server.MAX_REQUEST_BODY} bytes`))
      }
      // The database is down: not a bug of this request, and one log line per outage.
      const outage = answerOutage(cause, url)
      if (outage !== undefined) return outage
      return Effect.logError("unhandled error while answering a request", cause).pipe(
        Effect.as(json(500, "internal server error"))
      )
    }
    // The API answers an unaccepted body type itself, as plain text: give it the error shape.
    const onSuccess = (response: HttpServerResponse.HttpServerResponse) =>
      response.status !== 415
        ? Effect.succeed(response)
        : HttpServerRequest.HttpServerRequest.useSync((request) =>
            json(415, `unsupported Content-Type: ${request.headers["content-type"] ?? "(none)"}`)
          )
    // One frame per request for both outcomes (not a map, a catch and a catch-all in a row).
    const handlers = { onSuccess, onFailure }

    return ErrorResponses.of((httpEffect) => Effect.matchCauseEffect(httpEffect, handlers))
  })
)

// Bad input stops at the edge (the rules are in Input.ts), answered 422 with a message, as every
// other request-decoding failure is, and logged as one line at Info, so that it never reaches the
// database or git and never becomes a defect (a 500 with a stack trace in the log):
// - `RequestTargetCheck`, before routing, for every route (API, git smart HTTP, WebFinger,
//   ActivityPub, key exports): a path, query or Basic user name that does not decode to text or
//   holds a control character;
// - `JsonBodyCheck`, API routes that take JSON, after authentication: a body that is not UTF-8, or
//   a string in it holding a NUL or a lone surrogate (the message names the field).
import { Context, Effect, Layer } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import * as Errors from "./Errors.ts"
import { basicUserNameProblem, jsonBodyProblem, requestTargetProblem } from "./Input.ts"

/** The request for a log line: method and path (never the query, which may carry a token), bounded. */
const described = (request: HttpServerRequest.HttpServerRequest) => {
  const path = request.url.split("?")[0]!
  return `${request.method} ${path.length > 200 ? `${path.slice(0, 200)}…` : path}`
}

const logRefusal = (request: HttpServerRequest.HttpServerRequest, problem: string) =>
  Effect.logInfo(`refused a malformed request: ${described(request)}: ${problem}`)

export const RequestTargetCheck = HttpRouter.middleware(
  Effect.gen(function* () {
    const settings = yield* Settings
    const url = `${settings.server.ROOT_URL}api/swagger`
    return (httpEffect) =>
      Effect.withFiber((fiber) => {
        const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
        const problem = requestTargetProblem(request.url) ?? basicUserNameProblem(request.headers["authorization"])
        if (problem === undefined) return httpEffect
        return Effect.as(
          logRefusal(request, problem),
          HttpServerResponse.jsonUnsafe({ message: problem, url }, { status: 422 })
        )
      })
  }),
  { global: true }
)

export class JsonBodyCheck extends HttpApiMiddleware.Service<JsonBodyCheck>()("hearth/http/JsonBodyCheck", {
  error: [Errors.ValidationFailed]
}) {}

const contentTypeOf = (request: HttpServerRequest.HttpServerRequest) =>
  (request.headers["content-type"] ?? "application/json").split(";")[0]!.trim().toLowerCase()

export const JsonBodyCheckLive = Layer.succeed(
  JsonBodyCheck,
  JsonBodyCheck.of((httpEffect, { endpoint }) => {
    // Decided once per endpoint: those without a JSON body pay nothing.
    const json = new Set([...endpoint.payload].filter(([, p]) => p.encoding._tag === "Json").map(([type]) => type))
    if (json.size === 0) return httpEffect
    return Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      if (request.method === "GET" || request.method === "HEAD" || !json.has(contentTypeOf(request))) return httpEffect
      // The body is read once and kept by the request: the payload decoding reads the same bytes.
      return Effect.flatMap(
        Effect.orDie(Effect.zip(request.arrayBuffer, request.text)),
        ([bytes, text]): typeof httpEffect => {
          const problem = jsonBodyProblem(new Uint8Array(bytes), text)
          if (problem === undefined) return httpEffect
          return Effect.andThen(logRefusal(request, problem), Effect.fail(Errors.validationFailed(problem) as never))
        }
      )
    })
  })
)

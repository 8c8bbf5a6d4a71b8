// Who is looking, for routes outside the API that serve stored files (attachments, release assets):
// the Authorization header (a token, or Basic, as Forgejo accepts on those paths), else the web
// session. Bad credentials see as anonymous.
import { Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import type { Principal } from "../http/Caller.ts"
import { Sessions } from "../sessions/Service.ts"
import { SESSION_COOKIE } from "../web/Web.ts"
import { parseAuthorization } from "./Authentication.ts"
import { Authenticator } from "./Authenticator.ts"

/** Builds the viewer function once the authenticator and sessions are at hand. */
export const makeViewerOf = Effect.gen(function* () {
  const authenticator = yield* Authenticator
  const sessions = yield* Sessions
  return (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function* () {
      const credentials = parseAuthorization(request.headers["authorization"])
      if (credentials.kind === "token") {
        return Option.getOrUndefined(yield* Effect.option(authenticator.byToken(credentials.token)))
      }
      if (credentials.kind === "basic") {
        return Option.getOrUndefined(
          yield* Effect.option(
            authenticator.byBasic(
              credentials.username,
              credentials.password,
              request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
            )
          )
        )
      }
      const cookie = request.cookies[SESSION_COOKIE]
      if (cookie === undefined) return undefined
      const session = Option.getOrUndefined(yield* sessions.resolve(cookie))
      return session?.stage === "signed-in"
        ? ({ user: session.user, scopes: undefined, method: "password" } satisfies Principal)
        : undefined
    })
})

// GPG keys over HTTP, and the armored export of a user's keys at `{ROOT_URL}{user}.gpg`.
import { Effect, Layer, Option, Schema } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HearthApi } from "../Api.ts"
import { parseAuthorization } from "../auth/Authentication.ts"
import { Authenticator } from "../auth/Authenticator.ts"
import { signedInCaller } from "../http/Caller.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { UsersService } from "../users/Service.ts"
import { GPGKey } from "./Api.ts"
import { GpgService } from "./Service.ts"

const Keys = Schema.Array(GPGKey)

export const GpgHttp = apiGroup(HearthApi, "gpg", (handlers) =>
  Effect.gen(function* () {
    const gpg = yield* GpgService
    const users = yield* UsersService

    const listOf = (
      query: { readonly page?: string | undefined; readonly limit?: string | undefined },
      name?: string
    ) =>
      Effect.gen(function* () {
        const me = yield* signedInCaller
        let owner = me.user
        if (name !== undefined) owner = yield* users.visible(me, name)
        const page = yield* resolvePage(query)
        const { rows, total } = yield* gpg.list(me, owner, page)
        yield* setListHeaders(page, total)
        return respond(Keys, rows)
      })

    return handlers
      .handle("listMyGpgKeys", ({ query }) => listOf(query))
      .handle("listUserGpgKeys", ({ params, query }) => listOf(query, params.username))
      .handle("getGpgKey", ({ params }) => Effect.flatMap(signedInCaller, (me) => gpg.get(me, params.id)))
      .handle("addGpgKey", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => gpg.add(me, payload.armored_public_key, payload.armored_signature))
      )
      .handle("deleteGpgKey", ({ params }) => Effect.flatMap(signedInCaller, (me) => gpg.remove(me, params.id)))
      .handle("getGpgKeyToken", () => Effect.map(signedInCaller, (me) => gpg.token(me.user)))
      .handle("verifyGpgKey", ({ payload }) =>
        Effect.flatMap(signedInCaller, (me) => gpg.verify(me, payload.key_id, payload.armored_signature))
      )
  })
)

/**
 * `GET /{user}.gpg`: the user's public keys as one armored block (as Forgejo), for anyone who may
 * see the account (credentials in `Authorization` are honoured, as for git over HTTP).
 */
export const GpgExportRoutes = Layer.unwrap(
  Effect.gen(function* () {
    const gpg = yield* GpgService
    const users = yield* UsersService
    const authenticator = yield* Authenticator
    const notFound = HttpServerResponse.empty({ status: 404 })

    const handler = Effect.gen(function* () {
      const request = yield* HttpServerRequest.HttpServerRequest
      const params = yield* HttpRouter.params
      const credentials = parseAuthorization(request.headers["authorization"])
      const viewer =
        credentials.kind === "none"
          ? undefined
          : credentials.kind === "token"
            ? yield* Effect.option(authenticator.byToken(credentials.token)).pipe(Effect.map(Option.getOrUndefined))
            : yield* Effect.option(
                authenticator.byBasic(
                  credentials.username,
                  credentials.password,
                  request.headers["x-forgejo-otp"] || request.headers["x-gitea-otp"] || undefined
                )
              ).pipe(Effect.map(Option.getOrUndefined))
      // A web route: unknown, hidden and (for a public-only token) non-public accounts alike are 404.
      const found = yield* Effect.option(users.visible(viewer, params.user ?? ""))
      if (Option.isNone(found) || found.value.type !== "user") return notFound
      return HttpServerResponse.text(yield* gpg.exportArmored(found.value), {
        contentType: "text/plain; charset=utf-8"
      })
    })
    return HttpRouter.add("GET", "/:user.gpg", handler)
  })
)

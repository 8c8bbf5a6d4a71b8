// OAuth2 application rules: a name (at most 255 characters) and at least one redirect URI,
// each an absolute URI without a fragment (RFC 6749 §3.1.2): http(s) with a host, or a native
// app's private-use scheme in reverse-domain form (RFC 8252 §7.1, e.g. com.example.app:/cb).
// The client id is a random UUID; the secret ("gto_" + 52 base32 characters, as Forgejo) is
// returned once and stored as a SHA-256.

import { createHash, randomBytes, randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { NAME_MAX } from "../lib/Names.ts"
import type { ApplicationOptions, OAuth2Application } from "./Api.ts"
import { type ApplicationRow, OAuth2Repo } from "./Repo.ts"

const MAX_NAME = NAME_MAX.oauth2App
const MAX_URIS = 32

const BASE32 = "abcdefghijklmnopqrstuvwxyz234567"
const newSecret = () => {
  const bytes = randomBytes(32)
  let bits = 0
  let value = 0
  let out = ""
  for (const byte of bytes) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31]
  return `gto_${out}`
}
export const hashSecret = (secret: string) => createHash("sha256").update(secret).digest("hex")

/** Why a redirect URI is refused, or `undefined` when it is fine. */
export const redirectUriProblem = (uri: string): string | undefined => {
  const reason = (why: string) => `[RedirectURIs]: invalid redirect URI "${uri}": ${why}`
  if (uri.trim() !== uri || uri === "") return reason("it must be an absolute URI without surrounding spaces")
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return reason("it is not an absolute URI")
  }
  if (uri.includes("#")) return reason("it must not have a fragment (#…)")
  const scheme = url.protocol.slice(0, -1)
  if (scheme === "http" || scheme === "https") {
    if (url.hostname === "") return reason("it has no host")
    if (url.username !== "" || url.password !== "") return reason("it must not carry a user name or password")
    return undefined
  }
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return undefined
  return reason("use http, https, or a reverse-domain scheme for native apps (e.g. com.example.app:/callback)")
}

export class OAuth2Service extends Context.Service<
  OAuth2Service,
  {
    readonly create: (
      userId: number,
      options: ApplicationOptions
    ) => Effect.Effect<OAuth2Application, Errors.ValidationFailed>
    readonly list: (userId: number, page: Page) => Effect.Effect<{ rows: Array<OAuth2Application>; total: number }>
    readonly get: (userId: number, id: string) => Effect.Effect<OAuth2Application, Errors.NotFound>
    readonly update: (
      userId: number,
      id: string,
      options: ApplicationOptions
    ) => Effect.Effect<OAuth2Application, Errors.NotFound | Errors.ValidationFailed>
    readonly remove: (userId: number, id: string) => Effect.Effect<void, Errors.NotFound>
  }
>()("hearth/oauth2/OAuth2Service") {
  static readonly layer = Layer.effect(
    OAuth2Service,
    Effect.gen(function* () {
      const repo = yield* OAuth2Repo
      const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))

      const present = (row: ApplicationRow, secret = ""): OAuth2Application => ({
        id: row.id,
        name: row.name,
        client_id: row.clientId,
        client_secret: secret,
        redirect_uris: [...row.redirectUris],
        confidential_client: row.confidentialClient,
        created: formatTime(row.createdAt)
      })

      // Ids that are not whole positive numbers name no application.
      const parseId = (id: string) => {
        const n = /^\d{1,18}$/.test(id) ? Number(id) : 0
        return n > 0 && Number.isSafeInteger(n) ? Effect.succeed(n) : Effect.fail(Errors.notFound())
      }

      const checkName = (name: string) => {
        const trimmed = name.trim()
        if (trimmed === "") return invalid("[Name]: Required")
        if (trimmed.length > MAX_NAME) return invalid(`[Name]: MaxSize(${MAX_NAME})`)
        return Effect.succeed(trimmed)
      }
      const checkUris = (uris: ReadonlyArray<string>) =>
        Effect.gen(function* () {
          if (uris.length === 0) return yield* invalid("[RedirectURIs]: Required")
          if (uris.length > MAX_URIS) return yield* invalid(`[RedirectURIs]: at most ${MAX_URIS} redirect URIs`)
          for (const uri of uris) {
            const problem = redirectUriProblem(uri)
            if (problem !== undefined) return yield* invalid(problem)
          }
          return [...new Set(uris)]
        })

      const found = <A>(option: Option.Option<A>) =>
        Option.isSome(option) ? Effect.succeed(option.value) : Effect.fail(Errors.notFound())

      return OAuth2Service.of({
        create: (userId, options) =>
          Effect.gen(function* () {
            const name = yield* checkName(options.name ?? "")
            const redirectUris = yield* checkUris(options.redirect_uris ?? [])
            const secret = newSecret()
            const row = yield* repo.insert({
              userId,
              name,
              clientId: randomUUID(),
              secretHash: hashSecret(secret),
              redirectUris,
              confidentialClient: options.confidential_client ?? false
            })
            return present(row, secret)
          }),
        list: (userId, page) =>
          Effect.map(repo.list(userId, page.limit, page.offset), ({ rows, total }) => ({
            rows: rows.map((row) => present(row)),
            total
          })),
        get: (userId, id) =>
          Effect.gen(function* () {
            const n = yield* parseId(id)
            return present(yield* found(yield* repo.find(userId, n)))
          }),
        // Only the members given change; the secret never does.
        update: (userId, id, options) =>
          Effect.gen(function* () {
            const n = yield* parseId(id)
            yield* found(yield* repo.find(userId, n))
            const name = options.name === undefined ? undefined : yield* checkName(options.name)
            const redirectUris =
              options.redirect_uris === undefined ? undefined : yield* checkUris(options.redirect_uris)
            const row = yield* found(
              yield* repo.update(userId, n, {
                name,
                redirectUris,
                confidentialClient: options.confidential_client
              })
            )
            return present(row)
          }),
        remove: (userId, id) =>
          Effect.gen(function* () {
            const n = yield* parseId(id)
            if (!(yield* repo.remove(userId, n))) return yield* Errors.notFound()
          })
      })
    })
  )
}

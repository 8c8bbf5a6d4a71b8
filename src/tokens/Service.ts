// Token rules: unique names per user, valid non-empty scopes, and cache invalidation on delete.

import { randomBytes } from "node:crypto"
import { Context, Effect, Layer } from "effect"
import { Authenticator } from "../auth/Authenticator.ts"
import { formatScopes, InvalidScope, isEmptyScope, parseScopes } from "../auth/Scopes.ts"
import { onAlreadyExists } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { NAME_MAX } from "../lib/Names.ts"
import type { UserRow } from "../users/Repo.ts"
import { type TokenRow, TokensRepo } from "./Repo.ts"

export interface CreatedToken {
  readonly row: TokenRow
  /** The token itself, shown once. */
  readonly token: string
}

export class TokensService extends Context.Service<
  TokensService,
  {
    readonly create: (
      user: UserRow,
      input: { readonly name: string; readonly scopes: ReadonlyArray<string> }
    ) => Effect.Effect<CreatedToken, Errors.BadRequest | Errors.ValidationFailed>
    readonly list: (user: UserRow, page: Page) => Effect.Effect<{ rows: Array<TokenRow>; total: number }>
    /** Deletes by numeric id or by name: 404 when nothing matches, 422 when a name is ambiguous. */
    readonly remove: (user: UserRow, idOrName: string) => Effect.Effect<void, Errors.NotFound | Errors.ValidationFailed>
  }
>()("hearth/tokens/TokensService") {
  static readonly layer = Layer.effect(
    TokensService,
    Effect.gen(function* () {
      const repo = yield* TokensRepo
      const authenticator = yield* Authenticator
      const duplicate = Errors.validationFailed("access token name has been used already")

      return TokensService.of({
        create: (user, input) =>
          Effect.gen(function* () {
            const name = input.name.trim()
            if (name === "") return yield* Errors.validationFailed("[Name]: Required")
            if (name.length > NAME_MAX.token)
              return yield* Errors.validationFailed(`[Name]: MaxSize (${NAME_MAX.token})`)
            const parsed = yield* Effect.try({
              try: () => parseScopes(input.scopes),
              catch: (e) =>
                Errors.badRequest(
                  `invalid access token scope provided: ${e instanceof InvalidScope ? e.message : String(e)}`
                )
            })
            if (isEmptyScope(parsed)) return yield* Errors.badRequest("access token must have a scope")
            const token = randomBytes(20).toString("hex")
            const row = yield* repo
              .insert({ userId: user.id, name, token, scopes: formatScopes(parsed) })
              .pipe(onAlreadyExists(() => duplicate))
            return { row, token }
          }),
        list: (user, page) => repo.listByUser(user.id, page.limit, page.offset),
        remove: (user, idOrName) =>
          Effect.gen(function* () {
            // A number is an id first; one that is no token's id may still be a token's name.
            let matches = /^\d+$/.test(idOrName) ? yield* repo.findById(user.id, Number(idOrName)) : []
            if (matches.length === 0) matches = yield* repo.findByName(user.id, idOrName)
            if (matches.length === 0) return yield* Errors.notFound()
            if (matches.length > 1) {
              return yield* Errors.validationFailed(`multiple matches for token name '${idOrName}'`)
            }
            yield* repo.remove(matches[0]!.id)
            yield* authenticator.invalidate
          })
      })
    })
  )
}

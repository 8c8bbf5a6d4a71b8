// SQL for personal access tokens. Only a SHA-256 of the token is stored.

import { createHash } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"

export interface TokenRow {
  readonly id: number
  readonly userId: number
  readonly name: string
  readonly lastEight: string
  readonly scopes: ReadonlyArray<string>
  readonly createdAt: Date
  readonly updatedAt: Date
}

export const hashToken = (token: string): string => createHash("sha256").update(token).digest("hex")

const toTokenRow = (r: Record<string, any>): TokenRow => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  name: r.name,
  lastEight: r.token_last_eight,
  scopes: (r.scopes as string).split(","),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

export class TokensRepo extends Context.Service<
  TokensRepo,
  {
    readonly insert: (t: {
      userId: number
      name: string
      token: string
      scopes: ReadonlyArray<string>
    }) => Effect.Effect<TokenRow, AlreadyExists>
    readonly findByToken: (token: string) => Effect.Effect<Option.Option<TokenRow>>
    readonly listByUser: (
      userId: number,
      limit: number,
      offset: number
    ) => Effect.Effect<{ rows: Array<TokenRow>; total: number }>
    readonly findById: (userId: number, id: number) => Effect.Effect<Array<TokenRow>>
    readonly findByName: (userId: number, name: string) => Effect.Effect<Array<TokenRow>>
    readonly remove: (id: number) => Effect.Effect<void>
  }
>()("hearth/tokens/TokensRepo") {
  static readonly layer = Layer.effect(
    TokensRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return TokensRepo.of(
        sqlBoundary({
          insert: ({ name, scopes, token, userId }) =>
            uniqueViolation(
              Effect.map(
                sql`INSERT INTO access_tokens ${sql.insert({
                  user_id: userId,
                  name,
                  token_hash: hashToken(token),
                  token_last_eight: token.slice(-8),
                  scopes: scopes.join(",")
                })} RETURNING *`,
                (rows) => toTokenRow(rows[0]!)
              )
            ),
          findByToken: (token) =>
            Effect.map(sql`SELECT * FROM access_tokens WHERE token_hash = ${hashToken(token)}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toTokenRow)
            ),
          listByUser: (userId, limit, offset) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM access_tokens WHERE user_id = ${userId}`
              const rows = yield* sql`SELECT * FROM access_tokens WHERE user_id = ${userId}
              ORDER BY id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toTokenRow), total: Number(count!.n) }
            }),
          findById: (userId, id) =>
            Effect.map(sql`SELECT * FROM access_tokens WHERE user_id = ${userId} AND id = ${id}`, (rows) =>
              rows.map(toTokenRow)
            ),
          findByName: (userId, name) =>
            Effect.map(sql`SELECT * FROM access_tokens WHERE user_id = ${userId} AND name = ${name}`, (rows) =>
              rows.map(toTokenRow)
            ),
          remove: (id) => Effect.asVoid(sql`DELETE FROM access_tokens WHERE id = ${id}`)
        })
      )
    })
  )
}

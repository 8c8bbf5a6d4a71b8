// SQL for OAuth2 applications. Only a SHA-256 of the client secret is stored.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

export interface ApplicationRow {
  readonly id: number
  readonly userId: number
  readonly name: string
  readonly clientId: string
  readonly redirectUris: ReadonlyArray<string>
  readonly confidentialClient: boolean
  readonly createdAt: Date
}

const toRow = (r: Record<string, any>): ApplicationRow => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  name: r.name,
  clientId: r.client_id,
  redirectUris: JSON.parse(r.redirect_uris),
  confidentialClient: r.confidential_client,
  createdAt: r.created_at
})

export interface ApplicationChanges {
  readonly name?: string | undefined
  readonly redirectUris?: ReadonlyArray<string> | undefined
  readonly confidentialClient?: boolean | undefined
}

export class OAuth2Repo extends Context.Service<
  OAuth2Repo,
  {
    readonly insert: (app: {
      readonly userId: number
      readonly name: string
      readonly clientId: string
      readonly secretHash: string
      readonly redirectUris: ReadonlyArray<string>
      readonly confidentialClient: boolean
    }) => Effect.Effect<ApplicationRow>
    readonly list: (
      userId: number,
      limit: number,
      offset: number
    ) => Effect.Effect<{ rows: Array<ApplicationRow>; total: number }>
    /** The user's application with this id (another user's is none). */
    readonly find: (userId: number, id: number) => Effect.Effect<Option.Option<ApplicationRow>>
    readonly update: (
      userId: number,
      id: number,
      changes: ApplicationChanges
    ) => Effect.Effect<Option.Option<ApplicationRow>>
    readonly remove: (userId: number, id: number) => Effect.Effect<boolean>
  }
>()("hearth/oauth2/OAuth2Repo") {
  static readonly layer = Layer.effect(
    OAuth2Repo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return OAuth2Repo.of(
        sqlBoundary({
          insert: (app) =>
            Effect.map(
              sql`INSERT INTO oauth2_applications ${sql.insert({
                user_id: app.userId,
                name: app.name,
                client_id: app.clientId,
                client_secret_hash: app.secretHash,
                redirect_uris: JSON.stringify(app.redirectUris),
                confidential_client: app.confidentialClient
              })} RETURNING *`,
              (rows) => toRow(rows[0]!)
            ),
          list: (userId, limit, offset) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM oauth2_applications WHERE user_id = ${userId}`
              const rows = yield* sql`SELECT * FROM oauth2_applications WHERE user_id = ${userId}
              ORDER BY id LIMIT ${limit} OFFSET ${offset}`
              return { rows: rows.map(toRow), total: Number(count!.n) }
            }),
          find: (userId, id) =>
            Effect.map(sql`SELECT * FROM oauth2_applications WHERE user_id = ${userId} AND id = ${id}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toRow)
            ),
          update: (userId, id, changes) => {
            const set: Record<string, unknown> = {}
            if (changes.name !== undefined) set.name = changes.name
            if (changes.redirectUris !== undefined) set.redirect_uris = JSON.stringify(changes.redirectUris)
            if (changes.confidentialClient !== undefined) set.confidential_client = changes.confidentialClient
            const assignments =
              Object.keys(set).length === 0 ? sql`updated_at = now()` : sql`${sql.update(set)}, updated_at = now()`
            return Effect.map(
              sql`UPDATE oauth2_applications SET ${assignments} WHERE user_id = ${userId} AND id = ${id} RETURNING *`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toRow)
            )
          },
          remove: (userId, id) =>
            Effect.map(
              sql`DELETE FROM oauth2_applications WHERE user_id = ${userId} AND id = ${id} RETURNING id`,
              (rows) => rows.length > 0
            )
        })
      )
    })
  )
}

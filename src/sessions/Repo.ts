// SQL for web sessions (table in migration 0017_web_sessions). Rows are found by the hash of the
// cookie's id; the id itself is never stored.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

export type SessionStage = "signed-in" | "two-factor"

export interface SessionRow {
  readonly userId: number
  readonly stage: SessionStage
  readonly passwordStamp: string
  readonly expiresAt: Date
}

export class SessionsRepo extends Context.Service<
  SessionsRepo,
  {
    readonly insert: (row: SessionRow & { readonly idHash: string }) => Effect.Effect<void>
    readonly find: (idHash: string) => Effect.Effect<Option.Option<SessionRow>>
    /** Moves the expiry (a session in use lives on) and the password stamp. */
    readonly update: (
      idHash: string,
      changes: { readonly expiresAt?: Date; readonly passwordStamp?: string }
    ) => Effect.Effect<void>
    readonly remove: (idHash: string) => Effect.Effect<void>
    /** Every session of the account but `keepIdHash` (if given); how many went. */
    readonly removeOfUser: (userId: number, keepIdHash: string | undefined) => Effect.Effect<number>
    readonly removeExpired: Effect.Effect<void>
  }
>()("hearth/sessions/SessionsRepo") {
  static readonly layer = Layer.effect(
    SessionsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return SessionsRepo.of(
        sqlBoundary({
          insert: (row) =>
            Effect.asVoid(sql`INSERT INTO web_sessions (id_hash, user_id, stage, password_stamp, expires_at)
              VALUES (${row.idHash}, ${row.userId}, ${row.stage}, ${row.passwordStamp}, ${row.expiresAt})`),
          find: (idHash) =>
            Effect.map(
              sql`SELECT user_id, stage, password_stamp, expires_at FROM web_sessions WHERE id_hash = ${idHash}`,
              (rows) =>
                Option.map(
                  Option.fromNullishOr(rows[0]),
                  (r): SessionRow => ({
                    userId: Number(r.user_id),
                    stage: r.stage as SessionStage,
                    passwordStamp: r.password_stamp as string,
                    expiresAt: new Date(r.expires_at as string | Date)
                  })
                )
            ),
          update: (idHash, changes) =>
            Effect.asVoid(sql`UPDATE web_sessions SET
              expires_at = COALESCE(${changes.expiresAt ?? null}::timestamptz, expires_at),
              password_stamp = COALESCE(${changes.passwordStamp ?? null}::text, password_stamp)
              WHERE id_hash = ${idHash}`),
          remove: (idHash) => Effect.asVoid(sql`DELETE FROM web_sessions WHERE id_hash = ${idHash}`),
          removeOfUser: (userId, keepIdHash) =>
            Effect.map(
              keepIdHash === undefined
                ? sql`DELETE FROM web_sessions WHERE user_id = ${userId} RETURNING user_id`
                : sql`DELETE FROM web_sessions WHERE user_id = ${userId} AND id_hash <> ${keepIdHash} RETURNING user_id`,
              (rows) => rows.length
            ),
          removeExpired: Effect.asVoid(sql`DELETE FROM web_sessions WHERE expires_at < now()`)
        })
      )
    })
  )
}

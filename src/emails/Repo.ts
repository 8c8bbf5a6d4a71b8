// SQL for the addresses added to accounts (the primary address is users.email).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { type AlreadyExists, sqlBoundary, uniqueViolation } from "../db/Boundary.ts"

export interface EmailRow {
  readonly id: number
  readonly userId: number
  readonly email: string
  readonly isActivated: boolean
}

const toEmailRow = (r: Record<string, any>): EmailRow => ({
  id: Number(r.id),
  userId: Number(r.user_id),
  email: r.email,
  isActivated: r.is_activated
})

export interface NewEmail {
  readonly email: string
  readonly activated: boolean
  /** SHA-256 of the activation token, for an address that is not activated yet. */
  readonly activationHash: string | null
  readonly activationExpires: Date | null
}

export class EmailsRepo extends Context.Service<
  EmailsRepo,
  {
    readonly listByUser: (userId: number) => Effect.Effect<Array<EmailRow>>
    /**
     * Which of these lower-cased addresses are taken, as anyone's primary or added address. An
     * added address that was never activated and whose token has expired is released (deleted), so
     * that nobody can hold on to someone else's address by adding it.
     */
    readonly taken: (lowerEmails: ReadonlyArray<string>) => Effect.Effect<Array<string>>
    readonly insertAll: (
      userId: number,
      emails: ReadonlyArray<NewEmail>
    ) => Effect.Effect<Array<EmailRow>, AlreadyExists>
    readonly deleteAll: (userId: number, lowerEmails: ReadonlyArray<string>) => Effect.Effect<number>
    /** Activates the caller's address whose unexpired token has this hash. */
    readonly activate: (userId: number, hash: string) => Effect.Effect<Option.Option<EmailRow>>
    /** The lower-cased activated addresses of an account, its primary one included. */
    readonly activatedOf: (userId: number) => Effect.Effect<Array<string>>
    readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  }
>()("hearth/emails/EmailsRepo") {
  static readonly layer = Layer.effect(
    EmailsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return EmailsRepo.of(
        sqlBoundary({
          listByUser: (userId) =>
            Effect.map(sql`SELECT * FROM email_addresses WHERE user_id = ${userId} ORDER BY id`, (rows) =>
              rows.map(toEmailRow)
            ),
          taken: (lowerEmails) =>
            lowerEmails.length === 0
              ? Effect.succeed([])
              : Effect.andThen(
                  sql`DELETE FROM email_addresses WHERE lower_email IN ${sql.in(lowerEmails)}
              AND NOT is_activated AND activation_expires < now()`,
                  Effect.map(
                    sql`SELECT lower(email) AS e FROM users WHERE type = 0 AND lower(email) IN ${sql.in(lowerEmails)}
                UNION SELECT lower_email AS e FROM email_addresses WHERE lower_email IN ${sql.in(lowerEmails)}`,
                    (rows) => rows.map((r) => r.e as string)
                  )
                ),
          insertAll: (userId, emails) =>
            uniqueViolation(
              emails.length === 0
                ? Effect.succeed([])
                : Effect.map(
                    sql`INSERT INTO email_addresses ${sql.insert(
                      emails.map(
                        (e): Record<string, unknown> => ({
                          user_id: userId,
                          email: e.email,
                          lower_email: e.email.toLowerCase(),
                          is_activated: e.activated,
                          activation_hash: e.activationHash,
                          activation_expires: e.activationExpires
                        })
                      ) as unknown as readonly [Record<string, unknown>, ...Array<Record<string, unknown>>]
                    )} RETURNING *`,
                    (rows) => rows.map(toEmailRow)
                  )
            ),
          deleteAll: (userId, lowerEmails) =>
            lowerEmails.length === 0
              ? Effect.succeed(0)
              : Effect.map(
                  sql`DELETE FROM email_addresses WHERE user_id = ${userId} AND lower_email IN ${sql.in(lowerEmails)}
              RETURNING id`,
                  (rows) => rows.length
                ),
          activate: (userId, hash) =>
            Effect.map(
              sql`UPDATE email_addresses SET is_activated = true, activation_hash = NULL, activation_expires = NULL
              WHERE user_id = ${userId} AND activation_hash = ${hash} AND activation_expires > now()
              RETURNING *`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toEmailRow)
            ),
          activatedOf: (userId) =>
            Effect.map(
              sql`SELECT lower(email) AS e FROM users WHERE id = ${userId} AND email <> ''
              UNION SELECT lower_email AS e FROM email_addresses WHERE user_id = ${userId} AND is_activated`,
              (rows) => rows.map((r) => r.e as string)
            ),
          transaction: sql.withTransaction
        })
      )
    })
  )
}

// E-mail rules: the account's primary address (users.email) is listed as primary and verified;
// an address may belong to one account only on the whole instance; added addresses are
// verified at once when a site administrator adds them, otherwise by an activation token.
// Hearth has no mailer yet: the token is written to the log (Info) for the administrator to
// pass on, and the owner sends it to POST /user/emails/activate.

import { createHash, randomBytes } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import * as Errors from "../http/Errors.ts"
import type { UserRow } from "../users/Repo.ts"
import { emailProblem, UsersService } from "../users/Service.ts"
import type { Email } from "./Api.ts"
import { EmailsRepo, type NewEmail } from "./Repo.ts"

/** How long an activation token stays valid (Forgejo's default ACTIVE_CODE_LIVE_MINUTES). */
export const ACTIVATION_MINUTES = 180

const hashToken = (token: string) => createHash("sha256").update(token).digest("hex")

export class EmailsService extends Context.Service<
  EmailsService,
  {
    readonly list: (user: UserRow) => Effect.Effect<Array<Email>>
    /** Adds all the addresses or none; answers the added ones. */
    readonly add: (
      user: UserRow,
      addedByAdmin: boolean,
      emails: ReadonlyArray<string>
    ) => Effect.Effect<Array<Email>, Errors.ValidationFailed>
    /** Deletes all the addresses or none. */
    readonly remove: (
      user: UserRow,
      emails: ReadonlyArray<string>
    ) => Effect.Effect<void, Errors.ValidationFailed | Errors.NotFound>
    readonly activate: (user: UserRow, token: string) => Effect.Effect<Email, Errors.ValidationFailed>
    /**
     * Makes an activated address of the account its primary one (Forgejo's `MakeEmailPrimary`, a
     * web action only); the former primary stays as an activated address. 404 for an address the
     * account does not have, 422 for one not activated yet.
     */
    readonly makePrimary: (
      user: UserRow,
      email: string
    ) => Effect.Effect<UserRow, Errors.ValidationFailed | Errors.NotFound>
    /** The account's activated addresses, lower-cased (the primary one included). */
    readonly activated: (userId: number) => Effect.Effect<ReadonlySet<string>>
  }
>()("hearth/emails/EmailsService") {
  static readonly layer = Layer.effect(
    EmailsService,
    Effect.gen(function* () {
      const repo = yield* EmailsRepo
      const users = yield* UsersService
      const invalid = (message: string) => Effect.fail(Errors.validationFailed(message))
      const toEmail = (user: UserRow, email: string, verified: boolean, primary: boolean): Email => ({
        email,
        verified,
        primary,
        user_id: user.id,
        username: user.name
      })

      return EmailsService.of({
        list: (user) =>
          Effect.map(repo.listByUser(user.id), (rows) => [
            ...(user.email === "" ? [] : [toEmail(user, user.email, true, true)]),
            ...rows
              .filter((row) => row.email.toLowerCase() !== user.email.toLowerCase())
              .map((row) => toEmail(user, row.email, row.isActivated, false))
          ]),
        add: (user, addedByAdmin, emails) =>
          Effect.gen(function* () {
            const wanted = new Map<string, string>()
            for (const raw of emails) {
              const email = raw.trim()
              if (emailProblem(email) !== undefined) return yield* invalid(`Email address has invalid format: ${raw}`)
              if (!wanted.has(email.toLowerCase())) wanted.set(email.toLowerCase(), email)
            }
            if (wanted.size === 0) return yield* invalid("Email list empty")
            const taken = yield* repo.taken([...wanted.keys()])
            if (taken.length > 0)
              return yield* invalid(`Email address has been used: ${wanted.get(taken[0]!) ?? taken[0]}`)
            const tokens = new Map<string, string>()
            const expires = new Date(Date.now() + ACTIVATION_MINUTES * 60_000)
            const rows: Array<NewEmail> = [...wanted.values()].map((email) => {
              if (addedByAdmin) return { email, activated: true, activationHash: null, activationExpires: null }
              const token = randomBytes(20).toString("hex")
              tokens.set(email, token)
              return { email, activated: false, activationHash: hashToken(token), activationExpires: expires }
            })
            // Another account took one of them meanwhile: the unique index answers for it.
            const inserted = yield* repo
              .insertAll(user.id, rows)
              .pipe(
                Effect.catchTag("AlreadyExists", () =>
                  invalid(`Email address has been used: ${[...wanted.values()].join(", ")}`)
                )
              )
            for (const [email, token] of tokens) {
              yield* Effect.logInfo(
                `E-mail address ${email} was added to the account ${user.name} and needs activation. ` +
                  `Hearth sends no mail, so pass this token on to the account's owner, who activates the address ` +
                  `with POST /api/v1/user/emails/activate {"token": "${token}"} within ${ACTIVATION_MINUTES} minutes.`
              )
            }
            return inserted.map((row) => toEmail(user, row.email, row.isActivated, false))
          }),
        remove: (user, emails) =>
          Effect.gen(function* () {
            const lower = [...new Set(emails.map((e) => e.trim().toLowerCase()))]
            if (lower.length === 0) return
            const primary = lower.find((e) => e === user.email.toLowerCase())
            if (primary !== undefined) {
              return yield* invalid(`Primary e-mail address cannot be deleted: ${primary}`)
            }
            // All or nothing: an address the account does not have is 404 and nothing is deleted.
            yield* repo.transaction(
              Effect.gen(function* () {
                const deleted = yield* repo.deleteAll(user.id, lower)
                if (deleted !== lower.length) return yield* Errors.notFound()
              })
            )
          }),
        activate: (user, token) =>
          Effect.gen(function* () {
            const found = yield* repo.activate(user.id, hashToken(token.trim()))
            if (Option.isNone(found)) {
              return yield* invalid(
                "The activation token is invalid, has expired, or is for another account's address: " +
                  "delete the address and add it again to get a new token"
              )
            }
            return toEmail(user, found.value.email, true, false)
          }),
        activated: (userId) => Effect.map(repo.activatedOf(userId), (rows) => new Set(rows)),
        makePrimary: (user, email) =>
          Effect.gen(function* () {
            const lower = email.trim().toLowerCase()
            if (lower === user.email.toLowerCase()) return user
            const rows = yield* repo.listByUser(user.id)
            const row = rows.find((r) => r.email.toLowerCase() === lower)
            if (row === undefined) return yield* Errors.notFound()
            if (!row.isActivated) {
              return yield* invalid(
                `E-mail address ${row.email} is not activated yet: activate it before making it primary`
              )
            }
            return yield* repo.transaction(
              Effect.gen(function* () {
                const previous = user.email
                if (previous !== "" && !rows.some((r) => r.email.toLowerCase() === previous.toLowerCase())) {
                  yield* repo
                    .insertAll(user.id, [
                      { email: previous, activated: true, activationHash: null, activationExpires: null }
                    ])
                    .pipe(Effect.catchTag("AlreadyExists", () => invalid(`Email address has been used: ${previous}`)))
                }
                return yield* users.update(user, { email: row.email })
              })
            )
          })
      })
    })
  )
}

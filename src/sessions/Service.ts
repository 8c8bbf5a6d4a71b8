// Web sessions: what a browser's cookie stands for. A session is opened by a correct password (and
// passcode, with two-factor), lives `[session] SESSION_LIFE_TIME` seconds unused (each use moves
// its end, at most once per tenth of that time, so that reading pages does not write a row each
// time), and ends at sign-out, when its account's password changes (whoever changes it: web, API,
// CLI — the stored stamp no longer matches), or when the account may no longer sign in. The id is
// 32 random bytes; the database keeps only its SHA-256 (Forgejo keeps sessions in its `session`
// table by the cookie's value).
import { createHash, randomBytes } from "node:crypto"
import { Context, Effect, Layer, Option } from "effect"
import { signInProhibited } from "../auth/AccountState.ts"
import { Settings } from "../config/Settings.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { type SessionStage, SessionsRepo } from "./Repo.ts"

/** How long a password may wait for its passcode (Forgejo keeps the two-factor step in the session too). */
const TWO_FACTOR_STEP_SECONDS = 300

export interface Session {
  /** The cookie's value (the raw id). */
  readonly id: string
  readonly user: UserRow
  readonly stage: SessionStage
}

const hashOf = (id: string) => createHash("sha256").update(id).digest("hex")
/** A digest of the account's password hash: changes with the password, reveals nothing of it. */
const stampOf = (user: UserRow) => createHash("sha256").update(`hearth-session:${user.passwdHash}`).digest("hex")
/** Session ids are 43 characters of base64url (32 bytes); anything else names no session. */
const ID_PATTERN = /^[A-Za-z0-9_-]{43}$/

export class Sessions extends Context.Service<
  Sessions,
  {
    /** A new session for `user` at `stage`; its id goes into the cookie. */
    readonly open: (user: UserRow, stage: SessionStage) => Effect.Effect<Session>
    /** The session a cookie names, if it is still valid (an invalid one is removed). */
    readonly resolve: (id: string) => Effect.Effect<Option.Option<Session>>
    readonly end: (id: string) => Effect.Effect<void>
    /** Ends every other session of the session's account (after a password change there). */
    readonly endOthers: (session: Session, user: UserRow) => Effect.Effect<void>
  }
>()("hearth/sessions/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function* () {
      const repo = yield* SessionsRepo
      const users = yield* UsersRepo
      const lifeMs = (yield* Settings).session.SESSION_LIFE_TIME * 1000
      const lifetimeOf = (stage: SessionStage) =>
        stage === "two-factor" ? Math.min(lifeMs, TWO_FACTOR_STEP_SECONDS * 1000) : lifeMs

      return Sessions.of({
        open: (user, stage) =>
          Effect.gen(function* () {
            // Expired rows go when new ones come: the table holds about the sessions in use.
            yield* repo.removeExpired
            const id = randomBytes(32).toString("base64url")
            yield* repo.insert({
              idHash: hashOf(id),
              userId: user.id,
              stage,
              passwordStamp: stampOf(user),
              expiresAt: new Date(Date.now() + lifetimeOf(stage))
            })
            return { id, user, stage }
          }),
        resolve: (id) =>
          Effect.gen(function* () {
            if (!ID_PATTERN.test(id)) return Option.none()
            const idHash = hashOf(id)
            const row = yield* repo.find(idHash)
            if (Option.isNone(row)) return Option.none()
            const now = Date.now()
            const user = row.value.expiresAt.getTime() > now ? yield* users.findById(row.value.userId) : Option.none()
            if (
              Option.isNone(user) ||
              user.value.type !== "user" ||
              signInProhibited(user.value) ||
              stampOf(user.value) !== row.value.passwordStamp
            ) {
              yield* repo.remove(idHash)
              return Option.none()
            }
            const lifetime = lifetimeOf(row.value.stage)
            // Only a signed-in session lives on by use; the two-factor step has a fixed deadline.
            if (row.value.stage === "signed-in" && row.value.expiresAt.getTime() - now < lifetime - lifetime / 10) {
              yield* repo.update(idHash, { expiresAt: new Date(now + lifetime) })
            }
            return Option.some({ id, user: user.value, stage: row.value.stage })
          }),
        end: (id) => (ID_PATTERN.test(id) ? repo.remove(hashOf(id)) : Effect.void),
        endOthers: (session, user) =>
          Effect.gen(function* () {
            const idHash = hashOf(session.id)
            yield* repo.removeOfUser(user.id, idHash)
            yield* repo.update(idHash, { passwordStamp: stampOf(user) })
          })
      })
    })
  )
}

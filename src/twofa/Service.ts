// TOTP second factor. Forgejo enrols through its web UI only, so Hearth adds API routes for it
// (see Api.ts). The shared secret is stored encrypted with [security] SECRET_KEY.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { SqlError } from "effect/sql/SqlError"
import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto"
import { Secret, TOTP } from "otpauth"
import { Settings } from "../config/Settings.ts"

export interface Enrollment {
  readonly secret: string
  readonly uri: string
}

export type PasscodeCheck = "not-enrolled" | "valid" | "invalid"

export class TwoFactor extends Context.Service<TwoFactor, {
  /** Starts (or restarts) enrolment: a new secret, not yet required until verified. */
  readonly enroll: (userId: number, accountName: string) => Effect.Effect<Enrollment, SqlError>
  /** Confirms enrolment with a first passcode; false when the code is wrong or nothing is pending. */
  readonly confirm: (userId: number, passcode: string) => Effect.Effect<boolean, SqlError>
  readonly isEnabled: (userId: number) => Effect.Effect<boolean, SqlError>
  /** Checks a passcode of an enabled second factor; a code is accepted once only. */
  readonly check: (userId: number, passcode: string | undefined) => Effect.Effect<PasscodeCheck, SqlError>
  readonly disable: (userId: number) => Effect.Effect<void, SqlError>
}>()("hearth/twofa/TwoFactor") {
  static readonly layer = Layer.effect(
    TwoFactor,
    Effect.gen(function*() {
      const sql = yield* SqlClient
      const settings = yield* Settings
      const key = createHash("sha256").update(`totp:${settings.security.SECRET_KEY}`).digest()
      const issuer = settings.server.DOMAIN

      const seal = (plain: string) => {
        const iv = randomBytes(12)
        const cipher = createCipheriv("aes-256-gcm", key, iv)
        const data = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
        return [iv, cipher.getAuthTag(), data].map((b) => b.toString("base64")).join(".")
      }
      const open = (sealed: string) => {
        const [iv, tag, data] = sealed.split(".").map((p) => Buffer.from(p, "base64"))
        const decipher = createDecipheriv("aes-256-gcm", key, iv!)
        decipher.setAuthTag(tag!)
        return Buffer.concat([decipher.update(data!), decipher.final()]).toString("utf8")
      }
      const totp = (secret: string, label = "") => new TOTP({ issuer, label, secret: Secret.fromBase32(secret) })
      const load = (userId: number) =>
        Effect.map(
          sql`SELECT secret, enabled, last_used_passcode FROM two_factor WHERE user_id = ${userId}`,
          (rows) => Option.fromNullishOr(rows[0])
        )
      const matches = (secret: string, passcode: string) =>
        /^\d{6}$/.test(passcode) && totp(secret).validate({ token: passcode, window: 1 }) !== null

      return TwoFactor.of({
        enroll: (userId, accountName) =>
          Effect.gen(function*() {
            const secret = new Secret({ size: 20 }).base32
            yield* sql`INSERT INTO two_factor (user_id, secret, enabled) VALUES (${userId}, ${seal(secret)}, false)
              ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, enabled = false, last_used_passcode = ''`
            return { secret, uri: totp(secret, accountName).toString() }
          }),
        confirm: (userId, passcode) =>
          Effect.gen(function*() {
            const row = yield* load(userId)
            if (Option.isNone(row) || row.value.enabled) return false
            if (!matches(open(row.value.secret as string), passcode)) return false
            yield* sql`UPDATE two_factor SET enabled = true, last_used_passcode = ${passcode} WHERE user_id = ${userId}`
            return true
          }),
        isEnabled: (userId) => Effect.map(load(userId), (row) => Option.isSome(row) && row.value.enabled === true),
        check: (userId, passcode) =>
          Effect.gen(function*() {
            const row = yield* load(userId)
            if (Option.isNone(row) || row.value.enabled !== true) return "not-enrolled" as const
            if (passcode === undefined || passcode === row.value.last_used_passcode) return "invalid" as const
            if (!matches(open(row.value.secret as string), passcode)) return "invalid" as const
            yield* sql`UPDATE two_factor SET last_used_passcode = ${passcode} WHERE user_id = ${userId}`
            return "valid" as const
          }),
        disable: (userId) => Effect.asVoid(sql`DELETE FROM two_factor WHERE user_id = ${userId}`)
      })
    })
  )
}

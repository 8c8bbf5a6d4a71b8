// TOTP second factor. Forgejo enrols through its web UI only, so Hearth adds API routes for it
// (see Api.ts). The shared secret is stored sealed with [security] SECRET_KEY (src/lib/Sealer.ts).
//
// Replay protection: `two_factor.last_used_passcode` holds the TOTP *time step* of the last
// accepted code (not the code itself), and only a code of a later step is accepted. Comparing
// codes alone, as Forgejo does, would let an older code of the validity window be used again
// once a newer one has been used.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type * as OtpAuth from "otpauth"
import { Settings } from "../config/Settings.ts"
import { sqlBoundary } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { sealer } from "../lib/Sealer.ts"

// Loaded when an account first enrols or signs in with a second factor, not at start-up.
const otpauth = lazyRequire<typeof OtpAuth>("otpauth")

export interface Enrollment {
  /** The shared secret, base32 (what authenticator apps accept when typed in). */
  readonly secret: string
  /** `otpauth://totp/...` URI (what a QR code carries). */
  readonly uri: string
}

export type PasscodeCheck = "not-enrolled" | "valid" | "invalid"

/** Codes of the previous, current and next 30-second step are accepted (clock drift). */
const WINDOW = 1

export class TwoFactor extends Context.Service<
  TwoFactor,
  {
    /** Starts (or restarts) enrolment: a new secret, not required until confirmed. 422 when already enabled. */
    readonly enroll: (userId: number, accountName: string) => Effect.Effect<Enrollment, Errors.ValidationFailed>
    /**
     * The enrolment started and not confirmed yet, if any (the web's enrolment page shows its QR
     * code again after a wrong first passcode, as Forgejo keeps it in the session).
     */
    readonly pending: (userId: number, accountName: string) => Effect.Effect<Option.Option<Enrollment>>
    /** Enables a pending enrolment with a first passcode; 422 when the code is wrong or nothing is pending. */
    readonly confirm: (userId: number, passcode: string) => Effect.Effect<void, Errors.ValidationFailed>
    readonly isEnabled: (userId: number) => Effect.Effect<boolean>
    /** Checks a passcode of an enabled second factor; each code (time step) is accepted once only. */
    readonly check: (userId: number, passcode: string | undefined) => Effect.Effect<PasscodeCheck>
    /** Removes the second factor or a pending enrolment; false when there was none. */
    readonly disable: (userId: number) => Effect.Effect<boolean>
  }
>()("hearth/twofa/TwoFactor") {
  static readonly layer = Layer.effect(
    TwoFactor,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const settings = yield* Settings
      // TOTP secrets are never empty, so the sealer's "" shortcut never applies to them.
      const { open, seal } = sealer(settings.security.SECRET_KEY, "totp")
      const issuer = settings.server.DOMAIN

      const totp = (secret: string, label = "") => {
        const { Secret, TOTP } = otpauth()
        return new TOTP({ issuer, label, secret: Secret.fromBase32(secret) })
      }
      const load = (userId: number) =>
        Effect.map(sql`SELECT secret, enabled FROM two_factor WHERE user_id = ${userId}`, (rows) =>
          Option.fromNullishOr(rows[0])
        )
      /** The time step the passcode belongs to, or undefined when it is not a valid code now. */
      const stepOf = (sealedSecret: string, passcode: string): number | undefined => {
        if (!/^\d{6}$/.test(passcode)) return undefined
        const timestamp = Date.now()
        const otp = totp(open(sealedSecret))
        const delta = otp.validate({ token: passcode, window: WINDOW, timestamp })
        return delta === null ? undefined : otp.counter({ timestamp }) + delta
      }
      // The previous step as a number; anything else stored there (legacy values) counts as none.
      const previousStep = sql.literal(
        "(CASE WHEN last_used_passcode ~ '^[0-9]+$' THEN last_used_passcode::bigint ELSE -1 END)"
      )

      return TwoFactor.of(
        sqlBoundary({
          enroll: (userId, accountName) =>
            Effect.gen(function* () {
              const row = yield* load(userId)
              if (Option.isSome(row) && row.value.enabled === true) {
                return yield* Errors.validationFailed(
                  "two-factor authentication is already enabled: disable it first (DELETE /user/twofa)"
                )
              }
              const secret = new (otpauth().Secret)({ size: 20 }).base32
              yield* sql`INSERT INTO two_factor (user_id, secret, enabled) VALUES (${userId}, ${seal(secret)}, false)
                ON CONFLICT (user_id) DO UPDATE SET secret = EXCLUDED.secret, enabled = false, last_used_passcode = ''
                WHERE NOT two_factor.enabled`
              return { secret, uri: totp(secret, accountName).toString() }
            }),
          pending: (userId, accountName) =>
            Effect.map(load(userId), (row) => {
              if (Option.isNone(row) || row.value.enabled === true) return Option.none<Enrollment>()
              const secret = open(row.value.secret as string)
              return Option.some({ secret, uri: totp(secret, accountName).toString() })
            }),
          confirm: (userId, passcode) =>
            Effect.gen(function* () {
              const row = yield* load(userId)
              if (Option.isNone(row)) {
                return yield* Errors.validationFailed(
                  "no two-factor enrolment in progress: start one with POST /user/twofa"
                )
              }
              if (row.value.enabled === true) {
                return yield* Errors.validationFailed("two-factor authentication is already enabled")
              }
              const step = stepOf(row.value.secret as string, passcode)
              if (step === undefined) return yield* Errors.validationFailed("invalid provided OTP")
              const updated = yield* sql`UPDATE two_factor SET enabled = true, last_used_passcode = ${String(step)}
                WHERE user_id = ${userId} AND NOT enabled RETURNING user_id`
              if (updated.length === 0) {
                return yield* Errors.validationFailed("two-factor authentication is already enabled")
              }
            }),
          isEnabled: (userId) => Effect.map(load(userId), (row) => Option.isSome(row) && row.value.enabled === true),
          check: (userId, passcode) =>
            Effect.gen(function* () {
              const row = yield* load(userId)
              if (Option.isNone(row) || row.value.enabled !== true) return "not-enrolled" as const
              const step = passcode === undefined ? undefined : stepOf(row.value.secret as string, passcode)
              if (step === undefined) return "invalid" as const
              // One statement, so two concurrent requests cannot both spend the same code.
              const spent = yield* sql`UPDATE two_factor SET last_used_passcode = ${String(step)}
              WHERE user_id = ${userId} AND enabled AND ${previousStep} < ${step} RETURNING user_id`
              return spent.length === 0 ? ("invalid" as const) : ("valid" as const)
            }),
          disable: (userId) =>
            Effect.map(
              sql`DELETE FROM two_factor WHERE user_id = ${userId} RETURNING user_id`,
              (rows) => rows.length > 0
            )
        })
      )
    })
  )
}

// Second factor (TOTP) enrolment. Forgejo has no API for it (only its web UI), so these routes
// are Hearth's own. All of them need Basic *password* authentication (a token gives 401 "auth
// method not allowed"), like token creation: whoever holds only a token must not be able to
// lock the owner out by enrolling a factor they control, nor remove the owner's factor.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

export const TwoFactorEnrollment = Schema.Struct({
  /** The shared secret, base32. */
  secret: Schema.String,
  /** `otpauth://totp/…` URI with the secret, issuer (DOMAIN) and account name, for a QR code. */
  uri: Schema.String
}).annotate({ identifier: "TwoFactorEnrollment" })

export const VerifyTwoFactorOption = Schema.Struct({
  /** A current 6-digit code from the authenticator app. */
  passcode: Schema.String
}).annotate({ identifier: "VerifyTwoFactorOption" })

const user = { signedIn: true, scopes: ["user"] } as const

export class TwoFactorApi extends HttpApiGroup.make("twofa").add(
  // Starts (or restarts) enrolment; the factor is required only once verified.
  HttpApiEndpoint.post("enrollTwoFactor", "/user/twofa", {
    success: TwoFactorEnrollment.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "userEnrollTwoFactor")
    .annotate(Access, user),
  // Enables the pending enrolment with a first code; 422 for a wrong code.
  HttpApiEndpoint.post("verifyTwoFactor", "/user/twofa/verify", {
    payload: VerifyTwoFactorOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userVerifyTwoFactor")
    .annotate(Access, user),
  // Removes the factor. The current code goes in X-Forgejo-OTP (or X-Gitea-OTP), where the
  // Basic sign-in checks it; a pending enrolment needs none. 404 when nothing is enrolled.
  HttpApiEndpoint.delete("disableTwoFactor", "/user/twofa", {
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "userDisableTwoFactor")
    .annotate(Access, user)
) {}

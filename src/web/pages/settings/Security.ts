// Two-factor authentication (Forgejo's routers/web/user/setting/security and auth 2fa, at
// `/user/settings/security`): enrolling shows a QR code of the `otpauth://` URI (an SVG data: URL
// made on the server, no script) and the secret as text, and takes a first passcode to turn the
// factor on (`/user/settings/security/two_factor/enroll`); a wrong passcode shows the same secret
// again. Turning it off (`…/two_factor/disable`) takes a current passcode, checked by the
// Authenticator in the sign-in throttle: a session left open is not enough to remove it.
// TwoFactor keeps the rules (a code is spent once; enabling twice is refused).
import { Effect, Option } from "effect"
import { Authenticator } from "../../../auth/Authenticator.ts"
import * as Errors from "../../../http/Errors.ts"
import { TwoFactor } from "../../../twofa/Service.ts"
import { type FieldErrors, field, formError, formNotice } from "../../Form.ts"
import { html } from "../../Html.ts"
import { icon } from "../../Icons.ts"
import { csrfField } from "../../Layout.ts"
import { qrDataUrl } from "../../Qr.ts"
import type { Web, WebContext } from "../../Web.ts"
import { SIGNED_IN, section, settingsPage } from "./Frame.ts"

const NOTICES: Readonly<Record<string, string>> = {
  "twofa-enabled": "Two-factor authentication is on: signing in now asks for a passcode from your app.",
  "twofa-disabled": "Two-factor authentication is off."
}

const PATH = "/user/settings/security"
const ENROLL = `${PATH}/two_factor/enroll`

/** The secret in groups of four, easier to type into an app. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, "$1 ")

const passcodeField = (errors: FieldErrors) =>
  field(
    {
      name: "passcode",
      label: "Passcode",
      autocomplete: "one-time-code",
      inputmode: "numeric",
      required: true,
      hint: "The six digits your authenticator app shows for this account."
    },
    errors
  )

export const SecuritySettingsPages = (web: Web) =>
  Effect.gen(function* () {
    const twoFactor = yield* TwoFactor
    const authenticator = yield* Authenticator

    const securityPage = (ctx: WebContext, errors: FieldErrors, message?: string, status = 200) =>
      Effect.gen(function* () {
        const enabled = yield* twoFactor.isEnabled(ctx.viewer!.user.id)
        return settingsPage(
          web,
          ctx,
          { path: PATH, title: "Security", status },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}${formError(message)}
${section(
  "Two-factor authentication",
  enabled
    ? html`<div class="Box-body">
    <p data-testid="twofa-status"><span class="Label Label--success">${icon("shield-lock")} On</span> Signing in asks for a passcode from your authenticator app.</p>
    <form method="post" action="${PATH}/two_factor/disable" data-testid="disable-twofa-form">
      ${csrfField(ctx)}
      ${passcodeField(errors)}
      <button class="btn btn-danger" type="submit">Turn off two-factor authentication</button>
    </form>
  </div>`
    : html`<div class="Box-body">
    <p data-testid="twofa-status"><span class="Label">Off</span> Add a second step to signing in: a passcode from an authenticator app on your phone.</p>
    <a class="btn btn-primary" href="${ENROLL}">${icon("device-mobile")} Set up two-factor authentication</a>
  </div>`,
  "twofa"
)}`
        )
      })

    const enrollPage = (ctx: WebContext, secret: string, uri: string, errors: FieldErrors, status = 200) =>
      settingsPage(
        web,
        ctx,
        { path: PATH, title: "Set up two-factor authentication", status },
        html`${section(
          "Scan the code with your authenticator app",
          html`<div class="Box-body d-md-flex flex-items-start">
    <img class="mr-md-4 mb-3 border rounded-2" src="${qrDataUrl(uri)}" alt="QR code holding the secret shown beside it" data-testid="twofa-qr" width="232" height="232">
    <div>
      <p>Or type this secret into the app (time-based, 6 digits, every 30 seconds):</p>
      <p><code class="text-mono f4 user-select-contain" data-testid="twofa-secret">${grouped(secret)}</code></p>
      <form method="post" action="${ENROLL}" data-testid="enroll-twofa-form">
        ${csrfField(ctx)}
        ${passcodeField(errors)}
        <button class="btn btn-primary" type="submit">Turn on two-factor authentication</button>
        <a class="btn ml-2" href="${PATH}">Cancel</a>
      </form>
    </div>
  </div>`,
          "enroll"
        )}`
      )

    /** The pending enrolment, started if there is none; undefined when the factor is already on. */
    const enrolment = (ctx: WebContext) =>
      Effect.gen(function* () {
        const user = ctx.viewer!.user
        if (yield* twoFactor.isEnabled(user.id)) return undefined
        const pending = yield* twoFactor.pending(user.id, user.name)
        if (Option.isSome(pending)) return pending.value
        return yield* twoFactor.enroll(user.id, user.name)
      })

    return [
      web.route("GET", PATH, SIGNED_IN, (ctx) => securityPage(ctx, {})),
      // Forgejo starts the enrolment when this page is opened; opening it again shows the same one.
      web.route("GET", ENROLL, SIGNED_IN, (ctx) =>
        Effect.gen(function* () {
          const started = yield* enrolment(ctx)
          if (started === undefined) return web.redirect(ctx, PATH)
          return enrollPage(ctx, started.secret, started.uri, {})
        })
      ),
      web.route("POST", ENROLL, SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const user = ctx.viewer!.user
          const passcode = (form.get("passcode") ?? "").replace(/\s/g, "")
          const pending = yield* twoFactor.pending(user.id, user.name)
          if (Option.isNone(pending)) return web.redirect(ctx, PATH)
          if (passcode === "") {
            return enrollPage(ctx, pending.value.secret, pending.value.uri, { passcode: "Enter the passcode." }, 422)
          }
          const confirmed = yield* Effect.result(twoFactor.confirm(user.id, passcode))
          if (confirmed._tag === "Failure") {
            return enrollPage(
              ctx,
              pending.value.secret,
              pending.value.uri,
              { passcode: "This passcode is not the one the app shows now. Check the app's clock and try again." },
              422
            )
          }
          return web.redirect(ctx, `${PATH}?done=twofa-enabled`)
        })
      ),
      web.route("POST", `${PATH}/two_factor/disable`, SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const user = ctx.viewer!.user
          if (!(yield* twoFactor.isEnabled(user.id))) return web.redirect(ctx, PATH)
          const passcode = (form.get("passcode") ?? "").replace(/\s/g, "")
          if (passcode === "") return yield* securityPage(ctx, { passcode: "Enter the passcode." }, undefined, 422)
          const checked = yield* Effect.result(authenticator.byPasscode(user, passcode))
          if (checked._tag === "Failure") {
            if (checked.failure instanceof Errors.TooManyRequests)
              return yield* securityPage(ctx, {}, checked.failure.message, 429)
            return yield* securityPage(ctx, { passcode: "Your passcode is incorrect." }, undefined, 401)
          }
          yield* twoFactor.disable(user.id)
          return web.redirect(ctx, `${PATH}?done=twofa-disabled`)
        })
      )
    ]
  })

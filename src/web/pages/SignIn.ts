// Signing in and out (Forgejo's routers/web/auth `SignIn`, `TwoFactor`, `SignOut`):
// - /user/login: a name or e-mail and the password, checked by the API's own Authenticator, so
//   that failures here and over the API count in one throttle ([security] LOGIN_MAX_FAILURES);
// - /user/two_factor: when the account has TOTP, the password opens a session of the two-factor
//   stage only (it signs no one in, lasts 5 minutes), and the passcode turns it into a new one;
// - /user/logout: POST with the CSRF token; the session is deleted.
// `redirect_to` (a local path) is where a successful sign-in goes.
import { Effect } from "effect"
import { accountRefusal, signInProhibited } from "../../auth/AccountState.ts"
import { Authenticator } from "../../auth/Authenticator.ts"
import * as Errors from "../../http/Errors.ts"
import type { UserRow } from "../../users/Repo.ts"
import { type FieldErrors, field, formError } from "../Form.ts"
import { empty, html } from "../Html.ts"
import { csrfField } from "../Layout.ts"
import { type Form, safeRedirect, type Web, type WebContext } from "../Web.ts"

const INCORRECT = "Username or password is incorrect."

export const SignInPages = (web: Web) =>
  Effect.gen(function* () {
    const authenticator = yield* Authenticator

    const redirectTo = (ctx: WebContext, form?: Form) =>
      safeRedirect(form?.get("redirect_to") ?? ctx.url.searchParams.get("redirect_to"))

    const hiddenRedirect = (target: string | undefined) =>
      target === undefined ? empty : html`<input type="hidden" name="redirect_to" value="${target}">`

    const loginPage = (
      ctx: WebContext,
      values: { readonly login?: string; readonly target?: string | undefined },
      errors: FieldErrors,
      message?: string,
      status = 200
    ) =>
      web.page(
        ctx,
        { title: "Sign in", status },
        html`<div class="container-sm p-responsive py-6">
  <div class="Box">
    <div class="Box-header"><h1 class="Box-title f3">Sign in</h1></div>
    <div class="Box-body">
      ${formError(message)}
      <form method="post" action="/user/login" data-testid="login-form">
        ${csrfField(ctx)}${hiddenRedirect(values.target)}
        ${field({ name: "user_name", label: "Username or e-mail address", value: values.login ?? "", autocomplete: "username", required: true, autofocus: true }, errors)}
        ${field({ name: "password", label: "Password", type: "password", autocomplete: "current-password", required: true }, errors)}
        <button class="btn btn-primary btn-block mt-3" type="submit">Sign in</button>
      </form>
    </div>
    ${
      ctx.settings.service.DISABLE_REGISTRATION
        ? empty
        : html`<div class="Box-footer text-center">New here? <a href="/user/sign_up">Create an account</a></div>`
    }
  </div>
</div>`
      )

    const twoFactorPage = (
      ctx: WebContext,
      target: string | undefined,
      errors: FieldErrors,
      message?: string,
      status = 200
    ) =>
      web.page(
        ctx,
        { title: "Two-factor authentication", status },
        html`<div class="container-sm p-responsive py-6">
  <div class="Box">
    <div class="Box-header"><h1 class="Box-title f3">Two-factor authentication</h1></div>
    <div class="Box-body">
      ${formError(message)}
      <form method="post" action="/user/two_factor" data-testid="two-factor-form">
        ${csrfField(ctx)}${hiddenRedirect(target)}
        ${field({ name: "passcode", label: "Passcode", autocomplete: "one-time-code", inputmode: "numeric", required: true, autofocus: true, hint: "The six digits your authenticator app shows for this account." }, errors)}
        <button class="btn btn-primary btn-block mt-3" type="submit">Verify</button>
      </form>
    </div>
  </div>
</div>`
      )

    /** Where a signed-in account goes next: the password change first when it must. */
    const landing = (ctx: WebContext, user: UserRow, target: string | undefined) =>
      web.redirect(ctx, user.mustChangePassword ? "/user/change_password" : (target ?? "/"))

    return [
      web.route("GET", "/user/login", { access: "public" }, (ctx) =>
        Effect.succeed(
          ctx.viewer !== undefined
            ? landing(ctx, ctx.viewer.user, redirectTo(ctx))
            : loginPage(ctx, { target: redirectTo(ctx) }, {})
        )
      ),
      web.route("POST", "/user/login", { access: "public" }, (ctx, form) =>
        Effect.gen(function* () {
          const login = (form.get("user_name") ?? "").trim()
          const password = form.get("password") ?? ""
          const target = redirectTo(ctx, form)
          const errors: Record<string, string> = {}
          if (login === "") errors.user_name = "Enter your username or e-mail address."
          if (password === "") errors.password = "Enter your password."
          if (Object.keys(errors).length > 0) return loginPage(ctx, { login, target }, errors, undefined, 422)
          const result = yield* authenticator.byPassword(login, password).pipe(
            Effect.map((ok) => ({ ok }) as const),
            Effect.catch((e) =>
              Effect.succeed(
                e instanceof Errors.TooManyRequests
                  ? ({ refused: e.message, status: 429 } as const)
                  : ({
                      refused:
                        e.message === "user is not allowed login"
                          ? "This account is prohibited from signing in, please contact your site administrator."
                          : INCORRECT,
                      status: 401
                    } as const)
              )
            )
          )
          if ("refused" in result) return loginPage(ctx, { login, target }, {}, result.refused, result.status)
          const { principal, twoFactor } = result.ok
          if (signInProhibited(principal.user)) {
            const refusal = accountRefusal(principal.user, ctx.settings.server.ROOT_URL) ?? INCORRECT
            return loginPage(ctx, { login, target }, {}, refusal, 403)
          }
          if (twoFactor) {
            yield* web.openSession(ctx, principal.user, "two-factor")
            return web.redirect(
              ctx,
              target === undefined ? "/user/two_factor" : `/user/two_factor?redirect_to=${encodeURIComponent(target)}`
            )
          }
          yield* web.openSession(ctx, principal.user, "signed-in")
          return landing(ctx, principal.user, target)
        })
      ),
      web.route("GET", "/user/two_factor", { access: "public" }, (ctx) =>
        Effect.succeed(
          ctx.session?.stage === "two-factor"
            ? twoFactorPage(ctx, redirectTo(ctx), {})
            : web.redirect(ctx, ctx.viewer === undefined ? "/user/login" : "/")
        )
      ),
      web.route("POST", "/user/two_factor", { access: "public" }, (ctx, form) =>
        Effect.gen(function* () {
          const session = ctx.session
          if (session?.stage !== "two-factor") return web.redirect(ctx, "/user/login")
          const target = redirectTo(ctx, form)
          const passcode = (form.get("passcode") ?? "").replace(/\s/g, "")
          if (passcode === "") return twoFactorPage(ctx, target, { passcode: "Enter the passcode." }, undefined, 422)
          const result = yield* authenticator.byPasscode(session.user, passcode).pipe(
            Effect.map((principal) => ({ principal }) as const),
            Effect.catch((e) =>
              Effect.succeed(
                e instanceof Errors.TooManyRequests ? ({ refused: e.message } as const) : ({ wrong: true } as const)
              )
            )
          )
          if ("wrong" in result) {
            return twoFactorPage(ctx, target, { passcode: "Your passcode is incorrect." }, undefined, 401)
          }
          if ("refused" in result) return twoFactorPage(ctx, target, {}, result.refused, 429)
          yield* web.openSession(ctx, result.principal.user, "signed-in")
          return landing(ctx, result.principal.user, target)
        })
      ),
      web.route("POST", "/user/logout", { access: "public", whileMustChangePassword: true }, (ctx) =>
        Effect.gen(function* () {
          yield* web.endSession(ctx)
          return web.redirect(ctx, "/")
        })
      )
    ]
  })

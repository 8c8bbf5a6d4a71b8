// Changing the password (Forgejo's routers/web/auth `MustChangePassword`): where an account with
// `must_change_password` is sent after signing in, before any other page. Such an account sets a
// new password only; any other also gives its current one (checked through the Authenticator,
// in the sign-in throttle). The change ends every other session of the account (the sessions'
// password stamp) and clears `must_change_password`; this session goes on.
import { Effect } from "effect"
import { Authenticator } from "../../auth/Authenticator.ts"
import * as Errors from "../../http/Errors.ts"
import { Sessions } from "../../sessions/Service.ts"
import { UsersService } from "../../users/Service.ts"
import { type FieldErrors, field, fieldOfMessage, formError } from "../Form.ts"
import { empty, html } from "../Html.ts"
import { csrfField } from "../Layout.ts"
import type { Web, WebContext } from "../Web.ts"

const FIELDS = { password: "password" }

export const ChangePasswordPages = (web: Web) =>
  Effect.gen(function* () {
    const users = yield* UsersService
    const sessions = yield* Sessions
    const authenticator = yield* Authenticator

    const changePage = (ctx: WebContext, errors: FieldErrors, message?: string, status = 200) => {
      const forced = ctx.viewer?.user.mustChangePassword === true
      return web.page(
        ctx,
        { title: "Change password", status },
        html`<div class="container-sm p-responsive py-6">
  <div class="Box">
    <div class="Box-header"><h1 class="Box-title f3">Change password</h1></div>
    <div class="Box-body">
      ${forced ? html`<div class="flash flash-warn mb-3" role="status" data-testid="must-change">You must change your password before you go on.</div>` : empty}
      ${formError(message)}
      <form method="post" action="/user/change_password" data-testid="change-password-form">
        ${csrfField(ctx)}
        ${forced ? empty : field({ name: "old_password", label: "Current password", type: "password", autocomplete: "current-password", required: true }, errors)}
        ${field({ name: "password", label: "New password", type: "password", autocomplete: "new-password", required: true, autofocus: forced }, errors)}
        ${field({ name: "retype", label: "Confirm new password", type: "password", autocomplete: "new-password", required: true }, errors)}
        <button class="btn btn-primary btn-block mt-3" type="submit">Change password</button>
      </form>
    </div>
  </div>
</div>`
      )
    }

    const options = { access: "signed-in", whileMustChangePassword: true } as const
    return [
      web.route("GET", "/user/change_password", options, (ctx) => Effect.succeed(changePage(ctx, {}))),
      web.route("POST", "/user/change_password", options, (ctx, form) =>
        Effect.gen(function* () {
          const viewer = ctx.viewer!
          const session = ctx.session!
          const password = form.get("password") ?? ""
          const errors: Record<string, string> = {}
          if (password === "") errors.password = "Choose a new password."
          else if (password !== (form.get("retype") ?? "")) errors.retype = "The passwords do not match."
          if (!viewer.user.mustChangePassword) {
            const old = form.get("old_password") ?? ""
            if (old === "") errors.old_password = "Enter your current password."
            else {
              const checked = yield* Effect.result(authenticator.byPassword(viewer.user.name, old))
              if (checked._tag === "Failure") {
                if (checked.failure instanceof Errors.TooManyRequests)
                  return changePage(ctx, {}, checked.failure.message, 429)
                errors.old_password = "Your current password is incorrect."
              }
            }
          }
          if (Object.keys(errors).length > 0) return changePage(ctx, errors, undefined, 422)
          const updated = yield* Effect.result(users.update(viewer.user, { password, must_change_password: false }))
          if (updated._tag === "Failure") {
            const message = updated.failure.message
            const name = fieldOfMessage(message, FIELDS)
            return name === undefined
              ? changePage(ctx, {}, message, 422)
              : changePage(ctx, { [name]: message }, undefined, 422)
          }
          yield* sessions.endOthers(session, updated.success)
          return web.redirect(ctx, "/")
        })
      )
    ]
  })

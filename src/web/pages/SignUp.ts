// Creating an account (Forgejo's routers/web/auth `SignUp`): a name, an e-mail address and a
// password typed twice, checked by the same UsersService rules as the admin API and the CLI; the
// new account is signed in. `[service] DISABLE_REGISTRATION`: the page says that registration is
// off and the form is refused (403). The first account of a new forge becomes its administrator
// (Forgejo's `handleUserCreated`: "auto-set admin for the only user"), so that whoever sets Hearth
// up and signs up first can manage it without the CLI.
import { Effect } from "effect"
import { UsersRepo } from "../../users/Repo.ts"
import { UsersService } from "../../users/Service.ts"
import { type FieldErrors, field, fieldOfMessage, formError } from "../Form.ts"
import { html } from "../Html.ts"
import { csrfField } from "../Layout.ts"
import type { Web, WebContext } from "../Web.ts"

const DISABLED = "Registration is disabled. Please contact your site administrator."

/** Where the users service's refusals belong ("[UserName]: …", "[Email]: …", "[Password]: …"). */
const FIELDS = { username: "user_name", email: "email", password: "password" }

export const SignUpPages = (web: Web) =>
  Effect.gen(function* () {
    const users = yield* UsersService
    const usersRepo = yield* UsersRepo

    const disabledPage = (ctx: WebContext, status: number) =>
      web.page(
        ctx,
        { title: "Sign up", status },
        html`<div class="container-sm p-responsive py-6">
  <div class="flash flash-warn" role="alert" data-testid="registration-disabled">${DISABLED}</div>
</div>`
      )

    const signUpPage = (
      ctx: WebContext,
      values: { readonly user_name?: string; readonly email?: string },
      errors: FieldErrors,
      message?: string,
      status = 200
    ) =>
      web.page(
        ctx,
        { title: "Sign up", status },
        html`<div class="container-sm p-responsive py-6">
  <div class="Box">
    <div class="Box-header"><h1 class="Box-title f3">Create an account</h1></div>
    <div class="Box-body">
      ${formError(message)}
      <form method="post" action="/user/sign_up" data-testid="sign-up-form">
        ${csrfField(ctx)}
        ${field({ name: "user_name", label: "Username", value: values.user_name ?? "", autocomplete: "username", required: true, autofocus: true }, errors)}
        ${field({ name: "email", label: "E-mail address", type: "email", value: values.email ?? "", autocomplete: "email", required: true }, errors)}
        ${field({ name: "password", label: "Password", type: "password", autocomplete: "new-password", required: true }, errors)}
        ${field({ name: "retype", label: "Confirm password", type: "password", autocomplete: "new-password", required: true }, errors)}
        <button class="btn btn-primary btn-block mt-3" type="submit">Create account</button>
      </form>
    </div>
    <div class="Box-footer text-center">Already have an account? <a href="/user/login">Sign in</a></div>
  </div>
</div>`
      )

    return [
      web.route("GET", "/user/sign_up", { access: "public" }, (ctx) =>
        Effect.succeed(
          ctx.settings.service.DISABLE_REGISTRATION
            ? disabledPage(ctx, 200)
            : ctx.viewer !== undefined
              ? web.redirect(ctx, "/")
              : signUpPage(ctx, {}, {})
        )
      ),
      web.route("POST", "/user/sign_up", { access: "public" }, (ctx, form) =>
        Effect.gen(function* () {
          if (ctx.settings.service.DISABLE_REGISTRATION) return disabledPage(ctx, 403)
          const values = { user_name: (form.get("user_name") ?? "").trim(), email: (form.get("email") ?? "").trim() }
          const password = form.get("password") ?? ""
          const errors: Record<string, string> = {}
          if (values.user_name === "") errors.user_name = "Choose a username."
          if (values.email === "") errors.email = "Enter your e-mail address."
          if (password === "") errors.password = "Choose a password."
          else if (password !== (form.get("retype") ?? "")) errors.retype = "The passwords do not match."
          if (Object.keys(errors).length > 0) return signUpPage(ctx, values, errors, undefined, 422)
          const created = yield* users
            .create({ username: values.user_name, email: values.email, password })
            .pipe(Effect.result)
          if (created._tag === "Failure") {
            const message = created.failure.message
            const name = fieldOfMessage(message, FIELDS)
            return name === undefined
              ? signUpPage(ctx, values, {}, message, 422)
              : signUpPage(ctx, values, { [name]: message }, undefined, 422)
          }
          let user = created.success
          if (!user.isAdmin && (yield* usersRepo.countUsers) === 1) {
            user = yield* users.update(user, { is_admin: true }).pipe(Effect.orDie)
            yield* Effect.logInfo(`${user.name} is the first account and has been made an administrator`)
          }
          yield* web.openSession(ctx, user, "signed-in")
          return web.redirect(ctx, "/")
        })
      )
    ]
  })

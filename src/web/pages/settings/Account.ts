// Profile and account settings (Forgejo's routers/web/user/setting/profile.go and account.go):
// - /user/settings: full name, biography, website, location, pronouns, visibility, hiding the
//   e-mail address (the rules of src/users/Profile.ts, saved through UsersService);
// - /user/settings/account: the e-mail addresses (add, delete, make primary, activate with the
//   token Hearth logs for the administrator, since it sends no mail) through EmailsService, and
//   the way to change the password.
import { Effect } from "effect"
import { AvatarsService } from "../../../avatars/Service.ts"
import { EmailsService } from "../../../emails/Service.ts"
import * as Errors from "../../../http/Errors.ts"
import { BlobStorage } from "../../../storage/Service.ts"
import { PROFILE_MAX, type ProfileInput, profileChanges, profileProblems } from "../../../users/Profile.ts"
import type { UserRow } from "../../../users/Repo.ts"
import { UsersService } from "../../../users/Service.ts"
import { checkbox, type FieldErrors, field, formError, formNotice, select, textArea } from "../../Form.ts"
import { empty, html } from "../../Html.ts"
import { icon } from "../../Icons.ts"
import { csrfField } from "../../Layout.ts"
import type { Form, Web, WebContext } from "../../Web.ts"
import { avatarSection, CSRF_REFUSED, readAvatarUpload } from "./AvatarForm.ts"
import { buttonForm, SIGNED_IN, section, settingsPage } from "./Frame.ts"

const VISIBILITY_CHOICES: ReadonlyArray<readonly [string, string]> = [
  ["public", "Public: everyone sees your profile"],
  ["limited", "Limited: only signed-in users see it"],
  ["private", "Private: only you and the administrators see it"]
]

const NOTICES: Readonly<Record<string, string>> = {
  profile: "Your profile has been updated.",
  avatar: "Your avatar has been changed.",
  "avatar-deleted": "Your avatar has been deleted.",
  "email-added": "The e-mail address has been added. It needs activation before it can be used.",
  "email-added-activated": "The e-mail address has been added.",
  "email-deleted": "The e-mail address has been deleted.",
  "email-primary": "Your primary e-mail address has been changed.",
  "email-activated": "The e-mail address has been activated."
}

/** The notice a redirect after a successful form names (`?done=…`). */
export const noticeOf = (ctx: WebContext) => NOTICES[ctx.url.searchParams.get("done") ?? ""]

export const AccountSettingsPages = (web: Web) =>
  Effect.gen(function* () {
    const users = yield* UsersService
    const emails = yield* EmailsService
    const avatars = yield* AvatarsService
    const storage = yield* BlobStorage

    // --- Profile -------------------------------------------------------------------------------

    const profilePage = (
      ctx: WebContext,
      values: ProfileInput,
      errors: FieldErrors,
      status = 200,
      avatarMessage?: string
    ) =>
      settingsPage(
        web,
        ctx,
        { path: "/user/settings", title: "Profile", status },
        html`${formNotice(noticeOf(ctx))}
${Object.keys(errors).length > 0 ? formError("Some fields need your attention.") : empty}
<form method="post" action="/user/settings" data-testid="profile-form">
  ${csrfField(ctx)}
  ${field({ name: "full_name", label: "Full name", value: values.full_name, autocomplete: "name", hint: `At most ${PROFILE_MAX.full_name} characters.` }, errors)}
  ${textArea({ name: "description", label: "Biography", value: values.description, rows: 3, hint: `At most ${PROFILE_MAX.description} characters.` }, errors)}
  ${field({ name: "website", label: "Website", value: values.website, autocomplete: "url", hint: 'An http:// or https:// address; your profile links to it with rel="me", so that Mastodon can verify it.' }, errors)}
  ${field({ name: "location", label: "Location", value: values.location }, errors)}
  ${field({ name: "pronouns", label: "Pronouns", value: values.pronouns }, errors)}
  ${select({ name: "visibility", label: "Visibility", value: values.visibility, choices: VISIBILITY_CHOICES }, errors)}
  ${checkbox({ name: "keep_email_private", label: "Hide my e-mail address", checked: values.keep_email_private, hint: "Others do not see it on your profile or in the API." })}
  <button class="btn btn-primary mt-2" type="submit">Update profile</button>
</form>
${avatarSection(ctx, ctx.viewer!.user, "/user/settings/avatar", avatarMessage)}`
      )

    const profileValues = (u: UserRow): ProfileInput => ({
      full_name: u.fullName,
      description: u.description,
      website: u.website,
      location: u.location,
      pronouns: u.pronouns,
      visibility: u.visibility,
      keep_email_private: u.keepEmailPrivate
    })

    const profileOf = (form: Form): ProfileInput => ({
      full_name: (form.get("full_name") ?? "").trim(),
      description: (form.get("description") ?? "").trim(),
      website: (form.get("website") ?? "").trim(),
      location: (form.get("location") ?? "").trim(),
      pronouns: (form.get("pronouns") ?? "").trim(),
      visibility: form.get("visibility") ?? "",
      keep_email_private: form.get("keep_email_private") !== null
    })

    // --- Account: e-mail addresses -------------------------------------------------------------

    const accountPage = (
      ctx: WebContext,
      values: { readonly email?: string },
      errors: FieldErrors,
      message?: string,
      status = 200
    ) =>
      Effect.gen(function* () {
        const user = ctx.viewer!.user
        const list = yield* emails.list(user)
        const unverified = list.some((e) => !e.verified)
        const rows = list.map(
          (e) => html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="email-row">
  <span class="text-bold wb-break-all mr-2">${e.email}</span>
  ${e.primary ? html`<span class="Label Label--accent mr-1">Primary</span>` : empty}
  ${e.verified ? html`<span class="Label Label--success mr-1">Activated</span>` : html`<span class="Label Label--attention mr-1">Not activated</span>`}
  <span class="ml-auto">
    ${
      e.primary || !e.verified
        ? empty
        : buttonForm(ctx, "/user/settings/account/email", { _method: "PRIMARY", email: e.email }, "Make primary", {
            accessibleName: `Make ${e.email} primary`
          })
    }
    ${
      e.primary
        ? empty
        : buttonForm(ctx, "/user/settings/account/email/delete", { email: e.email }, html`${icon("trash")} Delete`, {
            danger: true,
            accessibleName: `Delete ${e.email}`
          })
    }
  </span>
</li>`
        )
        return settingsPage(
          web,
          ctx,
          { path: "/user/settings/account", title: "Account", status },
          html`${formNotice(noticeOf(ctx))}${formError(message)}
${section(
  "E-mail addresses",
  html`<ul data-testid="email-list">${rows}</ul>
  <div class="Box-body">
    <form method="post" action="/user/settings/account/email" data-testid="add-email-form">
      ${csrfField(ctx)}
      ${field({ name: "email", label: "Add an e-mail address", type: "email", value: values.email ?? "", autocomplete: "email", required: true }, errors)}
      <button class="btn" type="submit">${icon("plus")} Add e-mail address</button>
    </form>
  </div>
  ${
    unverified
      ? html`<div class="Box-body border-top">
    <p class="color-fg-muted">Hearth sends no mail: the activation token of a new address is written to the server's log, for the administrator to pass on to you.</p>
    <form method="post" action="/user/settings/account/email/activate" data-testid="activate-email-form">
      ${csrfField(ctx)}
      ${field({ name: "token", label: "Activation token", autocomplete: "off", required: true }, errors)}
      <button class="btn" type="submit">Activate</button>
    </form>
  </div>`
      : empty
  }`,
  "emails"
)}
${section(
  "Password",
  html`<div class="Box-body"><a class="btn" href="/user/change_password">${icon("lock")} Change password</a></div>`
)}`
        )
      })

    const goTo = (ctx: WebContext, path: string, done: string) => web.redirect(ctx, `${path}?done=${done}`)

    return [
      web.route("GET", "/user/settings", SIGNED_IN, (ctx) =>
        Effect.succeed(profilePage(ctx, profileValues(ctx.viewer!.user), {}))
      ),
      web.route("POST", "/user/settings", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const values = profileOf(form)
          const problems = profileProblems(values)
          if (Object.keys(problems).length > 0) return profilePage(ctx, values, problems, 422)
          yield* users.update(ctx.viewer!.user, profileChanges(values))
          return goTo(ctx, "/user/settings", "profile")
        })
      ),
      // Forgejo's AvatarPost and DeleteAvatar.
      web.route("POST", "/user/settings/avatar", { ...SIGNED_IN, multipart: true }, (ctx) =>
        Effect.gen(function* () {
          const user = ctx.viewer!.user
          const upload = yield* Effect.provideService(readAvatarUpload(web, ctx), BlobStorage, storage)
          if ("refused" in upload) return web.errorPage(ctx, 400, "Bad request", CSRF_REFUSED)
          const stored = "bytes" in upload ? yield* Effect.result(avatars.setAccount(user, upload.bytes)) : undefined
          if (stored?._tag === "Success") return goTo(ctx, "/user/settings", "avatar")
          const message = "message" in upload ? upload.message : stored?.failure.message
          return profilePage(ctx, profileValues(user), {}, 422, message)
        })
      ),
      web.route("POST", "/user/settings/avatar/delete", SIGNED_IN, (ctx) =>
        Effect.as(avatars.removeAccount(ctx.viewer!.user), goTo(ctx, "/user/settings", "avatar-deleted"))
      ),
      web.route("GET", "/user/settings/account", SIGNED_IN, (ctx) => accountPage(ctx, {}, {})),
      // Forgejo's EmailPost: adding, or with `_method=PRIMARY` making an address primary.
      web.route("POST", "/user/settings/account/email", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const user = ctx.viewer!.user
          const email = (form.get("email") ?? "").trim()
          if (form.get("_method") === "PRIMARY") {
            const done = yield* Effect.result(emails.makePrimary(user, email))
            if (done._tag === "Failure") {
              if (done.failure instanceof Errors.NotFound) return web.notFound(ctx)
              return yield* accountPage(ctx, {}, {}, done.failure.message, 422)
            }
            return goTo(ctx, "/user/settings/account", "email-primary")
          }
          if (email === "")
            return yield* accountPage(ctx, { email }, { email: "Enter an e-mail address." }, undefined, 422)
          // Addresses added by a site administrator are activated at once, as over the API.
          const added = yield* Effect.result(emails.add(user, user.isAdmin, [email]))
          if (added._tag === "Failure")
            return yield* accountPage(ctx, { email }, { email: added.failure.message }, undefined, 422)
          return goTo(ctx, "/user/settings/account", user.isAdmin ? "email-added-activated" : "email-added")
        })
      ),
      web.route("POST", "/user/settings/account/email/delete", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const removed = yield* Effect.result(emails.remove(ctx.viewer!.user, [form.get("email") ?? ""]))
          if (removed._tag === "Failure") {
            if (removed.failure instanceof Errors.NotFound) return web.notFound(ctx)
            return yield* accountPage(ctx, {}, {}, removed.failure.message, 422)
          }
          return goTo(ctx, "/user/settings/account", "email-deleted")
        })
      ),
      web.route("POST", "/user/settings/account/email/activate", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const token = (form.get("token") ?? "").trim()
          if (token === "") return yield* accountPage(ctx, {}, { token: "Enter the activation token." }, undefined, 422)
          const done = yield* Effect.result(emails.activate(ctx.viewer!.user, token))
          if (done._tag === "Failure")
            return yield* accountPage(ctx, {}, { token: done.failure.message }, undefined, 422)
          return goTo(ctx, "/user/settings/account", "email-activated")
        })
      )
    ]
  })

// Access tokens and OAuth2 applications (Forgejo's routers/web/user/setting/applications.go and
// oauth2_common.go, `/user/settings/applications`):
// - tokens: a name and a level (none, read, read and write) per scope category, plus
//   `public-only`, as Forgejo's form sends them (`scope` fields); the token is shown once, in the
//   answer to the form, never again; deleting by id;
// - OAuth2 applications: a name, redirect URIs (one a line), confidential or not; the client
//   secret is shown once, when the application is made; editing
//   (`/user/settings/applications/oauth2/{id}`) and deleting (`…/{id}/delete`).
// The rules are TokensService's and OAuth2Service's, as over the API.
import { Effect } from "effect"
import { categories } from "../../../auth/Scopes.ts"
import * as Errors from "../../../http/Errors.ts"
import type { OAuth2Application } from "../../../oauth2/Api.ts"
import { OAuth2Service } from "../../../oauth2/Service.ts"
import { TokensService } from "../../../tokens/Service.ts"
import { checkbox, type FieldErrors, field, fieldOfMessage, formError, formNotice, textArea } from "../../Form.ts"
import { empty, type Html, html } from "../../Html.ts"
import { icon } from "../../Icons.ts"
import { csrfField } from "../../Layout.ts"
import type { Form, Web, WebContext } from "../../Web.ts"
import { buttonForm, SIGNED_IN, section, settingsPage } from "./Frame.ts"

const NOTICES: Readonly<Record<string, string>> = {
  "token-deleted": "The access token has been deleted. Programs that used it can no longer sign in with it.",
  "app-updated": "The OAuth2 application has been updated.",
  "app-deleted": "The OAuth2 application has been deleted."
}

const ALL = { page: 1, limit: 100, offset: 0 }

const CATEGORY_LABELS: Readonly<Record<(typeof categories)[number], string>> = {
  activitypub: "ActivityPub",
  admin: "Site administration",
  misc: "Miscellaneous",
  notification: "Notifications",
  organization: "Organizations",
  package: "Packages",
  issue: "Issues and pull requests",
  repository: "Repositories",
  user: "User"
}

interface TokenTyped {
  readonly name: string
  readonly scopes: ReadonlyArray<string>
}

interface AppTyped {
  readonly application_name: string
  readonly redirect_uris: string
  readonly confidential_client: boolean
}

const appOf = (form: Form): AppTyped => ({
  application_name: (form.get("application_name") ?? "").trim(),
  redirect_uris: form.get("redirect_uris") ?? "",
  confidential_client: form.get("confidential_client") !== null
})

const urisOf = (text: string) =>
  text
    .split(/\r?\n/)
    .map((line) => line.trim())
    .filter((line) => line !== "")

/** Where OAuth2Service's refusals belong. */
const APP_FIELDS = { name: "application_name", redirecturis: "redirect_uris" }

/** The form fields of an application (creating and editing). */
const appFields = (typed: AppTyped, errors: FieldErrors) => html`
  ${field({ name: "application_name", label: "Application name", value: typed.application_name, autocomplete: "off", required: true }, errors)}
  ${textArea({ name: "redirect_uris", label: "Redirect URIs", value: typed.redirect_uris, rows: 3, code: true, required: true, hint: "One a line: http(s) URLs, or a native app's reverse-domain scheme (com.example.app:/callback)." }, errors)}
  ${checkbox({ name: "confidential_client", label: "Confidential client", checked: typed.confidential_client, hint: "For applications that can keep the secret (a server); leave unchecked for native and browser applications." })}`

/** Something shown once (a token, a client secret), with the warning to copy it now. */
const shownOnce = (label: string, value: string, testId: string, extra: Html = empty) =>
  html`<div class="flash flash-success mb-3" role="status">
  <p class="text-bold mb-2">${label}</p>
  ${extra}
  <p class="mb-2"><code class="text-mono f4 wb-break-all user-select-contain" data-testid="${testId}">${value}</code></p>
  <p class="mb-0">Copy it now: it is shown this once only.</p>
</div>`

export const ApplicationSettingsPages = (web: Web) =>
  Effect.gen(function* () {
    const tokens = yield* TokensService
    const apps = yield* OAuth2Service

    const applicationsPage = (
      ctx: WebContext,
      options: {
        readonly token?: TokenTyped
        readonly app?: AppTyped
        readonly errors?: FieldErrors
        readonly message?: string
        readonly created?: Html
        readonly status?: number
      } = {}
    ) =>
      Effect.gen(function* () {
        const user = ctx.viewer!.user
        const errors = options.errors ?? {}
        const list = yield* tokens.list(user, ALL)
        const applications = yield* apps.list(user.id, ALL)
        const wanted = new Map(
          (options.token?.scopes ?? []).map((s) => {
            const [level, category] = s.split(":")
            return [category ?? "", level ?? ""] as const
          })
        )
        const tokenRows =
          list.rows.length === 0
            ? html`<div class="Box-body color-fg-muted">There are no access tokens on this account.</div>`
            : html`<ul>${list.rows.map(
                (t) => html`<li class="Box-row d-flex flex-items-center" data-testid="token-row">
  ${icon("key", 24)}
  <div class="ml-3 flex-auto min-width-0">
    <strong class="d-block wb-break-word" data-testid="token-name">${t.name}</strong>
    <span class="d-block f6 color-fg-muted">…${t.lastEight} · ${t.scopes.join(", ")}</span>
  </div>
  ${buttonForm(ctx, "/user/settings/applications/delete", { id: String(t.id) }, html`${icon("trash")} Delete`, {
    danger: true,
    accessibleName: `Delete the token ${t.name}`
  })}
</li>`
              )}</ul>`
        const appRows =
          applications.rows.length === 0
            ? html`<div class="Box-body color-fg-muted">There are no OAuth2 applications on this account.</div>`
            : html`<ul>${applications.rows.map(
                (a: OAuth2Application) => html`<li class="Box-row d-flex flex-items-center" data-testid="app-row">
  ${icon("apps", 24)}
  <div class="ml-3 flex-auto min-width-0">
    <strong class="d-block wb-break-word" data-testid="app-name">${a.name}</strong>
    <span class="d-block f6 color-fg-muted wb-break-all">Client ID ${a.client_id}</span>
  </div>
  <a class="btn btn-sm mr-2" href="/user/settings/applications/oauth2/${a.id}" aria-label="${`Edit ${a.name}`}">${icon("pencil")} Edit</a>
  ${buttonForm(ctx, `/user/settings/applications/oauth2/${a.id}/delete`, {}, html`${icon("trash")} Delete`, {
    danger: true,
    accessibleName: `Delete ${a.name}`
  })}
</li>`
              )}</ul>`
        return settingsPage(
          web,
          ctx,
          { path: "/user/settings/applications", title: "Applications", status: options.status ?? 200 },
          html`${formNotice(NOTICES[ctx.url.searchParams.get("done") ?? ""])}${options.created ?? empty}${formError(options.message)}
${section(
  "Access tokens",
  html`<div class="Box-body color-fg-muted border-bottom">Tokens let programs use the API and git over HTTP as you, within their scopes.</div>
  ${tokenRows}
  <div class="Box-body border-top">
    <form method="post" action="/user/settings/applications" data-testid="new-token-form">
      ${csrfField(ctx)}
      ${field({ name: "name", label: "Token name", value: options.token?.name ?? "", autocomplete: "off", required: true }, errors)}
      <fieldset class="mb-3" aria-describedby="${errors.scope === undefined ? "scope-hint" : "scope-hint field-scope-error"}">
        <legend class="text-bold mb-2">Scopes</legend>
        <p class="note mt-0 mb-2" id="scope-hint">What the token may reach; anything it is not given stays out of its reach.</p>
        ${categories.map((c) => {
          const id = `scope-${c}`
          const level = wanted.get(c) ?? ""
          return html`<div class="d-flex flex-items-center mb-1">
  <label class="col-6" for="${id}">${CATEGORY_LABELS[c]}</label>
  <select class="form-select select-sm" id="${id}" name="scope">
    <option value=""${level === "" ? html` selected` : empty}>No access</option>
    <option value="read:${c}"${level === "read" ? html` selected` : empty}>Read</option>
    <option value="write:${c}"${level === "write" ? html` selected` : empty}>Read and write</option>
  </select>
</div>`
        })}
        ${checkbox({ name: "scope", value: "public-only", label: "Public only: the token sees public repositories and accounts only", checked: (options.token?.scopes ?? []).includes("public-only") })}
        ${errors.scope === undefined ? empty : html`<p class="note color-fg-danger" id="field-scope-error" data-testid="error-scope">${errors.scope}</p>`}
      </fieldset>
      <button class="btn btn-primary" type="submit">${icon("plus")} Generate token</button>
    </form>
  </div>`,
  "tokens"
)}
${section(
  "OAuth2 applications",
  html`${appRows}
  <div class="Box-body border-top">
    <form method="post" action="/user/settings/applications/oauth2" data-testid="new-app-form">
      ${csrfField(ctx)}
      ${appFields(options.app ?? { application_name: "", redirect_uris: "", confidential_client: true }, errors)}
      <button class="btn btn-primary mt-2" type="submit">${icon("plus")} Create application</button>
    </form>
  </div>`,
  "oauth2-apps"
)}`
        )
      })

    const editPage = (
      ctx: WebContext,
      app: OAuth2Application,
      typed: AppTyped,
      errors: FieldErrors,
      options: { readonly created?: Html; readonly status?: number } = {}
    ) =>
      settingsPage(
        web,
        ctx,
        { path: "/user/settings/applications", title: `OAuth2 application ${app.name}`, status: options.status ?? 200 },
        html`${options.created ?? empty}
${section(
  "Client",
  html`<div class="Box-body">
    <p class="mb-1">Client ID</p>
    <p><code class="text-mono wb-break-all" data-testid="client-id">${app.client_id}</code></p>
    <p class="color-fg-muted mb-0">The client secret was shown once, when the application was made.</p>
  </div>`
)}
<form method="post" action="/user/settings/applications/oauth2/${app.id}" data-testid="edit-app-form">
  ${csrfField(ctx)}
  ${appFields(typed, errors)}
  <button class="btn btn-primary mt-2" type="submit">Save application</button>
  <a class="btn mt-2 ml-2" href="/user/settings/applications">Back to applications</a>
</form>`
      )

    /** The application id of a `/user/settings/applications/oauth2/{id}[/delete]` path. */
    const appIdOf = (ctx: WebContext) =>
      /^\/user\/settings\/applications\/oauth2\/([^/]+)/.exec(ctx.url.pathname)?.[1] ?? ""

    const appTypedOf = (app: OAuth2Application): AppTyped => ({
      application_name: app.name,
      redirect_uris: app.redirect_uris.join("\n"),
      confidential_client: app.confidential_client
    })

    return [
      web.route("GET", "/user/settings/applications", SIGNED_IN, (ctx) => applicationsPage(ctx)),
      web.route("POST", "/user/settings/applications", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const typed: TokenTyped = {
            name: (form.get("name") ?? "").trim(),
            scopes: form.getAll("scope").filter((s) => s !== "")
          }
          const errors: Record<string, string> = {}
          if (typed.name === "") errors.name = "Give the token a name."
          if (typed.scopes.length === 0) errors.scope = "Choose at least one scope."
          if (Object.keys(errors).length > 0) return yield* applicationsPage(ctx, { token: typed, errors, status: 422 })
          const created = yield* Effect.result(tokens.create(ctx.viewer!.user, typed))
          if (created._tag === "Failure") {
            const message = created.failure.message
            const name = /scope/.test(message) ? "scope" : "name"
            return yield* applicationsPage(ctx, { token: typed, errors: { [name]: message }, status: 422 })
          }
          return yield* applicationsPage(ctx, {
            created: shownOnce(`Your new token ${created.success.row.name}:`, created.success.token, "new-token"),
            status: 201
          })
        })
      ),
      web.route("POST", "/user/settings/applications/delete", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const id = form.get("id") ?? ""
          // By id only (the API also takes a name; a form always sends the id).
          if (!/^\d{1,15}$/.test(id)) return web.notFound(ctx)
          const removed = yield* Effect.result(tokens.remove(ctx.viewer!.user, id))
          if (removed._tag === "Failure") {
            if (removed.failure instanceof Errors.NotFound) return web.notFound(ctx)
            return yield* applicationsPage(ctx, { message: removed.failure.message, status: 422 })
          }
          return web.redirect(ctx, "/user/settings/applications?done=token-deleted")
        })
      ),
      web.route("POST", "/user/settings/applications/oauth2", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const typed = appOf(form)
          const created = yield* Effect.result(
            apps.create(ctx.viewer!.user.id, {
              name: typed.application_name,
              redirect_uris: urisOf(typed.redirect_uris),
              confidential_client: typed.confidential_client
            })
          )
          if (created._tag === "Failure") {
            const message = created.failure.message
            const name = fieldOfMessage(message, APP_FIELDS) ?? "application_name"
            return yield* applicationsPage(ctx, { app: typed, errors: { [name]: message }, status: 422 })
          }
          const app = created.success
          return editPage(
            ctx,
            app,
            appTypedOf(app),
            {},
            {
              created: shownOnce(
                `The application ${app.name} has been created. Its client secret:`,
                app.client_secret,
                "client-secret"
              ),
              status: 201
            }
          )
        })
      ),
      web.route("GET", "/user/settings/applications/oauth2/:id", SIGNED_IN, (ctx) =>
        Effect.gen(function* () {
          const app = yield* apps.get(ctx.viewer!.user.id, appIdOf(ctx))
          return editPage(ctx, app, appTypedOf(app), {})
        })
      ),
      web.route("POST", "/user/settings/applications/oauth2/:id", SIGNED_IN, (ctx, form) =>
        Effect.gen(function* () {
          const userId = ctx.viewer!.user.id
          const app = yield* apps.get(userId, appIdOf(ctx))
          const typed = appOf(form)
          const updated = yield* Effect.result(
            apps.update(userId, String(app.id), {
              name: typed.application_name,
              redirect_uris: urisOf(typed.redirect_uris),
              confidential_client: typed.confidential_client
            })
          )
          if (updated._tag === "Failure") {
            if (updated.failure instanceof Errors.NotFound) return web.notFound(ctx)
            const message = updated.failure.message
            const name = fieldOfMessage(message, APP_FIELDS) ?? "application_name"
            return editPage(ctx, app, typed, { [name]: message }, { status: 422 })
          }
          return web.redirect(ctx, "/user/settings/applications?done=app-updated")
        })
      ),
      web.route("POST", "/user/settings/applications/oauth2/:id/delete", SIGNED_IN, (ctx) =>
        Effect.gen(function* () {
          yield* apps.remove(ctx.viewer!.user.id, appIdOf(ctx))
          return web.redirect(ctx, "/user/settings/applications?done=app-deleted")
        })
      )
    ]
  })

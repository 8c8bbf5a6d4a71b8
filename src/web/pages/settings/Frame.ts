// The frame of the account settings pages (Forgejo's `/user/settings/…`): the menu beside the
// page's own content. Every settings page is for the signed-in account only.
import { type Html, html } from "../../Html.ts"
import { icon } from "../../Icons.ts"
import { csrfField } from "../../Layout.ts"
import type { RouteOptions, Web, WebContext } from "../../Web.ts"

export const SIGNED_IN: RouteOptions = { access: "signed-in" }

const MENU: ReadonlyArray<readonly [string, string, string]> = [
  ["/user/settings", "Profile", "person"],
  ["/user/settings/account", "Account", "gear"],
  ["/user/settings/security", "Security", "shield-lock"],
  ["/user/settings/applications", "Applications", "apps"],
  ["/user/settings/keys", "SSH / GPG keys", "key"],
  ["/user/settings/hooks", "Webhooks", "webhook"]
]

/** A settings page: `path` is the menu entry it belongs to. */
export const settingsPage = (
  web: Web,
  ctx: WebContext,
  options: { readonly path: string; readonly title: string; readonly status?: number },
  content: Html
) =>
  web.page(
    ctx,
    { title: options.title, ...(options.status === undefined ? {} : { status: options.status }) },
    html`<div class="container-lg p-responsive py-4 d-md-flex">
  <nav class="col-md-3 pr-md-4 mb-4" aria-label="Settings">
    <div class="menu">
      <span class="menu-heading">Settings</span>
      ${MENU.filter(([path]) => path !== "/user/settings/hooks" || !web.settings.security.DISABLE_WEBHOOKS).map(
        ([path, label, name]) =>
          html`<a class="menu-item" href="${path}"${path === options.path ? html` aria-current="page"` : html``}>${icon(name)} ${label}</a>`
      )}
    </div>
  </nav>
  <div class="col-md-9" data-testid="settings">
    <h1 class="h2 mb-3">${options.title}</h1>
    ${content}
  </div>
</div>`
  )

/** A box with a heading, as each part of a settings page. */
export const section = (title: string, body: Html, testId?: string) =>
  html`<section class="Box mb-4"${testId === undefined ? html`` : html` data-testid="${testId}"`}>
  <div class="Box-header"><h2 class="Box-title">${title}</h2></div>
  ${body}
</section>`

/** A small POST form holding one button (delete, make primary), with hidden fields. */
export const buttonForm = (
  ctx: WebContext,
  action: string,
  fields: Readonly<Record<string, string>>,
  label: Html | string,
  options: { readonly danger?: boolean; readonly accessibleName?: string } = {}
) => html`<form method="post" action="${action}" class="d-inline">
  ${csrfField(ctx)}
  ${Object.entries(fields).map(([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`)}
  <button class="btn btn-sm${options.danger === true ? " btn-danger" : ""}" type="submit"${
    options.accessibleName === undefined ? html`` : html` aria-label="${options.accessibleName}"`
  }>${label}</button>
</form>`

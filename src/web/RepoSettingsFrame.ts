// The frame of a repository's settings pages (Forgejo's `templates/repo/settings/navbar.tmpl`): the
// menu beside the page's own content, inside the repository frame with its Settings tab. Every
// settings route is an `adminRoute`: the repository is opened as every repository page opens it
// (RepoFrame's `route`: the 404 page when the viewer may not see it, a redirect after a rename),
// then the viewer must administer it (Forgejo's `reqRepoAdmin`, the API's `role: "admin"`): a 403
// page otherwise.
import { Effect } from "effect"
import type { HttpServerResponse } from "effect/http"
import { atLeast } from "../lib/AccessMode.ts"
import { type Html, html } from "./Html.ts"
import { icon } from "./Icons.ts"
import type { RepoFrame, RepoView } from "./RepoFrame.ts"
import type { Form, Web } from "./Web.ts"

export type SettingsMenu = "options" | "collaboration" | "branches" | "tags" | "hooks" | "keys"

const MENU: ReadonlyArray<readonly [SettingsMenu, string, string, string]> = [
  ["options", "", "Options", "gear"],
  ["collaboration", "/collaboration", "Collaborators", "people"],
  ["branches", "/branches", "Branches", "git-branch"],
  ["tags", "/tags", "Tags", "tag"],
  ["hooks", "/hooks", "Webhooks", "webhook"],
  ["keys", "/keys", "Deploy keys", "key"]
]

export const makeRepoSettingsFrame = (web: Web, frame: RepoFrame) => {
  /** A settings page: the menu, the heading, then `content`. */
  const page = (
    view: RepoView,
    options: { readonly menu: SettingsMenu; readonly title: string; readonly status?: number },
    content: Html
  ) =>
    frame.page(
      view,
      {
        title: `${options.title} · ${view.owner.name}/${view.repo.name}`,
        tab: "settings",
        ...(options.status === undefined ? {} : { status: options.status })
      },
      html`<div class="d-md-flex">
  <nav class="col-md-3 pr-md-4 mb-4" aria-label="Repository settings">
    <div class="menu">
      <span class="menu-heading">Settings</span>
      ${MENU.filter(([name]) => name !== "hooks" || !web.settings.security.DISABLE_WEBHOOKS).map(
        ([name, path, label, glyph]) =>
          html`<a class="menu-item" href="${view.base}/settings${path}"${
            name === options.menu ? html` aria-current="page"` : html``
          }>${icon(glyph)} ${label}</a>`
      )}
    </div>
  </nav>
  <div class="col-md-9" data-testid="repo-settings">
    <h1 class="h2 mb-3">${options.title}</h1>
    ${content}
  </div>
</div>`
    )

  /** A settings route: signed in, the repository visible (else 404), administered (else 403). */
  const adminRoute = (
    method: "GET" | "POST",
    path: string,
    handler: (view: RepoView, form: Form) => Effect.Effect<HttpServerResponse.HttpServerResponse, unknown>
  ) =>
    frame.route(method, path, { access: "signed-in" }, (view, form) =>
      atLeast(view.access.mode, "admin")
        ? handler(view, form)
        : Effect.succeed(
            web.errorPage(
              view.ctx,
              403,
              "Forbidden",
              "Only the repository's administrators may change its settings. Ask its owner for admin access."
            )
          )
    )

  return { page, adminRoute }
}

export type RepoSettingsFrame = ReturnType<typeof makeRepoSettingsFrame>

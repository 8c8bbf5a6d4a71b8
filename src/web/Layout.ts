// The frame of every page: the header (home, explore, the search box, who is signed in), the page's
// own content, and the footer. Colours follow the theme the viewer chose in /user/settings, else
// [ui] DEFAULT_THEME; `auto` follows the system's light or dark preference (Primer's
// `data-color-mode`). No inline script or style: the CSP forbids them.
import { themeColorMode } from "../config/Settings.ts"
import { VERSION } from "../version.ts"
import { assetUrl } from "./Assets.ts"
import { empty, type Html, html } from "./Html.ts"
import { icon } from "./Icons.ts"
import type { WebContext } from "./Web.ts"

/** A form's hidden CSRF field (every form that POSTs carries it). */
export const csrfField = (ctx: WebContext) => html`<input type="hidden" name="_csrf" value="${ctx.csrf}">`

const account = (ctx: WebContext) => {
  const viewer = ctx.viewer
  if (viewer === undefined) {
    const back = ctx.url.pathname.startsWith("/user/") ? "" : ctx.url.pathname + ctx.url.search
    const login = back === "" || back === "/" ? "/user/login" : `/user/login?redirect_to=${encodeURIComponent(back)}`
    return html`<div class="Header-item">
        <a class="Header-link" href="${login}">${icon("sign-in")} Sign in</a>
      </div>
      ${
        ctx.settings.service.DISABLE_REGISTRATION
          ? empty
          : html`<div class="Header-item mr-0"><a class="Header-link" href="/user/sign_up">Sign up</a></div>`
      }`
  }
  const name = viewer.user.name
  return html`<div class="Header-item">
      <a class="Header-link" href="/notifications" data-testid="notifications-link" aria-label="${
        ctx.unread === 0 ? "Notifications" : `Notifications: ${ctx.unread} unread`
      }">${icon("bell")}${ctx.unread === 0 ? empty : html`<span class="Counter ml-1" data-testid="unread-count">${ctx.unread}</span>`}</a>
    </div>
    <div class="Header-item">
      <a class="Header-link" href="/repo/create" data-testid="new-repository">${icon("plus")} New repository</a>
    </div>
    <div class="Header-item">
      <a class="Header-link" href="/${name}" data-testid="signed-in-as">${icon("person")} ${name}</a>
    </div>
    <div class="Header-item mr-0">
      <form method="post" action="/user/logout">
        ${csrfField(ctx)}
        <button type="submit" class="btn btn-sm">${icon("sign-out")} Sign out</button>
      </form>
    </div>`
}

/** The viewer's chosen theme (`/user/settings`), else the instance's [ui] DEFAULT_THEME. */
const colorMode = (ctx: WebContext) => themeColorMode(ctx.viewer?.user.theme || ctx.settings.ui.DEFAULT_THEME) ?? "auto"

export const layout = (ctx: WebContext, title: string, main: Html, head: Html = empty): Html => {
  const query = ctx.url.pathname.startsWith("/explore/") ? (ctx.url.searchParams.get("q") ?? "") : ""
  return html`<!DOCTYPE html>
<html lang="en" data-color-mode="${colorMode(ctx)}" data-light-theme="light" data-dark-theme="dark">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} - Hearth</title>
<link rel="icon" href="${assetUrl("favicon.svg")}" type="image/svg+xml">
<link rel="stylesheet" href="${assetUrl("hearth.css")}">
<script src="${assetUrl("htmx.js")}" defer></script>
${head}
</head>
<body>
<header class="Header hearth-header" role="banner">
  <div class="Header-item">
    <a class="Header-link f4 d-flex flex-items-center" href="/">${icon("flame", 24)}<span class="ml-2">Hearth</span></a>
  </div>
  <nav class="Header-item" aria-label="Site">
    <a class="Header-link" href="/explore/repos">Explore</a>
  </nav>
  <div class="Header-item Header-item--full">
    <form role="search" method="get" action="/explore/repos">
      <input class="form-control input-sm hearth-search" type="search" name="q" value="${query}" placeholder="Search repositories" aria-label="Search repositories">
    </form>
  </div>
  ${account(ctx)}
</header>
<main class="hearth-main" id="main">
${main}
</main>
<footer class="hearth-footer container-lg p-responsive py-4 mt-6 d-flex flex-justify-between color-fg-muted f6" role="contentinfo">
  <span>Powered by Hearth ${VERSION}</span>
  <a href="/api/swagger">API</a>
</footer>
</body>
</html>`
}

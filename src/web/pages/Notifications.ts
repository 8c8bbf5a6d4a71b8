// The signed-in account's notifications in the browser (Forgejo's routers/web/user/notification.go,
// templates/user/notification/*): `/notifications?type=unread|read|pinned` lists the threads of
// that status (newest first, paged); `POST /notifications/status` (Forgejo's fields
// `notification_id`, `status`) marks one read, unread or pinned (unpinning marks it read, as
// Forgejo), and `POST /notifications/purge` marks every unread one read. Everything goes through
// NotificationsService, the API's service: a thread of someone else is a 404. The header's unread
// count is the context's (src/web/Web.ts).
import { Effect } from "effect"
import { NotificationsService, type NotificationThread } from "../../notifications/Service.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { when } from "../RepoViews.ts"
import type { Web, WebContext } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

/** Threads on a page (Forgejo's web default). */
export const NOTIFICATIONS_PAGE_SIZE = 20

type Tab = "unread" | "read" | "pinned"
const TABS: ReadonlyArray<readonly [Tab, string]> = [
  ["unread", "Unread"],
  ["read", "Read"],
  ["pinned", "Pinned"]
]

const tabOf = (ctx: WebContext): Tab => {
  const type = ctx.url.searchParams.get("type")
  return type === "read" || type === "pinned" ? type : "unread"
}

const listUrl = (tab: Tab, page?: number) =>
  `/notifications${tab === "unread" ? "" : `?type=${tab}`}${page === undefined || page <= 1 ? "" : `${tab === "unread" ? "?" : "&"}page=${page}`}`

export const NotificationPages = (web: Web) =>
  Effect.gen(function* () {
    const notifications = yield* NotificationsService

    const statusButton = (
      ctx: WebContext,
      thread: NotificationThread,
      tab: Tab,
      status: string,
      label: string,
      glyph: string
    ) =>
      html`<form class="d-inline ml-1" method="post" action="/notifications/status">
    ${csrfField(ctx)}
    <input type="hidden" name="notification_id" value="${thread.id}">
    <input type="hidden" name="status" value="${status}">
    <input type="hidden" name="type" value="${tab}">
    <button class="btn btn-sm" type="submit" data-testid="mark-${status}" aria-label="${label}: ${thread.subject.title}">${icon(glyph)} ${label}</button>
  </form>`

    const row = (ctx: WebContext, thread: NotificationThread, tab: Tab) => {
      const subject = thread.subject
      const glyph =
        subject.type === "Pull" ? "git-pull-request" : subject.state === "closed" ? "issue-closed" : "issue-opened"
      return html`<li class="Box-row d-flex flex-items-center flex-wrap" data-testid="notification" id="notification-${thread.id}">
  <div class="flex-auto min-width-0">
    <p class="f6 color-fg-muted mb-1">${icon("repo")} ${thread.repository.full_name} · ${when(thread.updated_at)}</p>
    <a class="Link--primary text-bold wb-break-word" href="${subject.html_url}" data-testid="notification-title">${icon(glyph)} ${subject.title}</a>
  </div>
  <div class="d-flex flex-items-center">
    ${
      tab === "pinned"
        ? statusButton(ctx, thread, tab, "read", "Unpin", "pin")
        : html`${
            tab === "unread"
              ? statusButton(ctx, thread, tab, "read", "Mark read", "check")
              : statusButton(ctx, thread, tab, "unread", "Mark unread", "dot-fill")
          }${statusButton(ctx, thread, tab, "pinned", "Pin", "pin")}`
    }
  </div>
</li>`
    }

    return [
      web.route("GET", "/notifications", { access: "signed-in" }, (ctx) =>
        Effect.gen(function* () {
          const tab = tabOf(ctx)
          const window = pageOf(ctx, NOTIFICATIONS_PAGE_SIZE)
          const listed = yield* notifications.list(
            ctx.viewer!,
            undefined,
            { statusTypes: [tab], subjectTypes: [] },
            window
          )
          return web.page(
            ctx,
            { title: "Notifications" },
            html`<div class="container-lg p-responsive py-4">
<div class="d-flex flex-items-center flex-wrap mb-3">
  <h1 class="h2 flex-auto">Notifications</h1>
  ${
    tab === "unread" && listed.total > 0
      ? html`<form method="post" action="/notifications/purge">
    ${csrfField(ctx)}
    <button class="btn btn-sm" type="submit" data-testid="mark-all-read">${icon("check")} Mark all as read</button>
  </form>`
      : empty
  }
</div>
<nav class="UnderlineNav mb-3" aria-label="Notifications">
  <div class="UnderlineNav-body">
    ${TABS.map(
      ([name, label]) =>
        html`<a class="UnderlineNav-item" href="${listUrl(name)}"${tab === name ? html` aria-current="page"` : empty} data-testid="tab-${name}">${label}${
          name === "unread" && ctx.unread > 0 ? html` <span class="Counter">${ctx.unread}</span>` : empty
        }</a>`
    )}
  </div>
</nav>
${
  listed.total === 0
    ? html`<div class="blankslate" data-testid="no-notifications"><p>There are no ${tab} notifications.</p></div>`
    : html`<ul class="Box" data-testid="notification-list">${listed.rows.map((thread) => row(ctx, thread, tab))}</ul>`
}
${pager(ctx, window, listed.total)}
</div>`
          )
        })
      ),
      web.route("POST", "/notifications/status", { access: "signed-in" }, (ctx, form) =>
        Effect.gen(function* () {
          const status = form.get("status") ?? ""
          if (status !== "read" && status !== "unread" && status !== "pinned")
            return web.errorPage(ctx, 400, "Bad request", "The status must be read, unread or pinned.")
          // Another account's thread (the API's 403) or none: the 404 page, nothing changed.
          const marked = yield* Effect.result(
            notifications.markThread(ctx.viewer!, form.get("notification_id") ?? "", status)
          )
          if (marked._tag === "Failure") return web.notFound(ctx)
          const back = form.get("type")
          return web.redirect(ctx, listUrl(back === "read" || back === "pinned" ? back : "unread"))
        })
      ),
      web.route("POST", "/notifications/purge", { access: "signed-in" }, (ctx) =>
        Effect.gen(function* () {
          yield* notifications.markRead(ctx.viewer!, undefined, { statusTypes: ["unread"], toStatus: "read" })
          return web.redirect(ctx, "/notifications")
        })
      )
    ]
  })

// The signed-in account's issues and pull requests across repositories (Forgejo's
// routers/web/user/home.go `Issues`/`Pulls`, templates/user/dashboard/issues.tmpl): `/issues` and
// `/pulls`, with Forgejo's tabs (`type=your_repositories|assigned|created_by|mentioned`, and for
// pull requests `review_requested|reviewed_by`),
// open/closed (`state`), `sort`, a keyword (`q`) and pages, over the repositories the account may
// see. Everything is IssuesService.search, the API's `/repos/issues/search`, so visibility and the
// issues unit hold as there. Anonymous visitors are sent to sign in.
import { Effect } from "effect"
import type { Page } from "../../http/Pagination.ts"
import type { Issue } from "../../issues/Schema.ts"
import { type IssueSearchQuery, IssuesService } from "../../issues/Service.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { repoBase } from "../RepoFrame.ts"
import { when } from "../RepoViews.ts"
import type { Web, WebContext } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"
import { ISSUES_PAGE_SIZE, labelChip } from "./RepoIssues.ts"

type Kind = "issues" | "pulls"
type Tab = "your_repositories" | "assigned" | "created_by" | "mentioned" | "review_requested" | "reviewed_by"

/**
 * Forgejo's tabs. "Your repositories" is the repositories the account owns here (Forgejo also
 * counts those it collaborates on; the search has no such filter yet).
 */
const TABS: ReadonlyArray<readonly [Tab, string]> = [
  ["your_repositories", "Your repositories"],
  ["assigned", "Assigned"],
  ["created_by", "Created by you"],
  ["mentioned", "Mentioning you"]
]

/** Forgejo shows the review tabs on the pull requests' dashboard only (templates/user/dashboard/issues.tmpl). */
const PULL_TABS: ReadonlyArray<readonly [Tab, string]> = [
  ...TABS,
  ["review_requested", "Review requests"],
  ["reviewed_by", "Reviewed by you"]
]

const tabsOf = (kind: Kind) => (kind === "pulls" ? PULL_TABS : TABS)

/** Forgejo's dashboard sorts (its default: recently updated). */
const SORTS: Readonly<Record<string, string>> = {
  recentupdate: "Recently updated",
  leastupdate: "Least recently updated",
  latest: "Newest",
  oldest: "Oldest",
  mostcomment: "Most commented",
  leastcomment: "Least commented",
  nearduedate: "Nearest due date",
  farduedate: "Farthest due date"
}

const tabOf = (ctx: WebContext, kind: Kind): Tab => {
  const raw = ctx.url.searchParams.get("type")
  return tabsOf(kind).find(([t]) => t === raw)?.[0] ?? "your_repositories"
}

/** The dashboard's link with `changes` applied to the current query (and back to page 1). */
const linkOf = (ctx: WebContext, changes: Readonly<Record<string, string | undefined>>) => {
  const params = new URLSearchParams(ctx.url.searchParams)
  params.delete("page")
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined) params.delete(k)
    else params.set(k, v)
  }
  const query = params.toString()
  return `${ctx.url.pathname}${query === "" ? "" : `?${query}`}`
}

export const DashboardPages = (web: Web) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService

    const row = (kind: Kind, issue: Issue) => {
      const base = repoBase(issue.repository.owner, issue.repository.name)
      const open = issue.state === "open"
      const glyph =
        kind === "pulls" ? (open ? "git-pull-request" : "git-merge") : open ? "issue-opened" : "issue-closed"
      return html`<li class="Box-row d-flex flex-items-start" data-testid="issue-row">
  <span class="mr-2 ${open ? "color-fg-success" : "color-fg-done"}" role="img" aria-label="${open ? "Open" : "Closed"}">${icon(glyph)}</span>
  <div class="flex-auto min-width-0">
    <a class="Link--muted mr-1" href="${base}">${issue.repository.full_name}</a>
    <a class="Link--primary text-bold wb-break-word" href="${base}/${kind}/${issue.number}" data-testid="issue-title">${issue.title}</a>
    ${issue.labels.map((l) => labelChip(l))}
    <div class="f6 color-fg-muted mt-1">#${issue.number} opened ${when(issue.created_at)} by ${issue.user.login}</div>
  </div>
  ${issue.comments === 0 ? empty : html`<span class="color-fg-muted f6 ml-2">${icon("comment")} ${issue.comments}</span>`}
</li>`
    }

    const dashboard = (kind: Kind) => (ctx: WebContext) =>
      Effect.gen(function* () {
        const viewer = ctx.viewer!
        const params = ctx.url.searchParams
        const tab = tabOf(ctx, kind)
        const state = params.get("state") === "closed" ? "closed" : "open"
        const sort = SORTS[params.get("sort") ?? ""] === undefined ? "recentupdate" : params.get("sort")!
        const keyword = (params.get("q") ?? "").trim()
        const query: IssueSearchQuery = {
          type: kind,
          sort,
          ...(keyword === "" ? {} : { q: keyword }),
          ...(tab === "your_repositories" ? { owner: viewer.user.name } : {}),
          ...(tab === "assigned" ? { assigned: "true" } : {}),
          ...(tab === "created_by" ? { created: "true" } : {}),
          ...(tab === "mentioned" ? { mentioned: "true" } : {}),
          ...(tab === "review_requested" ? { review_requested: "true" } : {}),
          ...(tab === "reviewed_by" ? { reviewed: "true" } : {})
        }
        const window = pageOf(ctx, ISSUES_PAGE_SIZE)
        const one: Page = { page: 1, limit: 1, offset: 0 }
        const [listed, open, closed] = yield* Effect.all(
          [
            issues.search(viewer, { ...query, state }, window),
            issues.search(viewer, { ...query, state: "open" }, one),
            issues.search(viewer, { ...query, state: "closed" }, one)
          ],
          { concurrency: "unbounded" }
        )
        const what = kind === "issues" ? "Issues" : "Pull requests"
        const stateLink = (name: "open" | "closed", n: number, label: string) =>
          html`<a class="btn-link mr-3${state === name ? " text-bold color-fg-default" : " Link--muted"}" href="${linkOf(ctx, { state: name })}" data-testid="state-${name}"${
            state === name ? html` aria-current="page"` : empty
          }><span data-testid="count-${name}">${n}</span> ${label}</a>`
        return web.page(
          ctx,
          { title: what },
          html`<div class="container-lg p-responsive py-4">
<h1 class="h2 mb-3">${what}</h1>
<nav class="UnderlineNav mb-3" aria-label="${what}">
  <div class="UnderlineNav-body">
    ${tabsOf(kind).map(
      ([name, label]) =>
        html`<a class="UnderlineNav-item" href="${linkOf(ctx, { type: name })}"${tab === name ? html` aria-current="page"` : empty} data-testid="tab-${name}">${label}</a>`
    )}
  </div>
</nav>
<form class="d-flex flex-items-center mb-3" method="get" action="/${kind}" role="search" data-testid="dashboard-filter">
  <input type="hidden" name="type" value="${tab}">
  <input type="hidden" name="state" value="${state}">
  <input type="hidden" name="sort" value="${sort}">
  <label class="sr-only" for="dashboard-q">Search ${what.toLowerCase()}</label>
  <input class="form-control flex-auto mr-2" id="dashboard-q" type="search" name="q" value="${keyword}" placeholder="Search ${what.toLowerCase()}">
  <button class="btn" type="submit">Search</button>
</form>
<div class="Box">
  <div class="Box-header d-flex flex-items-center flex-wrap">
    <div class="flex-auto">
      ${stateLink("open", open.total, "Open")}
      ${stateLink("closed", closed.total, "Closed")}
    </div>
    <details class="details-reset details-overlay" data-testid="sort-menu">
      <summary class="btn-link Link--muted">Sort: ${SORTS[sort]}</summary>
      <div class="SelectMenu right-0"><div class="SelectMenu-modal"><div class="SelectMenu-list">${Object.entries(
        SORTS
      ).map(
        ([key, label]) =>
          html`<a class="SelectMenu-item" role="menuitemradio" aria-checked="${key === sort ? "true" : "false"}" href="${linkOf(ctx, { sort: key })}">${label}</a>`
      )}</div></div></div>
    </details>
  </div>
  ${
    listed.rows.length === 0
      ? html`<div class="blankslate" data-testid="no-issues"><p>Nothing here.</p></div>`
      : html`<ul data-testid="issue-list">${listed.rows.map((i) => row(kind, i))}</ul>`
  }
</div>
${pager(ctx, window, listed.total)}
</div>`
        )
      })

    return [
      web.route("GET", "/issues", { access: "signed-in" }, dashboard("issues")),
      web.route("GET", "/pulls", { access: "signed-in" }, dashboard("pulls"))
    ]
  })

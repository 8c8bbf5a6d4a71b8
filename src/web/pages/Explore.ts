// Explore (Forgejo's routers/web/explore): repositories, users and organizations, each with a
// search box (`q`), a sort order (`sort`, Forgejo's names) and pages (`page`,
// [ui] EXPLORE_PAGING_NUM a page). The lists come from the services the API's searches use, so a
// visitor sees exactly what GET /repos/search and /users/search would show them.
// `[service.explore] REQUIRE_SIGNIN_VIEW` asks visitors to sign in; `DISABLE_USERS_PAGE` hides
// the users page (404).
import { Effect } from "effect"
import type { Page } from "../../http/Pagination.ts"
import { searchFilter } from "../../repos/Policy.ts"
import type { RepoRow, RepoSearchSort, SearchPage } from "../../repos/Repo.ts"
import { ReposService } from "../../repos/Service.ts"
import type { UserRow, UserSort } from "../../users/Repo.ts"
import { UsersService } from "../../users/Service.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import type { Access, Web, WebContext } from "../Web.ts"

/** Forgejo's explore sort names for repositories, as the search's column and direction. */
export const REPO_SORTS: ReadonlyArray<readonly [string, string, RepoSearchSort, boolean]> = [
  ["recentupdate", "Recently updated", "updated", true],
  ["leastupdate", "Least recently updated", "updated", false],
  ["newest", "Newest", "created", true],
  ["oldest", "Oldest", "created", false],
  ["alphabetically", "Alphabetically", "alpha", false],
  ["reversealphabetically", "Reverse alphabetically", "alpha", true],
  ["moststars", "Most stars", "stars", true],
  ["feweststars", "Fewest stars", "stars", false],
  ["mostforks", "Most forks", "forks", true],
  ["fewestforks", "Fewest forks", "forks", false]
]

const USER_SORTS: ReadonlyArray<readonly [UserSort, string]> = [
  ["alphabetically", "Alphabetically"],
  ["reversealphabetically", "Reverse alphabetically"],
  ["newest", "Newest"],
  ["oldest", "Oldest"],
  ["recentupdate", "Recently updated"],
  ["leastupdate", "Least recently updated"]
]

/** `page` of the query (1 when absent or not a positive number), `limit` per page. */
export const pageOf = (ctx: WebContext, limit: number): Page => {
  const n = Number(ctx.url.searchParams.get("page") ?? "1")
  const page = Number.isSafeInteger(n) && n > 0 ? n : 1
  return { page, limit, offset: (page - 1) * limit }
}

const date = (d: Date) => d.toISOString().slice(0, 10)

export const repoList = (page: SearchPage, emptyText: string): Html =>
  page.rows.length === 0
    ? html`<div class="blankslate"><p>${emptyText}</p></div>`
    : html`<ul class="Box" data-testid="repo-list">${page.rows.map((repo: RepoRow) => {
        const owner = page.owners.get(repo.ownerId)?.name ?? ""
        return html`<li class="Box-row">
  <div class="d-flex flex-items-center">
    ${icon(repo.isPrivate ? "lock" : repo.isFork ? "repo-forked" : "repo")}
    <a class="f4 text-bold ml-2" href="/${owner}/${repo.name}">${owner}/${repo.name}</a>
    ${repo.isPrivate ? html`<span class="Label ml-2">Private</span>` : empty}
    ${repo.isArchived ? html`<span class="Label Label--attention ml-2">Archived</span>` : empty}
    <span class="ml-auto color-fg-muted f6">${icon("star")} ${repo.numStars} · ${icon("repo-forked")} ${repo.numForks}</span>
  </div>
  ${repo.description === "" ? empty : html`<p class="color-fg-muted mb-0 mt-1 wb-break-word">${repo.description}</p>`}
  <p class="color-fg-muted f6 mb-0 mt-1">Updated ${date(repo.updatedAt)}</p>
</li>`
      })}</ul>`

const accountList = (rows: ReadonlyArray<UserRow>, emptyText: string): Html =>
  rows.length === 0
    ? html`<div class="blankslate"><p>${emptyText}</p></div>`
    : html`<ul class="Box" data-testid="account-list">${rows.map(
        (account) => html`<li class="Box-row d-flex flex-items-center">
  ${icon(account.type === "organization" ? "organization" : "person")}
  <a class="f4 text-bold ml-2" href="/${account.name}">${account.name}</a>
  ${account.fullName === "" ? empty : html`<span class="ml-2 color-fg-muted">${account.fullName}</span>`}
  <span class="ml-auto color-fg-muted f6">Joined ${date(account.createdAt)}</span>
</li>`
      )}</ul>`

/** Previous/next links keeping the query (q, sort). */
export const pager = (ctx: WebContext, page: Page, total: number): Html => {
  const pages = Math.max(1, Math.ceil(total / page.limit))
  if (pages <= 1) return empty
  const link = (n: number) => {
    const params = new URLSearchParams(ctx.url.searchParams)
    params.set("page", String(n))
    return `${ctx.url.pathname}?${params}`
  }
  return html`<nav class="paginate-container" aria-label="Pages">
  <div class="pagination">
    ${page.page > 1 ? html`<a class="previous_page" rel="prev" href="${link(page.page - 1)}">Previous</a>` : html`<span class="previous_page" aria-disabled="true">Previous</span>`}
    <em class="current" aria-current="page">Page ${page.page} of ${pages}</em>
    ${page.page < pages ? html`<a class="next_page" rel="next" href="${link(page.page + 1)}">Next</a>` : html`<span class="next_page" aria-disabled="true">Next</span>`}
  </div>
</nav>`
}

const tabs = (ctx: WebContext, current: string) => {
  const tab = (path: string, label: string, name: string) =>
    html`<a class="UnderlineNav-item" href="${path}"${current === path ? html` aria-current="page"` : empty}>${icon(name)} ${label}</a>`
  return html`<nav class="UnderlineNav mb-3" aria-label="Explore">
  <div class="UnderlineNav-body">
    ${tab("/explore/repos", "Repositories", "repo")}
    ${ctx.settings["service.explore"].DISABLE_USERS_PAGE ? empty : tab("/explore/users", "Users", "person")}
    ${tab("/explore/organizations", "Organizations", "organization")}
  </div>
</nav>`
}

const searchForm = (
  ctx: WebContext,
  label: string,
  sorts: ReadonlyArray<readonly [string, string]>,
  current: string
) => html`<form class="d-flex flex-wrap mb-3" method="get" action="${ctx.url.pathname}" role="search">
  <label class="sr-only" for="explore-q">${label}</label>
  <input class="form-control flex-auto mr-2" id="explore-q" type="search" name="q" value="${ctx.url.searchParams.get("q") ?? ""}" placeholder="${label}">
  <label class="sr-only" for="explore-sort">Sort</label>
  <select class="form-select mr-2" id="explore-sort" name="sort">
    ${sorts.map(([value, text]) => html`<option value="${value}"${value === current ? html` selected` : empty}>${text}</option>`)}
  </select>
  <button class="btn" type="submit">${icon("search")} Search</button>
</form>`

/** The explore-repositories page's content (also the signed-out home page). */
export const exploreRepos = (web: Web, repos: (typeof ReposService)["Service"]) => (ctx: WebContext) =>
  Effect.gen(function* () {
    const sortName = ctx.url.searchParams.get("sort") ?? "recentupdate"
    const sort = REPO_SORTS.find(([name]) => name === sortName) ?? REPO_SORTS[0]!
    const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
    const keywords = (ctx.url.searchParams.get("q") ?? "")
      .split(",")
      .map((k) => k.trim().toLowerCase())
      .filter((k) => k !== "")
    const found = yield* repos.search(
      { filter: searchFilter(ctx.viewer, true), keywords, exclusive: false, sort: sort[2], desc: sort[3] },
      page
    )
    return web.page(
      ctx,
      { title: "Explore repositories" },
      html`<div class="container-lg p-responsive py-4">
  <h1 class="sr-only">Explore repositories</h1>
  ${tabs(ctx, "/explore/repos")}
  ${searchForm(
    ctx,
    "Search repositories",
    REPO_SORTS.map(([name, text]) => [name, text] as const),
    sort[0]
  )}
  ${repoList(found, "No repository matches.")}
  ${pager(ctx, page, found.total)}
</div>`
    )
  })

export const ExplorePages = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const users = yield* UsersService
    const access: Access = web.settings["service.explore"].REQUIRE_SIGNIN_VIEW ? "signed-in" : "view"

    const accounts = (type: "user" | "organization") => (ctx: WebContext) =>
      Effect.gen(function* () {
        const users_ = type === "user"
        if (users_ && ctx.settings["service.explore"].DISABLE_USERS_PAGE) return web.notFound(ctx)
        const sortName = ctx.url.searchParams.get("sort") ?? "alphabetically"
        const sort = USER_SORTS.find(([name]) => name === sortName) ?? USER_SORTS[0]!
        const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
        const keyword = (ctx.url.searchParams.get("q") ?? "").trim().toLowerCase()
        const found = yield* users.search(
          ctx.viewer,
          { type, keyword: keyword === "" ? undefined : keyword, sort: sort[0] },
          page
        )
        const title = users_ ? "Explore users" : "Explore organizations"
        const path = users_ ? "/explore/users" : "/explore/organizations"
        return web.page(
          ctx,
          { title },
          html`<div class="container-lg p-responsive py-4">
  <h1 class="sr-only">${title}</h1>
  ${tabs(ctx, path)}
  ${searchForm(ctx, users_ ? "Search users" : "Search organizations", USER_SORTS, sort[0])}
  ${accountList(found.rows, users_ ? "No user matches." : "No organization matches.")}
  ${pager(ctx, page, found.total)}
</div>`
        )
      })

    return [
      web.route("GET", "/explore", { access }, (ctx) => Effect.succeed(web.redirect(ctx, "/explore/repos"))),
      web.route("GET", "/explore/repos", { access }, exploreRepos(web, repos)),
      web.route("GET", "/explore/users", { access }, accounts("user")),
      web.route("GET", "/explore/organizations", { access }, accounts("organization"))
    ]
  })

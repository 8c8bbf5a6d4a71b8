// Profiles, `/{owner}` (Forgejo's routers/web/user/profile.go): a user's (full name, pronouns, bio,
// location, website, followers and following, join date; tabs `?tab=` repositories (the default),
// `stars`, `followers`, `following`) and an organization's (repositories, the members the viewer
// may see). Who may see an account is the API's rule (UsersService.visible: a hidden account is
// the same 404 page as an unknown name), and so is every list: repositories through the search
// the API uses, followers through FollowsService, members through OrgsService.
//
// Following: `POST /{user}` with `action=follow|unfollow` (Forgejo's `user.Action`) and the CSRF
// token, through FollowsService, so a block (either way) refuses it as the API does.
//
// Federation: a person's page carries `<link rel="alternate" type="application/activity+json">`
// to its actor and `rel="me"` on its website, so that Mastodon finds the account and verifies the
// link (the actor URL asked for HTML redirects here: federation/Routes.ts).
import { Effect } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { Federation, federatedUser } from "../../../federation/Service.ts"
import { BLOCKED_BY_USER, BlocksService } from "../../blocks/Service.ts"
import { FollowsService } from "../../follows/Service.ts"
import type { Principal } from "../../http/Caller.ts"
import * as Errors from "../../http/Errors.ts"
import { OrgsService } from "../../orgs/Service.ts"
import { searchFilter } from "../../repos/Policy.ts"
import { ReposService } from "../../repos/Service.ts"
import type { UserRow } from "../../users/Repo.ts"
import { mayReadEmail, shownPronouns } from "../../users/Schema.ts"
import { UsersService } from "../../users/Service.ts"
import { avatar } from "../Avatar.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { Web, WebContext } from "../Web.ts"
import { pageOf, pager, REPO_SORTS, repoList } from "./Explore.ts"

const TABS = ["repositories", "stars", "followers", "following"] as const
type Tab = (typeof TABS)[number]

const date = (d: Date) => d.toISOString().slice(0, 10)

/** A website worth a link: http(s) only (anything else is shown as text, never as an href). */
export const httpUrl = (value: string): string | undefined => {
  try {
    const url = new URL(value)
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined
  } catch {
    return undefined
  }
}

/** The name of the account a profile path names, or undefined (`/a%ZZ`, control characters). */
const ownerOf = (ctx: WebContext): string | undefined => {
  try {
    const name = decodeURIComponent(ctx.url.pathname.slice(1))
    return /[\0-\x1f\x7f/]/.test(name) || name === "" ? undefined : name
  } catch {
    return undefined
  }
}

/** Accounts as a list of rows (followers, following, members). */
export const accountRows = (rows: ReadonlyArray<UserRow>, emptyText: string, testId = "account-list"): Html =>
  rows.length === 0
    ? html`<div class="blankslate"><p>${emptyText}</p></div>`
    : html`<ul class="Box" data-testid="${testId}">${rows.map(
        (account) => html`<li class="Box-row d-flex flex-items-center">
  ${avatar(account, 32)}
  <a class="f4 text-bold ml-2" href="/${encodeURIComponent(account.name)}">${account.name}</a>
  ${account.fullName === "" ? empty : html`<span class="ml-2 color-fg-muted wb-break-word">${account.fullName}</span>`}
</li>`
      )}</ul>`

/** The search box and sort order over an account's repositories. */
const repoSearch = (
  ctx: WebContext,
  tab: Tab,
  sort: string
) => html`<form class="d-flex flex-wrap mb-3" method="get" action="${ctx.url.pathname}" role="search">
  ${tab === "repositories" ? empty : html`<input type="hidden" name="tab" value="${tab}">`}
  <label class="sr-only" for="profile-q">Search repositories</label>
  <input class="form-control flex-auto mr-2" id="profile-q" type="search" name="q" value="${ctx.url.searchParams.get("q") ?? ""}" placeholder="Search repositories">
  <label class="sr-only" for="profile-sort">Sort</label>
  <select class="form-select mr-2" id="profile-sort" name="sort">
    ${REPO_SORTS.map(([value, text]) => html`<option value="${value}"${value === sort ? html` selected` : empty}>${text}</option>`)}
  </select>
  <button class="btn" type="submit">${icon("search")} Search</button>
</form>`

export const ProfilePages = (web: Web) =>
  Effect.gen(function* () {
    const users = yield* UsersService
    const repos = yield* ReposService
    const follows = yield* FollowsService
    const blocks = yield* BlocksService
    const orgs = yield* OrgsService
    const federation = yield* Federation

    /** One page of the account's repositories (or its stars), as the viewer may see them. */
    const repositories = (ctx: WebContext, account: UserRow, tab: "repositories" | "stars") =>
      Effect.gen(function* () {
        const sortName = ctx.url.searchParams.get("sort") ?? "recentupdate"
        const sort = REPO_SORTS.find(([name]) => name === sortName) ?? REPO_SORTS[0]!
        const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
        const keywords = (ctx.url.searchParams.get("q") ?? "")
          .split(",")
          .map((k) => k.trim().toLowerCase())
          .filter((k) => k !== "")
        const found = yield* repos.search(
          {
            filter: searchFilter(ctx.viewer, true),
            keywords,
            ...(tab === "stars" ? { starredBy: account.id } : { ownerId: account.id }),
            exclusive: true,
            sort: sort[2],
            desc: sort[3]
          },
          page
        )
        const none =
          keywords.length > 0
            ? "No repository matches."
            : tab === "stars"
              ? `${account.name} has not starred any repository yet.`
              : `${account.name} has no repositories yet.`
        return html`${repoSearch(ctx, tab, sort[0])}
${repoList(found, none)}
${pager(ctx, page, found.total)}`
      })

    const people = (ctx: WebContext, user: UserRow, tab: "followers" | "following") =>
      Effect.gen(function* () {
        const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
        const list = tab === "followers" ? follows.followers : follows.following
        const found = yield* list(ctx.viewer, user, { limit: page.limit, offset: page.offset })
        const none =
          tab === "followers" ? `${user.name} has no followers yet.` : `${user.name} does not follow anyone yet.`
        return html`${accountRows(found.rows, none)}
${pager(ctx, page, found.total)}`
      })

    /** The follow or unfollow button, for a signed-in viewer on someone else's page. */
    const followButton = (ctx: WebContext, viewer: Principal, user: UserRow) =>
      Effect.gen(function* () {
        if (viewer.user.id === user.id) return empty
        // Either one blocked the other: no button (the API would refuse the follow with 403).
        if ((yield* blocks.isBlocked(user, viewer.user)) || (yield* blocks.isBlocked(viewer.user, user))) return empty
        const following = yield* follows.isFollowing(viewer.user, user)
        return html`<form method="post" action="/${encodeURIComponent(user.name)}" class="mt-3" data-testid="follow-form">
  ${csrfField(ctx)}
  <input type="hidden" name="action" value="${following ? "unfollow" : "follow"}">
  <button class="btn btn-block" type="submit">${following ? html`${icon("person")} Unfollow` : html`${icon("person-add")} Follow`}</button>
</form>`
      })

    const userPage = (ctx: WebContext, user: UserRow, refusal?: string, status = 200) =>
      Effect.gen(function* () {
        const param = ctx.url.searchParams.get("tab") ?? ""
        const tab: Tab = (TABS as ReadonlyArray<string>).includes(param) ? (param as Tab) : "repositories"
        const content =
          tab === "repositories" || tab === "stars"
            ? yield* repositories(ctx, user, tab)
            : yield* people(ctx, user, tab)
        const viewer = ctx.viewer
        const button = viewer === undefined ? empty : yield* followButton(ctx, viewer, user)
        const home = `/${encodeURIComponent(user.name)}`
        const website = httpUrl(user.website)
        const actor = federation.enabled && federatedUser(user) ? federation.paths.actor(user) : undefined
        // The account's Atom feed (src/activities/Feeds.ts), for feed readers.
        const head = html`<link rel="alternate" type="application/atom+xml" title="${user.name}" href="${home}.atom">
${actor === undefined ? empty : html`<link rel="alternate" type="application/activity+json" href="${actor}">`}
${website === undefined ? empty : html`<link rel="me" href="${website}">`}`
        const tabLink = (name: Tab, label: string, iconName: string, count?: number) =>
          html`<a class="UnderlineNav-item" href="${name === "repositories" ? home : `${home}?tab=${name}`}"${
            tab === name ? html` aria-current="page"` : empty
          } data-testid="tab-${name}">${icon(iconName)} ${label}${count === undefined ? empty : html` <span class="Counter">${count}</span>`}</a>`
        const pronouns = shownPronouns(user, ctx.viewer)
        return web.page(
          ctx,
          { title: user.fullName === "" ? user.name : `${user.fullName} (${user.name})`, status, head },
          html`<div class="container-lg p-responsive py-4 d-md-flex">
  <aside class="col-md-3 pr-md-4 mb-4" data-testid="profile-card" aria-label="Profile">
    ${avatar(user, 200)}
    <h1 class="vcard-names mt-3">
      ${user.fullName === "" ? empty : html`<span class="d-block f2 lh-condensed wb-break-word" data-testid="full-name">${user.fullName}</span>`}
      <span class="d-block f3 color-fg-muted" data-testid="user-name">${user.name}</span>
    </h1>
    ${pronouns === "" ? empty : html`<p class="color-fg-muted mb-1" data-testid="pronouns">${pronouns}</p>`}
    ${button}
    ${refusal === undefined ? empty : html`<div class="flash flash-error mt-3" role="alert" data-testid="form-error">${refusal}</div>`}
    ${user.description === "" ? empty : html`<p class="mt-3 wb-break-word" data-testid="bio">${user.description}</p>`}
    <p class="color-fg-muted mt-3 mb-2">
      <a class="Link--secondary" href="${home}?tab=followers">${icon("people")} <span class="text-bold color-fg-default" data-testid="followers-count">${user.numFollowers}</span> ${user.numFollowers === 1 ? "follower" : "followers"}</a>
      · <a class="Link--secondary" href="${home}?tab=following"><span class="text-bold color-fg-default" data-testid="following-count">${user.numFollowing}</span> following</a>
    </p>
    <ul class="list-style-none color-fg-muted">
      ${user.location === "" ? empty : html`<li class="mb-1 wb-break-word" data-testid="location">${icon("location")} ${user.location}</li>`}
      ${
        user.website === ""
          ? empty
          : html`<li class="mb-1 wb-break-word" data-testid="website">${icon("link")} ${
              website === undefined
                ? user.website
                : html`<a rel="me nofollow noopener noreferrer" href="${website}">${user.website}</a>`
            }</li>`
      }
      ${mayReadEmail(user, viewer) && user.email !== "" ? html`<li class="mb-1 wb-break-word" data-testid="email">${icon("mail")} <a href="mailto:${user.email}">${user.email}</a></li>` : empty}
      <li class="mb-1" data-testid="joined">${icon("clock")} Joined on ${date(user.createdAt)}</li>
    </ul>
  </aside>
  <section class="col-md-9" aria-label="${tab === "repositories" ? "Repositories" : tab === "stars" ? "Starred repositories" : tab === "followers" ? "Followers" : "Following"}">
    <nav class="UnderlineNav mb-3" aria-label="Profile">
      <div class="UnderlineNav-body">
        ${tabLink("repositories", "Repositories", "repo")}
        ${tabLink("stars", "Stars", "star")}
        ${tabLink("followers", "Followers", "people", user.numFollowers)}
        ${tabLink("following", "Following", "person", user.numFollowing)}
      </div>
    </nav>
    ${content}
  </section>
</div>`
        )
      })

    const orgPage = (ctx: WebContext, org: UserRow) =>
      Effect.gen(function* () {
        const content = yield* repositories(ctx, org, "repositories")
        const members = yield* orgs.visibleMembers(org, ctx.viewer, { page: 1, limit: 30, offset: 0 })
        const website = httpUrl(org.website)
        return web.page(
          ctx,
          { title: org.fullName === "" ? org.name : `${org.fullName} (${org.name})` },
          html`<div class="container-lg p-responsive py-4">
  <header class="d-flex flex-items-center mb-4" data-testid="profile-card">
    ${avatar(org, 96)}
    <div class="ml-3">
      <h1 class="h2 lh-condensed wb-break-word">${org.fullName === "" ? org.name : org.fullName}</h1>
      ${org.fullName === "" ? empty : html`<p class="f4 color-fg-muted mb-1" data-testid="user-name">${org.name}</p>`}
      ${org.description === "" ? empty : html`<p class="mb-1 wb-break-word" data-testid="bio">${org.description}</p>`}
      <p class="color-fg-muted mb-0">
        ${org.location === "" ? empty : html`<span class="mr-3 wb-break-word" data-testid="location">${icon("location")} ${org.location}</span>`}
        ${
          org.website === ""
            ? empty
            : html`<span class="mr-3 wb-break-word" data-testid="website">${icon("link")} ${
                website === undefined
                  ? org.website
                  : html`<a rel="nofollow noopener noreferrer" href="${website}">${org.website}</a>`
              }</span>`
        }
      </p>
    </div>
  </header>
  <div class="d-md-flex">
    <section class="col-md-9 pr-md-4" aria-label="Repositories">
      <h2 class="h4 mb-2">${icon("repo")} Repositories</h2>
      ${content}
    </section>
    <aside class="col-md-3" aria-label="Members">
      <h2 class="h4 mb-2">${icon("people")} Members <span class="Counter" data-testid="members-count">${members.total}</span></h2>
      ${accountRows(members.rows, "No members to show.", "member-list")}
    </aside>
  </div>
</div>`
        )
      })

    const profile = (ctx: WebContext) =>
      Effect.gen(function* () {
        const name = ownerOf(ctx)
        if (name === undefined) return web.notFound(ctx)
        const account = yield* users.visible(ctx.viewer, name).pipe(
          Effect.catchIf(
            (e) => e instanceof Errors.NotFound,
            (notFound) =>
              // An old name of a renamed account: its profile under the new one (query kept).
              Effect.flatMap(users.movedTo(ctx.viewer, name), (moved) =>
                moved._tag === "Some" ? Effect.succeed(moved.value) : Effect.fail(notFound)
              )
          )
        )
        if (typeof account === "string") {
          const query = ctx.request.url.indexOf("?")
          return web.redirect(ctx, `/${encodeURIComponent(account)}${query < 0 ? "" : ctx.request.url.slice(query)}`)
        }
        return account.type === "organization" ? yield* orgPage(ctx, account) : yield* userPage(ctx, account)
      })

    const follow = (ctx: WebContext, form: URLSearchParams) =>
      Effect.gen(function* () {
        const viewer = ctx.viewer!
        const name = ownerOf(ctx)
        if (name === undefined) return web.notFound(ctx)
        const user = yield* follows.visibleUser(viewer, name)
        if (user.type !== "user") return web.notFound(ctx)
        const action = form.get("action")
        if (action === "unfollow") yield* follows.unfollow(viewer, user)
        else if (action === "follow") {
          const done = yield* Effect.result(follows.follow(viewer, user))
          if (done._tag === "Failure") {
            const status = Errors.statusOf(done.failure) ?? 422
            const message =
              done.failure.message === BLOCKED_BY_USER
                ? "You cannot follow this user: one of you has blocked the other."
                : done.failure.message
            return yield* userPage(ctx, user, message, status)
          }
        } else return web.errorPage(ctx, 400, "Bad request", 'The action must be "follow" or "unfollow".')
        return web.redirect(ctx, `/${encodeURIComponent(user.name)}`)
      })

    return [
      // The API's own path keeps its empty 404 for every method: it is no one's profile.
      HttpRouter.route("*", "/api", HttpServerResponse.empty({ status: 404 })),
      web.route("GET", "/:owner", { access: "view" }, profile),
      web.route("POST", "/:owner", { access: "signed-in" }, follow)
    ]
  })

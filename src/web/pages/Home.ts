// The home page, `/`: signed out, the repositories to explore; signed in, Forgejo's dashboard: the
// account's activity feed (the API's `/users/{u}/activities/feeds`, ActivitiesService.userFeed,
// worded as the RSS/Atom feeds word it) beside your repositories (those you own and those you
// collaborate on), most recently updated first.
import { Effect } from "effect"
import { itemOf } from "../../activities/Feeds.ts"
import { ActivitiesService } from "../../activities/Service.ts"
import { searchFilter } from "../../repos/Policy.ts"
import { ReposService } from "../../repos/Service.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { exploreRepos, pageOf, pager, repoList } from "./Explore.ts"

export const HomePages = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const activities = yield* ActivitiesService
    const explore = exploreRepos(web, repos)
    return [
      web.route("GET", "/", { access: "view" }, (ctx) =>
        Effect.gen(function* () {
          const viewer = ctx.viewer
          if (viewer === undefined) return yield* explore(ctx)
          const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
          const [found, feed] = yield* Effect.all(
            [
              repos.search(
                {
                  filter: searchFilter(viewer, true),
                  keywords: [],
                  ownerId: viewer.user.id,
                  exclusive: false,
                  sort: "updated",
                  desc: true
                },
                page
              ),
              // Forgejo's dashboard feed: the newest actions of the account and of what it follows.
              activities.userFeed(viewer, viewer.user, { onlyPerformedBy: false }, { page: 1, limit: 20, offset: 0 })
            ],
            { concurrency: "unbounded" }
          )
          const activity =
            feed.items.length === 0
              ? html`<div class="blankslate"><p>Nothing has happened yet: push, open an issue or star a repository.</p></div>`
              : html`<ul class="Box" data-testid="activity-feed">${feed.items.map((action) => {
                  const item = itemOf(action)
                  return html`<li class="Box-row">
  <a class="Link--primary wb-break-word" href="${item.link}">${item.title}</a>
  <span class="color-fg-muted f6 ml-1">${when(action.created)}</span>
  ${item.description === "" ? empty : html`<p class="f6 color-fg-muted mb-0 mt-1 wb-break-word">${item.description.split("\n")[0]}</p>`}
</li>`
                })}</ul>`
          return web.page(
            ctx,
            { title: "Your repositories" },
            html`<div class="container-lg p-responsive py-4">
  <div class="d-flex flex-items-center mb-3">
    <h1 class="h2">${icon("home", 24)} Dashboard</h1>
    <a class="btn btn-primary ml-auto mr-2" href="/repo/create">${icon("repo")} New repository</a>
    <a class="btn" href="/explore/repos">${icon("telescope")} Explore</a>
  </div>
  <div class="d-md-flex gutter-md">
    <section class="col-md-7 mb-4" aria-labelledby="activity-heading">
      <h2 class="h3 mb-2" id="activity-heading">${icon("pulse")} Recent activity</h2>
      ${activity}
    </section>
    <section class="col-md-5" aria-labelledby="repos-heading">
      <h2 class="h3 mb-2" id="repos-heading">${icon("repo")} Your repositories</h2>
      ${repoList(found, "You have no repositories yet.")}
      ${pager(ctx, page, found.total)}
    </section>
  </div>
</div>`
          )
        })
      )
    ]
  })

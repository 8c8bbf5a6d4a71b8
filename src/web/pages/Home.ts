// The home page, `/`: signed out, the repositories to explore; signed in, your repositories (those
// you own and those you collaborate on), most recently updated first (Forgejo's dashboard lists
// them beside the activity feed, which a later issue brings).
import { Effect } from "effect"
import { searchFilter } from "../../repos/Policy.ts"
import { ReposService } from "../../repos/Service.ts"
import { html } from "../Html.ts"
import { icon } from "../Icons.ts"
import type { Web } from "../Web.ts"
import { exploreRepos, pageOf, pager, repoList } from "./Explore.ts"

export const HomePages = (web: Web) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const explore = exploreRepos(web, repos)
    return [
      web.route("GET", "/", { access: "view" }, (ctx) =>
        Effect.gen(function* () {
          const viewer = ctx.viewer
          if (viewer === undefined) return yield* explore(ctx)
          const page = pageOf(ctx, ctx.settings.ui.EXPLORE_PAGING_NUM)
          const found = yield* repos.search(
            {
              filter: searchFilter(viewer, true),
              keywords: [],
              ownerId: viewer.user.id,
              exclusive: false,
              sort: "updated",
              desc: true
            },
            page
          )
          return web.page(
            ctx,
            { title: "Your repositories" },
            html`<div class="container-lg p-responsive py-4">
  <div class="d-flex flex-items-center mb-3">
    <h1 class="h2">${icon("repo", 24)} Your repositories</h1>
    <a class="btn ml-auto" href="/explore/repos">${icon("telescope")} Explore</a>
  </div>
  ${repoList(found, "You have no repositories yet. Create one with the API (POST /api/v1/user/repos).")}
  ${pager(ctx, page, found.total)}
</div>`
          )
        })
      )
    ]
  })

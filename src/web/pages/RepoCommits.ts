// History, `/{owner}/{repo}/commits/{branch|tag|commit}/{name}[/{path}]` (Forgejo's
// `routers/web/repo/commit.go` `RefCommits`): the commits of a revision, or those that changed a
// path, newest first, COMMITS_PAGE_SIZE a page (`?page=`). A path no commit changed is not found.
import { Effect, Option } from "effect"
import { listCommits } from "../../branches/Service.ts"
import { empty, html } from "../Html.ts"
import type { RefKind } from "../RepoData.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { breadcrumb, commitList, refLabel, refMenu, refUrl } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

const KINDS: ReadonlyArray<RefKind> = ["branch", "tag", "commit"]

/** Forgejo's `[git] COMMITS_RANGE_SIZE` default: commits on a page of history. */
export const COMMITS_PAGE_SIZE = 50

export const RepoCommitsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { data } = frame

    const page = (kind: RefKind) => (view: RepoView) =>
      Effect.gen(function* () {
        const ref = yield* data.resolve(view.handle, kind, view.rest.slice(2))
        if (Option.isNone(ref)) return web.notFound(view.ctx)
        const { path } = ref.value
        const window = pageOf(view.ctx, COMMITS_PAGE_SIZE)
        const [{ commits, total }, refs] = yield* Effect.all(
          [listCommits(view.handle.dir, ref.value.commit, window, path), data.refsOf(view.handle)],
          { concurrency: "unbounded" }
        )
        if (total === 0 && path !== "") return web.notFound(view.ctx)
        return yield* frame.page(
          view,
          {
            title: `History of ${path === "" ? view.repo.name : path} at ${refLabel(ref.value)} · ${view.owner.name}/${view.repo.name}`,
            tab: "code"
          },
          html`<div class="d-flex flex-wrap flex-items-center mb-3">
  ${refMenu(view, ref.value, refs, (k, name) => refUrl(view.base, "commits", { kind: k, name }, path))}
  ${path === "" ? empty : breadcrumb(view, ref.value, path)}
</div>
<h1 class="h3 mb-3">${total} ${total === 1 ? "commit" : "commits"}${path === "" ? empty : html` changed ${path}`}</h1>
${commits.length === 0 ? html`<div class="blankslate"><p>No commits on this page.</p></div>` : commitList(view, commits)}
${pager(view.ctx, window, total)}`
        )
      })

    return KINDS.map((kind) => frame.route("GET", `/:owner/:repo/commits/${kind}/*`, {}, page(kind)))
  })

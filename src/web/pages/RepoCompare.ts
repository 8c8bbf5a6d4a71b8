// Compare, `/{owner}/{repo}/compare/{base}...{head}` (Forgejo's `routers/web/repo/compare.go`):
// what `head` has that `base` has not — its commits since their merge base and the diff from the
// merge base to `head` (git's three-dot diff). Each side is a branch, a tag or a commit id (in
// that order, as Forgejo resolves them) and may hold `/`. `/compare` alone offers a form (a GET:
// it works without JavaScript) whose answer is redirected to the compare URL.
import { Effect, Option } from "effect"
import { listCommits } from "../../branches/Service.ts"
import { mergeBase, rangePatch } from "../../git/Patches.ts"
import { DIFF_ARGS, parseDiff } from "../code/Diff.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import type { ResolvedRef } from "../RepoData.ts"
import { makeDiffView } from "../RepoDiff.ts"
import { type RepoFrame, type RepoView, urlPath } from "../RepoFrame.ts"
import { commitList } from "../RepoViews.ts"
import type { Web } from "../Web.ts"

/** Commits listed on a compare page at most (Forgejo lists 250 in a pull request's commits). */
export const COMPARE_COMMITS = 250

export const RepoComparePages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { data } = frame
    const diffs = makeDiffView(frame)

    /** A branch, else a tag, else a commit, named exactly by `name`. */
    const resolveName = (view: RepoView, name: string) =>
      Effect.gen(function* () {
        const segments = name.split("/")
        for (const kind of ["branch", "tag", "commit"] as const) {
          const found = yield* data.resolve(view.handle, kind, segments)
          if (Option.isSome(found) && found.value.path === "") return found
        }
        return Option.none<ResolvedRef>()
      })

    const form = (view: RepoView, base: string, head: string, message?: string) =>
      Effect.gen(function* () {
        const refs = yield* data.refsOf(view.handle)
        const options = (selected: string) =>
          refs.branches.map((b) => html`<option value="${b}"${b === selected ? html` selected` : empty}>${b}</option>`)
        return yield* frame.page(
          view,
          {
            title: `Compare · ${view.owner.name}/${view.repo.name}`,
            tab: "code",
            ...(message === undefined ? {} : { status: 404 })
          },
          html`<h1 class="h3 mb-3">Compare changes</h1>
${message === undefined ? empty : html`<div class="flash flash-error mb-3" role="alert">${message}</div>`}
<form class="d-flex flex-wrap flex-items-end" method="get" action="${view.base}/compare">
  <div class="mr-2 mb-2"><label class="d-block f6 text-bold" for="compare-base">Base</label>
    <select class="form-select" id="compare-base" name="base">${options(base)}</select></div>
  <div class="mr-2 mb-2"><label class="d-block f6 text-bold" for="compare-head">Compare</label>
    <select class="form-select" id="compare-head" name="head">${options(head)}</select></div>
  <button class="btn mb-2" type="submit">${icon("git-compare")} Compare</button>
</form>`
        )
      })

    const compare = (view: RepoView) =>
      Effect.gen(function* () {
        const spec = view.rest.slice(1).join("/")
        const dots = spec.indexOf("...")
        if (dots <= 0 || dots + 3 >= spec.length) return web.notFound(view.ctx)
        const baseName = spec.slice(0, dots)
        const headName = spec.slice(dots + 3)
        const [base, head] = yield* Effect.all([resolveName(view, baseName), resolveName(view, headName)])
        if (Option.isNone(base) || Option.isNone(head)) return web.notFound(view.ctx)
        const title = `Comparing ${baseName}...${headName} · ${view.owner.name}/${view.repo.name}`
        const heading = html`<h1 class="h3 mb-3 wb-break-word" data-testid="compare-title">Comparing <span class="text-mono">${baseName}</span> ${icon("arrow-left")} <span class="text-mono">${headName}</span></h1>`
        const ancestor = yield* Effect.orDie(mergeBase(view.handle.dir, base.value.commit, head.value.commit))
        if (Option.isNone(ancestor)) {
          return yield* frame.page(
            view,
            { title, tab: "code" },
            html`${heading}<div class="blankslate"><p>${baseName} and ${headName} have entirely different histories.</p></div>`
          )
        }
        const [listed, patch] = yield* Effect.all(
          [
            listCommits(
              view.handle.dir,
              head.value.commit,
              { offset: 0, limit: COMPARE_COMMITS },
              undefined,
              ancestor.value
            ),
            Effect.orDie(rangePatch(view.handle.dir, ancestor.value, head.value.commit, DIFF_ARGS))
          ],
          { concurrency: "unbounded" }
        )
        if (listed.total === 0) {
          return yield* frame.page(
            view,
            { title, tab: "code" },
            html`${heading}<div class="blankslate" data-testid="compare-same"><p>There is nothing to compare: ${headName} has no commits that ${baseName} does not have.</p></div>`
          )
        }
        const rendered = yield* diffs.render(view, parseDiff(patch.text), patch.truncated, {
          commit: head.value.commit
        })
        return yield* frame.page(
          view,
          { title, tab: "code" },
          html`${heading}
<h2 class="h4 mb-2">${listed.total} ${listed.total === 1 ? "commit" : "commits"}${listed.total > listed.commits.length ? html` (the latest ${listed.commits.length} shown)` : empty}</h2>
<div class="mb-4">${commitList(view, listed.commits)}</div>
${rendered}`
        )
      })

    // One route: `/compare/*` answers `/compare` too (the router registers both).
    return [
      frame.route("GET", "/:owner/:repo/compare/*", {}, (view) => {
        if (view.rest.length > 1 && view.rest.slice(1).join("/") !== "") return compare(view)
        const base = view.ctx.url.searchParams.get("base")
        const head = view.ctx.url.searchParams.get("head")
        if (base !== null && head !== null && base !== "" && head !== "")
          return Effect.succeed(web.redirect(view.ctx, `${view.base}/compare/${urlPath(base)}...${urlPath(head)}`))
        return form(view, view.repo.defaultBranch, view.repo.defaultBranch)
      })
    ]
  })

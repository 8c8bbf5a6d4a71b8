// Branches, `/{owner}/{repo}/branches` (Forgejo's `routers/web/repo/branch.go`): the default
// branch first, then the others by name, each with its latest commit and a link to compare it
// with the default branch; BRANCHES_PAGE_SIZE a page (`?page=`).
import { Effect } from "effect"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { subjectOf } from "../RepoData.ts"
import { type RepoFrame, urlPath } from "../RepoFrame.ts"
import { refUrl, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

/** Forgejo's branches page size. */
export const BRANCHES_PAGE_SIZE = 20

export const RepoBranchesPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { data } = frame
    return [
      frame.route("GET", "/:owner/:repo/branches", {}, (view) =>
        Effect.gen(function* () {
          if (view.rest.length !== 1) return web.notFound(view.ctx)
          const refs = yield* data.refsOf(view.handle)
          const defaultBranch = view.repo.defaultBranch
          const names = [
            ...refs.branches.filter((b) => b === defaultBranch),
            ...refs.branches.filter((b) => b !== defaultBranch)
          ]
          const window = pageOf(view.ctx, BRANCHES_PAGE_SIZE)
          const shown = names.slice(window.offset, window.offset + window.limit)
          const heads = shown.map((name) => refs.ids.get(`refs/heads/${name}`) ?? "")
          const commits = yield* data.commitsOf(view.handle, heads)
          const base = view.base
          return yield* frame.page(
            view,
            { title: `Branches · ${view.owner.name}/${view.repo.name}`, tab: "code" },
            html`<h1 class="h3 mb-3">${names.length} ${names.length === 1 ? "branch" : "branches"}</h1>
${
  names.length === 0
    ? html`<div class="blankslate"><p>This repository has no branches yet.</p></div>`
    : html`<ul class="Box" data-testid="branch-list">
  ${shown.map((name, i) => {
    const commit = commits.get(heads[i]!)
    return html`<li class="Box-row d-flex flex-items-center flex-wrap">
    <div class="flex-auto min-width-0 mr-2">
      ${icon("git-branch")} <a class="text-bold wb-break-word" href="${refUrl(base, "src", { kind: "branch", name })}">${name}</a>
      ${name === defaultBranch ? html`<span class="Label ml-1">Default</span>` : empty}
      ${
        commit === undefined
          ? empty
          : html`<div class="f6 color-fg-muted mt-1 wb-break-word"><a class="Link--secondary" href="${base}/commit/${commit.sha}">${subjectOf(commit.message)}</a> · ${commit.author.name} · ${when(commit.committer.date)}</div>`
      }
    </div>
    <a class="btn btn-sm mr-2" href="${refUrl(base, "commits", { kind: "branch", name })}">${icon("history")} Commits</a>
    ${name === defaultBranch ? empty : html`<a class="btn btn-sm" href="${base}/compare/${urlPath(defaultBranch)}...${urlPath(name)}">${icon("git-compare")} Compare</a>`}
  </li>`
  })}
</ul>`
}
${pager(view.ctx, window, names.length)}`
          )
        })
      )
    ]
  })

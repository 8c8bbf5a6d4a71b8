// A repository's home, `/{owner}/{repo}` (Forgejo's `routers/web/repo/view.go` `Home`): the
// default branch's root — the branch menu, the latest commit, the files with the last commit of
// each, the README rendered — beside the description, topics, clone URLs and languages. An empty
// repository shows how to push to it.
import { Effect, Option } from "effect"
import type { ContentsResponse } from "../../contents/Api.ts"
import { LanguagesService } from "../../languages/Service.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { type ResolvedRef, shortSha, subjectOf } from "../RepoData.ts"
import type { RepoFrame } from "../RepoFrame.ts"
import { makeMarkdownFiles } from "../RepoReadme.ts"
import { cloneBox, emptyInstructions, entryTable, languageBar, refMenu, refUrl, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"

export const RepoHomePages = (_web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const languages = yield* LanguagesService
    const markdown = yield* makeMarkdownFiles(frame)
    const { contents, data } = frame

    return [
      frame.route("GET", "/:owner/:repo", {}, (view) =>
        Effect.gen(function* () {
          const { repo, handle, base } = view
          const title = `${view.owner.name}/${repo.name}`
          // The repository's Atom feed (src/activities/Feeds.ts), for feed readers.
          const feed = html`<link rel="alternate" type="application/atom+xml" title="${title}" href="${base}.atom">`
          // Forgejo's "Use this template": the new repository form, from this template (an empty
          // one too: its topics, labels and settings can still be copied).
          const useTemplate = repo.isTemplate
            ? html`<a class="btn btn-sm btn-primary ml-auto" href="/repo/create?template_id=${String(repo.id)}" data-testid="use-template">${icon("repo-template")} Use this template</a>`
            : empty
          const head = yield* contents.commitOf(handle, `refs/heads/${repo.defaultBranch}`)
          if (Option.isNone(head)) {
            return yield* frame.page(
              view,
              { title, tab: "code", head: feed },
              html`${repo.isTemplate ? html`<div class="d-flex mb-3">${useTemplate}</div>` : empty}
${frame.about(view)}
${emptyInstructions(view)}`
            )
          }
          const ref: ResolvedRef = {
            kind: "branch",
            name: repo.defaultBranch,
            commit: head.value.commit,
            tree: head.value.tree,
            path: ""
          }
          const [listing, refs, stats] = yield* Effect.all(
            [contents.contents(handle, "", ref.commit), data.refsOf(handle), languages.of(repo, handle.dir)],
            { concurrency: "unbounded" }
          )
          const entries = Array.isArray(listing) ? (listing as ReadonlyArray<ContentsResponse>) : []
          const [commits, readme] = yield* Effect.all(
            [
              data.commitsOf(handle, [ref.commit, ...entries.map((e) => e.last_commit_sha)]),
              markdown.readme(view, ref, entries)
            ],
            { concurrency: "unbounded" }
          )
          const latest = commits.get(ref.commit)
          const main = html`<div class="d-flex flex-wrap gutter-md">
  <div class="col-12 col-md-9">
    <div class="d-flex flex-wrap flex-items-center mb-3">
      ${refMenu(view, ref, refs, (kind, name) => refUrl(base, "src", { kind, name }))}
      <a class="Link--secondary mr-3" href="${base}/branches">${icon("git-branch")} <strong>${refs.branches.length}</strong> ${refs.branches.length === 1 ? "branch" : "branches"}</a>
      <a class="Link--secondary mr-3" href="${base}/tags">${icon("tag")} <strong>${refs.tags.length}</strong> ${refs.tags.length === 1 ? "tag" : "tags"}</a>
      ${useTemplate}
    </div>
    <div class="Box">
      ${
        latest === undefined
          ? empty
          : html`<div class="Box-header d-flex flex-items-center flex-wrap" data-testid="latest-commit">
        <span class="text-bold mr-2">${latest.author.name}</span>
        <a class="Link--secondary flex-auto min-width-0 css-truncate css-truncate-target mr-2" href="${base}/commit/${latest.sha}">${subjectOf(latest.message)}</a>
        <a class="Link--secondary text-mono f6 mr-2" href="${base}/commit/${latest.sha}">${shortSha(latest.sha)}</a>
        <span class="color-fg-muted f6 mr-2">${when(latest.committer.date)}</span>
        <a class="Link--primary f6 text-bold" href="${refUrl(base, "commits", ref)}">${icon("history")} History</a>
      </div>`
      }
      ${entryTable(view, ref, "", entries, commits)}
    </div>
    ${readme}
  </div>
  <div class="col-12 col-md-3 mt-3 mt-md-0">
    <h2 class="h4 mb-2">About</h2>
    ${repo.description === "" && repo.website === "" && repo.topics.length === 0 ? html`<p class="color-fg-muted">No description.</p>` : frame.about(view)}
    <div class="my-3">${cloneBox(view)}</div>
    ${languageBar(stats)}
  </div>
</div>`
          return yield* frame.page(view, { title, tab: "code", head: feed }, main)
        })
      )
    ]
  })

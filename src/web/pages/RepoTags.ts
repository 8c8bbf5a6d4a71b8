// Tags, `/{owner}/{repo}/tags` (Forgejo's `routers/web/repo/release.go` `TagsList`): newest first,
// each with its commit, date and downloads; and the downloads themselves,
// `/{owner}/{repo}/archive/{ref}.zip|.tar.gz` — the URLs the API's `zipball_url` and
// `tarball_url` point to — streamed from `git archive` as the API's archive route does.
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { parseArchiveName, streamGit } from "../../branches/Archive.ts"
import { listTags, resolveCommit } from "../../branches/Service.ts"
import { ReleasesService } from "../../releases/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { shortSha, subjectOf } from "../RepoData.ts"
import type { RepoFrame } from "../RepoFrame.ts"
import { urlPath } from "../RepoFrame.ts"
import { refUrl, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

/** Tags on a page. */
export const TAGS_PAGE_SIZE = 20

export const RepoTagsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const releases = yield* ReleasesService
    return [
      frame.route("GET", "/:owner/:repo/tags", {}, (view) =>
        Effect.gen(function* () {
          if (view.rest.length !== 1) return web.notFound(view.ctx)
          const tags = yield* listTags(view.handle.dir)
          const window = pageOf(view.ctx, TAGS_PAGE_SIZE)
          const shown = tags.slice(window.offset, window.offset + window.limit)
          const base = view.base
          // Each tag's release, when the viewer may read releases here (drafts: writers only).
          const readsReleases = repoRefusal(view.caller, view, { role: "read", unit: "releases" }) === undefined
          const released = new Set<string>()
          if (readsReleases)
            yield* Effect.forEach(
              shown,
              (tag) =>
                Effect.map(Effect.option(releases.byTag(view, tag.name)), (found) => {
                  if (Option.isSome(found)) released.add(tag.name)
                }),
              { concurrency: 4 }
            )
          return yield* frame.page(
            view,
            { title: `Tags · ${view.owner.name}/${view.repo.name}`, tab: "code" },
            html`<h1 class="h3 mb-3">${tags.length} ${tags.length === 1 ? "tag" : "tags"}</h1>
${
  tags.length === 0
    ? html`<div class="blankslate"><p>This repository has no tags yet.</p></div>`
    : html`<ul class="Box" data-testid="tag-list">
  ${shown.map(
    (tag) => html`<li class="Box-row d-flex flex-items-center flex-wrap">
    <div class="flex-auto min-width-0 mr-2">
      ${icon("tag")} <a class="text-bold wb-break-word" href="${refUrl(base, "src", { kind: "tag", name: tag.name })}">${tag.name}</a>
      <div class="f6 color-fg-muted mt-1 wb-break-word">${subjectOf(tag.message)}</div>
      <div class="f6 color-fg-muted mt-1">
        <a class="Link--secondary text-mono mr-2" href="${base}/commit/${tag.commit.sha}">${icon("git-commit")} ${shortSha(tag.commit.sha)}</a>
        ${when(tag.commit.committer.date)}
      </div>
    </div>
    ${released.has(tag.name) ? html`<a class="btn btn-sm mr-2" href="${base}/releases/tag/${urlPath(tag.name)}">${icon("package")} Release</a>` : empty}
    <a class="btn btn-sm mr-2" href="${base}/archive/${urlPath(tag.name)}.zip">${icon("file-zip")} ZIP</a>
    <a class="btn btn-sm" href="${base}/archive/${urlPath(tag.name)}.tar.gz">${icon("file-zip")} TAR.GZ</a>
  </li>`
  )}
</ul>`
}
${tags.length > 0 ? pager(view.ctx, window, tags.length) : empty}`
          )
        })
      ),
      frame.route("GET", "/:owner/:repo/archive/*", {}, (view) =>
        Effect.gen(function* () {
          const parsed = parseArchiveName(view.rest.slice(1).join("/"))
          if (parsed === undefined || parsed.format.ext === ".bundle") return web.notFound(view.ctx)
          const sha = yield* resolveCommit(view.handle.dir, parsed.ref)
          if (Option.isNone(sha)) return web.notFound(view.ctx)
          const format = parsed.format.ext === ".zip" ? "zip" : "tar.gz"
          const filename = `${view.repo.name}-${parsed.ref.replace(/\//g, "-")}${parsed.format.ext}`
          return yield* streamGit(
            view.handle.dir,
            ["archive", `--format=${format}`, `--prefix=${view.repo.name}/`, "--end-of-options", sha.value],
            parsed.format,
            filename
          ).pipe(Effect.provideService(HttpServerRequest.HttpServerRequest, view.ctx.request))
        })
      )
    ]
  })

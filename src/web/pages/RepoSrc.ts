// Directories and files, `/{owner}/{repo}/src/{branch|tag|commit}/{name}/{path}` (Forgejo's
// `routers/web/repo/view.go`): a directory lists its entries with the last commit of each and its
// README; a file is shown highlighted with a row per line (`#L12` anchors), beside its raw, blame
// and history links — an image as an image, a markdown file rendered (`?display=source` for its
// text), a binary file or one over MAX_HIGHLIGHT_BYTES as a link to its raw bytes; its last
// commit comes from `/{owner}/{repo}/lastcommit/{commit}/{path}`, a fragment loaded by htmx.
import { Effect, Option } from "effect"
import type { ContentsResponse } from "../../contents/Api.ts"
import { contentTypeOf } from "../../git/Readers.ts"
import { highlighter, MAX_HIGHLIGHT_BYTES } from "../code/Highlight.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { type RefKind, type ResolvedRef, shortSha, subjectOf } from "../RepoData.ts"
import { type RepoFrame, type RepoView, urlPath } from "../RepoFrame.ts"
import { isMarkdown, makeMarkdownFiles } from "../RepoReadme.ts"
import { breadcrumb, codeTable, entryTable, formatBytes, refLabel, refMenu, refUrl, when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"

const KINDS: ReadonlyArray<RefKind> = ["branch", "tag", "commit"]

/** git's `buffer_is_binary`: a NUL in the first 8,000 bytes. */
export const isBinary = (bytes: Uint8Array) => bytes.subarray(0, 8000).includes(0)

const IMAGE_NAME = /\.(?:png|jpe?g|gif|webp|svg|bmp|ico|avif)$/i

/** Shown as an image: a known image signature, or an SVG by its name. */
export const isImage = (name: string, bytes: Uint8Array) =>
  IMAGE_NAME.test(name) && (contentTypeOf(bytes).startsWith("image/") || /\.svg$/i.test(name))

export const RepoSrcPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { contents, data } = frame
    const markdown = yield* makeMarkdownFiles(frame)

    /**
     * The commit that last changed `path` as of commit `at`, as a line above a listing or a file;
     * with a link to the history when `history` is given.
     */
    const lastCommitBar = (view: RepoView, at: string, path: string, history: string | undefined) =>
      Effect.gen(function* () {
        const sha = path === "" ? at : ((yield* contents.lastCommit(view.handle, at, path))?.sha ?? at)
        const commit = (yield* data.commitsOf(view.handle, [sha])).get(sha)
        if (commit === undefined) return empty
        return html`<div class="Box-header d-flex flex-items-center flex-wrap" data-testid="latest-commit">
  <span class="text-bold mr-2">${commit.author.name}</span>
  <a class="Link--secondary flex-auto min-width-0 css-truncate css-truncate-target mr-2" href="${view.base}/commit/${commit.sha}">${subjectOf(commit.message)}</a>
  <a class="Link--secondary text-mono f6 mr-2" href="${view.base}/commit/${commit.sha}">${shortSha(commit.sha)}</a>
  <span class="color-fg-muted f6">${when(commit.committer.date)}</span>
  ${history === undefined ? empty : html`<a class="Link--primary f6 text-bold ml-2" href="${history}">${icon("history")} History</a>`}
</div>`
      })

    const toolbar = (view: RepoView, ref: ResolvedRef, path: string) =>
      Effect.map(
        data.refsOf(view.handle),
        (refs) => html`<div class="d-flex flex-wrap flex-items-center mb-3">
  ${refMenu(view, ref, refs, (kind, name) => refUrl(view.base, "src", { kind, name }, path))}
  ${breadcrumb(view, ref, path)}
</div>`
      )

    const directory = (view: RepoView, ref: ResolvedRef) =>
      Effect.gen(function* () {
        const listing = yield* contents.contents(view.handle, ref.path, ref.commit)
        const entries = Array.isArray(listing) ? (listing as ReadonlyArray<ContentsResponse>) : []
        const [bar, commits, readme, tools] = yield* Effect.all(
          [
            lastCommitBar(view, ref.commit, ref.path, refUrl(view.base, "commits", ref, ref.path)),
            data.commitsOf(
              view.handle,
              entries.map((e) => e.last_commit_sha)
            ),
            markdown.readme(view, ref, entries),
            toolbar(view, ref, ref.path)
          ],
          { concurrency: "unbounded" }
        )
        return yield* frame.page(
          view,
          {
            title: `${ref.path === "" ? view.repo.name : ref.path} at ${refLabel(ref)} · ${view.owner.name}/${view.repo.name}`,
            tab: "code"
          },
          html`${tools}
<div class="Box">
  ${bar}
  ${entryTable(view, ref, ref.path, entries, commits)}
</div>
${readme}`
        )
      })

    const file = (view: RepoView, ref: ResolvedRef, entry: { readonly sha: string; readonly mode: string }) =>
      Effect.gen(function* () {
        const { base, ctx } = view
        const path = ref.path
        const name = path.slice(path.lastIndexOf("/") + 1)
        const [blob, tools] = yield* Effect.all([contents.blob(view.handle, entry.sha), toolbar(view, ref, path)], {
          concurrency: "unbounded"
        })
        const bytes = blob.bytes
        const raw = refUrl(base, "raw", ref, path)
        const source = ctx.url.searchParams.get("display") === "source"
        let body: Html
        let info: Html = html`<span>${formatBytes(bytes.length)}</span>`
        let toggle: Html = empty
        if (entry.mode === "120000") {
          const target = bytes.toString("utf8")
          body = html`<div class="Box-body">${icon("file-symlink-file")} Symbolic link to <code>${target}</code></div>`
        } else if (isImage(name, bytes)) {
          body = html`<div class="Box-body text-center"><img class="hearth-image" src="${raw}" alt="${name}"></div>`
        } else if (isBinary(bytes)) {
          body = html`<div class="Box-body text-center color-fg-muted">Binary file not shown. <a href="${raw}" download="${name}">Download it</a> (${formatBytes(bytes.length)}).</div>`
        } else if (bytes.length > MAX_HIGHLIGHT_BYTES) {
          body = html`<div class="Box-body text-center color-fg-muted">This file is too large to show (${formatBytes(bytes.length)}). <a href="${raw}">View it raw</a>.</div>`
        } else if (isMarkdown(name) && !source) {
          const rendered = yield* markdown.render(view, ref, path, bytes.toString("utf8"), entry.sha)
          body = html`<div class="Box-body markdown-body" data-testid="markdown-file">${rendered}</div>`
          toggle = html`<a class="btn btn-sm BtnGroup-item" href="${ctx.url.pathname}?display=source">Source</a>`
        } else {
          const highlighted = highlighter.highlight({ name: path, text: bytes, sha: entry.sha })
          const lines = highlighted.lines.length
          info = html`<span>${lines} ${lines === 1 ? "line" : "lines"} · ${formatBytes(bytes.length)}${
            highlighted.language === undefined ? empty : html` · ${highlighted.language}`
          }</span>`
          body = html`<div class="hearth-code-box">${codeTable(highlighted.lines)}</div>`
          if (isMarkdown(name))
            toggle = html`<a class="btn btn-sm BtnGroup-item" href="${ctx.url.pathname}">Preview</a>`
        }
        // The file's last commit comes in a second request (Forgejo's `/lastcommit/…`), as GitHub
        // does: on a first view it is a `git log`, which for a file untouched in a long history
        // reads much of it. Without JavaScript the History button says the same.
        const last = html`<div class="Box-header" hx-get="${base}/lastcommit/${ref.commit}/${urlPath(path)}" hx-trigger="load" hx-swap="outerHTML" data-testid="latest-commit-pending">
  <a class="Link--secondary f6" href="${refUrl(base, "commits", ref, path)}">${icon("history")} The commits that changed ${name}</a>
</div>`
        return yield* frame.page(
          view,
          { title: `${path} at ${refLabel(ref)} · ${view.owner.name}/${view.repo.name}`, tab: "code" },
          html`${tools}
<div class="Box mb-3">${last}</div>
<div class="Box" data-testid="file">
  <div class="Box-header d-flex flex-items-center flex-wrap py-2">
    <div class="f6 color-fg-muted mr-2" data-testid="file-info">${info}</div>
    <div class="BtnGroup ml-auto">
      ${toggle}
      <a class="btn btn-sm BtnGroup-item" href="${raw}" data-testid="raw-link">Raw</a>
      <a class="btn btn-sm BtnGroup-item" href="${refUrl(base, "blame", ref, path)}" data-testid="blame-link">Blame</a>
      <a class="btn btn-sm BtnGroup-item" href="${refUrl(base, "commits", ref, path)}">History</a>
    </div>
  </div>
  ${body}
</div>`
        )
      })

    const view = (kind: RefKind) => (repoView: RepoView) =>
      Effect.gen(function* () {
        const ref = yield* data.resolve(repoView.handle, kind, repoView.rest.slice(2))
        if (Option.isNone(ref)) return web.notFound(repoView.ctx)
        const entry = yield* contents.entryAt(repoView.handle, ref.value.tree, ref.value.path)
        if (Option.isNone(entry)) return web.notFound(repoView.ctx)
        if (entry.value.type === "tree") return yield* directory(repoView, ref.value)
        if (entry.value.type === "commit") {
          return yield* frame.page(
            repoView,
            { title: `${ref.value.path} · ${repoView.owner.name}/${repoView.repo.name}`, tab: "code" },
            html`<div class="blankslate">${icon("file-submodule", 24)}<p>${ref.value.path} is a submodule at ${shortSha(entry.value.sha)}.</p></div>`
          )
        }
        return yield* file(repoView, ref.value, entry.value)
      })

    return [
      ...KINDS.map((kind) => frame.route("GET", `/:owner/:repo/src/${kind}/*`, {}, view(kind))),
      // The last commit of a path as of a commit: a fragment the file view loads.
      frame.route("GET", "/:owner/:repo/lastcommit/*", {}, (repoView) =>
        Effect.gen(function* () {
          const ref = yield* data.resolve(repoView.handle, "commit", repoView.rest.slice(1))
          if (Option.isNone(ref)) return web.notFound(repoView.ctx)
          const entry = yield* contents.entryAt(repoView.handle, ref.value.tree, ref.value.path)
          if (Option.isNone(entry)) return web.notFound(repoView.ctx)
          return frame.fragment(
            repoView.ctx,
            yield* lastCommitBar(repoView, ref.value.commit, ref.value.path, undefined)
          )
        })
      )
    ]
  })

// Markdown files of a repository as HTML (a README under a listing, a `.md` file's view): the
// existing renderer (src/markdown, `file` mode: references, mentions), links resolved against the
// file's directory in the same revision (Forgejo's `RelativePath`), images against its raw files,
// and the result kept by blob id by the renderer. A text over `[markdown] MAX_RENDER_SIZE` is
// shown as plain text instead.
import { Effect } from "effect"
import type { ContentsResponse } from "../contents/Api.ts"
import { MarkdownRenderer } from "../markdown/Service.ts"
import { escapeHtml } from "./code/Highlight.ts"
import { empty, type Html, html, raw } from "./Html.ts"
import { icon } from "./Icons.ts"
import type { RefKind } from "./RepoData.ts"
import type { RepoFrame, RepoView } from "./RepoFrame.ts"
import { refUrl } from "./RepoViews.ts"

/** Forgejo's README names, markdown first (`routers/web/repo/view.go` `findReadmeFileInEntries`). */
const README = /^readme(?:\.(md|markdown|mdown|mkdn|mkd|txt|rst|org|adoc|asciidoc))?$/i
const MARKDOWN = /\.(?:md|markdown|mdown|mkdn|mkd)$/i

export const isMarkdown = (name: string) => MARKDOWN.test(name)

/** The README among a directory's entries, markdown ones before others, or undefined. */
export const readmeEntry = (entries: ReadonlyArray<ContentsResponse>) =>
  entries
    .filter((e) => (e.type === "file" || e.type === "symlink") && README.test(e.name))
    .sort((a, b) => Number(isMarkdown(b.name)) - Number(isMarkdown(a.name)) || (a.name < b.name ? -1 : 1))[0]

export const makeMarkdownFiles = (frame: RepoFrame) =>
  Effect.gen(function* () {
    const markdown = yield* MarkdownRenderer

    /**
     * The HTML of the markdown file `path` (its text and blob id given) in revision `ref`: links
     * to `/src/…`, images to `/raw/…` of the same revision and directory.
     */
    const render = (
      view: RepoView,
      ref: { readonly kind: RefKind; readonly name: string },
      path: string,
      text: string,
      sha: string
    ) =>
      Effect.gen(function* () {
        const dir = path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : ""
        const context = refUrl(view.base, "src", ref, dir)
        const rendered = yield* markdown
          .render({ text, mode: "file", context, viewer: view.caller?.user, cacheKey: sha })
          .pipe(Effect.option)
        if (rendered._tag === "None") return html`<pre class="hearth-commit-message">${text}</pre>`
        // Images come from the raw files: the renderer wrote them under the links' base.
        const appUrl = view.ctx.settings.server.ROOT_URL.replace(/\/$/, "")
        const from = `src="${escapeHtml(`${appUrl}${refUrl(view.base, "src", ref)}`)}`
        const to = `src="${escapeHtml(`${appUrl}${refUrl(view.base, "raw", ref)}`)}`
        return raw(rendered.value.split(from).join(to))
      })

    /** The README box under a listing, or nothing. */
    const readme = (
      view: RepoView,
      ref: { readonly kind: RefKind; readonly name: string },
      entries: ReadonlyArray<ContentsResponse>
    ): Effect.Effect<Html> =>
      Effect.gen(function* () {
        const entry = readmeEntry(entries)
        if (entry === undefined) return empty
        const blob = yield* frame.contents.blob(view.handle, entry.sha).pipe(Effect.option)
        if (blob._tag === "None") return empty
        const text = blob.value.bytes.toString("utf8")
        const body = isMarkdown(entry.name)
          ? html`<div class="markdown-body">${yield* render(view, ref, entry.path, text, entry.sha)}</div>`
          : html`<pre class="hearth-commit-message">${text}</pre>`
        return html`<div class="Box mt-3" data-testid="readme">
  <div class="Box-header d-flex flex-items-center">
    <h2 class="Box-title">${icon("book")} <a class="Link--primary" href="${refUrl(view.base, "src", ref, entry.path)}">${entry.name}</a></h2>
  </div>
  <div class="Box-body">${body}</div>
</div>`
      })

    return { render, readme }
  })

export type MarkdownFiles = Effect.Success<ReturnType<typeof makeMarkdownFiles>>

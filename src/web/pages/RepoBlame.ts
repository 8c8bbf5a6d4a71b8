// Blame, `/{owner}/{repo}/blame/{branch|tag|commit}/{name}/{path}` (Forgejo's
// `routers/web/repo/blame.go`): each run of lines beside the commit that last changed them
// (its summary, author and date, linked to the commit), the lines highlighted as in the file view.
// Binary files and files over MAX_HIGHLIGHT_BYTES are not blamed.
import { Effect, Option } from "effect"
import { blame } from "../../git/Blame.ts"
import { escapeHtml, highlighter, MAX_HIGHLIGHT_BYTES, plainLines } from "../code/Highlight.ts"
import { html, raw } from "../Html.ts"
import type { RefKind } from "../RepoData.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { breadcrumb, formatBytes, refLabel, refUrl } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { isBinary } from "./RepoSrc.ts"

const KINDS: ReadonlyArray<RefKind> = ["branch", "tag", "commit"]

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

export const RepoBlamePages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const { contents, data } = frame

    const page = (kind: RefKind) => (view: RepoView) =>
      Effect.gen(function* () {
        const ref = yield* data.resolve(view.handle, kind, view.rest.slice(2))
        if (Option.isNone(ref) || ref.value.path === "") return web.notFound(view.ctx)
        const { path } = ref.value
        const entry = yield* contents.entryAt(view.handle, ref.value.tree, path)
        if (Option.isNone(entry) || entry.value.type !== "blob") return web.notFound(view.ctx)
        const { bytes } = yield* contents.blob(view.handle, entry.value.sha)
        const title = `Blame of ${path} at ${refLabel(ref.value)} · ${view.owner.name}/${view.repo.name}`
        const header = html`<div class="d-flex flex-wrap flex-items-center mb-3">${breadcrumb(view, ref.value, path)}</div>`
        const refused =
          isBinary(bytes) || entry.value.mode === "120000"
            ? "Binary files and symbolic links have no blame."
            : bytes.length > MAX_HIGHLIGHT_BYTES
              ? `This file is too large to blame here (${formatBytes(bytes.length)}).`
              : undefined
        if (refused !== undefined) {
          return yield* frame.page(
            view,
            { title, tab: "code" },
            html`${header}<div class="Box"><div class="Box-body color-fg-muted">${refused} <a href="${refUrl(view.base, "src", ref.value, path)}">View the file</a>.</div></div>`
          )
        }
        const parts = yield* Effect.orDie(blame(view.handle.dir, ref.value.commit, path))
        const highlighted = highlighter.highlight({ name: path, text: bytes, sha: entry.value.sha })
        const lines = highlighted.lines.length > 0 ? highlighted.lines : plainLines(bytes.toString("utf8"))
        let rows = ""
        for (const part of parts) {
          const c = part.commit
          part.lines.forEach((text, i) => {
            const n = part.start + i
            const first = i === 0
            const commitCell = first
              ? `<td class="hearth-blame-commit" rowspan="${part.lines.length}"><a class="Link--primary" href="${view.base}/commit/${c.sha}" title="${escapeHtml(c.summary)}">${escapeHtml(c.summary)}</a><div class="f6 color-fg-muted">${escapeHtml(c.author)} · ${day(c.authorTime)}</div></td>`
              : ""
            rows += `<tr id="L${n}"${first ? ' class="hearth-blame-first"' : ""}>${commitCell}<td class="hearth-num"><a href="#L${n}">${n}</a></td><td class="hearth-text">${lines[n - 1] ?? escapeHtml(text)}</td></tr>`
          })
        }
        return yield* frame.page(
          view,
          { title, tab: "code" },
          html`${header}
<div class="Box" data-testid="blame">
  <div class="Box-header d-flex flex-items-center py-2">
    <span class="f6 color-fg-muted">${lines.length} lines · ${formatBytes(bytes.length)}</span>
    <div class="BtnGroup ml-auto">
      <a class="btn btn-sm BtnGroup-item" href="${refUrl(view.base, "src", ref.value, path)}">Normal view</a>
      <a class="btn btn-sm BtnGroup-item" href="${refUrl(view.base, "raw", ref.value, path)}">Raw</a>
      <a class="btn btn-sm BtnGroup-item" href="${refUrl(view.base, "commits", ref.value, path)}">History</a>
    </div>
  </div>
  <div class="hearth-code-box"><table class="hearth-code hearth-blame highlight"><tbody>${raw(rows)}</tbody></table></div>
</div>`
        )
      })

    return KINDS.map((kind) => frame.route("GET", `/:owner/:repo/blame/${kind}/*`, {}, page(kind)))
  })

// A diff as the commit and compare pages show it (Forgejo's `templates/repo/diff/box.tmpl`): the
// totals, the unified/split switch (`?style=`), then each file in a box — its status, names and
// counts, and its lines, highlighted from the whole old and new blobs (src/web/code/Diff.ts
// `lineHtml`, cached by blob id) — or why its lines are not shown (binary, too large, a
// submodule, a rename or mode change without content change).
import { Effect } from "effect"
import { type Diff, type DiffFile, type DiffLine, lineHtml, splitView, unifiedView } from "./code/Diff.ts"
import { escapeHtml, type HighlightedFile, highlighter, MAX_HIGHLIGHT_BYTES } from "./code/Highlight.ts"
import { empty, type Html, html, raw } from "./Html.ts"
import { icon } from "./Icons.ts"
import type { RepoFrame, RepoView } from "./RepoFrame.ts"
import { refUrl } from "./RepoViews.ts"

export type DiffStyle = "unified" | "split"

/** `?style=split|unified` (Forgejo's names), unified when absent or unknown. */
export const styleOf = (url: URL): DiffStyle => (url.searchParams.get("style") === "split" ? "split" : "unified")

const STATUS_LABELS: Record<DiffFile["status"], readonly [string, string]> = {
  added: ["Added", "Label--success"],
  deleted: ["Deleted", "Label--danger"],
  modified: ["Modified", "Label--accent"],
  renamed: ["Renamed", "Label--attention"],
  copied: ["Copied", "Label--attention"]
}

const number = (n: number | undefined) => (n === undefined ? "" : String(n))

const hunkText = (row: { readonly hunk: { header: string; section: string } }) =>
  escapeHtml(`${row.hunk.header}${row.hunk.section === "" ? "" : ` ${row.hunk.section}`}`)

/** A side of a diff line as review comments name it (Forgejo's `left`/`right`, signed lines). */
export type LineSide = "old" | "new"

/**
 * What a page adds to a file's lines (the files changed page of a pull request): a control in a
 * line's number cell (to comment on it), and rows after a line (its conversations, a comment form),
 * keyed by Forgejo's signed line (negative: old side). Both are HTML the page made and escaped.
 */
export interface LineExtras {
  readonly control?: (side: LineSide, line: number) => string
  readonly after?: (signedLine: number) => string | undefined
}

/** The signed lines a diff line is on: its old side (context and deleted lines) and its new side. */
const keysOf = (line: DiffLine): Array<number> => {
  const keys: Array<number> = []
  if (line.oldNumber !== undefined && line.kind !== "add") keys.push(-line.oldNumber)
  if (line.newNumber !== undefined && line.kind !== "del") keys.push(line.newNumber)
  return keys
}

const rowsAfter = (lines: ReadonlyArray<DiffLine | undefined>, extras: LineExtras | undefined, colspan: number) => {
  if (extras?.after === undefined) return ""
  let out = ""
  const seen = new Set<number>()
  for (const line of lines) {
    if (line === undefined) continue
    for (const key of keysOf(line)) {
      if (seen.has(key)) continue
      seen.add(key)
      const extra = extras.after(key)
      if (extra !== undefined) out += `<tr class="hearth-line-extra"><td colspan="${colspan}">${extra}</td></tr>`
    }
  }
  return out
}

/** The number cell's content: the number and, on the line's own side, the page's control. */
const numberCell = (n: number | undefined, side: LineSide, own: boolean, extras: LineExtras | undefined) =>
  n === undefined || !own || extras?.control === undefined ? number(n) : `${number(n)}${extras.control(side, n)}`

/** The unified table: old number, new number, sign, line. */
const unifiedTable = (
  file: DiffFile,
  old: HighlightedFile | undefined,
  current: HighlightedFile | undefined,
  extras?: LineExtras
) => {
  let out = '<table class="hearth-code highlight"><tbody>'
  for (const row of unifiedView(file)) {
    if ("hunk" in row) {
      out += `<tr class="hearth-hunk"><td class="hearth-num"></td><td class="hearth-num"></td><td class="hearth-sign"></td><td class="hearth-text">${hunkText(row)}</td></tr>`
      continue
    }
    const line = row.line
    const kind = line.kind === "add" ? ' class="hearth-add"' : line.kind === "del" ? ' class="hearth-del"' : ""
    const sign = line.kind === "add" ? "+" : line.kind === "del" ? "-" : " "
    // A deleted line is commented on its old side, any other on its new side (Forgejo's unified view).
    out += `<tr${kind}><td class="hearth-num">${numberCell(line.oldNumber, "old", line.kind === "del", extras)}</td><td class="hearth-num">${numberCell(line.newNumber, "new", line.kind !== "del", extras)}</td><td class="hearth-sign">${sign}</td><td class="hearth-text">${lineHtml(line, old, current)}</td></tr>`
    out += rowsAfter([line], extras, 4)
  }
  return raw(`${out}</tbody></table>`)
}

/** The split table: old number and line on the left, new on the right. */
const splitTable = (
  file: DiffFile,
  old: HighlightedFile | undefined,
  current: HighlightedFile | undefined,
  extras?: LineExtras
) => {
  const side = (line: DiffLine | undefined, left: boolean) => {
    if (line === undefined)
      return '<td class="hearth-num hearth-empty-cell"></td><td class="hearth-text hearth-empty-cell"></td>'
    const changed = line.kind === "context" ? "" : line.kind === "add" ? " hearth-add-cell" : " hearth-del-cell"
    const n = left ? line.oldNumber : line.newNumber
    return `<td class="hearth-num${changed}">${numberCell(n, left ? "old" : "new", true, extras)}</td><td class="hearth-text${changed}">${lineHtml(line, old, current)}</td>`
  }
  let out = '<table class="hearth-code hearth-split highlight"><tbody>'
  for (const row of splitView(file)) {
    if ("hunk" in row) {
      out += `<tr class="hearth-hunk"><td class="hearth-num"></td><td class="hearth-text" colspan="3">${hunkText(row)}</td></tr>`
      continue
    }
    out += `<tr>${side(row.left, true)}${side(row.right, false)}</tr>`
    // A context line is on both sides: its old side's conversations on the left, new on the right.
    const left = row.left === undefined ? undefined : { ...row.left, kind: "del" as const }
    const right =
      row.right === undefined
        ? undefined
        : { ...row.right, kind: row.right.kind === "del" ? row.right.kind : ("add" as const) }
    out += rowsAfter([left, right], extras, 4)
  }
  return raw(`${out}</tbody></table>`)
}

/** Why a file's lines are not shown, or undefined when they are. */
const withoutLines = (file: DiffFile): string | undefined => {
  if (file.submodule) return "Submodule changed."
  if (file.binary) return "Binary file not shown."
  if (file.tooLarge !== undefined) return "This file's diff is too large to show."
  if (file.hunks.length === 0) {
    if (file.status === "renamed") return "File renamed without changes."
    if (file.status === "copied") return "File copied without changes."
    if (file.oldMode !== file.newMode) return `File mode changed from ${file.oldMode} to ${file.newMode}.`
    return "Empty file."
  }
  return undefined
}

export interface DiffPlace {
  /** The revision the new side is in (the commit, the compared head): "View file" links there. */
  readonly commit: string
}

/** What a page adds to one file's box (the pull request's files changed page). */
export interface FileExtras {
  readonly lines?: LineExtras
  /** Controls in the file's header (the viewed marker). */
  readonly controls?: Html
  /** Shown folded (a file marked viewed). */
  readonly folded?: boolean
}

/** The file's anchor on the page (Forgejo's `diff-{hash}`; Hearth numbers the files). */
export const fileAnchor = (index: number) => `diff-${index + 1}`

export const makeDiffView = (frame: RepoFrame) => {
  /** A blob highlighted as `name` (cached by id), or undefined when it is not worth it or missing. */
  const highlighted = (view: RepoView, name: string, sha: string | undefined) =>
    sha === undefined
      ? Effect.succeed(undefined)
      : Effect.map(Effect.option(frame.contents.blob(view.handle, sha)), (blob) =>
          blob._tag === "None" || blob.value.bytes.length > MAX_HIGHLIGHT_BYTES
            ? undefined
            : highlighter.highlight({ name, text: blob.value.bytes, sha })
        )

  /**
   * One file in a box that folds (details/summary: no script needed): its status, names, counts and
   * "View file" in the summary, its lines (or why they are not shown) below.
   */
  const fileBox = (
    view: RepoView,
    file: DiffFile,
    index: number,
    style: DiffStyle,
    place: DiffPlace,
    extras: FileExtras = {}
  ) =>
    Effect.gen(function* () {
      const reason = withoutLines(file)
      let body: Html
      if (reason !== undefined) body = html`<div class="Box-body color-fg-muted">${reason}</div>`
      else {
        const [old, current] = yield* Effect.all([
          highlighted(view, file.oldPath, file.oldBlob),
          highlighted(view, file.newPath, file.newBlob)
        ])
        body = html`<div class="hearth-code-box">${style === "split" ? splitTable(file, old, current, extras.lines) : unifiedTable(file, old, current, extras.lines)}</div>`
      }
      const [label, labelClass] = STATUS_LABELS[file.status]
      const names =
        file.oldPath === file.newPath ? file.newPath : html`${file.oldPath} ${icon("arrow-right")} ${file.newPath}`
      // The controls sit beside the summary, not in it: a summary holds no other control (axe's
      // nested-interactive), and they stay at hand while the file is folded.
      const viewFile =
        file.status === "deleted"
          ? empty
          : html`<a class="btn btn-sm" href="${refUrl(view.base, "src", { kind: "commit", name: place.commit }, file.newPath)}">View file</a>`
      return html`<div class="Box mb-3 hearth-diff-file" id="${fileAnchor(index)}" data-testid="diff-file">
  <div class="hearth-diff-controls d-flex flex-items-center py-2 pr-2">${extras.controls ?? empty}${viewFile}</div>
  <details class="hearth-diff-fold"${extras.folded === true ? empty : html` open`}>
  <summary class="Box-header d-flex flex-items-center flex-wrap py-2">
    <span class="Label ${labelClass} mr-2">${label}</span>
    <h3 class="f6 text-mono text-bold wb-break-word flex-auto min-width-0 mr-2">${names}</h3>
    <span class="f6 mr-2"><span class="color-fg-success">+${file.additions}</span> <span class="color-fg-danger">−${file.deletions}</span></span>
  </summary>
  ${body}
  </details>
</div>`
    })

  /** A link to this page with one query parameter changed. */
  const withParam = (view: RepoView, name: string, value: string) => {
    const params = new URLSearchParams(view.ctx.url.searchParams)
    params.set(name, value)
    return `${view.ctx.url.pathname}?${params.toString()}`
  }

  /** The totals and the style switch (and what a page adds beside them). */
  const toolbar = (view: RepoView, diff: Diff, style: DiffStyle, more: Html = empty) => {
    const link = (s: DiffStyle, label: string) =>
      html`<a class="btn btn-sm BtnGroup-item" href="${withParam(view, "style", s)}"${
        style === s ? html` aria-current="true"` : empty
      } data-testid="style-${s}">${label}</a>`
    return html`<div class="d-flex flex-items-center flex-wrap mb-3" data-testid="diff-stats">
  <p class="mb-0 mr-3">Showing <strong>${diff.fileCount} changed ${diff.fileCount === 1 ? "file" : "files"}</strong> with <strong class="color-fg-success">${diff.additions} ${diff.additions === 1 ? "addition" : "additions"}</strong> and <strong class="color-fg-danger">${diff.deletions} ${diff.deletions === 1 ? "deletion" : "deletions"}</strong></p>
  ${more}
  <div class="BtnGroup ml-auto" role="group" aria-label="Diff style">${link("unified", "Unified")}${link("split", "Split")}</div>
</div>`
  }

  /** The whole diff: totals, the style switch, each file. */
  const render = (view: RepoView, diff: Diff, cut: boolean, place: DiffPlace) =>
    Effect.gen(function* () {
      const style = styleOf(view.ctx.url)
      const boxes = yield* Effect.forEach(diff.files, (file, i) => fileBox(view, file, i, style, place), {
        concurrency: 4
      })
      return html`${toolbar(view, diff, style)}
${
  diff.truncated
    ? html`<div class="flash flash-warn mb-3">Only the first ${diff.files.length} files are shown (Forgejo's MAX_GIT_DIFF_FILES).</div>`
    : empty
}
${cut ? html`<div class="flash flash-warn mb-3">This diff is too large: it was cut short.</div>` : empty}
${boxes}`
    })

  return { render, toolbar, fileBox, withParam }
}

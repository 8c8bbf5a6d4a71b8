// A pull request's files changed, `/{owner}/{repo}/pulls/{index}/files` (Forgejo's
// routers/web/repo/pull.go `ViewPullFiles`, templates/repo/diff/*): the diff from the merge base to
// the head, unified or split (`?style=`; Hearth keeps no per-user diff setting, so the query
// decides), whitespace ignored on request (`?whitespace=`, Forgejo's values), each file folding
// (details/summary), the list of files at the top, Forgejo's "viewed" markers (0036 `review_state`:
// a viewed file folds; one whose content changed since is shown as changed), and review comments on
// lines: a signed-in reader who may comment opens a form on a line (`?comment=path:side:line`, or
// htmx inserting the same form in place), the comment joins their pending review, shown to them
// alone until "Finish review" submits it (comment, approve, request changes: the reviews service's
// rules); submitted conversations show to every reader, with replies and "Resolve conversation"
// for those Forgejo's `CanMarkConversation` lets.
//
// The page streams: the frame and the pull request's header go out at once, then the file list,
// then each file as it is rendered (Web.ts `streamPage`), so a 300-file pull request shows its
// first bytes before its diff is read and never sits whole in memory. Like Forgejo, a page shows
// MAX_GIT_DIFF_FILES files; "Show more files" goes on from the next one (`?skip-to=path`).
//
// The forms, at Forgejo's paths under `/pulls/{index}/files/reviews/`: `comments` (a line comment
// or a reply), `submit` (finish the review), `viewed-files` (viewed markers), `resolve` (Forgejo
// posts to `/issues/resolve_conversation`; kept under the pull request here).
import { Effect, Option, Stream } from "effect"
import { rangePatch } from "../../git/Patches.ts"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { type Loaded, PullsService } from "../../pulls/Service.ts"
import { repoRefusal } from "../../repos/Policy.ts"
import { type IssueCodeComment, ReviewType, ViewedState } from "../../reviews/Repo.ts"
import { ReviewsService } from "../../reviews/Service.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { UsersService } from "../../users/Service.ts"
import { type Diff, type DiffFile, diffArgsFor, parseDiff, WHITESPACE_FLAGS, whitespaceOf } from "../code/Diff.ts"
import { empty, type Html, html, raw } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import { makePullFrame, outdatedComments, pullUrl } from "../PullFrame.ts"
import { type DiffStyle, fileAnchor, type LineSide, makeDiffView, styleOf } from "../RepoDiff.ts"
import { type RepoFrame, type RepoView, segment } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import type { Form, Web } from "../Web.ts"

/** Reading needs the pull requests unit (off: the 404 page), as the API's pull routes. */
const READ: RepoRule = { role: "read", unit: "pulls" }
/** Commenting and reviewing: a signed-in reader, not in an archived repository (the API's rule). */
const REVIEW: RepoRule = { role: "read", unit: "pulls", changes: "mirrors" }

const WHITESPACE_LABELS: Readonly<Record<string, string>> = {
  "show-all": "Show all changes",
  "ignore-all": "Ignore all whitespace",
  "ignore-change": "Ignore whitespace amount changes",
  "ignore-eol": "Ignore whitespace at line ends"
}

const EVENTS: Readonly<Record<string, string>> = {
  comment: "COMMENT",
  approve: "APPROVED",
  reject: "REQUEST_CHANGES"
}

/** `path:side:line` of `?comment=` (the path may hold `:`). */
const parseLineKey = (value: string | null) => {
  if (value === null) return undefined
  const m = /^(.*):(old|new):(\d{1,9})$/s.exec(value)
  if (m === null || m[1] === "") return undefined
  return { path: m[1]!, side: m[2] as LineSide, line: Number(m[3]) }
}

const signedOf = (side: LineSide, line: number) => (side === "old" ? -line : line)

/** What a refused form sent, shown again with its error. */
interface Typed {
  readonly comment?: {
    readonly path: string
    readonly side: LineSide
    readonly line: number
    readonly content: string
    readonly error: string
  }
  readonly reply?: {
    readonly review: number
    readonly path: string
    readonly line: number
    readonly content: string
    readonly error: string
  }
  readonly review?: { readonly type: string; readonly content: string; readonly error: string }
}

export const PullFilesPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const reviews = yield* ReviewsService
    const pulls = yield* PullsService
    const markdown = yield* MarkdownRenderer
    const users = yield* UsersRepo
    const accounts = yield* UsersService
    const diffs = makeDiffView(frame)
    const pullFrame = yield* makePullFrame(frame)

    const filesUrl = (view: RepoView, index: number) => `${pullUrl(view, index)}/files`

    /**
     * Whether the viewer may comment and review here: signed in, not archived (the route's rule), and
     * the reviews service's own refusals (a lock, a block).
     */
    const mayReview = (view: RepoView, loaded: Loaded) =>
      view.caller === undefined || repoRefusal(view.caller, view, REVIEW) !== undefined
        ? Effect.succeed(false)
        : Effect.map(reviews.reviewRefusal(view, loaded), (refused) => refused === undefined)

    /**
     * Forgejo's `SetDiffViewStyle`: `?style=` when given, else the signed-in viewer's setting (the
     * user's `diff_view_style`, also `/user/settings`), else unified; a signed-in viewer's choice is
     * kept as their setting.
     */
    const diffStyleOf = (view: RepoView) =>
      Effect.gen(function* () {
        const asked = view.ctx.url.searchParams.get("style")
        const viewer = view.caller
        if (viewer === undefined) return styleOf(view.ctx.url)
        const stored = viewer.user.diffViewStyle
        const style: DiffStyle =
          asked === "unified" || asked === "split"
            ? asked
            : stored === "unified" || stored === "split"
              ? stored
              : "unified"
        if (stored !== style) yield* Effect.ignore(accounts.update(viewer.user, { diff_view_style: style }))
        return style
      })

    /** The query kept across this page's links and forms' redirects: style and whitespace. */
    const keptQuery = (style: DiffStyle, whitespace: string) => {
      const params = new URLSearchParams()
      if (style === "split") params.set("style", style)
      if (whitespace !== "show-all") params.set("whitespace", whitespace)
      const text = params.toString()
      return text === "" ? "" : `?${text}`
    }

    const keptFields = (style: DiffStyle, whitespace: string) =>
      html`<input type="hidden" name="style" value="${style}"><input type="hidden" name="whitespace" value="${whitespace}">`

    const rendered = (view: RepoView, text: string) =>
      Effect.map(
        Effect.option(markdown.render({ text, mode: "comment", context: view.base, viewer: view.caller?.user })),
        (out) =>
          Option.isSome(out)
            ? html`<div class="markdown-body">${raw(out.value)}</div>`
            : html`<pre class="hearth-commit-message">${text}</pre>`
      )

    /** A textarea with its label and error (several on a page: ids of their own). */
    const textarea = (id: string, label: string, value: string, error: string | undefined, rows = 4) =>
      html`<div class="form-group${error === undefined ? "" : " errored"} my-2">
  <div class="form-group-header"><label for="${id}">${label}</label></div>
  <div class="form-group-body">
    <textarea class="form-control width-full" id="${id}" name="content" rows="${rows}"${
      error === undefined ? empty : html` aria-invalid="true" aria-describedby="${id}-error"`
    }>${value}</textarea>
    ${error === undefined ? empty : html`<p class="note error" id="${id}-error" data-testid="field-error">${error}</p>`}
  </div>
</div>`

    /** The form that starts (or adds to) the viewer's review on a line. */
    const commentForm = (
      view: RepoView,
      loaded: Loaded,
      key: { path: string; side: LineSide; line: number },
      kept: { style: DiffStyle; whitespace: string },
      typed?: { content: string; error: string }
    ) => {
      const id = `comment-${key.side}-${key.line}`
      return html`<form class="Box p-2 my-2" method="post" action="${filesUrl(view, loaded.issue.index)}/reviews/comments" id="comment-form" data-testid="comment-form">
  ${csrfField(view.ctx)}${keptFields(kept.style, kept.whitespace)}
  <input type="hidden" name="path" value="${key.path}">
  <input type="hidden" name="side" value="${key.side}">
  <input type="hidden" name="line" value="${String(key.line)}">
  ${textarea(id, `Comment on line ${key.side === "old" ? "L" : "R"}${key.line} of ${key.path}`, typed?.content ?? "", typed?.error)}
  <div class="d-flex flex-justify-end">
    <a class="btn mr-2" href="${filesUrl(view, loaded.issue.index)}${keptQuery(kept.style, kept.whitespace)}">Cancel</a>
    <button class="btn btn-primary" type="submit" data-testid="start-review">Add review comment</button>
  </div>
</form>`
    }

    /** One line's conversations: one per review, the first comment opening it, replies after. */
    const conversations = (
      view: RepoView,
      loaded: Loaded,
      comments: ReadonlyArray<IssueCodeComment>,
      bodies: ReadonlyMap<number, Html>,
      names: ReadonlyMap<number, string>,
      can: { review: boolean; resolve: boolean },
      kept: { style: DiffStyle; whitespace: string },
      typed: Typed
    ) => {
      const byReview = new Map<number, Array<IssueCodeComment>>()
      for (const c of comments) byReview.set(c.reviewId, [...(byReview.get(c.reviewId) ?? []), c])
      const out: Array<Html> = []
      for (const [reviewId, thread] of byReview) {
        const first = thread[0]!
        const resolved = first.resolveDoerId !== null
        const pending = first.reviewType === ReviewType.pending
        const replyTyped =
          typed.reply !== undefined &&
          typed.reply.review === reviewId &&
          typed.reply.path === first.treePath &&
          typed.reply.line === first.line
            ? typed.reply
            : undefined
        const items = thread.map(
          (c) => html`<div class="p-2 border-bottom" id="issuecomment-${c.id}" data-testid="review-comment">
  <div class="f6 color-fg-muted mb-1"><a class="Link--primary text-bold" href="/${segment(names.get(c.posterId) ?? "ghost")}">${names.get(c.posterId) ?? "Ghost"}</a>${
    c.reviewType === ReviewType.pending
      ? html` <span class="Label Label--attention ml-1" data-testid="pending-label">Pending</span>`
      : empty
  }</div>
  ${bodies.get(c.id) ?? empty}
</div>`
        )
        const id = `reply-${reviewId}-${first.line < 0 ? "o" : "n"}${Math.abs(first.line)}`
        const reply =
          can.review && !pending
            ? html`<form class="p-2" method="post" action="${filesUrl(view, loaded.issue.index)}/reviews/comments" data-testid="reply-form">
  ${csrfField(view.ctx)}${keptFields(kept.style, kept.whitespace)}
  <input type="hidden" name="path" value="${first.treePath}">
  <input type="hidden" name="side" value="${first.line < 0 ? "old" : "new"}">
  <input type="hidden" name="line" value="${String(Math.abs(first.line))}">
  <input type="hidden" name="reply" value="${String(reviewId)}">
  ${textarea(id, "Reply", replyTyped?.content ?? "", replyTyped?.error, 2)}
  <div class="d-flex flex-justify-end"><button class="btn btn-sm" type="submit">Reply</button></div>
</form>`
            : empty
        const resolve =
          can.resolve && !pending
            ? html`<form class="d-inline" method="post" action="${filesUrl(view, loaded.issue.index)}/reviews/resolve">
  ${csrfField(view.ctx)}${keptFields(kept.style, kept.whitespace)}
  <input type="hidden" name="comment_id" value="${String(first.id)}">
  <input type="hidden" name="action" value="${resolved ? "unresolve" : "resolve"}">
  <button class="btn btn-sm" type="submit" data-testid="${resolved ? "unresolve" : "resolve"}">${resolved ? "Unresolve conversation" : "Resolve conversation"}</button>
</form>`
            : empty
        out.push(html`<details class="Box my-2 hearth-conversation" data-testid="conversation"${resolved ? empty : html` open`}>
  <summary class="Box-header py-1 px-2 f6 d-flex flex-items-center">${
    resolved
      ? html`<span class="Label Label--success mr-2" data-testid="resolved-label">Resolved</span><span class="flex-auto">${thread.length} ${thread.length === 1 ? "comment" : "comments"}</span>`
      : html`<span class="flex-auto">${thread.length} ${thread.length === 1 ? "comment" : "comments"}</span>`
  }</summary>
  ${items}
  ${reply}
  ${resolve === empty ? empty : html`<div class="p-2 d-flex flex-justify-end">${resolve}</div>`}
</details>`)
      }
      return html`${out}`
    }

    /**
     * A file's outdated conversations, folded (Forgejo hides them behind "Show outdated"): each
     * with the place and the diff hunk it was made on, resolvable; no reply, its line being gone.
     */
    const outdatedBlock = (
      view: RepoView,
      loaded: Loaded,
      path: string,
      stale: ReadonlyMap<number, ReadonlyArray<IssueCodeComment>>,
      bodies: ReadonlyMap<number, Html>,
      names: ReadonlyMap<number, string>,
      can: { review: boolean; resolve: boolean },
      kept: { style: DiffStyle; whitespace: string },
      typed: Typed
    ) => {
      const count = [...stale.values()].reduce((n, list) => n + list.length, 0)
      return html`<details class="Box mb-3 hearth-outdated" data-testid="outdated">
  <summary class="Box-header py-2 f6"><span class="Label Label--attention mr-2">Outdated</span>${count} ${count === 1 ? "comment" : "comments"} on ${path} made on lines since changed</summary>
  ${[...stale].map(([line, thread]) => {
    const hunk = (thread[0]?.patch ?? "")
      .split("\n")
      .filter((l) => !l.startsWith("diff --git") && !l.startsWith("--- ") && !l.startsWith("+++ "))
      .slice(-8)
      .join("\n")
    return html`<div class="p-2 border-bottom" data-testid="outdated-conversation">
  <div class="f6 text-mono mb-1">${path}:${Math.abs(line)}${line < 0 ? " (old)" : ""}</div>
  ${hunk === "" ? empty : html`<pre class="hearth-commit-message f6 p-2 m-0" data-testid="outdated-hunk">${hunk}</pre>`}
  ${conversations(view, loaded, thread, bodies, names, { ...can, review: false }, kept, typed)}
</div>`
  })}
</details>`
    }

    /** The "Finish review" form (Forgejo's review box): comment, approve, request changes. */
    const reviewForm = (
      view: RepoView,
      loaded: Loaded,
      pendingCount: number,
      kept: { style: DiffStyle; whitespace: string },
      typed: Typed["review"]
    ) => {
      const own = view.caller?.user.id === loaded.issue.posterId
      const option = (value: string, label: string, hint: string, disabled: boolean) =>
        html`<div class="form-checkbox my-1"><label><input type="radio" name="type" value="${value}"${
          (typed?.type ?? "comment") === value ? html` checked` : empty
        }${disabled ? html` disabled` : empty} data-testid="review-type-${value}"> ${label}</label><p class="note">${hint}</p></div>`
      return html`<details class="details-reset details-overlay ml-2 position-relative" data-testid="finish-review"${typed === undefined ? empty : html` open`}>
  <summary class="btn btn-sm btn-primary">Finish review${pendingCount === 0 ? empty : html` <span class="Counter" data-testid="pending-count">${pendingCount}</span>`}</summary>
  <div class="Box Box--overlay position-absolute left-0 mt-1 p-3 color-bg-default hearth-review-box">
    <form method="post" action="${filesUrl(view, loaded.issue.index)}/reviews/submit" data-testid="review-form">
      ${csrfField(view.ctx)}${keptFields(kept.style, kept.whitespace)}
      ${textarea("review-content", "Review summary", typed?.content ?? "", typed?.error, 4)}
      <fieldset class="my-2"><legend class="text-bold f6">Review</legend>
      ${option("comment", "Comment", "Submit general feedback without explicit approval.", false)}
      ${option("approve", "Approve", own ? "You cannot approve your own pull request." : "Approve merging these changes.", own)}
      ${option("reject", "Request changes", own ? "You cannot request changes on your own pull request." : "Submit feedback that must be addressed before merging.", own)}
      </fieldset>
      <button class="btn btn-primary" type="submit" data-testid="submit-review">Submit review</button>
    </form>
  </div>
</details>`
    }

    /** The files page, streamed; `typed` re-shows a refused form (status 422 or 403). */
    const filesPage = (view: RepoView, typed: Typed = {}, status?: number) =>
      Effect.gen(function* () {
        // Only what decides the status is read before the page starts: git's work is streamed.
        const loaded = yield* pulls.get(view, view.rest[1] ?? "")
        const url = view.ctx.url
        const style = yield* diffStyleOf(view)
        const whitespace = whitespaceOf(url.searchParams.get("whitespace"))
        const kept = { style, whitespace }
        const canReview = yield* mayReview(view, loaded)
        const header = yield* pullFrame.header(view, loaded, "files", undefined)
        const opened = typed.comment ?? parseLineKey(url.searchParams.get("comment"))
        const skipTo = url.searchParams.get("skip-to")

        const rest = Effect.gen(function* () {
          const { head, base } = yield* reviews.rangeOf(loaded)
          const patch = yield* Effect.orDie(rangePatch(loaded.base.path, base, head, diffArgsFor(whitespace)))
          let diff: Diff = parseDiff(patch.text)
          if (skipTo !== null) {
            const at = diff.all.findIndex((f) => f.newPath === skipTo)
            if (at > 0) diff = parseDiff(patch.text, {}, at)
          }
          const [comments, viewed, canResolve] = yield* Effect.all([
            reviews.visibleCodeComments(view, loaded),
            reviews.viewedFiles(view, loaded, head),
            reviews.mayResolve(view, loaded)
          ])
          const outdated = yield* outdatedComments(
            loaded.base.path,
            head,
            comments.map((c) => ({ id: c.id, path: c.treePath, line: c.line, commitSha: c.commitSha }))
          )
          const names = new Map<number, string>()
          for (const [id, user] of yield* users.findByIds([...new Set(comments.map((c) => c.posterId))]))
            names.set(id, user.name)
          const pendingCount = comments.filter(
            (c) => c.reviewType === ReviewType.pending && c.posterId === view.caller?.user.id
          ).length
          const byPath = new Map<string, Array<IssueCodeComment>>()
          for (const c of comments) byPath.set(c.treePath, [...(byPath.get(c.treePath) ?? []), c])
          const viewedCount = diff.all.filter((f) => viewed[f.newPath] === ViewedState.viewed).length
          const can = { review: canReview, resolve: canResolve && canReview }
          const q = keptQuery(style, whitespace)
          const shownFrom = diff.from
          const shownTo = diff.from + diff.files.length

          const whitespaceForm = html`<form class="d-flex flex-items-center mr-3" method="get" action="${url.pathname}" data-testid="whitespace-form">
  ${style === "split" ? html`<input type="hidden" name="style" value="split">` : empty}
  <label class="f6 mr-1" for="whitespace">Whitespace</label>
  <select class="form-select select-sm mr-1" id="whitespace" name="whitespace">${Object.keys(WHITESPACE_FLAGS).map(
    (w) => html`<option value="${w}"${w === whitespace ? html` selected` : empty}>${WHITESPACE_LABELS[w]}</option>`
  )}</select>
  <button class="btn btn-sm" type="submit">Apply</button>
</form>`
          const more = html`${whitespaceForm}${
            view.caller === undefined
              ? empty
              : html`<span class="f6 color-fg-muted mr-3" data-testid="viewed-count">${viewedCount} / ${diff.fileCount} files viewed</span>`
          }${canReview ? reviewForm(view, loaded, pendingCount, kept, typed.review) : empty}`
          const fileList = html`<details class="Box mb-3" data-testid="file-list" open>
  <summary class="Box-header py-2 f6 text-bold">${diff.fileCount} ${diff.fileCount === 1 ? "file" : "files"} changed</summary>
  <ul class="list-style-none f6 text-mono p-2 hearth-file-list">${diff.all.map((f, i) => {
    const href =
      i >= shownFrom && i < shownTo
        ? `#${fileAnchor(i)}`
        : `${url.pathname}?${new URLSearchParams({ ...(style === "split" ? { style } : {}), ...(whitespace === "show-all" ? {} : { whitespace }), "skip-to": f.newPath }).toString()}#${fileAnchor(i)}`
    const state = viewed[f.newPath]
    return html`<li class="py-1 d-flex"><a class="flex-auto wb-break-word" href="${href}">${f.newPath}</a>${
      state === ViewedState.viewed
        ? html`<span class="Label ml-2">Viewed</span>`
        : state === ViewedState.changed
          ? html`<span class="Label Label--attention ml-2">Changed</span>`
          : empty
    }<span class="ml-2 color-fg-success">+${f.additions}</span><span class="ml-1 color-fg-danger">−${f.deletions}</span></li>`
  })}</ul>
</details>`
          const top = html`${diffs.toolbar(view, diff, style, more)}
${typed.review === undefined ? empty : html`<div class="flash flash-error mb-3" role="alert" data-testid="form-error">${typed.review.error}</div>`}
${fileList}
${shownFrom > 0 ? html`<div class="flash mb-3">Showing files ${shownFrom + 1}–${shownTo} of ${diff.fileCount}. <a href="${url.pathname}${q}">Back to the first files</a></div>` : empty}
${patch.truncated ? html`<div class="flash flash-warn mb-3">This diff is too large: it was cut short.</div>` : empty}`

          let formShown = false
          const renderFile = (file: DiffFile, i: number) =>
            Effect.gen(function* () {
              const at = shownFrom + i
              const fileComments =
                file.status === "deleted" ? (byPath.get(file.oldPath) ?? []) : (byPath.get(file.newPath) ?? [])
              const bodies = new Map<number, Html>()
              for (const c of fileComments) bodies.set(c.id, yield* rendered(view, c.body))
              // A comment whose line changed since, or that this diff no longer shows, goes to the
              // file's "Outdated" block (a file too large to show keeps its comments out of both).
              const shown = new Set<number>()
              for (const hunk of file.hunks)
                for (const l of hunk.lines) {
                  if (l.oldNumber !== undefined && l.kind !== "add") shown.add(-l.oldNumber)
                  if (l.newNumber !== undefined && l.kind !== "del") shown.add(l.newNumber)
                }
              const isOutdated = (c: IssueCodeComment) =>
                outdated.has(c.id) || (file.hunks.length > 0 && !shown.has(c.line))
              const byLine = new Map<number, Array<IssueCodeComment>>()
              const stale = new Map<number, Array<IssueCodeComment>>()
              for (const c of fileComments) {
                const into = isOutdated(c) ? stale : byLine
                into.set(c.line, [...(into.get(c.line) ?? []), c])
              }
              const formHere =
                canReview && opened !== undefined && opened.path === file.newPath
                  ? signedOf(opened.side, opened.line)
                  : undefined
              const state = viewed[file.newPath]
              const isViewed = state === ViewedState.viewed
              const controls =
                view.caller === undefined
                  ? state === ViewedState.changed
                    ? empty
                    : empty
                  : html`${state === ViewedState.changed ? html`<span class="Label Label--attention mr-2" data-testid="changed-since">Changed since last view</span>` : empty}<form class="d-inline mr-2" method="post" action="${filesUrl(view, loaded.issue.index)}/reviews/viewed-files">
  ${csrfField(view.ctx)}${keptFields(style, whitespace)}
  <input type="hidden" name="head" value="${head}">
  <input type="hidden" name="path" value="${file.newPath}">
  <input type="hidden" name="anchor" value="${fileAnchor(at)}">
  <input type="hidden" name="viewed" value="${isViewed ? "false" : "true"}">
  <button class="btn btn-sm" type="submit" aria-pressed="${isViewed ? "true" : "false"}" data-testid="viewed-toggle">${isViewed ? icon("check") : empty} Viewed</button>
</form>`
              const lineUrl = (side: LineSide, line: number) =>
                `${url.pathname}?${new URLSearchParams({
                  ...(style === "split" ? { style } : {}),
                  ...(whitespace === "show-all" ? {} : { whitespace }),
                  comment: `${file.newPath}:${side}:${line}`
                }).toString()}#comment-form`
              const newCommentUrl = (side: LineSide, line: number) =>
                `${filesUrl(view, loaded.issue.index)}/reviews/new_comment?${new URLSearchParams({
                  path: file.newPath,
                  side,
                  line: String(line),
                  ...(style === "split" ? { style } : {}),
                  ...(whitespace === "show-all" ? {} : { whitespace })
                }).toString()}`
              const box = yield* diffs.fileBox(
                view,
                file,
                at,
                style,
                { commit: head },
                {
                  controls,
                  folded: isViewed,
                  lines: {
                    ...(canReview && file.status !== "deleted"
                      ? {
                          control: (side: LineSide, line: number) =>
                            String(
                              html`<a class="hearth-add-comment ml-1" href="${lineUrl(side, line)}" hx-get="${newCommentUrl(side, line)}" hx-target="closest tr" hx-swap="afterend" aria-label="Comment on line ${line} (${side} side)" data-testid="add-comment">+</a>`
                            )
                        }
                      : {}),
                    after: (key: number) => {
                      const here = byLine.get(key)
                      const parts: Array<Html> = []
                      if (here !== undefined)
                        parts.push(conversations(view, loaded, here, bodies, names, can, kept, typed))
                      if (formHere === key && opened !== undefined) {
                        formShown = true
                        parts.push(
                          commentForm(
                            view,
                            loaded,
                            opened,
                            kept,
                            typed.comment === undefined ? undefined : typed.comment
                          )
                        )
                      }
                      return parts.length === 0 ? undefined : String(html`${parts}`)
                    }
                  }
                }
              )
              return stale.size === 0
                ? String(box)
                : `${box}${outdatedBlock(view, loaded, file.newPath, stale, bodies, names, can, kept, typed)}`
            })

          const files = Stream.mapEffect(
            Stream.fromIterable(diff.files.map((file, i) => [file, i] as const)),
            ([file, i]) => renderFile(file, i)
          )
          // A refused comment on a line this page does not show: its form (and text) after the files.
          const lost = Stream.suspend(() =>
            Stream.make(
              typed.comment !== undefined && !formShown
                ? String(html`<div class="mb-3">${commentForm(view, loaded, typed.comment, kept, typed.comment)}</div>`)
                : ""
            )
          )
          const bottom = diff.truncated
            ? String(
                html`<div class="text-center my-3"><a class="btn" href="${url.pathname}?${new URLSearchParams({
                  ...(style === "split" ? { style } : {}),
                  ...(whitespace === "show-all" ? {} : { whitespace }),
                  "skip-to": diff.all[shownTo]?.newPath ?? ""
                }).toString()}" data-testid="more-files">Show more files (${diff.fileCount - shownTo} more)</a></div>`
              )
            : ""
          return Stream.concat(Stream.concat(Stream.make(String(top)), files), Stream.concat(lost, Stream.make(bottom)))
        })

        return yield* frame.stream(
          view,
          {
            title: `${loaded.issue.title} · Pull request #${loaded.issue.index} · ${view.owner.name}/${view.repo.name}`,
            tab: "pulls",
            ...(status === undefined ? {} : { status })
          },
          Stream.concat(Stream.make(String(header)), Stream.unwrap(rest))
        )
      })

    /** The refusal of a review form (the 404, 403 or 423 page), or undefined when the viewer may send it. */
    const refusal = (view: RepoView, loaded: Loaded) =>
      Effect.gen(function* () {
        const refused = refusalPage(web, view, REVIEW, "review pull requests")
        if (refused !== undefined) return refused
        const reason = yield* reviews.reviewRefusal(view, loaded)
        return reason === undefined ? undefined : web.errorPage(view.ctx, 403, "Forbidden", reason)
      })

    /** Back to the files page with the form's style and whitespace, at `anchor`. */
    const back = (view: RepoView, loaded: Loaded, form: Form, anchor = "") =>
      web.redirect(
        view.ctx,
        `${filesUrl(view, loaded.issue.index)}${keptQuery(
          form.get("style") === "split" ? "split" : "unified",
          whitespaceOf(form.get("whitespace"))
        )}${anchor === "" ? "" : `#${anchor}`}`
      )

    /** The form's style and whitespace as the re-shown page's query. */
    const withKept = (view: RepoView, form: Form): RepoView => {
      const url = new URL(view.ctx.url.href)
      url.pathname = `${view.base}/pulls/${view.rest[1] ?? ""}/files`
      url.search = keptQuery(form.get("style") === "split" ? "split" : "unified", whitespaceOf(form.get("whitespace")))
      return { ...view, ctx: { ...view.ctx, url } }
    }

    const messageOf = (error: unknown) => (error as { message?: unknown }).message

    /** A validation failure of the service as the message to show; anything else fails the page. */
    const refusedWith = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.catch(effect, (error) =>
        error instanceof Errors.ValidationFailed
          ? Effect.succeed({ refused: String(messageOf(error)) })
          : Effect.fail(error)
      )

    return [
      frame.route("GET", "/:owner/:repo/pulls/:index/files", { rule: READ }, (view) => filesPage(view)),

      // htmx: the comment form of one line, inserted after it (a table row).
      pullFrame.route("GET", "/:owner/:repo/pulls/:index/files/reviews/new_comment", { rule: READ }, (view, loaded) =>
        Effect.gen(function* () {
          if (!(yield* mayReview(view, loaded))) return web.notFound(view.ctx)
          const q = view.ctx.url.searchParams
          const key = parseLineKey(`${q.get("path") ?? ""}:${q.get("side") ?? ""}:${q.get("line") ?? ""}`)
          if (key === undefined) return web.notFound(view.ctx)
          const kept = { style: styleOf(view.ctx.url), whitespace: whitespaceOf(q.get("whitespace")) }
          return frame.fragment(
            view.ctx,
            html`<tr class="hearth-line-extra"><td colspan="4">${commentForm(view, loaded, key, kept)}</td></tr>`
          )
        })
      ),

      pullFrame.route(
        "POST",
        "/:owner/:repo/pulls/:index/files/reviews/comments",
        { rule: READ, access: "signed-in" },
        (view, loaded, form) =>
          Effect.gen(function* () {
            const path = form.get("path") ?? ""
            const side: LineSide = form.get("side") === "old" ? "old" : "new"
            const line = Number(form.get("line") ?? "")
            const content = form.get("content") ?? ""
            const replyRaw = form.get("reply")
            const reply = replyRaw !== null && /^\d{1,15}$/.test(replyRaw) ? Number(replyRaw) : undefined
            if (!Number.isInteger(line) || line <= 0 || path === "")
              return yield* Errors.validationFailed("the form names no line to comment on")
            const added = yield* refusedWith(
              reviews.addLineComment(view, view.rest[1] ?? "", { path, side, line, body: content, reply })
            )
            if (typeof added === "number") return back(view, loaded, form, `issuecomment-${added}`)
            const shown = withKept(view, form)
            return yield* filesPage(
              shown,
              reply === undefined
                ? { comment: { path, side, line, content, error: added.refused } }
                : { reply: { review: reply, path, line: signedOf(side, line), content, error: added.refused } },
              422
            )
          }),
        refusal
      ),

      pullFrame.route(
        "POST",
        "/:owner/:repo/pulls/:index/files/reviews/submit",
        { rule: READ, access: "signed-in" },
        (view, loaded, form) =>
          Effect.gen(function* () {
            const type = form.get("type") ?? ""
            const content = form.get("content") ?? ""
            const event = EVENTS[type]
            const done =
              event === undefined
                ? { refused: "Choose how to submit the review: comment, approve or request changes." }
                : yield* refusedWith(reviews.finish(view, view.rest[1] ?? "", { event, body: content }))
            if (!("refused" in done)) return back(view, loaded, form)
            return yield* filesPage(withKept(view, form), { review: { type, content, error: done.refused } }, 422)
          }),
        refusal
      ),

      pullFrame.route(
        "POST",
        "/:owner/:repo/pulls/:index/files/reviews/viewed-files",
        { rule: READ, access: "signed-in" },
        (view, loaded, form) =>
          Effect.gen(function* () {
            const path = form.get("path") ?? ""
            if (path === "") return yield* Errors.validationFailed("the form names no file")
            yield* reviews.setViewed(view, view.rest[1] ?? "", form.get("head") ?? "", {
              [path]: form.get("viewed") === "true"
            })
            const anchor = form.get("anchor") ?? ""
            return back(view, loaded, form, /^diff-\d{1,6}$/.test(anchor) ? anchor : "")
          })
      ),

      pullFrame.route(
        "POST",
        "/:owner/:repo/pulls/:index/files/reviews/resolve",
        { rule: READ, access: "signed-in" },
        (view, loaded, form) =>
          Effect.gen(function* () {
            const id = form.get("comment_id") ?? ""
            yield* reviews.resolveConversation(view, view.rest[1] ?? "", id, form.get("action") !== "unresolve")
            return back(view, loaded, form, `issuecomment-${id}`)
          }),
        refusal
      )
    ]
  })

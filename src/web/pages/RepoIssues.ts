// Issues in the browser (Forgejo's routers/web/repo/issue.go, templates/repo/issue/*):
// `/{owner}/{repo}/issues` (the list, with Forgejo's web query parameters: state, labels,
// milestone, assignee, poster, q, sort, page), `/issues/{index}` (the issue and its whole timeline,
// a comment form with a markdown preview through htmx, close/reopen), `POST /issues/{index}/comments`
// (Forgejo's NewComment: the comment, and `status=close|reopen` for "Close with comment"), and
// `POST /markup` (the preview: markdown in, HTML out, Forgejo's misc.Markup), and `/issues/new`
// (the repository's templates to choose from; a markdown template fills the form, a YAML form
// shows its fields, whose answers make the body as Forgejo writes them). A pull request's
// index redirects to `/pulls/{index}`. Everything goes through IssuesService and IssueExtras, the
// API's services, with their rules.
//
// Access, as the API's issue routes: reading needs the issues unit (off: the 404 page);
// opening one and commenting need a signed-in reader and a repository that is not archived (the
// service refuses a locked issue to non-writers);
// closing and reopening, the poster or a writer (Forgejo's `CanWriteIssuesOrPulls` or poster).
import { Effect, Option } from "effect"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import type { Page } from "../../http/Pagination.ts"
import type { Reaction } from "../../issues/Extras.ts"
import { IssueExtras, LOCK_REASONS } from "../../issues/Extras.ts"
import { isPoster, isRepoAdmin, isWriter } from "../../issues/Policy.ts"
import type { Issue, Label, TimelineComment } from "../../issues/Schema.ts"
import { IssuesService } from "../../issues/Service.ts"
import { type IssueFormField, type IssueTemplate, IssueTemplates } from "../../issues/Templates.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { checkbox, type FieldErrors, field, formError, select, textArea } from "../Form.ts"
import { empty, type Html, html, raw } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { segment } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { when } from "../RepoViews.ts"
import type { Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

/** Issues on a page of the list (Forgejo's [ui] ISSUE_PAGING_NUM). */
export const ISSUES_PAGE_SIZE = 20

/** Forgejo's web sort names and the service's. */
const SORTS: Readonly<Record<string, { readonly sort: string; readonly label: string }>> = {
  newest: { sort: "latest", label: "Newest" },
  oldest: { sort: "oldest", label: "Oldest" },
  recentupdate: { sort: "recentupdate", label: "Recently updated" },
  mostcomment: { sort: "mostcomment", label: "Most commented" }
}

const READ: RepoRule = { role: "read", unit: "issues" }
/** Forgejo's `mustNotBeArchived` on issue and comment creation (the API's rule). */
const WRITE: RepoRule = { role: "read", unit: "issues", changes: "mirrors" }

/** A YAML form field's attribute as text. */
const attr = (f: IssueFormField, name: string) => {
  const value = f.attributes[name]
  return typeof value === "string" ? value : ""
}
const hintOf = (f: IssueFormField) => (attr(f, "description") === "" ? {} : { hint: attr(f, "description") })
const fieldName = (f: IssueFormField, i: number) => `form-field-${f.id === "" ? String(i) : f.id}`

/**
 * A YAML form's answers as the issue's markdown (Forgejo's `renderIssueFormValues`): each field's
 * label as a heading and its value; the markdown fields are not part of the issue.
 */
const formBody = (template: IssueTemplate, form: URLSearchParams) =>
  template.body
    .map((f, i) => {
      const name = fieldName(f, i)
      const label = attr(f, "label")
      switch (f.type) {
        case "input":
        case "textarea":
          return `### ${label}\n\n${(form.get(name) ?? "").trim() || "_No response_"}\n\n`
        case "dropdown":
          return `### ${label}\n\n${form.getAll(name).join(", ") || "_No response_"}\n\n`
        case "checkboxes": {
          const options = Array.isArray(f.attributes.options)
            ? (f.attributes.options as Array<{ label?: unknown }>)
            : []
          const lines = options.map(
            (o, j) =>
              `- [${form.get(`${name}-${j}`) === "on" ? "x" : " "}] ${typeof o.label === "string" ? o.label : ""}`
          )
          return `### ${label}\n\n${lines.join("\n")}\n\n`
        }
        default:
          return ""
      }
    })
    .join("")
    .trim()

/** A label's colour as the API gives it (`rrggbb`), or grey when it is anything else. */
const colorOf = (label: Pick<Label, "color">) =>
  /^#?[0-9a-fA-F]{6}$/.test(label.color) ? label.color.replace(/^#/, "") : "888888"

/**
 * A label as a chip. The colour is an SVG fill: the pages' CSP allows no inline `style`, and a
 * presentation attribute is not a style.
 */
export const labelChip = (label: Pick<Label, "name" | "color" | "description">, href?: string) => {
  const inner = html`<svg class="octicon hearth-label-dot mr-1" width="10" height="10" viewBox="0 0 10 10" aria-hidden="true"><circle cx="5" cy="5" r="5" fill="#${colorOf(label)}"></circle></svg>${label.name}`
  return href === undefined
    ? html`<span class="Label mr-1" data-testid="label-chip" title="${label.description}">${inner}</span>`
    : html`<a class="Label mr-1" data-testid="label-chip" title="${label.description}" href="${href}">${inner}</a>`
}

/** What a list shows: issues, or pull requests (the same list, RepoPulls.ts). */
export type ListKind = "issues" | "pulls"

/** A pull request's state in a list: open, merged or closed. */
const pullGlyph = (issue: Issue) => {
  const merged = (issue.pull_request as { readonly merged?: boolean } | null)?.merged === true
  const [colour, glyph, label] =
    issue.state === "open"
      ? ["color-fg-success", "git-pull-request", "Open"]
      : merged
        ? ["color-fg-done", "git-merge", "Merged"]
        : ["color-fg-danger", "git-pull-request-closed", "Closed"]
  return html`<span class="mr-2 ${colour}" role="img" aria-label="${label}">${icon(glyph)}</span>`
}

const user = (login: string) => html`<a class="Link--primary text-bold" href="/${segment(login)}">${login}</a>`

/** What the comment form sent, kept when it is refused. */
interface Typed {
  readonly content?: string
}

/** A reaction's target: the issue (by its index) or one of its comments. */
type ReactionOn = { readonly index: number } | { readonly commentId: number }
const reactionBarId = (on: ReactionOn) => ("index" in on ? "reactions-issue" : `reactions-${on.commentId}`)

/** Forgejo's reactions as emoji (the names of [ui] REACTIONS; another name shows as it is). */
const EMOJI: Readonly<Record<string, string>> = {
  "+1": "\u{1F44D}",
  "-1": "\u{1F44E}",
  laugh: "\u{1F604}",
  hooray: "\u{1F389}",
  confused: "\u{1F615}",
  heart: "\u2764\uFE0F",
  rocket: "\u{1F680}",
  eyes: "\u{1F440}"
}
const emojiOf = (content: string) => EMOJI[content] ?? content

/** A comment's text being edited, refused: its editor shows what was typed and why. */
interface EditState {
  readonly key: string
  readonly value: string
  readonly message: string
}

/** A sidebar edit refused: what was sent, and the message next to its field (or for the page). */
interface SideState {
  readonly form?: URLSearchParams
  readonly errors?: FieldErrors
  readonly message?: string
}

interface PageState {
  readonly typed?: Typed
  readonly errors?: FieldErrors
  readonly message?: string
  readonly status?: number
  readonly side?: SideState
  readonly edit?: EditState
}

/** Title and description: the poster or a writer (the service's `mayEditIssue`). */
const mayEdit = (view: RepoView, issue: Issue) => isWriter(view) || isPoster(view.caller, { posterId: issue.user.id })

/** The issues pages' routes and the parts the pull request pages reuse (RepoPulls.ts). */
export const makeIssueParts = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService
    const extras = yield* IssueExtras
    const markdown = yield* MarkdownRenderer
    const users = yield* UsersRepo
    const templates = yield* IssueTemplates

    const title = (view: RepoView, what: string) => `${what} · ${view.owner.name}/${view.repo.name}`
    const issueUrl = (view: RepoView, index: number) => `${view.base}/issues/${index}`
    const reactionBase = (view: RepoView, on: ReactionOn) =>
      "index" in on ? issueUrl(view, on.index) : `${view.base}/comments/${on.commentId}`

    /** Markdown of the repository (references, mentions) as HTML; the text as such when too large. */
    const rendered = (view: RepoView, text: string) =>
      Effect.map(
        Effect.option(markdown.render({ text, mode: "comment", context: view.base, viewer: view.caller?.user })),
        (out) =>
          Option.isSome(out)
            ? html`<div class="markdown-body">${raw(out.value)}</div>`
            : html`<pre class="hearth-commit-message">${text}</pre>`
      )

    /**
     * A user id of the web's query (`poster=ID`, `assignee=ID`, Forgejo's) as the service's login;
     * null when nobody has it (the list is then empty, not unfiltered).
     */
    const loginOf = (raw: string | null) =>
      Effect.gen(function* () {
        if (raw === null || raw === "" || raw === "0") return undefined
        if (!/^\d+$/.test(raw)) return null
        const found = yield* users.findById(Number(raw))
        return Option.isSome(found) ? found.value.name : null
      })

    // ---- The list --------------------------------------------------------------------------

    const issueRow = (view: RepoView, issue: Issue, kind: ListKind = "issues") =>
      html`<li class="Box-row d-flex flex-items-start" data-testid="issue-row">
  ${kind === "pulls" ? pullGlyph(issue) : html`<span class="mr-2 ${issue.state === "open" ? "color-fg-success" : "color-fg-done"}" role="img" aria-label="${issue.state === "open" ? "Open" : "Closed"}">${icon(issue.state === "open" ? "issue-opened" : "issue-closed")}</span>`}
  <div class="flex-auto min-width-0">
    <a class="Link--primary text-bold wb-break-word" href="${view.base}/${kind}/${issue.number}" data-testid="issue-title">${issue.title}</a>
    ${issue.labels.map((l) => labelChip(l, `${view.base}/${kind}?labels=${l.id}`))}
    <div class="f6 color-fg-muted mt-1">#${issue.number} opened ${when(issue.created_at)} by ${issue.user.login}${
      issue.milestone === null ? empty : html` · ${icon("milestone")} ${issue.milestone.title}`
    }</div>
  </div>
  ${issue.comments === 0 ? empty : html`<span class="color-fg-muted f6 ml-2">${icon("comment")} ${issue.comments}</span>`}
</li>`

    /** The list's link with `changes` applied to the current query (and back to page 1). */
    const queryLink = (
      view: RepoView,
      changes: Readonly<Record<string, string | undefined>>,
      kind: ListKind = "issues"
    ) => {
      const params = new URLSearchParams(view.ctx.url.searchParams)
      params.delete("page")
      for (const [k, v] of Object.entries(changes)) {
        if (v === undefined) params.delete(k)
        else params.set(k, v)
      }
      const query = params.toString()
      return `${view.base}/${kind}${query === "" ? "" : `?${query}`}`
    }

    /** The list of issues, or of pull requests (`kind`, RepoPulls.ts). */
    const listPage = (view: RepoView, kind: ListKind = "issues") =>
      Effect.gen(function* () {
        const params = view.ctx.url.searchParams
        const state = params.get("state") === "closed" ? "closed" : params.get("state") === "all" ? "all" : "open"
        const sortKey = SORTS[params.get("sort") ?? ""] === undefined ? "newest" : params.get("sort")!
        const keyword = (params.get("q") ?? "").trim()
        const milestone = params.get("milestone") ?? ""
        const labelIds = (params.get("labels") ?? "")
          .split(",")
          .map((s) => s.trim())
          .filter((s) => /^\d+$/.test(s))
        const labels = yield* issues.listRepoLabels(view, undefined, undefined)
        // The web's `labels` are ids, the service's names (the API's `labels`).
        const labelNames = labelIds.map((id) => labels.rows.find((l) => String(l.id) === id)?.name)
        const [poster, assignee] = yield* Effect.all([loginOf(params.get("poster")), loginOf(params.get("assignee"))])
        const query = {
          type: kind,
          q: keyword === "" ? undefined : keyword,
          labels: labelNames.length === 0 ? undefined : labelNames.join(","),
          milestones: /^\d+$/.test(milestone) && milestone !== "0" ? milestone : undefined,
          created_by: poster ?? undefined,
          assigned_by: assignee ?? undefined,
          sort: SORTS[sortKey]!.sort
        }
        // A label, poster or assignee nobody has matches no issue.
        const impossible = labelNames.includes(undefined) || poster === null || assignee === null
        const window = pageOf(view.ctx, ISSUES_PAGE_SIZE)
        const one: Page = { page: 1, limit: 1, offset: 0 }
        const none = Effect.succeed({ rows: [] as ReadonlyArray<Issue>, total: 0 })
        const [listed, open, closed] = impossible
          ? yield* Effect.all([none, none, none])
          : yield* Effect.all([
              issues.list(view, { ...query, state }, window),
              issues.list(view, { ...query, state: "open" }, one),
              issues.list(view, { ...query, state: "closed" }, one)
            ])
        const signedIn = view.ctx.viewer !== undefined
        const noun = kind === "pulls" ? "pull requests" : "issues"
        const stateTab = (name: "open" | "closed", n: number, glyph: string, label: string) =>
          html`<a class="btn-link mr-3${state === name ? " text-bold color-fg-default" : " Link--muted"}" href="${queryLink(view, { state: name }, kind)}" data-testid="state-${name}"${
            state === name ? html` aria-current="page"` : empty
          }>${icon(glyph)} <span data-testid="count-${name}">${n}</span> ${label}</a>`
        const sortLinks = Object.entries(SORTS).map(
          ([key, s]) =>
            html`<a class="SelectMenu-item" role="menuitemradio" aria-checked="${key === sortKey ? "true" : "false"}" href="${queryLink(view, { sort: key }, kind)}">${s.label}</a>`
        )
        const filterBar = html`<form class="d-flex flex-items-center flex-wrap mb-3" method="get" action="${view.base}/${kind}" role="search" data-testid="issue-filter">
  <input type="hidden" name="state" value="${state}">
  ${labelIds.length === 0 ? empty : html`<input type="hidden" name="labels" value="${labelIds.join(",")}">`}
  <label class="sr-only" for="issue-q">Search ${noun}</label>
  <input class="form-control flex-auto mr-2" id="issue-q" type="search" name="q" value="${keyword}" placeholder="Search ${noun}">
  <button class="btn mr-2" type="submit">Search</button>
  ${signedIn ? (kind === "pulls" ? html`<a class="btn btn-primary" href="${view.base}/compare" data-testid="new-pull">New pull request</a>` : html`<a class="btn btn-primary" href="${view.base}/issues/new" data-testid="new-issue">New issue</a>`) : empty}
</form>
${
  labels.rows.length === 0
    ? empty
    : html`<p class="mb-3" data-testid="label-filter"><span class="color-fg-muted mr-1">Labels:</span>${labels.rows.map(
        (l) =>
          labelChip(l, queryLink(view, { labels: labelIds.includes(String(l.id)) ? undefined : String(l.id) }, kind))
      )}</p>`
}`
        return yield* frame.page(
          view,
          { title: title(view, kind === "pulls" ? "Pull requests" : "Issues"), tab: kind },
          html`<h1 class="sr-only">${kind === "pulls" ? "Pull requests" : "Issues"}</h1>
${filterBar}
<div class="Box">
  <div class="Box-header d-flex flex-items-center flex-wrap">
    <div class="flex-auto">
      ${stateTab("open", open.total, "issue-opened", "Open")}
      ${stateTab("closed", closed.total, "check", "Closed")}
    </div>
    <details class="details-reset details-overlay" data-testid="sort-menu">
      <summary class="btn-link Link--muted">Sort: ${SORTS[sortKey]!.label}</summary>
      <div class="SelectMenu right-0"><div class="SelectMenu-modal"><div class="SelectMenu-list">${sortLinks}</div></div></div>
    </details>
  </div>
  ${
    listed.rows.length === 0
      ? html`<div class="blankslate" data-testid="no-issues"><p>No ${noun} match.</p></div>`
      : html`<ul data-testid="issue-list">${listed.rows.map((i) => issueRow(view, i, kind))}</ul>`
  }
</div>
${pager(view.ctx, window, listed.total)}`
        )
      })

    // ---- One issue -------------------------------------------------------------------------

    /** Who reacted, for the reaction's title (`alice, bob reacted with heart`). */
    const reactedBy = (people: ReadonlyArray<string>, content: string) =>
      `${people.length > 10 ? `${people.slice(0, 10).join(", ")} and ${people.length - 10} more` : people.join(", ")} reacted with ${content}`

    /**
     * The reaction bar under the issue or a comment (Forgejo's `reactions.tmpl`): each reaction
     * given, with its count and who gave it in its title, one's own pressed; a button toggles one's
     * own (a form POST, swapped in place by htmx), the picker adds another. Anonymous viewers see the
     * counts only; so do non-writers on a locked issue (the service refuses them).
     */
    const reactionBar = (view: RepoView, issue: Issue, on: ReactionOn, reactions: ReadonlyArray<Reaction>) => {
      const me = view.ctx.viewer?.user.name
      const may = me !== undefined && (!issue.is_locked || isWriter(view))
      const groups = new Map<string, Array<string>>()
      for (const r of reactions) groups.set(r.content, [...(groups.get(r.content) ?? []), r.user.login])
      const barId = reactionBarId(on)
      const action = (verb: "react" | "unreact") => `${reactionBase(view, on)}/reactions/${verb}`
      const form = (content: string, verb: "react" | "unreact", body: Html, extra = "") =>
        html`<form class="d-inline${extra}" method="post" action="${action(verb)}" hx-post="${action(verb)}" hx-target="#${barId}" hx-swap="outerHTML">${csrfField(view.ctx)}<input type="hidden" name="content" value="${content}">${body}</form>`
      const chips = [...groups].map(([content, people]) => {
        const mine = me !== undefined && people.includes(me)
        const face = html`<span aria-hidden="true">${emojiOf(content)}</span> <span class="Counter">${people.length}</span>`
        const label = `${content}: ${people.length}`
        return may
          ? form(
              content,
              mine ? "unreact" : "react",
              html`<button class="btn btn-sm mr-1${mine ? " color-bg-accent color-fg-accent" : ""}" type="submit" title="${reactedBy(people, content)}" aria-label="${label}" aria-pressed="${mine ? "true" : "false"}" data-content="${content}" data-testid="reaction">${face}</button>`
            )
          : html`<span class="btn btn-sm mr-1 disabled" title="${reactedBy(people, content)}" aria-label="${label}" data-content="${content}" data-testid="reaction">${face}</span>`
      })
      const picker = may
        ? html`<details class="details-reset details-overlay d-inline-block" data-testid="reaction-picker">
  <summary class="btn btn-sm" aria-label="Add a reaction">${icon("smiley")}</summary>
  <div class="SelectMenu"><div class="SelectMenu-modal p-1">${view.ctx.settings.ui.REACTIONS.map((content) =>
    form(
      content,
      groups.get(content)?.includes(me!) === true ? "unreact" : "react",
      html`<button class="btn-octicon" type="submit" aria-label="${content}" data-testid="react-${content}">${emojiOf(content)}</button>`
    )
  )}</div></div>
</details>`
        : empty
      return html`<div class="mt-2 d-flex flex-wrap flex-items-center" id="${barId}" data-testid="reactions">${chips}${picker}</div>`
    }

    const commentBox = (
      view: RepoView,
      issue: Issue,
      comment: { readonly who: string; readonly at: string; readonly id: number | undefined },
      body: Html,
      reactions: ReadonlyArray<Reaction>,
      editor: Html
    ) =>
      html`<div class="Box mb-3" id="${comment.id === undefined ? "issue-body" : `issuecomment-${comment.id}`}" data-testid="comment">
  <div class="Box-header py-2 f6 d-flex flex-items-center"><span class="flex-auto">${user(comment.who)} <span class="color-fg-muted">commented ${when(comment.at)}</span></span>${editor}</div>
  <div class="Box-body">${body}${reactionBar(view, issue, comment.id === undefined ? { index: issue.number } : { commentId: comment.id }, reactions)}</div>
</div>`

    /**
     * The editor of a comment's text (or the issue's description, `id` undefined) for its poster and
     * the writers (the service's rule): a form that works without JavaScript, its error next to it.
     */
    const textEditor = (
      view: RepoView,
      issue: Issue,
      target: { readonly id: number | undefined; readonly poster: number; readonly text: string },
      edit: EditState | undefined
    ) => {
      const mine = view.caller !== undefined && view.caller.user.id === target.poster
      if (!(mine || isWriter(view))) return empty
      const key = target.id === undefined ? "issue-body" : `comment-${target.id}`
      const here = edit?.key === key
      const id = `edit-${key}`
      const action =
        target.id === undefined ? `${issueUrl(view, issue.number)}/content` : `${view.base}/comments/${target.id}`
      return html`<details class="details-reset ml-2"${here ? html` open` : empty} data-testid="edit-${key}">
  <summary class="btn-link f6">Edit</summary>
  <form method="post" action="${action}" class="mt-2">
    ${csrfField(view.ctx)}
    <label class="sr-only" for="${id}">Edit the text</label>
    <textarea class="form-control width-full" id="${id}" name="content" rows="6"${here ? html` aria-invalid="true" aria-describedby="${id}-error"` : empty}>${here ? edit.value : target.text}</textarea>
    ${here ? html`<p class="note color-fg-danger" id="${id}-error" data-testid="error-${key}">${edit.message}</p>` : empty}
    <button class="btn btn-sm btn-primary mt-1" type="submit">Save</button>
  </form>
</details>`
    }

    /** One timeline event that is not a comment, as a line; undefined for the types not shown. */
    const eventLine = (event: TimelineComment): Html | undefined => {
      const who = user(event.user.login)
      const at = when(event.created_at)
      const line = (glyph: string, what: Html) =>
        html`<div class="d-flex flex-items-center f6 color-fg-muted ml-3 mb-3" data-testid="event" data-type="${event.type}">${icon(glyph)}<span class="ml-2">${who} ${what} ${at}</span></div>`
      switch (event.type) {
        case "close":
          return line("issue-closed", html`closed this`)
        case "reopen":
          return line("issue-reopened", html`reopened this`)
        case "label":
          return event.label === null
            ? undefined
            : line("tag", html`${event.body === "1" ? "added" : "removed"} the ${labelChip(event.label)} label`)
        case "milestone":
          return line(
            "milestone",
            event.milestone !== null
              ? html`added this to the <strong>${event.milestone.title}</strong> milestone`
              : event.old_milestone !== null
                ? html`removed this from the <strong>${event.old_milestone.title}</strong> milestone`
                : html`changed the milestone`
          )
        case "assignees":
          return event.assignee === null
            ? undefined
            : event.assignee.login === event.user.login
              ? line("person", event.removed_assignee ? html`removed their assignment` : html`self-assigned this`)
              : line(
                  "person",
                  event.removed_assignee
                    ? html`unassigned ${user(event.assignee.login)}`
                    : html`assigned ${user(event.assignee.login)}`
                )
        case "change_title":
          return line(
            "pencil",
            html`changed the title from <del>${event.old_title}</del> to <strong>${event.new_title}</strong>`
          )
        case "issue_ref":
        case "comment_ref":
        case "pull_ref":
          return event.ref_issue === null
            ? undefined
            : line(
                "cross-reference",
                html`referenced this from <a href="${event.ref_issue.html_url}">${event.ref_issue.title} #${event.ref_issue.number}</a>`
              )
        case "added_deadline":
          return line("calendar", html`added the due date <strong>${event.body}</strong>`)
        case "modified_deadline":
          return line(
            "calendar",
            html`changed the due date from <strong>${event.body.split("|")[1] ?? ""}</strong> to <strong>${event.body.split("|")[0]}</strong>`
          )
        case "removed_deadline":
          return line("calendar", html`removed the due date <strong>${event.body}</strong>`)
        case "lock":
          return line(
            "lock",
            event.body === ""
              ? html`locked this conversation`
              : html`locked as <strong>${event.body}</strong> and limited the conversation to collaborators`
          )
        case "unlock":
          return line("key", html`unlocked this conversation`)
        case "pin":
          return line("pin", html`pinned this`)
        case "unpin":
          return line("pin", html`unpinned this`)
        default:
          return undefined
      }
    }

    const commentForm = (view: RepoView, issue: Issue, typed: Typed, errors: FieldErrors, message?: string) => {
      const ctx = view.ctx
      if (ctx.viewer === undefined) {
        return html`<p class="mt-4" data-testid="sign-in-to-comment"><a class="btn btn-sm mr-2" href="/user/login?redirect_to=${encodeURIComponent(issueUrl(view, issue.number))}">Sign in</a> to join this conversation.</p>`
      }
      const mayState = isWriter(view) || isPoster(view.caller, { posterId: issue.user.id })
      const action = `${issueUrl(view, issue.number)}/comments`
      const locked = issue.is_locked && !(isWriter(view) || ctx.viewer.user.isAdmin)
      if (locked) {
        return html`<p class="mt-4 color-fg-muted" data-testid="locked-note">${icon("lock")} This conversation is locked: only collaborators may comment.</p>`
      }
      return html`<form class="mt-4" method="post" action="${action}" data-testid="comment-form">
  ${csrfField(ctx)}
  ${formError(message)}
  ${textArea({ name: "content", label: "Add a comment", value: typed.content ?? "", rows: 6, hint: "Markdown: #1 links an issue, @name mentions someone." }, errors)}
  <div class="mb-2" id="comment-preview" data-testid="comment-preview" aria-live="polite"></div>
  <div class="d-flex flex-items-center flex-wrap">
    <button class="btn mr-2" type="button" hx-post="${view.base}/markup" hx-include="closest form" hx-target="#comment-preview" hx-swap="innerHTML" data-testid="preview">Preview</button>
    ${
      mayState
        ? issue.state === "open"
          ? html`<button class="btn mr-2" type="submit" name="status" value="close" data-testid="close">${icon("issue-closed")} Close issue</button>`
          : html`<button class="btn mr-2" type="submit" name="status" value="reopen" data-testid="reopen">${icon("issue-reopened")} Reopen issue</button>`
        : empty
    }
    <button class="btn btn-primary" type="submit" name="status" value="" data-testid="comment-button">Comment</button>
  </div>
</form>`
    }

    /** What the sidebar's editors offer: only read for those who may use them. */
    const sidebarData = (view: RepoView, issue: Issue) =>
      Effect.gen(function* () {
        const writer = isWriter(view)
        const none = Effect.succeed(undefined)
        const [labels, milestones, candidates, watching] = yield* Effect.all(
          [
            writer ? labelsOf(view) : none,
            writer ? Effect.map(issues.listMilestones(view, "open", undefined, undefined), (m) => m.rows) : none,
            writer ? assignable(view, issue.assignees ?? []) : none,
            view.caller === undefined
              ? none
              : Effect.map(
                  Effect.orElseSucceed(extras.checkSubscription(view, String(issue.number)), () => undefined),
                  (w) => w?.subscribed
                )
          ],
          { concurrency: "unbounded" }
        )
        return { labels, milestones, candidates, watching }
      })

    /** The repository's labels and, in an organization's repository, the organization's. */
    const labelsOf = (view: RepoView) =>
      Effect.gen(function* () {
        const own = yield* issues.listRepoLabels(view, undefined, undefined)
        if (view.owner.type !== "organization") return own.rows
        const org = yield* Effect.orElseSucceed(
          issues.listOrgLabels(view.caller, view.owner.name, undefined, undefined),
          () => ({ rows: [] as ReadonlyArray<Label>, total: 0 })
        )
        return [...own.rows, ...org.rows]
      })

    /**
     * Who may be assigned (the service checks each again: write access): the owner when a user,
     * the collaborators with write access, the viewer when a writer, and those assigned already.
     */
    const assignable = (view: RepoView, current: ReadonlyArray<{ readonly login: string }>) =>
      Effect.gen(function* () {
        const collaborators = yield* frame.repos.listCollaborators(view.repo, { page: 1, limit: 100, offset: 0 })
        const names = new Set<string>()
        if (view.owner.type === "user") names.add(view.owner.name)
        if (view.caller !== undefined && isWriter(view)) names.add(view.caller.user.name)
        for (const c of collaborators.rows) if (c.mode !== "read" && c.user.type === "user") names.add(c.user.name)
        for (const a of current) names.add(a.login)
        return [...names].sort((a, b) => a.localeCompare(b))
      })

    /** A section of the sidebar: its heading, what is set, and the editor for those who may change it. */
    const section = (key: string, heading: string, current: Html, editor: Html | undefined, open: boolean) =>
      html`<div class="mb-3 pb-2 border-bottom" data-testid="sidebar-${key}">
  <h2 class="h6 color-fg-muted mb-1">${heading}</h2>
  <div data-testid="issue-${key}">${current}</div>
  ${
    editor === undefined
      ? empty
      : html`<details class="details-reset mt-1"${open ? html` open` : empty} data-testid="edit-${key}"><summary class="btn-link f6">Edit ${heading.toLowerCase()}</summary>${editor}</details>`
  }
</div>`

    /** A sidebar form: POSTed to `/issues/{index}/{action}`, back to the issue (a redirect). */
    const sideForm = (view: RepoView, issue: Issue, action: string, body: Html, buttons: Html) =>
      html`<form class="mt-2" method="post" action="${issueUrl(view, issue.number)}/${action}" data-testid="form-${action}">
  ${csrfField(view.ctx)}
  ${body}
  <div class="mt-2">${buttons}</div>
</form>`

    const fieldError = (name: string, message: string | undefined) =>
      message === undefined
        ? empty
        : html`<p class="note color-fg-danger" id="field-${name}-error" data-testid="error-${name}">${message}</p>`

    const sidebar = (
      view: RepoView,
      issue: Issue,
      data: Effect.Success<ReturnType<typeof sidebarData>>,
      side: SideState
    ) => {
      const errors = side.errors ?? {}
      const typed = side.form
      const save = html`<button class="btn btn-sm btn-primary" type="submit">Save</button>`
      const assignees = issue.assignees ?? []
      const chosenLabels =
        typed?.has("labels-sent") === true ? typed.getAll("label") : issue.labels.map((l) => String(l.id))
      const labelEditor =
        data.labels === undefined
          ? undefined
          : sideForm(
              view,
              issue,
              "labels",
              html`<input type="hidden" name="labels-sent" value="1"><fieldset${errors.label === undefined ? empty : html` aria-describedby="field-label-error"`}><legend class="sr-only">Labels</legend>${
                data.labels.length === 0
                  ? html`<p class="color-fg-muted">The repository has no labels yet: <a href="${view.base}/labels">make some</a>.</p>`
                  : data.labels.map((l) =>
                      checkbox({
                        name: "label",
                        value: String(l.id),
                        label: l.name,
                        checked: chosenLabels.includes(String(l.id)),
                        id: `label-${l.id}`
                      })
                    )
              }</fieldset>${fieldError("label", errors.label)}`,
              save
            )
      const milestoneEditor =
        data.milestones === undefined
          ? undefined
          : sideForm(
              view,
              issue,
              "milestone",
              select(
                {
                  name: "milestone",
                  label: "Milestone",
                  value: typed?.get("milestone") ?? String(issue.milestone?.id ?? 0),
                  choices: [
                    ["0", "No milestone"],
                    ...(issue.milestone !== null && !data.milestones.some((m) => m.id === issue.milestone!.id)
                      ? [[String(issue.milestone.id), issue.milestone.title] as const]
                      : []),
                    ...data.milestones.map((m) => [String(m.id), m.title] as const)
                  ]
                },
                errors
              ),
              save
            )
      const chosenAssignees =
        typed?.has("assignees-sent") === true ? typed.getAll("assignee") : assignees.map((a) => a.login)
      const assigneeEditor =
        data.candidates === undefined
          ? undefined
          : sideForm(
              view,
              issue,
              "assignees",
              html`<input type="hidden" name="assignees-sent" value="1"><fieldset${errors.assignee === undefined ? empty : html` aria-describedby="field-assignee-error"`}><legend class="sr-only">Assignees</legend>${data.candidates.map(
                (login) =>
                  checkbox({
                    name: "assignee",
                    value: login,
                    label: login,
                    checked: chosenAssignees.includes(login),
                    id: `assignee-${login}`
                  })
              )}</fieldset>${fieldError("assignee", errors.assignee)}`,
              save
            )
      const writer = isWriter(view)
      const dueEditor = writer
        ? sideForm(
            view,
            issue,
            "deadline",
            field(
              {
                name: "due_date",
                label: "Due date",
                type: "date",
                value: typed?.get("due_date") ?? (issue.due_date === null ? "" : issue.due_date.slice(0, 10))
              },
              errors
            ),
            html`<button class="btn btn-sm btn-primary" type="submit" name="action" value="set">Set</button>${
              issue.due_date === null
                ? empty
                : html` <button class="btn btn-sm" type="submit" name="action" value="clear" data-testid="clear-due-date">Remove</button>`
            }`
          )
        : undefined
      const lockEditor = writer
        ? issue.is_locked
          ? sideForm(
              view,
              issue,
              "unlock",
              html`<p class="note">Everyone who may read the issue will be able to comment again.</p>`,
              html`<button class="btn btn-sm" type="submit" data-testid="unlock">${icon("key")} Unlock conversation</button>`
            )
          : sideForm(
              view,
              issue,
              "lock",
              select(
                {
                  name: "reason",
                  label: "Reason",
                  value: typed?.get("reason") ?? "",
                  choices: [["", "No reason"], ...LOCK_REASONS.map((r) => [r, r] as const)],
                  hint: "Only collaborators will be able to comment."
                },
                errors
              ),
              html`<button class="btn btn-sm" type="submit" data-testid="lock">${icon("lock")} Lock conversation</button>`
            )
        : undefined
      const pinned = issue.pin_order > 0
      const signedIn = view.caller !== undefined
      return html`<aside class="col-12 col-md-3 f6" data-testid="issue-sidebar">
  ${section(
    "labels",
    "Labels",
    issue.labels.length === 0
      ? html`None yet`
      : html`${issue.labels.map((l) => labelChip(l, `${view.base}/issues?labels=${l.id}`))}`,
    labelEditor,
    errors.label !== undefined
  )}
  ${section(
    "milestone",
    "Milestone",
    issue.milestone === null ? html`No milestone` : html`${issue.milestone.title}`,
    milestoneEditor,
    errors.milestone !== undefined
  )}
  ${section(
    "assignees",
    "Assignees",
    assignees.length === 0 ? html`No one` : html`${assignees.map((a) => html`${user(a.login)} `)}`,
    assigneeEditor,
    errors.assignee !== undefined
  )}
  ${section(
    "due-date",
    "Due date",
    issue.due_date === null
      ? html`No due date`
      : html`<time datetime="${issue.due_date}">${issue.due_date.slice(0, 10)}</time>`,
    dueEditor,
    errors.due_date !== undefined
  )}
  ${
    signedIn && data.watching !== undefined
      ? html`<div class="mb-3 pb-2 border-bottom" data-testid="sidebar-notifications">
  <h2 class="h6 color-fg-muted mb-1">Notifications</h2>
  ${sideForm(
    view,
    issue,
    "watch",
    html`<input type="hidden" name="watch" value="${data.watching ? "false" : "true"}">`,
    html`<button class="btn btn-sm" type="submit" data-testid="${data.watching ? "unsubscribe" : "subscribe"}">${icon(data.watching ? "bell-slash" : "bell")} ${data.watching ? "Unsubscribe" : "Subscribe"}</button>`
  )}
</div>`
      : empty
  }
  ${
    lockEditor === undefined
      ? issue.is_locked
        ? html`<p class="mb-3" data-testid="issue-locked">${icon("lock")} Locked</p>`
        : empty
      : section(
          "lock",
          "Conversation",
          issue.is_locked ? html`${icon("lock")} Locked` : html`Open to everyone`,
          lockEditor,
          errors.reason !== undefined
        )
  }
  ${
    isRepoAdmin(view)
      ? html`<div class="mb-3" data-testid="sidebar-pin">${sideForm(
          view,
          issue,
          "pin",
          empty,
          html`<button class="btn btn-sm" type="submit" data-testid="${pinned ? "unpin" : "pin"}">${icon("pin")} ${pinned ? "Unpin" : "Pin"}</button>`
        )}${fieldError("pin", errors.pin)}</div>`
      : pinned
        ? html`<p class="mb-3" data-testid="issue-pinned">${icon("pin")} Pinned</p>`
        : empty
  }
</aside>`
    }

    /** The title and, for its poster and the writers, the editor of the title. */
    const titleBlock = (view: RepoView, issue: Issue, side: SideState) => {
      const errors = side.errors ?? {}
      const editor = mayEdit(view, issue)
        ? html`<details class="details-reset mb-2"${errors.title === undefined ? empty : html` open`} data-testid="edit-title">
  <summary class="btn btn-sm">Edit title</summary>
  ${sideForm(
    view,
    issue,
    "title",
    field(
      {
        name: "title",
        label: "Title",
        value: side.form?.get("title") ?? issue.title,
        required: true,
        autocomplete: "off"
      },
      errors
    ),
    html`<button class="btn btn-sm btn-primary" type="submit">Save</button>`
  )}
</details>`
        : empty
      return html`<div class="d-flex flex-items-center flex-wrap mb-2">
  <h1 class="h2 flex-auto wb-break-word" data-testid="issue-title">${issue.title} <span class="color-fg-muted">#${issue.number}</span></h1>
  ${view.ctx.viewer === undefined ? empty : html`<a class="btn btn-sm btn-primary" href="${view.base}/issues/new">New issue</a>`}
</div>
${editor}`
    }

    const issuePage = (view: RepoView, issue: Issue, state: PageState = {}) =>
      Effect.gen(function* () {
        const index = String(issue.number)
        const [timeline, reactions, data] = yield* Effect.all(
          [
            issues.timeline(view, index, undefined, undefined, undefined),
            extras.allReactions(view, index),
            sidebarData(view, issue)
          ],
          { concurrency: "unbounded" }
        )
        const none: ReadonlyArray<Reaction> = []
        // Every text of the page rendered at once: one look-up of its mentions and references for
        // all of them (not two queries per comment), the HTML kept per comment version.
        const comments = timeline.rows.filter((event) => event.type === "comment")
        const texts = yield* markdown.renderMany(
          [
            { text: issue.body, cacheKey: `issue-${issue.id}-${issue.updated_at}` },
            ...comments.map((event) => ({ text: event.body, cacheKey: `comment-${event.id}-${event.updated_at}` }))
          ],
          { mode: "comment", context: view.base, viewer: view.caller?.user }
        )
        const bodyOf = (text: string, out: string | undefined) =>
          out === undefined
            ? html`<pre class="hearth-commit-message">${text}</pre>`
            : html`<div class="markdown-body">${raw(out)}</div>`
        const renderedById = new Map(comments.map((event, i) => [event.id, texts[i + 1]]))
        const items = timeline.rows.map((event) => {
          if (event.type !== "comment") return eventLine(event) ?? empty
          const body =
            event.body === ""
              ? html`<p class="color-fg-muted">No description.</p>`
              : bodyOf(event.body, renderedById.get(event.id))
          return commentBox(
            view,
            issue,
            { who: event.user.login, at: event.created_at, id: event.id },
            body,
            reactions.comments.get(event.id) ?? none,
            textEditor(view, issue, { id: event.id, poster: event.user.id, text: event.body }, state.edit)
          )
        })
        const description =
          issue.body === ""
            ? html`<p class="color-fg-muted">No description provided.</p>`
            : bodyOf(issue.body, texts[0])
        const open = issue.state === "open"
        return yield* frame.page(
          view,
          {
            title: title(view, `${issue.title} #${issue.number}`),
            tab: "issues",
            ...(state.status === undefined ? {} : { status: state.status })
          },
          html`${titleBlock(view, issue, state.side ?? {})}
<p class="mb-3 pb-3 border-bottom">
  <span class="State ${open ? "State--open" : "State--merged"} mr-2" data-testid="issue-state">${icon(open ? "issue-opened" : "issue-closed")} ${open ? "Open" : "Closed"}</span>
  ${user(issue.user.login)} opened this issue ${when(issue.created_at)} · ${issue.comments} comment${issue.comments === 1 ? "" : "s"}
</p>
${formError(state.side?.message)}
<div class="d-flex flex-wrap">
  <div class="flex-auto col-12 col-md-9 pr-md-3">
    ${commentBox(
      view,
      issue,
      { who: issue.user.login, at: issue.created_at, id: undefined },
      description,
      reactions.issue,
      textEditor(view, issue, { id: undefined, poster: issue.user.id, text: issue.body }, state.edit)
    )}
    <div data-testid="timeline">${items}</div>
    ${commentForm(view, issue, state.typed ?? {}, state.errors ?? {}, state.message)}
  </div>
  ${sidebar(view, issue, data, state.side ?? {})}
</div>`
        )
      })

    // ---- A new issue -----------------------------------------------------------------------

    /** A YAML form's fields, with what was typed. */
    const formFields = (template: IssueTemplate, form: URLSearchParams | undefined, errors: FieldErrors) =>
      template.body.map((f, i) => {
        const name = fieldName(f, i)
        const label = attr(f, "label")
        const required = f.validations.required === true
        switch (f.type) {
          case "markdown":
            return html`<div class="mb-3" data-testid="form-markdown">${attr(f, "value")}</div>`
          case "input":
            return field({ name, label, value: form?.get(name) ?? attr(f, "value"), required, ...hintOf(f) }, errors)
          case "textarea":
            return textArea(
              { name, label, value: form?.get(name) ?? attr(f, "value"), rows: 5, required, ...hintOf(f) },
              errors
            )
          case "dropdown": {
            const options = Array.isArray(f.attributes.options)
              ? (f.attributes.options as Array<unknown>).map(String)
              : []
            const chosen = form?.getAll(name) ?? []
            return html`<div class="form-group"><div class="form-group-header"><label for="field-${name}">${label}</label></div>
  <div class="form-group-body"><select class="form-select" id="field-${name}" name="${name}"${f.attributes.multiple === true ? html` multiple` : empty}${required ? html` required` : empty}>
    ${options.map((o) => html`<option value="${o}"${chosen.includes(o) ? html` selected` : empty}>${o}</option>`)}
  </select></div></div>`
          }
          case "checkboxes": {
            const options = Array.isArray(f.attributes.options)
              ? (f.attributes.options as Array<{ label?: unknown }>)
              : []
            return html`<fieldset class="form-group"><legend class="text-bold mb-1">${label}</legend>${options.map(
              (o, j) =>
                html`<div class="form-checkbox my-1"><label><input type="checkbox" name="${name}-${j}"${
                  form?.get(`${name}-${j}`) === "on" ? html` checked` : empty
                }> ${typeof o.label === "string" ? o.label : ""}</label></div>`
            )}</fieldset>`
          }
          default:
            return empty
        }
      })

    /**
     * The new issue's labels, milestone and assignees, for writers (Forgejo's `ValidateRepoMetas`
     * takes them from writers only, and so does the service): the template's `labels` and
     * `assignees` preselected (names, matched as Forgejo does, case-insensitively).
     */
    const newIssueMeta = (view: RepoView, template: IssueTemplate | undefined, form: URLSearchParams | undefined) =>
      Effect.gen(function* () {
        if (!isWriter(view)) return empty
        const [labels, milestones, candidates] = yield* Effect.all(
          [
            labelsOf(view),
            Effect.map(issues.listMilestones(view, "open", undefined, undefined), (m) => m.rows),
            assignable(view, [])
          ],
          { concurrency: "unbounded" }
        )
        const lower = (names: ReadonlyArray<string>) => names.map((n) => n.toLowerCase())
        const wantedLabels = lower(template?.labels ?? [])
        const wantedPeople = lower(template?.assignees ?? [])
        const sent = form?.has("meta-sent") === true
        const chosenLabels = sent
          ? form!.getAll("label")
          : labels.filter((l) => wantedLabels.includes(l.name.toLowerCase())).map((l) => String(l.id))
        const chosenPeople = sent
          ? form!.getAll("assignee")
          : candidates.filter((c) => wantedPeople.includes(c.toLowerCase()))
        return html`<input type="hidden" name="meta-sent" value="1">
<fieldset class="form-group" data-testid="new-issue-labels"><legend class="text-bold mb-1">Labels</legend>${
          labels.length === 0
            ? html`<p class="color-fg-muted">No labels yet.</p>`
            : labels.map((l) =>
                checkbox({
                  name: "label",
                  value: String(l.id),
                  label: l.name,
                  checked: chosenLabels.includes(String(l.id)),
                  id: `label-${l.id}`
                })
              )
        }</fieldset>
${select(
  {
    name: "milestone",
    label: "Milestone",
    value: form?.get("milestone") ?? "0",
    choices: [["0", "No milestone"], ...milestones.map((m) => [String(m.id), m.title] as const)]
  },
  {}
)}
<fieldset class="form-group" data-testid="new-issue-assignees"><legend class="text-bold mb-1">Assignees</legend>${candidates.map(
          (login) =>
            checkbox({
              name: "assignee",
              value: login,
              label: login,
              checked: chosenPeople.includes(login),
              id: `assignee-${login}`
            })
        )}</fieldset>`
      })

    const newIssuePage = (
      view: RepoView,
      template: IssueTemplate | undefined,
      state: {
        readonly form?: URLSearchParams
        readonly errors?: FieldErrors
        readonly message?: string
        readonly status?: number
      } = {}
    ) =>
      Effect.gen(function* () {
        const form = state.form
        const errors = state.errors ?? {}
        const isForm = template !== undefined && template.body.length > 0
        const action = `${view.base}/issues/new${template === undefined ? "" : `?template=${encodeURIComponent(template.file_name)}`}`
        const meta = yield* newIssueMeta(view, template, form)
        return yield* frame.page(
          view,
          {
            title: title(view, "New issue"),
            tab: "issues",
            ...(state.status === undefined ? {} : { status: state.status })
          },
          html`<div class="container-md">
<h1 class="h2 mb-3">New issue</h1>
${template === undefined ? empty : html`<p class="color-fg-muted mb-3" data-testid="template-about">${template.name}${template.about === "" ? empty : html` — ${template.about}`}</p>`}
${formError(state.message)}
<form method="post" action="${action}" data-testid="new-issue-form">
  ${csrfField(view.ctx)}
  ${template === undefined || template.ref === "" ? empty : html`<input type="hidden" name="ref" value="${template.ref}">`}
  ${field({ name: "title", label: "Title", value: form?.get("title") ?? template?.title ?? "", required: true, autocomplete: "off" }, errors)}
  ${
    isForm
      ? formFields(template, form, errors)
      : textArea(
          {
            name: "content",
            label: "Description",
            value: form?.get("content") ?? template?.content ?? "",
            rows: 10,
            hint: "Markdown."
          },
          errors
        )
  }
  ${meta}
  <button class="btn btn-primary" type="submit">Create issue</button>
</form>
</div>`
        )
      })

    /** The chooser of the repository's templates (Forgejo's `/issues/new/choose`). */
    const choosePage = (view: RepoView, list: ReadonlyArray<IssueTemplate>) =>
      frame.page(
        view,
        { title: title(view, "New issue"), tab: "issues" },
        html`<div class="container-md">
<h1 class="h2 mb-3">New issue</h1>
<ul class="Box" data-testid="template-list">
  ${list.map(
    (
      t
    ) => html`<li class="Box-row d-flex flex-items-center"><div class="flex-auto"><strong>${t.name}</strong><p class="color-fg-muted mb-0">${t.about}</p></div>
    <a class="btn btn-primary btn-sm" href="${view.base}/issues/new?template=${encodeURIComponent(t.file_name)}">Get started</a></li>`
  )}
  <li class="Box-row"><a href="${view.base}/issues/new?template=" data-testid="blank-issue">Open a blank issue</a></li>
</ul>
</div>`
      )

    /** The template of `?template=`: undefined for none (blank), null when the file is not a template. */
    const templateOf = (view: RepoView) =>
      Effect.gen(function* () {
        const name = view.ctx.url.searchParams.get("template")
        const list = yield* templates.templates(view)
        if (name === null) return { list, chosen: undefined as IssueTemplate | undefined, asked: false }
        return { list, chosen: list.find((t) => t.file_name === name), asked: true }
      })

    /** The issue of the URL (`/issues/{index}`); none for what the viewer may not see. */
    const issueOf = (view: RepoView) =>
      Effect.gen(function* () {
        const index = view.rest[1] ?? ""
        if (!/^\d+$/.test(index)) return undefined
        const found = yield* Effect.option(issues.get(view, index))
        return Option.getOrUndefined(found)
      })

    /** Where an edit sends one back: the issue, or the pull request (same services, its own page). */
    const backTo = (view: RepoView, issue: Issue) =>
      issue.pull_request === null ? issueUrl(view, issue.number) : `${view.base}/pulls/${issue.number}`

    /**
     * A sidebar edit (`POST /issues/{index}/{suffix}`): the refusals every edit shares (the 404 page
     * for what one may not see, 423 in an archived repository, 403 for one who may see but not
     * change it), then `act` through the API's services. A refusal of the input shows the page again
     * with the message next to the field (`key`), what was typed kept, nothing changed.
     */
    const editRoute = (
      suffix: string,
      what: string,
      may: (view: RepoView, issue: Issue) => boolean,
      key: string | undefined,
      act: (view: RepoView, issue: Issue, form: URLSearchParams) => Effect.Effect<string | undefined, Errors.ApiError>
    ) =>
      frame.route("POST", `/:owner/:repo/issues/:index/${suffix}`, { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, what)
          if (refusal !== undefined) return refusal
          const issue = yield* issueOf(view)
          if (issue === undefined) return web.notFound(view.ctx)
          if (!may(view, issue)) {
            return web.errorPage(view.ctx, 403, "Forbidden", `Only the repository's writers may ${what}.`)
          }
          const result = yield* Effect.result(act(view, issue, form))
          if (result._tag === "Success" && result.success === undefined)
            return web.redirect(view.ctx, backTo(view, issue))
          if (result._tag === "Failure" && result.failure instanceof Errors.NotFound) return web.notFound(view.ctx)
          const message =
            result._tag === "Success" ? result.success! : (result.failure.message ?? "The change could not be made.")
          const status = result._tag === "Success" ? 422 : (Errors.statusOf(result.failure) ?? 400)
          if (issue.pull_request !== null) return web.errorPage(view.ctx, status, "Not changed", message)
          const fresh = yield* issues.get(view, String(issue.number))
          return yield* issuePage(view, fresh, {
            status,
            side: key === undefined ? { form, message } : { form, errors: { [key]: message } }
          })
        })
      )

    const writerOnly = (view: RepoView) => isWriter(view)
    const index = (issue: Issue) => String(issue.number)

    /** A reaction toggled by form (`react`/`unreact`); htmx gets the bar back, a form a redirect. */
    const reactRoute = (path: string, onOf: (view: RepoView, issue: Issue) => ReactionOn | undefined) =>
      frame.route("POST", path, { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const verb = view.rest.at(-1)
          if (verb !== "react" && verb !== "unreact") return web.notFound(view.ctx)
          const issue = yield* issueOfReaction(view)
          if (issue === undefined) return web.notFound(view.ctx)
          const on = onOf(view, issue)
          if (on === undefined) return web.notFound(view.ctx)
          const content = form.get("content") ?? ""
          const target = "index" in on ? { index: String(on.index) } : { commentId: String(on.commentId) }
          const result = yield* Effect.result(extras.react(view, target, content, verb === "react"))
          if (result._tag === "Failure") {
            const failure = result.failure
            if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            return web.errorPage(
              view.ctx,
              Errors.statusOf(failure) ?? 400,
              "Not changed",
              failure.message ?? "The reaction could not be changed."
            )
          }
          if (view.ctx.request.headers["hx-request"] === "true") {
            const all = yield* extras.allReactions(view, index(issue))
            const list = "index" in on ? all.issue : (all.comments.get(on.commentId) ?? [])
            return frame.fragment(view.ctx, reactionBar(view, issue, on, list))
          }
          return web.redirect(
            view.ctx,
            `${backTo(view, issue)}#${"index" in on ? "issue-body" : `issuecomment-${on.commentId}`}`
          )
        })
      )

    /** The issue of `/issues/{index}/…` or of the comment of `/comments/{id}/…`. */
    const issueOfReaction = (view: RepoView) =>
      Effect.gen(function* () {
        if (view.rest[0] === "issues") return yield* issueOf(view)
        const id = view.rest[1] ?? ""
        if (!/^\d+$/.test(id)) return undefined
        const comment = yield* Effect.option(issues.getComment(view, id))
        if (Option.isNone(comment) || comment.value === undefined) return undefined
        const number = /\/issues\/(\d+)$/.exec(comment.value.issue_url)?.[1]
        if (number === undefined) return undefined
        return Option.getOrUndefined(yield* Effect.option(issues.get(view, number)))
      })

    const sidebarRoutes = [
      editRoute("labels", "change the labels", writerOnly, "label", (view, issue, form) =>
        Effect.gen(function* () {
          const wanted = form.getAll("label")
          const known = yield* labelsOf(view)
          const unknown = wanted.filter((id) => !known.some((l) => String(l.id) === id))
          if (unknown.length > 0) return `No such label here: ${unknown.join(", ")}.`
          yield* issues.changeIssueLabels(view, index(issue), "replace", wanted.map(Number), undefined)
          return undefined
        })
      ),
      editRoute("milestone", "change the milestone", writerOnly, "milestone", (view, issue, form) =>
        Effect.gen(function* () {
          const raw = (form.get("milestone") ?? "").trim()
          if (!/^\d{1,15}$/.test(raw)) return "Choose a milestone of this repository."
          const result = yield* Effect.result(issues.edit(view, index(issue), { milestone: Number(raw) }))
          if (result._tag === "Failure") {
            // The service's words (`milestone does not exist [id: …]`) are for API clients.
            if (result.failure instanceof Errors.ValidationFailed) return "Choose a milestone of this repository."
            return yield* Effect.fail(result.failure)
          }
          return undefined
        })
      ),
      editRoute("assignees", "assign people", writerOnly, "assignee", (view, issue, form) =>
        Effect.gen(function* () {
          const wanted = form.getAll("assignee").filter((s) => s !== "")
          const result = yield* Effect.result(issues.edit(view, index(issue), { assignees: wanted }))
          if (result._tag === "Failure") {
            if (result.failure instanceof Errors.ValidationFailed) {
              return `Only people with write access to the repository may be assigned: ${wanted.join(", ")}.`
            }
            return yield* Effect.fail(result.failure)
          }
          return undefined
        })
      ),
      editRoute("deadline", "set the due date", writerOnly, "due_date", (view, issue, form) =>
        Effect.gen(function* () {
          if (form.get("action") === "clear") {
            yield* issues.setDeadline(view, index(issue), null)
            return undefined
          }
          const raw = (form.get("due_date") ?? "").trim()
          const date = /^\d{4}-\d{2}-\d{2}$/.test(raw) ? new Date(`${raw}T00:00:00Z`) : undefined
          if (date === undefined || Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== raw) {
            return "Give a date as YYYY-MM-DD."
          }
          yield* issues.setDeadline(view, index(issue), `${raw}T00:00:00Z`)
          return undefined
        })
      ),
      editRoute("lock", "lock the conversation", writerOnly, "reason", (view, issue, form) =>
        Effect.gen(function* () {
          const reason = form.get("reason") ?? ""
          if (reason !== "" && !LOCK_REASONS.includes(reason)) return `Choose one of: ${LOCK_REASONS.join(", ")}.`
          if (issue.is_locked) return "The conversation is locked already."
          yield* extras.lock(view, index(issue), reason)
          return undefined
        })
      ),
      editRoute("unlock", "unlock the conversation", writerOnly, undefined, (view, issue) =>
        Effect.gen(function* () {
          if (!issue.is_locked) return "The conversation is not locked."
          yield* extras.unlock(view, index(issue))
          return undefined
        })
      ),
      // Forgejo's IssuePinOrUnpin: the pin toggles; repository admins only (the API's rule).
      editRoute("pin", "pin issues", isRepoAdmin, "pin", (view, issue) =>
        Effect.as(issue.pin_order > 0 ? extras.unpin(view, index(issue)) : extras.pin(view, index(issue)), undefined)
      ),
      // Forgejo's IssueWatch: any signed-in reader, for themselves.
      editRoute(
        "watch",
        "subscribe",
        () => true,
        undefined,
        (view, issue, form) =>
          Effect.as(
            extras.setSubscription(view, index(issue), view.caller!.user.name, form.get("watch") === "true"),
            undefined
          )
      ),
      editRoute("title", "change the title", mayEdit, "title", (view, issue, form) =>
        Effect.gen(function* () {
          const text = (form.get("title") ?? "").trim()
          if (text === "") return "Give the issue a title."
          yield* issues.edit(view, index(issue), { title: text })
          return undefined
        })
      ),
      editRoute("content", "edit the description", mayEdit, undefined, (view, issue, form) =>
        Effect.as(issues.edit(view, index(issue), { body: form.get("content") ?? "" }), undefined)
      ),
      // Forgejo's UpdateCommentContent: the comment's poster or a writer (the service's rule).
      frame.route("POST", "/:owner/:repo/comments/:id", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, "edit comments")
          if (refusal !== undefined) return refusal
          const issue = yield* issueOfReaction(view)
          const id = view.rest[1] ?? ""
          if (issue === undefined) return web.notFound(view.ctx)
          const content = form.get("content") ?? ""
          const key = `comment-${id}`
          if (content.trim() === "") {
            if (issue.pull_request !== null)
              return web.errorPage(view.ctx, 422, "Not changed", "Write something first.")
            return yield* issuePage(view, issue, {
              status: 422,
              edit: { key, value: content, message: "Write something first." }
            })
          }
          const result = yield* Effect.result(issues.editComment(view, id, content, undefined))
          if (result._tag === "Failure") {
            const failure = result.failure
            if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            const status = Errors.statusOf(failure) ?? 400
            if (status === 403) {
              return web.errorPage(view.ctx, 403, "Forbidden", "Only the comment's poster and the writers may edit it.")
            }
            if (issue.pull_request !== null)
              return web.errorPage(view.ctx, status, "Not changed", failure.message ?? "")
            return yield* issuePage(view, issue, {
              status,
              edit: { key, value: content, message: failure.message ?? "The comment could not be saved." }
            })
          }
          return web.redirect(view.ctx, `${backTo(view, issue)}#issuecomment-${id}`)
        })
      ),
      reactRoute("/:owner/:repo/issues/:index/reactions/:action", (_view, issue) => ({ index: issue.number })),
      reactRoute("/:owner/:repo/comments/:id/reactions/:action", (view) => {
        const id = Number(view.rest[1])
        return Number.isSafeInteger(id) ? { commentId: id } : undefined
      })
    ]

    const routes = [
      ...sidebarRoutes,
      frame.route("GET", "/:owner/:repo/issues", { rule: READ }, (view) => listPage(view)),
      frame.route("GET", "/:owner/:repo/issues/new", { access: "signed-in", rule: READ }, (view) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, "open issues")
          if (refusal !== undefined) return refusal
          const { list, chosen, asked } = yield* templateOf(view)
          if (!asked && list.length > 0) return yield* choosePage(view, list)
          return yield* newIssuePage(view, chosen)
        })
      ),
      frame.route("POST", "/:owner/:repo/issues/new", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, "open issues")
          if (refusal !== undefined) return refusal
          const { chosen } = yield* templateOf(view)
          const titleText = (form.get("title") ?? "").trim()
          if (titleText === "") {
            return yield* newIssuePage(view, chosen, {
              form,
              errors: { title: "Give the issue a title." },
              status: 422
            })
          }
          const body =
            chosen !== undefined && chosen.body.length > 0 ? formBody(chosen, form) : (form.get("content") ?? "")
          // Labels, milestone and assignees are the writers' (the service drops anyone else's).
          const writer = isWriter(view)
          const labelIds = writer ? form.getAll("label") : []
          if (labelIds.length > 0) {
            const known = yield* labelsOf(view)
            const unknown = labelIds.filter((id) => !known.some((l) => String(l.id) === id))
            if (unknown.length > 0) {
              return yield* newIssuePage(view, chosen, {
                form,
                message: `No such label here: ${unknown.join(", ")}.`,
                status: 422
              })
            }
          }
          const milestone = writer && /^\d{1,15}$/.test(form.get("milestone") ?? "") ? Number(form.get("milestone")) : 0
          const ref = form.get("ref") ?? ""
          const result = yield* Effect.result(
            issues.create(view, {
              title: titleText,
              body,
              ...(ref === "" ? {} : { ref }),
              ...(labelIds.length === 0 ? {} : { labels: labelIds.map(Number) }),
              ...(milestone === 0 ? {} : { milestone }),
              ...(writer ? { assignees: form.getAll("assignee").filter((a) => a !== "") } : {})
            })
          )
          if (result._tag === "Failure") {
            const failure = result.failure
            return yield* newIssuePage(view, chosen, {
              form,
              message: failure.message ?? "The issue could not be created.",
              status: Errors.statusOf(failure) ?? 400
            })
          }
          return web.redirect(view.ctx, issueUrl(view, result.success.number))
        })
      ),
      frame.route("GET", "/:owner/:repo/issues/:index", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const issue = yield* issueOf(view)
          if (issue === undefined) return web.notFound(view.ctx)
          if (issue.pull_request !== null) return web.redirect(view.ctx, `${view.base}/pulls/${issue.number}`)
          return yield* issuePage(view, issue)
        })
      ),
      frame.route("POST", "/:owner/:repo/issues/:index/comments", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refusalPage(web, view, WRITE, "comment")
          if (refusal !== undefined) return refusal
          const issue = yield* issueOf(view)
          if (issue === undefined) return web.notFound(view.ctx)
          if (issue.pull_request !== null) return web.redirect(view.ctx, `${view.base}/pulls/${issue.number}`)
          const index = String(issue.number)
          const content = form.get("content") ?? ""
          const status = form.get("status") ?? ""
          const change = status === "close" ? "closed" : status === "reopen" ? "open" : undefined
          if (content.trim() === "" && change === undefined) {
            return yield* issuePage(view, issue, {
              typed: { content },
              errors: { content: "Write a comment first." },
              status: 422
            })
          }
          // Closing and reopening are the poster's and the writers' (the API's rule for `state`):
          // refused before anything is written, the comment kept in the form.
          if (change !== undefined && !(isWriter(view) || isPoster(view.caller, { posterId: issue.user.id }))) {
            return yield* issuePage(view, issue, {
              typed: { content },
              message: "Only the issue's poster and the repository's writers may close or reopen it.",
              status: 403
            })
          }
          // The comment first, then the state (Forgejo's NewComment: "Close with comment").
          const result = yield* Effect.result(
            Effect.gen(function* () {
              if (content.trim() !== "") yield* issues.createComment(view, index, content, undefined)
              if (change !== undefined && change !== issue.state) yield* issues.edit(view, index, { state: change })
            })
          )
          if (result._tag === "Failure") {
            const failure = result.failure
            if (failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            const status = Errors.statusOf(failure) ?? 400
            const words = failure.message ?? "The comment could not be saved."
            const fresh = yield* issues.get(view, index)
            return yield* issuePage(view, fresh, { typed: { content }, message: words, status })
          }
          return web.redirect(view.ctx, issueUrl(view, issue.number))
        })
      ),
      // The preview of the comment form (htmx): the markdown sent, as this repository renders it.
      frame.route("POST", "/:owner/:repo/markup", { rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const text = form.get("content") ?? form.get("text") ?? ""
          if (text.trim() === "")
            return frame.fragment(
              view.ctx,
              html`<div class="Box p-2"><p class="color-fg-muted">Nothing to preview.</p></div>`
            )
          return frame.fragment(view.ctx, html`<div class="Box p-2">${yield* rendered(view, text)}</div>`)
        })
      )
    ]
    return { routes, listPage, eventLine, commentBox, rendered }
  })

export const RepoIssuesPages = (web: Web, frame: RepoFrame) =>
  Effect.map(makeIssueParts(web, frame), (parts) => parts.routes)

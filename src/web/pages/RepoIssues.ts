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
import { IssueExtras } from "../../issues/Extras.ts"
import { isPoster, isWriter } from "../../issues/Policy.ts"
import type { Issue, Label, TimelineComment } from "../../issues/Schema.ts"
import { IssuesService } from "../../issues/Service.ts"
import { type IssueFormField, type IssueTemplate, IssueTemplates } from "../../issues/Templates.ts"
import { MarkdownRenderer } from "../../markdown/Service.ts"
import { UsersRepo } from "../../users/Repo.ts"
import { type FieldErrors, field, formError, textArea } from "../Form.ts"
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

    /** Reaction counts (`+1 2 · heart 1`). */
    const reactionCounts = (reactions: ReadonlyArray<Reaction>) => {
      if (reactions.length === 0) return empty
      const counts = new Map<string, number>()
      for (const r of reactions) counts.set(r.content, (counts.get(r.content) ?? 0) + 1)
      return html`<div class="mt-2" data-testid="reactions">${[...counts].map(
        ([content, n]) =>
          html`<span class="Label mr-1" data-testid="reaction">${content} <span class="Counter">${n}</span></span>`
      )}</div>`
    }

    const commentBox = (who: string, at: string, body: Html, reactions: ReadonlyArray<Reaction>, id: string) =>
      html`<div class="Box mb-3" id="${id}" data-testid="comment">
  <div class="Box-header py-2 f6">${user(who)} <span class="color-fg-muted">commented ${when(at)}</span></div>
  <div class="Box-body">${body}${reactionCounts(reactions)}</div>
</div>`

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
        case "modified_deadline":
        case "removed_deadline":
          return line("calendar", html`changed the due date`)
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

    const issuePage = (
      view: RepoView,
      issue: Issue,
      state: {
        readonly typed?: Typed
        readonly errors?: FieldErrors
        readonly message?: string
        readonly status?: number
      } = {}
    ) =>
      Effect.gen(function* () {
        const index = String(issue.number)
        const [timeline, reactions] = yield* Effect.all([
          issues.timeline(view, index, undefined, undefined, undefined),
          extras.issueReactions(view, index, undefined)
        ])
        const items = yield* Effect.forEach(timeline.rows, (event) =>
          Effect.gen(function* () {
            if (event.type === "comment") {
              const [body, own] = yield* Effect.all([
                event.body === ""
                  ? Effect.succeed(html`<p class="color-fg-muted">No description.</p>`)
                  : rendered(view, event.body),
                Effect.orElseSucceed(
                  extras.commentReactions(view, String(event.id)),
                  () => [] as ReadonlyArray<Reaction>
                )
              ])
              return commentBox(event.user.login, event.created_at, body, own, `issuecomment-${event.id}`)
            }
            return eventLine(event) ?? empty
          })
        )
        const description =
          issue.body === ""
            ? html`<p class="color-fg-muted">No description provided.</p>`
            : yield* rendered(view, issue.body)
        const open = issue.state === "open"
        return yield* frame.page(
          view,
          {
            title: title(view, `${issue.title} #${issue.number}`),
            tab: "issues",
            ...(state.status === undefined ? {} : { status: state.status })
          },
          html`<div class="d-flex flex-items-center flex-wrap mb-2">
  <h1 class="h2 flex-auto wb-break-word" data-testid="issue-title">${issue.title} <span class="color-fg-muted">#${issue.number}</span></h1>
  ${view.ctx.viewer === undefined ? empty : html`<a class="btn btn-sm btn-primary" href="${view.base}/issues/new">New issue</a>`}
</div>
<p class="mb-3 pb-3 border-bottom">
  <span class="State ${open ? "State--open" : "State--merged"} mr-2" data-testid="issue-state">${icon(open ? "issue-opened" : "issue-closed")} ${open ? "Open" : "Closed"}</span>
  ${user(issue.user.login)} opened this issue ${when(issue.created_at)} · ${issue.comments} comment${issue.comments === 1 ? "" : "s"}
</p>
<div class="d-flex flex-wrap">
  <div class="flex-auto col-12 col-md-9 pr-md-3">
    ${commentBox(issue.user.login, issue.created_at, description, reactions.rows, "issue-body")}
    <div data-testid="timeline">${items}</div>
    ${commentForm(view, issue, state.typed ?? {}, state.errors ?? {}, state.message)}
  </div>
  <aside class="col-12 col-md-3 f6" data-testid="issue-sidebar">
    <h2 class="h6 color-fg-muted mb-1">Labels</h2>
    <p class="mb-3" data-testid="issue-labels">${issue.labels.length === 0 ? "None yet" : issue.labels.map((l) => labelChip(l, `${view.base}/issues?labels=${l.id}`))}</p>
    <h2 class="h6 color-fg-muted mb-1">Milestone</h2>
    <p class="mb-3" data-testid="issue-milestone">${issue.milestone === null ? "No milestone" : issue.milestone.title}</p>
    <h2 class="h6 color-fg-muted mb-1">Assignees</h2>
    <p class="mb-3" data-testid="issue-assignees">${
      (issue.assignees ?? []).length === 0 ? "No one" : (issue.assignees ?? []).map((a) => html`${user(a.login)} `)
    }</p>
  </aside>
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

    const newIssuePage = (
      view: RepoView,
      template: IssueTemplate | undefined,
      state: {
        readonly form?: URLSearchParams
        readonly errors?: FieldErrors
        readonly message?: string
        readonly status?: number
      } = {}
    ) => {
      const form = state.form
      const errors = state.errors ?? {}
      const isForm = template !== undefined && template.body.length > 0
      const action = `${view.base}/issues/new${template === undefined ? "" : `?template=${encodeURIComponent(template.file_name)}`}`
      return frame.page(
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
  <button class="btn btn-primary" type="submit">Create issue</button>
</form>
</div>`
      )
    }

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

    const routes = [
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
          const result = yield* Effect.result(issues.create(view, { title: titleText, body }))
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
    return { routes, listPage, eventLine, commentBox, reactionCounts, rendered }
  })

export const RepoIssuesPages = (web: Web, frame: RepoFrame) =>
  Effect.map(makeIssueParts(web, frame), (parts) => parts.routes)

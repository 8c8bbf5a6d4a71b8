// A repository's milestones in the browser (Forgejo's routers/web/repo/milestone.go,
// templates/repo/issue/milestones.tmpl, milestone_new.tmpl): `/{owner}/{repo}/milestones` lists the
// open or closed ones (`?state=`) with their progress from the issue counts, and for writers
// `/milestones/new`, `/milestones/{id}/edit`, `POST /milestones/{id}/close|open` and
// `POST /milestones/delete` (the id a form field, as Forgejo). Every change goes through
// IssuesService, the API's service; the form's own checks are Forgejo's `CreateMilestoneForm`
// bindings (`Required;MaxSize(50)` on the title) and its due date rule (`yyyy-mm-dd`, the end of
// that day), in Forgejo's words next to the field, with what was typed kept.
//
// Access, as the API's milestone routes: reading needs read on the repository; changes need write
// (403 page for a reader, 404 for one who may not see the repository).
import { Effect, Option } from "effect"
import type { RepoRule } from "../../http/Access.ts"
import { isWriter } from "../../issues/Policy.ts"
import type { Milestone } from "../../issues/Schema.ts"
import { IssuesService } from "../../issues/Service.ts"
import { type FieldErrors, field, formError, textArea } from "../Form.ts"
import { empty, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import { when } from "../RepoViews.ts"
import type { Form, Web } from "../Web.ts"
import { pageOf, pager } from "./Explore.ts"

const READ: RepoRule = { role: "read" }
const WRITE: RepoRule = { role: "write" }

/** Forgejo's `CreateMilestoneForm`: `Title binding:"Required;MaxSize(50)"`. */
export const MILESTONE_TITLE_MAX = 50
/** Milestones on a page of the list (Forgejo's web default). */
export const MILESTONES_PAGE_SIZE = 10

interface Typed {
  readonly title: string
  readonly content: string
  readonly deadline: string
}

const typedOf = (form: Form): Typed => ({
  title: form.get("title") ?? "",
  content: form.get("content") ?? "",
  deadline: (form.get("deadline") ?? "").trim()
})

/** A valid calendar day `yyyy-mm-dd`. */
const isDay = (raw: string) => {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(raw)) return false
  const date = new Date(`${raw}T00:00:00Z`)
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === raw
}

/** The form binding's checks and the due date's, in Forgejo's words. */
const checkTyped = (typed: Typed): FieldErrors => {
  const errors: Record<string, string> = {}
  const title = typed.title.trim()
  if (title === "") errors.title = "Title cannot be empty."
  else if ([...title].length > MILESTONE_TITLE_MAX)
    errors.title = `Title must contain at most ${MILESTONE_TITLE_MAX} characters.`
  if (typed.deadline !== "" && !isDay(typed.deadline)) errors.deadline = "Due date format must be 'yyyy-mm-dd'."
  return errors
}

/** The due date as the service takes it: the end of that day (Forgejo: 23:59:59 of the day). */
const dueOn = (day: string) => (day === "" ? null : `${day}T23:59:59Z`)

export const RepoMilestonesPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService

    const refused = (view: RepoView) => refusalPage(web, view, WRITE, "change its milestones")
    const title = (view: RepoView, what: string) => `${what} · ${view.owner.name}/${view.repo.name}`

    const milestoneRow = (view: RepoView, m: Milestone, writer: boolean) => {
      const total = m.open_issues + m.closed_issues
      const percent = total === 0 ? 0 : Math.floor((m.closed_issues * 100) / total)
      const overdue = m.state === "open" && m.due_on !== null && Date.parse(m.due_on) < Date.now()
      return html`<li class="Box-row" data-testid="milestone" id="milestone-${m.id}">
  <div class="d-flex flex-wrap flex-items-center">
    <h2 class="h4 flex-auto wb-break-word" id="milestone-${m.id}-title" data-testid="milestone-title">${icon("milestone")} ${m.title}</h2>
    <span class="f6 color-fg-muted" data-testid="milestone-progress">${percent}% complete</span>
  </div>
  <progress class="width-full" max="${Math.max(total, 1)}" value="${m.closed_issues}" aria-labelledby="milestone-${m.id}-title"></progress>
  <p class="f6 color-fg-muted mb-1">
    <span data-testid="milestone-open">${m.open_issues} open</span> · <span data-testid="milestone-closed">${m.closed_issues} closed</span>
    ${
      m.due_on === null
        ? html`· No due date`
        : html`· <span class="${overdue ? "color-fg-danger" : ""}" data-testid="milestone-due">${overdue ? "Past due" : "Due"} ${when(m.due_on)}</span>`
    }
    ${m.state === "closed" && m.closed_at !== null ? html`· Closed ${when(m.closed_at)}` : empty}
  </p>
  ${m.description === "" ? empty : html`<p class="mb-1 wb-break-word" data-testid="milestone-description">${m.description}</p>`}
  ${
    writer
      ? html`<div class="d-flex flex-items-center flex-wrap mt-2">
    <a class="btn btn-sm mr-2" href="${view.base}/milestones/${m.id}/edit" data-testid="edit-milestone">${icon("pencil")} Edit</a>
    <form class="d-inline mr-2" method="post" action="${view.base}/milestones/${m.id}/${m.state === "open" ? "close" : "open"}">
      ${csrfField(view.ctx)}
      <button class="btn btn-sm" type="submit" data-testid="${m.state === "open" ? "close" : "open"}-milestone">${m.state === "open" ? "Close" : "Reopen"}</button>
    </form>
    <details class="details-reset" data-testid="delete-milestone">
      <summary class="btn btn-sm btn-danger">${icon("trash")} Delete</summary>
      <div class="Box Box--danger mt-2 p-3">
        <p>The milestone is removed from every issue and pull request in it.</p>
        <form method="post" action="${view.base}/milestones/delete">
          ${csrfField(view.ctx)}
          <input type="hidden" name="id" value="${m.id}">
          <button class="btn btn-danger" type="submit">Yes, delete this milestone</button>
        </form>
      </div>
    </details>
  </div>`
      : empty
  }
</li>`
    }

    const formPage = (
      view: RepoView,
      milestone: Milestone | undefined,
      typed: Typed,
      errors: FieldErrors,
      message?: string
    ) =>
      frame.page(
        view,
        {
          title: title(view, milestone === undefined ? "New milestone" : `Edit ${milestone.title}`),
          tab: "issues",
          ...(message !== undefined || Object.keys(errors).length > 0 ? { status: 422 } : {})
        },
        html`<div class="container-md">
<h1 class="h2 mb-3 wb-break-word">${milestone === undefined ? "New milestone" : html`Edit milestone ${milestone.title}`}</h1>
${formError(message)}
<form method="post" action="${view.base}/milestones/${milestone === undefined ? "new" : `${milestone.id}/edit`}" data-testid="milestone-form">
  ${csrfField(view.ctx)}
  ${field({ name: "title", label: "Title", value: typed.title, required: true, autocomplete: "off" }, errors)}
  ${textArea({ name: "content", label: "Description", value: typed.content, rows: 6 }, errors)}
  ${field(
    {
      name: "deadline",
      label: "Due date (optional)",
      type: "date",
      value: typed.deadline,
      hint:
        milestone === undefined
          ? "yyyy-mm-dd: the milestone is due at the end of that day."
          : "yyyy-mm-dd: the milestone is due at the end of that day. Left empty, the due date stays as it is."
    },
    errors
  )}
  <button class="btn btn-primary" type="submit">${milestone === undefined ? "Create milestone" : "Save milestone"}</button>
  <a class="btn ml-2" href="${view.base}/milestones">Cancel</a>
</form>
</div>`
      )

    /** The milestone of the URL's `{id}` (after `/milestones/`), numeric only. */
    const milestoneOfPath = (view: RepoView) =>
      Effect.gen(function* () {
        const id = view.rest[1] ?? ""
        if (!/^\d+$/.test(id)) return undefined
        return Option.getOrUndefined(yield* Effect.option(issues.getMilestone(view, id)))
      })

    const setState = (state: "open" | "closed") => (view: RepoView) =>
      Effect.gen(function* () {
        const refusal = refused(view)
        if (refusal !== undefined) return refusal
        const milestone = yield* milestoneOfPath(view)
        if (milestone === undefined) return web.notFound(view.ctx)
        yield* issues.editMilestone(view, String(milestone.id), { state })
        return web.redirect(view.ctx, `${view.base}/milestones${state === "closed" ? "?state=closed" : ""}`)
      })

    return [
      frame.route("GET", "/:owner/:repo/milestones", { rule: READ }, (view) =>
        Effect.gen(function* () {
          const state = view.ctx.url.searchParams.get("state") === "closed" ? "closed" : "open"
          const window = pageOf(view.ctx, MILESTONES_PAGE_SIZE)
          const [listed, open, closed] = yield* Effect.all([
            issues.listMilestones(view, state, undefined, window),
            issues.listMilestones(view, "open", undefined, { page: 1, limit: 1, offset: 0 }),
            issues.listMilestones(view, "closed", undefined, { page: 1, limit: 1, offset: 0 })
          ])
          const writer = isWriter(view)
          const stateLink = (s: "open" | "closed", n: number) =>
            html`<a class="btn-link mr-3${state === s ? " text-bold color-fg-default" : " color-fg-muted"}" href="${view.base}/milestones${s === "closed" ? "?state=closed" : ""}"${
              state === s ? html` aria-current="page"` : empty
            } data-testid="state-${s}">${n} ${s === "open" ? "Open" : "Closed"}</a>`
          return yield* frame.page(
            view,
            { title: title(view, "Milestones"), tab: "issues" },
            html`<div class="d-flex flex-items-center mb-3">
  <h1 class="h2 flex-auto">Milestones</h1>
  <a class="btn btn-sm mr-2" href="${view.base}/labels">${icon("tag")} Labels</a>
  ${writer ? html`<a class="btn btn-sm btn-primary" href="${view.base}/milestones/new" data-testid="new-milestone">New milestone</a>` : empty}
</div>
<div class="Box">
  <div class="Box-header">${stateLink("open", open.total)}${stateLink("closed", closed.total)}</div>
  ${
    listed.total === 0
      ? html`<div class="blankslate" data-testid="no-milestones"><p>There are no ${state} milestones.</p></div>`
      : html`<ul data-testid="milestone-list">${listed.rows.map((m) => milestoneRow(view, m, writer))}</ul>`
  }
</div>
${pager(view.ctx, window, listed.total)}`
          )
        })
      ),
      frame.route("GET", "/:owner/:repo/milestones/new", { access: "signed-in", rule: READ }, (view) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          return yield* formPage(view, undefined, { title: "", content: "", deadline: "" }, {})
        })
      ),
      frame.route("POST", "/:owner/:repo/milestones/new", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const typed = typedOf(form)
          const errors = checkTyped(typed)
          if (Object.keys(errors).length > 0) return yield* formPage(view, undefined, typed, errors)
          const result = yield* Effect.result(
            issues.createMilestone(view, {
              title: typed.title.trim(),
              description: typed.content,
              due_on: dueOn(typed.deadline)
            })
          )
          if (result._tag === "Failure")
            return yield* formPage(
              view,
              undefined,
              typed,
              {},
              result.failure.message ?? "The milestone could not be made."
            )
          return web.redirect(view.ctx, `${view.base}/milestones`)
        })
      ),
      frame.route("GET", "/:owner/:repo/milestones/:id/edit", { access: "signed-in", rule: READ }, (view) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const milestone = yield* milestoneOfPath(view)
          if (milestone === undefined) return web.notFound(view.ctx)
          return yield* formPage(
            view,
            milestone,
            { title: milestone.title, content: milestone.description, deadline: milestone.due_on?.slice(0, 10) ?? "" },
            {}
          )
        })
      ),
      frame.route("POST", "/:owner/:repo/milestones/:id/edit", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const milestone = yield* milestoneOfPath(view)
          if (milestone === undefined) return web.notFound(view.ctx)
          const typed = typedOf(form)
          const errors = checkTyped(typed)
          if (Object.keys(errors).length > 0) return yield* formPage(view, milestone, typed, errors)
          const result = yield* Effect.result(
            issues.editMilestone(view, String(milestone.id), {
              title: typed.title.trim(),
              description: typed.content,
              due_on: dueOn(typed.deadline)
            })
          )
          if (result._tag === "Failure")
            return yield* formPage(
              view,
              milestone,
              typed,
              {},
              result.failure.message ?? "The milestone could not be saved."
            )
          return web.redirect(view.ctx, `${view.base}/milestones${milestone.state === "closed" ? "?state=closed" : ""}`)
        })
      ),
      frame.route(
        "POST",
        "/:owner/:repo/milestones/:id/close",
        { access: "signed-in", rule: READ },
        setState("closed")
      ),
      frame.route("POST", "/:owner/:repo/milestones/:id/open", { access: "signed-in", rule: READ }, setState("open")),
      frame.route("POST", "/:owner/:repo/milestones/delete", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const id = form.get("id") ?? ""
          if (!/^\d+$/.test(id)) return web.notFound(view.ctx)
          const found = yield* Effect.option(issues.getMilestone(view, id))
          if (Option.isNone(found)) return web.notFound(view.ctx)
          yield* issues.deleteMilestone(view, id)
          return web.redirect(view.ctx, `${view.base}/milestones`)
        })
      )
    ]
  })

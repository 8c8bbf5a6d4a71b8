// A repository's labels in the browser (Forgejo's routers/web/repo/issue_label.go,
// templates/repo/issue/labels/*): `/{owner}/{repo}/labels` lists them (archived ones apart), and
// for writers `POST /labels/new`, `/labels/edit` and `/labels/delete` (Forgejo's paths, the label's
// id a form field) create, change and delete one. Every change goes through IssuesService, the
// API's service, with its rules (the colour's normalisation and check); the web form's own checks
// are Forgejo's `CreateLabelForm` bindings (`Required;MaxSize(50)` on the name, `Required` on the
// colour) with Forgejo's words, shown next to the field with what was typed kept.
//
// Access, as the API's label routes: reading needs read on the repository (no unit check, as
// Forgejo); changes need write on it (403 page for a reader, 404 for one who may not see it).
import { Effect, Option } from "effect"
import type { RepoRule } from "../../http/Access.ts"
import * as Errors from "../../http/Errors.ts"
import { isWriter } from "../../issues/Policy.ts"
import type { Label } from "../../issues/Schema.ts"
import { IssuesService } from "../../issues/Service.ts"
import { checkbox, type FieldErrors, field, formError } from "../Form.ts"
import { empty, type Html, html } from "../Html.ts"
import { icon } from "../Icons.ts"
import { csrfField } from "../Layout.ts"
import type { RepoFrame, RepoView } from "../RepoFrame.ts"
import { refusalPage } from "../RepoRefusal.ts"
import type { Form, Web } from "../Web.ts"

const READ: RepoRule = { role: "read" }
const WRITE: RepoRule = { role: "write" }

/** Forgejo's `CreateLabelForm`: `Title binding:"Required;MaxSize(50)"`. */
export const LABEL_NAME_MAX = 50

/** The label form's fields as typed. */
interface Typed {
  readonly title: string
  readonly color: string
  readonly description: string
  readonly exclusive: boolean
  readonly archived: boolean
}

/** A form being shown again after a refusal: which one (`new` or a label's id), what was typed, the errors. */
interface Shown {
  readonly form: string
  readonly typed: Typed
  readonly errors: FieldErrors
  readonly message?: string | undefined
}

const typedOf = (form: Form): Typed => ({
  title: form.get("title") ?? "",
  color: form.get("color") ?? "",
  description: form.get("description") ?? "",
  exclusive: form.get("exclusive") === "on",
  archived: form.get("archived") === "on"
})

/** The form binding's checks, in Forgejo's words (`form.require_error`, `form.max_size_error`). */
const checkTyped = (typed: Typed): FieldErrors => {
  const errors: Record<string, string> = {}
  const title = typed.title.trim()
  if (title === "") errors.title = "Label name cannot be empty."
  else if ([...title].length > LABEL_NAME_MAX)
    errors.title = `Label name must contain at most ${LABEL_NAME_MAX} characters.`
  if (typed.color.trim() === "") errors.color = "Color cannot be empty."
  return errors
}

/** A colour swatch: an SVG's `fill` (the CSP forbids inline styles). The colour is 6 hex digits. */
export const swatch = (color: string, size = 14): Html =>
  html`<svg class="octicon hearth-label-swatch mr-1" width="${size}" height="${size}" viewBox="0 0 14 14" aria-hidden="true"><circle cx="7" cy="7" r="7" fill="#${color}"></circle></svg>`

/** A label as shown on a page: swatch, name, scope marker for an exclusive one. */
export const labelBadge = (label: Pick<Label, "name" | "color" | "exclusive" | "is_archived">): Html =>
  html`<span class="Label d-inline-flex flex-items-center wb-break-word" data-testid="label-name">${swatch(label.color)}${label.name}</span>`

export const RepoLabelsPages = (web: Web, frame: RepoFrame) =>
  Effect.gen(function* () {
    const issues = yield* IssuesService

    const refused = (view: RepoView) => refusalPage(web, view, WRITE, "change its labels")

    const fields = (view: RepoView, id: string, typed: Typed, errors: FieldErrors) => {
      // Field ids are unique on the page: each form's fields carry its own suffix.
      const idOf = (name: string) => `label-${id}-${name}`
      return html`${csrfField(view.ctx)}
      ${id === "new" ? empty : html`<input type="hidden" name="id" value="${id}">`}
      ${field({ name: "title", id: idOf("title"), label: "Label name", value: typed.title, required: true, autocomplete: "off" }, errors)}
      ${field({ name: "color", id: idOf("color"), label: "Color", value: typed.color, required: true, autocomplete: "off", hint: "Six hex digits, such as #ee0701." }, errors)}
      ${field({ name: "description", id: idOf("description"), label: "Description", value: typed.description, autocomplete: "off" }, errors)}
      ${checkbox({ name: "exclusive", id: idOf("exclusive"), label: "Exclusive", checked: typed.exclusive, hint: "A scoped label (scope/name): an issue carries at most one label of each scope." })}
      ${checkbox({ name: "archived", id: idOf("archived"), label: "Archived", checked: typed.archived, hint: "Kept on the issues that have it, no longer offered for new ones." })}`
    }

    const listPage = (view: RepoView, shown?: Shown) =>
      Effect.gen(function* () {
        const listed = yield* issues.listRepoLabels(view, "alphabetically", undefined)
        const writer = isWriter(view)
        const active = listed.rows.filter((l) => !l.is_archived)
        const archived = listed.rows.filter((l) => l.is_archived)
        const blank: Typed = { title: "", color: "#", description: "", exclusive: false, archived: false }
        const shownFor = (form: string) => (shown !== undefined && shown.form === form ? shown : undefined)
        const newShown = shownFor("new")
        const row = (label: Label) => {
          const editing = shownFor(String(label.id))
          const current: Typed = {
            title: label.name,
            color: `#${label.color}`,
            description: label.description,
            exclusive: label.exclusive,
            archived: label.is_archived
          }
          return html`<li class="Box-row" data-testid="label" id="label-${label.id}">
  <div class="d-flex flex-items-center flex-wrap">
    <div class="flex-auto min-width-0">
      ${labelBadge(label)}
      ${label.exclusive ? html`<span class="Label Label--secondary ml-1" data-testid="label-exclusive">Exclusive</span>` : empty}
      ${label.description === "" ? empty : html`<p class="color-fg-muted f6 mb-0 mt-1 wb-break-word" data-testid="label-description">${label.description}</p>`}
    </div>
    ${
      writer
        ? html`<details class="details-reset ml-2"${editing === undefined ? empty : html` open`} data-testid="edit-label">
      <summary class="btn btn-sm">${icon("pencil")} Edit</summary>
      <div class="Box mt-2 p-3">
        ${formError(editing?.message)}
        <form method="post" action="${view.base}/labels/edit">
          ${fields(view, String(label.id), editing?.typed ?? current, editing?.errors ?? {})}
          <button class="btn btn-primary" type="submit">Save label</button>
        </form>
      </div>
    </details>
    <details class="details-reset ml-2" data-testid="delete-label">
      <summary class="btn btn-sm btn-danger">${icon("trash")} Delete</summary>
      <div class="Box Box--danger mt-2 p-3">
        <p>The label is removed from every issue and pull request that has it.</p>
        <form method="post" action="${view.base}/labels/delete">
          ${csrfField(view.ctx)}
          <input type="hidden" name="id" value="${label.id}">
          <button class="btn btn-danger" type="submit">Yes, delete the label ${label.name}</button>
        </form>
      </div>
    </details>`
        : empty
    }
  </div>
</li>`
        }
        const list = (rows: ReadonlyArray<Label>, testid: string) =>
          html`<ul class="Box mb-4" data-testid="${testid}">${rows.map(row)}</ul>`
        return yield* frame.page(
          view,
          {
            title: `Labels · ${view.owner.name}/${view.repo.name}`,
            tab: "issues",
            ...(shown === undefined ? {} : { status: 422 })
          },
          html`<div class="d-flex flex-items-center mb-3">
  <h1 class="h2 flex-auto">Labels <span class="Counter" data-testid="label-count">${listed.total}</span></h1>
  <a class="btn btn-sm" href="${view.base}/milestones">${icon("milestone")} Milestones</a>
</div>
${
  writer
    ? html`<details class="details-reset mb-4"${newShown === undefined ? empty : html` open`} data-testid="new-label">
  <summary class="btn">${icon("plus")} New label</summary>
  <div class="Box mt-2 p-3">
    ${formError(newShown?.message)}
    <form method="post" action="${view.base}/labels/new" data-testid="new-label-form">
      ${fields(view, "new", newShown?.typed ?? blank, newShown?.errors ?? {})}
      <button class="btn btn-primary" type="submit">Create label</button>
    </form>
  </div>
</details>`
    : empty
}
${
  listed.total === 0
    ? html`<div class="blankslate" data-testid="no-labels"><p>There are no labels yet.</p></div>`
    : html`${active.length === 0 ? empty : list(active, "label-list")}${
        archived.length === 0
          ? empty
          : html`<h2 class="h4 mb-2">Archived labels</h2>${list(archived, "archived-label-list")}`
      }`
}`
        )
      })

    /** A service's refusal on the label form: the colour's next to its field, the rest above the form. */
    const refusalShown = (form: string, typed: Typed, error: { readonly message?: string }): Shown => {
      const message = error.message ?? "The label could not be saved."
      if (/color/i.test(message)) return { form, typed, errors: { color: message } }
      if (/^\[Name\]/.test(message)) return { form, typed, errors: { title: "Label name cannot be empty." } }
      return { form, typed, errors: {}, message }
    }

    return [
      frame.route("GET", "/:owner/:repo/labels", { rule: READ }, (view) => listPage(view)),
      frame.route("POST", "/:owner/:repo/labels/new", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const typed = typedOf(form)
          const errors = checkTyped(typed)
          if (Object.keys(errors).length > 0) return yield* listPage(view, { form: "new", typed, errors })
          const result = yield* Effect.result(
            issues.createRepoLabel(view, {
              name: typed.title.trim(),
              color: typed.color,
              description: typed.description,
              exclusive: typed.exclusive,
              is_archived: typed.archived
            })
          )
          if (result._tag === "Failure") return yield* listPage(view, refusalShown("new", typed, result.failure))
          return web.redirect(view.ctx, `${view.base}/labels`)
        })
      ),
      frame.route("POST", "/:owner/:repo/labels/edit", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          const id = form.get("id") ?? ""
          const found = yield* Effect.option(issues.getRepoLabel(view, /^\d+$/.test(id) ? id : "0"))
          if (Option.isNone(found) || !/^\d+$/.test(id)) return web.notFound(view.ctx)
          const typed = typedOf(form)
          const errors = checkTyped(typed)
          if (Object.keys(errors).length > 0) return yield* listPage(view, { form: id, typed, errors })
          const result = yield* Effect.result(
            issues.editRepoLabel(view, id, {
              name: typed.title.trim(),
              color: typed.color,
              description: typed.description,
              exclusive: typed.exclusive,
              is_archived: typed.archived
            })
          )
          if (result._tag === "Failure") {
            if (result.failure instanceof Errors.NotFound) return web.notFound(view.ctx)
            return yield* listPage(view, refusalShown(id, typed, result.failure))
          }
          return web.redirect(view.ctx, `${view.base}/labels`)
        })
      ),
      frame.route("POST", "/:owner/:repo/labels/delete", { access: "signed-in", rule: READ }, (view, form) =>
        Effect.gen(function* () {
          const refusal = refused(view)
          if (refusal !== undefined) return refusal
          // The service deletes only a label of this repository; another id changes nothing (Forgejo).
          yield* issues.deleteRepoLabel(view, form.get("id") ?? "")
          return web.redirect(view.ctx, `${view.base}/labels`)
        })
      )
    ]
  })

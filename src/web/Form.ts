// Form fields in Primer's markup, with the refusal next to the field it concerns (linked by
// `aria-describedby`, marked `aria-invalid`) and the value the person typed kept — except a
// password, which is never sent back.
import { empty, type Html, html } from "./Html.ts"

export type FieldErrors = Readonly<Record<string, string>>

export interface FieldOptions {
  readonly name: string
  readonly label: string
  readonly type?: "text" | "email" | "password" | "date"
  readonly value?: string
  readonly autocomplete?: string
  readonly required?: boolean
  readonly autofocus?: boolean
  readonly inputmode?: "numeric"
  readonly hint?: string
  /** The element's id when several forms on a page have a field of this name. */
  readonly id?: string
}

export const field = (options: FieldOptions, errors: FieldErrors): Html => {
  const id = options.id ?? `field-${options.name}`
  const error = errors[options.name]
  const describedBy = [error === undefined ? "" : `${id}-error`, options.hint === undefined ? "" : `${id}-hint`]
    .filter((s) => s !== "")
    .join(" ")
  const value = options.type === "password" ? "" : (options.value ?? "")
  return html`<div class="form-group${error === undefined ? "" : " errored"}">
  <div class="form-group-header"><label for="${id}">${options.label}</label></div>
  <div class="form-group-body">
    <input class="form-control width-full" id="${id}" name="${options.name}" type="${options.type ?? "text"}" value="${value}"${
      options.autocomplete === undefined ? empty : html` autocomplete="${options.autocomplete}"`
    }${options.required === true ? html` required` : empty}${options.autofocus === true ? html` autofocus` : empty}${
      options.inputmode === undefined ? empty : html` inputmode="${options.inputmode}"`
    }${describedBy === "" ? empty : html` aria-describedby="${describedBy}"`}${error === undefined ? empty : html` aria-invalid="true"`}>
  </div>
  ${options.hint === undefined ? empty : html`<p class="note" id="${id}-hint">${options.hint}</p>`}
  ${error === undefined ? empty : html`<p class="note color-fg-danger" id="${id}-error" data-testid="error-${options.name}">${error}</p>`}
</div>`
}

/** A message for the whole form (not one field). */
export const formError = (message: string | undefined): Html =>
  message === undefined
    ? empty
    : html`<div class="flash flash-error mb-3" role="alert" data-testid="form-error">${message}</div>`

/**
 * The field a service's refusal concerns, from Forgejo's `[Field]: rule` form or its words
 * ("user already exists", "e-mail already in use"); `undefined` for the whole form.
 */
export const fieldOfMessage = (message: string, fields: Readonly<Record<string, string>>): string | undefined => {
  const bracket = /^\[(\w+)\]:/.exec(message)
  if (bracket !== null) return fields[bracket[1]!.toLowerCase()]
  if (/^user already exists|^name is reserved/.test(message)) return fields.username
  if (/^e-mail/.test(message)) return fields.email
  return undefined
}

/** The `aria-describedby` of a field with an error and a hint, and their paragraphs. */
const notes = (id: string, error: string | undefined, hint: string | undefined, name: string) => ({
  describedBy: [error === undefined ? "" : `${id}-error`, hint === undefined ? "" : `${id}-hint`]
    .filter((s) => s !== "")
    .join(" "),
  html: html`${hint === undefined ? empty : html`<p class="note" id="${id}-hint">${hint}</p>`}
  ${error === undefined ? empty : html`<p class="note color-fg-danger" id="${id}-error" data-testid="error-${name}">${error}</p>`}`
})

export interface TextAreaOptions {
  readonly name: string
  readonly label: string
  readonly value?: string
  readonly rows?: number
  readonly required?: boolean
  readonly hint?: string
  readonly placeholder?: string
  /** Monospace, no spell checking: keys and signatures. */
  readonly code?: boolean
}

/** A multi-line field (a bio, a public key), with its refusal and what was typed kept. */
export const textArea = (options: TextAreaOptions, errors: FieldErrors): Html => {
  const id = `field-${options.name}`
  const error = errors[options.name]
  const note = notes(id, error, options.hint, options.name)
  return html`<div class="form-group${error === undefined ? "" : " errored"}">
  <div class="form-group-header"><label for="${id}">${options.label}</label></div>
  <div class="form-group-body">
    <textarea class="form-control width-full${options.code === true ? " text-mono" : ""}" id="${id}" name="${options.name}" rows="${options.rows ?? 4}"${
      options.required === true ? html` required` : empty
    }${options.code === true ? html` spellcheck="false" autocomplete="off"` : empty}${
      options.placeholder === undefined ? empty : html` placeholder="${options.placeholder}"`
    }${note.describedBy === "" ? empty : html` aria-describedby="${note.describedBy}"`}${error === undefined ? empty : html` aria-invalid="true"`}>${options.value ?? ""}</textarea>
  </div>
  ${note.html}
</div>`
}

/** A checkbox with its label and an optional hint. */
export const checkbox = (options: {
  readonly name: string
  readonly label: string
  readonly checked: boolean
  readonly value?: string
  readonly hint?: string
  readonly id?: string
}): Html => {
  const id = options.id ?? `field-${options.name}${options.value === undefined ? "" : `-${options.value}`}`
  return html`<div class="form-checkbox">
  <label for="${id}"><input type="checkbox" id="${id}" name="${options.name}" value="${options.value ?? "on"}"${
    options.checked ? html` checked` : empty
  }${options.hint === undefined ? empty : html` aria-describedby="${id}-hint"`}> ${options.label}</label>
  ${options.hint === undefined ? empty : html`<p class="note" id="${id}-hint">${options.hint}</p>`}
</div>`
}

/** A drop-down list; `choices` are value and text. */
export const select = (
  options: {
    readonly name: string
    readonly label: string
    readonly value: string
    readonly choices: ReadonlyArray<readonly [string, string]>
    readonly hint?: string
  },
  errors: FieldErrors
): Html => {
  const id = `field-${options.name}`
  const error = errors[options.name]
  const note = notes(id, error, options.hint, options.name)
  return html`<div class="form-group${error === undefined ? "" : " errored"}">
  <div class="form-group-header"><label for="${id}">${options.label}</label></div>
  <div class="form-group-body">
    <select class="form-select" id="${id}" name="${options.name}"${
      note.describedBy === "" ? empty : html` aria-describedby="${note.describedBy}"`
    }${error === undefined ? empty : html` aria-invalid="true"`}>
      ${options.choices.map(([value, text]) => html`<option value="${value}"${value === options.value ? html` selected` : empty}>${text}</option>`)}
    </select>
  </div>
  ${note.html}
</div>`
}

/** A message that an action worked (`role="status"`). */
export const formNotice = (message: string | undefined): Html =>
  message === undefined
    ? empty
    : html`<div class="flash flash-success mb-3" role="status" data-testid="form-notice">${message}</div>`

/** A group of radio buttons (a fieldset with its legend); `choices` are value, label and an optional hint. */
export const radios = (options: {
  readonly name: string
  readonly legend: string
  readonly value: string
  readonly choices: ReadonlyArray<readonly [string, string, string?]>
}): Html => html`<fieldset class="form-group" data-testid="radios-${options.name}">
  <legend class="text-bold mb-2">${options.legend}</legend>
  ${options.choices.map(([value, label, hint]) => {
    const id = `field-${options.name}-${value}`
    return html`<div class="form-checkbox">
    <label for="${id}"><input type="radio" id="${id}" name="${options.name}" value="${value}"${
      value === options.value ? html` checked` : empty
    }${hint === undefined ? empty : html` aria-describedby="${id}-hint"`}> ${label}</label>
    ${hint === undefined ? empty : html`<p class="note" id="${id}-hint">${hint}</p>`}
  </div>`
  })}
</fieldset>`

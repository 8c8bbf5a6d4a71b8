// Form fields in Primer's markup, with the refusal next to the field it concerns (linked by
// `aria-describedby`, marked `aria-invalid`) and the value the person typed kept — except a
// password, which is never sent back.
import { empty, type Html, html } from "./Html.ts"

export type FieldErrors = Readonly<Record<string, string>>

export interface FieldOptions {
  readonly name: string
  readonly label: string
  readonly type?: "text" | "email" | "password"
  readonly value?: string
  readonly autocomplete?: string
  readonly required?: boolean
  readonly autofocus?: boolean
  readonly inputmode?: "numeric"
  readonly hint?: string
}

export const field = (options: FieldOptions, errors: FieldErrors): Html => {
  const id = `field-${options.name}`
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

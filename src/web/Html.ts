// HTML for the web pages: hono's `html` tagged template (chosen by measurement: infra/bench
// web-render.ts, README "Web rendering"), which escapes every interpolated value by default
// (`& < > " '`); arrays are joined, `undefined`/`null`/booleans render nothing. Only `raw` opts
// out, for HTML Hearth made itself and trusts (sanitized markdown, icons). Interpolating into an
// attribute needs quotes around it (`href="${url}"`): escaping keeps a value inside its quotes.
// Page modules are plain `.ts` (Node runs them as they are; no JSX build step).
import { html as honoHtml, raw as honoRaw } from "hono/html"
import type { HtmlEscapedString } from "hono/utils/html"

export type Html = HtmlEscapedString

/** Escapes every interpolated value; synchronous (nothing here interpolates promises). */
export const html = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Html => {
  const out = honoHtml(strings, ...values)
  if (out instanceof Promise) throw new Error("web: a promise was interpolated into a page")
  return out
}

/** HTML that Hearth made and trusts, inserted as it is. Never pass user input here. */
export const raw = (trusted: string): Html => honoRaw(trusted)

/** Nothing (for a conditional part). */
export const empty: Html = honoRaw("")

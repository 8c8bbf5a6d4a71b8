// A small XML writer for the RSS and Atom feeds: a tagged template that escapes every
// interpolated value by default (as src/web/Html.ts does for pages) and drops the characters XML
// 1.0 cannot carry at all (control characters a commit message may hold), so that whatever users
// wrote the feed stays well-formed. Only `xmlRaw` opts out, for XML made here.

const XML_RAW = Symbol("xml")

export interface Xml {
  readonly [XML_RAW]: true
  readonly text: string
}

const NOT_XML = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu

/** A value as XML character data (also safe inside a quoted attribute). */
export const escapeXml = (value: string): string =>
  value
    .replace(NOT_XML, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;")

/** XML made here, inserted as it is. Never pass user input. */
export const xmlRaw = (trusted: string): Xml => ({ [XML_RAW]: true, text: trusted })

const isXml = (value: unknown): value is Xml => typeof value === "object" && value !== null && XML_RAW in value

const render = (value: unknown): string => {
  if (value === undefined || value === null || value === false || value === true) return ""
  if (Array.isArray(value)) return value.map(render).join("")
  if (isXml(value)) return value.text
  return escapeXml(String(value))
}

/** Escapes every interpolated value (arrays joined; undefined, null and booleans render nothing). */
export const xml = (strings: TemplateStringsArray, ...values: ReadonlyArray<unknown>): Xml =>
  xmlRaw(strings.reduce((out, part, i) => out + part + (i < values.length ? render(values[i]) : ""), ""))

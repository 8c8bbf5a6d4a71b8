// What one render knows while marked runs (marked is synchronous, so one render at a time holds
// it): the options of the call and what the document has collected so far.

export type Mode = "markdown" | "gfm" | "comment" | "wiki" | "file"

export interface RenderOptions {
  readonly mode: Mode
  /** Absolute URL relative links resolve against, without a trailing slash; "" when none. */
  readonly base: string
  /** A wiki page: links go to `{base}/wiki/…`, images to `{base}/wiki/raw/…`. */
  readonly wiki: boolean
  /** ROOT_URL, with its trailing slash. */
  readonly appUrl: string
  /** Lower-cased names `@mentions` may link to (users that exist and the viewer may see). */
  readonly mentionable: ReadonlySet<string>
  /** Issue references (`References.ts` `issueKey`) that may become links: they exist and the viewer may read them. */
  readonly issues: ReadonlySet<string>
}

export interface State {
  readonly options: RenderOptions
  /** Forge features (references, mentions, wiki links) are on: every mode but plain `markdown`. */
  readonly forge: boolean
  /** The rel attribute of a link to `href`. */
  readonly rel: (href: string) => string
  /** Heading slugs used so far, for `-1`, `-2` suffixes. */
  readonly slugs: Map<string, number>
  /** Inside a link's text: no nested links from references. */
  linkDepth: number
  /** Footnote labels defined in the document (collected before rendering). */
  readonly footnoteLabels: Set<string>
  /** Footnote numbers, in the order of their first reference. */
  readonly footnoteNumbers: Map<string, number>
  /** The text could hold raw HTML (a cheap check before rendering). */
  readonly mayHaveHtml: boolean
  /** The document has raw HTML (it must go through the sanitizer). */
  hasHtml: boolean
  /** The text has something that looks like a footnote definition. */
  readonly hasFootnotes: boolean
  /** Where the next definition is, as characters from the end of the text (-1: none). */
  readonly footnoteSearch: { length: number; fromEnd: number }
  /** Rendered footnote definitions by label. */
  readonly footnoteBodies: Map<string, string>
}

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) =>
    c === "&" ? "&amp;" : c === "<" ? "&lt;" : c === ">" ? "&gt;" : c === '"' ? "&quot;" : "&#39;"
  )

// GitHub alert blocks, as Forgejo renders them: `> [!NOTE]` (and TIP, IMPORTANT, WARNING,
// CAUTION) on the quote's first line, or the legacy `> **Note**` form. The quote gets the classes
// `attention-header attention-<kind>` and a first paragraph holding an icon and the title.
import type { Token, Tokens } from "marked"

export const ALERT_KINDS = ["note", "tip", "important", "warning", "caution"] as const
export type AlertKind = (typeof ALERT_KINDS)[number]

const MODERN = /^\[!(note|tip|important|warning|caution)\][ \t]*(?:\n|$)/i
const LEGACY = /^(note|tip|important|warning|caution)$/i

export type AlertQuote = Tokens.Blockquote & { alert?: AlertKind | undefined }

const title = (kind: AlertKind) => kind[0]!.toUpperCase() + kind.slice(1)

/** Drops `length` characters from the start of an inline token list's text (the alert marker). */
const dropLeadingText = (tokens: Array<Token>, length: number) => {
  let rest = length
  while (rest > 0 && tokens.length > 0) {
    const first = tokens[0]!
    if (first.type !== "text" && first.type !== "escape" && first.type !== "br") return
    const text = first.type === "br" ? "\n" : (first as Tokens.Text).text
    if (text.length <= rest) {
      tokens.shift()
      rest -= text.length
    } else {
      const t = first as Tokens.Text
      t.text = t.text.slice(rest)
      t.raw = t.raw.slice(rest)
      rest = 0
    }
  }
  // The line break that ended the marker line.
  while (tokens.length > 0) {
    const first = tokens[0]!
    if (first.type === "br") tokens.shift()
    else if (first.type === "text" && /^\s/.test((first as Tokens.Text).text)) {
      const t = first as Tokens.Text
      t.text = t.text.replace(/^\s+/, "")
      if (t.text === "") tokens.shift()
      else return
    } else return
  }
}

/** Marks a blockquote token as an alert (and strips its marker) when it is one; once per token. */
export const detectAlert = (token: Token): void => {
  if (token.type !== "blockquote" || "alert" in token) return
  const quote = token as AlertQuote
  quote.alert = undefined
  const first = quote.tokens[0]
  if (first === undefined || first.type !== "paragraph") return
  const paragraph = first as Tokens.Paragraph
  const modern = MODERN.exec(paragraph.text)
  let kind: AlertKind | undefined
  if (modern !== null) {
    kind = modern[1]!.toLowerCase() as AlertKind
    dropLeadingText(paragraph.tokens, modern[0].replace(/\n$/, "").length)
  } else {
    const strong = paragraph.tokens[0]
    if (strong?.type !== "strong" || !LEGACY.test((strong as Tokens.Strong).text)) return
    kind = (strong as Tokens.Strong).text.toLowerCase() as AlertKind
    paragraph.tokens.shift()
    const next = paragraph.tokens[0]
    if (next?.type === "text" && (next as Tokens.Text).text.startsWith(":")) dropLeadingText(paragraph.tokens, 1)
    dropLeadingText(paragraph.tokens, 0)
  }
  if (paragraph.tokens.length === 0) quote.tokens.shift()
  quote.alert = kind
}

/** The alert's opening: the quote and its title paragraph (the icon is added after sanitizing). */
export const alertOpening = (kind: AlertKind): string =>
  `<blockquote class="attention-header attention-${kind}"><p><strong class="attention-${kind}">${title(kind)}</strong></p>\n`

// Hearth's own simple 16×16 icons, under Forgejo's class names (octicon-info, …).
const icons: Record<AlertKind, readonly [string, string]> = {
  note: [
    "info",
    "M8 1a7 7 0 1 0 0 14A7 7 0 0 0 8 1Zm0 1.5a5.5 5.5 0 1 1 0 11 5.5 5.5 0 0 1 0-11ZM7.25 7h1.5v4.5h-1.5Zm0-2.5h1.5V6h-1.5Z"
  ],
  tip: ["light-bulb", "M8 1a5 5 0 0 0-3 9v2h6v-2a5 5 0 0 0-3-9Zm-1.5 12.5h3V15h-3Z"],
  important: ["report", "M1 2h14v10H6l-3 3v-3H1Zm6.25 2v4h1.5V4Zm0 5v1.5h1.5V9Z"],
  warning: ["alert", "M8 1 15.5 14.5H.5Zm-.75 4.5v5h1.5v-5Zm0 6v1.5h1.5V11.5Z"],
  caution: ["stop", "M5 1h6l4 4v6l-4 4H5l-4-4V5Zm2.25 3v5h1.5V4Zm0 6v1.5h1.5V10Z"]
}

const iconHtml = Object.fromEntries(
  ALERT_KINDS.map((kind) => {
    const [name, path] = icons[kind]
    return [
      kind,
      `<svg class="svg octicon-${name}" width="16" height="16" aria-hidden="true"><path d="${path}"></path></svg>`
    ]
  })
) as Record<AlertKind, string>

const TITLE = /<p><strong class="attention-(note|tip|important|warning|caution)">/g

/** Sanitized HTML with the alert icons put in front of the alert titles. */
export const addAlertIcons = (html: string): string =>
  html.includes("attention-")
    ? html.replace(TITLE, (whole, kind: AlertKind) => `<p>${iconHtml[kind]}${whole.slice(3)}`)
    : html

// The rendering pipeline, synchronous and free of I/O: marked (GFM) with Hearth's extensions,
// then the allow-list sanitizer over the document's raw HTML. Hearth's own renderers escape all
// text and check every URL, so a document without raw HTML needs no sanitizing, and one with it
// has only its raw parts sanitized (`sanitizeRaw`). The service (Service.ts) looks up what the
// document needs from the database (mentioned users) first and then calls `render`.
import { Marked } from "marked"
import { type AlertQuote, addAlertIcons, alertOpening, detectAlert } from "./Alerts.ts"
import { footnoteSection, footnotes } from "./Footnotes.ts"
import { resolveLink, resolveMedia, wikiLink } from "./Links.ts"
import { linkReferences } from "./References.ts"
import { isSafeUrl, makeSanitizer, relFor, type UrlResolver } from "./Sanitize.ts"
import { escapeHtml, type RenderOptions, type State } from "./State.ts"

export type { Mode, RenderOptions } from "./State.ts"

// Bounds for hostile input, checked before marked sees it (marked recurses per nesting level and
// some of its inline rules are slow on long runs of delimiters).
const MAX_NESTING = 32
const MAX_DELIMITER_RUN = 1000
const MAX_EMPHASIS = 500

const countOf = (text: string, char: string): number => {
  let n = 0
  for (let i = text.indexOf(char); i >= 0; i = text.indexOf(char, i + 1)) n++
  return n
}

let current: State | undefined
const state = (): State => {
  if (current === undefined) throw new Error("markdown: rendering outside of render()")
  return current
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
const slugOf = (html: string): string =>
  html
    .replace(/<[^>]*>/g, "")
    .replace(/&(?:amp|lt|gt|quot|#39);/g, "")
    .toLowerCase()
    .trim()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, "")
    .replace(/\s/g, "-")

/** As marked cleans a URL (percent-encoding what must be), or undefined when it cannot. */
const cleanUrl = (url: string): string | undefined => {
  try {
    return encodeURI(url).replace(/%25/g, "%")
  } catch {
    return undefined
  }
}

const makeMarked = (rel: (href: string) => string) =>
  new Marked({ gfm: true, breaks: false, async: false }, footnotes(state), {
    extensions: [
      {
        name: "wikiLink",
        level: "inline",
        // No `start`: marked's text rule already stops before every "[".
        tokenizer(src) {
          if (!current?.forge) return undefined
          const m = /^\[\[([^[\]\n]{1,500})\]\]/.exec(src)
          return m === null ? undefined : { type: "wikiLink", raw: m[0], inner: m[1]! }
        },
        renderer: (token) => wikiLink(state().options, token["inner"], escapeHtml, rel)
      }
    ],

    renderer: {
      heading({ tokens, depth }) {
        const text = this.parser.parseInline(tokens)
        const s = state()
        let slug = slugOf(text)
        const seen = s.slugs.get(slug)
        s.slugs.set(slug, (seen ?? 0) + 1)
        if (seen !== undefined) slug = `${slug}-${seen}`
        return `<h${depth} id="user-content-${slug}">${text}</h${depth}>\n`
      },
      link({ href, title, tokens }) {
        const s = state()
        s.linkDepth++
        const text = this.parser.parseInline(tokens)
        s.linkDepth--
        const target = isSafeUrl(href, false) ? cleanUrl(resolveLink(s.options, href)) : undefined
        const t = title ? ` title="${escapeHtml(title)}"` : ""
        if (target === undefined) return `<a${t}>${text}</a>`
        return `<a href="${escapeHtml(target)}"${t} rel="${rel(target)}">${text}</a>`
      },
      image({ href, title, text }) {
        const src = isSafeUrl(href, true) ? cleanUrl(resolveMedia(state().options, href)) : undefined
        const t = title ? ` title="${escapeHtml(title)}"` : ""
        return `<img${src === undefined ? "" : ` src="${escapeHtml(src)}"`} alt="${escapeHtml(text)}"${t} />`
      },
      // The forms the sanitizer writes, so that documents with and without raw HTML agree.
      checkbox: ({ checked }) => `<input type="checkbox" disabled${checked ? " checked" : ""} /> `,
      br: () => "<br />",
      hr: () => "<hr />\n",
      text(token) {
        if ("tokens" in token && token.tokens) return this.parser.parseInline(token.tokens)
        // marked leaves text after a raw <pre>, <code>, <kbd> or <script> tag unescaped: raw HTML.
        if ("escaped" in token && token.escaped) {
          state().hasHtml = true
          return RAW + token.text + RAW
        }
        return linkReferences(state(), escapeHtml(token.text))
      },
      blockquote(token) {
        detectAlert(token)
        const kind = (token as AlertQuote).alert
        if (kind === undefined) return false
        // The icon goes in now unless the sanitizer may run (it would strip the SVG): then after.
        const opening = alertOpening(kind)
        return `${state().mayHaveHtml ? opening : addAlertIcons(opening)}${this.parser.parse(token.tokens)}</blockquote>\n`
      },
      // Raw HTML is delimited for the sanitizer (see `sanitizeRaw`).
      html({ text }) {
        state().hasHtml = true
        return RAW + text + RAW
      }
    },
    hooks: {
      postprocess: (html) => html + footnoteSection(state())
    }
  })

const escapeEmphasis = (line: string) =>
  line.replace(
    /^([ \t]*(?:(?:[-*+]|\d{1,9}[.)])[ \t]+|>[ \t]*)*)(.*)$/,
    (_m, lead: string, rest: string) => lead + rest.replace(/[*_]/g, (c) => (c === "*" ? "&#42;" : "&#95;"))
  )

/**
 * marked matches each `*` and `_` against the rest of its paragraph, which takes seconds when a
 * paragraph holds tens of thousands of them. A line, or a paragraph (lines up to a blank line),
 * with more than MAX_EMPHASIS of them gets them as character references instead: the same text,
 * without emphasis. Fenced code is left alone.
 */
const boundEmphasis = (text: string): string => {
  const lines = text.split("\n")
  let fence: string | undefined
  let paragraph: Array<number> = []
  let count = 0
  const flush = () => {
    if (count > MAX_EMPHASIS) for (const i of paragraph) lines[i] = escapeEmphasis(lines[i]!)
    paragraph = []
    count = 0
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    const marker = /^ {0,3}(`{3,}|~{3,})/.exec(line)?.[1]
    if (fence !== undefined) {
      if (marker !== undefined && marker[0] === fence[0] && marker.length >= fence.length) fence = undefined
      continue
    }
    if (marker !== undefined) {
      flush()
      fence = marker
      continue
    }
    if (line.trim() === "") {
      flush()
      continue
    }
    const n = countOf(line, "*") + countOf(line, "_")
    if (n > MAX_EMPHASIS) lines[i] = escapeEmphasis(line)
    // A list item, quote line, heading or table row is an inline run of its own.
    else if (/^[ \t]*(?:(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)|[>#|])/.test(line)) flush()
    else if (n > 0) {
      paragraph.push(i)
      count += n
    }
  }
  flush()
  return lines.join("\n")
}

/** Caps nesting (quotes, lists) and delimiter runs so that any input renders in bounded time. */
export const boundInput = (text: string): string => {
  let out = text
  // `>>>>>…`: deeper quotes than MAX_NESTING are rendered as text at that depth.
  if (/(?:>\s*){33}/.test(out)) {
    out = out.replace(
      /^((?:[ \t]*>){32})((?:[ \t]*>)+)/gm,
      (_m, kept: string, rest: string) => kept + rest.replace(/>/g, "\\>")
    )
  }
  // Lists nested by indentation: deeper than MAX_NESTING levels are flattened.
  if (/^[ \t]{64,}(?:[-*+]|\d+[.)])\s/m.test(out)) {
    out = out.replace(/^([ \t]{64,})(?=(?:[-*+]|\d+[.)])\s)/gm, (indent: string) => indent.slice(0, MAX_NESTING * 2))
  }
  // Lines opening with many list markers ("- - - - …") nest one level each.
  out = out.replace(
    /^((?:[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+){32})(.*)$/gm,
    (_m, kept: string, rest: string) => kept + rest.replace(/^([-*+]|\d)/, "\\$1")
  )
  if (countOf(out, "*") + countOf(out, "_") > MAX_EMPHASIS) out = boundEmphasis(out)
  // Very long runs of the same delimiter are escaped: they can never close anything sensible
  // (as character references, not backslashes: one text run rather than thousands of tokens).
  out = out.replace(new RegExp(`([*_~\\[\\]<])\\1{${MAX_DELIMITER_RUN},}`, "g"), (run: string) =>
    run.replace(/./g, (c) => `&#${c.charCodeAt(0)};`)
  )
  return out
}

// Raw HTML in marked's output is wrapped in RAW; SLOT stands for Hearth's own HTML in between
// when the raw parts are sanitized. Both are private-use characters, replaced in the input.
const RAW = "\uE000"
const SLOT = "\uE001"

/**
 * Sanitizes only the raw HTML of a rendered document: the raw parts, in order, with a SLOT where
 * each stretch of Hearth's own (already safe) HTML was, go through the sanitizer, which then sees
 * the raw tags' structure whole, and the own HTML is put back in the slots. Falls back to
 * sanitizing everything when a slot did not come out in text position (inside a tag, or dropped
 * with the content of a removed element).
 */
const sanitizeRaw = (
  sanitizeAll: (html: string, urls: UrlResolver) => string,
  options: RenderOptions,
  html: string
): string => {
  const urls: UrlResolver = { link: (href) => resolveLink(options, href), media: (src) => resolveMedia(options, src) }
  const sanitize = (h: string) => sanitizeAll(h, urls)
  const parts = html.split(RAW)
  let input = ""
  for (let i = 0; i < parts.length; i++) input += i % 2 === 0 ? SLOT : parts[i]
  const pieces = sanitize(input).split(SLOT)
  const own = Math.ceil(parts.length / 2)
  const inText = (piece: string) => piece.lastIndexOf("<") <= piece.lastIndexOf(">")
  if (pieces.length !== own + 1 || !pieces.slice(0, -1).every(inText)) return sanitize(parts.join(""))
  let out = pieces[0]!
  for (let i = 0; i < own; i++) out += parts[i * 2]! + pieces[i + 1]!
  return out
}

export interface Renderer {
  readonly render: (text: string, options: RenderOptions) => string
  /** Plain marked with GFM and nothing else: the ceiling the benchmark compares against. */
  readonly plain: (text: string) => string
}

export const makeRenderer = (appUrl: string): Renderer => {
  const rel = relFor(appUrl)
  const marked = makeMarked(rel)
  const plainMarked = new Marked({ gfm: true, async: false })
  const sanitize = makeSanitizer(appUrl)
  return {
    render: (text, options) => {
      if (text === "") return ""
      const s: State = {
        options,
        forge: options.mode !== "markdown",
        rel,
        slugs: new Map(),
        linkDepth: 0,
        footnoteLabels: new Set(),
        footnoteNumbers: new Map(),
        footnoteBodies: new Map(),
        hasHtml: false,
        // No "<" before a letter, "/", "!" or "?": no raw HTML can be in the document.
        mayHaveHtml: /<[a-zA-Z!/?]/.test(text),
        hasFootnotes: /^\[\^[^\]\s]+\]:/m.test(text),
        footnoteSearch: { length: -1, fromEnd: -1 }
      }
      const previous = current
      current = s
      try {
        const input = text.includes(RAW) || text.includes(SLOT) ? text.replace(/[\uE000\uE001]/g, "\uFFFD") : text
        const html = marked.parse(boundInput(input)) as string
        // Without raw HTML, every tag and attribute is one Hearth's renderers wrote (text escaped,
        // URLs checked): the sanitizer, two thirds of the time, is only needed for raw HTML.
        if (!s.mayHaveHtml) return html
        return addAlertIcons(s.hasHtml ? sanitizeRaw(sanitize, options, html) : html)
      } finally {
        current = previous
      }
    },
    plain: (text) => plainMarked.parse(text) as string
  }
}

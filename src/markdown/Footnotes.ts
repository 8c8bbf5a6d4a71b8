// Footnotes (GFM): `[^label]` references and `[^label]: text` definitions. References are
// numbered in the order they first appear; the notes are listed at the end of the document with a
// link back. A reference to an undefined label stays as text.
import type { MarkedExtension } from "marked"
import { escapeHtml, type State } from "./State.ts"

const DEFINITION = /^\[\^([^\]\s]{1,100})\]:[ \t]*([^\n]*(?:\n(?: {4}|\t)[^\n]*)*)(?:\n+|$)/
const REFERENCE = /^\[\^([^\]\s]{1,100})\](?!:)/

const id = (label: string) => encodeURIComponent(label.toLowerCase())

export const footnotes = (state: () => State): MarkedExtension => ({
  extensions: [
    {
      name: "footnoteDefinition",
      level: "block",
      // Called with what is left of the document before each paragraph: the next definition is
      // found once and remembered (counted from the end, as the rest only shrinks at top level).
      start(src) {
        const s = state()
        if (!s.hasFootnotes || !this.lexer.state.top) return undefined
        const memo = s.footnoteSearch
        if (memo.length < src.length || memo.fromEnd > src.length) {
          const at = src.search(/^\[\^[^\]\s]{1,100}\]:/m)
          memo.length = src.length
          memo.fromEnd = at < 0 ? -1 : src.length - at
        }
        return memo.fromEnd < 0 ? undefined : src.length - memo.fromEnd
      },
      tokenizer(src) {
        if (!this.lexer.state.top) return undefined
        const m = DEFINITION.exec(src)
        if (m === null) return undefined
        const token = { type: "footnoteDefinition", raw: m[0], label: m[1]!.toLowerCase(), tokens: [] }
        state().footnoteLabels.add(token.label)
        this.lexer.inline(m[2]!.replace(/\n(?: {4}|\t)/g, "\n"), token.tokens)
        return token
      },
      renderer(token) {
        const s = state()
        if (!s.footnoteBodies.has(token["label"]))
          s.footnoteBodies.set(token["label"], this.parser.parseInline(token.tokens ?? []))
        return ""
      }
    },
    {
      name: "footnoteReference",
      level: "inline",
      // No `start`: marked's text rule already stops before every "[".
      tokenizer(src) {
        const m = REFERENCE.exec(src)
        return m === null ? undefined : { type: "footnoteReference", raw: m[0], label: m[1]!.toLowerCase() }
      },
      renderer(token) {
        const s = state()
        const label: string = token["label"]
        if (!s.footnoteLabels.has(label)) return escapeHtml(token.raw)
        let n = s.footnoteNumbers.get(label)
        if (n === undefined) s.footnoteNumbers.set(label, (n = s.footnoteNumbers.size + 1))
        return `<sup id="user-content-fnref-${id(label)}"><a href="#user-content-fn-${id(label)}" rel="nofollow">${n}</a></sup>`
      }
    }
  ]
})

/** The list of notes that were referenced, for the end of the document ("" when none). */
export const footnoteSection = (s: State): string => {
  if (s.footnoteNumbers.size === 0) return ""
  const items = [...s.footnoteNumbers.keys()].map(
    (label) =>
      `<li id="user-content-fn-${id(label)}"><p>${s.footnoteBodies.get(label) ?? ""} <a href="#user-content-fnref-${id(label)}" rel="nofollow">↩</a></p></li>\n`
  )
  return `<section class="footnotes">\n<ol>\n${items.join("")}</ol>\n</section>\n`
}

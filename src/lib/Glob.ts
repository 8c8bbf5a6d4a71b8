// Glob patterns as Forgejo compiles them with gobwas/glob: `*` matches any run of characters except
// the separators, `**` any run at all, `?` one character except a separator, `[abc]`, `[a-z]` and
// `[!…]` one of (or none of) a set, `{a,b}` one of the alternatives, `\` takes the next character
// literally. Used for branch rule names (separator `/`), protected file patterns (`.` and `/`),
// status check contexts and tag patterns (none). A pattern that does not compile matches nothing
// (Forgejo logs and skips it).

const escapeRe = (c: string) => c.replace(/[\\^$.*+?()[\]{}|/-]/g, "\\$&")

/** Compiles `pattern` to an anchored regular expression, or `undefined` when it is malformed. */
export const compileGlob = (pattern: string, separators: string = ""): RegExp | undefined => {
  const notSep = separators === "" ? "[^]" : `[^${escapeRe(separators)}]`
  let out = ""
  let i = 0
  let braces = 0
  while (i < pattern.length) {
    const c = pattern[i]!
    if (c === "\\") {
      if (i + 1 >= pattern.length) return undefined
      out += escapeRe(pattern[i + 1]!)
      i += 2
    } else if (c === "*") {
      if (pattern[i + 1] === "*") {
        out += "[^]*"
        i += 2
      } else {
        out += `${notSep}*`
        i += 1
      }
    } else if (c === "?") {
      out += notSep
      i += 1
    } else if (c === "[") {
      const end = pattern.indexOf("]", i + 2)
      if (end < 0) return undefined
      let body = pattern.slice(i + 1, end)
      const negate = body.startsWith("!")
      if (negate) body = body.slice(1)
      if (body === "") return undefined
      out += `[${negate ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`
      i = end + 1
    } else if (c === "{") {
      braces += 1
      out += "(?:"
      i += 1
    } else if (c === "}" && braces > 0) {
      braces -= 1
      out += ")"
      i += 1
    } else if (c === "," && braces > 0) {
      out += "|"
      i += 1
    } else {
      out += escapeRe(c)
      i += 1
    }
  }
  if (braces !== 0) return undefined
  try {
    return new RegExp(`^(?:${out})$`)
  } catch {
    return undefined
  }
}

/** Whether `pattern` contains a glob character (Forgejo's `IsRuleNameSpecial`: `*?\[]{}`). */
export const isGlob = (pattern: string) => /[*?\\[\]{}]/.test(pattern)

/** Whether `value` matches the glob `pattern` (false for a malformed pattern). */
export const globMatch = (pattern: string, value: string, separators = ""): boolean =>
  compileGlob(pattern, separators)?.test(value) ?? false

// A hook's `branch_filter` (Forgejo compiles it with gobwas/glob, no separators): `*` any run of
// characters including `/`, `?` one character, `[abc]`/`[!abc]`/`[a-z]` classes, `{a,b}`
// alternatives, `\` escapes. "" and `*` match every branch.

/** The glob as a regular expression, or why it does not compile. */
export const compileGlob = (glob: string): RegExp | string => {
  let out = ""
  let depth = 0
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!
    if (c === "\\") {
      if (i + 1 >= glob.length) return "unexpected end of input after escape"
      out += literal(glob[++i]!)
    } else if (c === "*") out += "[\\s\\S]*"
    else if (c === "?") out += "[\\s\\S]"
    else if (c === "[") {
      const end = glob.indexOf("]", i + 1)
      if (end < 0) return "unexpected end of input: unclosed '['"
      let body = glob.slice(i + 1, end)
      const negated = body.startsWith("!")
      if (negated) body = body.slice(1)
      if (body === "") return "empty character class"
      out += `[${negated ? "^" : ""}${body.replace(/[\\\]^]/g, "\\$&")}]`
      i = end
    } else if (c === "{") {
      depth++
      out += "(?:"
    } else if (c === "}") {
      if (depth === 0) return "unexpected '}'"
      depth--
      out += ")"
    } else if (c === "," && depth > 0) out += "|"
    else out += literal(c)
  }
  if (depth > 0) return "unexpected end of input: unclosed '{'"
  return new RegExp(`^${out}$`)
}

const literal = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")

/** Whether a branch passes the filter ("" and "*" pass everything; a filter that does not compile passes nothing). */
export const branchMatches = (filter: string, branch: string): boolean => {
  if (filter === "" || filter === "*") return true
  const compiled = compileGlob(filter)
  return typeof compiled !== "string" && compiled.test(branch)
}

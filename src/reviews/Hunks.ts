// The diff of one file as review comments need it: whether a line is in the diff at all (Hearth
// refuses a comment on a line that is not, where Forgejo stores it without a hunk), and the hunk
// a comment keeps (Forgejo's modules/git `CutDiffAroundLine`): the file's diff headers, then the
// hunk that holds the line cut so that it ends at the line and keeps at most
// `[ui] CODE_COMMENT_LINES` lines, with a recomputed `@@` header. The API shows the part from `@@`
// on (`diff_hunk`, Forgejo's `patch2diff`).

/** Forgejo's `[ui] CODE_COMMENT_LINES` default. */
export const CODE_COMMENT_LINES = 4

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/

/** Whether `line` (from 1) of the old or new side appears in a hunk of the one-file `diff`. */
export const lineInDiff = (diff: string, line: number, old: boolean): boolean => {
  if (line < 1) return false
  let oldLine = 0
  let newLine = 0
  let inHunk = false
  for (const text of diff.split("\n")) {
    const header = HUNK.exec(text)
    if (header !== null) {
      oldLine = Number(header[1])
      newLine = Number(header[3])
      inHunk = true
      continue
    }
    if (!inHunk || text === "") continue
    switch (text[0]) {
      case "+":
        if (!old && newLine === line) return true
        newLine++
        break
      case "-":
        if (old && oldLine === line) return true
        oldLine++
        break
      case " ":
        if ((old ? oldLine : newLine) === line) return true
        oldLine++
        newLine++
        break
      default:
        // `\ No newline at end of file`, or the next file's headers.
        if (!text.startsWith("\\")) inHunk = false
    }
  }
  return false
}

/** Forgejo's `CutDiffAroundLine` for a one-file diff: "" when no hunk holds the line. */
export const cutDiffAroundLine = (diff: string, line: number, old: boolean, lines = CODE_COMMENT_LINES): string => {
  if (line === 0 || lines === 0) return ""
  const hunk: Array<string> = []
  let headerLines = 0
  let current = 0
  let other = 0
  let found = false
  for (const text of diff.split("\n")) {
    if (!found && hunk.length === headerLines && !text.startsWith("@@")) {
      // The file's headers (diff --git, index, ---, +++), kept so that the hunk can be parsed.
      if (text !== "") {
        hunk.push(text)
        headerLines++
      }
      continue
    }
    const header = HUNK.exec(text)
    if (header !== null) {
      if (found) break
      const oldBegin = Number(header[1])
      const oldSize = header[2] === undefined ? 1 : Number(header[2])
      const newBegin = Number(header[3])
      const newSize = header[4] === undefined ? 1 : Number(header[4])
      const [begin, size, otherBegin] = old ? [oldBegin, oldSize, newBegin] : [newBegin, newSize, oldBegin]
      if (begin <= line && begin + size > line) {
        hunk.push(text)
        current = begin
        other = otherBegin
        found = true
      }
      continue
    }
    if (!found || text === "") continue
    hunk.push(text)
    switch (text[0]) {
      case "+":
        if (old) other++
        else current++
        break
      case "-":
        if (old) current++
        else other++
        break
      case "\\":
        break
      default:
        current++
        other++
    }
    if (current > line) break
  }
  if (!found) return ""
  if (hunk.length - headerLines - 1 <= lines) return hunk.join("\n")
  let oldBegin = old ? current : other
  let newBegin = old ? other : current
  let oldCount = 0
  let newCount = 0
  for (let i = hunk.length - 1; i >= hunk.length - lines; i--) {
    switch (hunk[i]![0]) {
      case "+":
        newBegin--
        newCount++
        break
      case "-":
        oldBegin--
        oldCount++
        break
      default:
        oldBegin--
        newBegin--
        oldCount++
        newCount++
    }
  }
  return [
    ...hunk.slice(0, headerLines),
    `@@ -${oldBegin},${oldCount} +${newBegin},${newCount} @@`,
    ...hunk.slice(hunk.length - lines)
  ].join("\n")
}

/** The API's `diff_hunk` of a stored patch: from its `@@` on (Forgejo's `patch2diff`). */
export const diffHunkOf = (patch: string): string => {
  const split = patch.split("\n@@")
  return split.length === 2 ? `@@${split[1]}` : ""
}

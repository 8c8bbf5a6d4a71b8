// The diff model of commit, compare and pull request views (issue 17): git's own patch output
// (`git diff`/`git show` with DIFF_ARGS) parsed into files → hunks → lines, with the unified and the
// split (side-by-side) views built from it. Forgejo does the same in `services/gitdiff`
// (`ParsePatch`), with the same limits: `[git] MAX_GIT_DIFF_FILES` (100 files shown),
// `MAX_GIT_DIFF_LINES` (1,000 lines in one file) and `MAX_GIT_DIFF_LINE_CHARACTERS` (5,000
// characters in one line); a file over a limit keeps its counts but no content ("too large"), and
// the files past the first 100 are only counted.
//
// Names come from the `rename`/`copy` lines when there are some, else from the `diff --git` line,
// whose two names are then the same (so a name with spaces splits at the middle); quoted names
// (`"a/\303\251.txt"`, git's `core.quotePath`) are unquoted and their bytes decoded as UTF-8.
// Hunks are read by the line counts of their `@@` header, so no content line is ever mistaken for
// a header. Combined diffs of merges (`diff --cc`) are skipped: ask git for the first parent's diff.
import { escapeHtml, type HighlightedFile } from "./Highlight.ts"

/**
 * What git is asked for, after `diff` (`git diff DIFF_ARGS A B`), or after
 * `show --format= --diff-merges=first-parent`: patches with renames found, full blob ids (cache
 * keys for the highlighter), fixed `a/` `b/` prefixes and no external diff or text conversion
 * whatever a repository's config says, submodules as `Subproject commit` lines.
 */
export const DIFF_ARGS: ReadonlyArray<string> = [
  "--patch",
  "--find-renames",
  "--no-color",
  "--no-ext-diff",
  "--no-textconv",
  "--full-index",
  "--src-prefix=a/",
  "--dst-prefix=b/",
  "--submodule=short"
]

/**
 * Forgejo's `?whitespace=` of diff pages (`gitdiff.GetWhitespaceFlag`) and the git option of each;
 * anything else shows every change.
 */
export const WHITESPACE_FLAGS: Readonly<Record<string, string | undefined>> = {
  "show-all": undefined,
  "ignore-all": "-w",
  "ignore-change": "-b",
  "ignore-eol": "--ignore-space-at-eol"
}

/** The whitespace behaviour of `?whitespace=`, `show-all` when absent or unknown. */
export const whitespaceOf = (value: string | null): string =>
  value !== null && Object.hasOwn(WHITESPACE_FLAGS, value) ? value : "show-all"

/** DIFF_ARGS with the git option of a whitespace behaviour. */
export const diffArgsFor = (whitespace: string): ReadonlyArray<string> => {
  const flag = WHITESPACE_FLAGS[whitespace]
  return flag === undefined ? DIFF_ARGS : [...DIFF_ARGS, flag]
}

export interface DiffLimits {
  /** `[git] MAX_GIT_DIFF_FILES`: files with content; the rest are counted only. */
  readonly maxFiles: number
  /** `[git] MAX_GIT_DIFF_LINES`: a file with this many lines in its hunks (or more) is too large. */
  readonly maxLines: number
  /** `[git] MAX_GIT_DIFF_LINE_CHARACTERS`: a file with a longer line (its +/-/space included) is too large. */
  readonly maxLineCharacters: number
}

/** Forgejo's defaults (`modules/setting/git.go`). */
export const DEFAULT_DIFF_LIMITS: DiffLimits = { maxFiles: 100, maxLines: 1000, maxLineCharacters: 5000 }

export type FileStatus = "added" | "deleted" | "modified" | "renamed" | "copied"

export interface DiffLine {
  readonly kind: "context" | "add" | "del"
  /** Line number in the old file (context and deleted lines). */
  readonly oldNumber: number | undefined
  /** Line number in the new file (context and added lines). */
  readonly newNumber: number | undefined
  /** The line without its +/-/space and without the line break. */
  readonly text: string
  /** git's `\ No newline at end of file` followed this line. */
  readonly noNewline: boolean
}

export interface DiffHunk {
  /** `@@ -1,3 +1,4 @@` */
  readonly header: string
  /** What git printed after the header: the enclosing function or section ("" when none). */
  readonly section: string
  readonly oldStart: number
  readonly oldCount: number
  readonly newStart: number
  readonly newCount: number
  readonly lines: ReadonlyArray<DiffLine>
}

export interface DiffFile {
  /** Path before the change (the same as newPath unless renamed or copied; also set for added files). */
  readonly oldPath: string
  /** Path after the change (also set for deleted files). */
  readonly newPath: string
  readonly status: FileStatus
  /** `100644`, `100755`, `120000` (symlink), `160000` (submodule); undefined when absent (added). */
  readonly oldMode: string | undefined
  /** undefined when absent (deleted). */
  readonly newMode: string | undefined
  /** The blob ids of git's `index` line (absent for a rename or mode change without content change). */
  readonly oldBlob: string | undefined
  readonly newBlob: string | undefined
  /** `similarity index` of a rename or copy, in percent. */
  readonly similarity: number | undefined
  readonly binary: boolean
  readonly submodule: boolean
  readonly additions: number
  readonly deletions: number
  /** Over a limit: the hunks are left out (additions and deletions still count). */
  readonly tooLarge: "lines" | "line-characters" | undefined
  readonly hunks: ReadonlyArray<DiffHunk>
}

/** What the file list of a diff shows of every file, shown or not. */
export interface DiffFileSummary {
  readonly oldPath: string
  readonly newPath: string
  readonly status: FileStatus
  readonly additions: number
  readonly deletions: number
}

export interface Diff {
  /** The first `maxFiles` files (from the `from`-th on). */
  readonly files: ReadonlyArray<DiffFile>
  /** Every file of the diff, in git's order (the `from`-th is `files[0]`). */
  readonly all: ReadonlyArray<DiffFileSummary>
  /** The index in `all` of `files[0]`. */
  readonly from: number
  /** All files of the diff, shown or not. */
  readonly fileCount: number
  /** Over all files, shown or not. */
  readonly additions: number
  readonly deletions: number
  /** Files after the shown ones (more than `from + maxFiles`). */
  readonly truncated: boolean
}

// ------------------------------------------------------------------ names

const ESCAPED: Record<string, number> = { a: 7, b: 8, t: 9, n: 10, v: 11, f: 12, r: 13, '"': 34, "\\": 92 }
const encoder = new TextEncoder()
const utf8 = new TextDecoder("utf-8")

/** git's C-style quoted name starting at `text[at]` (a `"`): its value and the index after it. */
const unquote = (text: string, at: number): { readonly value: string; readonly end: number } => {
  const bytes: Array<number> = []
  let i = at + 1
  while (i < text.length && text[i] !== '"') {
    const c = text[i]!
    if (c !== "\\") {
      const code = text.codePointAt(i)!
      if (code < 0x80) bytes.push(code)
      else bytes.push(...encoder.encode(String.fromCodePoint(code)))
      i += code > 0xffff ? 2 : 1
      continue
    }
    const next = text[i + 1] ?? ""
    if (/[0-7]/.test(next)) {
      const octal = /^[0-7]{1,3}/.exec(text.slice(i + 1, i + 4))![0]
      bytes.push(Number.parseInt(octal, 8) & 0xff)
      i += 1 + octal.length
    } else {
      bytes.push(ESCAPED[next] ?? next.charCodeAt(0))
      i += 2
    }
  }
  return { value: utf8.decode(new Uint8Array(bytes)), end: i + 1 }
}

/** A path of a `rename from`/`copy to`… line: quoted or as is. */
const pathValue = (raw: string) => (raw.startsWith('"') ? unquote(raw, 0).value : raw)

const stripPrefix = (name: string, prefix: string) => (name.startsWith(prefix) ? name.slice(prefix.length) : name)

/** The two names of `diff --git a/X b/Y` (without the prefixes). */
const headerNames = (rest: string): { readonly old: string; readonly new: string } => {
  if (rest.startsWith('"')) {
    const first = unquote(rest, 0)
    const second = rest.slice(first.end + 1)
    return {
      old: stripPrefix(first.value, "a/"),
      new: stripPrefix(second.startsWith('"') ? unquote(second, 0).value : second, "b/")
    }
  }
  const quotedSecond = rest.lastIndexOf(' "b/')
  if (quotedSecond !== -1 && rest.endsWith('"')) {
    return {
      old: stripPrefix(rest.slice(0, quotedSecond), "a/"),
      new: stripPrefix(unquote(rest, quotedSecond + 1).value, "b/")
    }
  }
  // Unquoted: without a rename or copy both names are the same, so the line splits at its middle.
  if (rest.length % 2 === 1) {
    const half = (rest.length - 1) / 2
    const a = rest.slice(0, half)
    const b = rest.slice(half + 1)
    if (a.startsWith("a/") && b.startsWith("b/") && a.slice(2) === b.slice(2))
      return { old: a.slice(2), new: b.slice(2) }
  }
  const split = rest.indexOf(" b/")
  return split === -1
    ? { old: stripPrefix(rest, "a/"), new: stripPrefix(rest, "a/") }
    : { old: stripPrefix(rest.slice(0, split), "a/"), new: rest.slice(split + 3) }
}

// ------------------------------------------------------------------ parsing

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$/
const SUBMODULE_MODE = "160000"

type Mutable = { -readonly [K in keyof DiffFile]: DiffFile[K] }

const toLines = (output: string | Uint8Array): Array<string> => {
  const text = typeof output === "string" ? output : utf8.decode(output)
  const lines = text.split("\n")
  if (lines[lines.length - 1] === "") lines.pop()
  return lines
}

/**
 * git's patch output (with DIFF_ARGS) as files, hunks and lines, within the limits (Forgejo's
 * defaults when not given). Text before the first `diff --git` (a `git show` header) is skipped.
 */
export const parseDiff = (output: string | Uint8Array, limits: Partial<DiffLimits> = {}, from = 0): Diff => {
  const { maxFiles, maxLines, maxLineCharacters } = { ...DEFAULT_DIFF_LIMITS, ...limits }
  const lines = toLines(output)
  const files: Array<DiffFile> = []
  const all: Array<DiffFileSummary> = []
  let fileCount = 0
  let additions = 0
  let deletions = 0
  let i = 0

  // One file, from its `diff --git` line; `keep` false only counts (the files past maxFiles).
  const parseFile = (keep: boolean): DiffFile => {
    const names = headerNames(lines[i]!.slice("diff --git ".length))
    const file: Mutable = {
      oldPath: names.old,
      newPath: names.new,
      status: "modified",
      oldMode: undefined,
      newMode: undefined,
      oldBlob: undefined,
      newBlob: undefined,
      similarity: undefined,
      binary: false,
      submodule: false,
      additions: 0,
      deletions: 0,
      tooLarge: undefined,
      hunks: []
    }
    const hunks: Array<DiffHunk> = []
    i++

    // Extended header lines, up to the first hunk (or the next file).
    header: while (i < lines.length) {
      const line = lines[i]!
      const space = line.indexOf(" ")
      const rest = line.slice(space + 1)
      switch (line.slice(0, space)) {
        case "old":
          if (!line.startsWith("old mode ")) break header
          file.oldMode = line.slice(9)
          break
        case "new":
          if (line.startsWith("new mode ")) file.newMode = line.slice(9)
          else if (line.startsWith("new file mode ")) {
            file.newMode = line.slice(14)
            file.status = "added"
          } else break header
          break
        case "deleted":
          if (!line.startsWith("deleted file mode ")) break header
          file.oldMode = line.slice(18)
          file.status = "deleted"
          break
        case "rename":
        case "copy": {
          const kind = line.slice(0, space)
          const value = pathValue(line.slice(line.indexOf(" ", space + 1) + 1))
          file.status = kind === "rename" ? "renamed" : "copied"
          if (rest.startsWith("from ")) file.oldPath = value
          else if (rest.startsWith("to ")) file.newPath = value
          else break header
          break
        }
        case "similarity":
          file.similarity = Number.parseInt(rest.replace(/^index /, ""), 10)
          break
        case "dissimilarity":
          break
        case "index": {
          const [blobs, mode] = rest.split(" ")
          const [a, b] = (blobs ?? "").split("..")
          file.oldBlob = a
          file.newBlob = b
          if (mode !== undefined) {
            file.oldMode ??= mode
            file.newMode ??= mode
          }
          break
        }
        case "---":
        case "+++":
          break
        case "Binary":
          file.binary = true
          break
        case "GIT":
          // `--binary` patches: their data runs to the next file.
          file.binary = true
          while (i + 1 < lines.length && !lines[i + 1]!.startsWith("diff --git ")) i++
          break
        default:
          break header
      }
      i++
    }
    if (file.oldBlob !== undefined && /^0+$/.test(file.oldBlob)) file.oldBlob = undefined
    if (file.newBlob !== undefined && /^0+$/.test(file.newBlob)) file.newBlob = undefined
    file.submodule = file.oldMode === SUBMODULE_MODE || file.newMode === SUBMODULE_MODE

    // Hunks, each read by the counts of its header.
    let counted = 0
    while (i < lines.length) {
      const match = HUNK.exec(lines[i]!)
      if (match === null) break
      const oldStart = Number(match[1])
      const oldCount = match[2] === undefined ? 1 : Number(match[2])
      const newStart = Number(match[3])
      const newCount = match[4] === undefined ? 1 : Number(match[4])
      const hunkLines: Array<DiffLine> = []
      let oldLine = oldStart
      let newLine = newStart
      let oldLeft = oldCount
      let newLeft = newCount
      i++
      while (i < lines.length) {
        const line = lines[i]!
        const c = line.charCodeAt(0)
        if (c === 92 /* \ */) {
          // `\ No newline at end of file`, after the line it is about.
          const last = hunkLines.length - 1
          if (last >= 0) hunkLines[last] = { ...hunkLines[last]!, noNewline: true }
          i++
          continue
        }
        if (oldLeft <= 0 && newLeft <= 0) break
        let kind: DiffLine["kind"]
        if (c === 43 /* + */ && newLeft > 0) {
          kind = "add"
          newLeft--
          file.additions++
        } else if (c === 45 /* - */ && oldLeft > 0) {
          kind = "del"
          oldLeft--
          file.deletions++
        } else if ((c === 32 /* space */ || line === "") && oldLeft > 0 && newLeft > 0) {
          // An empty line is an empty context line whose space was lost (`git apply` reads it so).
          kind = "context"
          oldLeft--
          newLeft--
        } else break
        i++
        counted++
        if (file.tooLarge === undefined) {
          if (counted >= maxLines) file.tooLarge = "lines"
          else if (line.length > maxLineCharacters) file.tooLarge = "line-characters"
        }
        const oldNumber = kind === "add" ? undefined : oldLine++
        const newNumber = kind === "del" ? undefined : newLine++
        if (keep && file.tooLarge === undefined) {
          hunkLines.push({ kind, oldNumber, newNumber, text: line.slice(1), noNewline: false })
        }
      }
      if (keep && file.tooLarge === undefined) {
        hunks.push({
          header: `@@ -${match[1]}${match[2] === undefined ? "" : `,${match[2]}`} +${match[3]}${match[4] === undefined ? "" : `,${match[4]}`} @@`,
          section: match[5] ?? "",
          oldStart,
          oldCount,
          newStart,
          newCount,
          lines: hunkLines
        })
      }
    }
    file.hunks = file.tooLarge === undefined ? hunks : []
    return file
  }

  while (i < lines.length) {
    // Anything outside a file (a commit header, a combined diff) is skipped up to the next file.
    if (!lines[i]!.startsWith("diff --git ")) {
      i++
      continue
    }
    const keep = fileCount >= from && files.length < maxFiles
    const file = parseFile(keep)
    fileCount++
    additions += file.additions
    deletions += file.deletions
    all.push({
      oldPath: file.oldPath,
      newPath: file.newPath,
      status: file.status,
      additions: file.additions,
      deletions: file.deletions
    })
    if (keep) files.push(file)
  }
  const first = Math.min(from, fileCount)
  return { files, all, from: first, fileCount, additions, deletions, truncated: fileCount > first + files.length }
}

// ------------------------------------------------------------------ views

/** A row of the unified view: a hunk's header, or one line. */
export type UnifiedRow = { readonly hunk: DiffHunk } | { readonly line: DiffLine }

/** A row of the split view: a hunk's header, or the old (left) and new (right) side of one row. */
export type SplitRow =
  | { readonly hunk: DiffHunk }
  | { readonly left: DiffLine | undefined; readonly right: DiffLine | undefined }

/** The unified view of a file: each hunk's header, then its lines in git's order. */
export const unifiedView = (file: DiffFile): Array<UnifiedRow> => {
  const rows: Array<UnifiedRow> = []
  for (const hunk of file.hunks) {
    rows.push({ hunk })
    for (const line of hunk.lines) rows.push({ line })
  }
  return rows
}

/**
 * The split view of a file: context lines on both sides; in each run of changed lines the n-th
 * deleted line faces the n-th added one (Forgejo pairs them the same way), the rest face nothing.
 */
export const splitView = (file: DiffFile): Array<SplitRow> => {
  const rows: Array<SplitRow> = []
  for (const hunk of file.hunks) {
    rows.push({ hunk })
    let dels: Array<DiffLine> = []
    let adds: Array<DiffLine> = []
    const flush = () => {
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) rows.push({ left: dels[k], right: adds[k] })
      dels = []
      adds = []
    }
    for (const line of hunk.lines) {
      if (line.kind === "del") {
        // A deletion after additions starts a new run.
        if (adds.length > 0) flush()
        dels.push(line)
      } else if (line.kind === "add") adds.push(line)
      else {
        flush()
        rows.push({ left: line, right: line })
      }
    }
    flush()
  }
  return rows
}

// ------------------------------------------------------------------ highlighting

const textOfHtml = (html: string) => html.replace(/<[^>]*>/g, "")

/**
 * A diff line as HTML: its line of the highlighted old (deleted lines) or new (others) blob when
 * that line's text is the same, else the escaped text. Highlighting whole blobs (once, cached by
 * blob id) rather than lines keeps the grammar's context: a line inside a comment or a template
 * string is coloured as such.
 */
export const lineHtml = (
  line: DiffLine,
  old: HighlightedFile | undefined,
  current: HighlightedFile | undefined
): string => {
  const escaped = escapeHtml(line.text.endsWith("\r") ? line.text.slice(0, -1) : line.text)
  const source = line.kind === "del" ? old : current
  const number = line.kind === "del" ? line.oldNumber : line.newNumber
  const html = source === undefined || number === undefined ? undefined : source.lines[number - 1]
  return html !== undefined && textOfHtml(html) === escaped ? html : escaped
}

// Issue 17: the diff model of commit and compare views (src/web/code/Diff.ts), on real `git diff`
// and `git show` output of a repository built here with the real git: statuses, modes, binary
// files, renames with similarity, copies, names with spaces, quotes, tabs and non-ASCII bytes,
// empty files, mode-only changes, submodules, "no newline at end of file", the limits of Forgejo's
// `[git] MAX_GIT_DIFF_*`, merges, the split and unified views, and highlighted diff lines.
import { execFile } from "node:child_process"
import { chmodSync, mkdirSync, mkdtempSync, rmSync, unlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import {
  DEFAULT_DIFF_LIMITS,
  DIFF_ARGS,
  type Diff,
  type DiffFile,
  lineHtml,
  parseDiff,
  splitView,
  unifiedView
} from "../src/web/code/Diff.ts"
import { makeHighlighter } from "../src/web/code/Highlight.ts"
import { gitIn, TEST_IDENTITY } from "./support/git.ts"

/** git's standard output as bytes, untrimmed (gitIn trims, and a diff's last line may end in spaces). */
const gitBytes = (cwd: string, args: ReadonlyArray<string>) =>
  new Promise<Buffer>((done, fail) =>
    execFile(
      "git",
      args as Array<string>,
      { cwd, env: gitEnv(TEST_IDENTITY), encoding: "buffer", maxBuffer: 1 << 26 },
      (error, stdout, stderr) => (error === null ? done(stdout) : fail(new Error(`git ${args.join(" ")}: ${stderr}`)))
    )
  )

const SUB1 = "1111111111111111111111111111111111111111"
const SUB2 = "2222222222222222222222222222222222222222"
const lines = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i + 1) + "\n").join("")

let dir: string
let base: string
let change: string
let raw: Buffer
let diff: Diff
const file = (path: string): DiffFile => {
  const found = diff.files.find((f) => f.newPath === path)
  if (found === undefined) throw new Error(`no file ${path} in ${diff.files.map((f) => f.newPath).join(", ")}`)
  return found
}
const write = (path: string, content: string | Uint8Array) => writeFileSync(join(dir, path), content)
const commit = async (message: string) => {
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", message])
  return gitIn(dir, ["rev-parse", "HEAD"])
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "hearth-web-diff-"))
  await gitIn(dir, ["init", "-q", "-b", "main"])
  // A repository's own config must not change what the parser reads: DIFF_ARGS overrides these.
  await gitIn(dir, ["config", "diff.noprefix", "true"])
  await gitIn(dir, ["config", "diff.mnemonicPrefix", "true"])
  await gitIn(dir, ["config", "color.diff", "always"])
  await gitIn(dir, ["config", "diff.renames", "false"])
  // git then writes an empty context line as an empty line, without its space.
  await gitIn(dir, ["config", "diff.suppressBlankEmpty", "true"])

  write("a.txt", "one\ntwo\nthree\n")
  write("nonl.txt", "x")
  write("my file.txt", "hello world\n")
  write("é.txt", "é\n")
  write("tab\tname.txt", "tab\n")
  mkdirSync(join(dir, "x b"))
  write("x b/y.txt", "why\n")
  write("mode.sh", "keep\n")
  write("b.bin", new Uint8Array([0, 1, 98, 105, 110]))
  write(
    "old.txt",
    lines(30, (i) => `line ${i} of the renamed file`)
  )
  write("gone.txt", "bye\n")
  write(
    "long.txt",
    lines(40, (i) => `line ${i}`)
  )
  write("pairs.txt", "a\nb\nc\nd\n")
  write("blank.txt", "a\n\nb\n")
  write("hl.ts", "/*\n first\n*/\nconst a = 1\n")
  // A gitlink whose directory is empty: an unpopulated submodule, which `git add -A` leaves alone.
  mkdirSync(join(dir, "sub"))
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["update-index", "--add", "--cacheinfo", `160000,${SUB1},sub`])
  base = await commit("base")

  write("a.txt", "one\n2\nthree\nfour")
  write("nonl.txt", "y")
  write("my file.txt", "hello there\n")
  write("é.txt", "è\n")
  write("tab\tname.txt", "tabs\n")
  write("x b/y.txt", "why not\n")
  chmodSync(join(dir, "mode.sh"), 0o755)
  write("b.bin", new Uint8Array([0, 2, 98, 105, 110]))
  unlinkSync(join(dir, "old.txt"))
  write("new name.txt", lines(30, (i) => `line ${i} of the renamed file`) + "extra\n")
  unlinkSync(join(dir, "gone.txt"))
  write("empty-new.txt", "")
  write('q"uote.txt', 'a"b\n')
  write(
    "long.txt",
    lines(40, (i) => (i === 3 || i === 35 ? `changed ${i}` : `line ${i}`))
  )
  write("pairs.txt", "a\nB\nC\nX\nd\n")
  write("blank.txt", "a\n\nc\n")
  write("hl.ts", "/*\n second\n*/\nconst a = 2\n")
  await gitIn(dir, ["add", "-A"])
  await gitIn(dir, ["update-index", "--chmod=+x", "mode.sh"])
  await gitIn(dir, ["update-index", "--cacheinfo", `160000,${SUB2},sub`])
  change = await commit("change")

  raw = await gitBytes(dir, ["diff", ...DIFF_ARGS, base, change])
  diff = parseDiff(raw)
})

afterAll(() => {
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true })
})

describe("files, from real git output", () => {
  it("every file git lists, with the totals of --numstat", async () => {
    const numstat = (await gitIn(dir, ["diff", "--numstat", "--find-renames", base, change])).split("\n")
    expect(diff.fileCount).toBe(numstat.length)
    expect(diff.files).toHaveLength(numstat.length)
    expect(diff.truncated).toBe(false)
    const sum = (column: number) => numstat.reduce((n, row) => n + (Number(row.split("\t")[column]) || 0), 0)
    expect(diff.additions).toBe(sum(0))
    expect(diff.deletions).toBe(sum(1))
  })

  it("a modified file: hunk, line numbers, and no newline at the end of the new side", () => {
    const a = file("a.txt")
    expect(a).toMatchObject({ oldPath: "a.txt", status: "modified", additions: 2, deletions: 1, binary: false })
    expect(a.oldBlob).toMatch(/^[0-9a-f]{40}$/)
    expect(a.newBlob).toMatch(/^[0-9a-f]{40}$/)
    expect(a.oldMode).toBe("100644")
    expect(a.hunks).toHaveLength(1)
    expect(a.hunks[0]).toMatchObject({ header: "@@ -1,3 +1,4 @@", oldStart: 1, oldCount: 3, newStart: 1, newCount: 4 })
    expect(a.hunks[0]!.lines).toEqual([
      { kind: "context", oldNumber: 1, newNumber: 1, text: "one", noNewline: false },
      { kind: "del", oldNumber: 2, newNumber: undefined, text: "two", noNewline: false },
      { kind: "add", oldNumber: undefined, newNumber: 2, text: "2", noNewline: false },
      { kind: "context", oldNumber: 3, newNumber: 3, text: "three", noNewline: false },
      { kind: "add", oldNumber: undefined, newNumber: 4, text: "four", noNewline: true }
    ])
  })

  it("no newline at the end of either side", () => {
    expect(file("nonl.txt").hunks[0]!.lines).toEqual([
      { kind: "del", oldNumber: 1, newNumber: undefined, text: "x", noNewline: true },
      { kind: "add", oldNumber: undefined, newNumber: 1, text: "y", noNewline: true }
    ])
  })

  it("a binary file: marked, no hunks", () => {
    expect(file("b.bin")).toMatchObject({ status: "modified", binary: true, hunks: [], additions: 0, deletions: 0 })
  })

  it("a mode-only change", () => {
    const mode = file("mode.sh")
    expect(mode).toMatchObject({ status: "modified", oldMode: "100644", newMode: "100755", hunks: [], binary: false })
    expect(mode.oldBlob).toBeUndefined()
  })

  it("names with spaces, tabs, quotes and non-ASCII bytes (git quotes the last three)", () => {
    const text = raw.toString("utf8")
    expect(text).toContain('diff --git "a/\\303\\251.txt" "b/\\303\\251.txt"')
    expect(text).toContain('"b/q\\"uote.txt"')
    expect(text).toContain('"a/tab\\tname.txt"')
    expect(text).toContain("diff --git a/my file.txt b/my file.txt\n")
    expect(file("my file.txt")).toMatchObject({ oldPath: "my file.txt", status: "modified", additions: 1 })
    // " b/" inside the name itself: the line splits at its middle, not at the first " b/".
    expect(text).toContain("diff --git a/x b/y.txt b/x b/y.txt\n")
    expect(file("x b/y.txt")).toMatchObject({ oldPath: "x b/y.txt", status: "modified", additions: 1 })
    expect(file("é.txt")).toMatchObject({ oldPath: "é.txt", status: "modified" })
    expect(file("é.txt").hunks[0]!.lines.map((l) => l.text)).toEqual(["é", "è"])
    expect(file("tab\tname.txt")).toMatchObject({ oldPath: "tab\tname.txt", additions: 1, deletions: 1 })
    expect(file('q"uote.txt')).toMatchObject({ oldPath: 'q"uote.txt', status: "added", additions: 1 })
  })

  it("a rename with its similarity, to a name with a space", () => {
    const renamed = file("new name.txt")
    expect(renamed).toMatchObject({ oldPath: "old.txt", status: "renamed", additions: 1, deletions: 0 })
    expect(renamed.similarity).toBeGreaterThan(50)
    expect(renamed.similarity).toBeLessThan(100)
    expect(renamed.hunks[0]!.lines.at(-1)).toMatchObject({ kind: "add", newNumber: 31, text: "extra" })
  })

  it("a deleted file and an added empty file", () => {
    const gone = diff.files.find((f) => f.oldPath === "gone.txt")!
    expect(gone).toMatchObject({ newPath: "gone.txt", status: "deleted", oldMode: "100644", deletions: 1 })
    expect(gone.newMode).toBeUndefined()
    expect(gone.newBlob).toBeUndefined()
    const empty = file("empty-new.txt")
    expect(empty).toMatchObject({ oldPath: "empty-new.txt", status: "added", newMode: "100644", hunks: [] })
    expect(empty.oldMode).toBeUndefined()
    expect(empty.oldBlob).toBeUndefined()
  })

  it("a submodule (gitlink) moved to another commit", () => {
    const sub = file("sub")
    expect(sub).toMatchObject({ submodule: true, oldMode: "160000", status: "modified" })
    expect(sub.hunks[0]!.lines.map((l) => [l.kind, l.text])).toEqual([
      ["del", `Subproject commit ${SUB1}`],
      ["add", `Subproject commit ${SUB2}`]
    ])
  })

  it("two hunks, the second with git's section heading", () => {
    const long = file("long.txt")
    expect(long.hunks.map((h) => [h.header, h.oldStart, h.newStart])).toEqual([
      ["@@ -1,6 +1,6 @@", 1, 1],
      ["@@ -32,7 +32,7 @@", 32, 32]
    ])
    expect(long.hunks[1]!.section).toBe("line 31")
    expect(long.hunks[0]!.section).toBe("")
    expect(long.hunks[1]!.lines.find((l) => l.kind === "add")).toMatchObject({ newNumber: 35, text: "changed 35" })
  })

  it("an empty context line written without its space (diff.suppressBlankEmpty) is still context", () => {
    expect(raw.toString("utf8")).toMatch(/@@ -1,3 \+1,3 @@\n a\n\n-b\n\+c\n/)
    expect(file("blank.txt").hunks[0]!.lines.map((l) => [l.kind, l.oldNumber, l.newNumber, l.text])).toEqual([
      ["context", 1, 1, "a"],
      ["context", 2, 2, ""],
      ["del", 3, undefined, "b"],
      ["add", undefined, 3, "c"]
    ])
  })

  it("git show gives the same files as git diff, with or without its commit header", async () => {
    const show = parseDiff(
      await gitBytes(dir, ["show", "--format=", "--diff-merges=first-parent", ...DIFF_ARGS, change])
    )
    expect(show).toEqual(diff)
    const withHeader = await gitBytes(dir, ["show", ...DIFF_ARGS, change])
    expect(withHeader.toString("utf8")).toMatch(/^commit [0-9a-f]{40}\n/)
    expect(parseDiff(withHeader)).toEqual(diff)
  })
})

describe("copies and merges", () => {
  let copy: string
  let merge: string

  beforeAll(async () => {
    await gitIn(dir, ["checkout", "-q", "-b", "copy", change])
    write("copied.txt", lines(30, (i) => `line ${i} of the renamed file`) + "extra\nmore\n")
    copy = await commit("copy")
    // A conflict resolved by hand: the merge differs from both parents (a combined diff, `diff --cc`).
    await gitIn(dir, ["checkout", "-q", "-b", "left", change])
    write("pairs.txt", "left\n")
    await commit("left")
    await gitIn(dir, ["checkout", "-q", "-b", "right", change])
    write("pairs.txt", "right\n")
    await commit("right")
    await gitIn(dir, ["checkout", "-q", "left"])
    await gitIn(dir, ["merge", "-q", "right", "-m", "merge"]).catch(() => undefined)
    write("pairs.txt", "both\n")
    merge = await commit("merge")
  })

  it("a copy (git diff --find-copies-harder): status copied, from its source", async () => {
    const copied = parseDiff(await gitBytes(dir, ["diff", ...DIFF_ARGS, "--find-copies-harder", change, copy]))
    expect(copied.files).toHaveLength(1)
    expect(copied.files[0]).toMatchObject({
      oldPath: "new name.txt",
      newPath: "copied.txt",
      status: "copied",
      additions: 1
    })
    expect(copied.files[0]!.similarity).toBeGreaterThan(50)
  })

  it("a merge's combined diff is skipped; its first-parent diff is parsed", async () => {
    const combined = await gitBytes(dir, [
      "show",
      "--format=",
      ...DIFF_ARGS.filter((a) => a !== "--patch"),
      "--cc",
      merge
    ])
    expect(combined.toString("utf8")).toContain("diff --cc pairs.txt")
    expect(parseDiff(combined).files).toEqual([])
    const first = parseDiff(
      await gitBytes(dir, ["show", "--format=", "--diff-merges=first-parent", ...DIFF_ARGS, merge])
    )
    expect(first.files.map((f) => [f.newPath, f.additions, f.deletions])).toEqual([["pairs.txt", 1, 1]])
  })
})

describe("limits (Forgejo's [git] MAX_GIT_DIFF_*)", () => {
  let big: Buffer

  beforeAll(async () => {
    await gitIn(dir, ["checkout", "-q", "-b", "big", change])
    write(
      "thousand.txt",
      lines(1000, (i) => `row ${i}`)
    )
    write(
      "under.txt",
      lines(999, (i) => `row ${i}`)
    )
    write("wide.txt", `${"w".repeat(5000)}\n`)
    write("narrow.txt", `${"n".repeat(4999)}\n`)
    const bigCommit = await commit("big")
    big = await gitBytes(dir, ["diff", ...DIFF_ARGS, change, bigCommit])
  })

  it("Forgejo's defaults: 100 files, 1,000 lines, 5,000 characters", () => {
    expect(DEFAULT_DIFF_LIMITS).toEqual({ maxFiles: 100, maxLines: 1000, maxLineCharacters: 5000 })
  })

  it("a file with 1,000 lines is too large (no hunks, counts kept); 999 lines is shown", () => {
    const parsed = parseDiff(big)
    const find = (path: string) => parsed.files.find((f) => f.newPath === path)!
    expect(find("thousand.txt")).toMatchObject({ tooLarge: "lines", hunks: [], additions: 1000 })
    expect(find("under.txt").tooLarge).toBeUndefined()
    expect(find("under.txt").hunks[0]!.lines).toHaveLength(999)
    expect(parsed.additions).toBe(1000 + 999 + 2)
  })

  it("a line longer than 5,000 characters (its + counted) makes the file too large", () => {
    const parsed = parseDiff(big)
    const find = (path: string) => parsed.files.find((f) => f.newPath === path)!
    expect(find("wide.txt")).toMatchObject({ tooLarge: "line-characters", hunks: [], additions: 1 })
    expect(find("narrow.txt").tooLarge).toBeUndefined()
    expect(find("narrow.txt").hunks[0]!.lines[0]!.text).toHaveLength(4999)
  })

  it("past maxFiles, files are counted (and their lines) but not kept", () => {
    const limited = parseDiff(raw, { maxFiles: 3 })
    expect(limited.files).toEqual(diff.files.slice(0, 3))
    expect(limited.fileCount).toBe(diff.fileCount)
    expect(limited.truncated).toBe(true)
    expect([limited.additions, limited.deletions]).toEqual([diff.additions, diff.deletions])
  })

  it("smaller limits apply the same way", () => {
    const a = (limits: { maxLines?: number; maxLineCharacters?: number }) =>
      parseDiff(raw, limits).files.find((f) => f.newPath === "a.txt")!
    expect(a({ maxLines: 5 }).tooLarge).toBe("lines")
    expect(a({ maxLines: 6 }).tooLarge).toBeUndefined()
    expect(a({ maxLineCharacters: 6 }).tooLarge).toBeUndefined()
    expect(a({ maxLineCharacters: 5 }).tooLarge).toBe("line-characters") // " three"
  })
})

describe("views", () => {
  it("unified: each hunk's header, then its lines in order", () => {
    const pairs = file("pairs.txt")
    const rows = unifiedView(pairs)
    expect(rows).toHaveLength(1 + pairs.hunks[0]!.lines.length)
    expect(rows[0]).toEqual({ hunk: pairs.hunks[0] })
    expect(rows.slice(1).map((r) => ("line" in r ? `${r.line.kind} ${r.line.text}` : "?"))).toEqual([
      "context a",
      "del b",
      "del c",
      "add B",
      "add C",
      "add X",
      "context d"
    ])
  })

  it("split: deletions face additions in order, the surplus faces nothing, context on both sides", () => {
    const rows = splitView(file("pairs.txt"))
    const side = (l: { text: string; oldNumber: number | undefined; newNumber: number | undefined } | undefined) =>
      l === undefined ? null : `${l.text}:${l.oldNumber ?? ""}:${l.newNumber ?? ""}`
    expect(rows.slice(1).map((r) => ("hunk" in r ? "hunk" : [side(r.left), side(r.right)]))).toEqual([
      ["a:1:1", "a:1:1"],
      ["b:2:", "B::2"],
      ["c:3:", "C::3"],
      [null, "X::4"],
      ["d:4:5", "d:4:5"]
    ])
    // Two runs in one hunk (a.txt: -two +2, then +four): paired within each run only.
    const a = splitView(file("a.txt")).slice(1)
    expect(a.map((r) => ("hunk" in r ? "hunk" : [side(r.left), side(r.right)]))).toEqual([
      ["one:1:1", "one:1:1"],
      ["two:2:", "2::2"],
      ["three:3:3", "three:3:3"],
      [null, "four::4"]
    ])
  })

  it("split: a deletion after additions starts a new run (patches not written by git)", () => {
    const patch = [
      "diff --git a/f b/f",
      "--- a/f",
      "+++ b/f",
      "@@ -1,2 +1,3 @@",
      "-old one",
      "+new one",
      "+inserted",
      "-old two",
      "+new two",
      ""
    ].join("\n")
    const rows = splitView(parseDiff(patch).files[0]!).slice(1)
    expect(rows.map((r) => ("hunk" in r ? "hunk" : [r.left?.text ?? null, r.right?.text ?? null]))).toEqual([
      ["old one", "new one"],
      [null, "inserted"],
      ["old two", "new two"]
    ])
  })

  it("highlighted lines come from the whole blobs: a line inside a block comment is a comment", async () => {
    const hl = file("hl.ts")
    const h = makeHighlighter()
    const blob = async (sha: string) => gitBytes(dir, ["cat-file", "blob", sha])
    const old = h.highlight({ name: hl.oldPath, text: await blob(hl.oldBlob!), sha: hl.oldBlob })
    const current = h.highlight({ name: hl.newPath, text: await blob(hl.newBlob!), sha: hl.newBlob })
    const htmlOf = (text: string) => {
      const line = hl.hunks[0]!.lines.find((l) => l.text === text)!
      return lineHtml(line, old, current)
    }
    expect(htmlOf(" second")).toBe('<span class="hljs-comment"> second</span>')
    expect(htmlOf(" first")).toBe('<span class="hljs-comment"> first</span>')
    expect(htmlOf("const a = 2")).toContain('<span class="hljs-keyword">const</span>')
    // Without blobs, or with blobs that do not match the lines: the escaped text.
    const line = hl.hunks[0]!.lines.find((l) => l.text === " second")!
    expect(lineHtml(line, undefined, undefined)).toBe(" second")
    expect(lineHtml(line, old, old)).toBe(" second")
    expect(lineHtml({ ...line, text: "<b>" }, undefined, undefined)).toBe("&lt;b&gt;")
  })
})

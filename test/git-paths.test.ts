// The one path validator (src/git/Paths.ts) over a table of names: every `.git` look-alike git
// refuses (any letter case, NTFS trailing dots and spaces, short names and streams, HFS+ invisible
// code points, behind a backslash), empty, `.` and `..` components, and the symlinks git refuses
// or flags. Each row is also put to git itself (`git update-index --add --cacheinfo`, which runs
// git's verify_path with core.protectNTFS and core.protectHFS on), so the table cannot drift from
// what git does; the few rows where Hearth is stricter say why.
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { gitEnv } from "../src/git/Git.ts"
import { type EntryMode, isSafePath, pathProblem } from "../src/git/Paths.ts"

interface Row {
  readonly path: string
  readonly mode?: EntryMode
  /** undefined: accepted; otherwise a part of the message. */
  readonly refused?: string
  /** Why Hearth refuses what git's verify_path accepts (git's fsck flags it, or a corner no repository has). */
  readonly stricter?: string
}

const FILE_MESSAGES = {
  own: "is git's own directory (in any letter case)",
  mac: "is .git on macOS, which ignores invisible Unicode characters",
  trailing: "is .git on Windows, which drops trailing dots and spaces",
  short: "is the Windows short name of .git",
  stream: "names a stream of .git on Windows (NTFS)",
  backslash: "reaches .git on Windows, where '\\' separates directories",
  dots: "must not contain '.' or '..' components",
  empty: "must not start or end with '/', or contain '//'"
}
const link = (name: string) => `is .${name} (or a name Windows or macOS reads as it), which must not be a symbolic link`

// Every code point HFS+ ignores (git's next_hfs_char), inside and around ".git".
const IGNORED = [
  0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e,
  0x206f, 0xfeff
].map((code) => String.fromCodePoint(code))

const ROWS: ReadonlyArray<Row> = [
  // Ordinary paths, and names that only look a little like .git.
  { path: "README.md" },
  { path: "docs/guide/intro.md" },
  { path: ".github/workflows/ci.yml" },
  { path: ".gitignore" },
  { path: ".gitmodules" },
  { path: ".gitattributes" },
  { path: ".mailmap" },
  { path: ".gitfoo" },
  { path: ".git.foo" },
  { path: ".git~1" },
  { path: "x.git/config" },
  { path: " .git" },
  { path: "..." },
  { path: "git~2" },
  { path: "git~10" },
  { path: "gitmod~1" },
  { path: "~1234567" },
  { path: "a\\b" },
  { path: "café/naïve.txt" },
  { path: ".g\u200bit" }, // ZERO WIDTH SPACE is not one HFS+ ignores
  { path: ".g\u0130t" }, // only ASCII letters fold
  // .git itself, in any case, anywhere.
  { path: ".git", refused: FILE_MESSAGES.own },
  { path: ".git/config", refused: FILE_MESSAGES.own },
  { path: ".GIT/config", refused: FILE_MESSAGES.own },
  { path: ".Git/hooks/post-checkout", refused: FILE_MESSAGES.own },
  { path: "sub/.gIt/config", refused: FILE_MESSAGES.own },
  { path: "sub/.git", refused: FILE_MESSAGES.own },
  // NTFS: trailing dots and spaces, the 8.3 short name, alternate data streams.
  { path: ".git./x", refused: FILE_MESSAGES.trailing },
  { path: ".git ", refused: FILE_MESSAGES.trailing },
  { path: ".GiT..", refused: FILE_MESSAGES.trailing },
  { path: ".git . ./hooks/x", refused: FILE_MESSAGES.trailing },
  { path: "git~1", refused: FILE_MESSAGES.short },
  { path: "git~1/config", refused: FILE_MESSAGES.short },
  { path: "GIT~1/config", refused: FILE_MESSAGES.short },
  { path: "Git~1. /x", refused: FILE_MESSAGES.short },
  { path: ".git::$INDEX_ALLOCATION/config", refused: FILE_MESSAGES.stream },
  { path: ".git:stream", refused: FILE_MESSAGES.stream },
  { path: "git~1::$INDEX_ALLOCATION", refused: FILE_MESSAGES.short },
  // A backslash is a directory separator on Windows.
  { path: "a\\.git", refused: FILE_MESSAGES.backslash },
  { path: ".git\\config", refused: FILE_MESSAGES.backslash },
  { path: "a\\git~1\\b", refused: FILE_MESSAGES.backslash },
  { path: "a\\.GIT.\\b", refused: FILE_MESSAGES.backslash },
  // HFS+: invisible code points anywhere in ".git".
  ...IGNORED.flatMap(
    (c): Array<Row> => [
      { path: `.g${c}it/config`, refused: FILE_MESSAGES.mac },
      { path: `${c}.git`, refused: FILE_MESSAGES.mac },
      { path: `.GIT${c}`, refused: FILE_MESSAGES.mac }
    ]
  ),
  { path: ".\u200c\u200dg\u200ei\u200ft\ufeff/x", refused: FILE_MESSAGES.mac },
  // Empty, "." and ".." components.
  { path: "a//b", refused: FILE_MESSAGES.empty },
  { path: "/a", refused: FILE_MESSAGES.empty },
  { path: "a/", refused: FILE_MESSAGES.empty },
  { path: ".", refused: FILE_MESSAGES.dots },
  { path: "..", refused: FILE_MESSAGES.dots },
  { path: "a/./b", refused: FILE_MESSAGES.dots },
  { path: "a/../b", refused: FILE_MESSAGES.dots },
  { path: "x/..", refused: FILE_MESSAGES.dots },
  // Symlinks: .gitmodules and its look-alikes, refused by git.
  { path: "link", mode: "120000" },
  { path: "docs/link", mode: "120000" },
  { path: ".gitmodulesx", mode: "120000" },
  { path: "gitmod~5", mode: "120000" },
  { path: ".gitmodules", mode: "100755" },
  { path: ".gitmodules", mode: "120000", refused: link("gitmodules") },
  { path: ".GitModules", mode: "120000", refused: link("gitmodules") },
  { path: "sub/.gitmodules", mode: "120000", refused: link("gitmodules") },
  { path: ".gitmodules/x", mode: "120000", refused: link("gitmodules") },
  { path: ".gitmodules .", mode: "120000", refused: link("gitmodules") },
  { path: ".gitmodules:$DATA", mode: "120000", refused: link("gitmodules") },
  { path: "gitmod~1", mode: "120000", refused: link("gitmodules") },
  { path: "GITMOD~4", mode: "120000", refused: link("gitmodules") },
  { path: "gi7eba~1", mode: "120000", refused: link("gitmodules") },
  { path: "gi7eb~12", mode: "120000", refused: link("gitmodules") },
  { path: "~1234567", mode: "120000", refused: link("gitmodules") },
  { path: ".git\u200cmodules", mode: "120000", refused: link("gitmodules") },
  { path: "a\\.gitmodules", mode: "120000", refused: link("gitmodules") },
  // .git stays refused whatever the mode.
  { path: ".GIT", mode: "120000", refused: FILE_MESSAGES.own },
  // The other files git reads from a tree: fsck flags them as symlinks (gitattributesSymlink,
  // gitignoreSymlink, mailmapSymlink) and git does not follow them; verify_path lets them pass.
  ...(["gitattributes", "gitignore", "mailmap"] as const).flatMap(
    (name): Array<Row> => [
      { path: `.${name}`, mode: "120000", refused: link(name), stricter: `fsck's ${name}Symlink` },
      { path: `sub/.${name.toUpperCase()}`, mode: "120000", refused: link(name), stricter: `fsck's ${name}Symlink` },
      { path: `.${name}.`, mode: "120000", refused: link(name), stricter: `fsck's ${name}Symlink` },
      {
        path: `.${name.slice(0, 1)}\u200d${name.slice(1)}`,
        mode: "120000",
        refused: link(name),
        stricter: `fsck's ${name}Symlink`
      }
    ]
  ),
  { path: "gitatt~1", mode: "120000", refused: link("gitattributes"), stricter: "fsck's gitattributesSymlink" },
  { path: "gi7d29~1", mode: "120000", refused: link("gitattributes"), stricter: "fsck's gitattributesSymlink" },
  { path: "gitign~2", mode: "120000", refused: link("gitignore"), stricter: "fsck's gitignoreSymlink" },
  { path: "gi250a~1", mode: "120000", refused: link("gitignore"), stricter: "fsck's gitignoreSymlink" },
  { path: "MAILMA~1", mode: "120000", refused: link("mailmap"), stricter: "fsck's mailmapSymlink" },
  { path: "maba30~1", mode: "120000", refused: link("mailmap"), stricter: "fsck's mailmapSymlink" },
  // A directory named like .gitmodules on Windows above a symlink: verify_path checks only the
  // macOS form there; Hearth checks every form on every component.
  { path: "gitmod~1/x", mode: "120000", refused: link("gitmodules"), stricter: "every form on every component" }
]

const label = (row: Row) => `${JSON.stringify(row.path)} as ${row.mode ?? "100644"}`

describe("pathProblem", () => {
  it.each(ROWS.map((row) => [label(row), row] as const))("%s", (_, row) => {
    const problem = pathProblem(row.path, row.mode)
    if (row.refused === undefined) {
      expect(problem).toBeUndefined()
      expect(isSafePath(row.path, row.mode)).toBe(true)
    } else {
      expect(problem).toContain(row.refused)
      expect(isSafePath(row.path, row.mode)).toBe(false)
    }
  })

  it("names the component, with invisible characters spelled out", () => {
    expect(pathProblem("docs/.g\u200cit/config")).toBe(
      '".g\\u200Cit" is .git on macOS, which ignores invisible Unicode characters: git refuses it in a repository'
    )
    expect(pathProblem("src/GIT~1/hooks")).toContain('"GIT~1" is the Windows short name of .git')
  })

  it("refuses an empty path and NUL", () => {
    expect(pathProblem("")).toBe("the path is empty")
    expect(pathProblem("a\0b")).toBe("the path must not contain NUL")
  })
})

// ---------------------------------------------------------------------------------------------
// The same table put to git

let scratch: string
let blob: string

const git = (args: ReadonlyArray<string>, env: Record<string, string> = {}, input?: string) =>
  new Promise<{ readonly ok: boolean; readonly stdout: string; readonly stderr: string }>((done) => {
    const child = execFile(
      "git",
      args as Array<string>,
      { cwd: scratch, env: gitEnv({ GIT_DIR: join(scratch, "repo.git"), ...env }) },
      (error, stdout, stderr) => done({ ok: error === null, stdout: stdout.trim(), stderr })
    )
    child.stdin!.on("error", () => {}) // git may exit before reading its input
    child.stdin!.end(input ?? "")
  })

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "hearth-git-paths-"))
  expect((await git(["init", "--bare", "--quiet", join(scratch, "repo.git")])).ok).toBe(true)
  blob = (await git(["hash-object", "-w", "--stdin"], {}, "target\n")).stdout
})
afterAll(() => rmSync(scratch, { recursive: true, force: true }))

describe("git agrees", () => {
  it("refuses exactly the rows Hearth refuses, except the stricter ones (verify_path, protectNTFS and protectHFS on)", async () => {
    const verdicts: Array<{ row: string; gitRefuses: boolean; expected: boolean }> = []
    // A few at a time (the machine is shared), a fresh index per row: each path is judged on its own.
    for (let start = 0; start < ROWS.length; start += 4) {
      verdicts.push(
        ...(await Promise.all(
          ROWS.slice(start, start + 4).map(async (row, j) => {
            const added = await git(
              [
                "-c",
                "core.protectNTFS=true",
                "-c",
                "core.protectHFS=true",
                "update-index",
                "--add",
                "--cacheinfo",
                `${row.mode ?? "100644"},${blob},${row.path}`
              ],
              { GIT_INDEX_FILE: join(scratch, `index-${start + j}`) }
            )
            return {
              row: label(row),
              gitRefuses: !added.ok,
              expected: row.refused !== undefined && row.stricter === undefined
            }
          })
        ))
      )
    }
    expect(verdicts.length).toBe(ROWS.length)
    expect(verdicts.filter((v) => v.gitRefuses !== v.expected)).toEqual([])
  })
})

// Which paths may go into a repository's trees: the one check every write Hearth makes uses (the
// contents API, and every commit the Repository entity writes). It refuses what git itself refuses,
// so that nothing Hearth writes fails `git fsck --strict` or a client's checkout:
// - `verify_path` (git's read-cache.c), as it runs with core.protectNTFS and core.protectHFS on:
//   empty, `.` and `..` components, `.git` in any letter case, and its Windows (NTFS) and macOS
//   (HFS+) look-alikes, everywhere in the path; a symlink named `.gitmodules` (or a look-alike);
// - the tree checks of git's fsck (fsck.c `fsck_tree`): the same names, also behind a backslash
//   (a directory separator on Windows), and symlinks named `.gitattributes`, `.gitignore` or
//   `.mailmap` (fsck's gitattributesSymlink, gitignoreSymlink, mailmapSymlink; git no longer
//   follows such symlinks, so they would not do what they seem to).
// Backslashes themselves are allowed, as git allows them on Linux and macOS.
// The name matchers follow git's `is_hfs_dotgit` (utf8.c) and `is_ntfs_dotgit` (path.c).

/** File modes of an entry Hearth writes (Write.FileMode); `120000` is a symbolic link. */
export type EntryMode = "100644" | "100755" | "120000"

/** Code points HFS+ ignores in names (git's `next_hfs_char`): `.g\u200Cit` is `.git` on a Mac. */
const HFS_IGNORED = new Set([
  0x200c, 0x200d, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e, 0x206a, 0x206b, 0x206c, 0x206d, 0x206e,
  0x206f, 0xfeff
])

/** Lower-case ASCII letters only, as C's `tolower` does in git: no other character folds to ASCII. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase())

/** Whether `name` reads as `.{needle}` on HFS+ (git's `is_hfs_dot_generic`); `needle` is lower-case ASCII. */
const isHfsDot = (name: string, needle: string): boolean => {
  let seen = ""
  for (const char of name) {
    const code = char.codePointAt(0)!
    if (HFS_IGNORED.has(code)) continue
    // Only ASCII folds: git clamps anything else to "not a match".
    if (code > 127) return false
    seen += char
  }
  return asciiLower(seen) === `.${needle}`
}

/** Only dots and spaces from `from` on, up to the end or a `:` (an NTFS stream): Windows drops them. */
const onlyDotsAndSpaces = (name: string, from: number): boolean => {
  for (let i = from; i < name.length; i++) {
    const c = name[i]
    if (c === ":") return true
    if (c !== "." && c !== " ") return false
  }
  return true
}

/**
 * Whether `name` is `.git` on NTFS (git's `is_ntfs_dotgit`): `.git` or `git~1` in any case,
 * followed by nothing but dots and spaces, up to the end, a `:` stream or a backslash.
 */
const isNtfsDotGit = (name: string): boolean => {
  const lower = asciiLower(name)
  const rest = lower.startsWith(".git") ? 4 : lower.startsWith("git~1") ? 5 : -1
  if (rest < 0) return false
  for (let i = rest; i < name.length; i++) {
    const c = name[i]
    if (c === "\\" || c === ":") return true
    if (c !== "." && c !== " ") return false
  }
  return true
}

/**
 * Whether `name` is `.{dotless}` on NTFS (git's `is_ntfs_dot_generic`): the name itself, its
 * usual 8.3 short name (the first six letters, `~1`…`~4`), or the hashed fall-back short name
 * git knows (`shortPrefix`, e.g. `gi7eba~1` for `.gitmodules`), with trailing dots and spaces.
 */
const isNtfsDot = (name: string, dotless: string, shortPrefix: string): boolean => {
  const lower = asciiLower(name)
  if (lower.startsWith(`.${dotless}`)) return onlyDotsAndSpaces(name, dotless.length + 1)
  if (
    lower.startsWith(dotless.slice(0, 6)) &&
    name[6] === "~" &&
    name[7] !== undefined &&
    name[7] >= "1" &&
    name[7] <= "4"
  ) {
    return onlyDotsAndSpaces(name, 8)
  }
  // The fall-back: up to six letters of the prefix, then `~` and digits, eight characters in all.
  let sawTilde = false
  let i = 0
  for (; i < 8; i++) {
    const c = name[i]
    if (c === undefined) return false
    if (sawTilde) {
      if (c < "0" || c > "9") return false
    } else if (c === "~") {
      const digit = name[++i]
      if (digit === undefined || digit < "1" || digit > "9") return false
      sawTilde = true
    } else if (i >= 6 || c.charCodeAt(0) > 127 || asciiLower(c) !== shortPrefix[i]) {
      return false
    }
  }
  return onlyDotsAndSpaces(name, i)
}

/** The files git reads from a tree and refuses (or will not follow) as symlinks, with their NTFS short-name prefixes. */
const SPECIAL_FILES = [
  { name: "gitmodules", short: "gi7eba" },
  { name: "gitattributes", short: "gi7d29" },
  { name: "gitignore", short: "gi250a" },
  { name: "mailmap", short: "maba30" }
] as const

/**
 * Whether git's fsck reads a tree entry called `name` as a `.gitmodules` file and checks its
 * content (fsck.c `fsck_tree`): the name is `.gitmodules` on HFS+ or on NTFS, or what follows
 * any backslash in it is `.gitmodules` on NTFS. src/git/Gitmodules.ts checks such files.
 */
export const isGitmodulesName = (name: string): boolean => {
  if (isHfsDot(name, "gitmodules") || isNtfsDot(name, "gitmodules", "gi7eba")) return true
  // fsck looks at the rest of the name after each backslash, not at the part before the next one.
  for (let i = name.indexOf("\\"); i >= 0; i = name.indexOf("\\", i + 1)) {
    if (isNtfsDot(name.slice(i + 1), "gitmodules", "gi7eba")) return true
  }
  return false
}

/** The component as a person can read it in a message: invisible and control characters escaped. */
const shown = (name: string) => {
  let out = ""
  for (const char of name) {
    const code = char.codePointAt(0)!
    out +=
      HFS_IGNORED.has(code) || code < 0x20 || code === 0x7f
        ? `\\u${code.toString(16).toUpperCase().padStart(4, "0")}`
        : char
  }
  return `"${out}"`
}

const REFUSED = "git refuses it in a repository"

/** Why git would refuse `component` as a name in any tree, or `undefined`. */
const dotGitProblem = (component: string): string | undefined => {
  const what = shown(component)
  if (asciiLower(component) === ".git") return `${what} is git's own directory (in any letter case): ${REFUSED}`
  if (isHfsDot(component, "git"))
    return `${what} is .git on macOS, which ignores invisible Unicode characters: ${REFUSED}`
  // Behind a backslash a name is a directory of its own on Windows (fsck checks each part).
  const parts = component.split("\\")
  const part = parts.find(isNtfsDotGit)
  if (part === undefined) return undefined
  if (parts.length > 1) return `${what} reaches .git on Windows, where '\\' separates directories: ${REFUSED}`
  if (asciiLower(part).startsWith("git~1")) return `${what} is the Windows short name of .git: ${REFUSED}`
  if (part.includes(":")) return `${what} names a stream of .git on Windows (NTFS): ${REFUSED}`
  return `${what} is .git on Windows, which drops trailing dots and spaces: ${REFUSED}`
}

/** Why git would refuse a symlink named `component`, or `undefined`. */
const symlinkProblem = (component: string): string | undefined => {
  const parts = component.split("\\")
  for (const file of SPECIAL_FILES) {
    if (isHfsDot(component, file.name) || parts.some((part) => isNtfsDot(part, file.name, file.short))) {
      return `${shown(component)} is .${file.name} (or a name Windows or macOS reads as it), which must not be a symbolic link: git refuses it`
    }
  }
  return undefined
}

/** Linux's NAME_MAX and PATH_MAX, in bytes. */
const NAME_MAX = 255
const PATH_MAX = 4096

/**
 * Why `path` (components separated by `/`) must not be written into a repository as an entry of
 * `mode`, or `undefined` when git accepts it. The answer names the offending component; callers
 * add the whole path.
 */
export const pathProblem = (path: string, mode: EntryMode = "100644"): string | undefined => {
  if (path === "") return "the path is empty"
  if (path.includes("\0")) return "the path must not contain NUL"
  // No file system checks out a longer name (NAME_MAX) or path (PATH_MAX).
  if (Buffer.byteLength(path) > PATH_MAX) return `the path must be at most ${PATH_MAX} bytes`
  const components = path.split("/")
  for (const component of components) {
    if (component === "") return "the path must not start or end with '/', or contain '//'"
    if (Buffer.byteLength(component) > NAME_MAX)
      return `each name in the path must be at most ${NAME_MAX} bytes (no file system checks out a longer one)`
    if (component === "." || component === "..") return "the path must not contain '.' or '..' components"
    const dotGit = dotGitProblem(component)
    if (dotGit !== undefined) return dotGit
    // verify_path checks every component of a symlink's path, not only its name.
    if (mode === "120000") {
      const link = symlinkProblem(component)
      if (link !== undefined) return link
    }
  }
  return undefined
}

/** True when git accepts `path` as an entry of `mode` (see `pathProblem`). */
export const isSafePath = (path: string, mode: EntryMode = "100644"): boolean => pathProblem(path, mode) === undefined

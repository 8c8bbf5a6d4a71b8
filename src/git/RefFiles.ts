// Refs read from a repository's files, as git's files backend stores them (what `git init` makes
// before reftable): a loose ref is `<dir>/<ref>` holding its id, else it is a line of
// `packed-refs`. A page of pull requests reads ~100 refs: this way it starts no git process (a
// fork of the whole server). Git writes both by a rename of a lock file, and `pack-refs` writes
// `packed-refs` before it removes the loose files, so reading the loose ref first, then
// `packed-refs`, sees every ref at one of its values, as git itself reads them.
import { existsSync, readFileSync, type Stats, statSync } from "node:fs"

const ID = /^([0-9a-f]{40}|[0-9a-f]{64})$/

/** Names read this way: under `refs/`, no empty, `.` or `..` part (the API's branch names pass `check-ref-format`). */
const plain = (ref: string) =>
  ref.startsWith("refs/") &&
  !ref.endsWith("/") &&
  !ref.endsWith("/.") &&
  !ref.endsWith("/..") &&
  !ref.includes("//") &&
  !ref.includes("/./") &&
  !ref.includes("/../")

/** Ref files read (not answered from `known`), for the tests. */
export const refFilesRead = { count: 0 }

const readOrUndefined = (path: string): string | undefined => {
  refFilesRead.count++
  try {
    return readFileSync(path, "latin1")
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code
    // Absent, or a directory (the ref `a` when `a/b` exists): not a loose ref.
    if (code === "ENOENT" || code === "ENOTDIR" || code === "EISDIR") return undefined
    throw e
  }
}

/**
 * What a file said, by path, with the file's identity then. Git never rewrites a ref file in
 * place (a lock file renamed over it: a new inode and times), so while a file's identity is the
 * same so is what it says: one `stat` instead of open, stat, read and close (a page of 50 pull
 * requests reads ~100 refs). Kept only for a file last changed over a second before it was read,
 * as git's "racy" index entries: a file replaced within its clock's tick by one that reused its
 * inode and size is read again.
 */
interface KnownFile {
  readonly ino: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly size: number
  readonly text: string | undefined
  /** `packed-refs` parsed, once. */
  parsed?: Map<string, string> | undefined
}
const known = new Map<string, KnownFile>()
const KNOWN_FILES = 8192
const KNOWN_BYTES = 256 * 1024 // a larger `packed-refs` is read each time, not kept
const RACY_MS = 1000

const sameFile = (a: KnownFile, b: Stats) =>
  a.ino === b.ino && a.mtimeMs === b.mtimeMs && a.ctimeMs === b.ctimeMs && a.size === b.size

/** A file's text (undefined when it is absent or a directory), through `known`. */
const readKnown = (path: string): KnownFile | undefined => {
  let stat: Stats | undefined
  try {
    stat = statSync(path, { throwIfNoEntry: false })
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOTDIR") return undefined
    throw e
  }
  if (stat === undefined || stat.isDirectory()) {
    known.delete(path)
    return undefined
  }
  const was = known.get(path)
  if (was !== undefined && sameFile(was, stat)) return was
  const text = readOrUndefined(path)
  known.delete(path)
  const entry: KnownFile = { ino: stat.ino, mtimeMs: stat.mtimeMs, ctimeMs: stat.ctimeMs, size: stat.size, text }
  if (stat.size <= KNOWN_BYTES && Date.now() - stat.mtimeMs > RACY_MS) {
    if (known.size >= KNOWN_FILES) known.delete(known.keys().next().value!)
    known.set(path, entry)
  }
  return entry
}

/** `packed-refs` as ref → id (peeled lines left out); undefined when a line is not git's. */
const parsePacked = (packed: string): Map<string, string> | undefined => {
  const refs = new Map<string, string>()
  for (const line of packed.split("\n")) {
    if (line === "" || line.startsWith("#") || line.startsWith("^")) continue
    const space = line.indexOf(" ")
    const id = line.slice(0, space)
    if (space <= 0 || !ID.test(id)) return undefined
    refs.set(line.slice(space + 1), id)
  }
  return refs
}

/**
 * Where each of `refs` (full names) points, absent refs left out; undefined when the files cannot
 * say (a reftable repository, a symbolic ref, a name not read this way, a file that is not git's):
 * then the caller asks git.
 */
export const readRefs = (dir: string, refs: ReadonlyArray<string>): Map<string, string> | undefined => {
  try {
    // Names joined as text: `plain` names need no normalizing, and `path.join` was a third of
    // what a page of 50 allocated here.
    if (existsSync(`${dir}/reftable`)) return undefined
    const found = new Map<string, string>()
    const packedWanted: Array<string> = []
    for (const ref of refs) {
      if (!plain(ref)) return undefined
      const loose = readKnown(`${dir}/${ref}`)?.text
      if (loose === undefined) {
        packedWanted.push(ref)
        continue
      }
      const id = loose.trim()
      if (!ID.test(id)) return undefined // `ref: …` (symbolic) or something else
      found.set(ref, id)
    }
    if (packedWanted.length === 0) return found
    const packed = readKnown(`${dir}/packed-refs`)
    if (packed?.text === undefined) return found
    packed.parsed ??= parsePacked(packed.text)
    if (packed.parsed === undefined) return undefined
    for (const ref of packedWanted) {
      const id = packed.parsed.get(ref)
      if (id !== undefined) found.set(ref, id)
    }
    return found
  } catch {
    return undefined
  }
}

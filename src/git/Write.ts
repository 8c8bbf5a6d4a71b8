// Making new git objects without a worktree: commits from a list of file changes (one
// `git fast-import` process per commit) and annotated tags (`git mktag`). Nothing here moves a
// branch: the Repository entity does that with a compare-and-swap `update-ref`.

import { createHash, randomBytes, randomUUID } from "node:crypto"
import { existsSync, linkSync, mkdirSync, renameSync, unlinkSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { deflateSync } from "node:zlib"
import { Effect } from "effect"
import * as Git from "./Git.ts"
import * as Gitmodules from "./Gitmodules.ts"
import * as Paths from "./Paths.ts"

/** Who and when, as git records it. */
export interface Signature {
  readonly name: string
  readonly email: string
  /** Seconds since the epoch. */
  readonly seconds: number
  /** Offset from UTC in minutes (east positive), e.g. 120 for +0200. */
  readonly offsetMinutes: number
}

/** File modes a commit made through the API may write. */
export type FileMode = "100644" | "100755" | "120000"

export type FileChange =
  | { readonly kind: "write"; readonly path: string; readonly mode: FileMode; readonly content: Uint8Array }
  | { readonly kind: "delete"; readonly path: string }

export interface NewCommit {
  /** The parent commit; none makes a root commit. */
  readonly parent: string | undefined
  readonly changes: ReadonlyArray<FileChange>
  readonly message: string
  readonly author: Signature
  readonly committer: Signature
}

/** Why a name or e-mail cannot go into a commit header, or `undefined`. */
export const signatureProblem = (who: { readonly name: string; readonly email: string }): string | undefined => {
  for (const [field, value] of [
    ["name", who.name],
    ["email", who.email]
  ] as const) {
    if (/[<>\n\r\0]/.test(value)) return `${field} must not contain '<', '>' or line breaks`
  }
  if (who.name.trim() === "") return "name must not be empty"
  return undefined
}

const two = (n: number) => String(n).padStart(2, "0")

/** `1700000000 +0130` */
const when = (who: Signature) => {
  const sign = who.offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(who.offsetMinutes)
  return `${Math.floor(who.seconds)} ${sign}${two(Math.floor(abs / 60))}${two(abs % 60)}`
}

const identity = (who: Signature) => `${who.name} <${who.email}> ${when(who)}`

/** A path as a C-style quoted string: fast-import then reads spaces, quotes and newlines literally. */
const quote = (path: string) => {
  let out = '"'
  for (const char of path) {
    const code = char.codePointAt(0)!
    if (char === '"' || char === "\\") out += `\\${char}`
    else if (char === "\n") out += "\\n"
    else if (code < 0x20 || code === 0x7f) out += `\\${code.toString(8).padStart(3, "0")}`
    else out += char
  }
  return `${out}"`
}

/**
 * Writes the commit's blobs, trees and the commit itself, and returns its name together with the
 * temporary ref fast-import left pointing at it (`refs/hearth/tmp/…`): the caller moves the branch
 * and deletes that ref in one `update-ref` transaction.
 */
export const commit = (
  repo: string,
  spec: NewCommit
): Effect.Effect<{ readonly sha: string; readonly tmpRef: string }, Git.GitError | Git.GitArgumentError> =>
  Effect.gen(function* () {
    for (const who of [spec.author, spec.committer]) {
      const problem = signatureProblem(who)
      if (problem !== undefined) return yield* new Git.GitArgumentError({ message: problem })
    }
    if (spec.parent !== undefined && !Git.isSha(spec.parent)) {
      return yield* new Git.GitArgumentError({ message: "invalid parent object name" })
    }
    // Whoever asks for the commit, no path git would refuse goes in, as the mode it gets (a
    // rename through the contents API keeps a symlink a symlink): src/git/Paths.ts.
    for (const change of spec.changes) {
      const problem = change.kind === "write" ? Paths.pathProblem(change.path, change.mode) : undefined
      if (problem !== undefined)
        return yield* new Git.GitArgumentError({ message: `${problem} [path: ${change.path}]` })
    }
    // Nor a .gitmodules whose content git's fsck refuses on push: src/git/Gitmodules.ts.
    yield* Gitmodules.checkChanges(repo, spec.changes)
    const tmpRef = `refs/hearth/tmp/${randomUUID()}`
    const parts: Array<Buffer | string> = []
    const data = (bytes: Buffer) => parts.push(`data ${bytes.length}\n`, bytes, "\n")
    parts.push(`commit ${tmpRef}\nmark :1\n`)
    parts.push(`author ${identity(spec.author)}\ncommitter ${identity(spec.committer)}\n`)
    data(Buffer.from(spec.message, "utf8"))
    if (spec.parent !== undefined) parts.push(`from ${spec.parent}\n`)
    for (const change of spec.changes) {
      if (change.kind === "delete") {
        parts.push(`D ${quote(change.path)}\n`)
      } else {
        parts.push(`M ${change.mode} inline ${quote(change.path)}\n`)
        data(Buffer.from(change.content.buffer, change.content.byteOffset, change.content.byteLength))
      }
    }
    parts.push("\nget-mark :1\ndone\n")
    const input = Buffer.concat(parts.map((part) => (typeof part === "string" ? Buffer.from(part, "utf8") : part)))
    const result = yield* Git.inRepo(repo, ["fast-import", "--quiet", "--done"], { input })
    const sha = result.stdout.toString("utf8").trim()
    if (!Git.isSha(sha)) {
      return yield* new Git.GitError({ args: ["fast-import"], exitCode: 0, stderr: `unexpected output: ${sha}` })
    }
    return { sha, tmpRef }
  })

/** A byte git's `fmt_ident` trims from either end of a name or e-mail (ident.c's `crud`). */
const CRUD = /^[\x00-\x20.,:;<>"\\']$/

/** Whether git writes `value` into an identity unchanged: no crud at its ends, no `<`, `>` or newline within. */
const keptAsIs = (value: string) =>
  value !== "" && !CRUD.test(value[0]!) && !CRUD.test(value[value.length - 1]!) && !/[\n<>]/.test(value)

/**
 * Whether `commitObject` writes exactly what `git commit-tree` would for this signature: a name
 * and e-mail git keeps as they are, whole seconds, and an offset git's date parser reads back as
 * given (under 24 hours). Anything else goes through `commit-tree`, which cleans or refuses it.
 */
const plainSignature = (who: Signature) =>
  keptAsIs(who.name) &&
  keptAsIs(who.email) &&
  Number.isSafeInteger(who.seconds) &&
  who.seconds >= 0 &&
  Number.isInteger(who.offsetMinutes) &&
  Math.abs(who.offsetMinutes) < 24 * 60

/** A commit's contents: what `commit-tree` is given. */
export interface CommitSpec {
  readonly tree: string
  readonly parents: ReadonlyArray<string>
  readonly message: string
  readonly author: Signature
  readonly committer: Signature
}

/**
 * The commit `git commit-tree` makes of `tree`, `parents` and `message` (no signature, no encoding
 * header: Hearth's repositories keep git's UTF-8 default), written as a loose object without
 * starting git — a process costs a merge more than the write. Undefined when the inputs are ones
 * git would change or refuse (see `plainSignature`; a NUL in the message): the caller runs
 * `commit-tree` then. The object format (SHA-1 or SHA-256) is the tree id's; duplicate parents
 * are dropped as commit-tree drops them.
 */
export const commitObject = (repo: string, spec: CommitSpec): string | undefined => {
  const ids = [spec.tree, ...spec.parents]
  if (!ids.every((id) => Git.isSha(id) && id.length === spec.tree.length)) return undefined
  if (!plainSignature(spec.author) || !plainSignature(spec.committer) || spec.message.includes("\0")) return undefined
  let header = `tree ${spec.tree}\n`
  for (const parent of new Set(spec.parents)) header += `parent ${parent}\n`
  header += `author ${identity(spec.author)}\ncommitter ${identity(spec.committer)}\n\n`
  const format = spec.tree.length === 64 ? "sha256" : "sha1"
  return writeLooseObject(repo, "commit", Buffer.from(header + spec.message, "utf8"), format)
}

/**
 * Stores `content` as a loose object of `type` the way git does (sha1-file.c): zlib-deflated
 * `<type> <size>\0<content>` in `objects/xx/…`, named by its hash (`format`: the repository's,
 * SHA-1 or SHA-256), written to a read-only `tmp_obj_` file beside it (`git gc` removes one a
 * crash leaves) and linked into place, so a reader never sees half an object. An object already
 * there is left as it is. Directories and files get git's modes (0777 and 0444, less the umask).
 */
export const writeLooseObject = (
  repo: string,
  type: "commit",
  content: Buffer,
  format: "sha1" | "sha256" = "sha1"
): string => {
  const full = Buffer.concat([Buffer.from(`${type} ${content.length}\0`, "utf8"), content])
  const sha = createHash(format).update(full).digest("hex")
  const dir = join(repo, "objects", sha.slice(0, 2))
  const file = join(dir, sha.slice(2))
  if (existsSync(file)) return sha
  mkdirSync(dir, { recursive: true, mode: 0o777 })
  const tmp = join(dir, `tmp_obj_${randomBytes(6).toString("hex")}`)
  // Level 1: git's default for loose objects (core.looseCompression unset).
  writeFileSync(tmp, deflateSync(full, { level: 1 }), { mode: 0o444, flag: "wx" })
  try {
    linkSync(tmp, file)
  } catch (error) {
    // Already there (written meanwhile): same name, same content. A file system without hard
    // links: renamed into place, as git falls back to.
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") {
      renameSync(tmp, file)
      return sha
    }
  }
  unlinkSync(tmp)
  return sha
}

/** An annotated tag object named `name` on `target` (a commit), not yet referenced by any ref. */
export const tagObject = (
  repo: string,
  spec: { readonly name: string; readonly target: string; readonly message: string; readonly tagger: Signature }
): Effect.Effect<string, Git.GitError | Git.GitArgumentError> =>
  Effect.gen(function* () {
    const problem = signatureProblem(spec.tagger)
    if (problem !== undefined) return yield* new Git.GitArgumentError({ message: problem })
    if (!Git.isSha(spec.target)) return yield* new Git.GitArgumentError({ message: "invalid object name" })
    const message = spec.message.endsWith("\n") ? spec.message : `${spec.message}\n`
    const input = `object ${spec.target}\ntype commit\ntag ${spec.name}\ntagger ${identity(spec.tagger)}\n\n${message}`
    const result = yield* Git.inRepo(repo, ["mktag"], { input })
    return result.stdout.toString("utf8").trim()
  })

/** A `Signature` for a JavaScript date, in UTC. */
export const signatureAt = (who: { readonly name: string; readonly email: string }, date: Date): Signature => ({
  name: who.name,
  email: who.email,
  seconds: Math.floor(date.getTime() / 1000),
  offsetMinutes: 0
})

// Making new git objects without a worktree: commits from a list of file changes (one
// `git fast-import` process per commit) and annotated tags (`git mktag`). Nothing here moves a
// branch: the Repository entity does that with a compare-and-swap `update-ref`.

import { randomUUID } from "node:crypto"
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

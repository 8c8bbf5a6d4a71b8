// Git data the API reads and writes beyond files (Forgejo's routers/api/v1/repo/{notes,patch,
// commits}.go): a commit's raw diff or patch, notes (refs/notes/commits, `git notes`), and a patch
// applied as a commit without a worktree (`git apply --cached` on a temporary index, as Forgejo's
// `ApplyDiffPatch` does in its temporary clone). The writes run inside the Repository entity
// (Repository.ts), one at a time per repository.

import { randomUUID } from "node:crypto"
import { rm } from "node:fs/promises"
import { join } from "node:path"
import { Data, Effect, Option } from "effect"
import * as Git from "./Git.ts"
import * as Readers from "./Readers.ts"
import type { Signature } from "./Write.ts"

/** The ref git keeps notes under by default, and the only one Forgejo reads. */
export const NOTES_REF = "refs/notes/commits"

const two = (n: number) => String(n).padStart(2, "0")

/** A signature's date as git's raw format, `1700000000 +0130`. */
export const rawDate = (who: Signature) => {
  const sign = who.offsetMinutes < 0 ? "-" : "+"
  const abs = Math.abs(who.offsetMinutes)
  return `${Math.floor(who.seconds)} ${sign}${two(Math.floor(abs / 60))}${two(abs % 60)}`
}

/** The environment naming the author and committer of what git is about to write. */
export const identityEnv = (author: Signature, committer: Signature): Record<string, string> => ({
  GIT_AUTHOR_NAME: author.name,
  GIT_AUTHOR_EMAIL: author.email,
  GIT_AUTHOR_DATE: rawDate(author),
  GIT_COMMITTER_NAME: committer.name,
  GIT_COMMITTER_EMAIL: committer.email,
  GIT_COMMITTER_DATE: rawDate(committer)
})

// ---------------------------------------------------------------------------------------------
// Raw diff and patch of one commit (Forgejo's `git.GetRawDiff`)

/**
 * `diff`: the commit against its first parent (`git diff -M parent commit`; a root commit: `git
 * show`); `patch`: `git format-patch --stdout` of the commit alone, mail headers included.
 */
export const rawDiff = (repo: string, commit: string, kind: "diff" | "patch"): Effect.Effect<Buffer, Git.GitError> =>
  Effect.gen(function* () {
    if (!Git.isSha(commit)) return yield* Effect.die(new Error(`not an object name: ${commit}`))
    const parent = yield* Readers.resolveCommit(repo, `${commit}^`).pipe(
      Effect.catchTag("GitArgumentError", () => Effect.succeedNone)
    )
    const args =
      kind === "patch"
        ? Option.isSome(parent)
          ? ["format-patch", "--no-signature", "--stdout", "--end-of-options", `${parent.value}..${commit}`]
          : ["format-patch", "--no-signature", "--stdout", "--root", "--end-of-options", commit]
        : Option.isSome(parent)
          ? ["diff", "-M", "--end-of-options", parent.value, commit, "--"]
          : ["show", "--format=", "--end-of-options", commit, "--"]
    return (yield* Git.inRepo(repo, ["-c", "diff.noprefix=false", ...args])).stdout
  })

// ---------------------------------------------------------------------------------------------
// Notes

export interface Note {
  readonly message: Buffer
  /** The commit of the notes ref that last changed this note (Forgejo's `Note.Commit`). */
  readonly commit: string
}

/** The note on `target` (a full id), none when it has none. */
export const readNote = (repo: string, target: string): Effect.Effect<Option.Option<Note>, Git.GitError> =>
  Effect.gen(function* () {
    if (!Git.isSha(target)) return Option.none()
    const shown = yield* Git.inRepo(repo, ["notes", `--ref=${NOTES_REF}`, "show", "--end-of-options", target], {
      answerCodes: [1]
    })
    if (shown.exitCode !== 0) return Option.none()
    // The note's path under the notes tree depends on git's fan-out (ab/cdef…, ab/cd/ef…).
    const paths = [0, 1, 2, 3].map((levels) => {
      const parts: Array<string> = []
      for (let i = 0; i < levels; i++) parts.push(target.slice(i * 2, i * 2 + 2))
      return [...parts, target.slice(levels * 2)].join("/")
    })
    const last = yield* Git.inRepo(repo, ["rev-list", "-1", NOTES_REF, "--", ...paths])
    return Option.some({ message: shown.stdout, commit: last.stdout.toString("utf8").trim() })
  })

/** Sets (replaces) the note on `target` as `who`; the caller checked the target exists. */
export const setNote = (repo: string, target: string, message: string, who: Signature) =>
  Effect.gen(function* () {
    if (!Git.isSha(target)) return yield* new Git.GitArgumentError({ message: "invalid object name" })
    yield* Git.inRepo(
      repo,
      ["notes", `--ref=${NOTES_REF}`, "add", "--allow-empty", "-f", "-F", "-", "--end-of-options", target],
      { input: message, env: identityEnv(who, who) }
    )
  })

/** Removes the note on `target`; false when it had none. */
export const removeNote = (repo: string, target: string, who: Signature) =>
  Effect.gen(function* () {
    if (!Git.isSha(target)) return false
    const result = yield* Git.inRepo(repo, ["notes", `--ref=${NOTES_REF}`, "remove", "--end-of-options", target], {
      env: identityEnv(who, who),
      answerCodes: [1]
    })
    return result.exitCode === 0
  })

// ---------------------------------------------------------------------------------------------
// Signing a commit made without one

/** `git -c` entries and environment that make `commit-tree -S` sign with the instance key (Signing.ts). */
export interface SignOptions {
  readonly config: ReadonlyArray<{ readonly key: string; readonly value: string }>
  readonly env: Readonly<Record<string, string>>
}

/** The environment of a git process that signs with `sign`. */
export const signingEnv = (sign: SignOptions): Record<string, string> => {
  const env: Record<string, string> = { ...sign.env, GIT_CONFIG_COUNT: String(sign.config.length) }
  sign.config.forEach(({ key, value }, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return env
}

/** `Name <email> 1700000000 +0130` as the name, e-mail and raw date. */
const identityOf = (line: string) => {
  const match = /^(.*?) ?<([^>]*)> (\d+ [+-]\d{4})$/.exec(line)
  return match === null ? undefined : { name: match[1] ?? "", email: match[2] ?? "", date: match[3] ?? "" }
}

/**
 * The same commit as `sha` (tree, parents, author, committer, message) signed with `sign`:
 * fast-import (Write.ts) cannot sign, so an API commit is written again by `commit-tree -S`.
 */
export const signCommit = (repo: string, sha: string, sign: SignOptions): Effect.Effect<string, Git.GitError> =>
  Effect.gen(function* () {
    const text = (yield* Git.inRepo(repo, ["cat-file", "commit", sha])).stdout.toString("utf8")
    const end = text.indexOf("\n\n")
    const headers = text.slice(0, end < 0 ? text.length : end).split("\n")
    const message = end < 0 ? "" : text.slice(end + 2)
    const value = (name: string) => headers.filter((h) => h.startsWith(`${name} `)).map((h) => h.slice(name.length + 1))
    const tree = value("tree")[0]
    const author = identityOf(value("author")[0] ?? "")
    const committer = identityOf(value("committer")[0] ?? "")
    if (tree === undefined || author === undefined || committer === undefined)
      return yield* Effect.die(new Error(`commit ${sha} could not be read for signing`))
    const made = yield* Git.inRepo(
      repo,
      ["commit-tree", "-S", ...value("parent").flatMap((p) => ["-p", p]), "-F", "-", "--end-of-options", tree],
      {
        input: message,
        env: {
          ...signingEnv(sign),
          GIT_AUTHOR_NAME: author.name,
          GIT_AUTHOR_EMAIL: author.email,
          GIT_AUTHOR_DATE: author.date,
          GIT_COMMITTER_NAME: committer.name,
          GIT_COMMITTER_EMAIL: committer.email,
          GIT_COMMITTER_DATE: committer.date
        }
      }
    )
    return made.stdout.toString("utf8").trim()
  })

// ---------------------------------------------------------------------------------------------
// A patch applied as a commit

/** The patch does not apply to the branch: git's own words, nothing written. */
export class PatchConflict extends Data.TaggedError("PatchConflict")<{ readonly message: string }> {}

/** The paths a patch touches (old and new names), from `git apply --numstat` (nothing is applied). */
export const patchPaths = (
  repo: string,
  patch: string
): Effect.Effect<ReadonlyArray<string>, Git.GitError | PatchConflict> =>
  Effect.gen(function* () {
    const result = yield* Git.inRepo(repo, ["apply", "--numstat", "-z", "--recount", "-"], {
      input: patch,
      answerCodes: [128, 1]
    })
    if (result.exitCode !== 0) return yield* new PatchConflict({ message: gitWords(result.stderr) })
    // -z: "added\tdeleted\tpath\0", or for a rename "added\tdeleted\t\0old\0new\0".
    const tokens = result.stdout.toString("utf8").split("\0")
    const paths: Array<string> = []
    for (let i = 0; i < tokens.length; i++) {
      const token = tokens[i]!
      if (token === "") continue
      const fields = token.split("\t")
      if (fields.length < 3) continue
      if (fields[2] === "") {
        paths.push(tokens[i + 1] ?? "", tokens[i + 2] ?? "")
        i += 2
      } else paths.push(fields.slice(2).join("\t"))
    }
    return paths.filter((p) => p !== "")
  })

/** git's message without its "error: " prefixes, on one line. */
const gitWords = (stderr: string) =>
  stderr
    .split("\n")
    .map((line) => line.replace(/^(error|fatal): /, "").trim())
    .filter((line) => line !== "" && !line.startsWith("Falling back") && !line.startsWith("Checking patch"))
    .join("; ") || "the patch could not be applied"

/**
 * The commit `patch` makes on `parent` (a full id), not referenced by any ref: read-tree of the
 * parent into a temporary index, `git apply --cached` (three-way where the blobs are known, as
 * Forgejo's `-3`), write-tree, commit-tree. A patch that does not apply, or leaves conflicts, is
 * a `PatchConflict` and writes no ref.
 */
export const commitPatch = (
  repo: string,
  spec: {
    readonly parent: string
    readonly patch: string
    readonly message: string
    readonly author: Signature
    readonly committer: Signature
    /** Signs the commit with the instance key (Signing.ts); unsigned without. */
    readonly sign?: SignOptions | undefined
  }
): Effect.Effect<string, Git.GitError | Git.GitArgumentError | PatchConflict> => {
  const index = join(repo, `hearth-index-${randomUUID()}`)
  const env = { GIT_INDEX_FILE: index }
  return Effect.gen(function* () {
    if (!Git.isSha(spec.parent)) return yield* new Git.GitArgumentError({ message: "invalid parent object name" })
    yield* Git.inRepo(repo, ["read-tree", "--end-of-options", spec.parent], { env })
    const applied = yield* Git.inRepo(
      repo,
      ["apply", "--cached", "--recount", "--ignore-whitespace", "--whitespace=fix", "--binary", "--3way", "-"],
      { input: spec.patch, env, answerCodes: [1, 128] }
    )
    if (applied.exitCode !== 0) return yield* new PatchConflict({ message: gitWords(applied.stderr) })
    const written = yield* Git.inRepo(repo, ["write-tree"], { env, answerCodes: [1, 128] })
    if (written.exitCode !== 0)
      return yield* new PatchConflict({ message: `the patch leaves conflicts: ${gitWords(written.stderr)}` })
    const tree = written.stdout.toString("utf8").trim()
    const made = yield* Git.inRepo(
      repo,
      [
        "commit-tree",
        ...(spec.sign === undefined ? [] : ["-S"]),
        "-p",
        spec.parent,
        "-F",
        "-",
        "--end-of-options",
        tree
      ],
      {
        input: spec.message,
        env: { ...identityEnv(spec.author, spec.committer), ...(spec.sign === undefined ? {} : signingEnv(spec.sign)) }
      }
    )
    return made.stdout.toString("utf8").trim()
  }).pipe(Effect.ensuring(Effect.promise(() => rm(index, { force: true }))))
}

// Blame for the web's blame view (Forgejo's `routers/web/repo/blame.go` reads the same
// `git blame --porcelain`): which commit last changed each line of a file.
import { Effect } from "effect"
import * as Git from "./Git.ts"

export interface BlameCommit {
  readonly sha: string
  readonly author: string
  /** Seconds since the epoch (`author-time`). */
  readonly authorTime: number
  /** The first line of its message. */
  readonly summary: string
  /** The commit before it and the file's path there, when the line existed before (`previous`). */
  readonly previous: { readonly sha: string; readonly path: string } | undefined
}

/** Consecutive lines last changed by one commit. */
export interface BlamePart {
  readonly commit: BlameCommit
  /** Number (1-based) in the file of the first line of the part. */
  readonly start: number
  readonly lines: ReadonlyArray<string>
}

const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) (\d+) (\d+)(?: (\d+))?$/

/** `git blame --porcelain` output as parts (consecutive lines of one commit). */
export const parseBlame = (output: Buffer | string): Array<BlamePart> => {
  const text = typeof output === "string" ? output : output.toString("utf8")
  const commits = new Map<string, { -readonly [K in keyof BlameCommit]: BlameCommit[K] }>()
  const parts: Array<{ commit: BlameCommit; start: number; lines: Array<string> }> = []
  let current: { -readonly [K in keyof BlameCommit]: BlameCommit[K] } | undefined
  let finalLine = 0
  for (const line of text.split("\n")) {
    if (line.startsWith("\t")) {
      if (current === undefined) continue
      const last = parts[parts.length - 1]
      if (last !== undefined && last.commit === current && last.start + last.lines.length === finalLine)
        last.lines.push(line.slice(1))
      else parts.push({ commit: current, start: finalLine, lines: [line.slice(1)] })
      continue
    }
    const header = HEADER.exec(line)
    if (header !== null) {
      const sha = header[1]!
      finalLine = Number(header[3])
      let commit = commits.get(sha)
      if (commit === undefined) {
        commit = { sha, author: "", authorTime: 0, summary: "", previous: undefined }
        commits.set(sha, commit)
      }
      current = commit
      continue
    }
    if (current === undefined) continue
    const space = line.indexOf(" ")
    const key = space < 0 ? line : line.slice(0, space)
    const value = space < 0 ? "" : line.slice(space + 1)
    if (key === "author") current.author = value
    else if (key === "author-time") current.authorTime = Number(value) || 0
    else if (key === "summary") current.summary = value
    else if (key === "previous") {
      const at = value.indexOf(" ")
      if (at > 0) current.previous = { sha: value.slice(0, at), path: value.slice(at + 1) }
    }
  }
  return parts
}

/** Blame of `path` (a checked path inside the tree) as of commit `commit` (a full id). */
export const blame = (repo: string, commit: string, path: string): Effect.Effect<Array<BlamePart>, Git.GitError> =>
  Git.isSha(commit)
    ? Effect.map(
        Git.inRepo(repo, ["blame", "--porcelain", commit, "--", path], { env: { GIT_LITERAL_PATHSPECS: "1" } }),
        (result) => parseBlame(result.stdout)
      )
    : Effect.die(new Error(`not an object name: ${JSON.stringify(commit)}`))

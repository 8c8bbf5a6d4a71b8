// Reading commits, branches and tags from a repository on disk, through src/git/Git.ts only
// (archives, which must stream, spawn git themselves in Http.ts).
import { Effect, Option } from "effect"
import * as Git from "../git/Git.ts"
import * as Errors from "../http/Errors.ts"
import { branchNameProblem, refNameProblem } from "../lib/Names.ts"

export interface Signature {
  readonly name: string
  readonly email: string
  /** RFC 3339 with the signature's own offset, `Z` for UTC (as Go's time marshals). */
  readonly date: string
}

export interface CommitInfo {
  readonly sha: string
  readonly tree: string
  readonly parents: ReadonlyArray<string>
  readonly author: Signature
  readonly committer: Signature
  readonly message: string
}

const FIELDS = 10
// NUL-separated fields, NUL-terminated records (-z with tformat): messages can hold anything but NUL.
const FORMAT = "--format=tformat:%H%x00%T%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%B"

const rfc3339 = (iso: string) => iso.replace(/\+00:00$/, "Z")

const parseCommits = (out: Buffer): Array<CommitInfo> => {
  const parts = out.toString("utf8").split("\0")
  const commits: Array<CommitInfo> = []
  for (let i = 0; i + FIELDS <= parts.length; i += FIELDS) {
    const f = parts.slice(i, i + FIELDS)
    commits.push({
      sha: f[0]!.replace(/^\n/, ""),
      tree: f[1]!,
      parents: f[2]!.split(" ").filter((p) => p.length > 0),
      author: { name: f[3]!, email: f[4]!, date: rfc3339(f[5]!) },
      committer: { name: f[6]!, email: f[7]!, date: rfc3339(f[8]!) },
      message: f[9]!
    })
  }
  return commits
}

const inRepo = (repo: string, args: ReadonlyArray<string>) => Git.run(args, { cwd: repo, env: { GIT_DIR: repo } })

/** A git failure while reading is a server fault, not the caller's. */
const orDie = <A>(effect: Effect.Effect<A, Git.GitError | Git.GitArgumentError>) => Effect.orDie(effect)

const HEX_RE = /^[0-9a-f]{4,64}$/

/**
 * The commit `ref` names, resolved as Forgejo does: a branch, then a tag, then a (short) commit id.
 * None when nothing matches or the name is not a valid revision.
 */
export const resolveCommit = (repo: string, ref: string): Effect.Effect<Option.Option<string>> =>
  Effect.gen(function* () {
    const candidates: Array<string> = []
    // A full ref name (`refs/heads/main`, `refs/tags/v1`), as Forgejo's GetCommit accepts too.
    if (ref.startsWith("refs/") && refNameProblem(ref) === undefined) candidates.push(ref)
    if (branchNameProblem(ref) === undefined) candidates.push(`refs/heads/${ref}`, `refs/tags/${ref}`)
    if (HEX_RE.test(ref.toLowerCase())) candidates.push(ref.toLowerCase())
    for (const candidate of candidates) {
      const found = yield* Git.revParse(repo, `${candidate}^{commit}`).pipe(
        // An ambiguous short id or an object that is not a commit: no match.
        Effect.catch(() => Effect.succeedNone)
      )
      if (Option.isSome(found)) return found
    }
    return Option.none()
  })

/** The full ref (`refs/heads/…`, then `refs/tags/…`) a short branch or tag name stands for, if any. */
export const resolveRefName = (repo: string, name: string): Effect.Effect<Option.Option<string>> =>
  Effect.gen(function* () {
    if (branchNameProblem(name) !== undefined) return Option.none()
    for (const ref of [`refs/heads/${name}`, `refs/tags/${name}`]) {
      const found = yield* Git.revParse(repo, `${ref}^{commit}`).pipe(Effect.catch(() => Effect.succeedNone))
      if (Option.isSome(found)) return Option.some(ref)
    }
    return Option.none()
  })

/** The commit `sha` (a full object name) or none when it does not exist or is not a commit. */
export const readCommit = (repo: string, sha: string): Effect.Effect<Option.Option<CommitInfo>> =>
  Effect.gen(function* () {
    const resolved = yield* resolveCommit(repo, sha)
    if (Option.isNone(resolved)) return Option.none()
    const out = yield* orDie(
      inRepo(repo, ["log", "-z", FORMAT, "--max-count=1", "--end-of-options", resolved.value, "--"])
    )
    const [commit] = parseCommits(out.stdout)
    return commit === undefined ? Option.none() : Option.some(commit)
  })

/** A path filter for `git log`/`rev-list`, as a literal pathspec (no globbing, no magic). */
const pathArgs = (path: string | undefined) =>
  path === undefined || path === "" ? [] : [`:(literal)${path.replace(/^\/+/, "")}`]

/**
 * One page of the history of `head` (newest first), optionally only commits touching `path` and
 * without those reachable from `not` (a full commit id), and the total.
 */
export const listCommits = (
  repo: string,
  head: string,
  page: { readonly offset: number; readonly limit: number },
  path?: string,
  not?: string
): Effect.Effect<{ readonly commits: Array<CommitInfo>; readonly total: number }> =>
  Effect.gen(function* () {
    const spec = pathArgs(path)
    // `^<sha>` rather than `--not`: after --end-of-options git reads every argument as a revision.
    const revisions = not === undefined ? [head] : [head, `^${not}`]
    const count = yield* orDie(inRepo(repo, ["rev-list", "--count", "--end-of-options", ...revisions, "--", ...spec]))
    const out = yield* orDie(
      inRepo(repo, [
        "log",
        "-z",
        FORMAT,
        `--skip=${page.offset}`,
        `--max-count=${page.limit}`,
        "--end-of-options",
        ...revisions,
        "--",
        ...spec
      ])
    )
    return { commits: parseCommits(out.stdout), total: Number(count.stdout.toString("utf8").trim()) || 0 }
  })

/** The commits the given shas name, in order (each must exist). */
export const readCommits = (repo: string, shas: ReadonlyArray<string>): Effect.Effect<Array<CommitInfo>> =>
  shas.length === 0
    ? Effect.succeed([])
    : Effect.map(
        orDie(inRepo(repo, ["log", "-z", FORMAT, "--no-walk=unsorted", "--end-of-options", ...shas, "--"])),
        (out) => parseCommits(out.stdout)
      )

export interface TagInfo {
  readonly name: string
  /** The tag object for an annotated tag, the commit for a lightweight one. */
  readonly id: string
  readonly commit: CommitInfo
  /** The annotation, or the commit message for a lightweight tag (as Forgejo). */
  readonly message: string
}

/** Tags (newest first, as Forgejo lists them) that point (maybe through a tag object) at a commit. */
export const listTags = (repo: string, name?: string): Effect.Effect<Array<TagInfo>> =>
  Effect.gen(function* () {
    const out = yield* orDie(
      inRepo(repo, [
        "for-each-ref",
        "--sort=-creatordate",
        "--format=%(refname:strip=2)%00%(objectname)%00%(objecttype)%00%(*objectname)%00%(contents)%00",
        "--",
        name === undefined ? "refs/tags/" : `refs/tags/${name}`
      ])
    )
    const parts = out.stdout.toString("utf8").split("\0")
    const rows: Array<{ name: string; id: string; commitSha: string; annotation: string | undefined }> = []
    for (let i = 0; i + 5 <= parts.length; i += 5) {
      const [tagName, objectName, type, peeled, contents] = parts
        .slice(i, i + 5)
        .map((s, j) => (j === 0 ? s.replace(/^\n/, "") : s))
      if (type === "commit")
        rows.push({ name: tagName!, id: objectName!, commitSha: objectName!, annotation: undefined })
      else if (type === "tag" && peeled !== "")
        rows.push({ name: tagName!, id: objectName!, commitSha: peeled!, annotation: contents! })
    }
    const commits = new Map<string, CommitInfo>()
    for (const commit of yield* readCommits(repo, [...new Set(rows.map((r) => r.commitSha))]))
      commits.set(commit.sha, commit)
    return rows.flatMap((row) => {
      const commit = commits.get(row.commitSha)
      // A tag on a tag on a commit peels only one level here; such tags are left out rather than guessed.
      return commit === undefined
        ? []
        : [{ name: row.name, id: row.id, commit, message: row.annotation ?? commit.message }]
    })
  })

/** 409 on an empty repository, as Forgejo answers the commit lists. */
export const ensureNotEmpty = (repo: string) =>
  Effect.flatMap(Effect.orDie(Git.isEmpty(repo)), (empty) =>
    empty ? Effect.fail(Errors.conflict("Git Repository is empty.")) : Effect.void
  )

// ---------------------------------------------------------------------------------------------
// Commit details (Forgejo's `stats`, `files` and `verification`), a few git calls per page of
// commits rather than one per commit or per file.

export interface CommitStats {
  readonly total: number
  readonly additions: number
  readonly deletions: number
}

export interface AffectedFile {
  readonly filename: string
  readonly status: "added" | "removed" | "modified"
}

export interface CommitSignature {
  /** The armored signature, as stored in the commit's `gpgsig` header. */
  readonly signature: string
  /** What was signed: the commit object without its signature header. */
  readonly payload: string
}

/** Commit ids of a record-per-commit `git log -z --format=%x01%H` output, with each commit's tokens. */
const byCommit = (out: Buffer): Map<string, Array<string>> => {
  const result = new Map<string, Array<string>>()
  let current: Array<string> | undefined
  let first = true
  for (const raw of out.toString("utf8").split("\0")) {
    // git separates the header from the diff with a newline; a path may itself start with one.
    const token = first && raw.startsWith("\n") ? raw.slice(1) : raw
    first = false
    if (token.startsWith("\x01")) {
      current = []
      result.set(token.slice(1), current)
      first = true
    } else if (current !== undefined) {
      current.push(token)
    }
  }
  return result
}

/**
 * Lines added and deleted by each commit against its first parent (the empty tree for a root
 * commit), renames detected, binary files counting nothing: what Forgejo's diff reports.
 */
export const commitStats = (repo: string, shas: ReadonlyArray<string>): Effect.Effect<Map<string, CommitStats>> =>
  Effect.gen(function* () {
    if (shas.length === 0) return new Map()
    const out = yield* orDie(
      inRepo(repo, [
        "log",
        "--no-walk=unsorted",
        "--root",
        "-M",
        "--diff-merges=first-parent",
        "--numstat",
        "-z",
        "--format=%x01%H",
        "--end-of-options",
        ...shas,
        "--"
      ])
    )
    const result = new Map<string, CommitStats>()
    for (const [sha, tokens] of byCommit(out.stdout)) {
      let additions = 0
      let deletions = 0
      for (let i = 0; i < tokens.length; i++) {
        const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(tokens[i]!)
        if (match === null) continue
        additions += match[1] === "-" ? 0 : Number(match[1])
        deletions += match[2] === "-" ? 0 : Number(match[2])
        if (match[3] === "") i += 2 // a rename: the old and new paths follow
      }
      result.set(sha, { total: additions + deletions, additions, deletions })
    }
    return result
  })

const FILE_STATUS: Record<string, AffectedFile["status"]> = { A: "added", D: "removed", M: "modified" }

/**
 * The files each commit added, removed or modified (renames as a removal and an addition; merges
 * as git's combined diff), sorted by name: Forgejo's GetCommitFileStatus.
 */
export const commitFiles = (
  repo: string,
  shas: ReadonlyArray<string>
): Effect.Effect<Map<string, Array<AffectedFile>>> =>
  Effect.gen(function* () {
    if (shas.length === 0) return new Map()
    const out = yield* orDie(
      inRepo(repo, [
        "log",
        "--no-walk=unsorted",
        "--root",
        "--no-renames",
        "--diff-merges=combined",
        "--name-status",
        "-z",
        "--format=%x01%H",
        "--end-of-options",
        ...shas,
        "--"
      ])
    )
    const result = new Map<string, Array<AffectedFile>>()
    for (const [sha, tokens] of byCommit(out.stdout)) {
      const files: Array<AffectedFile> = []
      for (let i = 0; i < tokens.length; i++) {
        const status = tokens[i]!
        if (status === "") continue
        const filename = tokens[++i]
        const kind = FILE_STATUS[status[0]!]
        // Type changes and the like are left out, as Forgejo does.
        if (filename !== undefined && kind !== undefined) files.push({ filename, status: kind })
      }
      files.sort((a, b) => (a.filename < b.filename ? -1 : a.filename > b.filename ? 1 : 0))
      result.set(sha, files)
    }
    return result
  })

/** Splits a raw commit object into its signature (a `gpgsig` header) and the signed payload. */
export const splitSignature = (object: string): CommitSignature | undefined => {
  const end = object.indexOf("\n\n")
  const headers = (end < 0 ? object : object.slice(0, end)).split("\n")
  const body = end < 0 ? "" : object.slice(end)
  const kept: Array<string> = []
  let signature: Array<string> | undefined
  let inSignature = false
  for (const line of headers) {
    if (inSignature && line.startsWith(" ")) {
      signature!.push(line.slice(1))
      continue
    }
    inSignature = false
    if (signature === undefined && (line.startsWith("gpgsig ") || line.startsWith("gpgsig-sha256 "))) {
      signature = [line.slice(line.indexOf(" ") + 1)]
      inSignature = true
      continue
    }
    kept.push(line)
  }
  if (signature === undefined) return undefined
  return { signature: `${signature.join("\n")}\n`, payload: `${kept.join("\n")}${body}` }
}

/** The signature of each signed commit among `shas` (unsigned ones are absent), in one `cat-file`. */
export const commitSignatures = (
  repo: string,
  shas: ReadonlyArray<string>
): Effect.Effect<Map<string, CommitSignature>> =>
  Effect.gen(function* () {
    const result = new Map<string, CommitSignature>()
    const names = shas.filter(Git.isSha)
    if (names.length === 0) return result
    const input = `${names.join("\n")}\n`
    const out = (yield* orDie(Git.run(["cat-file", "--batch"], { cwd: repo, env: { GIT_DIR: repo }, input }))).stdout
    let at = 0
    while (at < out.length) {
      const eol = out.indexOf(10, at)
      if (eol < 0) break
      const [sha, type, size] = out.subarray(at, eol).toString("utf8").split(" ")
      if (size === undefined) {
        at = eol + 1 // "<name> missing"
        continue
      }
      const length = Number(size)
      const object = out.subarray(eol + 1, eol + 1 + length)
      at = eol + 1 + length + 1
      if (type !== "commit") continue
      const signed = splitSignature(object.toString("utf8"))
      if (signed !== undefined) result.set(sha!, signed)
    }
    return result
  })

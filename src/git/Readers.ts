// Reading objects out of a repository: paths, trees, blobs and commits, for the contents, raw and
// git-object routes. One-off commands go through `Git.run`, with paths validated here and passed
// after `--` with literal pathspecs, so a path is never an option nor a glob. Hot reads (revisions,
// trees, blobs) go through long-lived `cat-file` processes instead (BatchPool, below).

import { Deferred, Effect, Exit, Option } from "effect"
import { revisionProblem } from "../lib/Names.ts"
import * as Git from "./Git.ts"
import type { GitChild } from "./Spawner.ts"

/** Pathspecs are file names, not patterns (`*`, `:(glob)` mean themselves). */
const LITERAL = { env: { GIT_LITERAL_PATHSPECS: "1" } }

const inRepo = (repo: string, args: ReadonlyArray<string>) => Git.run(["-C", repo, ...args], LITERAL)

/**
 * A repository path as given in a URL, cleaned (no leading/trailing `/`), or the reason it is
 * refused: `..` and `.` segments, absolute paths, empty segments and control bytes could name
 * something outside the tree or confuse git.
 */
export const cleanPath = (raw: string): { readonly path: string } | { readonly problem: string } => {
  if (raw.includes("\0")) return { problem: "path must not contain NUL" }
  if (raw.startsWith("/")) return { problem: "path must be relative" }
  const trimmed = raw.replace(/\/+$/, "")
  if (trimmed === "") return { path: "" }
  const segments = trimmed.split("/")
  if (segments.some((s) => s === "" || s === "." || s === "..")) {
    return { problem: "path must not contain empty, '.' or '..' segments" }
  }
  return { path: trimmed }
}

export type EntryType = "blob" | "tree" | "commit"

export interface TreeEntry {
  /** Octal mode as git prints it: 100644, 100755, 120000, 040000, 160000. */
  readonly mode: string
  readonly type: EntryType
  readonly sha: string
  /** Blob size in bytes; 0 for trees and submodules. */
  readonly size: number
  /** Path from the repository root (ls-tree with a path) or from the listed tree. */
  readonly path: string
}

const parseLsTree = (out: Buffer): Array<TreeEntry> =>
  out
    .toString("utf8")
    .split("\0")
    .filter((line) => line.length > 0)
    .map((line) => {
      const tab = line.indexOf("\t")
      const [mode, type, sha, size] = line.slice(0, tab).split(/ +/)
      return {
        mode: mode!,
        type: type as EntryType,
        sha: sha!,
        size: size === "-" || size === undefined ? 0 : Number(size),
        path: line.slice(tab + 1)
      }
    })

/** The commit `revision` (branch, tag, sha…) names, or none. */
export const resolveCommit = (repo: string, revision: string) =>
  Effect.map(Git.revParse(repo, `${revision}^{commit}`), Option.filter(Git.isSha))

/** The tree `revision` (a tree sha, or anything naming a commit) names, or none. */
export const resolveTree = (repo: string, revision: string) =>
  Effect.map(Git.revParse(repo, `${revision}^{tree}`), Option.filter(Git.isSha))

/** The entries at each of `paths` in `commit` that exist (one `ls-tree` for all of them). */
export const entriesAt = (
  repo: string,
  commit: string,
  paths: ReadonlyArray<string>
): Effect.Effect<Map<string, TreeEntry>, Git.GitError> =>
  paths.length === 0
    ? Effect.succeed(new Map())
    : Effect.map(
        inRepo(repo, ["ls-tree", "-z", "--long", "--full-tree", commit, "--", ...paths]),
        (result) => new Map(parseLsTree(result.stdout).map((entry) => [entry.path, entry]))
      )

/** The entries of the tree `treeIsh` (recursively with `-r -t` when asked), in git's order. */
export const listTree = (repo: string, treeIsh: string, recursive = false) =>
  Effect.map(
    inRepo(repo, ["ls-tree", "-z", "--long", "--full-tree", ...(recursive ? ["-r", "-t"] : []), treeIsh]),
    (result) => parseLsTree(result.stdout)
  )

/** The latest commit reachable from `commit` that touched `path`, with its committer date. */
export const lastCommit = (repo: string, commit: string, path: string) =>
  Effect.map(inRepo(repo, ["log", "-1", "--format=%H %cI", commit, "--", ...(path === "" ? [] : [path])]), (result) => {
    const [sha, when] = result.stdout.toString("utf8").trim().split(" ")
    return sha === undefined || sha === "" ? undefined : { sha, when: when ?? "" }
  })

const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>) => magic.every((b, i) => bytes[i] === b)

/** A Content-Type for served file bytes: images by signature, UTF-8 text, else octet-stream. */
export const contentTypeOf = (bytes: Uint8Array): string => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes.subarray(8), [0x57, 0x45, 0x42, 0x50]))
    return "image/webp"
  const head = bytes.subarray(0, 8192)
  if (head.includes(0)) return "application/octet-stream"
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(head.length < bytes.length ? trimPartial(head) : head)
  } catch {
    return "application/octet-stream"
  }
  // SVG stays text/plain: served as an image it could run script in the forge's origin.
  return "text/plain; charset=utf-8"
}

/** Drops a multi-byte UTF-8 sequence cut at the end of a prefix, so the prefix still decodes. */
const trimPartial = (bytes: Uint8Array): Uint8Array => {
  const end = bytes.length
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = bytes[end - i]!
    if ((b & 0xc0) === 0xc0) return bytes.subarray(0, end - i)
    if ((b & 0x80) === 0) break
  }
  return bytes
}

// ---------------------------------------------------------------------------------------------
// Long-lived `git cat-file --batch` readers (measured: ~0.14 ms per object instead of a
// ~2 ms spawn), started by the spawner like every git process. One process per recently used repository, ended when idle or on shutdown; a
// `--batch-check` one beside it, started only when sizes without contents are asked for.

export interface BatchObject {
  /** The object's full name (what a revision like `refs/heads/main^{commit}` resolved to). */
  readonly sha: string
  readonly type: string
  readonly size: number
  /** The contents; empty for `--batch-check` answers. */
  readonly bytes: Buffer
}

interface Pending {
  readonly resolve: (value: BatchObject | undefined) => void
  readonly reject: (error: Error) => void
}

/** An answer's header; anything else is `<name> missing` or `<name> ambiguous`. */
const HEADER = /^([0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) (\d+)$/
const EMPTY = Buffer.alloc(0)

/** One `cat-file --batch` (or `--batch-check`) process: requests are answered in the order written. */
class BatchProcess {
  /** Undefined until git runs (it starts in the spawner); requests written meanwhile wait in `queued`. */
  private child: GitChild | undefined
  private queued: Array<string> = []
  private readonly pending: Array<Pending> = []
  /** Bytes received and not yet parsed; `later` holds chunks not joined yet while a big object arrives. */
  private buffer: Buffer = EMPTY
  private later: Array<Buffer> = []
  private laterBytes = 0
  /** How many bytes the answer being received needs in all (0: not known yet). */
  private needed = 0
  /** Takes no more requests (retired or ended). */
  closed = false
  private ended = false
  lastUsed = Date.now()

  readonly identity: string | undefined
  private readonly check: boolean
  private readonly onExit: (self: BatchProcess) => void

  constructor(dir: string, check: boolean, onExit: (self: BatchProcess) => void) {
    this.check = check
    this.onExit = onExit
    this.identity = Git.identityOf(dir)
    const mode = check ? "--batch-check" : "--batch"
    // GIT_DIR: the directory is the repository, never one found further up.
    void Effect.runPromise(Git.spawnStream(["cat-file", mode], { cwd: dir, env: { GIT_DIR: "." } })).then(
      (child) => this.attach(child, `git cat-file ${mode} in ${dir} exited`),
      (error: Error) => this.shutdown(error)
    )
  }

  private attach(child: GitChild, exited: string) {
    this.child = child
    if (this.ended) return void child.kill()
    child.stdout.on("data", (chunk: Buffer) => {
      // Joined once the answer is complete: joining every chunk would copy a big blob many times.
      this.later.push(chunk)
      this.laterBytes += chunk.length
      if (this.buffer.length + this.laterBytes < this.needed) return
      this.buffer =
        this.buffer.length === 0 && this.later.length === 1 ? chunk : Buffer.concat([this.buffer, ...this.later])
      this.later = []
      this.laterBytes = 0
      this.drain()
    })
    child.stderr.resume()
    child.stdin.on("error", () => {})
    const fail = (error: Error) => this.shutdown(error)
    child.on("error", fail)
    child.on("close", () => fail(new Error(exited)))
    for (const text of this.queued.splice(0)) child.stdin.write(text)
    if (this.closed) child.stdin.end()
  }

  private write(text: string) {
    if (this.child === undefined) this.queued.push(text)
    else this.child.stdin.write(text)
  }

  /** The objects `names` name, in order (`undefined` for a name git cannot resolve), in one write. */
  readMany(names: ReadonlyArray<string>): Promise<Array<BatchObject | undefined>> {
    this.lastUsed = Date.now()
    if (this.closed) return Promise.reject(new Error("cat-file reader is closed"))
    const answers = names.map(
      (_) => new Promise<BatchObject | undefined>((resolve, reject) => this.pending.push({ resolve, reject }))
    )
    this.write(names.length === 1 ? `${names[0]}\n` : `${names.join("\n")}\n`)
    return Promise.all(answers)
  }

  /** The object `name` names, or `undefined` when the repository does not have it. */
  read(name: string): Promise<BatchObject | undefined> {
    return this.readMany([name]).then((answers) => answers[0])
  }

  /** Parses complete answers: `<sha> <type> <size>\n[<bytes>\n]`, or `<name> missing\n`. */
  private drain() {
    for (;;) {
      this.needed = 0
      const eol = this.buffer.indexOf(10)
      if (eol < 0) return
      const header = HEADER.exec(this.buffer.toString("latin1", 0, eol))
      if (header === null) {
        this.buffer = this.buffer.subarray(eol + 1)
        this.pending.shift()?.resolve(undefined) // "missing" or "ambiguous"
        continue
      }
      const size = Number(header[3])
      if (this.check) {
        this.buffer = this.buffer.subarray(eol + 1)
        this.pending.shift()?.resolve({ sha: header[1]!, type: header[2]!, size, bytes: EMPTY })
        continue
      }
      if (this.buffer.length < eol + 1 + size + 1) {
        this.needed = eol + 1 + size + 1
        return
      }
      const bytes = Buffer.from(this.buffer.subarray(eol + 1, eol + 1 + size))
      this.buffer = this.buffer.subarray(eol + 1 + size + 1)
      this.pending.shift()?.resolve({ sha: header[1]!, type: header[2]!, size, bytes })
    }
  }

  /** Takes no more requests; git answers those already asked, then exits at the end of its input. */
  retire() {
    if (this.closed) return
    this.closed = true
    this.onExit(this)
    this.child?.stdin.end()
  }

  /** Ends the process now; requests still waiting fail. */
  shutdown(error = new Error("cat-file reader closed")) {
    for (const p of this.pending.splice(0)) p.reject(error)
    if (this.ended) return
    this.ended = true
    this.retire()
    this.child?.kill()
  }
}

/**
 * Why `name` may not be given to a reader as a revision, or `undefined`: one name per line, so no
 * line breaks or control bytes; the same rules as `rev-parse` had (no options, ranges, spaces);
 * and no commit-message searches (`:/text`, `rev^{/text}`), which walk the whole history while
 * every other request to the repository waits behind them.
 */
const nameProblem = (name: string): string | undefined =>
  revisionProblem(name) ??
  (name.startsWith(":/") || name.includes("^{/") ? "revision must not search commit messages" : undefined)

/** The readers by repository directory, at most `max` processes, each ended after `idleMs` unused. */
export class BatchPool {
  private readonly readers = new Map<string, BatchProcess>()
  private readonly timer: NodeJS.Timeout

  private readonly max: number
  private readonly idleMs: number

  constructor(max = 32, idleMs = 60_000) {
    this.max = max
    this.idleMs = idleMs
    this.timer = setInterval(() => this.evictIdle(), Math.max(1000, idleMs / 2))
    this.timer.unref()
  }

  private get(dir: string, check: boolean): BatchProcess {
    const key = check ? `${dir}\0check` : dir
    const existing = this.readers.get(key)
    // A stat per use: a process left in a deleted directory would answer "missing" for everything.
    if (existing !== undefined && !existing.closed && existing.identity === Git.identityOf(dir)) return existing
    // Retired, not killed: requests other callers already wrote to it still get their answers.
    existing?.retire()
    if (this.readers.size >= this.max) {
      const oldest = [...this.readers.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0]
      oldest?.retire()
    }
    const reader = new BatchProcess(dir, check, (self) => {
      if (this.readers.get(key) === self) this.readers.delete(key)
    })
    this.readers.set(key, reader)
    return reader
  }

  /**
   * Reads one object by full sha. Objects written since the reader started are found (git looks
   * for new packs before it answers "missing"); a directory deleted and created again gets a
   * fresh reader (see `get`).
   */
  read(dir: string, sha: string): Effect.Effect<Option.Option<BatchObject>, Git.GitError> {
    const args = ["cat-file", "--batch", sha]
    // A name with a newline would be two requests; callers pass checked shas only.
    if (!Git.isSha(sha)) return Effect.die(new Error(`not an object name: ${JSON.stringify(sha)}`))
    return Effect.tryPromise({
      try: () => this.get(dir, false).read(sha),
      catch: (error) => new Git.GitError({ args, exitCode: null, stderr: String(error) })
    }).pipe(Effect.map(Option.fromNullishOr))
  }

  /**
   * Reads the object a revision names (`refs/heads/main^{commit}`, `<sha>`…), none when it names
   * nothing or is not an acceptable revision (see `nameProblem`). Refs are read from disk on every
   * request, so a push or a deleted branch is seen by the very next one.
   */
  resolve(dir: string, name: string): Effect.Effect<Option.Option<BatchObject>, Git.GitError> {
    if (nameProblem(name) !== undefined) return Effect.succeedNone
    return Effect.tryPromise({
      try: () => this.get(dir, false).read(name),
      catch: (error) => new Git.GitError({ args: ["cat-file", "--batch", name], exitCode: null, stderr: String(error) })
    }).pipe(Effect.map(Option.fromNullishOr))
  }

  /** Type and size of each object by full sha (`--batch-check`, no contents), missing ones left out. */
  info(dir: string, shas: ReadonlyArray<string>): Effect.Effect<Map<string, BatchObject>, Git.GitError> {
    if (shas.length === 0) return Effect.succeed(new Map())
    const bad = shas.find((sha) => !Git.isSha(sha))
    if (bad !== undefined) return Effect.die(new Error(`not an object name: ${JSON.stringify(bad)}`))
    return Effect.tryPromise({
      try: () => this.get(dir, true).readMany(shas),
      catch: (error) => new Git.GitError({ args: ["cat-file", "--batch-check"], exitCode: null, stderr: String(error) })
    }).pipe(
      Effect.map((answers) => {
        const found = new Map<string, BatchObject>()
        for (const answer of answers) if (answer !== undefined) found.set(answer.sha, answer)
        return found
      })
    )
  }

  private evictIdle() {
    const cutoff = Date.now() - this.idleMs
    for (const reader of [...this.readers.values()]) if (reader.lastUsed < cutoff) reader.retire()
  }

  close() {
    clearInterval(this.timer)
    for (const reader of [...this.readers.values()]) reader.shutdown()
  }
}

// ---------------------------------------------------------------------------------------------
// Commits, trees and paths through the readers: no process spawned per request.

/** A tree entry without its size (which a tree object does not hold). */
export type PathEntry = Omit<TreeEntry, "size">

/** A commit named by a revision, and its root tree. */
export interface ResolvedCommit {
  readonly commit: string
  readonly tree: string
}

/** The commit `revision` (a full ref name, a sha…) names, through the pool; none if it names no commit. */
export const commitThrough = (
  pool: BatchPool,
  dir: string,
  revision: string
): Effect.Effect<Option.Option<ResolvedCommit>, Git.GitError> =>
  Effect.map(pool.resolve(dir, `${revision}^{commit}`), (found) => {
    if (Option.isNone(found) || found.value.type !== "commit") return Option.none()
    // A commit object starts with `tree <sha>\n`.
    const { bytes, sha } = found.value
    const tree = bytes.toString("latin1", 5, 5 + sha.length)
    if (bytes.toString("latin1", 0, 5) !== "tree " || !Git.isSha(tree)) return Option.none()
    return Option.some({ commit: sha, tree })
  })

/** The entries of a tree object (`<mode> <name>\0<raw id>` each), in git's order. */
export const parseTree = (bytes: Buffer, idBytes: number, prefix = ""): Array<PathEntry> => {
  const entries: Array<PathEntry> = []
  let at = 0
  while (at < bytes.length) {
    const space = bytes.indexOf(0x20, at)
    const nul = space < 0 ? -1 : bytes.indexOf(0, space + 1)
    if (nul < 0 || nul + 1 + idBytes > bytes.length) throw new Error("malformed tree object")
    // Trees store `40000`; ls-tree (and Forgejo) print `040000`.
    const mode = bytes.toString("latin1", at, space).padStart(6, "0")
    const name = bytes.toString("utf8", space + 1, nul)
    entries.push({
      mode,
      type: mode === "040000" ? "tree" : mode === "160000" ? "commit" : "blob",
      sha: bytes.toString("hex", nul + 1, nul + 1 + idBytes),
      path: prefix === "" ? name : `${prefix}/${name}`
    })
    at = nul + 1 + idBytes
  }
  return entries
}

/** The entries of the tree `sha` (paths under `prefix`), through the pool. */
export const treeThrough = (
  pool: BatchPool,
  dir: string,
  sha: string,
  prefix = ""
): Effect.Effect<Array<PathEntry>, Git.GitError> =>
  Effect.flatMap(pool.read(dir, sha), (found) =>
    Option.isSome(found) && found.value.type === "tree"
      ? Effect.try({
          try: () => parseTree(found.value.bytes, sha.length / 2, prefix),
          catch: (error) =>
            new Git.GitError({ args: ["cat-file", "--batch", sha], exitCode: null, stderr: String(error) })
        })
      : Effect.die(new Error(`tree ${sha} of ${dir} is missing`))
  )

/**
 * The entry at `path` (cleaned, see `cleanPath`) under the root tree `tree`, walking the trees
 * down the path; the root itself for "". None when a segment is missing or not a directory.
 */
export const entryThrough = (
  pool: BatchPool,
  dir: string,
  tree: string,
  path: string
): Effect.Effect<Option.Option<PathEntry>, Git.GitError> =>
  Effect.gen(function* () {
    if (path === "") return Option.some({ mode: "040000", type: "tree" as const, sha: tree, path: "" })
    const segments = path.split("/")
    let current: PathEntry = { mode: "040000", type: "tree", sha: tree, path: "" }
    for (const segment of segments) {
      if (current.type !== "tree") return Option.none()
      const entries = yield* treeThrough(pool, dir, current.sha, current.path)
      const name = current.path === "" ? segment : `${current.path}/${segment}`
      const next = entries.find((e) => e.path === name)
      if (next === undefined) return Option.none()
      current = next
    }
    return Option.some(current)
  })

export interface LastCommit {
  readonly sha: string
  readonly when: string
}

type Slot =
  | { readonly value: LastCommit | undefined }
  | { readonly pending: Deferred.Deferred<LastCommit | undefined, Git.GitError> }

/**
 * The last commit touching a path, by (repository, commit, path). A commit's history never
 * changes, so entries are never stale: the cache is only bounded (least recently used out first).
 * Concurrent misses for one key run one `git log`.
 */
export class LastCommitCache {
  private readonly slots = new Map<string, Slot>()
  private readonly max: number

  constructor(max = 20_000) {
    this.max = max
  }

  get size() {
    return this.slots.size
  }

  get(dir: string, commit: string, path: string): Effect.Effect<LastCommit | undefined, Git.GitError> {
    return Effect.suspend(() => {
      const key = `${dir}\0${commit}\0${path}`
      const hit = this.slots.get(key)
      if (hit !== undefined) {
        if ("pending" in hit) return Deferred.await(hit.pending)
        this.slots.delete(key)
        this.slots.set(key, hit)
        return Effect.succeed(hit.value)
      }
      const pending = Deferred.makeUnsafe<LastCommit | undefined, Git.GitError>()
      const slot: Slot = { pending }
      this.slots.set(key, slot)
      while (this.slots.size > this.max) this.slots.delete(this.slots.keys().next().value!)
      // Detached: a caller hanging up must not leave the others waiting on an interrupted lookup.
      const lookup = lastCommit(dir, commit, path).pipe(
        Effect.onExit((exit) =>
          Effect.sync(() => {
            if (this.slots.get(key) === slot) {
              if (Exit.isSuccess(exit)) this.slots.set(key, { value: exit.value })
              else this.slots.delete(key)
            }
            Deferred.doneUnsafe(pending, exit)
          })
        )
      )
      return Effect.andThen(Effect.forkDetach(lookup), Deferred.await(pending))
    })
  }
}

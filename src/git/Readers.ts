// Reading objects out of a repository: paths, trees, blobs and commits, for the contents, raw and
// git-object routes. Every call goes through `Git.run`; paths are validated here and passed after
// `--` with literal pathspecs, so a path is never an option nor a glob.
import { Effect, Option } from "effect"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Git from "./Git.ts"

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
  out.toString("utf8").split("\0").filter((line) => line.length > 0).map((line) => {
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

/** The entry at `path` in `commit` (the root tree itself when `path` is ""), or none. */
export const entryAt = (repo: string, commit: string, path: string): Effect.Effect<Option.Option<TreeEntry>, Git.GitError | Git.GitArgumentError> =>
  path === ""
    ? Effect.map(resolveTree(repo, commit), Option.map((sha) => ({ mode: "040000", type: "tree" as const, sha, size: 0, path: "" })))
    : Effect.map(
      inRepo(repo, ["ls-tree", "-z", "--long", "--full-tree", commit, "--", path]),
      (result) => Option.fromNullishOr(parseLsTree(result.stdout).find((e) => e.path === path))
    )

/** The entries at each of `paths` in `commit` that exist (one `ls-tree` for all of them). */
export const entriesAt = (repo: string, commit: string, paths: ReadonlyArray<string>): Effect.Effect<Map<string, TreeEntry>, Git.GitError> =>
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
  Effect.map(
    inRepo(repo, ["log", "-1", "--format=%H %cI", commit, "--", ...(path === "" ? [] : [path])]),
    (result) => {
      const [sha, when] = result.stdout.toString("utf8").trim().split(" ")
      return sha === undefined || sha === "" ? undefined : { sha, when: when ?? "" }
    }
  )

const startsWith = (bytes: Uint8Array, magic: ReadonlyArray<number>) => magic.every((b, i) => bytes[i] === b)

/** A Content-Type for served file bytes: images by signature, UTF-8 text, else octet-stream. */
export const contentTypeOf = (bytes: Uint8Array): string => {
  if (startsWith(bytes, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png"
  if (startsWith(bytes, [0xff, 0xd8, 0xff])) return "image/jpeg"
  if (startsWith(bytes, [0x47, 0x49, 0x46, 0x38])) return "image/gif"
  if (startsWith(bytes, [0x52, 0x49, 0x46, 0x46]) && startsWith(bytes.subarray(8), [0x57, 0x45, 0x42, 0x50])) return "image/webp"
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
  let end = bytes.length
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const b = bytes[end - i]!
    if ((b & 0xc0) === 0xc0) return bytes.subarray(0, end - i)
    if ((b & 0x80) === 0) break
  }
  return bytes
}

// ---------------------------------------------------------------------------------------------
// Long-lived `git cat-file --batch` readers (GIT-BACKEND.md: ~0.14 ms per object instead of a
// ~2 ms spawn). One process per recently used repository, ended when idle or on shutdown.

export interface BatchObject {
  readonly type: string
  readonly bytes: Buffer
}

interface Pending {
  readonly resolve: (value: BatchObject | undefined) => void
  readonly reject: (error: Error) => void
}

/** One `cat-file --batch` process: requests are answered in the order they were written. */
class BatchProcess {
  private readonly child: ChildProcessWithoutNullStreams
  private readonly pending: Array<Pending> = []
  private buffer: Buffer = Buffer.alloc(0)
  closed = false
  lastUsed = Date.now()

  private readonly onExit: (self: BatchProcess) => void

  constructor(dir: string, onExit: (self: BatchProcess) => void) {
    this.onExit = onExit
    this.child = spawn("git", ["-C", dir, "cat-file", "--batch"], { env: Git.gitEnv(), stdio: ["pipe", "pipe", "pipe"] })
    this.child.stdout.on("data", (chunk: Buffer) => {
      this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk])
      this.drain()
    })
    this.child.stderr.resume()
    this.child.stdin.on("error", () => {})
    const fail = (error: Error) => this.shutdown(error)
    this.child.on("error", fail)
    this.child.on("close", () => fail(new Error(`git cat-file --batch in ${dir} exited`)))
  }

  /** The object `name` (a full sha), or `undefined` when the repository does not have it. */
  read(name: string): Promise<BatchObject | undefined> {
    this.lastUsed = Date.now()
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new Error("cat-file reader is closed"))
      this.pending.push({ resolve, reject })
      this.child.stdin.write(`${name}\n`)
    })
  }

  /** Parses complete answers: `<sha> <type> <size>\n<bytes>\n`, or `<name> missing\n`. */
  private drain() {
    for (;;) {
      const eol = this.buffer.indexOf(10)
      if (eol < 0) return
      const header = this.buffer.subarray(0, eol).toString("utf8").split(" ")
      if (header.length !== 3) {
        this.buffer = this.buffer.subarray(eol + 1)
        this.pending.shift()?.resolve(undefined) // "missing" or "ambiguous"
        continue
      }
      const size = Number(header[2])
      if (this.buffer.length < eol + 1 + size + 1) return
      const bytes = Buffer.from(this.buffer.subarray(eol + 1, eol + 1 + size))
      this.buffer = this.buffer.subarray(eol + 1 + size + 1)
      this.pending.shift()?.resolve({ type: header[1]!, bytes })
    }
  }

  shutdown(error = new Error("cat-file reader closed")) {
    if (this.closed) return
    this.closed = true
    for (const p of this.pending.splice(0)) p.reject(error)
    this.child.stdin.end()
    this.child.kill()
    this.onExit(this)
  }
}

/** The readers by repository directory, at most `max` of them, each ended after `idleMs` unused. */
export class BatchPool {
  private readonly readers = new Map<string, BatchProcess>()
  private readonly timer: NodeJS.Timeout

  private readonly max: number
  private readonly idleMs: number

  constructor(max = 16, idleMs = 60_000) {
    this.max = max
    this.idleMs = idleMs
    this.timer = setInterval(() => this.evictIdle(), Math.max(1000, idleMs / 2))
    this.timer.unref()
  }

  private get(dir: string, fresh: boolean): BatchProcess {
    const existing = this.readers.get(dir)
    if (existing !== undefined && !existing.closed && !fresh) return existing
    existing?.shutdown()
    if (this.readers.size >= this.max) {
      const oldest = [...this.readers.values()].sort((a, b) => a.lastUsed - b.lastUsed)[0]
      oldest?.shutdown()
    }
    const reader = new BatchProcess(dir, (self) => {
      if (this.readers.get(dir) === self) this.readers.delete(dir)
    })
    this.readers.set(dir, reader)
    return reader
  }

  /**
   * Reads one object by full sha. A "missing" answer is asked again of a fresh process once: a
   * long-lived reader may sit in a directory that was deleted and created again since.
   */
  read(dir: string, sha: string): Effect.Effect<Option.Option<BatchObject>, Git.GitError> {
    const args = ["cat-file", "--batch", sha]
    // A name with a newline would be two requests; callers pass checked shas only.
    if (!Git.isSha(sha)) return Effect.die(new Error(`not an object name: ${JSON.stringify(sha)}`))
    return Effect.tryPromise({
      try: async () => (await this.get(dir, false).read(sha)) ?? (await this.get(dir, true).read(sha)),
      catch: (error) => new Git.GitError({ args, exitCode: null, stderr: String(error) })
    }).pipe(Effect.map(Option.fromNullishOr))
  }

  private evictIdle() {
    const cutoff = Date.now() - this.idleMs
    for (const reader of [...this.readers.values()]) if (reader.lastUsed < cutoff) reader.shutdown()
  }

  close() {
    clearInterval(this.timer)
    for (const reader of [...this.readers.values()]) reader.shutdown()
  }
}

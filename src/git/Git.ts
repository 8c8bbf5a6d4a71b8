// The only door to git: the `git` CLI, spawned without a shell, with `--` before any path.
// Everything Hearth does to repositories on disk goes through this module.

import { randomBytes } from "node:crypto"
import { lstatSync, readdirSync, statSync } from "node:fs"
import { mkdir, rename, rm } from "node:fs/promises"
import { dirname, join } from "node:path"
import { Context, Data, Effect, Option } from "effect"
import { branchNameProblem, refNameProblem, revisionProblem } from "../lib/Names.ts"
import { packagePath } from "../lib/PackageRoot.ts"
import { type GitChild, runHere, Spawner, spawnHere } from "./Spawner.ts"

export class GitError extends Data.TaggedError("GitError")<{
  readonly args: ReadonlyArray<string>
  readonly exitCode: number | null
  readonly stderr: string
}> {
  override get message() {
    return `git ${this.args.join(" ")} failed (exit ${this.exitCode}): ${this.stderr.trim()}`
  }
}

export interface RunOptions {
  /** Directory git runs in (`git -C`). */
  readonly cwd?: string | undefined
  /** Bytes written to git's standard input. */
  readonly input?: string | Uint8Array | undefined
  /** Extra environment (on top of a minimal one: no user config, no prompts). */
  readonly env?: Record<string, string> | undefined
  /**
   * Non-zero exit codes that are an answer rather than a failure: the result keeps what git
   * printed before it stopped (`git config --list` on a file it cannot parse to the end).
   */
  readonly answerCodes?: ReadonlyArray<number> | undefined
  /**
   * Standard output kept at most (bytes): past it git is stopped and the result holds what came
   * so far, with `truncated` set (a web view of a huge diff must not read it all into memory).
   */
  readonly maxOutput?: number | undefined
}

export interface RunResult {
  readonly stdout: Buffer
  readonly stderr: string
  /** 0, or one of the caller's `answerCodes`. */
  readonly exitCode: number
  /** Output was cut at `maxOutput` and git stopped. */
  readonly truncated?: boolean
}

/**
 * Configuration every git process Hearth runs carries, whatever a repository's own config says.
 *
 * `receive.fsckObjects`: receive-pack checks every object a push brings, as `git fsck --strict`
 * does (Forgejo leaves it off), so a tree with `.GIT`, `git~1`, `.g\u200Cit` or a symlinked
 * `.gitmodules` (src/git/Paths.ts refuses the same through the API), a `.gitmodules` whose
 * content could attack a cloner (src/git/Gitmodules.ts, likewise), a malformed commit or tag
 * never gets in: the pusher sees git's own message, the quarantined objects are dropped and no ref
 * moves. It lives here, in the environment of every git process, rather than in each
 * repository's config or on each receive-pack command line: all of Hearth's git goes through
 * `gitEnv` (smart HTTP and SSH pushes alike), so it holds for pushes to every repository, made
 * before this or since and however (init, fork copy, migration), and for any receive-pack added
 * later, and a repository's config file cannot turn it off (these entries are read after it).
 * Fetches (mirrors, migrations) are not checked: `fetch.fsckObjects` stays off.
 *
 * Three flaws that old tools wrote into real histories stay allowed, as GitLab (Gitaly) allows
 * them: a bad time zone, a missing space before the date, zero-padded tree modes. None of them
 * changes what a checkout writes.
 */
export const HEARTH_GIT_CONFIG: ReadonlyArray<readonly [key: string, value: string]> = [
  // A pull request's head (`refs/pull/{n}/head`) is Hearth's to move: pushes can neither update
  // nor delete it, nor see it advertised (Forgejo's `receive.hideRefs=refs/pull/`); fetching it works.
  ["receive.hideRefs", "refs/pull/"],
  // AGit: a push to `refs/for/<branch>` opens or updates a pull request instead of making that ref
  // (the proc-receive hook, src/git/ProcReceive.ts), with options (`git push -o topic=…`) — git
  // refuses push options unless the server advertises them.
  ["receive.procReceiveRefs", "refs/for/"],
  ["receive.advertisePushOptions", "true"],
  ["receive.fsckObjects", "true"],
  ["receive.fsck.badTimezone", "ignore"],
  ["receive.fsck.missingSpaceBeforeDate", "ignore"],
  ["receive.fsck.zeroPaddedFilemode", "ignore"]
]

/**
 * Environment for every git process: no user or system config, never ask on a terminal, and
 * `HEARTH_GIT_CONFIG`. Entries the caller passes as GIT_CONFIG_COUNT/KEY_n/VALUE_n (e.g. a hook
 * path, credentials) are kept, Hearth's follow them.
 */
export const gitEnv = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: "/nonexistent",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    LANG: "C",
    ...extra
  }
  const given = Number(extra.GIT_CONFIG_COUNT ?? "0")
  const first = Number.isInteger(given) && given > 0 ? given : 0
  HEARTH_GIT_CONFIG.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${first + i}`] = key
    env[`GIT_CONFIG_VALUE_${first + i}`] = value
  })
  env.GIT_CONFIG_COUNT = String(first + HEARTH_GIT_CONFIG.length)
  return env
}

/**
 * The niceness of the git processes `run` starts (0: the server's own). Work nobody waits on (the
 * mergeability checks a push queues) raises it, so that on a busy machine the scheduler gives the
 * requests' CPU first and the checks take what is left.
 */
export const Niceness = Context.Reference<number>("hearth/git/Niceness", { defaultValue: () => 0 })

/**
 * The process that starts git for the server (src/git/Spawner.ts): a spawn from the server holds
 * its event loop for a time that grows with its memory. `HEARTH_GIT_SPAWNER=0` starts git from the
 * server itself (the benchmarks' baseline).
 */
const spawner = process.env.HEARTH_GIT_SPAWNER === "0" ? undefined : new Spawner(packagePath("src/git/SpawnerMain.ts"))

/** The process id of the process that starts git's run-to-completion processes (this one without a spawner). */
export const spawnerPid = (): number => spawner?.pid() ?? process.pid

/** Runs `git <args>` to completion; fails with `GitError` on a non-zero exit (other than `answerCodes`). */
export const run = (args: ReadonlyArray<string>, options: RunOptions = {}): Effect.Effect<RunResult, GitError> =>
  Effect.flatMap(Niceness, (niceness) =>
    Effect.callback<RunResult, GitError>((resume, signal) => {
      const request = {
        args,
        cwd: options.cwd,
        env: gitEnv(options.env),
        input: options.input,
        maxOutput: options.maxOutput,
        niceness
      }
      void (spawner === undefined ? runHere(request, signal) : spawner.run(request, signal)).then((outcome) => {
        const stderr = outcome.stderr.toString("utf8")
        const { code } = outcome
        resume(
          outcome.error !== undefined
            ? Effect.fail(new GitError({ args, exitCode: null, stderr: outcome.error }))
            : outcome.truncated
              ? Effect.succeed({ stdout: outcome.stdout, stderr, exitCode: 0, truncated: true })
              : code === 0 || (code !== null && options.answerCodes?.includes(code) === true)
                ? Effect.succeed({ stdout: outcome.stdout, stderr, exitCode: code })
                : Effect.fail(new GitError({ args, exitCode: code, stderr }))
        )
      })
    })
  )

export interface StreamOptions {
  readonly cwd?: string | undefined
  readonly env?: Record<string, string> | undefined
  /** Whether git reads standard input (otherwise it gets none). */
  readonly stdin?: boolean | undefined
}

/**
 * Starts `git <args>` with its standard streams the caller's to pipe (clones, pushes, archives,
 * diffs): `close` says when it ended, `kill` stops it. Fails when git could not start.
 */
export const spawnStream = (
  args: ReadonlyArray<string>,
  options: StreamOptions = {}
): Effect.Effect<GitChild, GitError> => {
  const request = { args, cwd: options.cwd, env: gitEnv(options.env), stdin: options.stdin ?? true }
  return Effect.tryPromise({
    try: () => (spawner === undefined ? spawnHere(request) : spawner.stream(request)),
    catch: (error) => new GitError({ args, exitCode: null, stderr: String(error) })
  })
}

/** Creates an empty bare repository at `path` (parents included) with `defaultBranch` as HEAD. */
/**
 * `git init --bare`, made in a staging directory beside `path` and renamed into place: a reader
 * never finds a directory that is not yet a repository (the fuzz guard found a wiki's first page
 * read while another request was making the wiki: a 500). When `path` exists meanwhile, it is
 * initialised in place as before (git leaves an existing repository's content alone).
 */
export const initBare = (path: string, defaultBranch: string) =>
  Effect.gen(function* () {
    yield* Effect.promise(() => mkdir(dirname(path), { recursive: true }))
    const staging = `${path}.init-${randomBytes(6).toString("hex")}`
    const init = (dir: string) => run(["init", "--bare", "--quiet", `--initial-branch=${defaultBranch}`, "--", dir])
    yield* init(staging).pipe(Effect.onError(() => removeRepository(staging)))
    const placed = yield* Effect.promise(() =>
      rename(staging, path).then(
        () => true,
        () => false
      )
    )
    if (!placed) {
      yield* removeRepository(staging)
      yield* init(path)
    }
  })

/** Removes a repository directory and everything in it. */
export const removeRepository = (path: string) => Effect.promise(() => rm(path, { recursive: true, force: true }))

// ---------------------------------------------------------------------------------------------
// Names and validation

/** The all-zero object name: "must not exist" as an old value, "delete" as a new one. */
export const ZERO_SHA = "0000000000000000000000000000000000000000"

const SHA_RE = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/

/** A full object name (SHA-1 or SHA-256, lower-case hex). */
export const isSha = (value: string): boolean => SHA_RE.test(value)

/** A bad argument caught before git was spawned. */
export class GitArgumentError extends Data.TaggedError("GitArgumentError")<{ readonly message: string }> {}

/** `update-ref` refused because the ref was not at the expected old value (or is locked). */
export class RefConflict extends Data.TaggedError("RefConflict")<{
  readonly ref: string
  readonly message: string
}> {}

const check = (problem: string | undefined): Effect.Effect<void, GitArgumentError> =>
  problem === undefined ? Effect.void : Effect.fail(new GitArgumentError({ message: problem }))

// Every repository operation names the repository with GIT_DIR, so no path is ever an argument.
export const inRepo = (repo: string, args: ReadonlyArray<string>, options: Omit<RunOptions, "cwd"> = {}) =>
  run(args, { ...options, cwd: repo, env: { GIT_DIR: repo, ...options.env } })

const text = (result: RunResult) => result.stdout.toString("utf8").trim()

// ---------------------------------------------------------------------------------------------
// Repository operations

/** The object name `revision` resolves to, or none when it does not resolve. */
export const revParse = (
  repo: string,
  revision: string
): Effect.Effect<Option.Option<string>, GitError | GitArgumentError> =>
  Effect.andThen(
    check(revisionProblem(revision)),
    inRepo(repo, ["rev-parse", "--verify", "--quiet", "--end-of-options", revision]).pipe(
      Effect.map((result) => Option.some(text(result))),
      // --quiet: exit 1 with no output means "does not resolve"; anything else is a real failure.
      Effect.catchIf(
        (error) => error.exitCode === 1 && error.stderr.trim() === "",
        () => Effect.succeedNone
      )
    )
  )

export interface RefUpdate {
  /** Full name, e.g. `refs/heads/main`. */
  readonly ref: string
  /** `ZERO_SHA` deletes the ref. */
  readonly newSha: string
  /** `ZERO_SHA`: the ref must not exist yet. */
  readonly oldSha: string
}

/** Where a ref update is refused because the ref is not as expected (or is locked). */
const REF_CONFLICT =
  /but expected|reference already exists|cannot lock ref|unable to resolve reference|multiple updates/

/**
 * Compare-and-swap of several refs in one transaction: every `ref` moves from `oldSha` to `newSha`,
 * or none does. Fails with `RefConflict` when a ref is not at its expected old value (or is locked).
 * With `through`, the transaction goes to that repository's long-lived `update-ref` (the
 * Repository entity keeps one) instead of a process of its own.
 */
export const updateRefs = (
  repo: string,
  updates: ReadonlyArray<RefUpdate>,
  through?: RefTransactions
): Effect.Effect<void, GitError | GitArgumentError | RefConflict> =>
  Effect.gen(function* () {
    let input = ""
    for (const { ref, newSha, oldSha } of updates) {
      yield* check(refNameProblem(ref))
      if (!ref.startsWith("refs/")) return yield* new GitArgumentError({ message: "ref must start with 'refs/'" })
      if (!isSha(newSha) || !isSha(oldSha)) return yield* new GitArgumentError({ message: "invalid object name" })
      // --stdin -z: the ref and values are data, never parsed as options.
      input += newSha === ZERO_SHA ? `delete ${ref}\0${oldSha}\0` : `update ${ref}\0${newSha}\0${oldSha}\0`
    }
    if (input === "") return
    const done =
      through === undefined
        ? inRepo(repo, ["update-ref", "--stdin", "-z"], { input })
        : Effect.tryPromise({
            try: () => through.transact(repo, input),
            catch: (error) =>
              error instanceof GitError
                ? error
                : new GitError({ args: ["update-ref", "--stdin", "-z"], exitCode: null, stderr: String(error) })
          })
    yield* done.pipe(
      Effect.catchIf(
        (error) => REF_CONFLICT.test(error.stderr),
        (error) =>
          Effect.fail(new RefConflict({ ref: updates.map((u) => u.ref).join(", "), message: error.stderr.trim() }))
      )
    )
  })

/**
 * Which directory a long-lived process was started in (its device and inode): a repository
 * deleted (or moved) and made again at the same path is another one.
 */
export const identityOf = (dir: string): string | undefined => {
  try {
    const st = statSync(dir)
    return `${st.dev}:${st.ino}`
  } catch {
    return undefined
  }
}

/**
 * One repository's long-lived `git update-ref --stdin -z`, as the Repository entity keeps it: each
 * transaction is `start`, its updates, `prepare` (where git locks the refs and checks their old
 * values) and `commit`, one at a time; a ref write then costs no process start. git ends the
 * process when a transaction fails (its `fatal:` line is the error, as from a process of its own);
 * the next transaction starts a new one, as does one for another directory or for a repository
 * deleted and made again at the same path. Refs and objects are read from disk in each
 * transaction (git re-reads `packed-refs` when it changed and looks for new objects), so pushes
 * and in-process object writes between transactions are seen.
 */
export class RefTransactions {
  private current: RefProcess | undefined
  private queue: Promise<unknown> = Promise.resolve()

  /** Runs one transaction of `updates` (update-ref's `-z` commands) in `repo`; transactions queue. */
  transact(repo: string, updates: string): Promise<void> {
    const run = this.queue.then(() => this.once(repo, updates, true))
    this.queue = run.catch(() => undefined)
    return run
  }

  private async once(repo: string, updates: string, retry: boolean): Promise<void> {
    const process = this.processFor(repo)
    const answer = await process.run(updates)
    if (answer.ok) return
    if (this.current === process) this.close()
    // Ended before it read the transaction (it had exited meanwhile): nothing was done, try once more.
    if (retry && !answer.started) return this.once(repo, updates, false)
    throw new GitError({ args: ["update-ref", "--stdin", "-z"], exitCode: answer.code, stderr: answer.stderr })
  }

  private processFor(repo: string): RefProcess {
    const identity = identityOf(repo)
    const current = this.current
    if (current !== undefined && !current.ended && current.dir === repo && current.identity === identity) {
      // The most recently used last: the first is the one to end when too many are open.
      OPEN_REF_TRANSACTIONS.delete(this)
      OPEN_REF_TRANSACTIONS.add(this)
      return current
    }
    this.close()
    if (OPEN_REF_TRANSACTIONS.size >= MAX_OPEN_REF_TRANSACTIONS) OPEN_REF_TRANSACTIONS.values().next().value?.close()
    OPEN_REF_TRANSACTIONS.add(this)
    this.current = new RefProcess(repo, identity)
    return this.current
  }

  /**
   * Ends the process: git exits at the end of its input, after a transaction already written to
   * it (which still gets its answer); nothing is half-done between transactions.
   */
  close() {
    OPEN_REF_TRANSACTIONS.delete(this)
    this.current?.end()
    this.current = undefined
  }
}

/** One `update-ref --stdin -z` process and the transaction it is answering. */
class RefProcess {
  /** Undefined until git runs (it starts in the spawner); a transaction written meanwhile waits. */
  private child: GitChild | undefined
  private queued: string | undefined
  private out = ""
  private err = ""
  private settle: ((exit: { code: number | null } | undefined) => void) | undefined
  private closing = false
  ended = false
  readonly dir: string
  readonly identity: string | undefined

  constructor(dir: string, identity: string | undefined) {
    this.dir = dir
    this.identity = identity
    void Effect.runPromise(
      Effect.result(spawnStream(["update-ref", "--stdin", "-z"], { cwd: dir, env: { GIT_DIR: dir } }))
    ).then((started) => {
      if (started._tag === "Failure") {
        this.err += started.failure.stderr
        return this.exited(null)
      }
      this.attach(started.success)
    })
  }

  private attach(child: GitChild) {
    this.child = child
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", (chunk: string) => {
      this.out += chunk
      if (this.out.includes("commit: ok\n")) this.settle?.(undefined)
    })
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      this.err += chunk
    })
    child.stdin.on("error", () => {}) // it exited: "close" says how
    child.on("error", (error) => {
      this.err += String(error)
      this.exited(null)
    })
    child.on("close", (code) => this.exited(code))
    if (this.queued !== undefined) child.stdin.write(this.queued)
    this.queued = undefined
    if (this.closing) child.stdin.end()
  }

  private exited(code: number | null) {
    this.ended = true
    this.settle?.({ code })
  }

  /** Writes one transaction and waits for git's `commit: ok`, or for the process to end. */
  async run(
    updates: string
  ): Promise<{ readonly ok: true } | { ok: false; started: boolean; code: number | null; stderr: string }> {
    this.out = ""
    this.err = ""
    const exit = await new Promise<{ code: number | null } | undefined>((resolve) => {
      this.settle = resolve
      const transaction = `start\0${updates}prepare\0commit\0`
      if (this.ended) resolve({ code: null })
      else if (this.child === undefined) this.queued = transaction
      else this.child.stdin.write(transaction)
    })
    this.settle = undefined
    if (exit === undefined) return { ok: true }
    return { ok: false, started: this.out.includes("start: ok"), code: exit.code, stderr: this.err }
  }

  end() {
    this.closing = true
    this.child?.stdin.end()
  }
}

/**
 * The processes open at most across repositories (each holds three pipes): many repositories
 * written within an entity's idle time must not run the server out of file descriptors. Past it
 * the least recently used ends (a transaction already written to it completes: git reads its
 * input to the end); its repository's next write starts another.
 */
const MAX_OPEN_REF_TRANSACTIONS = 16
const OPEN_REF_TRANSACTIONS = new Set<RefTransactions>()

/** `updateRefs` for one ref. */
export const updateRef = (repo: string, ref: string, newSha: string, oldSha: string) =>
  updateRefs(repo, [{ ref, newSha, oldSha }])

export interface RefEntry {
  /** Full name, e.g. `refs/heads/main`. */
  readonly ref: string
  readonly sha: string
  /** The object type the ref points at: commit, tag (annotated), tree, blob. */
  readonly type: string
}

/** All refs (or those under `prefix`, e.g. `refs/heads/`), sorted by name. */
export const listRefs = (repo: string, prefix?: string): Effect.Effect<Array<RefEntry>, GitError | GitArgumentError> =>
  Effect.gen(function* () {
    if (
      prefix !== undefined &&
      (!prefix.startsWith("refs/") || refNameProblem(prefix.replace(/\/$/, "")) !== undefined)
    ) {
      return yield* new GitArgumentError({ message: "invalid ref prefix" })
    }
    const result = yield* inRepo(repo, [
      "for-each-ref",
      "--format=%(objectname) %(objecttype) %(refname)",
      ...(prefix === undefined ? [] : ["--", prefix])
    ])
    return text(result)
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => {
        const [sha, type, ...rest] = line.split(" ")
        return { sha: sha!, type: type!, ref: rest.join(" ") }
      })
  })

/** True when the repository has no refs at all (nothing was ever pushed or committed). */
export const isEmpty = (repo: string): Effect.Effect<boolean, GitError> =>
  Effect.map(inRepo(repo, ["for-each-ref", "--count=1", "--format=%(refname)"]), (result) => text(result) === "")

/**
 * Object storage in KiB, loose plus packed, as `git count-objects -v` counts it (size + size-pack),
 * read from the object directory without starting git (a push records it before its answer, and a
 * process costs more than the directory reads): the loose objects' disk usage (`on_disk_bytes`:
 * blocks of 512 bytes), each local pack with its index; alternates and quarantines are not counted.
 */
export const sizeKiB = (repo: string): Effect.Effect<number, GitError> =>
  Effect.tryPromise({
    try: async () => {
      const objects = join(repo, "objects")
      // Read synchronously: 257 small reads (most fan-out directories are empty or missing) cost
      // far less on the main thread than 257 round trips through the thread pool, which were most
      // of this in a merge's profile; and thousands of `lstat`s through the pool (mergeability
      // checks write their merged trees as loose objects) came back in bursts that held requests
      // for 5–20 ms (issue 19's profiles). So the work is done here, in slices of `SIZE_SLICE`
      // files with the event loop let through between them. A fan-out directory unchanged since
      // it was last counted is not listed again (`countedDirs`).
      let looseBytes = 0
      let sliced = 0
      const startedNs = BigInt(Date.now()) * 1_000_000n
      for (let i = 0; i < 256; i++) {
        const dir = join(objects, i.toString(16).padStart(2, "0"))
        const stat = statSync(dir, { bigint: true, throwIfNoEntry: false })
        if (stat === undefined) {
          countedDirs.delete(dir)
          continue
        }
        const counted = countedDirs.get(dir)
        if (counted !== undefined && counted.ino === stat.ino && counted.mtimeNs === stat.mtimeNs) {
          looseBytes += counted.bytes
          continue
        }
        let bytes = 0
        for (const name of listDir(dir)) {
          if (!LOOSE_NAME.test(name)) continue
          const st = lstatSync(join(dir, name), { throwIfNoEntry: false })
          if (st?.isFile() === true) bytes += st.blocks * 512
          if (++sliced % SIZE_SLICE === 0) await new Promise(setImmediate)
        }
        looseBytes += bytes
        // Kept only when the directory's last change is over a second older than this count: a
        // file added later in the same tick of the file system's clock would leave its time as it
        // was (git's "racy" index entries, the same way round).
        countedDirs.delete(dir)
        if (startedNs - stat.mtimeNs > 1_000_000_000n) {
          if (countedDirs.size >= COUNTED_DIRS) countedDirs.delete(countedDirs.keys().next().value!)
          countedDirs.set(dir, { ino: stat.ino, mtimeNs: stat.mtimeNs, bytes })
        }
      }
      const packDir = join(objects, "pack")
      let packed = 0
      for (const name of listDir(packDir)) {
        if (!name.endsWith(".idx")) continue
        const base = join(packDir, name.slice(0, -".idx".length))
        const idx = statSync(`${base}.idx`, { throwIfNoEntry: false })
        const pack = statSync(`${base}.pack`, { throwIfNoEntry: false })
        if (idx !== undefined && pack !== undefined) packed += idx.size + pack.size
      }
      return Math.floor(looseBytes / 1024) + Math.floor(packed / 1024)
    },
    catch: (cause) => new GitError({ args: ["count-objects", "-v"], exitCode: null, stderr: String(cause) })
  })

/**
 * The loose objects' disk usage of fan-out directories counted before, by path, with the
 * directory's inode and change time then: loose objects are never rewritten, so while a
 * directory's entries are the same (its time unchanged) so is its total. 64 repositories' worth.
 */
const countedDirs = new Map<string, { readonly ino: bigint; readonly mtimeNs: bigint; readonly bytes: number }>()
const COUNTED_DIRS = 256 * 64

/** Loose objects `sizeKiB` reads in one go (~0.5 ms) before it lets the event loop through. */
const SIZE_SLICE = 256

/** A directory's names; none when it does not exist. */
const listDir = (dir: string): Array<string> => {
  try {
    return readdirSync(dir)
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return []
    throw e
  }
}

/** A loose object's file name in its fan-out directory (SHA-1 or SHA-256). */
const LOOSE_NAME = /^(?:[0-9a-f]{38}|[0-9a-f]{62})$/

/** The branch HEAD points to (it may not exist yet in an empty repository), or none if HEAD is detached. */
export const headBranch = (repo: string): Effect.Effect<Option.Option<string>, GitError> =>
  inRepo(repo, ["symbolic-ref", "--quiet", "HEAD"]).pipe(
    Effect.map((result) => {
      const ref = text(result)
      return ref.startsWith("refs/heads/") ? Option.some(ref.slice("refs/heads/".length)) : Option.none()
    }),
    Effect.catchIf(
      (error) => error.exitCode === 1,
      () => Effect.succeedNone
    )
  )

/** Points HEAD at `refs/heads/<branch>` (the repository's default branch). */
export const setHeadBranch = (repo: string, branch: string): Effect.Effect<void, GitError | GitArgumentError> =>
  Effect.andThen(check(branchNameProblem(branch)), inRepo(repo, ["symbolic-ref", "HEAD", `refs/heads/${branch}`]))

/** Rewrites the commit-graph (with changed-path filters, which make path history queries fast). */
export const commitGraphWrite = (repo: string): Effect.Effect<void, GitError> =>
  Effect.asVoid(inRepo(repo, ["commit-graph", "write", "--reachable", "--changed-paths"]))

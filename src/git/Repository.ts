// The `Repository` entity: every git write Hearth makes to one repository (API commits, branch and
// tag changes, HEAD, creation, moves, removal, maintenance) is a message to that repository's
// entity, so they run one at a time per repository and in parallel across repositories
// (effect/cluster). Pushes write through
// `receive-pack` outside the entity; compare-and-swap ref updates keep both consistent.
// Handlers are idempotent or fail cleanly when replayed: refs only move from an expected old value.

import { existsSync } from "node:fs"
import { mkdir, rename } from "node:fs/promises"
import { dirname } from "node:path"
import { Cause, Context, Effect, Layer, Option, Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import * as Errors from "../http/Errors.ts"
import * as Git from "./Git.ts"
import * as GitData from "./GitData.ts"
import * as Readers from "./Readers.ts"
import * as Write from "./Write.ts"

/**
 * A write the entity refused, and why: the branch or file is missing (not-found), something moved
 * meanwhile (conflict), the request cannot be done (invalid), or git failed (failed). The HTTP
 * status is not the entity's business: `Errors.refusal` maps the reason (src/http/Errors.ts).
 */
export class WriteRejected extends Schema.TaggedError<WriteRejected>()("WriteRejected", {
  reason: Schema.Literals(["not-found", "conflict", "invalid", "failed"]),
  message: Schema.String
}) {}

const rejected = (reason: WriteRejected["reason"], message: string) => new WriteRejected({ reason, message })

/** The API error a refused write answers with. */
export const toApiError = (error: WriteRejected) => Errors.refusal(error.reason, error.message)

const Who = Schema.Struct({
  name: Schema.String,
  email: Schema.String,
  seconds: Schema.Number,
  offsetMinutes: Schema.Number
})

const FileOperation = Schema.Struct({
  operation: Schema.Literals(["create", "update", "delete"]),
  /** A cleaned repository path (Readers.cleanPath), never empty. */
  path: Schema.String,
  content: Schema.optional(Schema.Uint8Array),
  /** The blob the caller last saw at the path (update, delete). */
  sha: Schema.optional(Schema.String),
  /** update: the file's current path when it moves to `path`. */
  fromPath: Schema.optional(Schema.String),
  /** create: the entry's mode (a regular file unless said; a repository generated from a template keeps its modes). */
  mode: Schema.optional(Schema.Literals(["100644", "100755", "120000"]))
})
export type FileOperation = typeof FileOperation.Type

/** How a commit is signed with the instance key (Signing.ts): git's `-c` entries and environment. */
const SignWith = Schema.Struct({
  config: Schema.Array(Schema.Struct({ key: Schema.String, value: Schema.String })),
  env: Schema.Record(Schema.String, Schema.String)
})

const RefUpdate = Schema.Struct({ ref: Schema.String, newSha: Schema.String, oldSha: Schema.String })

const dir = Schema.String

const CommitFiles = Rpc.make("CommitFiles", {
  payload: {
    dir,
    /** The branch the commit builds on (it may not exist yet in an empty repository). */
    branch: Schema.String,
    /** Put the commit on this new branch instead of moving `branch`. */
    newBranch: Schema.optional(Schema.String),
    files: Schema.Array(FileOperation),
    message: Schema.String,
    author: Who,
    committer: Who,
    /** Sign the commit with the instance key ([repository.signing]). */
    sign: Schema.optional(SignWith)
  },
  success: Schema.Struct({ sha: Schema.String, parent: Schema.NullOr(Schema.String), branch: Schema.String }),
  error: WriteRejected
})

const UpdateRefs = Rpc.make("UpdateRefs", {
  payload: { dir, updates: Schema.Array(RefUpdate) },
  error: WriteRejected
})

const CreateTag = Rpc.make("CreateTag", {
  payload: { dir, name: Schema.String, target: Schema.String, message: Schema.String, tagger: Who },
  success: Schema.Struct({ sha: Schema.String }),
  error: WriteRejected
})

const SetHead = Rpc.make("SetHead", { payload: { dir, branch: Schema.String }, error: WriteRejected })
const Init = Rpc.make("Init", { payload: { dir, defaultBranch: Schema.String }, error: WriteRejected })
const Move = Rpc.make("Move", { payload: { dir, to: Schema.String }, error: WriteRejected })
const Remove = Rpc.make("Remove", { payload: { dir }, error: WriteRejected })
const Maintain = Rpc.make("Maintain", { payload: { dir }, error: WriteRejected })
/** Replaces the (empty) repository at `dir` with a copy of `from` whose objects are hard-linked. */
const CopyFrom = Rpc.make("CopyFrom", { payload: { dir, from: Schema.String }, error: WriteRejected })

/** One `git -c key=value`, passed through the environment (GIT_CONFIG_KEY_n) so it never shows in process arguments. */
const GitConfigEntry = Schema.Struct({ key: Schema.String, value: Schema.String })

/**
 * Fetches the branches and tags of a remote (pull mirrors, migrations) in one atomic ref update;
 * `prune` drops what the remote no longer has; `setHead` points HEAD at the remote's HEAD branch.
 * The URL carries no credentials: they come in `config` (http.extraHeader), never stored in the
 * repository. A failing remote is a 422 with git's message, and no ref has moved.
 */
const FetchFrom = Rpc.make("FetchFrom", {
  payload: {
    dir,
    url: Schema.String,
    config: Schema.Array(GitConfigEntry),
    prune: Schema.Boolean,
    setHead: Schema.Boolean,
    /** What to fetch; every branch and tag, forced, when absent (a mirror's sync). */
    refspecs: Schema.optionalKey(Schema.Array(Schema.String))
  },
  success: Schema.Struct({ head: Schema.NullOr(Schema.String) }),
  error: WriteRejected
})

/** Sets (or, with `message` null, removes) the note on a commit (refs/notes/commits). */
const SetNote = Rpc.make("SetNote", {
  payload: { dir, target: Schema.String, message: Schema.NullOr(Schema.String), who: Who },
  error: WriteRejected
})

/** Applies a patch to `branch` as one commit (on `newBranch` when given): src/git/GitData.ts. */
const ApplyPatch = Rpc.make("ApplyPatch", {
  payload: {
    dir,
    branch: Schema.String,
    newBranch: Schema.optional(Schema.String),
    patch: Schema.String,
    message: Schema.String,
    author: Who,
    committer: Who,
    sign: Schema.optional(SignWith)
  },
  success: Schema.Struct({ sha: Schema.String, parent: Schema.String, branch: Schema.String }),
  error: WriteRejected
})

export const Repository = Entity.make("Repository", [
  CommitFiles,
  UpdateRefs,
  CreateTag,
  SetHead,
  Init,
  Move,
  Remove,
  Maintain,
  CopyFrom,
  FetchFrom,
  SetNote,
  ApplyPatch
])

// ---------------------------------------------------------------------------------------------
// Handlers

const refConflict = (error: Git.RefConflict) =>
  rejected("conflict", `the branch changed while this change was being made, try again (${error.message})`)

/**
 * Git failing is a broken repository or a bug: logged in full, answered as a 500. Argument errors
 * were caught by the caller's validation, so they also mean a bug here.
 */
const guarded = <A>(
  name: string,
  effect: Effect.Effect<A, WriteRejected | Git.GitError | Git.GitArgumentError | Git.RefConflict>
) =>
  effect.pipe(
    Effect.catchTag("RefConflict", (e) => Effect.fail(refConflict(e))),
    Effect.catchTag("GitArgumentError", (e) => Effect.fail(rejected("invalid", e.message))),
    Effect.catchCause((cause) => {
      const failure = Cause.findErrorOption(cause)
      if (Option.isSome(failure) && failure.value._tag === "WriteRejected") return Effect.fail(failure.value)
      return Effect.andThen(
        Effect.logError(`repository write ${name} failed`, cause),
        Effect.fail(rejected("failed", `the repository could not be changed (${name})`))
      )
    })
  )

/** Every path and each of its parent directories, for one `ls-tree`. */
const withParents = (paths: ReadonlyArray<string>) => {
  const all = new Set<string>()
  for (const path of paths) {
    const parts = path.split("/")
    for (let i = 1; i <= parts.length; i++) all.add(parts.slice(0, i).join("/"))
  }
  return [...all]
}

type Known = { readonly type: Readers.EntryType; readonly mode: string; readonly sha: string } | null

/**
 * Checks each operation against the parent tree (and the operations before it) and turns them
 * into the file changes of one commit. The rules and messages follow Forgejo's file service.
 */
const plan = (entries: Map<string, Readers.TreeEntry>, files: ReadonlyArray<FileOperation>) =>
  Effect.gen(function* () {
    // What the operations so far made of each path (null: deleted), over the parent's tree.
    const overlay = new Map<string, Known>()
    const at = (path: string): Known => (overlay.has(path) ? overlay.get(path)! : (entries.get(path) ?? null))
    const changes: Array<Write.FileChange> = []

    const ensureCreatable = (path: string) =>
      Effect.gen(function* () {
        const parts = path.split("/")
        for (let i = 1; i < parts.length; i++) {
          const parent = parts.slice(0, i).join("/")
          const found = at(parent)
          if (found !== null && found.type !== "tree") {
            return yield* rejected(
              "invalid",
              `a file exists where you're trying to create a subdirectory [path: ${parent}]`
            )
          }
        }
        const existing = at(path)
        if (existing !== null) {
          return yield* rejected(
            "invalid",
            existing.type === "tree"
              ? `a directory exists where you're trying to create a file [path: ${path}]`
              : `repository file already exists [path: ${path}]`
          )
        }
      })

    const ensureFile = (path: string, sha: string | undefined) =>
      Effect.gen(function* () {
        const found = at(path)
        if (found === null) return yield* rejected("not-found", `repository file does not exist [path: ${path}]`)
        if (found.type !== "blob") return yield* rejected("invalid", `path is not a file [path: ${path}]`)
        if (sha !== undefined && sha.toLowerCase() !== found.sha) {
          return yield* rejected("invalid", `sha does not match [given: ${sha}, expected: ${found.sha}]`)
        }
        return found
      })

    const written = (path: string, mode: Write.FileMode) => {
      const parts = path.split("/")
      for (let i = 1; i < parts.length; i++)
        overlay.set(parts.slice(0, i).join("/"), { type: "tree", mode: "040000", sha: "" })
      overlay.set(path, { type: "blob", mode, sha: "" })
    }

    for (const file of files) {
      const content = file.content ?? new Uint8Array()
      if (file.operation === "create") {
        yield* ensureCreatable(file.path)
        const mode = file.mode ?? "100644"
        changes.push({ kind: "write", path: file.path, mode, content })
        written(file.path, mode)
      } else if (file.operation === "update") {
        const from = file.fromPath !== undefined && file.fromPath !== "" ? file.fromPath : file.path
        const current = yield* ensureFile(from, file.sha)
        const mode = (["100644", "100755", "120000"].includes(current.mode) ? current.mode : "100644") as Write.FileMode
        if (from !== file.path) {
          changes.push({ kind: "delete", path: from })
          overlay.set(from, null)
          yield* ensureCreatable(file.path)
        }
        changes.push({ kind: "write", path: file.path, mode, content })
        written(file.path, mode)
      } else {
        yield* ensureFile(file.path, file.sha)
        changes.push({ kind: "delete", path: file.path })
        overlay.set(file.path, null)
      }
    }
    return changes
  })

const headsRef = (branch: string) => `refs/heads/${branch}`

const commitFiles = (payload: typeof CommitFiles.payloadSchema.Type, refs: Git.RefTransactions) =>
  Effect.gen(function* () {
    const { dir } = payload
    const parent = Option.getOrUndefined(yield* Readers.resolveCommit(dir, headsRef(payload.branch)))
    if (parent === undefined && !(yield* Git.isEmpty(dir))) {
      return yield* rejected("not-found", `branch does not exist [name: ${payload.branch}]`)
    }
    const onNewBranch =
      payload.newBranch !== undefined && payload.newBranch !== "" && payload.newBranch !== payload.branch
    const target = onNewBranch ? payload.newBranch! : payload.branch
    if (onNewBranch && Option.isSome(yield* Readers.resolveCommit(dir, headsRef(target)))) {
      return yield* rejected("invalid", `branch already exists [name: ${target}]`)
    }
    const paths = payload.files.flatMap((f) =>
      f.fromPath !== undefined && f.fromPath !== "" ? [f.path, f.fromPath] : [f.path]
    )
    const entries = parent === undefined ? new Map() : yield* Readers.entriesAt(dir, parent, withParents(paths))
    const changes = yield* plan(entries, payload.files)
    const written = yield* Write.commit(dir, {
      parent,
      changes,
      message: payload.message,
      author: payload.author,
      committer: payload.committer
    })
    // The temporary ref keeps the unsigned commit; the branch gets the signed one.
    const made =
      payload.sign === undefined
        ? written
        : { sha: yield* GitData.signCommit(dir, written.sha, payload.sign), tmpRef: written.tmpRef }
    // The branch moves and the temporary ref goes in one transaction; if the branch moved since
    // we read it (a push), nothing changes and the temporary ref is dropped.
    yield* Git.updateRefs(
      dir,
      [
        { ref: headsRef(target), newSha: made.sha, oldSha: onNewBranch ? Git.ZERO_SHA : (parent ?? Git.ZERO_SHA) },
        { ref: made.tmpRef, newSha: Git.ZERO_SHA, oldSha: written.sha }
      ],
      refs
    ).pipe(Effect.tapError(() => Git.updateRef(dir, made.tmpRef, Git.ZERO_SHA, written.sha).pipe(Effect.ignore)))
    return { sha: made.sha, parent: parent ?? null, branch: target }
  })

const createTag = (payload: typeof CreateTag.payloadSchema.Type) =>
  Effect.gen(function* () {
    const ref = `refs/tags/${payload.name}`
    if (Option.isSome(yield* Git.revParse(payload.dir, ref))) {
      return yield* rejected("conflict", `tag already exists [name: ${payload.name}]`)
    }
    const sha =
      payload.message.trim() === ""
        ? payload.target
        : yield* Write.tagObject(payload.dir, { ...payload, tagger: payload.tagger })
    yield* Git.updateRef(payload.dir, ref, sha, Git.ZERO_SHA).pipe(
      Effect.catchTag("RefConflict", () =>
        Effect.fail(rejected("conflict", `tag already exists [name: ${payload.name}]`))
      )
    )
    return { sha }
  })

const init = (payload: typeof Init.payloadSchema.Type) =>
  // Replayed after success: the repository is already there and is left alone.
  existsSync(payload.dir) ? Effect.void : Git.initBare(payload.dir, payload.defaultBranch)

const move = (payload: typeof Move.payloadSchema.Type) =>
  Effect.tryPromise({
    try: async () => {
      if (!existsSync(payload.dir) && existsSync(payload.to)) return // replayed after success
      if (existsSync(payload.to)) throw new Error(`${payload.to} already exists`)
      await mkdir(dirname(payload.to), { recursive: true })
      await rename(payload.dir, payload.to)
    },
    catch: (cause) => rejected("failed", `the repository could not be moved: ${String(cause)}`)
  })

/**
 * `git clone --bare --local` into a staging directory beside `dir`, then swapped in: objects are
 * hard links (immutable files, so the copy shares no mutable state and costs almost no disk),
 * refs and HEAD are the source's. Run again after an interruption, it starts over.
 */
const copyFrom = (payload: typeof CopyFrom.payloadSchema.Type) =>
  Effect.gen(function* () {
    const staging = `${payload.dir}.copying`
    yield* Git.removeRepository(staging)
    yield* Git.run(["clone", "--bare", "--local", "--quiet", "--", payload.from, staging])
    // The source's path on this server is nobody's business.
    yield* Git.inRepo(staging, ["remote", "remove", "origin"]).pipe(Effect.ignore)
    yield* Git.removeRepository(payload.dir)
    yield* Effect.promise(() => rename(staging, payload.dir))
  })

/** `GIT_CONFIG_COUNT` and friends for `config`. */
export const gitConfigEnv = (
  config: ReadonlyArray<{ readonly key: string; readonly value: string }>
): Record<string, string> => {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(config.length) }
  config.forEach(({ key, value }, i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key
    env[`GIT_CONFIG_VALUE_${i}`] = value
  })
  return env
}

const fetchFrom = (payload: typeof FetchFrom.payloadSchema.Type) =>
  Effect.gen(function* () {
    const env = gitConfigEnv(payload.config)
    const remoteFailed = (error: Git.GitError) => rejected("invalid", error.stderr.trim() || error.message)
    yield* Git.inRepo(
      payload.dir,
      [
        "fetch",
        "--quiet",
        "--atomic",
        "--no-tags",
        "--no-write-fetch-head",
        ...(payload.prune ? ["--prune"] : []),
        "--",
        payload.url,
        ...(payload.refspecs ?? ["+refs/heads/*:refs/heads/*", "+refs/tags/*:refs/tags/*"])
      ],
      { env }
    ).pipe(Effect.mapError(remoteFailed))
    if (!payload.setHead) return { head: null }
    const listed = yield* Git.inRepo(payload.dir, ["ls-remote", "--symref", "--", payload.url, "HEAD"], { env }).pipe(
      Effect.mapError(remoteFailed)
    )
    const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(listed.stdout.toString("utf8"))?.[1]
    if (head === undefined || Option.isNone(yield* Git.revParse(payload.dir, `refs/heads/${head}`)))
      return { head: null }
    yield* Git.setHeadBranch(payload.dir, head)
    return { head }
  })

const setNote = (payload: typeof SetNote.payloadSchema.Type) =>
  Effect.gen(function* () {
    if (payload.message !== null)
      return yield* GitData.setNote(payload.dir, payload.target, payload.message, payload.who)
    if (!(yield* GitData.removeNote(payload.dir, payload.target, payload.who)))
      return yield* rejected("not-found", `no note on ${payload.target}`)
  })

const applyPatch = (payload: typeof ApplyPatch.payloadSchema.Type) =>
  Effect.gen(function* () {
    const { dir } = payload
    const parent = Option.getOrUndefined(yield* Readers.resolveCommit(dir, headsRef(payload.branch)))
    if (parent === undefined) return yield* rejected("not-found", `branch does not exist [name: ${payload.branch}]`)
    const onNewBranch =
      payload.newBranch !== undefined && payload.newBranch !== "" && payload.newBranch !== payload.branch
    const target = onNewBranch ? payload.newBranch! : payload.branch
    if (onNewBranch && Option.isSome(yield* Readers.resolveCommit(dir, headsRef(target)))) {
      return yield* rejected("invalid", `branch already exists [name: ${target}]`)
    }
    const sha = yield* GitData.commitPatch(dir, { ...payload, parent }).pipe(
      Effect.catchTag("PatchConflict", (e) =>
        Effect.fail(rejected("conflict", `the patch does not apply: ${e.message}`))
      )
    )
    yield* Git.updateRef(dir, headsRef(target), sha, onNewBranch ? Git.ZERO_SHA : parent)
    return { sha, parent, branch: target }
  })

export const RepositoryEntityLayer = Repository.toLayer(
  Effect.gen(function* () {
    // The repository's long-lived `update-ref --stdin` (Git.RefTransactions): a branch move costs no
    // process start. One per entity, so its transactions run one at a time like the entity's
    // messages; it ends with the entity (idle for `maxIdleTime`, or the server stopping).
    const refs = yield* Effect.acquireRelease(
      Effect.sync(() => new Git.RefTransactions()),
      (r) => Effect.sync(() => r.close())
    )
    // Before the directory goes away or moves: not left running in it.
    const closingRefs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
      Effect.andThen(
        Effect.sync(() => refs.close()),
        effect
      )
    return Repository.of({
      CommitFiles: ({ payload }) => guarded("CommitFiles", commitFiles(payload, refs)),
      UpdateRefs: ({ payload }) => guarded("UpdateRefs", Git.updateRefs(payload.dir, payload.updates, refs)),
      CreateTag: ({ payload }) => guarded("CreateTag", createTag(payload)),
      SetHead: ({ payload }) => guarded("SetHead", Git.setHeadBranch(payload.dir, payload.branch)),
      Init: ({ payload }) => guarded("Init", init(payload)),
      Move: ({ payload }) => guarded("Move", closingRefs(move(payload))),
      Remove: ({ payload }) => guarded("Remove", closingRefs(Git.removeRepository(payload.dir))),
      Maintain: ({ payload }) => guarded("Maintain", Git.commitGraphWrite(payload.dir)),
      CopyFrom: ({ payload }) => guarded("CopyFrom", closingRefs(copyFrom(payload))),
      FetchFrom: ({ payload }) => guarded("FetchFrom", fetchFrom(payload)),
      SetNote: ({ payload }) => guarded("SetNote", setNote(payload)),
      ApplyPatch: ({ payload }) => guarded("ApplyPatch", applyPatch(payload))
    })
  }),
  { maxIdleTime: "2 minutes" }
)

// ---------------------------------------------------------------------------------------------
// The door the rest of Hearth uses

/** Which repository a write is for: its id names the entity, `dir` the bare repository on disk. */
export interface RepositoryRef {
  readonly id: number
  readonly dir: string
  /** The entity's name when it is not the repository's id: a wiki has its own (src/wiki/Location.ts). */
  readonly entity?: string | undefined
}

export type CommitSpec = Omit<typeof CommitFiles.payloadSchema.Type, "dir">
export type TagSpec = Omit<typeof CreateTag.payloadSchema.Type, "dir">
export type FetchSpec = Omit<typeof FetchFrom.payloadSchema.Type, "dir">
export type PatchSpec = Omit<typeof ApplyPatch.payloadSchema.Type, "dir">

export class RepositoryWriter extends Context.Service<
  RepositoryWriter,
  {
    readonly commitFiles: (
      repo: RepositoryRef,
      spec: CommitSpec
    ) => Effect.Effect<{ readonly sha: string; readonly parent: string | null; readonly branch: string }, WriteRejected>
    readonly updateRefs: (
      repo: RepositoryRef,
      updates: ReadonlyArray<Git.RefUpdate>
    ) => Effect.Effect<void, WriteRejected>
    readonly createTag: (repo: RepositoryRef, spec: TagSpec) => Effect.Effect<string, WriteRejected>
    readonly setHead: (repo: RepositoryRef, branch: string) => Effect.Effect<void, WriteRejected>
    readonly init: (repo: RepositoryRef, defaultBranch: string) => Effect.Effect<void, WriteRejected>
    readonly move: (repo: RepositoryRef, to: string) => Effect.Effect<void, WriteRejected>
    readonly remove: (repo: RepositoryRef) => Effect.Effect<void, WriteRejected>
    readonly maintain: (repo: RepositoryRef) => Effect.Effect<void, WriteRejected>
    readonly copyFrom: (repo: RepositoryRef, from: string) => Effect.Effect<void, WriteRejected>
    readonly fetchFrom: (
      repo: RepositoryRef,
      spec: FetchSpec
    ) => Effect.Effect<{ readonly head: string | null }, WriteRejected>
    /** Sets the note on `target` (a full commit id); `message` null removes it (not-found when none). */
    readonly setNote: (
      repo: RepositoryRef,
      target: string,
      message: string | null,
      who: Write.Signature
    ) => Effect.Effect<void, WriteRejected>
    readonly applyPatch: (
      repo: RepositoryRef,
      spec: PatchSpec
    ) => Effect.Effect<{ readonly sha: string; readonly parent: string; readonly branch: string }, WriteRejected>
  }
>()("hearth/git/RepositoryWriter") {
  static readonly layer = Layer.effect(
    RepositoryWriter,
    Effect.gen(function* () {
      const clientFor = yield* Repository.client
      const entity = (repo: RepositoryRef) => clientFor(repo.entity ?? String(repo.id))
      // A full mailbox or an unassigned shard is the cluster failing, not the caller.
      const send = <A>(effect: Effect.Effect<A, WriteRejected | { readonly _tag: string }>) =>
        Effect.catchIf(
          effect,
          (e): e is Exclude<typeof e, WriteRejected> => e._tag !== "WriteRejected",
          (e) =>
            Effect.andThen(
              Effect.logError("repository write not delivered", e),
              Effect.fail(rejected("failed", "the repository is busy, try again"))
            )
        ) as Effect.Effect<A, WriteRejected>
      return RepositoryWriter.of({
        commitFiles: (repo, spec) => send(entity(repo).CommitFiles({ dir: repo.dir, ...spec })),
        updateRefs: (repo, updates) => send(entity(repo).UpdateRefs({ dir: repo.dir, updates })),
        createTag: (repo, spec) => Effect.map(send(entity(repo).CreateTag({ dir: repo.dir, ...spec })), (r) => r.sha),
        setHead: (repo, branch) => send(entity(repo).SetHead({ dir: repo.dir, branch })),
        init: (repo, defaultBranch) => send(entity(repo).Init({ dir: repo.dir, defaultBranch })),
        move: (repo, to) => send(entity(repo).Move({ dir: repo.dir, to })),
        remove: (repo) => send(entity(repo).Remove({ dir: repo.dir })),
        maintain: (repo) => send(entity(repo).Maintain({ dir: repo.dir })),
        copyFrom: (repo, from) => send(entity(repo).CopyFrom({ dir: repo.dir, from })),
        fetchFrom: (repo, spec) => send(entity(repo).FetchFrom({ dir: repo.dir, ...spec })),
        setNote: (repo, target, message, who) => send(entity(repo).SetNote({ dir: repo.dir, target, message, who })),
        applyPatch: (repo, spec) => send(entity(repo).ApplyPatch({ dir: repo.dir, ...spec }))
      })
    })
  )
}

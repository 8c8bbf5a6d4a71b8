// Reading files and git objects of a repository the caller may see (issue 3 item 6, read side).
// Git does the work (src/git/Readers.ts); this module picks the revision, checks paths and shas,
// and shapes Forgejo's responses (ContentsResponse, GitBlob, GitTreeResponse, Reference).
import { Context, Effect, Layer, Option } from "effect"
import type { Verification } from "../branches/Api.ts"
import { readCommits } from "../branches/Service.ts"
import { Settings } from "../config/Settings.ts"
import { pushed, ZERO_ID } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import * as Paths from "../git/Paths.ts"
import * as Readers from "../git/Readers.ts"
import { type FileOperation, RepositoryWriter, toApiError } from "../git/Repository.ts"
import { signWith } from "../git/Signing.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import * as Write from "../git/Write.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { branchNameProblem } from "../lib/Names.ts"
import { ProtectionService } from "../protection/Service.ts"
import { QuotaService } from "../quota/Service.ts"
import type { OpenedRepository } from "../repos/Assignment.ts"
import type { RepoAccess } from "../repos/Policy.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { gitIdentity } from "../users/Schema.ts"
import type { ChangeFilesOptions, ContentsResponse, FileCommitResponse } from "./Api.ts"

export interface RepoHandle {
  readonly owner: UserRow
  readonly repo: RepoRow
  /** The bare repository on disk. */
  readonly dir: string
  /** `{ROOT}api/v1/repos/{owner}/{repo}` */
  readonly api: string
  /** `{ROOT}{owner}/{repo}` */
  readonly html: string
  /** What the viewer may do with it. */
  readonly access: RepoAccess
}

/** A commit made through the API: the commit, and each changed file as it now is (null: deleted). */
export interface ChangeResult {
  readonly commit: FileCommitResponse
  readonly files: ReadonlyArray<ContentsResponse | null>
  /** The commit's signature check: the instance's when [repository.signing] signed it. */
  readonly verification: typeof Verification.Type
}

/** A revision the caller named (or the default branch), resolved to a commit. */
interface Revision {
  readonly name: string
  readonly kind: "branch" | "tag" | "commit"
  readonly commit: string
}

/** A revision resolved for reading: the commit and its root tree. */
interface ReadRevision extends Revision {
  readonly tree: string
}

export interface FileBytes {
  readonly name: string
  readonly bytes: Buffer
}

export interface TreeQuery {
  readonly recursive: boolean
  readonly page: number
  readonly perPage: number
}

/** Forgejo's [api] DEFAULT_GIT_TREES_PER_PAGE. */
export const DEFAULT_TREE_PAGE = 1000

type ReadError = Errors.NotFound | Errors.ValidationFailed | Errors.BadRequest
type ChangeError =
  | Errors.NotFound
  | Errors.ValidationFailed
  | Errors.Forbidden
  | Errors.Conflict
  | Errors.Locked
  | Errors.InternalError
  | Errors.PayloadTooLarge

/** Git failing on a checked argument is a bug or a broken repository: a 500, not a client error. */
const orDie = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/")

export class ContentsService extends Context.Service<
  ContentsService,
  {
    /** The repository the assignment opened (CurrentRepo), as the reads and writes below take it. */
    readonly handle: (opened: OpenedRepository) => RepoHandle
    /** A file, symlink or submodule entry, or a directory's entries. */
    readonly contents: (
      handle: RepoHandle,
      rawPath: string,
      ref: string | undefined
    ) => Effect.Effect<ContentsResponse | ReadonlyArray<ContentsResponse>, ReadError>
    /** The bytes of the blob at a path (404 for directories and submodules). */
    readonly file: (handle: RepoHandle, rawPath: string, ref: string | undefined) => Effect.Effect<FileBytes, ReadError>
    readonly blob: (
      handle: RepoHandle,
      sha: string
    ) => Effect.Effect<{ readonly sha: string; readonly bytes: Buffer }, ReadError>
    readonly tree: (
      handle: RepoHandle,
      revision: string,
      query: TreeQuery
    ) => Effect.Effect<
      {
        readonly sha: string
        readonly entries: ReadonlyArray<Readers.TreeEntry>
      },
      ReadError
    >
    /**
     * One commit changing files (POST/PUT/DELETE /contents/{path}, POST /contents), made by the
     * repository's entity. Everything is checked before git is touched; a refused change changes nothing.
     * The route's rule (write on code, not archived, not a mirror: Assignment.ts) was checked before.
     */
    readonly change: (
      handle: RepoHandle,
      doer: Principal,
      options: ChangeFilesOptions
    ) => Effect.Effect<ChangeResult, ChangeError>
    /**
     * The commit a full revision names (`refs/heads/x`, `refs/tags/x`, a full or short id) and its
     * root tree, through the long-lived reader; none when it names no commit. The web's views,
     * whose URLs say whether a name is a branch, a tag or a commit, resolve with it.
     */
    readonly commitOf: (handle: RepoHandle, revision: string) => Effect.Effect<Option.Option<Readers.ResolvedCommit>>
    /** The entry at a cleaned path (Readers.cleanPath) under a root tree (the root for ""), none when missing. */
    readonly entryAt: (
      handle: RepoHandle,
      tree: string,
      path: string
    ) => Effect.Effect<Option.Option<Readers.PathEntry>>
    /** The last commit before or at `commit` (a full id) that changed `path` (cached, as the listings' are). */
    readonly lastCommit: (
      handle: RepoHandle,
      commit: string,
      path: string
    ) => Effect.Effect<Readers.LastCommit | undefined>
    /** Refs whose full name starts with `refs/{filter}` (all refs without a filter). */
    readonly refs: (
      handle: RepoHandle,
      filter: string | undefined
    ) => Effect.Effect<ReadonlyArray<Git.RefEntry>, ReadError>
  }
>()("hearth/ContentsService") {
  static readonly layer = Layer.effect(
    ContentsService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const events = yield* EventHub
      const writer = yield* RepositoryWriter
      const quota = yield* QuotaService
      const protection = yield* ProtectionService
      const signing = yield* CommitSigner
      const root = settings.server.ROOT_URL
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => new Readers.BatchPool()),
        (p) => Effect.sync(() => p.close())
      )
      const lastCommits = new Readers.LastCommitCache()

      /** A blob's bytes through the repository's long-lived reader (its sha came from git itself). */
      const blobBytes = (handle: RepoHandle, sha: string) =>
        Effect.flatMap(orDie(pool.read(handle.dir, sha)), (found) =>
          Option.isSome(found) && found.value.type === "blob"
            ? Effect.succeed(found.value.bytes)
            : Effect.die(new Error(`blob ${sha} listed in a tree of ${handle.dir} is missing`))
        )

      const handle = ({ owner, repo, path: dir, access }: OpenedRepository): RepoHandle => {
        const path = `${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`
        return { owner, repo, dir, access, api: `${root}api/v1/repos/${path}`, html: `${root}${path}` }
      }

      const pathOf = (raw: string) => {
        const cleaned = Readers.cleanPath(raw)
        return "problem" in cleaned
          ? Effect.fail(Errors.validationFailed(cleaned.problem))
          : Effect.succeed(cleaned.path)
      }

      /**
       * Branch first, then tag, then any commit-ish (a sha); unknown or malformed → 404. Read
       * through the long-lived reader, which reads refs from disk each time: no process per request.
       */
      const revision = (handle: RepoHandle, ref: string | undefined) =>
        Effect.gen(function* () {
          const name = ref === undefined || ref === "" ? handle.repo.defaultBranch : ref
          const tries = [
            ["branch", `refs/heads/${name}`],
            ["tag", `refs/tags/${name}`],
            ["commit", name]
          ] as const
          for (const [kind, candidate] of tries) {
            const found = yield* orDie(Readers.commitThrough(pool, handle.dir, candidate))
            if (Option.isSome(found))
              return { name, kind, commit: found.value.commit, tree: found.value.tree } satisfies ReadRevision
          }
          return yield* Errors.notFound()
        })

      const describe = (
        handle: RepoHandle,
        rev: Revision,
        entry: Readers.TreeEntry,
        withContent: boolean,
        knownLast?: { readonly sha: string; readonly when: string },
        /** The blob's bytes when the caller already read them. */
        bytes?: Buffer
      ) =>
        Effect.gen(function* () {
          const type =
            entry.type === "tree"
              ? "dir"
              : entry.type === "commit"
                ? "submodule"
                : entry.mode === "120000"
                  ? "symlink"
                  : "file"
          const last = knownLast ?? (yield* orDie(lastCommits.get(handle.dir, rev.commit, entry.path)))
          const self = `${handle.api}/contents/${encodePath(entry.path)}?ref=${encodeURIComponent(rev.name)}`
          const git = `${handle.api}/git/${entry.type === "tree" ? "trees" : "blobs"}/${entry.sha}`
          const html = `${handle.html}/src/${rev.kind}/${encodePath(rev.name)}/${encodePath(entry.path)}`
          let content: string | null = null
          let target: string | null = null
          if (type === "file" && withContent)
            content = (bytes ?? (yield* blobBytes(handle, entry.sha))).toString("base64")
          if (type === "symlink") target = (bytes ?? (yield* blobBytes(handle, entry.sha))).toString("utf8")
          return {
            name: entry.path.slice(entry.path.lastIndexOf("/") + 1),
            path: entry.path,
            sha: entry.sha,
            last_commit_sha: last?.sha ?? "",
            last_commit_when: last?.when ?? "",
            type,
            size: entry.size,
            encoding: content === null ? null : "base64",
            content,
            target,
            url: self,
            html_url: html,
            git_url: git,
            download_url:
              type === "file" || type === "symlink"
                ? `${handle.html}/raw/${rev.kind}/${encodePath(rev.name)}/${encodePath(entry.path)}`
                : null,
            submodule_git_url: null,
            _links: { self, git, html }
          } satisfies ContentsResponse
        })

      /** The entry at `path`, walking the trees through the long-lived reader (sizes not known yet). */
      const entryOf = (handle: RepoHandle, rev: ReadRevision, path: string) =>
        Effect.flatMap(orDie(Readers.entryThrough(pool, handle.dir, rev.tree, path)), (found) =>
          Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound())
        )

      const contents = (handle: RepoHandle, rawPath: string, ref: string | undefined) =>
        Effect.gen(function* () {
          const path = yield* pathOf(rawPath)
          const rev = yield* revision(handle, ref)
          const entry = yield* entryOf(handle, rev, path)
          if (entry.type === "blob") {
            const bytes = yield* blobBytes(handle, entry.sha)
            return yield* describe(handle, rev, { ...entry, size: bytes.length }, true, undefined, bytes)
          }
          if (entry.type !== "tree") return yield* describe(handle, rev, { ...entry, size: 0 }, true)
          const children = yield* orDie(Readers.treeThrough(pool, handle.dir, entry.sha, path))
          // Blob sizes from `--batch-check`, without reading the contents a listing does not show.
          const sizes = yield* orDie(
            pool.info(
              handle.dir,
              children.filter((c) => c.type === "blob").map((c) => c.sha)
            )
          )
          return yield* Effect.forEach(
            children,
            (child) =>
              describe(
                handle,
                rev,
                { ...child, size: child.type === "blob" ? (sizes.get(child.sha)?.size ?? 0) : 0 },
                false
              ),
            { concurrency: 4 }
          )
        })

      const file = (handle: RepoHandle, rawPath: string, ref: string | undefined) =>
        Effect.gen(function* () {
          const path = yield* pathOf(rawPath)
          const rev = yield* revision(handle, ref)
          const entry = yield* entryOf(handle, rev, path)
          if (entry.type !== "blob") return yield* Errors.notFound()
          return { name: path.slice(path.lastIndexOf("/") + 1), bytes: yield* blobBytes(handle, entry.sha) }
        })

      const checkSha = (sha: string) =>
        Git.isSha(sha.toLowerCase())
          ? Effect.succeed(sha.toLowerCase())
          : Effect.fail(Errors.badRequest(`invalid sha: ${JSON.stringify(sha)}`))

      const blob = (handle: RepoHandle, rawSha: string) =>
        Effect.gen(function* () {
          const sha = yield* checkSha(rawSha)
          const found = yield* orDie(pool.read(handle.dir, sha))
          if (Option.isNone(found) || found.value.type !== "blob") return yield* Errors.notFound()
          return { sha, bytes: found.value.bytes }
        })

      const tree = (handle: RepoHandle, rev: string, query: TreeQuery) =>
        Effect.gen(function* () {
          if (rev === "") return yield* Errors.badRequest("sha not provided")
          const sha = yield* Readers.resolveTree(handle.dir, rev).pipe(
            Effect.catchTag("GitArgumentError", (e) => Effect.fail(Errors.badRequest(e.message))),
            orDieGit
          )
          if (Option.isNone(sha)) return yield* Errors.notFound()
          const entries = yield* orDie(Readers.listTree(handle.dir, sha.value, query.recursive))
          return { sha: sha.value, entries }
        })

      const refs = (handle: RepoHandle, filter: string | undefined) =>
        Effect.gen(function* () {
          const all = yield* orDie(Git.listRefs(handle.dir))
          // `/git/refs` (repoListAllGitRefs, served by this wildcard route): Forgejo's
          // getGitRefsInternal answers 404 rather than an empty list for a repository without refs.
          if (all.length === 0) return yield* Errors.notFound()
          if (filter === undefined || filter === "") return all
          const prefix = `refs/${filter.replace(/^refs\//, "")}`
          // Forgejo matches by plain prefix: `heads/ma` finds refs/heads/main.
          const matching = all.filter((r) => r.ref.startsWith(prefix))
          if (matching.length === 0) return yield* Errors.notFound()
          return matching
        })

      const change = (handle: RepoHandle, doer: Principal, options: ChangeFilesOptions) =>
        Effect.gen(function* () {
          // Every commit adds objects, a deleting one too: charged to the repository's owner.
          yield* quota.enforce(handle.owner, "size:repos:all")
          const request = yield* checkChange(handle, gitIdentity(settings, doer.user), options)
          // Branch protection of the branch the commit lands on (Forgejo's `VerifyBranchProtection`).
          // API commits are signed by the instance when [repository.signing] CRUD_ACTIONS says so.
          const sign = yield* signing.decide("CRUD_ACTIONS", {
            doer: doer.user,
            repoPath: handle.dir,
            parent: `refs/heads/${request.branch}`
          })
          yield* protection.checkCommit(
            handle,
            doer.user,
            request.newBranch ?? request.branch,
            request.files.flatMap((f) => (f.fromPath === undefined ? [f.path] : [f.path, f.fromPath])),
            sign !== undefined
          )
          const made = yield* writer
            .commitFiles({ id: handle.repo.id, dir: handle.dir }, { ...request, ...signWith(sign) })
            .pipe(Effect.mapError(toApiError))
          const written = request.files.filter((f) => f.operation !== "delete").map((f) => f.path)
          // A commit on a new branch made the branch; otherwise it moved it on from its parent.
          const before = made.branch === request.branch ? (made.parent ?? ZERO_ID) : ZERO_ID
          const branchMove = { ref: `refs/heads/${made.branch}`, before, after: made.sha }
          // Three independent git reads (and a database write): side by side, not one after another.
          const [[commit, ...parents], entries] = yield* Effect.all(
            [
              readCommits(handle.dir, [made.sha, ...(made.parent === null ? [] : [made.parent])]),
              orDie(Readers.entriesAt(handle.dir, made.sha, written)),
              events.publish(pushed(handle.owner, handle.repo, doer.user, "api", [branchMove]))
            ],
            { concurrency: "unbounded" }
          )
          if (commit === undefined) return yield* Effect.die(new Error(`commit ${made.sha} just made is missing`))
          const rev: Revision = { name: made.branch, kind: "branch", commit: made.sha }
          const last = { sha: made.sha, when: commit.committer.date }
          const files = yield* Effect.forEach(request.files, (f) => {
            const entry = f.operation === "delete" ? undefined : entries.get(f.path)
            return entry === undefined ? Effect.succeed(null) : describe(handle, rev, entry, true, last)
          })
          const meta = (sha: string, created: string, kind: "commits" | "trees") => ({
            url: `${handle.api}/git/${kind}/${sha}`,
            sha,
            created
          })
          return {
            commit: {
              ...meta(commit.sha, commit.committer.date, "commits"),
              html_url: `${handle.html}/commit/${commit.sha}`,
              author: commit.author,
              committer: commit.committer,
              parents: parents.map((p) => meta(p.sha, p.committer.date, "commits")),
              message: commit.message,
              tree: meta(commit.tree, commit.committer.date, "trees")
            },
            files,
            verification: yield* signing.verifyCommit(handle.dir, made.sha)
          } satisfies ChangeResult
        })

      return ContentsService.of({
        handle,
        contents,
        file,
        blob,
        tree,
        commitOf: (handle, revision) => orDie(Readers.commitThrough(pool, handle.dir, revision)),
        entryAt: (handle, tree, path) => orDie(Readers.entryThrough(pool, handle.dir, tree, path)),
        lastCommit: (handle, commit, path) => orDie(lastCommits.get(handle.dir, commit, path)),
        refs,
        change
      })
    })
  )
}

/** Keeps the client errors, turns git failures into defects. */
const orDieGit = <A, E>(effect: Effect.Effect<A, E | Git.GitError>): Effect.Effect<A, Exclude<E, Git.GitError>> =>
  Effect.catchTag(effect as Effect.Effect<A, Git.GitError>, "GitError", (e) => Effect.die(e)) as Effect.Effect<
    A,
    Exclude<E, Git.GitError>
  >

// ---------------------------------------------------------------------------------------------
// Checking a change request before anything is written

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

/** Base64 as Go's decoder reads it (line breaks ignored); undefined when it is not base64. */
const decodeBase64 = (text: string): Uint8Array | undefined => {
  const compact = text.replace(/[\r\n]/g, "")
  if (compact.length % 4 !== 0 || !BASE64.test(compact)) return undefined
  return Buffer.from(compact, "base64")
}

/** Forgejo's default message: "Add a, b", "Update c", "Delete d", one line each. */
const defaultMessage = (files: ReadonlyArray<{ readonly operation: string; readonly path: string }>) =>
  (["create", "update", "delete"] as const)
    .flatMap((operation) => {
      const paths = files.filter((f) => f.operation === operation).map((f) => f.path)
      const verb = { create: "Add", update: "Update", delete: "Delete" }[operation]
      return paths.length === 0 ? [] : [`${verb} ${paths.join(", ")}`]
    })
    .join("\n")

const parseDate = (value: string | undefined, field: string) => {
  if (value === undefined || value === "") return Effect.succeed(new Date())
  const date = new Date(value)
  return Number.isNaN(date.getTime()) || !/^\d{4}-\d{2}-\d{2}T/.test(value)
    ? Effect.fail(Errors.validationFailed(`dates.${field}: invalid time ${JSON.stringify(value)}, expected RFC 3339`))
    : Effect.succeed(date)
}

type Identity = { readonly name?: string | undefined; readonly email?: string | undefined }

/** What every commit made through the API takes besides its changes (Forgejo's file and patch options). */
export interface CommitOptions {
  readonly branch?: string | undefined
  readonly new_branch?: string | undefined
  readonly message?: string | undefined
  readonly author?: Identity | undefined
  readonly committer?: Identity | undefined
  readonly dates?: { readonly author?: string | undefined; readonly committer?: string | undefined } | undefined
  readonly signoff?: boolean | undefined
}

/**
 * The branch, message and signatures of a commit through the API (the contents API, diffpatch),
 * checked: 422 for a bad branch name, identity or date. `doerIdentity` is who the commit is by when
 * the body names no author or committer (`gitIdentity`); `defaultMessage` when it has no message.
 */
export const commitSpec = (
  handle: RepoHandle,
  doerIdentity: { readonly name: string; readonly email: string },
  options: CommitOptions,
  defaultMessage: string
) =>
  Effect.gen(function* () {
    const branch = options.branch !== undefined && options.branch !== "" ? options.branch : handle.repo.defaultBranch
    for (const [field, name] of [
      ["branch", branch],
      ["new_branch", options.new_branch]
    ] as const) {
      if (name === undefined || name === "") continue
      const problem = branchNameProblem(name)
      if (problem !== undefined) return yield* Errors.validationFailed(`${field}: ${problem}`)
    }
    // Forgejo: a missing author or committer is the other one (used as given); both missing are
    // the doer, with its no-reply address when it keeps its e-mail private.
    const given = (identity: Identity | undefined) =>
      identity !== undefined && (identity.name ?? "") !== "" && (identity.email ?? "") !== ""
        ? { name: identity.name!, email: identity.email! }
        : undefined
    const author = given(options.author) ?? given(options.committer) ?? doerIdentity
    const committer = given(options.committer) ?? given(options.author) ?? doerIdentity
    for (const [field, who] of [
      ["author", author],
      ["committer", committer]
    ] as const) {
      const problem = Write.signatureProblem(who)
      if (problem !== undefined) return yield* Errors.validationFailed(`${field}: ${problem}`)
    }
    const authorDate = yield* parseDate(options.dates?.author, "author")
    const committerDate = yield* parseDate(options.dates?.committer, "committer")
    let message = options.message !== undefined && options.message !== "" ? options.message : defaultMessage
    if (options.signoff === true)
      message = `${message.replace(/\n+$/, "")}\n\nSigned-off-by: ${committer.name} <${committer.email}>`
    if (!message.endsWith("\n")) message += "\n"
    return {
      branch,
      ...(options.new_branch === undefined || options.new_branch === "" ? {} : { newBranch: options.new_branch }),
      message,
      author: Write.signatureAt(author, authorDate),
      committer: Write.signatureAt(committer, committerDate)
    }
  })

/** `doerIdentity`: who the commit is by when the body names no author or committer (`gitIdentity`). */
const checkChange = (
  handle: RepoHandle,
  doerIdentity: { readonly name: string; readonly email: string },
  options: ChangeFilesOptions
) =>
  Effect.gen(function* () {
    if (options.files.length === 0)
      return yield* Errors.validationFailed("files: at least one file operation is required")
    const files: Array<FileOperation> = []
    for (const file of options.files) {
      const cleaned = Readers.cleanPath(file.path)
      if ("problem" in cleaned) return yield* Errors.validationFailed(`${cleaned.problem} [path: ${file.path}]`)
      if (cleaned.path === "") return yield* Errors.validationFailed("path: a file path is required")
      // Nothing git would refuse goes in (src/git/Paths.ts); a delete, or the old path of a
      // rename, takes a path out and is how a repository that holds one is repaired.
      const problem = file.operation === "delete" ? undefined : Paths.pathProblem(cleaned.path)
      if (problem !== undefined) return yield* Errors.validationFailed(`${problem} [path: ${file.path}]`)
      let fromPath: string | undefined
      if (file.from_path !== undefined && file.from_path !== "") {
        const from = Readers.cleanPath(file.from_path)
        if ("problem" in from || from.path === "") {
          return yield* Errors.validationFailed(`from_path: invalid path [path: ${file.from_path}]`)
        }
        fromPath = from.path
      }
      if (file.operation !== "create" && (file.sha === undefined || file.sha === "")) {
        return yield* Errors.validationFailed(
          `sha: the sha of the file being changed is required [path: ${cleaned.path}]`
        )
      }
      if (file.sha !== undefined && file.sha !== "" && !Git.isSha(file.sha.toLowerCase())) {
        return yield* Errors.validationFailed(`sha: invalid object name ${JSON.stringify(file.sha)}`)
      }
      let content: Uint8Array | undefined
      if (file.operation !== "delete") {
        content = decodeBase64(file.content ?? "")
        if (content === undefined)
          return yield* Errors.validationFailed(`content: not valid base64 [path: ${cleaned.path}]`)
      }
      files.push({
        operation: file.operation,
        path: cleaned.path,
        ...(content === undefined ? {} : { content }),
        ...(file.sha === undefined || file.sha === "" ? {} : { sha: file.sha.toLowerCase() }),
        ...(fromPath === undefined ? {} : { fromPath })
      })
    }
    const spec = yield* commitSpec(handle, doerIdentity, options, defaultMessage(files))
    return { ...spec, files }
  })

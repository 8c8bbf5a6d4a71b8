// Reading files and git objects of a repository the caller may see (issue 3 item 6, read side).
// Git does the work (src/git/Readers.ts); this module picks the revision, checks paths and shas,
// and shapes Forgejo's responses (ContentsResponse, GitBlob, GitTreeResponse, Reference).
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Readers from "../git/Readers.ts"
import type { Principal } from "../http/Authentication.ts"
import * as Errors from "../http/Errors.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import type { ContentsResponse } from "./Api.ts"

export interface RepoHandle {
  readonly owner: UserRow
  readonly repo: RepoRow
  /** The bare repository on disk. */
  readonly dir: string
  /** `{ROOT}api/v1/repos/{owner}/{repo}` */
  readonly api: string
  /** `{ROOT}{owner}/{repo}` */
  readonly html: string
}

/** A revision the caller named (or the default branch), resolved to a commit. */
interface Revision {
  readonly name: string
  readonly kind: "branch" | "tag" | "commit"
  readonly commit: string
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

/** Git failing on a checked argument is a bug or a broken repository: a 500, not a client error. */
const orDie = <A, E>(effect: Effect.Effect<A, E>) => Effect.orDie(effect)

const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/")

export class ContentsService extends Context.Service<ContentsService, {
  /** The repository `owner/name` if the viewer may see it; 404 otherwise. */
  readonly find: (viewer: Principal | undefined, ownerName: string, name: string) => Effect.Effect<RepoHandle, Errors.NotFound | Errors.Forbidden>
  /** A file, symlink or submodule entry, or a directory's entries. */
  readonly contents: (
    handle: RepoHandle,
    rawPath: string,
    ref: string | undefined
  ) => Effect.Effect<ContentsResponse | ReadonlyArray<ContentsResponse>, ReadError>
  /** The bytes of the blob at a path (404 for directories and submodules). */
  readonly file: (handle: RepoHandle, rawPath: string, ref: string | undefined) => Effect.Effect<FileBytes, ReadError>
  readonly blob: (handle: RepoHandle, sha: string) => Effect.Effect<{ readonly sha: string; readonly bytes: Buffer }, ReadError>
  readonly tree: (handle: RepoHandle, revision: string, query: TreeQuery) => Effect.Effect<{
    readonly sha: string
    readonly entries: ReadonlyArray<Readers.TreeEntry>
  }, ReadError>
  /** Refs whose full name starts with `refs/{filter}` (all refs without a filter). */
  readonly refs: (handle: RepoHandle, filter: string | undefined) => Effect.Effect<ReadonlyArray<Git.RefEntry>, ReadError>
}>()("hearth/ContentsService") {
  static readonly layer = Layer.effect(
    ContentsService,
    Effect.gen(function*() {
      const settings = yield* Settings
      const repos = yield* ReposService
      const root = settings.server.ROOT_URL
      const pool = yield* Effect.acquireRelease(Effect.sync(() => new Readers.BatchPool()), (p) => Effect.sync(() => p.close()))

      /** A blob's bytes through the repository's long-lived reader (its sha came from git itself). */
      const blobBytes = (handle: RepoHandle, sha: string) =>
        Effect.flatMap(orDie(pool.read(handle.dir, sha)), (found) =>
          Option.isSome(found) && found.value.type === "blob"
            ? Effect.succeed(found.value.bytes)
            : Effect.die(new Error(`blob ${sha} listed in a tree of ${handle.dir} is missing`)))

      const find = (viewer: Principal | undefined, ownerName: string, name: string) =>
        Effect.gen(function*() {
          const { owner, repo, path: dir } = yield* repos.open(viewer, ownerName, name)
          const path = `${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`
          return { owner, repo, dir, api: `${root}api/v1/repos/${path}`, html: `${root}${path}` }
        })

      const pathOf = (raw: string) => {
        const cleaned = Readers.cleanPath(raw)
        return "problem" in cleaned ? Effect.fail(Errors.validationFailed(cleaned.problem)) : Effect.succeed(cleaned.path)
      }

      /** Branch first, then tag, then any commit-ish (a sha); unknown or malformed → 404. */
      const revision = (handle: RepoHandle, ref: string | undefined) =>
        Effect.gen(function*() {
          const name = ref === undefined || ref === "" ? handle.repo.defaultBranch : ref
          const tries = [
            ["branch", `refs/heads/${name}`],
            ["tag", `refs/tags/${name}`],
            ["commit", name]
          ] as const
          for (const [kind, candidate] of tries) {
            const found = yield* Readers.resolveCommit(handle.dir, candidate).pipe(
              Effect.catchTag("GitArgumentError", () => Effect.succeedNone),
              orDie
            )
            if (Option.isSome(found)) return { name, kind, commit: found.value } satisfies Revision
          }
          return yield* Errors.notFound()
        })

      const describe = (handle: RepoHandle, rev: Revision, entry: Readers.TreeEntry, withContent: boolean) =>
        Effect.gen(function*() {
          const type = entry.type === "tree"
            ? "dir"
            : entry.type === "commit"
            ? "submodule"
            : entry.mode === "120000"
            ? "symlink"
            : "file"
          const last = yield* orDie(Readers.lastCommit(handle.dir, rev.commit, entry.path))
          const self = `${handle.api}/contents/${encodePath(entry.path)}?ref=${encodeURIComponent(rev.name)}`
          const git = `${handle.api}/git/${entry.type === "tree" ? "trees" : "blobs"}/${entry.sha}`
          const html = `${handle.html}/src/${rev.kind}/${encodePath(rev.name)}/${encodePath(entry.path)}`
          let content: string | null = null
          let target: string | null = null
          if (type === "file" && withContent) content = (yield* blobBytes(handle, entry.sha)).toString("base64")
          if (type === "symlink") target = (yield* blobBytes(handle, entry.sha)).toString("utf8")
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
            download_url: type === "file" || type === "symlink"
              ? `${handle.html}/raw/${rev.kind}/${encodePath(rev.name)}/${encodePath(entry.path)}`
              : null,
            submodule_git_url: null,
            _links: { self, git, html }
          } satisfies ContentsResponse
        })

      const entryOf = (handle: RepoHandle, rev: Revision, path: string) =>
        Effect.flatMap(orDie(Readers.entryAt(handle.dir, rev.commit, path)), (found) =>
          Option.isSome(found) ? Effect.succeed(found.value) : Effect.fail(Errors.notFound()))

      const contents = (handle: RepoHandle, rawPath: string, ref: string | undefined) =>
        Effect.gen(function*() {
          const path = yield* pathOf(rawPath)
          const rev = yield* revision(handle, ref)
          const entry = yield* entryOf(handle, rev, path)
          if (entry.type !== "tree") return yield* describe(handle, rev, entry, true)
          const children = yield* orDie(Readers.listTree(handle.dir, `${entry.sha}`))
          return yield* Effect.forEach(children, (child) =>
            describe(handle, rev, { ...child, path: path === "" ? child.path : `${path}/${child.path}` }, false))
        })

      const file = (handle: RepoHandle, rawPath: string, ref: string | undefined) =>
        Effect.gen(function*() {
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
        Effect.gen(function*() {
          const sha = yield* checkSha(rawSha)
          const found = yield* orDie(pool.read(handle.dir, sha))
          if (Option.isNone(found) || found.value.type !== "blob") return yield* Errors.notFound()
          return { sha, bytes: found.value.bytes }
        })

      const tree = (handle: RepoHandle, rev: string, query: TreeQuery) =>
        Effect.gen(function*() {
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
        Effect.gen(function*() {
          const all = yield* orDie(Git.listRefs(handle.dir))
          if (filter === undefined || filter === "") return all
          const prefix = `refs/${filter.replace(/^refs\//, "")}`
          // Forgejo matches by plain prefix: `heads/ma` finds refs/heads/main.
          const matching = all.filter((r) => r.ref.startsWith(prefix))
          if (matching.length === 0) return yield* Errors.notFound()
          return matching
        })

      return ContentsService.of({ find, contents, file, blob, tree, refs })
    })
  )
}

/** Keeps the client errors, turns git failures into defects. */
const orDieGit = <A, E>(effect: Effect.Effect<A, E | Git.GitError>): Effect.Effect<A, Exclude<E, Git.GitError>> =>
  Effect.catchTag(effect as Effect.Effect<A, Git.GitError>, "GitError", (e) => Effect.die(e)) as Effect.Effect<A, Exclude<E, Git.GitError>>

// Wiki pages (Forgejo's services/wiki/wiki.go and routers/api/v1/repo/wiki.go): read from the wiki
// repository's branch with git, written as one commit each through the wiki's own Repository
// entity (Location.ts), which also checks, in order with other writes, that the files it removes
// or replaces are still there. The wiki repository is made on the first page written.
import { existsSync } from "node:fs"
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import { type Event, subject, type WikiAction } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { pathProblem } from "../git/Paths.ts"
import * as Readers from "../git/Readers.ts"
import { type FileOperation, RepositoryWriter, type WriteRejected } from "../git/Repository.ts"
import { signWith } from "../git/Signing.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import * as Write from "../git/Write.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import { QuotaService } from "../quota/Service.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import { gitIdentity } from "../users/Schema.ts"
import type { CreateWikiPageOptions, WikiCommit, WikiPage, WikiPageMetaData } from "./Api.ts"
import { wikiRef } from "./Location.ts"
import * as Paths from "./Paths.ts"

/** Commits per page of a page's history (Forgejo's `[git] COMMITS_RANGE_SIZE`). */
export const REVISIONS_PER_PAGE = 50

/** Pathspecs are file names, not patterns. */
const LITERAL = { env: { GIT_LITERAL_PATHSPECS: "1" } }

/** The wiki repository's branch and its commit, when the wiki has one. */
interface Head {
  readonly branch: string
  readonly commit: string | undefined
}

/** A page found in the wiki: the file that holds it. */
interface Found {
  readonly path: string
  readonly sha: string
}

// One commit per record: fields apart by US, records by RS (neither occurs in names or dates).
const LOG_FORMAT = "--format=%H%x1f%an%x1f%ae%x1f%at%x1f%cn%x1f%ce%x1f%ct%x1f%B%x1e"

const parseLog = (out: Buffer): Array<WikiCommit> =>
  out
    .toString("utf8")
    .split("\x1e")
    .map((record) => record.replace(/^\n/, ""))
    .filter((record) => record !== "")
    .map((record) => {
      const [sha, an, ae, at, cn, ce, ct, message] = record.split("\x1f")
      const when = (seconds: string | undefined) => formatTime(new Date(Number(seconds) * 1000))
      return {
        sha: sha!,
        author: { name: an ?? "", email: ae ?? "", date: when(at) },
        commiter: { name: cn ?? "", email: ce ?? "", date: when(ct) },
        message: message ?? ""
      }
    })

/** Go's `%q` of a string, as Forgejo writes default commit messages. */
const goQuote = (text: string) => JSON.stringify(text)

/**
 * Go's base64.StdEncoding (padding required; line breaks skipped), with Go's error text, which
 * Forgejo answers with.
 */
export const decodeBase64 = (text: string): { readonly bytes: Buffer } | { readonly problem: string } => {
  const compact = text.replace(/[\r\n]/g, "")
  const bad = compact.search(/[^A-Za-z0-9+/=]/)
  const padding = compact.indexOf("=")
  const at =
    bad !== -1
      ? bad
      : padding !== -1 && (!/^=?=$/.test(compact.slice(padding)) || compact.length % 4 !== 0)
        ? padding
        : compact.length % 4 !== 0
          ? compact.length - (compact.length % 4)
          : -1
  if (at !== -1) return { problem: `illegal base64 data at input byte ${at}` }
  return { bytes: Buffer.from(compact, "base64") }
}

export class WikiService extends Context.Service<
  WikiService,
  {
    readonly page: (opened: OpenedRepository, webPath: string) => Effect.Effect<WikiPage, Errors.NotFound>
    readonly pages: (
      opened: OpenedRepository,
      page: number,
      limit: number
    ) => Effect.Effect<{ readonly pages: Array<WikiPageMetaData>; readonly total: number }, Errors.NotFound>
    readonly revisions: (
      opened: OpenedRepository,
      webPath: string,
      page: number
    ) => Effect.Effect<{ readonly commits: Array<WikiCommit>; readonly count: number }, Errors.NotFound>
    readonly create: (
      opened: OpenedRepository,
      doer: Principal,
      options: CreateWikiPageOptions
    ) => Effect.Effect<WikiPage, Errors.ApiError>
    readonly edit: (
      opened: OpenedRepository,
      doer: Principal,
      webPath: string,
      options: CreateWikiPageOptions
    ) => Effect.Effect<WikiPage, Errors.ApiError>
    readonly remove: (
      opened: OpenedRepository,
      doer: Principal,
      webPath: string
    ) => Effect.Effect<void, Errors.ApiError>
    /**
     * A file of the wiki by its web path (Forgejo's `WikiRaw`, `/wiki/raw/{path}`): a page's file,
     * else the file of that name (an image a page shows); its git path and bytes.
     */
    readonly raw: (
      opened: OpenedRepository,
      webPath: string
    ) => Effect.Effect<{ readonly path: string; readonly bytes: Buffer }, Errors.NotFound>
  }
>()("hearth/wiki/WikiService") {
  static readonly layer = Layer.effect(
    WikiService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const writer = yield* RepositoryWriter
      const events = yield* EventHub
      const quota = yield* QuotaService
      const signing = yield* CommitSigner

      // Reading a wiki whose git fails is a broken repository: a 500 with the cause in the log.
      const git = <A>(effect: Effect.Effect<A, Git.GitError | Git.GitArgumentError>) => Effect.orDie(effect)

      const refOf = (opened: OpenedRepository) => wikiRef(opened.repo.id, opened.path)

      /** The wiki's branch (its HEAD; the repository's default branch for a wiki not made yet) and commit. */
      const headOf = (opened: OpenedRepository) =>
        Effect.gen(function* () {
          const { dir } = refOf(opened)
          if (!existsSync(dir)) return { branch: opened.repo.defaultBranch, commit: undefined } satisfies Head
          const branch = Option.getOrElse(yield* git(Git.headBranch(dir)), () => opened.repo.defaultBranch)
          const commit = Option.getOrUndefined(yield* git(Readers.resolveCommit(dir, `refs/heads/${branch}`)))
          return { branch, commit } satisfies Head
        })

      const entryAt = (dir: string, commit: string, path: string) =>
        pathProblem(path) !== undefined
          ? Effect.succeed(undefined)
          : Effect.map(git(Readers.entriesAt(dir, commit, [path])), (entries) => {
              const entry = entries.get(path)
              return entry?.type === "blob" ? ({ path, sha: entry.sha } satisfies Found) : undefined
            })

      /** A file to read (Forgejo's `findEntryForFile`: the git path, else its unescaped form). */
      const findFile = (dir: string, commit: string, target: string) =>
        Effect.gen(function* () {
          const found = yield* entryAt(dir, commit, target)
          if (found !== undefined) return found
          const unescaped = Paths.queryUnescape(target)
          return unescaped === undefined ? undefined : yield* entryAt(dir, commit, unescaped)
        })

      /** The file of a page to read. */
      const findPage = (dir: string, commit: string, webPath: string) =>
        findFile(dir, commit, Paths.webPathToGitPath(webPath))

      /**
       * The file a write of a page uses (Forgejo's `prepareGitPath`): an existing file named by the
       * unescaped web path wins (older wikis), else the git path; and whether it exists.
       */
      const prepareGitPath = (dir: string, commit: string | undefined, webPath: string) =>
        Effect.gen(function* () {
          const escaped = Paths.webPathToGitPath(webPath)
          if (commit === undefined) return { path: escaped, exists: false }
          const unescaped = `${webPath}.md`
          if ((yield* entryAt(dir, commit, unescaped)) !== undefined) return { path: unescaped, exists: true }
          return { path: escaped, exists: (yield* entryAt(dir, commit, escaped)) !== undefined }
        })

      const blobBase64 = (dir: string, sha: string) =>
        Effect.map(git(Git.inRepo(dir, ["cat-file", "blob", sha])), (result) => result.stdout.toString("base64"))

      const lastCommit = (dir: string, commit: string, path: string) =>
        Effect.map(
          git(Git.inRepo(dir, ["log", "-1", LOG_FORMAT, commit, "--", path], LITERAL)),
          (result) => parseLog(result.stdout)[0]
        )

      const commitCount = (dir: string, commit: string, path: string) =>
        Effect.map(git(Git.inRepo(dir, ["rev-list", "--count", commit, "--", path], LITERAL)), (result) =>
          Number(result.stdout.toString("utf8").trim())
        )

      const htmlUrl = (opened: OpenedRepository, webPath: string) =>
        `${settings.server.ROOT_URL}${opened.owner.name}/${opened.repo.name}/wiki/${webPath}`

      const metaData = (opened: OpenedRepository, webPath: string, last: WikiCommit): WikiPageMetaData => ({
        title: Paths.webPathToUserTitle(webPath),
        html_url: htmlUrl(opened, webPath),
        sub_url: webPath,
        last_commit: last
      })

      const page = (opened: OpenedRepository, webPath: string) =>
        Effect.gen(function* () {
          const { dir } = refOf(opened)
          const head = yield* headOf(opened)
          if (head.commit === undefined) return yield* Errors.notFound()
          const commit = head.commit
          const found = yield* findPage(dir, commit, webPath)
          if (found === undefined) return yield* Errors.notFound()
          const extra = (name: string) =>
            Effect.flatMap(findPage(dir, commit, name), (file) =>
              file === undefined ? Effect.succeed("") : blobBase64(dir, file.sha)
            )
          const [content, sidebar, footer, count, last] = yield* Effect.all(
            [
              blobBase64(dir, found.sha),
              extra("_Sidebar"),
              extra("_Footer"),
              commitCount(dir, commit, found.path),
              lastCommit(dir, commit, found.path)
            ],
            { concurrency: 3 }
          )
          if (last === undefined) return yield* Errors.notFound()
          return {
            ...metaData(opened, webPath, last),
            content_base64: content,
            commit_count: count,
            sidebar,
            footer
          } satisfies WikiPage
        })

      /** The identity of the doer's commits, now. */
      const signature = (doer: Principal) => Write.signatureAt(gitIdentity(settings, doer.user), new Date())

      const refused = (error: WriteRejected) =>
        error.reason === "not-found" || error.reason === "invalid"
          ? // A file the request saw went away (or appeared) meanwhile: another write came first.
            Errors.conflict(`the wiki changed while this change was being made, try again (${error.message})`)
          : Errors.refusal(error.reason, error.message)

      /** One commit of `files` on the wiki's branch, the wiki made first when it has none yet. */
      const commit = (
        opened: OpenedRepository,
        doer: Principal,
        head: Head,
        files: Array<FileOperation>,
        message: string
      ) =>
        Effect.gen(function* () {
          const ref = refOf(opened)
          if (!existsSync(ref.dir)) yield* Effect.mapError(writer.init(ref, head.branch), refused)
          const who = signature(doer)
          yield* Effect.mapError(
            writer.commitFiles(ref, {
              branch: head.branch,
              files,
              message: message.endsWith("\n") ? message : `${message}\n`,
              author: who,
              committer: who,
              // [repository.signing] WIKI (Forgejo's SignWikiCommit); the parent is the wiki's head.
              ...signWith(yield* signing.decide("WIKI", { doer: doer.user, repoPath: ref.dir, parent: head.commit }))
            }),
            refused
          )
        })

      const publish = (
        opened: OpenedRepository,
        doer: Principal,
        action: WikiAction,
        webPath: string,
        message: string,
        oldPage?: string
      ) =>
        events.publish({
          _tag: "Wiki",
          ...subject(opened.owner, opened.repo, doer.user),
          action,
          page: webPath,
          ...(oldPage === undefined ? {} : { oldPage }),
          comment: message,
          via: "api"
        } satisfies Event)

      const content = (text: string | undefined) => {
        const decoded = decodeBase64(text ?? "")
        return "problem" in decoded ? Effect.fail(Errors.badRequest(decoded.problem)) : Effect.succeed(decoded.bytes)
      }

      const notReserved = (webPath: string) => {
        const reserved = Paths.reservedSegment(webPath)
        return reserved === undefined
          ? Effect.void
          : Effect.fail(Errors.badRequest(`wiki title is reserved: ${reserved}`))
      }

      /** A git path that is no file name git takes (it cannot come from the mappings, but is checked). */
      const safe = (path: string) => {
        const problem = pathProblem(path)
        return problem === undefined
          ? Effect.void
          : Effect.fail(Errors.badRequest(`the page name is not a valid file name: ${problem}`))
      }

      return WikiService.of({
        page,
        pages: (opened, pageNumber, limit) =>
          Effect.gen(function* () {
            const { dir } = refOf(opened)
            const head = yield* headOf(opened)
            if (head.commit === undefined) return yield* Errors.notFound()
            const commit = head.commit
            const entries = yield* git(Readers.listTree(dir, commit))
            // Forgejo pages over every entry of the tree, then drops what is not a page.
            const window = entries.slice((pageNumber - 1) * limit, pageNumber * limit)
            const pages = yield* Effect.forEach(
              window,
              (entry) =>
                Effect.gen(function* () {
                  if (entry.type !== "blob" || entry.mode !== "100644") return undefined
                  const webPath = Paths.gitPathToWebPath(entry.path)
                  if (webPath === undefined) return undefined
                  const last = yield* lastCommit(dir, commit, entry.path)
                  return last === undefined ? undefined : metaData(opened, webPath, last)
                }),
              { concurrency: 4 }
            )
            return { pages: pages.filter((p) => p !== undefined), total: entries.length }
          }),
        revisions: (opened, webPath, pageNumber) =>
          Effect.gen(function* () {
            const { dir } = refOf(opened)
            const head = yield* headOf(opened)
            if (head.commit === undefined) return yield* Errors.notFound()
            const found = yield* findPage(dir, head.commit, webPath)
            if (found === undefined) return yield* Errors.notFound()
            const skip = (pageNumber - 1) * REVISIONS_PER_PAGE
            const [count, log] = yield* Effect.all([
              commitCount(dir, head.commit, found.path),
              git(
                Git.inRepo(
                  dir,
                  [
                    "log",
                    `--skip=${skip}`,
                    `--max-count=${REVISIONS_PER_PAGE}`,
                    LOG_FORMAT,
                    head.commit,
                    "--",
                    found.path
                  ],
                  LITERAL
                )
              )
            ])
            return { commits: parseLog(log.stdout), count }
          }),
        create: (opened, doer, options) =>
          Effect.gen(function* () {
            const title = options.title ?? ""
            if (title.trim() === "") return yield* Errors.badRequest("title is required: the name of the new page")
            const webPath = Paths.userTitleToWebPath(title)
            const bytes = yield* content(options.content_base64)
            yield* notReserved(webPath)
            yield* quota.enforce(opened.owner, "size:assets:wiki")
            const head = yield* headOf(opened)
            const target = yield* prepareGitPath(refOf(opened).dir, head.commit, webPath)
            if (target.exists) return yield* Errors.badRequest(`wiki page already exists [title: ${target.path}]`)
            yield* safe(target.path)
            const message =
              options.message !== undefined && options.message !== "" ? options.message : `Add ${goQuote(title)}`
            yield* commit(
              opened,
              doer,
              head,
              [{ operation: "create", path: target.path, content: bytes }],
              message
            ).pipe(
              // Another request made the same page meanwhile.
              Effect.mapError((e) =>
                e instanceof Errors.Conflict ? Errors.badRequest(`wiki page already exists [title: ${target.path}]`) : e
              )
            )
            yield* publish(opened, doer, "created", webPath, message)
            return yield* page(opened, webPath)
          }),
        edit: (opened, doer, oldWebPath, options) =>
          Effect.gen(function* () {
            // An empty title keeps the page's name (as the API documents; Forgejo renames to `unnamed`).
            const title = options.title ?? ""
            const webPath = title.trim() === "" ? oldWebPath : Paths.userTitleToWebPath(title)
            yield* notReserved(webPath)
            const given = options.content_base64 === undefined ? undefined : yield* content(options.content_base64)
            yield* quota.enforce(opened.owner, "size:assets:wiki")
            const { dir } = refOf(opened)
            const head = yield* headOf(opened)
            const old = yield* prepareGitPath(dir, head.commit, oldWebPath)
            const target = yield* prepareGitPath(dir, head.commit, webPath)
            yield* safe(target.path)
            // Without `content_base64` the page keeps its text (a rename alone).
            let bytes = given
            if (bytes === undefined) {
              const found = old.exists ? yield* entryAt(dir, head.commit!, old.path) : undefined
              bytes =
                found === undefined
                  ? Buffer.alloc(0)
                  : (yield* git(Git.inRepo(dir, ["cat-file", "blob", found.sha]))).stdout
            }
            const files: Array<FileOperation> = []
            let action: WikiAction
            if (old.exists && old.path !== target.path) {
              // A rename: the old file goes and the new one comes in one commit (an existing page
              // of the new name is replaced, as in Forgejo).
              files.push({ operation: "delete", path: old.path })
              if (target.exists) files.push({ operation: "delete", path: target.path })
              files.push({ operation: "create", path: target.path, content: bytes })
              action = webPath === oldWebPath ? "edited" : "renamed"
            } else if (old.exists || target.exists) {
              files.push({ operation: "update", path: target.path, content: bytes })
              action = "edited"
            } else {
              // Forgejo's edit of a page that is not there makes it.
              files.push({ operation: "create", path: target.path, content: bytes })
              action = "created"
            }
            const message =
              options.message !== undefined && options.message !== "" ? options.message : `Update ${goQuote(webPath)}`
            yield* commit(opened, doer, head, files, message)
            yield* publish(opened, doer, action, webPath, message, action === "renamed" ? oldWebPath : undefined)
            return yield* page(opened, webPath)
          }),
        raw: (opened, webPath) =>
          Effect.gen(function* () {
            const { dir } = refOf(opened)
            const head = yield* headOf(opened)
            if (head.commit === undefined) return yield* Errors.notFound()
            const target = Paths.webPathToGitPath(webPath)
            const found =
              (yield* findFile(dir, head.commit, target)) ??
              (yield* findFile(dir, head.commit, target.replace(/\.md$/, "")))
            if (found === undefined) return yield* Errors.notFound()
            const blob = yield* git(Git.inRepo(dir, ["cat-file", "blob", found.sha]))
            return { path: found.path, bytes: blob.stdout }
          }),
        remove: (opened, doer, webPath) =>
          Effect.gen(function* () {
            const head = yield* headOf(opened)
            const found = yield* prepareGitPath(refOf(opened).dir, head.commit, webPath)
            if (!found.exists) return yield* Errors.notFound()
            const message = `Delete page ${goQuote(webPath)}`
            yield* commit(opened, doer, head, [{ operation: "delete", path: found.path }], message).pipe(
              Effect.mapError((e) => (e instanceof Errors.Conflict ? Errors.notFound() : e))
            )
            yield* publish(opened, doer, "deleted", webPath, message)
          })
      })
    })
  )
}

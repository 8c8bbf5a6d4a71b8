// Git data and code helpers (issue 23 item 5), Forgejo's routers/api/v1/repo/{blob,git_ref,tag,
// notes,commits,patch,repo}.go: reads go through git on the repository the assignment opened
// (src/repos/Assignment.ts), writes (notes, patches) through the Repository entity.

import type * as EditorConfig from "editorconfig"
import { Context, Effect, Layer, Option } from "effect"
import type { Commit } from "../branches/Api.ts"
import { makeCommitPresenter } from "../branches/Commits.ts"
import { type CommitSignature, readCommits } from "../branches/Service.ts"
import { Settings } from "../config/Settings.ts"
import type { FileCommitResponse } from "../contents/Api.ts"
import { ContentsService, commitSpec, type RepoHandle } from "../contents/Service.ts"
import { pushed, ZERO_ID } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import * as GitData from "../git/GitData.ts"
import { RepositoryWriter, toApiError } from "../git/Repository.ts"
import { signWith } from "../git/Signing.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import * as Write from "../git/Write.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { lazyRequire } from "../lib/LazyRequire.ts"
import { refNameProblem } from "../lib/Names.ts"
import { ProtectionService } from "../protection/Service.ts"
import { QuotaService } from "../quota/Service.ts"
import { gitIdentity } from "../users/Schema.ts"
import type { AnnotatedTag as AnnotatedTagSchema } from "./Api.ts"

type AnnotatedTag = typeof AnnotatedTagSchema.Type

// Loaded on the first `.editorconfig` asked for: with semver and minimatch ≈ 30 ms of every start otherwise.
const loadEditorConfig = lazyRequire<typeof EditorConfig>("editorconfig")

type Identity = { readonly name?: string | undefined; readonly email?: string | undefined }

export interface PatchOptions {
  readonly content: string
  readonly message?: string | undefined
  readonly branch?: string | undefined
  readonly new_branch?: string | undefined
  readonly author?: Identity | undefined
  readonly committer?: Identity | undefined
  readonly dates?: { readonly author?: string | undefined; readonly committer?: string | undefined } | undefined
  readonly signoff?: boolean | undefined
}

/** The hooks Forgejo lists (`git.ListHooks`): shown, never active, since Hearth's hooks are its own. */
export const GIT_HOOK_NAMES = ["pre-receive", "update", "post-receive"] as const

/** Forgejo's `DISABLE_GIT_HOOKS = true` answer, which Hearth always gives. */
export const GIT_HOOKS_DISABLED =
  "server-side git hooks are disabled on this instance: Hearth runs its own hooks and does not let them be edited"

/** How many blobs one GetBlobs request may name ([api] MAX_RESPONSE_ITEMS). */
const blobLimit = (settings: { readonly api: { readonly MAX_RESPONSE_ITEMS: number } }) =>
  settings.api.MAX_RESPONSE_ITEMS

const two = (n: number) => String(n).padStart(2, "0")

/** `Name <email> 1700000000 +0130` as a commit user with an RFC 3339 date in its own offset. */
export const parseIdent = (line: string) => {
  const match = /^(.*?) ?<([^>]*)> (\d+) ([+-])(\d{2})(\d{2})$/.exec(line)
  if (match === null) return { name: line, email: "", date: new Date(0).toISOString().replace(/\.000Z$/, "Z") }
  const [, name, email, seconds, sign, hours, minutes] = match
  const offset = (sign === "-" ? -1 : 1) * (Number(hours) * 60 + Number(minutes))
  const local = new Date((Number(seconds) + offset * 60) * 1000)
  const stamp = `${local.getUTCFullYear()}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())}T${two(
    local.getUTCHours()
  )}:${two(local.getUTCMinutes())}:${two(local.getUTCSeconds())}`
  return {
    name: name ?? "",
    email: email ?? "",
    date: offset === 0 ? `${stamp}Z` : `${stamp}${sign}${hours}:${minutes}`
  }
}

const SIGNATURE_START = /^-----BEGIN (PGP|SSH) SIGNATURE-----$/m

/** A tag object's headers, message and signature (Forgejo's `parseTagData`). */
export const parseTag = (text: string) => {
  const end = text.indexOf("\n\n")
  const head = end < 0 ? text : text.slice(0, end)
  const body = end < 0 ? "" : text.slice(end + 2)
  const headers = new Map<string, string>()
  for (const line of head.split("\n")) {
    const space = line.indexOf(" ")
    if (space > 0 && !headers.has(line.slice(0, space))) headers.set(line.slice(0, space), line.slice(space + 1))
  }
  const start = SIGNATURE_START.exec(body)
  const message = start === null ? body : body.slice(0, start.index)
  const signature = start === null ? undefined : body.slice(start.index)
  return {
    object: headers.get("object") ?? "",
    type: headers.get("type") ?? "",
    tag: headers.get("tag") ?? "",
    tagger: headers.get("tagger") ?? "",
    message,
    signature:
      signature === undefined
        ? undefined
        : { signature, payload: text.slice(0, (end < 0 ? text.length : end + 2) + (start?.index ?? 0)) }
  }
}

export class GitDataService extends Context.Service<
  GitDataService,
  {
    readonly blobs: (
      handle: RepoHandle,
      shas: string | undefined
    ) => Effect.Effect<
      ReadonlyArray<{ content: string; encoding: string; url: string; sha: string; size: number }>,
      Errors.BadRequest
    >
    readonly annotatedTag: (handle: RepoHandle, sha: string) => Effect.Effect<AnnotatedTag, Errors.BadRequest>
    readonly note: (
      handle: RepoHandle,
      sha: string,
      viewer: Principal | undefined,
      options: { readonly verification: boolean; readonly files: boolean }
    ) => Effect.Effect<{ message: string; commit: Commit }, Errors.NotFound | Errors.ValidationFailed>
    readonly setNote: (
      handle: RepoHandle,
      doer: Principal,
      sha: string,
      message: string | null
    ) => Effect.Effect<void, Errors.NotFound | Errors.ValidationFailed | Errors.InternalError | Errors.Conflict>
    readonly commitDiff: (
      handle: RepoHandle,
      sha: string,
      kind: "diff" | "patch"
    ) => Effect.Effect<Buffer, Errors.NotFound>
    readonly applyPatch: (
      handle: RepoHandle,
      doer: Principal,
      options: PatchOptions
    ) => Effect.Effect<
      { content: null; commit: FileCommitResponse; verification: AnnotatedTag["verification"] },
      | Errors.NotFound
      | Errors.ValidationFailed
      | Errors.Conflict
      | Errors.Forbidden
      | Errors.PayloadTooLarge
      | Errors.InternalError
      | Errors.BadRequest
      | Errors.Locked
    >
    readonly editorConfig: (
      handle: RepoHandle,
      path: string,
      ref: string | undefined
    ) => Effect.Effect<Record<string, string>, Errors.NotFound | Errors.ValidationFailed>
  }
>()("hearth/gitdata/GitDataService") {
  static readonly layer = Layer.effect(
    GitDataService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const contents = yield* ContentsService
      const writer = yield* RepositoryWriter
      const events = yield* EventHub
      const quota = yield* QuotaService
      const protection = yield* ProtectionService
      const presenter = yield* makeCommitPresenter
      const signer = yield* CommitSigner

      /** A tag's or note's signature, checked as a commit's (src/git/SigningRules.ts). */
      const verificationOf = (signature: CommitSignature | undefined, email: string) => signer.verify(signature, email)

      const blobs = (handle: RepoHandle, raw: string | undefined) =>
        Effect.gen(function* () {
          const shas = (raw ?? "")
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s !== "")
          if (shas.length === 0) return yield* Errors.badRequest("Field shas must be set")
          if (shas.length > blobLimit(settings))
            return yield* Errors.badRequest(`at most ${blobLimit(settings)} blobs may be requested at once`)
          return yield* Effect.forEach(shas, (sha) =>
            contents.blob(handle, sha).pipe(
              Effect.map(({ bytes, sha }) => ({
                content: bytes.toString("base64"),
                encoding: "base64",
                url: `${handle.api}/git/blobs/${sha}`,
                sha,
                size: bytes.length
              })),
              // Forgejo's GetBlobs answers any blob it cannot give with 400.
              Effect.mapError((e) =>
                e instanceof Errors.NotFound
                  ? Errors.badRequest(`blob does not exist [sha: ${sha}]`)
                  : Errors.badRequest(e.message)
              )
            )
          )
        })

      const annotatedTag = (handle: RepoHandle, raw: string) =>
        Effect.gen(function* () {
          const sha = raw.toLowerCase()
          if (sha === "") return yield* Errors.badRequest("SHA not provided")
          const notATag = Errors.badRequest(`tag does not exist [id: ${raw}]`)
          if (!Git.isSha(sha)) return yield* notATag
          const type = yield* Git.inRepo(handle.dir, ["cat-file", "-t", sha], { answerCodes: [1, 128] }).pipe(
            Effect.orDie
          )
          if (type.exitCode !== 0 || type.stdout.toString("utf8").trim() !== "tag") return yield* notATag
          const text = (yield* Effect.orDie(Git.inRepo(handle.dir, ["cat-file", "tag", sha]))).stdout.toString("utf8")
          const tag = parseTag(text)
          const tagger = parseIdent(tag.tagger)
          // Forgejo's `tag.Commit`: the commit the tag (through nested tags) points at.
          const commit = yield* Effect.orDie(Git.revParse(handle.dir, `${sha}^{commit}`)).pipe(
            Effect.catch(() => Effect.succeedNone)
          )
          if (Option.isNone(commit)) return yield* Errors.badRequest(`tag ${tag.tag} does not point at a commit`)
          return {
            tag: tag.tag,
            sha,
            url: `${handle.api}/git/tags/${sha}`,
            message: tag.message,
            tagger,
            object: { type: "commit", url: `${handle.api}/git/commits/${commit.value}`, sha: commit.value },
            verification: yield* verificationOf(tag.signature, tagger.email),
            archive_download_count: { zip: 0, tar_gz: 0 }
          } satisfies AnnotatedTag
        })

      /** Forgejo's `IsValidRefPattern` check, then the commit it names (404 when none). */
      const noteTarget = (handle: RepoHandle, raw: string) =>
        Effect.gen(function* () {
          if (raw === "" || refNameProblem(raw, { allowOneLevel: true }) !== undefined)
            return yield* Errors.validationFailed(`no valid ref or sha: ${raw}`)
          const found = yield* contents.commitOf(handle, raw)
          if (Option.isSome(found)) return found.value.commit
          for (const ref of [`refs/heads/${raw}`, `refs/tags/${raw}`]) {
            const named = yield* contents.commitOf(handle, ref)
            if (Option.isSome(named)) return named.value.commit
          }
          return yield* Errors.notFound()
        })

      const note = (
        handle: RepoHandle,
        raw: string,
        viewer: Principal | undefined,
        options: { readonly verification: boolean; readonly files: boolean }
      ) =>
        Effect.gen(function* () {
          const target = yield* noteTarget(handle, raw)
          const found = yield* Effect.orDie(GitData.readNote(handle.dir, target))
          if (Option.isNone(found)) return yield* Errors.notFound()
          const commits = yield* readCommits(handle.dir, [found.value.commit])
          const [commit] = yield* presenter.toCommits(handle.owner, handle.repo, handle.dir, commits, viewer, {
            stat: true,
            ...options
          })
          if (commit === undefined) return yield* Effect.die(new Error("the notes commit is missing"))
          return { message: found.value.message.toString("utf8"), commit }
        })

      const setNote = (handle: RepoHandle, doer: Principal, raw: string, message: string | null) =>
        Effect.gen(function* () {
          const target = yield* noteTarget(handle, raw)
          const who = Write.signatureAt(gitIdentity(settings, doer.user), new Date())
          yield* writer
            .setNote({ id: handle.repo.id, dir: handle.dir }, target, message, who)
            .pipe(Effect.mapError(toApiError))
        })

      const commitDiff = (handle: RepoHandle, raw: string, kind: "diff" | "patch") =>
        Effect.gen(function* () {
          const target = yield* noteTarget(handle, raw).pipe(Effect.mapError(() => Errors.notFound()))
          return yield* Effect.orDie(GitData.rawDiff(handle.dir, target, kind))
        })

      const editorConfig = (handle: RepoHandle, path: string, ref: string | undefined) =>
        Effect.gen(function* () {
          const bytes = yield* contents.file(handle, ".editorconfig", ref)
          const match = loadEditorConfig().matcher({ root: "/", unset: true }, bytes.bytes as Buffer)
          const props = match(`/${path.replace(/^\/+/, "")}`)
          const entries = Object.entries(props).filter(([, value]) => value !== undefined)
          if (entries.length === 0) return yield* Errors.notFound()
          return Object.fromEntries(entries.map(([key, value]) => [key, String(value)]))
        })

      const applyPatch = (handle: RepoHandle, doer: Principal, options: PatchOptions) =>
        Effect.gen(function* () {
          const patch = patchText(options.content)
          if (patch.trim() === "") return yield* Errors.validationFailed("content: the patch is empty")
          // Every patch git applies has a `diff --git` or `---` header: anything else is refused
          // before a git process is started for it.
          if (!/^(diff --git |--- )/m.test(patch))
            return yield* Errors.validationFailed("content: not a patch (no 'diff --git' or '---' line)")
          // Forgejo's default message for a patch, also for one of blanks only.
          const message = options.message?.trim() === "" ? undefined : options.message
          const spec = yield* commitSpec(
            handle,
            gitIdentity(settings, doer.user),
            { ...options, message },
            "apply-patch"
          )
          const { branch } = spec
          const paths = yield* GitData.patchPaths(handle.dir, patch).pipe(
            Effect.catchTag("GitError", (e) => Effect.die(e)),
            Effect.catchTag("PatchConflict", (e) =>
              Effect.fail(Errors.validationFailed(`content: not a patch git can read: ${e.message}`))
            )
          )
          if (paths.length === 0) return yield* Errors.validationFailed("content: the patch changes no file")
          yield* quota.enforce(handle.owner, "size:repos:all")
          const target = spec.newBranch ?? branch
          const sign = yield* signer.decide("CRUD_ACTIONS", {
            doer: doer.user,
            repoPath: handle.dir,
            parent: `refs/heads/${branch}`
          })
          yield* protection.checkCommit(handle, doer.user, target, paths, sign !== undefined)
          const made = yield* writer
            .applyPatch({ id: handle.repo.id, dir: handle.dir }, { ...spec, patch, ...signWith(sign) })
            .pipe(Effect.mapError(toApiError))
          const before = made.branch === branch ? made.parent : ZERO_ID
          yield* events.publish(
            pushed(handle.owner, handle.repo, doer.user, "api", [
              { ref: `refs/heads/${made.branch}`, before, after: made.sha }
            ])
          )
          const [commit, parent] = yield* readCommits(handle.dir, [made.sha, made.parent])
          if (commit === undefined || parent === undefined)
            return yield* Effect.die(new Error(`commit ${made.sha} just made is missing`))
          const meta = (sha: string, created: string, kind: "commits" | "trees") => ({
            url: `${handle.api}/git/${kind}/${sha}`,
            sha,
            created
          })
          return {
            content: null,
            commit: {
              ...meta(commit.sha, commit.committer.date, "commits"),
              html_url: `${handle.html}/commit/${commit.sha}`,
              author: commit.author,
              committer: commit.committer,
              parents: [meta(parent.sha, parent.committer.date, "commits")],
              message: commit.message,
              tree: meta(commit.tree, commit.committer.date, "trees")
            },
            verification: yield* signer.verifyCommit(handle.dir, made.sha)
          }
        })

      return GitDataService.of({
        blobs,
        annotatedTag,
        note,
        setNote,
        commitDiff,
        applyPatch,
        editorConfig
      })
    })
  )
}

/**
 * The patch text: Forgejo passes `content` to `git apply` as it is; a client that base64-encodes
 * it as for the contents API is understood too.
 */
const patchText = (content: string) => {
  if (/^(diff |From |--- |Index: )/m.test(content)) return content
  const compact = content.replace(/[\r\n]/g, "")
  if (compact.length > 0 && compact.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(compact)) {
    const decoded = Buffer.from(compact, "base64").toString("utf8")
    if (/^(diff |From |--- |Index: )/m.test(decoded)) return decoded
  }
  return content
}

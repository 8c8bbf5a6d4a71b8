import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import { HearthApi } from "../http/Api.ts"
import { Caller, type Principal } from "../http/Authentication.ts"
import * as Errors from "../http/Errors.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { atLeast } from "../orgs/Policy.ts"
import type { RepoAccess } from "../repos/Policy.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { toApiUser, type User } from "../users/Schema.ts"
import type { Branch, Commit, Tag } from "./Api.ts"
import { parseArchiveName, streamGit } from "./Archive.ts"
import * as Reader from "./Service.ts"

// Hearth does not verify signatures yet; this is Forgejo's answer for an unsigned commit.
const UNSIGNED = { verified: false, reason: "gpg.error.not_signed_commit", signature: "", signer: null, payload: "" }

export const BranchesHttp = HttpApiBuilder.group(HearthApi, "branches", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* Settings
    const repos = yield* ReposService
    const users = yield* UsersRepo
    const root = settings.server.ROOT_URL

    /** The repository, its path on disk and the viewer's access; 404 when the viewer may not see it. */
    const open = (ownerName: string, name: string) =>
      Effect.gen(function*() {
        const viewer = Option.getOrUndefined(yield* Caller)
        return { viewer, ...yield* repos.open(viewer, ownerName, name) }
      })

    const apiBase = (owner: UserRow, repo: RepoRow) => `${root}api/v1/repos/${owner.name}/${repo.name}`
    const htmlBase = (owner: UserRow, repo: RepoRow) => `${root}${owner.name}/${repo.name}`

    /** Accounts behind commit e-mails (null when none), looked up once per address. */
    const accountsByEmail = (emails: ReadonlyArray<string>, viewer: Principal | undefined) =>
      Effect.gen(function*() {
        const found = new Map<string, User | null>()
        for (const email of emails) {
          const key = email.toLowerCase()
          if (found.has(key)) continue
          const row = email === "" ? Option.none() : yield* Effect.orDie(users.findByEmail(email))
          found.set(key, Option.isSome(row) ? toApiUser(settings, row.value, viewer) : null)
        }
        return (email: string) => found.get(email.toLowerCase()) ?? null
      })

    const toCommits = (owner: UserRow, repo: RepoRow, commits: ReadonlyArray<Reader.CommitInfo>, viewer: Principal | undefined) =>
      Effect.gen(function*() {
        const userOf = yield* accountsByEmail(commits.flatMap((c) => [c.author.email, c.committer.email]), viewer)
        const api = apiBase(owner, repo)
        return commits.map((c): Commit => ({
          url: `${api}/git/commits/${c.sha}`,
          sha: c.sha,
          created: c.committer.date,
          html_url: `${htmlBase(owner, repo)}/commit/${c.sha}`,
          commit: {
            url: `${api}/git/commits/${c.sha}`,
            author: c.author,
            committer: c.committer,
            message: c.message,
            tree: { url: `${api}/git/trees/${c.tree}`, sha: c.tree, created: c.committer.date },
            verification: UNSIGNED
          },
          author: userOf(c.author.email),
          committer: userOf(c.committer.email),
          parents: c.parents.map((p) => ({ url: `${api}/git/commits/${p}`, sha: p, created: c.committer.date }))
        }))
      })

    /** One commit for `ref` (branch, tag or commit id), or 404. */
    const oneCommit = (params: { owner: string; repo: string }, ref: string) =>
      Effect.gen(function*() {
        const { viewer, owner, repo, path } = yield* open(params.owner, params.repo)
        const commit = yield* Reader.readCommit(path, ref)
        if (Option.isNone(commit)) return yield* Errors.notFound()
        const [converted] = yield* toCommits(owner, repo, [commit.value], viewer)
        return converted!
      })

    const toBranch = (
      owner: UserRow,
      repo: RepoRow,
      name: string,
      commit: Reader.CommitInfo,
      canWrite: boolean
    ): Branch => {
      const user = (s: Reader.Signature) => ({ name: s.name, email: s.email, username: "" })
      return {
        name,
        commit: {
          id: commit.sha,
          message: commit.message,
          url: `${htmlBase(owner, repo)}/commit/${commit.sha}`,
          author: user(commit.author),
          committer: user(commit.committer),
          verification: UNSIGNED,
          timestamp: commit.committer.date,
          added: null,
          removed: null,
          modified: null
        },
        // Branch protection is not implemented yet: nothing is protected.
        protected: false,
        required_approvals: 0,
        enable_status_check: false,
        status_check_contexts: [],
        user_can_push: canWrite,
        user_can_merge: canWrite,
        effective_branch_protection_name: ""
      }
    }

    const toTag = (owner: UserRow, repo: RepoRow, tag: Reader.TagInfo): Tag => ({
      name: tag.name,
      message: tag.message,
      id: tag.id,
      commit: { url: `${apiBase(owner, repo)}/git/commits/${tag.commit.sha}`, sha: tag.commit.sha, created: tag.commit.committer.date },
      zipball_url: `${htmlBase(owner, repo)}/archive/${tag.name}.zip`,
      tarball_url: `${htmlBase(owner, repo)}/archive/${tag.name}.tar.gz`,
      archive_download_count: { zip: 0, tar_gz: 0 }
    })

    const canWrite = (access: RepoAccess, viewer: Principal | undefined, repo: RepoRow) =>
      viewer !== undefined && !repo.isArchived && atLeast(access.mode, "write")

    return handlers
      .handle("listCommits", ({ params, query }) =>
        Effect.gen(function*() {
          const { viewer, owner, repo, path } = yield* open(params.owner, params.repo)
          yield* Reader.ensureNotEmpty(path)
          // A NUL cannot reach git's argv; reject it instead of failing the spawn.
          if (query.path?.includes("\0")) return yield* Errors.validationFailed("path must not contain NUL")
          const ref = query.sha === undefined || query.sha === "" ? repo.defaultBranch : query.sha
          const head = yield* Reader.resolveCommit(path, ref)
          if (Option.isNone(head)) return yield* Errors.notFound()
          const page = yield* resolvePage(query)
          const { commits, total } = yield* Reader.listCommits(path, head.value, page, query.path)
          yield* setListHeaders(page, total, { withLink: true })
          return yield* toCommits(owner, repo, commits, viewer)
        }))
      .handle("getCommitByRef", ({ params }) => oneCommit(params, params.ref))
      .handle("getCommit", ({ params }) =>
        Effect.gen(function*() {
          // Forgejo: only a commit id (4 to 64 hex digits) is accepted here.
          if (!/^[0-9a-fA-F]{4,64}$/.test(params.sha)) {
            return yield* Errors.validationFailed(`no valid ref or sha: ${params.sha}`)
          }
          return yield* oneCommit(params, params.sha)
        }))
      .handle("listBranches", ({ params, query }) =>
        Effect.gen(function*() {
          const { viewer, owner, repo, path, access } = yield* open(params.owner, params.repo)
          const page = yield* resolvePage(query)
          const refs = (yield* Effect.orDie(Git.listRefs(path, "refs/heads/"))).filter((r) => r.type === "commit")
          const slice = refs.slice(page.offset, page.offset + page.limit)
          const commits = new Map((yield* Reader.readCommits(path, slice.map((r) => r.sha))).map((c) => [c.sha, c]))
          yield* setListHeaders(page, refs.length, { withLink: true })
          const write = canWrite(access, viewer, repo)
          return slice.flatMap((r) => {
            const commit = commits.get(r.sha)
            return commit === undefined ? [] : [toBranch(owner, repo, r.ref.slice("refs/heads/".length), commit, write)]
          })
        }))
      .handle("getBranch", ({ params }) =>
        Effect.gen(function*() {
          const { viewer, owner, repo, path, access } = yield* open(params.owner, params.repo)
          const name = params.branch
          if (Git.branchNameProblem(name) !== undefined) return yield* Errors.notFound()
          const sha = yield* Effect.orDie(Git.revParse(path, `refs/heads/${name}^{commit}`))
          if (Option.isNone(sha)) return yield* Errors.notFound()
          const [commit] = yield* Reader.readCommits(path, [sha.value])
          if (commit === undefined) return yield* Errors.notFound()
          return toBranch(owner, repo, name, commit, canWrite(access, viewer, repo))
        }))
      .handle("listTags", ({ params, query }) =>
        Effect.gen(function*() {
          const { owner, repo, path } = yield* open(params.owner, params.repo)
          const page = yield* resolvePage(query)
          const tags = yield* Reader.listTags(path)
          yield* setListHeaders(page, tags.length, { withLink: true })
          return tags.slice(page.offset, page.offset + page.limit).map((tag) => toTag(owner, repo, tag))
        }))
      .handle("getTag", ({ params }) =>
        Effect.gen(function*() {
          const { owner, repo, path } = yield* open(params.owner, params.repo)
          const name = params.tag
          if (Git.branchNameProblem(name) !== undefined) return yield* Errors.notFound()
          // for-each-ref matches whole components, so `v1` does not list `v1.0`; keep the exact name only.
          const tag = (yield* Reader.listTags(path, name)).find((t) => t.name === name)
          if (tag === undefined) return yield* Errors.notFound()
          return toTag(owner, repo, tag)
        }))
      .handle("getArchive", ({ params }) =>
        Effect.gen(function*() {
          const { repo, path } = yield* open(params.owner, params.repo)
          const parsed = parseArchiveName(params.archive)
          if (parsed === undefined) return yield* Errors.validationFailed(`unknown archive format: ${params.archive}`)
          const sha = yield* Reader.resolveCommit(path, parsed.ref)
          if (Option.isNone(sha)) return yield* Errors.notFound()
          const filename = `${repo.name}-${parsed.ref.replace(/\//g, "-")}${parsed.format.ext}`
          if (parsed.format.ext === ".bundle") {
            // A bundle carries refs and git refuses to bundle a bare commit id: branches and tags only.
            const ref = yield* Reader.resolveRefName(path, parsed.ref)
            if (Option.isNone(ref)) return yield* Errors.notFound()
            return yield* streamGit(path, ["bundle", "create", "--quiet", "-", ref.value], parsed.format, filename)
          }
          const format = parsed.format.ext === ".zip" ? "zip" : "tar.gz"
          return yield* streamGit(
            path,
            ["archive", `--format=${format}`, `--prefix=${repo.name}/`, "--end-of-options", sha.value],
            parsed.format,
            filename
          )
        }))
  }))

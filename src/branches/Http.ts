import { Effect, Option } from "effect"
import { HearthApi } from "../Api.ts"
import { Settings } from "../config/Settings.ts"
import { created, deleted, pushed } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { RepositoryWriter, toApiError, type WriteRejected } from "../git/Repository.ts"
import * as Write from "../git/Write.ts"
import { type Principal, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { branchNameProblem, NAME_MAX, refNameProblem } from "../lib/Names.ts"
import { ProtectionService } from "../protection/Service.ts"
import { QuotaService } from "../quota/Service.ts"
import { ReleasesService } from "../releases/Service.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import type { RepoAccess } from "../repos/Policy.ts"
import type { RepoRow } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import type { UserRow } from "../users/Repo.ts"
import { gitIdentity } from "../users/Schema.ts"
import type { Branch, Tag } from "./Api.ts"
import { parseArchiveName, streamGit } from "./Archive.ts"
import { type DetailOptions, detailOptions, makeCommitPresenter } from "./Commits.ts"
import * as Reader from "./Service.ts"

/** A name with `/` that reached a `/{name}/{rest}/*` route, put back together. */
const joinName = (first: string, rest?: string, tail?: string) =>
  [first, rest, tail].filter((part): part is string => part !== undefined && part !== "").join("/")

/** Git's rules, and Forgejo's limit of 100 characters for branch names given to the API. */
const branchProblem = (name: string) =>
  branchNameProblem(name) ?? (name.length > NAME_MAX.branch ? `longer than ${NAME_MAX.branch} characters` : undefined)

const BRANCH_EXISTS = "The branch already exists."
const RENAME_TARGET_EXISTS = "Cannot rename a branch using the same name or rename to a branch that already exists."

export const BranchesHttp = apiGroup(HearthApi, "branches", (handlers) =>
  Effect.gen(function* () {
    const settings = yield* Settings
    const repos = yield* ReposService
    const events = yield* EventHub
    const writer = yield* RepositoryWriter
    const quota = yield* QuotaService
    const protection = yield* ProtectionService
    const releases = yield* ReleasesService
    const root = settings.server.ROOT_URL

    /** The repository of the path, opened by the assignment (Assignment.ts), and the viewer. */
    const open = Effect.map(CurrentRepo, (opened) => ({ viewer: opened.caller, ...opened }))

    const apiBase = (owner: UserRow, repo: RepoRow) => `${root}api/v1/repos/${owner.name}/${repo.name}`
    const htmlBase = (owner: UserRow, repo: RepoRow) => `${root}${owner.name}/${repo.name}`

    const { accountsByEmail, toCommits, verify } = yield* makeCommitPresenter

    /** One commit for `ref` (branch, tag or commit id), or 404. */
    const oneCommit = (ref: string, options: DetailOptions) =>
      Effect.gen(function* () {
        const { viewer, owner, repo, path } = yield* open
        const commit = yield* Reader.readCommit(path, ref)
        if (Option.isNone(commit)) return yield* Errors.notFound()
        const [converted] = yield* toCommits(owner, repo, path, [commit.value], viewer, options)
        return converted!
      })

    /** Forgejo's GetSingleCommit: `ref` must be a commit id or a ref name (`IsValidRefPattern`), else 422. */
    const singleCommit = (ref: string, query: Parameters<typeof detailOptions>[0]) =>
      refNameProblem(ref, { allowOneLevel: true }) !== undefined
        ? Effect.fail(Errors.validationFailed(`no valid ref or sha: ${ref}`))
        : oneCommit(ref, detailOptions(query))

    /** Branches (name and head commit) as Forgejo's `Branch`, with one look-up per e-mail and one git call for signatures. */
    const toBranches = (
      owner: UserRow,
      repo: RepoRow,
      path: string,
      items: ReadonlyArray<{ readonly name: string; readonly commit: Reader.CommitInfo }>,
      canWrite: boolean,
      viewer: Principal | undefined
    ) =>
      Effect.gen(function* () {
        const userOf = yield* accountsByEmail(
          items.flatMap((i) => [i.commit.author.email, i.commit.committer.email]),
          viewer
        )
        const signatures = yield* Reader.commitSignatures(path, [...new Set(items.map((i) => i.commit.sha))])
        const verifications = new Map<string, Branch["commit"]["verification"]>()
        for (const { commit } of items) {
          if (!verifications.has(commit.sha))
            verifications.set(commit.sha, yield* verify(signatures.get(commit.sha), commit.committer.email))
        }
        const views = yield* protection.branchViews(
          { owner, repo },
          viewer?.user,
          canWrite,
          items.map((i) => i.name)
        )
        const user = (s: Reader.Signature) => ({ name: s.name, email: s.email, username: userOf(s.email)?.login ?? "" })
        return items.map(({ commit, name }): Branch => {
          const view = views.get(name)
          const rule = view?.rule
          return {
            name,
            commit: {
              id: commit.sha,
              message: commit.message,
              url: `${htmlBase(owner, repo)}/commit/${commit.sha}`,
              author: user(commit.author),
              committer: user(commit.committer),
              verification: verifications.get(commit.sha)!,
              // Forgejo's PayloadCommit carries the author's date.
              timestamp: commit.author.date,
              added: null,
              removed: null,
              modified: null
            },
            // Forgejo's `ToBranch`: the rule covering the branch, and what the viewer may do there.
            protected: rule !== undefined,
            required_approvals: rule?.requiredApprovals ?? 0,
            enable_status_check: rule?.enableStatusCheck ?? false,
            status_check_contexts: [...(rule?.statusCheckContexts ?? [])],
            user_can_push: view?.canPush ?? canWrite,
            user_can_merge: view?.canMerge ?? canWrite,
            effective_branch_protection_name: rule?.ruleName ?? ""
          }
        })
      })

    const toTag = (owner: UserRow, repo: RepoRow, tag: Reader.TagInfo): Tag => ({
      name: tag.name,
      message: tag.message,
      id: tag.id,
      commit: {
        url: `${apiBase(owner, repo)}/git/commits/${tag.commit.sha}`,
        sha: tag.commit.sha,
        created: tag.commit.committer.date
      },
      zipball_url: `${htmlBase(owner, repo)}/archive/${tag.name}.zip`,
      tarball_url: `${htmlBase(owner, repo)}/archive/${tag.name}.tar.gz`,
      archive_download_count: { zip: 0, tar_gz: 0 }
    })

    const canWrite = (access: RepoAccess, viewer: Principal | undefined, repo: RepoRow) =>
      viewer !== undefined && !repo.isArchived && atLeast(access.mode, "write")

    /** One branch by name, or 404 (an invalid name cannot exist). */
    const getBranch = (name: string) =>
      Effect.gen(function* () {
        const { viewer, owner, repo, path, access } = yield* open
        if (branchNameProblem(name) !== undefined) return yield* Errors.notFound()
        const sha = yield* Effect.orDie(Git.revParse(path, `refs/heads/${name}^{commit}`))
        if (Option.isNone(sha)) return yield* Errors.notFound()
        const [commit] = yield* Reader.readCommits(path, [sha.value])
        if (commit === undefined) return yield* Errors.notFound()
        const [branch] = yield* toBranches(
          owner,
          repo,
          path,
          [{ name, commit }],
          canWrite(access, viewer, repo),
          viewer
        )
        return branch!
      })

    /** One tag by name, or 404. */
    const getTag = (name: string) =>
      Effect.gen(function* () {
        const { owner, repo, path } = yield* open
        if (branchNameProblem(name) !== undefined) return yield* Errors.notFound()
        // for-each-ref matches whole components, so `v1` does not list `v1.0`; keep the exact name only.
        const tag = (yield* Reader.listTags(path, name)).find((t) => t.name === name)
        if (tag === undefined) return yield* Errors.notFound()
        return toTag(owner, repo, tag)
      })

    // ---- Writes: signed in (the Access rule), visible (404), writable (403), not archived (423),
    // in Forgejo's order; the change itself goes through the repository's entity.

    // The assignment checked the route's rule (write on code, not being created, not archived, not a mirror).
    const openForWrite = Effect.gen(function* () {
      const caller = yield* signedInCaller
      const { owner, repo, path, access } = yield* CurrentRepo
      return { caller, owner, repo, path, access, target: { id: repo.id, dir: path } }
    })

    /** A write that adds to the repository (a branch, a tag): charged to its owner's quota first. */
    const openForGrowth = Effect.tap(openForWrite, ({ owner }) => quota.enforce(owner, "size:repos:all"))

    /** Forgejo answers 404 for branch changes in a repository nothing was pushed to yet. */
    const notEmpty = (path: string) =>
      Effect.flatMap(Effect.orDie(Git.isEmpty(path)), (empty) => (empty ? Effect.fail(Errors.notFound()) : Effect.void))

    const branchesOf = (path: string) =>
      Effect.map(
        Effect.orDie(Git.listRefs(path, "refs/heads/")),
        (refs) => new Map(refs.map((r) => [r.ref.slice("refs/heads/".length), r.sha]))
      )

    /** The existing branch that `name` cannot live next to (`a` blocks `a/b` and the reverse). */
    const pathConflict = (name: string, branches: Iterable<string>) => {
      for (const other of branches) {
        if (name.startsWith(`${other}/`) || other.startsWith(`${name}/`)) return other
      }
      return undefined
    }

    const writeFailed = (e: WriteRejected) => Effect.fail(toApiError(e))

    /** Where a new branch starts: old_ref_name (branch, tag or commit), else old_branch_name (a branch), else the default branch. */
    const sourceOf = (
      path: string,
      repo: RepoRow,
      payload: { readonly old_ref_name?: string; readonly old_branch_name?: string }
    ) => {
      if (payload.old_ref_name !== undefined && payload.old_ref_name !== "")
        return Reader.resolveCommit(path, payload.old_ref_name)
      const branch =
        payload.old_branch_name !== undefined && payload.old_branch_name !== ""
          ? payload.old_branch_name
          : repo.defaultBranch
      if (branchNameProblem(branch) !== undefined) return Effect.succeed(Option.none<string>())
      return Effect.orDie(Git.revParse(path, `refs/heads/${branch}^{commit}`))
    }

    const deleteBranch = (name: string) =>
      Effect.gen(function* () {
        const { caller, owner, repo, path, target } = yield* openForWrite
        yield* notEmpty(path)
        if (branchNameProblem(name) !== undefined) return yield* Errors.notFound()
        if (name === repo.defaultBranch) return yield* Errors.forbidden("can not delete default branch")
        const sha = yield* Effect.orDie(Git.revParse(path, `refs/heads/${name}`))
        if (Option.isNone(sha)) return yield* Errors.notFound()
        yield* protection.checkBranchRemoval({ owner, repo }, name)
        yield* writer
          .updateRefs(target, [{ ref: `refs/heads/${name}`, newSha: Git.ZERO_SHA, oldSha: sha.value }])
          .pipe(Effect.catch(writeFailed))
        yield* events.publish(pushed(owner, repo, caller.user, "api", [deleted(`refs/heads/${name}`, sha.value)]))
      })

    const renameBranch = (from: string, to: string) =>
      Effect.gen(function* () {
        const { caller, owner, repo, path, target } = yield* openForWrite
        yield* notEmpty(path)
        const problem = branchProblem(to)
        if (problem !== undefined)
          return yield* Errors.validationFailed(`[Name]: invalid branch name "${to}": ${problem}`)
        const branches = yield* branchesOf(path)
        if (from === to || branches.has(to)) return yield* Errors.validationFailed(RENAME_TARGET_EXISTS)
        const sha = branches.get(from)
        if (sha === undefined) return yield* Errors.notFound()
        // Renaming removes the old name: refused where deleting would be.
        yield* protection.checkBranchRemoval({ owner, repo }, from)
        const blocking = pathConflict(to, branches.keys())
        if (blocking !== undefined) {
          return yield* Errors.conflict(
            `branch "${to}" cannot exist next to the branch "${blocking}": rename in two steps`
          )
        }
        // Both refs change in one transaction: nobody ever sees the branch twice or not at all.
        yield* writer
          .updateRefs(target, [
            { ref: `refs/heads/${to}`, newSha: sha, oldSha: Git.ZERO_SHA },
            { ref: `refs/heads/${from}`, newSha: Git.ZERO_SHA, oldSha: sha }
          ])
          .pipe(Effect.catch(writeFailed))
        let row = repo
        if (from === repo.defaultBranch) {
          yield* writer.setHead(target, to).pipe(Effect.catch(writeFailed))
          row = yield* repos.edit(owner, repo, { default_branch: to })
        }
        const moves = [created(`refs/heads/${to}`, sha), deleted(`refs/heads/${from}`, sha)]
        yield* events.publish(pushed(owner, row, caller.user, "api", moves))
      })

    const deleteTag = (name: string) =>
      Effect.gen(function* () {
        const { caller, owner, repo, path, target } = yield* openForWrite
        if (branchNameProblem(name) !== undefined) return yield* Errors.notFound()
        // The ref's own value (a tag object for an annotated tag), for the compare-and-swap.
        const sha = yield* Effect.orDie(Git.revParse(path, `refs/tags/${name}`))
        if (Option.isNone(sha)) return yield* Errors.notFound()
        // A release (a draft too) stands on the tag (Forgejo's DeleteTag: 409, before protection).
        if (yield* releases.tagInUse(repo.id, name))
          return yield* Errors.conflict("a tag attached to a release cannot be deleted directly")
        // Tag protection (Forgejo's DeleteTag: 422).
        if (!(yield* protection.mayControlTag({ owner, repo }, caller.user, name)))
          return yield* Errors.validationFailed("user not allowed to delete protected tag")
        yield* writer
          .updateRefs(target, [{ ref: `refs/tags/${name}`, newSha: Git.ZERO_SHA, oldSha: sha.value }])
          .pipe(Effect.catch(writeFailed))
        yield* events.publish(pushed(owner, repo, caller.user, "api", [deleted(`refs/tags/${name}`, sha.value)]))
      })

    /** `{ref}.zip`, `{ref}.tar.gz` or `{ref}.bundle` of the repository. */
    const archive = (name: string) =>
      Effect.gen(function* () {
        const { repo, path } = yield* open
        const parsed = parseArchiveName(name)
        if (parsed === undefined) return yield* Errors.validationFailed(`unknown archive format: ${name}`)
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
      })

    return handlers
      .handle("listCommits", ({ query }) =>
        Effect.gen(function* () {
          const { viewer, owner, repo, path } = yield* open
          yield* Reader.ensureNotEmpty(path)
          // A NUL cannot reach git's argv; reject it instead of failing the spawn.
          if (query.path?.includes("\0")) return yield* Errors.validationFailed("path must not contain NUL")
          // git refuses a pathspec that leaves the repository (a 500 before); no commit touches one.
          if (query.path?.split("/").includes("..")) {
            return yield* Errors.validationFailed(
              `[path]: ${JSON.stringify(query.path.slice(0, 100))} is not a path inside the repository`
            )
          }
          const ref = query.sha === undefined || query.sha === "" ? repo.defaultBranch : query.sha
          const head = yield* Reader.resolveCommit(path, ref)
          if (Option.isNone(head)) return yield* Errors.notFound()
          let not: string | undefined
          if (query.not !== undefined && query.not !== "") {
            const excluded = yield* Reader.resolveCommit(path, query.not)
            if (Option.isNone(excluded)) {
              return yield* Errors.validationFailed(`[not]: no branch, tag or commit is named "${query.not}"`)
            }
            not = excluded.value
          }
          const page = yield* resolvePage(query)
          const { commits, total } = yield* Reader.listCommits(path, head.value, page, query.path, not)
          // Forgejo: a path no commit touches is not found (`FileCommitsCount` of 0).
          if (total === 0 && query.path !== undefined && query.path !== "") return yield* Errors.notFound()
          yield* setListHeaders(page, total, { withLink: true, withPageCount: true })
          return yield* toCommits(owner, repo, path, commits, viewer, detailOptions(query))
        })
      )
      .handle("getCommitByRef", ({ params, query }) => oneCommit(params.ref, detailOptions(query)))
      .handle("getCommitByRefDeep", ({ params, query }) =>
        oneCommit(joinName(params.ref, params.rest, params["*"]), detailOptions(query))
      )
      .handle("getCommit", ({ params, query }) => singleCommit(params.sha, query))
      .handle("getCommitDeep", ({ params, query }) =>
        singleCommit(joinName(params.sha, params.rest, params["*"]), query)
      )
      .handle("listBranches", ({ query }) =>
        Effect.gen(function* () {
          const { viewer, owner, repo, path, access } = yield* open
          const page = yield* resolvePage(query)
          const refs = (yield* Effect.orDie(Git.listRefs(path, "refs/heads/"))).filter((r) => r.type === "commit")
          const slice = refs.slice(page.offset, page.offset + page.limit)
          const commits = new Map(
            (yield* Reader.readCommits(
              path,
              slice.map((r) => r.sha)
            )).map((c) => [c.sha, c])
          )
          yield* setListHeaders(page, refs.length, { withLink: true })
          const items = slice.flatMap((r) => {
            const commit = commits.get(r.sha)
            return commit === undefined ? [] : [{ name: r.ref.slice("refs/heads/".length), commit }]
          })
          return yield* toBranches(owner, repo, path, items, canWrite(access, viewer, repo), viewer)
        })
      )
      .handle("createBranch", ({ payload }) =>
        Effect.gen(function* () {
          const { caller, owner, repo, path, access, target } = yield* openForGrowth
          const name = payload.new_branch_name
          const problem = branchProblem(name)
          if (problem !== undefined) {
            return yield* Errors.validationFailed(`[BranchName]: invalid branch name "${name}": ${problem}`)
          }
          yield* notEmpty(path)
          const source = yield* sourceOf(path, repo, payload)
          if (Option.isNone(source)) return yield* Errors.notFound()
          const branches = yield* branchesOf(path)
          if (branches.has(name)) return yield* Errors.conflict(BRANCH_EXISTS)
          if (pathConflict(name, branches.keys()) !== undefined) {
            return yield* Errors.conflict("The branch with the same name already exists.")
          }
          if (Option.isSome(yield* Effect.orDie(Git.revParse(path, `refs/tags/${name}`)))) {
            return yield* Errors.conflict("The branch with the same tag already exists.")
          }
          yield* writer
            .updateRefs(target, [{ ref: `refs/heads/${name}`, newSha: source.value, oldSha: Git.ZERO_SHA }])
            .pipe(
              // Another request made it first: the same answer as when it already existed.
              Effect.catch((e) =>
                e.reason === "conflict" ? Effect.fail(Errors.conflict(BRANCH_EXISTS)) : writeFailed(e)
              )
            )
          yield* events.publish(pushed(owner, repo, caller.user, "api", [created(`refs/heads/${name}`, source.value)]))
          const [commit] = yield* Reader.readCommits(path, [source.value])
          const [branch] = yield* toBranches(
            owner,
            repo,
            path,
            [{ name, commit: commit! }],
            canWrite(access, caller, repo),
            caller
          )
          return branch!
        })
      )
      .handle("getBranch", ({ params }) => getBranch(params.branch))
      .handle("getBranchDeep", ({ params }) => getBranch(joinName(params.branch, params.rest, params["*"])))
      .handle("deleteBranch", ({ params }) => deleteBranch(params.branch))
      .handle("deleteBranchDeep", ({ params }) => deleteBranch(joinName(params.branch, params.rest, params["*"])))
      .handle("updateBranch", ({ params, payload }) => renameBranch(params.branch, payload.name))
      .handle("updateBranchDeep", ({ params, payload }) =>
        renameBranch(joinName(params.branch, params.rest, params["*"]), payload.name)
      )
      .handle("listTags", ({ query }) =>
        Effect.gen(function* () {
          const { owner, repo, path } = yield* open
          const page = yield* resolvePage(query)
          const tags = yield* Reader.listTags(path)
          yield* setListHeaders(page, tags.length, { withLink: true })
          return tags.slice(page.offset, page.offset + page.limit).map((tag) => toTag(owner, repo, tag))
        })
      )
      .handle("createTag", ({ payload }) =>
        Effect.gen(function* () {
          const { caller, owner, repo, path, target } = yield* openForGrowth
          const name = payload.tag_name
          const problem = branchNameProblem(name)
          if (problem !== undefined)
            return yield* Errors.validationFailed(`[TagName]: invalid tag name "${name}": ${problem}`)
          const message = payload.message ?? ""
          if (message.includes("\0")) return yield* Errors.validationFailed("[Message]: must not contain NUL")
          const targetName = payload.target === undefined || payload.target === "" ? repo.defaultBranch : payload.target
          const commit = yield* Reader.resolveCommit(path, targetName)
          if (Option.isNone(commit)) return yield* Errors.notFound()
          const tags = (yield* Effect.orDie(Git.listRefs(path, "refs/tags/"))).map((r) =>
            r.ref.slice("refs/tags/".length)
          )
          const blocking = pathConflict(name, tags)
          if (blocking !== undefined)
            return yield* Errors.conflict(`tag "${name}" cannot exist next to the tag "${blocking}"`)
          const user = caller.user
          // Tag protection (Forgejo's CreateTag: 422).
          if (!(yield* protection.mayControlTag({ owner, repo }, user, name)))
            return yield* Errors.validationFailed("user not allowed to create protected tag")
          const tagSha = yield* writer
            .createTag(target, {
              name,
              target: commit.value,
              message,
              tagger: Write.signatureAt(gitIdentity(settings, user), new Date())
            })
            .pipe(Effect.catch(writeFailed))
          yield* events.publish(pushed(owner, repo, user, "api", [created(`refs/tags/${name}`, tagSha)]))
          const tag = (yield* Reader.listTags(path, name)).find((t) => t.name === name)
          if (tag === undefined) return yield* Effect.die(new Error(`tag ${name} vanished right after it was created`))
          return toTag(owner, repo, tag)
        })
      )
      .handle("getTag", ({ params }) => getTag(params.tag))
      .handle("getTagDeep", ({ params }) => getTag(joinName(params.tag, params.rest, params["*"])))
      .handle("deleteTag", ({ params }) => deleteTag(params.tag))
      .handle("deleteTagDeep", ({ params }) => deleteTag(joinName(params.tag, params.rest, params["*"])))
      .handle("getArchive", ({ params }) => archive(params.archive))
      .handle("getArchiveDeep", ({ params }) => archive(joinName(params.archive, params.rest, params["*"])))
  })
)

// Repository rules: names (Forgejo's IsUsableRepoName), creation and deletion that keep the
// database row and the bare repository on disk together, and the lists.

import { existsSync } from "node:fs"
import { join } from "node:path"
import { Context, Effect, Layer, Option, Semaphore } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Settings } from "../config/Settings.ts"
import { onAlreadyExists, transaction as sqlTransaction } from "../db/Boundary.ts"
import { subject, ZERO_ID } from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import { type RepositoryRef, RepositoryWriter, toApiError } from "../git/Repository.ts"
import { signWith } from "../git/Signing.ts"
import { CommitSigner } from "../git/SigningRules.ts"
import * as Write from "../git/Write.ts"
import type { RepoRule } from "../http/Access.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { LanguagesService } from "../languages/Service.ts"
import { afterAnswer } from "../lib/AfterAnswer.ts"
import { formatGoDuration, parseGoDuration } from "../lib/Duration.ts"
import { branchNameProblem, NAME_MAX, repoNameProblem } from "../lib/Names.ts"
import { QuotaService } from "../quota/Service.ts"
import { SocialRepo } from "../social/Repo.ts"
import * as Templates from "../templates/Service.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { gitIdentity } from "../users/Schema.ts"
import { wikiDir, wikiRef } from "../wiki/Location.ts"
import { ensureAllowed, type OpenedRepository, RepoPolicy } from "./Policy.ts"
import {
  type Collaborator,
  type CollaboratorMode,
  type Listed,
  MERGE_STYLES,
  type NewRepo,
  REPO_ORDERS,
  type RepoChanges,
  type RepoFilter,
  type RepoOrder,
  type RepoRow,
  type RepoSearch,
  ReposRepo,
  type SearchPage,
  UPDATE_STYLES
} from "./Repo.ts"
import type { CreateRepoOption, EditRepoOption } from "./Schema.ts"

const TRUST_MODELS = ["", "default", "collaborator", "committer", "collaboratorcommitter"]

/** Why a repository's default branch is refused, in Forgejo's binding words, or `undefined`. */
const defaultBranchProblem = (name: string): string | undefined =>
  name.length > NAME_MAX.branch
    ? `[DefaultBranch]: MaxSize (${NAME_MAX.branch})`
    : branchNameProblem(name) === undefined
      ? undefined
      : `[DefaultBranch]: invalid branch name "${name}"`

const createProblem = (input: CreateRepoOption): string | undefined =>
  repoNameProblem(input.name) ??
  (input.description !== undefined && input.description.length > 2048 ? "[Description]: MaxSize (2048)" : undefined) ??
  (input.default_branch !== undefined && input.default_branch !== ""
    ? defaultBranchProblem(input.default_branch)
    : undefined) ??
  (input.trust_model !== undefined && !TRUST_MODELS.includes(input.trust_model)
    ? `[TrustModel]: must be one of default, collaborator, committer, collaboratorcommitter: "${input.trust_model}"`
    : undefined) ??
  (input.object_format_name !== undefined && !["", "sha1", "sha256"].includes(input.object_format_name)
    ? `[ObjectFormatName]: must be sha1 or sha256: "${input.object_format_name}"`
    : undefined) ??
  // Not supported yet; refused rather than silently ignored.
  (input.object_format_name === "sha256" ? "object_format_name sha256 is not supported yet" : undefined)

const isHttpUrl = (value: string) => {
  try {
    const url = new URL(value)
    return (url.protocol === "http:" || url.protocol === "https:") && url.host !== ""
  } catch {
    return false
  }
}

/** EditRepoOption's field checks (those that need no git): a message, or the columns to write. */
const editChanges = (repo: RepoRow, input: EditRepoOption, minMirrorInterval: number): string | RepoChanges => {
  const changes: { -readonly [K in keyof RepoChanges]: RepoChanges[K] } = {}
  if (input.name !== undefined && input.name !== repo.name) {
    const problem = repoNameProblem(input.name)
    if (problem !== undefined) return problem
    changes.name = input.name
    changes.lower_name = input.name.toLowerCase()
  }
  if (input.description !== undefined) {
    if (input.description.length > 2048) return "[Description]: MaxSize (2048)"
    changes.description = input.description
  }
  if (input.website !== undefined) {
    if (input.website.length > 1024) return "[Website]: MaxSize (1024)"
    if (input.website !== "" && !isHttpUrl(input.website)) return `[Website]: Invalid url: "${input.website}"`
    changes.website = input.website
  }
  if (input.default_branch !== undefined && input.default_branch !== repo.defaultBranch) {
    const problem = defaultBranchProblem(input.default_branch)
    if (problem !== undefined) return problem
    changes.default_branch = input.default_branch
  }
  if (input.private !== undefined) changes.is_private = input.private
  if (input.template !== undefined) changes.is_template = input.template
  if (input.archived !== undefined && input.archived !== repo.isArchived) {
    if (repo.isMirror) return "repo is a mirror, cannot archive/un-archive"
    changes.is_archived = input.archived
    // archived_at is the time of the last archiving; un-archiving clears it.
    changes.archived_at = input.archived ? new Date() : null
  }
  if (input.enable_prune !== undefined) changes.enable_prune = input.enable_prune
  if (input.mirror_interval !== undefined) {
    const seconds = parseGoDuration(input.mirror_interval)
    if (seconds === undefined) return `invalid mirror interval: time: invalid duration "${input.mirror_interval}"`
    // 0 turns periodic syncing off; anything else must be at least the minimum interval.
    if (seconds !== 0 && seconds < minMirrorInterval) {
      return `invalid mirror interval: ${formatGoDuration(seconds)} is below the minimum interval ${formatGoDuration(minMirrorInterval)}`
    }
    changes.mirror_interval = formatGoDuration(seconds)
  }
  const units = [
    ["has_issues", input.has_issues],
    ["has_wiki", input.has_wiki],
    ["has_pull_requests", input.has_pull_requests],
    ["has_projects", input.has_projects],
    ["has_releases", input.has_releases],
    ["has_packages", input.has_packages],
    ["has_actions", input.has_actions]
  ] as const
  for (const [column, value] of units) if (value !== undefined) changes[column] = value
  // Forgejo's PullRequestsConfig; the styles must be ones Forgejo knows.
  if (
    input.default_merge_style !== undefined &&
    !(MERGE_STYLES as ReadonlyArray<string>).includes(input.default_merge_style)
  ) {
    return `[DefaultMergeStyle]: must be one of ${MERGE_STYLES.join(", ")}: "${input.default_merge_style}"`
  }
  if (
    input.default_update_style !== undefined &&
    !(UPDATE_STYLES as ReadonlyArray<string>).includes(input.default_update_style)
  ) {
    return `[DefaultUpdateStyle]: must be one of ${UPDATE_STYLES.join(", ")}: "${input.default_update_style}"`
  }
  const flags = [
    ["ignore_whitespace_conflicts", input.ignore_whitespace_conflicts],
    ["allow_merge_commits", input.allow_merge_commits],
    ["allow_rebase", input.allow_rebase],
    ["allow_rebase_explicit", input.allow_rebase_explicit],
    ["allow_squash_merge", input.allow_squash_merge],
    ["allow_fast_forward_only_merge", input.allow_fast_forward_only_merge],
    ["allow_manual_merge", input.allow_manual_merge],
    ["autodetect_manual_merge", input.autodetect_manual_merge],
    ["allow_rebase_update", input.allow_rebase_update],
    ["default_delete_branch_after_merge", input.default_delete_branch_after_merge],
    ["default_allow_maintainer_edit", input.default_allow_maintainer_edit],
    ["retarget_children_on_merge", input.retarget_children_on_merge]
  ] as const
  for (const [column, value] of flags) if (value !== undefined) changes[column] = value
  if (input.default_merge_style !== undefined) changes.default_merge_style = input.default_merge_style
  if (input.default_update_style !== undefined) changes.default_update_style = input.default_update_style
  // Forgejo's IssuesConfig of the issues unit (`internal_tracker`).
  const tracker = input.internal_tracker
  if (tracker?.enable_time_tracker !== undefined) changes.enable_time_tracker = tracker.enable_time_tracker
  if (tracker?.allow_only_contributors_to_track_time !== undefined) {
    changes.allow_only_contributors_to_track_time = tracker.allow_only_contributors_to_track_time
  }
  if (tracker?.enable_issue_dependencies !== undefined) {
    changes.enable_issue_dependencies = tracker.enable_issue_dependencies
  }
  return changes
}

const duplicate = () => Errors.conflict("The repository with the same name already exists.")

export class ReposService extends Context.Service<
  ReposService,
  {
    /** `{ROOT}/{lower owner}/{lower name}.git` */
    readonly pathOf: (owner: UserRow, repo: Pick<RepoRow, "lowerName">) => string
    readonly get: (owner: UserRow, name: string) => Effect.Effect<RepoRow, Errors.NotFound>
    /** The repository `ownerName/name` and its owner, or 404; visibility is the caller's to check. */
    readonly find: (
      ownerName: string,
      name: string
    ) => Effect.Effect<{ owner: UserRow; repo: RepoRow }, Errors.NotFound>
    /**
     * The repository `ownerName/name` opened for `viewer` under `rule` (Policy.ts `ensureAllowed`;
     * `undefined`: resolved only, the caller applies the rule): what the repository assignment
     * (Assignment.ts) gives every route under /repos/{owner}/{repo}. A 307 (RepositoryMoved) at an
     * old name the viewer may see there, 404 for what it may not see.
     */
    readonly assign: (
      viewer: Principal | undefined,
      ownerName: string,
      name: string,
      rule: RepoRule | undefined
    ) => Effect.Effect<
      OpenedRepository,
      Errors.NotFound | Errors.Forbidden | Errors.Conflict | Errors.Locked | Errors.RepositoryMoved
    >
    readonly getById: (id: number) => Effect.Effect<RepoRow, Errors.NotFound>
    /** Where an old `owner/name` (renamed or transferred) is now, if the viewer may see it there. */
    readonly redirectFor: (
      viewer: Principal | undefined,
      ownerName: string,
      name: string
    ) => Effect.Effect<Option.Option<Errors.RepositoryMoved>>
    /**
     * After the git data changed (a push, an API commit, a branch removed): what the database knows
     * of it — emptiness, size, updated_at, and, while the default branch does not exist, the first
     * branch (main or master preferred) as default. `maintain` also rewrites the commit-graph, in the
     * background. `branchesUnchanged`: the change only moved existing branches (or tags), so a
     * repository that was not empty keeps its branches and default branch (not listed again).
     */
    readonly recordGitChange: (
      owner: UserRow,
      repo: RepoRow,
      options?: { readonly maintain?: boolean; readonly branchesUnchanged?: boolean }
    ) => Effect.Effect<void>
    /**
     * A new repository of `owner`, charged to its quota (413 when over): the row and the bare
     * repository (a failure of either leaves neither), then the CreateRepository event.
     */
    readonly create: (
      owner: UserRow,
      input: CreateRepoOption,
      /** Who creates it: the author of the initial commit, and its first watcher (AUTO_WATCH_NEW_REPOS). */
      doer: UserRow
    ) => Effect.Effect<
      RepoRow,
      | Errors.ValidationFailed
      | Errors.Conflict
      | Errors.BadRequest
      | Errors.InternalError
      | Errors.NotFound
      | Errors.PayloadTooLarge
    >
    /** Deletes the row and the directory. */
    readonly remove: (owner: UserRow, repo: RepoRow) => Effect.Effect<void>
    /**
     * The row of a new repository of `owner`, the owner's count and a fork's source's count, in one
     * transaction (409 when the name is taken). The caller makes the directory next (`initDirectory`), outside the transaction.
     * `creator` (who asked for it) watches it when `[service] AUTO_WATCH_NEW_REPOS` is on, as
     * Forgejo's `CreateRepositoryByExample` does for new repositories, forks and migrations.
     */
    readonly insertRow: (
      owner: UserRow,
      values: Omit<NewRepo, "owner_id" | "lower_name">,
      creator: UserRow
    ) => Effect.Effect<RepoRow, Errors.Conflict>
    /**
     * Gives the repository to another account: the row (counts, redirect from the old name, the new
     * owner no longer a collaborator), then the directory through the entity; if the move fails the
     * row goes back. 422 when the new owner has a repository of that name, 409 when another
     * transfer of it got there first.
     */
    readonly changeOwner: (
      repo: RepoRow,
      from: UserRow,
      to: UserRow
    ) => Effect.Effect<RepoRow, Errors.ValidationFailed | Errors.Conflict | Errors.InternalError>
    /** An empty bare repository for a new row, through its entity; 500 if the disk refuses. */
    readonly initDirectory: (
      target: RepositoryRef,
      defaultBranch: string
    ) => Effect.Effect<void, Errors.InternalError | Errors.ValidationFailed | Errors.Conflict | Errors.NotFound>
    /**
     * PATCH /repos/{o}/{r}: validates everything before writing; a rename moves the directory after the
     * row (409 when the name is taken; the row is renamed back if the move fails); a default branch must exist unless the
     * repository is empty, and HEAD follows it.
     */
    readonly edit: (
      owner: UserRow,
      repo: RepoRow,
      input: EditRepoOption
    ) => Effect.Effect<RepoRow, Errors.ValidationFailed | Errors.Conflict>
    readonly listCollaborators: (repo: RepoRow, page: Page) => Effect.Effect<Listed<Collaborator>>
    readonly setCollaborator: (repo: RepoRow, user: UserRow, mode: CollaboratorMode) => Effect.Effect<void>
    readonly removeCollaborator: (repo: RepoRow, user: UserRow) => Effect.Effect<void>
    /** GET /repos/search; database errors stay typed (the route answers them with its own body). */
    readonly search: (search: RepoSearch, page: Page) => Effect.Effect<SearchPage>
    /** How many repositories the account owns (users and organizations cannot go while any remain). */
    readonly countOwnedBy: (owner: UserRow) => Effect.Effect<number>
    /** Lowers the counters of what `user` starred or watched; call before deleting the user. */
    readonly releaseCountsOfUser: (user: UserRow) => Effect.Effect<void>
    /** Deletes every repository the account owns (an admin's purge). */
    readonly removeAllOwnedBy: (owner: UserRow) => Effect.Effect<void>
    readonly listOwnedBy: (owner: UserRow, filter: RepoFilter, page: Page) => Effect.Effect<Listed<RepoRow>>
    /** `orderBy` is GET /user/repos' `order_by`: empty for the default (name), unknown → 422. */
    readonly listAccessible: (
      user: UserRow,
      publicOnly: boolean,
      orderBy: string,
      page: Page
    ) => Effect.Effect<Listed<RepoRow>, Errors.ValidationFailed>
  }
>()("hearth/repos/ReposService") {
  static readonly layer = Layer.effect(
    ReposService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const sql = yield* SqlClient
      const repos = yield* ReposRepo
      const issueRows = yield* IssuesRepo
      const users = yield* UsersRepo
      const social = yield* SocialRepo
      const policy = yield* RepoPolicy
      const writer = yield* RepositoryWriter
      const signing = yield* CommitSigner
      const languages = yield* LanguagesService
      const events = yield* EventHub
      const quota = yield* QuotaService

      const find = (ownerName: string, name: string) =>
        Effect.gen(function* () {
          const owner = yield* Effect.flatMap(users.findByName(ownerName), (account) =>
            Option.isSome(account) ? Effect.succeed(account.value) : Effect.fail(Errors.notFound())
          )
          const repo = yield* found(repos.findByName(owner.id, name))
          return { owner, repo }
        })

      const pathOf = (owner: UserRow, repo: Pick<RepoRow, "lowerName">) =>
        join(settings.repository.ROOT, owner.lowerName, `${repo.lowerName}.git`)

      // Rule failures roll the transaction back and stay typed; database errors are defects.
      const transaction = sqlTransaction(sql)

      const found = (effect: Effect.Effect<Option.Option<RepoRow>>) =>
        Effect.flatMap(effect, (row) =>
          Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(Errors.notFound())
        )

      /** The row and what hangs on it (stars, the owner's count, its source's fork count), in one transaction. */
      const deleteRow = (owner: UserRow, repo: Pick<RepoRow, "id" | "forkId">) =>
        transaction(
          Effect.gen(function* () {
            yield* users.releaseStarsOfRepository(repo.id) // the stars go with the repository
            yield* repos.remove(repo.id)
            yield* users.adjustNumRepos(owner.id, -1)
            if (repo.forkId !== null) yield* repos.adjustNumForks(repo.forkId, -1)
          })
        )

      /** Where an old `owner/name` (renamed or transferred) is now, if the viewer may see it there. */
      const redirectFor = (viewer: Principal | undefined, ownerName: string, name: string) =>
        Effect.gen(function* () {
          const oldOwner = yield* users.findByName(ownerName)
          let id: Option.Option<number>
          if (Option.isSome(oldOwner)) id = yield* repos.redirectOf(oldOwner.value.id, name.toLowerCase())
          else {
            // An old name of a renamed account (src/users/Rename.ts): its repository by name, or
            // one it renamed since.
            const renamed = yield* users.redirectOf(ownerName)
            if (Option.isNone(renamed)) return Option.none()
            const byName = yield* repos.findByName(renamed.value, name)
            id = Option.isSome(byName)
              ? Option.some(byName.value.id)
              : yield* repos.redirectOf(renamed.value, name.toLowerCase())
          }
          if (Option.isNone(id)) return Option.none()
          const repo = yield* repos.findById(id.value)
          if (Option.isNone(repo)) return Option.none()
          const owner = yield* users.findById(repo.value.ownerId)
          if (Option.isNone(owner)) return Option.none()
          const visible = yield* Effect.isSuccess(policy.ensureVisible(viewer, repo.value, owner.value))
          return visible
            ? Option.some(
                new Errors.RepositoryMoved({
                  from: { owner: ownerName, name },
                  to: { owner: owner.value.name, name: repo.value.name }
                })
              )
            : Option.none()
        })

      const insertRow = (owner: UserRow, values: Omit<NewRepo, "owner_id" | "lower_name">, creator: UserRow) =>
        transaction(
          Effect.gen(function* () {
            const row = yield* repos
              .insert({ ...values, owner_id: owner.id, lower_name: values.name.toLowerCase() })
              .pipe(onAlreadyExists(duplicate))
            yield* repos.removeRedirect(owner.id, row.lowerName) // the name is this repository's now
            if (values.fork_id !== undefined) yield* repos.adjustNumForks(values.fork_id, 1)
            yield* users.adjustNumRepos(owner.id, 1)
            if (!settings.service.AUTO_WATCH_NEW_REPOS) return row
            const watched = yield* social.watch(creator.id, row.id)
            return watched ? { ...row, numWatches: row.numWatches + 1 } : row
          })
        )

      /** After the row is gone: a directory that cannot be removed is logged, not undone. The wiki goes too. */
      const removeDir = (owner: UserRow, repo: RepoRow) =>
        Effect.andThen(
          writer.remove({ id: repo.id, dir: pathOf(owner, repo) }),
          writer.remove(wikiRef(repo.id, pathOf(owner, repo)))
        ).pipe(
          Effect.ignoreCause({ log: "Error", message: `could not remove the files of ${owner.name}/${repo.name}` })
        )

      /** The wiki follows its repository's directory (src/wiki/Location.ts), when it has one. */
      const moveWiki = (repoId: number, fromDir: string, toDir: string) => {
        const wiki = wikiRef(repoId, fromDir)
        return existsSync(wiki.dir)
          ? writer
              .move(wiki, wikiDir(toDir))
              .pipe(Effect.ignoreCause({ log: "Error", message: `could not move the wiki ${wiki.dir} to ${toDir}` }))
          : Effect.void
      }

      const service = ReposService.of({
        pathOf,
        get: (owner, name) => found(repos.findByName(owner.id, name)),
        find,
        assign: (viewer, ownerName, name, rule) =>
          Effect.gen(function* () {
            const { owner, repo } = yield* find(ownerName, name).pipe(
              Effect.catchIf(
                (e) => e instanceof Errors.NotFound,
                () =>
                  Effect.flatMap(redirectFor(viewer, ownerName, name), (moved) =>
                    Effect.fail(Option.isSome(moved) ? moved.value : Errors.notFound())
                  )
              )
            )
            const access = yield* policy.access(viewer, repo, owner)
            const opened = { owner, repo, access, path: pathOf(owner, repo), caller: viewer }
            if (rule !== undefined) yield* ensureAllowed(viewer, opened, rule)
            return opened
          }),
        getById: (id) => found(repos.findById(id)),
        redirectFor,
        recordGitChange: (owner, repo, options) =>
          Effect.gen(function* () {
            const target = { id: repo.id, dir: pathOf(owner, repo) }
            // Only a branch created or removed changes emptiness and the default branch: a merge or
            // a push to existing branches starts no `git for-each-ref` (the size is read from disk).
            const listed = options?.branchesUnchanged === true && !repo.isEmpty
            const [refs, sizeKiB] = yield* Effect.all(
              [listed ? Effect.succeed(undefined) : Git.listRefs(target.dir, "refs/heads/"), Git.sizeKiB(target.dir)],
              { concurrency: 2 }
            )
            let isEmpty = repo.isEmpty
            let defaultBranch = repo.defaultBranch
            if (refs !== undefined) {
              const branches = refs.map((ref) => ref.ref.slice("refs/heads/".length))
              isEmpty = branches.length === 0
              if (branches.length > 0 && !branches.includes(defaultBranch)) {
                defaultBranch = ["main", "master"].find((b) => branches.includes(b)) ?? branches.sort()[0]!
                yield* writer.setHead(target, defaultBranch)
              }
            }
            yield* repos.recordPush(repo.id, { isEmpty, sizeBytes: sizeKiB * 1024, defaultBranch })
            // Languages are counted again after the answer, as Forgejo's stats indexer after a push
            // (forked at once, or, in a change that answers first, once its answer is written).
            yield* afterAnswer(
              languages.refresh({ ...repo, isEmpty, defaultBranch }, target.dir),
              `count the languages of ${owner.name}/${repo.name}`
            )
            // The commit-graph only speeds later reads: written after the pusher has its answer.
            if (options?.maintain === true && !isEmpty) {
              yield* Effect.forkDetach(
                writer.maintain(target).pipe(
                  Effect.ignoreCause({
                    log: "Warn",
                    message: `could not write the commit-graph of ${owner.name}/${repo.name}`
                  })
                )
              )
            }
          }).pipe(
            Effect.ignoreCause({ log: "Warn", message: `could not record a change to ${owner.name}/${repo.name}` })
          ),
        create: (owner, input, doer) =>
          Effect.gen(function* () {
            yield* quota.enforce(owner, "size:repos:all")
            const problem = createProblem(input)
            if (problem !== undefined) return yield* Errors.validationFailed(problem)
            if (Option.isSome(yield* repos.findByName(owner.id, input.name))) {
              return yield* duplicate()
            }
            const lowerName = input.name.toLowerCase()
            const path = pathOf(owner, { lowerName })
            // Files left by something else are never adopted, nor removed on failure.
            if (existsSync(path)) {
              return yield* Errors.conflict(
                `repository files already exist [uname: ${owner.name}, name: ${input.name}]`
              )
            }
            const autoInit = input.auto_init === true
            yield* Templates.checkCreateOptions({
              autoInit,
              readme: input.readme,
              gitignores: input.gitignores,
              license: input.license,
              issueLabels: input.issue_labels
            }).pipe(Effect.mapError(Templates.toApiError))
            // The row first (a duplicate is refused there), then the disk through the repository's
            // entity, never inside the transaction; if the disk part fails the row goes again.
            const row = yield* insertRow(
              owner,
              {
                name: input.name,
                description: input.description ?? "",
                default_branch:
                  input.default_branch !== undefined && input.default_branch !== "" ? input.default_branch : "main",
                is_private: input.private ?? false,
                is_template: input.template ?? false
              },
              doer
            )
            const target = { id: row.id, dir: path }
            const initialCommit = Effect.gen(function* () {
              const files = yield* Templates.renderInitialFiles({
                repoName: row.name,
                description: row.description,
                owner: owner.name,
                cloneUrl: `${settings.server.ROOT_URL}${owner.name}/${row.name}.git`,
                readme: input.readme,
                gitignores: input.gitignores,
                license: input.license,
                year: new Date().getUTCFullYear()
              }).pipe(Effect.orDie) // checked above
              const who = Write.signatureAt(gitIdentity(settings, doer), new Date())
              yield* writer.commitFiles(target, {
                branch: row.defaultBranch,
                files: files.map((f) => ({
                  operation: "create" as const,
                  path: f.path,
                  content: Buffer.from(f.content, "utf8")
                })),
                message: "Initial commit\n",
                author: who,
                committer: who,
                // Signed by the instance when [repository.signing] INITIAL_COMMIT says so.
                ...signWith(yield* signing.decide("INITIAL_COMMIT", { doer, repoPath: path }))
              })
              const sizeKiB = yield* Effect.orDie(Git.sizeKiB(path))
              yield* repos.recordPush(row.id, {
                isEmpty: false,
                sizeBytes: sizeKiB * 1024,
                defaultBranch: row.defaultBranch
              })
            })
            const ready = yield* writer.init(target, row.defaultBranch).pipe(
              Effect.andThen(autoInit ? initialCommit : Effect.void),
              Effect.andThen(autoInit ? found(repos.findById(row.id)).pipe(Effect.orDie) : Effect.succeed(row)),
              Effect.mapError(toApiError),
              Effect.onError(() =>
                Effect.andThen(
                  writer.remove(target).pipe(Effect.ignoreCause({ log: "Warn", message: `could not remove ${path}` })),
                  deleteRow(owner, row)
                )
              )
            )
            // The label set named by `issue_labels` becomes the repository's labels (Forgejo's
            // `InitializeLabels`; checked above).
            if (input.issue_labels !== undefined && input.issue_labels.trim() !== "") {
              for (const label of yield* Effect.orDie(Templates.labelsOf(input.issue_labels))) {
                yield* issueRows.insertLabel({
                  repo_id: ready.id,
                  name: label.name,
                  color: label.color.replace(/^#/, "").toLowerCase(),
                  description: label.description,
                  exclusive: label.exclusive
                })
              }
            }
            yield* events.publish({ _tag: "CreateRepository", ...subject(owner, ready, doer) })
            return ready
          }) as Effect.Effect<
            RepoRow,
            | Errors.ValidationFailed
            | Errors.Conflict
            | Errors.BadRequest
            | Errors.InternalError
            | Errors.NotFound
            | Errors.PayloadTooLarge
          >,
        remove: (owner, repo) => Effect.andThen(deleteRow(owner, repo), removeDir(owner, repo)),
        insertRow,
        changeOwner: (repo, from, to) =>
          Effect.gen(function* () {
            const taken = () =>
              Errors.validationFailed(`repository already exists [uname: ${to.name}, name: ${repo.name}]`)
            const fromPath = pathOf(from, repo)
            const toPath = pathOf(to, repo)
            if (existsSync(toPath)) return yield* taken()
            // Conditional on the owner read before: of two transfers at once, the second finds the
            // repository moved (409) instead of counting it twice and moving a directory that is gone.
            const swap = (a: UserRow, b: UserRow, status: RepoRow["status"]) =>
              transaction(
                Effect.gen(function* () {
                  const changed = yield* repos.changeOwner(repo.id, a.id, b.id).pipe(onAlreadyExists(taken))
                  if (Option.isNone(changed)) {
                    return yield* Errors.conflict(`the repository ${a.name}/${repo.name} was moved meanwhile`)
                  }
                  const row = changed.value
                  yield* users.adjustNumRepos(a.id, -1)
                  yield* users.adjustNumRepos(b.id, 1)
                  yield* repos.removeRedirect(b.id, repo.lowerName)
                  yield* repos.addRedirect(a.id, repo.lowerName, repo.id)
                  yield* repos.removeCollaborator(repo.id, b.id)
                  yield* repos.setStatus(repo.id, status)
                  return { ...row, status }
                })
              )
            const row = yield* swap(from, to, "ready")
            yield* writer.move({ id: repo.id, dir: fromPath }, toPath).pipe(
              Effect.tapError(() =>
                Effect.andThen(swap(to, from, repo.status), repos.removeRedirect(from.id, repo.lowerName)).pipe(
                  Effect.ignoreCause({
                    log: "Error",
                    message: `could not give ${to.name}/${repo.name} back to ${from.name}`
                  })
                )
              ),
              // The cause (it names directories of the server) goes to the log, not to the client.
              Effect.tapError((e) =>
                Effect.logError(`could not move ${from.name}/${repo.name} to ${to.name}: ${e.message}`)
              ),
              Effect.mapError(() => Errors.internalError("the repository could not be moved"))
            )
            yield* moveWiki(repo.id, fromPath, toPath)
            return row
          }),
        initDirectory: (target, defaultBranch) => Effect.mapError(writer.init(target, defaultBranch), toApiError),
        edit: (owner, repo, input) =>
          Effect.gen(function* () {
            const changes = editChanges(repo, input, settings.mirror.MIN_INTERVAL)
            if (typeof changes === "string") return yield* Errors.validationFailed(changes)
            const oldPath = pathOf(owner, repo)
            if (changes.default_branch !== undefined && !repo.isEmpty) {
              const branches = yield* Effect.orDie(Git.listRefs(oldPath, "refs/heads/"))
              if (!branches.some((b) => b.ref === `refs/heads/${changes.default_branch}`)) {
                return yield* Errors.validationFailed(`branch does not exist [name: ${changes.default_branch}]`)
              }
            }
            const moves = changes.lower_name !== undefined && changes.lower_name !== repo.lowerName
            const newPath = moves ? pathOf(owner, { lowerName: changes.lower_name! }) : oldPath
            if (changes.lower_name !== undefined && changes.lower_name !== repo.lowerName) {
              if (Option.isSome(yield* repos.findByName(owner.id, changes.lower_name))) {
                return yield* duplicate()
              }
              if (existsSync(newPath)) {
                return yield* Errors.conflict(
                  `repository files already exist [uname: ${owner.name}, name: ${changes.name}]`
                )
              }
            }
            const renamed = changes.lower_name !== undefined && changes.lower_name !== repo.lowerName
            const row = yield* transaction(
              Effect.gen(function* () {
                const row = yield* repos.update(repo.id, changes).pipe(onAlreadyExists(duplicate))
                // The old name keeps working (307) until another repository takes it.
                if (renamed) {
                  yield* repos.removeRedirect(owner.id, row.lowerName)
                  yield* repos.addRedirect(owner.id, repo.lowerName, repo.id)
                }
                return row
              })
            )
            const target = { id: repo.id, dir: oldPath }
            // The row is renamed first (a taken name is refused there), then the directory follows;
            // if it cannot, the row gets its old name back.
            if (moves) {
              yield* writer.move(target, newPath).pipe(
                Effect.tapError(() =>
                  transaction(repos.update(repo.id, { name: repo.name, lower_name: repo.lowerName })).pipe(
                    Effect.ignoreCause({
                      log: "Error",
                      message: `could not rename ${owner.name}/${row.name} back to ${repo.name}`
                    })
                  )
                ),
                Effect.mapError(toApiError),
                Effect.orDie
              )
              yield* moveWiki(repo.id, oldPath, newPath)
            }
            if (changes.default_branch !== undefined) {
              yield* Effect.orDie(writer.setHead({ id: repo.id, dir: newPath }, changes.default_branch))
            }
            return row
          }),
        listCollaborators: (repo, page) => repos.listCollaborators(repo.id, page),
        setCollaborator: (repo, user, mode) => repos.setCollaborator(repo.id, user.id, mode),
        removeCollaborator: (repo, user) => Effect.asVoid(repos.removeCollaborator(repo.id, user.id)),
        search: (search, page) => repos.search(search, page),
        countOwnedBy: (owner) => repos.countOwnedBy(owner.id),
        releaseCountsOfUser: (user) => repos.releaseCountsOfUser(user.id),
        removeAllOwnedBy: (owner) =>
          Effect.gen(function* () {
            for (const repo of yield* repos.allOwnedBy(owner.id)) {
              yield* deleteRow(owner, repo)
              yield* removeDir(owner, repo)
            }
          }),
        listOwnedBy: (owner, filter, page) => repos.listOwnedBy(owner.id, filter, page),
        listAccessible: (user, publicOnly, orderBy, page) =>
          Effect.gen(function* () {
            const order = orderBy === "" ? "name" : orderBy
            if (!(REPO_ORDERS as ReadonlyArray<string>).includes(order)) {
              return yield* Errors.validationFailed("invalid order_by")
            }
            return yield* repos.listAccessible(user.id, publicOnly, order as RepoOrder, page)
          })
      })

      // After refs moved (a push, the APIs, a mirror's sync): what the database knows of the git data,
      // before the change is answered; the commit-graph for pushes that brought new objects. The
      // record reads the repository as it is, so concurrent changes share one: a change waits for
      // a record that started after it, one at a time per repository (50 commits at once make a
      // few records, not 50, and an older reading never overwrites a newer one).
      const recording = new Map<
        number,
        {
          semaphore: Semaphore.Semaphore
          asked: number
          done: number
          users: number
          /** Whether a change not yet recorded created or removed a branch. */
          branchesMoved: boolean
        }
      >()
      const record = (repoId: number, maintain: boolean, branchesMoved: boolean, knownOwner?: UserRow) =>
        Effect.suspend(() => {
          let state = recording.get(repoId)
          if (state === undefined) {
            state = { semaphore: Semaphore.makeUnsafe(1), asked: 0, done: 0, users: 0, branchesMoved: false }
            recording.set(repoId, state)
          }
          const current = state
          const ticket = ++current.asked
          current.branchesMoved ||= branchesMoved
          current.users++
          return current.semaphore
            .withPermits(1)(
              Effect.gen(function* () {
                if (current.done >= ticket) return
                const upTo = current.asked
                current.done = upTo
                // Taken with the tickets this record answers for.
                const branchesUnchanged = !current.branchesMoved
                current.branchesMoved = false
                const repo = yield* Effect.orDie(repos.findById(repoId))
                if (Option.isNone(repo)) return
                // The repository is read again (what it is now, after the changes this record covers);
                // its owner, when the producer holds it (a merge), is not.
                const owner =
                  knownOwner?.id === repo.value.ownerId
                    ? Option.some(knownOwner)
                    : yield* Effect.orDie(users.findById(repo.value.ownerId))
                if (Option.isSome(owner)) {
                  yield* service.recordGitChange(owner.value, repo.value, { maintain, branchesUnchanged })
                }
              })
            )
            .pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  if (--current.users === 0) recording.delete(repoId)
                })
              )
            )
        })
      yield* events.subscribe({
        name: "repository size and branches",
        handle: (event, known) =>
          event._tag === "PushCommits"
            ? record(
                event.repo.id,
                event.via !== "api",
                event.refs.some(
                  (r) => r.ref.startsWith("refs/heads/") && (r.before === ZERO_ID || r.after === ZERO_ID)
                ),
                known.owner
              )
            : Effect.void
      })
      return service
    })
  )
}

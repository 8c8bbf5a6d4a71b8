// Repository rules: names (Forgejo's IsUsableRepoName), creation and deletion that keep the
// database row and the bare repository on disk together, and the lists.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { isSqlError, type SqlError } from "effect/sql/SqlError"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Settings } from "../config/Settings.ts"
import * as Git from "../git/Git.ts"
import * as Errors from "../http/Errors.ts"
import type { Page } from "../http/Pagination.ts"
import { type UserRow, UsersRepo } from "../users/Repo.ts"
import { type Listed, REPO_ORDERS, type RepoFilter, type RepoOrder, type RepoRow, ReposRepo } from "./Repo.ts"
import type { CreateRepoOption } from "./Schema.ts"

const MAX_NAME_LENGTH = 100
const VALID_NAME = /^[-.\w]+$/
const RESERVED_NAMES = new Set([".", "..", "-"])
const RESERVED_PATTERNS = [".git", ".wiki", ".rss", ".atom"]
const TRUST_MODELS = ["", "default", "collaborator", "committer", "collaboratorcommitter"]

/** Why a repository name is refused, or `undefined`. */
export const repoNameProblem = (name: string): string | undefined => {
  if (name.length === 0) return "[Name]: Required"
  if (name.length > MAX_NAME_LENGTH) return `[Name]: MaxSize (${MAX_NAME_LENGTH})`
  if (!VALID_NAME.test(name)) {
    return `[Name]: must contain only alphanumeric, dash ('-'), underscore ('_') and dot ('.') characters: "${name}"`
  }
  const lower = name.toLowerCase()
  if (RESERVED_NAMES.has(lower)) return `name is reserved [name: ${name}]`
  const pattern = RESERVED_PATTERNS.find((suffix) => lower.endsWith(suffix))
  if (pattern !== undefined) return `name pattern is not allowed [pattern: *${pattern}]`
  return undefined
}

/** Git's check-ref-format rules for a branch name, or `undefined` when it is usable. */
export const branchNameProblem = (name: string): string | undefined => {
  const bad = `[DefaultBranch]: invalid branch name "${name}"`
  if (name.length === 0) return bad
  if (name.length > 100) return "[DefaultBranch]: MaxSize (100)"
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(name)) return bad
  if (name.startsWith("-") || name.startsWith("/") || name.endsWith("/") || name.endsWith(".")) return bad
  if (name.includes("..") || name.includes("//") || name.includes("@{") || name === "@") return bad
  if (name.split("/").some((part) => part.startsWith(".") || part.endsWith(".lock"))) return bad
  return undefined
}

const createProblem = (input: CreateRepoOption): string | undefined =>
  repoNameProblem(input.name) ??
    (input.description !== undefined && input.description.length > 2048
      ? "[Description]: MaxSize (2048)"
      : undefined) ??
    (input.default_branch !== undefined && input.default_branch !== ""
      ? branchNameProblem(input.default_branch)
      : undefined) ??
    (input.trust_model !== undefined && !TRUST_MODELS.includes(input.trust_model)
      ? `[TrustModel]: must be one of default, collaborator, committer, collaboratorcommitter: "${input.trust_model}"`
      : undefined) ??
    (input.object_format_name !== undefined && !["", "sha1", "sha256"].includes(input.object_format_name)
      ? `[ObjectFormatName]: must be sha1 or sha256: "${input.object_format_name}"`
      : undefined) ??
    // Not supported yet; refused rather than silently ignored.
    (input.object_format_name === "sha256" ? "object_format_name sha256 is not supported yet" : undefined) ??
    (input.auto_init === true
      ? "auto_init is not supported yet: create the repository empty and push to it"
      : undefined) ??
    (input.template === true ? "template repositories are not supported yet" : undefined)

const isUnique = (e: unknown) => isSqlError(e) && e.reason._tag === "UniqueViolation"

const duplicate = () => Errors.conflict("The repository with the same name already exists.")

export class ReposService extends Context.Service<ReposService, {
  /** `{ROOT}/{lower owner}/{lower name}.git` */
  readonly pathOf: (owner: UserRow, repo: Pick<RepoRow, "lowerName">) => string
  readonly get: (owner: UserRow, name: string) => Effect.Effect<RepoRow, Errors.NotFound>
  readonly getById: (id: number) => Effect.Effect<RepoRow, Errors.NotFound>
  /** Creates the row and the bare repository; a failure of either leaves neither. */
  readonly create: (
    owner: UserRow,
    input: CreateRepoOption
  ) => Effect.Effect<RepoRow, Errors.ValidationFailed | Errors.Conflict>
  /** Deletes the row and the directory. */
  readonly remove: (owner: UserRow, repo: RepoRow) => Effect.Effect<void>
  /** How many repositories the account owns (users and organizations cannot go while any remain). */
  readonly countOwnedBy: (owner: UserRow) => Effect.Effect<number>
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
}>()("hearth/repos/ReposService") {
  static readonly layer = Layer.effect(
    ReposService,
    Effect.gen(function*() {
      const settings = yield* Settings
      const sql = yield* SqlClient
      const repos = yield* ReposRepo
      const users = yield* UsersRepo

      const pathOf = (owner: UserRow, repo: Pick<RepoRow, "lowerName">) =>
        join(settings.repository.ROOT, owner.lowerName, `${repo.lowerName}.git`)

      // Rule failures roll the transaction back and stay typed; database errors are defects.
      const transaction = <A, E>(effect: Effect.Effect<A, E | SqlError>) =>
        sql.withTransaction(effect).pipe(
          Effect.catchTag("SqlError", (e) => Effect.die(e))
        ) as Effect.Effect<A, Exclude<E, SqlError>>

      const found = (effect: Effect.Effect<Option.Option<RepoRow>, SqlError>) =>
        Effect.flatMap(Effect.orDie(effect), (row) =>
          Option.isSome(row) ? Effect.succeed(row.value) : Effect.fail(Errors.notFound()))

      return ReposService.of({
        pathOf,
        get: (owner, name) => found(repos.findByName(owner.id, name)),
        getById: (id) => found(repos.findById(id)),
        create: (owner, input) =>
          Effect.gen(function*() {
            const problem = createProblem(input)
            if (problem !== undefined) return yield* Errors.validationFailed(problem)
            if (Option.isSome(yield* Effect.orDie(repos.findByName(owner.id, input.name)))) {
              return yield* duplicate()
            }
            const lowerName = input.name.toLowerCase()
            const path = pathOf(owner, { lowerName })
            // Files left by something else are never adopted, nor removed on failure.
            if (existsSync(path)) {
              return yield* Errors.conflict(`repository files already exist [uname: ${owner.name}, name: ${input.name}]`)
            }
            let touchedDisk = false
            return yield* transaction(Effect.gen(function*() {
              const row = yield* repos.insert({
                owner_id: owner.id,
                name: input.name,
                lower_name: lowerName,
                description: input.description ?? "",
                default_branch: input.default_branch !== undefined && input.default_branch !== ""
                  ? input.default_branch
                  : "main",
                is_private: input.private ?? false
              }).pipe(Effect.catchIf(isUnique, () => Effect.fail(duplicate())))
              yield* users.adjustNumRepos(owner.id, 1)
              touchedDisk = true
              yield* Effect.orDie(Git.initBare(path, row.defaultBranch))
              return row
            })).pipe(
              // Covers a failed `git init` and a failed commit after it alike. A cleanup that
              // fails too (the path is unusable) must not hide the original error.
              Effect.onError(() =>
                touchedDisk
                  ? Git.removeRepository(path).pipe(Effect.ignoreCause({ log: "Warn", message: `could not remove ${path}` }))
                  : Effect.void
              )
            )
          }),
        remove: (owner, repo) =>
          transaction(Effect.gen(function*() {
            yield* repos.remove(repo.id)
            yield* users.adjustNumRepos(owner.id, -1)
            // Inside the transaction: if the directory cannot be removed, the row stays too.
            yield* Git.removeRepository(pathOf(owner, repo))
          })),
        countOwnedBy: (owner) => Effect.orDie(repos.countOwnedBy(owner.id)),
        removeAllOwnedBy: (owner) =>
          Effect.gen(function*() {
            for (const repo of yield* Effect.orDie(repos.allOwnedBy(owner.id))) {
              yield* transaction(Effect.gen(function*() {
                yield* repos.remove(repo.id)
                yield* users.adjustNumRepos(owner.id, -1)
                yield* Git.removeRepository(pathOf(owner, repo))
              }))
            }
          }),
        listOwnedBy: (owner, filter, page) => Effect.orDie(repos.listOwnedBy(owner.id, filter, page)),
        listAccessible: (user, publicOnly, orderBy, page) =>
          Effect.gen(function*() {
            const order = orderBy === "" ? "name" : orderBy
            if (!(REPO_ORDERS as ReadonlyArray<string>).includes(order)) {
              return yield* Errors.validationFailed("invalid order_by")
            }
            return yield* Effect.orDie(repos.listAccessible(user.id, publicOnly, order as RepoOrder, page))
          })
      })
    })
  )
}

// Issue dependencies and blocks (Forgejo's routers/api/v1/repo/issue_dependency.go; CONTRACT-ISSUES
// §13). "Dependencies" of an issue are the issues blocking it; "blocks" the issues it blocks. A
// link is written on its *target* (the blocked issue): the caller must write there, in a
// repository with dependencies enabled and not archived, and read the other one; any failure is a
// 404, as in Forgejo. Links may cross repositories unless `[service]
// ALLOW_CROSS_REPOSITORY_DEPENDENCIES` is off (400). Where Forgejo answers 500 (a duplicate or
// circular link, removing a missing one) Hearth answers 422 and 404, and it refuses an issue
// depending on itself (Forgejo stores it). Forgejo sends no webhook for dependencies (§16.1).
import { Context, Effect, Layer, Option } from "effect"
import { Settings } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { type OpenedRepository, type RepoAccess, RepoPolicy, unitEnabled } from "../repos/Policy.ts"
import { type RepoRow, ReposRepo } from "../repos/Repo.ts"
import { trackerSettings } from "../repos/Schema.ts"
import { UsersRepo } from "../users/Repo.ts"
import { IssueDepsRepo } from "./DepsRepo.ts"
import { makePresenter, type RepoPlace } from "./Present.ts"
import { type IssueRow, IssuesRepo } from "./Repo.ts"
import type { Issue } from "./Schema.ts"
import { placeOf } from "./Service.ts"

type ServiceError = Errors.ApiError

/** IssueMeta: the other issue of a link. */
export interface IssueMeta {
  readonly owner?: string | undefined
  readonly repo?: string | undefined
  readonly index?: number | undefined
}

/** `dependencies`: the path's issue is blocked by the body's; `blocks`: it blocks the body's. */
export type LinkDirection = "dependencies" | "blocks"

/** An issue with where it lives and what the caller may do there. */
interface Located {
  readonly issue: IssueRow
  readonly repo: RepoRow
  readonly place: RepoPlace
  readonly access: RepoAccess
}

const NOT_SELF = "an issue cannot depend on itself"

export class IssueDeps extends Context.Service<
  IssueDeps,
  {
    readonly list: (
      opened: OpenedRepository,
      index: string,
      direction: LinkDirection,
      query: { readonly page?: string | undefined; readonly limit?: string | undefined }
    ) => Effect.Effect<ReadonlyArray<Issue>, ServiceError>
    /** Adds or removes a link; the path's issue as it now is. */
    readonly change: (
      opened: OpenedRepository,
      index: string,
      direction: LinkDirection,
      meta: IssueMeta,
      add: boolean
    ) => Effect.Effect<Issue, ServiceError>
  }
>()("hearth/issues/IssueDeps") {
  static readonly layer = Layer.effect(
    IssueDeps,
    Effect.gen(function* () {
      const settings = yield* Settings
      const issues = yield* IssuesRepo
      const deps = yield* IssueDepsRepo
      const repos = yield* ReposRepo
      const users = yield* UsersRepo
      const policy = yield* RepoPolicy
      const present = yield* makePresenter(settings)
      const { DEFAULT_PAGING_NUM, MAX_RESPONSE_ITEMS } = settings.api

      const enabledIn = (repo: RepoRow) => trackerSettings(settings, repo).enable_issue_dependencies
      const canRead = (at: Pick<Located, "repo" | "access" | "issue">) =>
        atLeast(at.access.mode, "read") && unitEnabled(at.repo, at.issue.isPull ? "pulls" : "issues")
      const canWrite = (at: Pick<Located, "repo" | "access" | "issue">, caller: Principal | undefined) =>
        caller !== undefined && atLeast(at.access.mode, "write") && canRead(at)

      const findIssue = (repoId: number, index: number) =>
        Effect.flatMap(
          Number.isSafeInteger(index) && index > 0 ? issues.issueByIndex(repoId, index) : Effect.succeed(Option.none()),
          (found) => (Option.isNone(found) ? Effect.fail(Errors.notFound()) : Effect.succeed(found.value))
        )
      const pathIssue = (opened: OpenedRepository, index: string) =>
        Effect.map(
          findIssue(opened.repo.id, /^\d{1,15}$/.test(index) ? Number(index) : 0),
          (issue): Located => ({ issue, repo: opened.repo, place: placeOf(opened), access: opened.access })
        )

      /** The issue an IssueMeta names, as the caller sees it (404 when it or its repository is missing). */
      const bodyIssue = (opened: OpenedRepository, meta: IssueMeta) =>
        Effect.gen(function* () {
          const ownerName = meta.owner ?? ""
          const repoName = meta.repo ?? ""
          const index = meta.index ?? 0
          const same =
            ownerName.toLowerCase() === opened.owner.name.toLowerCase() &&
            repoName.toLowerCase() === opened.repo.name.toLowerCase()
          if (same) {
            const issue = yield* findIssue(opened.repo.id, index)
            return { issue, repo: opened.repo, place: placeOf(opened), access: opened.access } satisfies Located
          }
          // Forgejo answers the bare JSON string; Hearth its usual error body.
          if (!settings.service.ALLOW_CROSS_REPOSITORY_DEPENDENCIES) {
            return yield* Errors.badRequest("CrossRepositoryDependencies not enabled")
          }
          const owner = yield* users.findByName(ownerName)
          if (Option.isNone(owner)) return yield* Errors.notFound()
          const repo = yield* repos.findByName(owner.value.id, repoName)
          if (Option.isNone(repo)) return yield* Errors.notFound()
          const access = yield* policy.access(opened.caller, repo.value, owner.value)
          // An invisible repository is not named to the caller: the same 404 as a missing one.
          if (!atLeast(access.mode, "read")) return yield* Errors.notFound()
          const issue = yield* findIssue(repo.value.id, index)
          return {
            issue,
            repo: repo.value,
            place: { id: repo.value.id, ownerName: owner.value.name, name: repo.value.name },
            access
          } satisfies Located
        })

      /** Where each issue lives and the caller's access there (one lookup per repository). */
      const locate = (opened: OpenedRepository, rows: ReadonlyArray<IssueRow>) =>
        Effect.gen(function* () {
          const places = new Map<number, Omit<Located, "issue"> | undefined>([
            [opened.repo.id, { repo: opened.repo, place: placeOf(opened), access: opened.access }]
          ])
          const out: Array<{ readonly issue: IssueRow; readonly at: Omit<Located, "issue"> | undefined }> = []
          for (const issue of rows) {
            if (!places.has(issue.repoId)) {
              const repo = yield* repos.findById(issue.repoId)
              const owner = Option.isSome(repo) ? yield* users.findById(repo.value.ownerId) : Option.none()
              places.set(
                issue.repoId,
                Option.isSome(repo) && Option.isSome(owner)
                  ? {
                      repo: repo.value,
                      place: { id: repo.value.id, ownerName: owner.value.name, name: repo.value.name },
                      access: yield* policy.access(opened.caller, repo.value, owner.value)
                    }
                  : undefined
              )
            }
            out.push({ issue, at: places.get(issue.repoId) })
          }
          return out
        })

      const byIds = (ids: ReadonlyArray<number>) =>
        Effect.map(issues.issuesByIds(ids), (rows) => {
          const byId = new Map(rows.map((r) => [r.id, r]))
          return ids.flatMap((id) => byId.get(id) ?? [])
        })

      /** Forgejo's paging of these lists: page ≥ 1, `limit` 0 (blocks: ≤ 1) the default, capped. */
      const windowOf = (query: { readonly page?: string | undefined; readonly limit?: string | undefined }) => {
        const page = Math.max(1, Math.min(Number.parseInt(query.page ?? "", 10) || 1, 1_000_000))
        const asked = Number.parseInt(query.limit ?? "", 10) || 0
        const limit = asked <= 0 ? DEFAULT_PAGING_NUM : Math.min(asked, MAX_RESPONSE_ITEMS)
        return { offset: (page - 1) * limit, limit }
      }

      const epoch = new Date(0)
      /** An issue shown in reduced form: only what Forgejo keeps (`confidentialBlocker`, `HIDDEN`). */
      const reduced = (issue: IssueRow | undefined): IssueRow => ({
        id: 0,
        repoId: issue?.repoId ?? 0,
        index: issue?.index ?? 0,
        posterId: 0,
        title: issue?.title ?? "HIDDEN",
        body: "",
        ref: "",
        isPull: issue?.isPull ?? false,
        isClosed: issue?.isClosed ?? false,
        isLocked: false,
        milestoneId: null,
        numComments: 0,
        deadline: null,
        createdAt: epoch,
        updatedAt: epoch,
        closedAt: null,
        pinOrder: 0
      })
      const nowhere: RepoPlace = { id: 0, ownerName: "", name: "" }

      return IssueDeps.of({
        list: (opened, index, direction, query) =>
          Effect.gen(function* () {
            // Blocks are listed whatever the repository's setting (they are other issues' dependencies).
            if (direction === "dependencies" && !enabledIn(opened.repo)) return yield* Errors.notFound()
            const self = yield* pathIssue(opened, index)
            const window = windowOf(query)
            const ids =
              direction === "dependencies" ? yield* deps.blockers(self.issue.id) : yield* deps.blocking(self.issue.id)
            const located = yield* locate(opened, yield* byIds(ids))
            if (direction === "blocks") {
              // Issues the caller may not read are left out (before paging, unlike Forgejo).
              const readable = located.filter((l) => l.at !== undefined && canRead({ ...l.at, issue: l.issue }))
              const page = readable.slice(window.offset, window.offset + window.limit)
              return yield* present.issues(
                page.map((l) => l.issue),
                (i) => page.find((l) => l.issue.id === i.id)!.at!.place,
                opened.caller
              )
            }
            // Dependencies the caller may not read stay in the list, reduced: a writer of the
            // path's issue sees title, number, state and repository; anyone else `HIDDEN`.
            const writer = canWrite(self, opened.caller)
            const page = located.slice(window.offset, window.offset + window.limit)
            const shown = page.map((l) => {
              if (l.at !== undefined && canRead({ ...l.at, issue: l.issue }))
                return { issue: l.issue, place: l.at.place }
              if (writer) return { issue: reduced(l.issue), place: l.at?.place ?? nowhere }
              return { issue: reduced(undefined), place: nowhere }
            })
            const out: Array<Issue> = []
            for (const s of shown) out.push(...(yield* present.issues([s.issue], () => s.place, opened.caller)))
            return out
          }),

        change: (opened, index, direction, meta, add) =>
          Effect.gen(function* () {
            if (opened.caller === undefined) return yield* Errors.unauthorized("token is required")
            const self = yield* pathIssue(opened, index)
            const other = yield* bodyIssue(opened, meta)
            const [target, dependency] = direction === "dependencies" ? [self, other] : [other, self]
            // Forgejo's createIssueDependency / removeIssueDependency: every refusal is a 404.
            if (target.repo.isArchived || !enabledIn(target.repo)) return yield* Errors.notFound()
            if (!canWrite(target, opened.caller)) return yield* Errors.notFound()
            if (!canRead(dependency)) return yield* Errors.notFound()
            const doer = opened.caller.user.id
            const at = new Date()
            if (add) {
              if (target.issue.id === dependency.issue.id) return yield* Errors.validationFailed(NOT_SELF)
              const outcome = yield* deps.add(target.issue.id, dependency.issue.id, doer, at)
              if (outcome === "exists") return yield* Errors.validationFailed("the dependency already exists")
              if (outcome === "circular") {
                return yield* Errors.validationFailed(
                  "circular dependency: the other issue already depends on this one"
                )
              }
            } else if (!(yield* deps.remove(target.issue.id, dependency.issue.id, doer, at))) {
              return yield* Errors.notFound()
            }
            const now = yield* issues.issueById(self.issue.id)
            const [shown] = yield* present.issues(
              [Option.getOrElse(now, () => self.issue)],
              () => self.place,
              opened.caller
            )
            return shown!
          })
      })
    })
  )
}

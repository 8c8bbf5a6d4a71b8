// Repository assignment (Forgejo's `repoAssignment` with `reqRepoReader/Writer/Admin`, `reqOwner`,
// `mustNotBeArchived`): every route whose `Access` annotation carries a `repo` rule has the
// repository of its path resolved here, once, after authentication. The caller's access is decided
// by the one rule (`repoRefusal`, Policy.ts, which git over HTTP and SSH use too) and the handler
// reads the result as `CurrentRepo`; it never looks the repository up itself.
import { Context, Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Caller, type Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { UserRow } from "../users/Repo.ts"
import { ensureAllowed, type RepoAccess, RepoPolicy } from "./Policy.ts"
import type { RepoRow } from "./Repo.ts"
import { ReposService } from "./Service.ts"

/** The repository of the route's path, opened for the caller by the assignment. */
export interface OpenedRepository {
  readonly owner: UserRow
  readonly repo: RepoRow
  /** The caller's access (what `permissions` reports). */
  readonly access: RepoAccess
  /** The bare repository on disk. */
  readonly path: string
  /** The authenticated caller, if any. */
  readonly caller: Principal | undefined
}

export class CurrentRepo extends Context.Service<CurrentRepo, OpenedRepository>()("hearth/repos/CurrentRepo") {}

export class RepoAssignment extends HttpApiMiddleware.Service<RepoAssignment, { provides: CurrentRepo }>()(
  "hearth/http/RepoAssignment",
  {
    error: [
      Errors.NotFoundEmpty,
      Errors.Forbidden,
      Errors.Conflict,
      Errors.Locked,
      Errors.BadRequest,
      Errors.Unauthorized,
      Errors.ValidationFailed,
      Errors.InternalError,
      Errors.BadGateway,
      Errors.RepositoryMoved
    ]
  }
) {}

export const RepoAssignmentLive = Layer.effect(
  RepoAssignment,
  Effect.gen(function* () {
    const repos = yield* ReposService
    const policy = yield* RepoPolicy

    /** The repository `ownerName/name`, or a 307 from an old name the caller may see there, or 404. */
    const resolve = (caller: Principal | undefined, ownerName: string, name: string) =>
      repos.find(ownerName, name).pipe(
        Effect.catchIf(
          (e) => e instanceof Errors.NotFound,
          () =>
            Effect.flatMap(repos.redirectFor(caller, ownerName, name), (moved) =>
              Effect.fail(Option.isSome(moved) ? moved.value : Errors.notFound())
            )
        )
      )

    // Called once per endpoint when the routes are built: a route without a `repo` rule gets its
    // handler back untouched and pays nothing per request.
    return RepoAssignment.of((httpEffect, { endpoint }) => {
      const rule = Context.get(endpoint.annotations, Access).repo
      // No `CurrentRepo` here: a handler of such a route must not read it (it would be a defect).
      if (rule === undefined) return httpEffect as Effect.Effect<never>
      return Effect.gen(function* () {
        const route = yield* HttpRouter.RouteContext
        const caller = Option.getOrUndefined(yield* Caller)
        const { owner, repo } = yield* resolve(caller, route.params["owner"] ?? "", route.params["repo"] ?? "")
        const access = yield* policy.access(caller, repo, owner)
        const opened = { owner, repo, access, path: repos.pathOf(owner, repo), caller }
        if (rule.checkedBy !== "route") yield* ensureAllowed(caller, opened, rule)
        return yield* Effect.provideService(httpEffect, CurrentRepo, opened)
      })
    })
  })
)

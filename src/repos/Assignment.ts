// Repository assignment (Forgejo's `repoAssignment` with `reqRepoReader/Writer/Admin`, `reqOwner`,
// `mustNotBeArchived`): every route whose `Access` annotation carries a `repo` rule has the
// repository of its path resolved here, once, after authentication. The caller's access is decided
// by the one rule (`repoRefusal`, Policy.ts, which git over HTTP and SSH use too) and the handler
// reads the result as `CurrentRepo`; it never looks the repository up itself.
import { Context, Effect, Layer, Option } from "effect"
import { HttpRouter } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Caller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import type { OpenedRepository } from "./Policy.ts"
import { ReposService } from "./Service.ts"

export type { OpenedRepository }

/** The repository of the route's path, opened for the caller by the assignment. */
export class CurrentRepo extends Context.Service<CurrentRepo, OpenedRepository>()("hearth/repos/CurrentRepo") {}

export class RepoAssignment extends HttpApiMiddleware.Service<RepoAssignment, { provides: CurrentRepo }>()(
  "hearth/http/RepoAssignment",
  {
    error: [Errors.NotFoundEmpty, Errors.Forbidden, Errors.Conflict, Errors.Locked, Errors.RepositoryMoved]
  }
) {}

export const RepoAssignmentLive = Layer.effect(
  RepoAssignment,
  Effect.gen(function* () {
    const repos = yield* ReposService

    // Called once per endpoint when the routes are built: a route without a `repo` rule gets its
    // handler back untouched and pays nothing per request.
    return RepoAssignment.of((httpEffect, { endpoint }) => {
      const rule = Context.get(endpoint.annotations, Access).repo
      // No `CurrentRepo` here: a handler of such a route must not read it (it would be a defect).
      if (rule === undefined) return httpEffect as Effect.Effect<never>
      return Effect.gen(function* () {
        const route = yield* HttpRouter.RouteContext
        const caller = Option.getOrUndefined(yield* Caller)
        const opened = yield* repos.assign(
          caller,
          route.params["owner"] ?? "",
          route.params["repo"] ?? "",
          rule.checkedBy === "route" ? undefined : rule
        )
        return yield* Effect.provideService(httpEffect, CurrentRepo, opened)
      })
    })
  })
)

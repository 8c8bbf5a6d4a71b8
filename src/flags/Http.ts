// Repository flags over HTTP: site administrators only (Forgejo's `reqSiteAdmin`), checked after
// the repository assignment, so a repository the caller may not see stays a 404.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { siteAdmin } from "../admin/Policy.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { FlagsRepo } from "./Repo.ts"

const FLAG_MAX = 100

/** A flag is a name: 1 to 100 characters, no control characters. */
const checkFlag = (name: string) =>
  name.length === 0 || [...name].length > FLAG_MAX || /[\x00-\x1f\x7f]/.test(name)
    ? Effect.fail(
        Errors.validationFailed(
          `a flag is 1 to ${FLAG_MAX} characters without control characters: ${JSON.stringify(name.slice(0, 120))}`
        )
      )
    : Effect.succeed(name)

export const FlagsHttp = apiGroup(HearthApi, "flags", (handlers) =>
  Effect.gen(function* () {
    const flags = yield* FlagsRepo
    /** The repository of the path, once the caller is known to be a site admin. */
    const repoId = Effect.andThen(
      siteAdmin,
      Effect.map(CurrentRepo, (opened) => opened.repo.id)
    )

    return handlers
      .handle("listFlags", () => Effect.flatMap(repoId, flags.list))
      .handle("replaceFlags", ({ payload }) =>
        Effect.gen(function* () {
          const id = yield* repoId
          const names = yield* Effect.forEach(payload.flags ?? [], checkFlag)
          yield* flags.replace(id, names)
        })
      )
      .handle("deleteFlags", () => Effect.flatMap(repoId, (id) => flags.replace(id, [])))
      .handle("checkFlag", ({ params }) =>
        Effect.gen(function* () {
          const id = yield* repoId
          if (!(yield* flags.has(id, params.flag))) return yield* Errors.notFound()
        })
      )
      .handle("addFlag", ({ params }) =>
        Effect.gen(function* () {
          const id = yield* repoId
          yield* flags.add(id, yield* checkFlag(params.flag))
        })
      )
      .handle("deleteFlag", ({ params }) => Effect.flatMap(repoId, (id) => flags.remove(id, params.flag)))
  })
)

// The durable fork job: copy the source's git data into the fork (hard-linked objects, through the
// fork's Repository entity), then tell the database. Started by POST /repos/{o}/{r}/forks, which
// has already answered 202; survives a crash of the server (the copy starts over, the recorded
// steps are not repeated).
import { Effect, Option, Schema } from "effect"
import { Workflow } from "effect/workflow"
import { RepositoryWriter } from "../git/Repository.ts"
import type { JobsRepo } from "../jobs/Repo.ts"
import { finished, step } from "../jobs/Steps.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { UsersRepo } from "../users/Repo.ts"

export const ForkRepository = Workflow.make("ForkRepository", {
  payload: { forkId: Schema.Number, sourceId: Schema.Number },
  idempotencyKey: ({ forkId }) => jobKey(forkId)
})

export const jobKey = (forkId: number) => `fork:${forkId}`

export const ForkRepositoryLive = ForkRepository.toLayer(
  Effect.fnUntraced(
    function* ({ forkId, sourceId }) {
      const repos = yield* ReposService
      const rows = yield* ReposRepo
      const users = yield* UsersRepo
      const writer = yield* RepositoryWriter
      const job = jobKey(forkId)

      /** A repository and its owner as they are now (either may have been renamed meanwhile). */
      const located = (id: number) =>
        Effect.gen(function* () {
          const repo = yield* Effect.mapError(repos.getById(id), () => `repository ${id} no longer exists`)
          const owner = yield* Effect.flatMap(users.findById(repo.ownerId), (found) =>
            Option.isSome(found)
              ? Effect.succeed(found.value)
              : Effect.fail(`the owner of repository ${id} no longer exists`)
          )
          return { repo, owner, dir: repos.pathOf(owner, repo) }
        })

      yield* step({
        job,
        name: "copy",
        success: Schema.Void,
        work: Effect.gen(function* () {
          const source = yield* located(sourceId)
          const fork = yield* located(forkId)
          yield* writer.copyFrom({ id: forkId, dir: fork.dir }, source.dir).pipe(Effect.mapError((e) => e.message))
        })
      }).pipe(Effect.tapError(() => rows.setStatus(forkId, "broken").pipe(Effect.ignore)))

      yield* step({
        job,
        name: "record",
        success: Schema.Void,
        work: Effect.gen(function* () {
          const fork = yield* located(forkId)
          yield* repos.recordGitChange(fork.owner, fork.repo, { maintain: true })
          yield* rows.setStatus(forkId, "ready")
        })
      })
      yield* finished(job)
    },
    (effect) => Effect.orDie(effect)
  )
)

/** What the workflow needs besides the engine (for `Layer.provide`). */
export type ForkRequirements = ReposService | ReposRepo | UsersRepo | RepositoryWriter | JobsRepo

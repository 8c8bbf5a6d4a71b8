// At start-up, repositories a crash left half-made: a job writes a repository's git data after
// its row exists (`creating`), and the job is recorded right after the row. A fork still
// `creating` gets its job row and workflow (both idempotent by key: a workflow that was running
// simply carries on). Any other repository still `creating` without a job row was cut off before
// its job existed — its request failed — so it is removed, leaving nothing half-made behind.
// (One node: nothing is being created while it starts. With several nodes this must only look at
// rows older than any request can take.)
import { Effect, Layer, Option } from "effect"
import type { WorkflowEngine } from "effect/workflow"
import { ForkRepository, jobKey } from "../forks/Workflow.ts"
import { ReposRepo } from "../repos/Repo.ts"
import { ReposService } from "../repos/Service.ts"
import { UsersRepo } from "../users/Repo.ts"
import { JobsRepo } from "./Repo.ts"

export const recoverInterruptedCreations = Effect.gen(function* () {
  const rows = yield* ReposRepo
  const repos = yield* ReposService
  const users = yield* UsersRepo
  const jobs = yield* JobsRepo
  for (const repo of yield* rows.beingCreated) {
    if (repo.isFork && repo.forkId !== null) {
      yield* jobs.enqueue({ kind: "fork", key: jobKey(repo.id), repoId: repo.id })
      yield* ForkRepository.execute({ forkId: repo.id, sourceId: repo.forkId }, { discard: true })
      continue
    }
    const { total } = yield* jobs.list(repo.id, { page: 1, limit: 1, offset: 0 })
    if (total > 0) continue // its job resumes (or is restarted by its own schedule)
    const owner = yield* users.findById(repo.ownerId)
    if (Option.isNone(owner)) continue
    yield* Effect.logWarning(
      `removing ${owner.value.name}/${repo.name}: its creation was cut off before its job started`
    )
    yield* repos.remove(owner.value, repo)
  }
})

export const RecoveryLive: Layer.Layer<
  never,
  never,
  ReposRepo | ReposService | UsersRepo | JobsRepo | WorkflowEngine.WorkflowEngine
> = Layer.effectDiscard(
  recoverInterruptedCreations.pipe(
    Effect.catchCause((cause) => Effect.logWarning("could not recover the repositories being created", cause))
  )
)

// Handlers of the jobs group.
import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { siteAdmin } from "../admin/Policy.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolvePage, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { type JobRow, JobsRepo } from "./Repo.ts"

const toApiJob = (job: JobRow) => ({
  id: job.id,
  kind: job.kind,
  state: job.state,
  attempts: job.attempts,
  last_error: job.lastError,
  repository_id: job.repoId,
  created_at: formatTime(job.createdAt),
  updated_at: formatTime(job.updatedAt),
  finished_at: job.finishedAt === null ? null : formatTime(job.finishedAt)
})

export const JobsHttp = apiGroup(HearthApi, "jobs", (handlers) =>
  Effect.gen(function* () {
    const jobs = yield* JobsRepo

    const listed = (repoId: number | undefined, query: { page?: string | undefined; limit?: string | undefined }) =>
      Effect.gen(function* () {
        const page = yield* resolvePage(query)
        const { rows, total } = yield* jobs.list(repoId, page)
        yield* setListHeaders(page, total, { withLink: true })
        return rows.map(toApiJob)
      })

    return handlers
      .handle("listRepoJobs", ({ query }) => Effect.flatMap(CurrentRepo, ({ repo }) => listed(repo.id, query)))
      .handle("listAllJobs", ({ query }) => Effect.andThen(siteAdmin, listed(undefined, query)))
  })
)

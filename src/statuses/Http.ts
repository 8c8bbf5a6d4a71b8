import { Effect, Option, Schema } from "effect"
import { HearthApi } from "../Api.ts"
import * as Reader from "../branches/Service.ts"
import { Settings } from "../config/Settings.ts"
import { signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime, respond } from "../http/Json.ts"
import { resolvePage, resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { RepoPresenter } from "../repos/Present.ts"
import { UsersRepo } from "../users/Repo.ts"
import { toApiUser } from "../users/Schema.ts"
import { type CombinedStatus, type CommitStatus, CommitStatus as CommitStatusSchema } from "./Api.ts"
import type { StatusRow } from "./Repo.ts"
import { combinedState, StatusesService, stateFilter, statusSort } from "./Service.ts"

/** Forgejo's answer for a commit without statuses: every member at its zero value. */
const NO_STATUS: CombinedStatus = {
  state: "",
  sha: "",
  total_count: 0,
  statuses: null,
  repository: null,
  commit_url: "",
  url: ""
}

export const StatusesHttp = apiGroup(HearthApi, "statuses", (handlers) =>
  Effect.gen(function* () {
    const statuses = yield* StatusesService
    const users = yield* UsersRepo
    const presenter = yield* RepoPresenter
    const settings = yield* Settings

    /** CommitStatus JSON; the creator is shown as to an anonymous reader (Forgejo's `ToCommitStatus`). */
    const toStatuses = (ownerName: string, repoName: string, rows: ReadonlyArray<StatusRow>) =>
      Effect.map(
        users.findByIds([...new Set(rows.flatMap((r) => (r.creatorId === null ? [] : [r.creatorId])))]),
        (people) =>
          rows.map((r): CommitStatus => {
            const creator = r.creatorId === null ? undefined : people.get(r.creatorId)
            return {
              id: r.index,
              status: r.state,
              target_url: r.targetUrl,
              description: r.description,
              url: `${settings.server.ROOT_URL}api/v1/repos/${ownerName}/${repoName}/statuses/${r.sha}`,
              context: r.context,
              creator: creator === undefined ? null : toApiUser(settings, creator, undefined),
              created_at: formatTime(r.createdAt),
              // Forgejo's quirk: always the creation time.
              updated_at: formatTime(r.createdAt)
            }
          })
      )

    /** The commit a ref or id names (branch, tag, commit id), else the text itself (it then has no statuses). */
    const commitOf = (path: string, ref: string) =>
      Effect.map(Reader.resolveCommit(path, ref), (found) => Option.getOrElse(found, () => ref))

    const listOf = (
      ref: string,
      query: {
        sort?: string | undefined
        state?: string | undefined
        page?: string | undefined
        limit?: string | undefined
      }
    ) =>
      Effect.gen(function* () {
        const { owner, repo, path } = yield* CurrentRepo
        const sha = yield* commitOf(path, ref)
        const page = yield* resolvePage(query)
        const found = yield* statuses.list(
          repo.id,
          sha,
          { sort: statusSort(query.sort), state: stateFilter(query.state) },
          page
        )
        yield* setListHeaders(page, found.total, { withLink: true })
        return respond(Schema.Array(CommitStatusSchema), yield* toStatuses(owner.name, repo.name, found.rows))
      })

    return handlers
      .handle("createStatus", ({ params, payload }) =>
        Effect.gen(function* () {
          const caller = yield* signedInCaller
          const { owner, repo, path } = yield* CurrentRepo
          const sha = yield* Reader.resolveCommit(path, params.sha)
          if (Option.isNone(sha)) return yield* Errors.notFound()
          const row = yield* statuses.create(owner, repo, caller.user, sha.value, payload)
          const [status] = yield* toStatuses(owner.name, repo.name, [row])
          return respond(CommitStatusSchema, status!, 201)
        })
      )
      .handle("listStatuses", ({ params, query }) => listOf(params.sha, query))
      .handle("listStatusesByRef", ({ params, query }) => listOf(params.ref, query))
      .handle("combinedStatusByRef", ({ params, query }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const { owner, repo, path } = opened
          const sha = yield* commitOf(path, params.ref)
          const { page, window } = yield* resolveWindow(query)
          const latest = yield* statuses.latest(repo.id, sha, window)
          if (latest.total === 0) return NO_STATUS
          yield* setListHeaders(page, latest.total)
          const listed = yield* toStatuses(owner.name, repo.name, latest.rows)
          return {
            // Forgejo's `ToCombinedStatus`: the state of the statuses answered.
            state: combinedState(latest.rows.map((s) => s.state)),
            sha,
            total_count: listed.length,
            statuses: listed,
            repository: yield* presenter.one(opened.caller, opened),
            commit_url: "",
            url: ""
          } satisfies CombinedStatus
        })
      )
  })
)

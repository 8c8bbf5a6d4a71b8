import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { Caller, signedInCaller } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { RepoPolicy } from "../repos/Policy.ts"
import { ReposService } from "../repos/Service.ts"
import type { TopicResponse } from "./Api.ts"
import type { TopicRow } from "./Repo.ts"
import { TopicsService } from "./Service.ts"

const toTopicResponse = (topic: TopicRow): TopicResponse => ({
  id: topic.id,
  topic_name: topic.name,
  repo_count: topic.repoCount,
  created: formatTime(topic.createdAt),
  updated: formatTime(topic.updatedAt)
})

export const TopicsHttp = HttpApiBuilder.group(HearthApi, "topics", (handlers) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const policy = yield* RepoPolicy
    const topics = yield* TopicsService

    /** The repository, for a caller who administers it (Forgejo's `reqAdmin`): 404 unseen, 403 otherwise. */
    const openForAdmin = (params: { readonly owner: string; readonly repo: string }) =>
      Effect.gen(function* () {
        const caller = yield* signedInCaller
        const { owner, repo } = yield* repos.find(params.owner, params.repo)
        yield* policy.ensureAccess(caller, repo, owner, "admin")
        return repo
      })

    return handlers
      .handle("listTopics", ({ params, query }) =>
        Effect.gen(function* () {
          const { repo } = yield* repos.open(Option.getOrUndefined(yield* Caller), params.owner, params.repo)
          // Forgejo's FindTopics pages only when `page` is given.
          const { page, window } = yield* resolveWindow(query)
          const listed = yield* topics.listForRepo(repo.id, window)
          yield* setListHeaders(page, listed.total)
          return { topics: listed.rows }
        })
      )
      .handle("updateTopics", ({ params, payload }) =>
        Effect.flatMap(openForAdmin(params), (repo) => topics.replace(repo.id, payload.topics ?? []))
      )
      .handle("addTopic", ({ params }) =>
        Effect.flatMap(openForAdmin(params), (repo) => topics.add(repo.id, params.topic))
      )
      .handle("deleteTopic", ({ params }) =>
        Effect.gen(function* () {
          const repo = yield* openForAdmin(params)
          if (!(yield* topics.remove(repo.id, params.topic))) return yield* Errors.notFound()
        })
      )
      .handle("searchTopics", ({ query }) =>
        Effect.gen(function* () {
          const { page, window } = yield* resolveWindow(query)
          const found = yield* topics.search(query.q ?? "", window)
          yield* setListHeaders(page, found.total)
          return { topics: found.rows.map(toTopicResponse) }
        })
      )
  })
)

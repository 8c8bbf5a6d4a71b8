import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { formatTime } from "../http/Json.ts"
import { resolveWindow, setListHeaders } from "../http/Pagination.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
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

export const TopicsHttp = apiGroup(HearthApi, "topics", (handlers) =>
  Effect.gen(function* () {
    const topics = yield* TopicsService
    // The assignment opened the repository and applied the route's rule (reader, or admin to change).
    const current = Effect.map(CurrentRepo, (opened) => opened.repo)

    return handlers
      .handle("listTopics", ({ query }) =>
        Effect.gen(function* () {
          const repo = yield* current
          // Forgejo's FindTopics pages only when `page` is given.
          const { page, window } = yield* resolveWindow(query)
          const listed = yield* topics.listForRepo(repo.id, window)
          yield* setListHeaders(page, listed.total)
          return { topics: listed.rows }
        })
      )
      .handle("updateTopics", ({ payload }) =>
        Effect.flatMap(current, (repo) => topics.replace(repo.id, payload.topics ?? []))
      )
      .handle("addTopic", ({ params }) => Effect.flatMap(current, (repo) => topics.add(repo.id, params.topic)))
      .handle("deleteTopic", ({ params }) =>
        Effect.gen(function* () {
          const repo = yield* current
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

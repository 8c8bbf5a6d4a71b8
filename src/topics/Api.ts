// Repository topics: Forgejo's `TopicName`, `RepoTopicOptions`, `TopicResponse`. Anyone who may see
// a repository reads its topics; its admins change them (Forgejo's `reqAdmin`); anyone searches
// them (`repository` scope).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

const anyone = { signedIn: false, scopes: ["repository"] } as const
/** Forgejo's `reqAnyRepoReader` on the topics group. */
const repoRead = { ...anyone, repo: { role: "read" } } as const
/** Forgejo's `reqToken(), reqAdmin()`. */
const repoAdmin = { signedIn: true, scopes: ["repository"], repo: { role: "admin", changes: "settings" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

export const TopicName = Schema.Struct({ topics: Schema.Array(Schema.String) })
export const RepoTopicOptions = Schema.Struct({
  topics: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
})
export const TopicResponse = Schema.Struct({
  id: Schema.Number,
  topic_name: Schema.String,
  repo_count: Schema.Number,
  created: Timestamp,
  updated: Timestamp
})
export type TopicResponse = typeof TopicResponse.Type
export const TopicSearchResults = Schema.Struct({ topics: Schema.Array(TopicResponse) })

export class TopicsApi extends HttpApiGroup.make("topics").add(
  HttpApiEndpoint.get("listTopics", "/repos/:owner/:repo/topics", {
    params: ownerRepo,
    query: PageQuery,
    success: TopicName
  })
    .annotate(OpenApi.Identifier, "repoListTopics")
    .annotate(Access, repoRead),
  HttpApiEndpoint.put("updateTopics", "/repos/:owner/:repo/topics", {
    params: ownerRepo,
    payload: RepoTopicOptions,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoUpdateTopics")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.put("addTopic", "/repos/:owner/:repo/topics/:topic", {
    params: { ...ownerRepo, topic: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoAddTopic")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.delete("deleteTopic", "/repos/:owner/:repo/topics/:topic", {
    params: { ...ownerRepo, topic: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteTopic")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.get("searchTopics", "/topics/search", {
    query: { q: Schema.optional(Schema.String), ...PageQuery },
    success: TopicSearchResults
  })
    .annotate(OpenApi.Identifier, "topicSearch")
    .annotate(Access, anyone)
) {}

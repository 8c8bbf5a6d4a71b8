import { Effect, Schema } from "effect"
import { HttpServerRequest } from "effect/http"
import { HearthApi } from "../Api.ts"
import * as Errors from "../http/Errors.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { IssueDeps, type IssueMeta, type LinkDirection } from "./Deps.ts"
import { Issue } from "./Schema.ts"

/** IssueMeta `{index, owner, repo}`, read by hand: DELETE carries it as a JSON body too. */
const issueMeta = Effect.gen(function* () {
  const request = yield* HttpServerRequest.HttpServerRequest
  const text = yield* Effect.orElseSucceed(request.text, () => "")
  let body: unknown = {}
  if (text.trim() !== "") {
    try {
      body = JSON.parse(text)
    } catch {
      return yield* Errors.validationFailed("the body is not valid JSON")
    }
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    return yield* Errors.validationFailed("the body must be an IssueMeta object")
  }
  const { index, owner, repo } = body as Record<string, unknown>
  if (index !== undefined && (typeof index !== "number" || !Number.isInteger(index))) {
    return yield* Errors.validationFailed("index: Expected an integer")
  }
  if (owner !== undefined && typeof owner !== "string")
    return yield* Errors.validationFailed("owner: Expected a string")
  if (repo !== undefined && typeof repo !== "string") return yield* Errors.validationFailed("repo: Expected a string")
  return { index, owner, repo } as IssueMeta
})

export const IssueDepsHttp = apiGroup(HearthApi, "issueDeps", (handlers) =>
  Effect.gen(function* () {
    const deps = yield* IssueDeps
    const list =
      (direction: LinkDirection) =>
      ({
        params,
        query
      }: {
        params: { index: string }
        query: { page?: string | undefined; limit?: string | undefined }
      }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          return respond(Schema.Array(Issue), [...(yield* deps.list(opened, params.index, direction, query))])
        })
    // Forgejo answers 201 with the path's issue for every change, removals included.
    const change =
      (direction: LinkDirection, add: boolean) =>
      ({ params }: { params: { index: string } }) =>
        Effect.gen(function* () {
          const opened = yield* CurrentRepo
          const meta = yield* issueMeta
          return respond(Issue, yield* deps.change(opened, params.index, direction, meta, add), 201)
        })
    return handlers
      .handle("listDependencies", list("dependencies"))
      .handle("createDependency", change("dependencies", true))
      .handle("removeDependency", change("dependencies", false))
      .handle("listBlocks", list("blocks"))
      .handle("createBlocking", change("blocks", true))
      .handle("removeBlocking", change("blocks", false))
  })
)

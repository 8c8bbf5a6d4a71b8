import { Effect, Schema } from "effect"
import { HearthApi } from "../Api.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { IssueTemplates } from "./Templates.ts"
import { IssueConfig, IssueConfigValidation, IssueTemplate } from "./TemplatesApi.ts"

export const IssueTemplatesHttp = apiGroup(HearthApi, "issueTemplates", (handlers) =>
  Effect.gen(function* () {
    const templates = yield* IssueTemplates
    return handlers
      .handle("templates", () =>
        Effect.gen(function* () {
          const found = yield* templates.templates(yield* CurrentRepo)
          // `assignees` is the web form's, not part of Forgejo's API template.
          return respond(
            Schema.Array(IssueTemplate),
            found.map(({ assignees: _, ...template }) => template)
          )
        })
      )
      .handle("config", () =>
        Effect.gen(function* () {
          // An invalid config file counts as none (Forgejo shows the default).
          return respond(IssueConfig, (yield* templates.config(yield* CurrentRepo)).config)
        })
      )
      .handle("validateConfig", () =>
        Effect.gen(function* () {
          const { error } = yield* templates.config(yield* CurrentRepo)
          return respond(IssueConfigValidation, { valid: error === undefined, message: error ?? "" })
        })
      )
  })
)

import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { apiGroup } from "../http/Group.ts"
import { CurrentRepo } from "../repos/Assignment.ts"
import { LanguagesService } from "./Service.ts"

export const LanguagesHttp = apiGroup(HearthApi, "languages", (handlers) =>
  Effect.gen(function* () {
    const languages = yield* LanguagesService
    return handlers.handle("getLanguages", () =>
      Effect.gen(function* () {
        const { repo, path } = yield* CurrentRepo
        return yield* languages.of(repo, path)
      })
    )
  })
)

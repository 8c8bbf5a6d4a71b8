import { Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { Caller } from "../http/Caller.ts"
import { ReposService } from "../repos/Service.ts"
import { LanguagesService } from "./Service.ts"

export const LanguagesHttp = HttpApiBuilder.group(HearthApi, "languages", (handlers) =>
  Effect.gen(function* () {
    const repos = yield* ReposService
    const languages = yield* LanguagesService
    return handlers.handle("getLanguages", ({ params }) =>
      Effect.gen(function* () {
        const { repo, path } = yield* repos.open(Option.getOrUndefined(yield* Caller), params.owner, params.repo)
        return yield* languages.of(repo, path)
      })
    )
  })
)

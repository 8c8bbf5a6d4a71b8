import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../http/Api.ts"
import { VERSION } from "../version.ts"

export const MiscHttp = HttpApiBuilder.group(HearthApi, "misc", (handlers) =>
  Effect.succeed(handlers.handle("getVersion", () => Effect.succeed({ version: VERSION, Version: VERSION }))))

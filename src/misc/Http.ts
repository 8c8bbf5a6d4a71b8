import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { HearthApi } from "../Api.ts"
import { respond } from "../http/Json.ts"
import { VERSION } from "../version.ts"
import { ServerVersion } from "./Api.ts"

export const MiscHttp = HttpApiBuilder.group(HearthApi, "misc", (handlers) =>
  Effect.succeed(
    handlers.handle("getVersion", () => Effect.succeed(respond(ServerVersion, { version: VERSION, Version: VERSION })))
  )
)

import { Effect } from "effect"
import { HearthApi } from "../Api.ts"
import { apiGroup } from "../http/Group.ts"
import { respond } from "../http/Json.ts"
import { VERSION } from "../version.ts"
import { ServerVersion } from "./Api.ts"

export const MiscHttp = apiGroup(HearthApi, "misc", (handlers) => {
  // The answer never changes while the server runs: encoded once, not on every request (clients
  // ask for it on every connection).
  const version = Effect.succeed(respond(ServerVersion, { version: VERSION, Version: VERSION }))
  return Effect.succeed(handlers.handle("getVersion", () => version))
})

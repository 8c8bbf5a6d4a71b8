// Miscellaneous: the running version.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

export const ServerVersion = Schema.Struct({
  version: Schema.String,
  /** The member name the Hearth specification uses; same value. */
  Version: Schema.String
}).annotate({ identifier: "ServerVersion" })

export class MiscApi extends HttpApiGroup.make("misc").add(
  HttpApiEndpoint.get("getVersion", "/version", { success: ServerVersion }).annotate(OpenApi.Identifier, "getVersion")
) {}

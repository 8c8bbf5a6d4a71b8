// A repository's flags (Forgejo's /repos/{o}/{r}/flags, routers/api/v1/repo/flags.go): names site
// administrators put on repositories. Only site administrators list or change them (403 for
// others who may see the repository; 404, as always, for those who may not).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

const admin = { signedIn: true, scopes: ["repository"], repo: { role: "read" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }
const withFlag = { ...ownerRepo, flag: Schema.String }

export const ReplaceFlagsOption = Schema.Struct({
  flags: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String)))
}).annotate({ identifier: "ReplaceFlagsOption" })

export class FlagsApi extends HttpApiGroup.make("flags").add(
  HttpApiEndpoint.get("listFlags", "/repos/:owner/:repo/flags", {
    params: ownerRepo,
    success: Schema.Array(Schema.String)
  })
    .annotate(OpenApi.Identifier, "repoListFlags")
    .annotate(Access, admin),
  HttpApiEndpoint.put("replaceFlags", "/repos/:owner/:repo/flags", {
    params: ownerRepo,
    payload: ReplaceFlagsOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoReplaceAllFlags")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("deleteFlags", "/repos/:owner/:repo/flags", {
    params: ownerRepo,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteAllFlags")
    .annotate(Access, admin),
  HttpApiEndpoint.get("checkFlag", "/repos/:owner/:repo/flags/:flag", {
    params: withFlag,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoCheckFlag")
    .annotate(Access, admin),
  HttpApiEndpoint.put("addFlag", "/repos/:owner/:repo/flags/:flag", {
    params: withFlag,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoAddFlag")
    .annotate(Access, admin),
  HttpApiEndpoint.delete("deleteFlag", "/repos/:owner/:repo/flags/:flag", {
    params: withFlag,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteFlag")
    .annotate(Access, admin)
) {}

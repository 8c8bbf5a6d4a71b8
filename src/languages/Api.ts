// A repository's languages: Forgejo's `LanguageStatistics` (bytes per language). Readable by anyone
// who may see the repository (`repository` scope).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

export const LanguageStatistics = Schema.Record(Schema.String, Schema.Number)

export class LanguagesApi extends HttpApiGroup.make("languages").add(
  HttpApiEndpoint.get("getLanguages", "/repos/:owner/:repo/languages", {
    params: { owner: Schema.String, repo: Schema.String },
    success: LanguageStatistics
  })
    .annotate(OpenApi.Identifier, "repoGetLanguages")
    // Forgejo's `reqRepoReader(unit.TypeCode)`.
    .annotate(Access, { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } })
) {}

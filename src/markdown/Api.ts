// Rendering markdown over the API (Forgejo's miscellaneous routes): /markdown, /markdown/raw and
// /markup. Any signed-in caller may render; no token scope is needed (Forgejo's routes have no `tokenRequiresScopes`).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"

const signedIn = { signedIn: true, scopes: [] } as const
const optionalString = Schema.optionalKey(Schema.String)
const optionalBoolean = Schema.optionalKey(Schema.Boolean)

// Forgejo's structs have no JSON tags and Go decodes member names case-insensitively: the
// documented capitalised names, and the lower-case ones clients also send.
export const MarkdownOption = Schema.Struct({
  Text: optionalString,
  Mode: optionalString,
  Context: optionalString,
  Wiki: optionalBoolean,
  text: optionalString,
  mode: optionalString,
  context: optionalString,
  wiki: optionalBoolean
}).annotate({ identifier: "MarkdownOption" })

export const MarkupOption = Schema.Struct({
  Text: optionalString,
  Mode: optionalString,
  Context: optionalString,
  Wiki: optionalBoolean,
  FilePath: optionalString,
  BranchPath: optionalString,
  text: optionalString,
  mode: optionalString,
  context: optionalString,
  wiki: optionalBoolean,
  filePath: optionalString,
  branchPath: optionalString
}).annotate({ identifier: "MarkupOption" })

const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" }))

export class MarkdownApi extends HttpApiGroup.make("markdown").add(
  HttpApiEndpoint.post("renderMarkdown", "/markdown", { payload: MarkdownOption, success: Html })
    .annotate(OpenApi.Identifier, "renderMarkdown")
    .annotate(Access, signedIn),
  HttpApiEndpoint.post("renderMarkdownRaw", "/markdown/raw", {
    payload: Schema.String.pipe(HttpApiSchema.asText()),
    success: Html
  })
    .annotate(OpenApi.Identifier, "renderMarkdownRaw")
    .annotate(Access, signedIn),
  HttpApiEndpoint.post("renderMarkup", "/markup", { payload: MarkupOption, success: Html })
    .annotate(OpenApi.Identifier, "renderMarkup")
    .annotate(Access, signedIn)
) {}

// The wiki's API (Forgejo's routers/api/v1/repo/wiki.go): pages of the repository's wiki, a git
// repository of its own (Location.ts). Every route needs the wiki unit on and readable (else 404,
// Forgejo's `mustEnableWiki`); changes need write on the wiki unit (403) and a repository that is
// not archived (423).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"

const wikiRead = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "wiki" } } as const
const wikiWrite = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "wiki", changes: "content" }
} as const

/** `{pageName}` is read raw from the request's path (Forgejo's `PathParamRaw`), so any depth is taken. */
const pagePath = { owner: Schema.String, repo: Schema.String, "*": Schema.optional(Schema.String) }

const CommitUser = Schema.Struct({ name: Schema.String, email: Schema.String, date: Timestamp })

export const WikiCommit = Schema.Struct({
  sha: Schema.String,
  author: CommitUser,
  /** Forgejo's spelling. */
  commiter: CommitUser,
  message: Schema.String
}).annotate({ identifier: "WikiCommit" })
export type WikiCommit = typeof WikiCommit.Type

const metaData = {
  title: Schema.String,
  html_url: Schema.String,
  sub_url: Schema.String,
  last_commit: WikiCommit
}

export const WikiPageMetaData = Schema.Struct(metaData).annotate({ identifier: "WikiPageMetaData" })
export type WikiPageMetaData = typeof WikiPageMetaData.Type

export const WikiPage = Schema.Struct({
  ...metaData,
  content_base64: Schema.String,
  commit_count: Schema.Int,
  sidebar: Schema.String,
  footer: Schema.String
}).annotate({ identifier: "WikiPage" })
export type WikiPage = typeof WikiPage.Type

export const WikiCommitList = Schema.Struct({
  commits: Schema.Array(WikiCommit),
  count: Schema.Int
}).annotate({ identifier: "WikiCommitList" })

export const CreateWikiPageOptions = Schema.Struct({
  title: Schema.optional(Schema.String),
  content_base64: Schema.optional(Schema.String),
  message: Schema.optional(Schema.String)
}).annotate({ identifier: "CreateWikiPageOptions" })
export type CreateWikiPageOptions = typeof CreateWikiPageOptions.Type

export class WikiApi extends HttpApiGroup.make("wiki").add(
  HttpApiEndpoint.post("createWikiPage", "/repos/:owner/:repo/wiki/new", {
    params: { owner: Schema.String, repo: Schema.String },
    payload: CreateWikiPageOptions,
    success: WikiPage.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateWikiPage")
    .annotate(Access, wikiWrite),
  HttpApiEndpoint.get("getWikiPage", "/repos/:owner/:repo/wiki/page/*", {
    params: pagePath,
    success: WikiPage
  })
    .annotate(OpenApi.Identifier, "repoGetWikiPage")
    .annotate(Access, wikiRead),
  HttpApiEndpoint.patch("editWikiPage", "/repos/:owner/:repo/wiki/page/*", {
    params: pagePath,
    payload: CreateWikiPageOptions,
    success: WikiPage
  })
    .annotate(OpenApi.Identifier, "repoEditWikiPage")
    .annotate(Access, wikiWrite),
  HttpApiEndpoint.delete("deleteWikiPage", "/repos/:owner/:repo/wiki/page/*", {
    params: pagePath,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteWikiPage")
    .annotate(Access, wikiWrite),
  HttpApiEndpoint.get("listWikiPages", "/repos/:owner/:repo/wiki/pages", {
    params: { owner: Schema.String, repo: Schema.String },
    query: PageQuery,
    success: Schema.Array(WikiPageMetaData)
  })
    .annotate(OpenApi.Identifier, "repoGetWikiPages")
    .annotate(Access, wikiRead),
  HttpApiEndpoint.get("listWikiPageRevisions", "/repos/:owner/:repo/wiki/revisions/*", {
    params: pagePath,
    query: { page: Schema.optional(Schema.String) },
    success: WikiCommitList
  })
    .annotate(OpenApi.Identifier, "repoGetWikiPageRevisions")
    .annotate(Access, wikiRead)
) {}

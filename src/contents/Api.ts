// Reading a repository's files and git objects (issue 3 item 6, read side): contents, raw and
// media bytes, blobs, trees and refs. Anyone who can see the repository may read them.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Verification } from "../branches/Api.ts"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"

/** Forgejo's `reqRepoReader(unit.TypeCode)`; changes add `reqRepoWriter` and `mustNotBeArchived` (Assignment.ts). */
const repoOpen = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } } as const
const repoWrite = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "code", changes: "content" }
} as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }
/**
 * A path of any depth after the route (find-my-way's wildcard). A wildcard route also answers the
 * route without it (`/contents` as `/contents/*`), where the path is empty.
 */
const withPath = { ...ownerRepo, "*": Schema.optional(Schema.String) }
const optional = Schema.optional(Schema.String)
const Nullable = Schema.NullOr(Schema.String)

export const FileLinksResponse = Schema.Struct({
  self: Schema.String,
  git: Schema.String,
  html: Schema.String
}).annotate({ identifier: "FileLinksResponse" })

export const ContentsResponse = Schema.Struct({
  name: Schema.String,
  path: Schema.String,
  sha: Schema.String,
  last_commit_sha: Schema.String,
  last_commit_when: Schema.String,
  type: Schema.String,
  size: Schema.Int,
  encoding: Nullable,
  content: Nullable,
  target: Nullable,
  url: Schema.String,
  html_url: Schema.String,
  git_url: Schema.String,
  download_url: Nullable,
  submodule_git_url: Nullable,
  _links: FileLinksResponse
}).annotate({ identifier: "ContentsResponse" })
export type ContentsResponse = typeof ContentsResponse.Type

export const GitBlob = Schema.Struct({
  content: Schema.String,
  encoding: Schema.String,
  url: Schema.String,
  sha: Schema.String,
  size: Schema.Int
}).annotate({ identifier: "GitBlob" })

export const GitEntry = Schema.Struct({
  path: Schema.String,
  mode: Schema.String,
  type: Schema.String,
  size: Schema.Int,
  sha: Schema.String,
  url: Schema.String
}).annotate({ identifier: "GitEntry" })

export const GitTreeResponse = Schema.Struct({
  sha: Schema.String,
  url: Schema.String,
  tree: Schema.Array(GitEntry),
  truncated: Schema.Boolean,
  page: Schema.Int,
  total_count: Schema.Int
}).annotate({ identifier: "GitTreeResponse" })

export const GitObject = Schema.Struct({
  type: Schema.String,
  sha: Schema.String,
  url: Schema.String
}).annotate({ identifier: "GitObject" })

export const Reference = Schema.Struct({
  ref: Schema.String,
  url: Schema.String,
  object: GitObject
}).annotate({ identifier: "Reference" })

// Changing files (issue 3 item 6, write side): Forgejo's CreateFileOptions, UpdateFileOptions,
// DeleteFileOptions and ChangeFilesOptions, answered with FileResponse, FileDeleteResponse and
// FilesResponse.

export const Identity = Schema.Struct({ name: optional, email: optional })
const CommitDateOptions = Schema.Struct({ author: optional, committer: optional })

/** What every change request may carry besides the files. */
const changeOptions = {
  message: optional,
  branch: optional,
  new_branch: optional,
  author: Schema.optional(Identity),
  committer: Schema.optional(Identity),
  dates: Schema.optional(CommitDateOptions),
  signoff: Schema.optional(Schema.Boolean)
}

export const CreateFileOptions = Schema.Struct({ ...changeOptions, content: Schema.String })
export const UpdateFileOptions = Schema.Struct({
  ...changeOptions,
  content: Schema.String,
  sha: Schema.String,
  from_path: optional
})
export const DeleteFileOptions = Schema.Struct({ ...changeOptions, sha: Schema.String })
/**
 * POST /diffpatch: Forgejo binds `ApplyDiffPatchFileOptions` (the change options and the patch in
 * `content`), though its swagger names `UpdateFileOptions`, whose `sha` a patch has no use for.
 */
export const ApplyDiffPatchFileOptions = Schema.Struct({ ...changeOptions, content: Schema.String })
export const ChangeFileOperation = Schema.Struct({
  operation: Schema.Literals(["create", "update", "delete"]),
  path: Schema.String,
  content: optional,
  sha: optional,
  from_path: optional
})
export const ChangeFilesOptions = Schema.Struct({ ...changeOptions, files: Schema.Array(ChangeFileOperation) })
export type ChangeFilesOptions = typeof ChangeFilesOptions.Type
/**
 * POST /contents (ChangeFilesOptions) and POST /contents/{path} (CreateFileOptions) share one
 * wildcard route in this router, so the body is read as either; the handler requires `files` or
 * `content` by the path.
 */
export const CreateOrChangeFiles = Schema.Struct({
  ...changeOptions,
  content: optional,
  files: Schema.optional(Schema.Array(ChangeFileOperation))
})

const CommitUser = Schema.Struct({ name: Schema.String, email: Schema.String, date: Timestamp })
const CommitMeta = Schema.Struct({ url: Schema.String, sha: Schema.String, created: Timestamp })

export const FileCommitResponse = Schema.Struct({
  url: Schema.String,
  sha: Schema.String,
  created: Timestamp,
  html_url: Schema.String,
  author: CommitUser,
  committer: CommitUser,
  parents: Schema.Array(CommitMeta),
  message: Schema.String,
  tree: CommitMeta
}).annotate({ identifier: "FileCommitResponse" })
export type FileCommitResponse = typeof FileCommitResponse.Type

export const FileResponse = Schema.Struct({
  content: ContentsResponse,
  commit: FileCommitResponse,
  verification: Verification
}).annotate({ identifier: "FileResponse" })

export const FileDeleteResponse = Schema.Struct({
  content: Schema.Null,
  commit: FileCommitResponse,
  verification: Verification
}).annotate({ identifier: "FileDeleteResponse" })

/** `files` has a null where a file was deleted, as Forgejo answers. */
export const FilesResponse = Schema.Struct({
  files: Schema.Array(Schema.NullOr(ContentsResponse)),
  commit: FileCommitResponse,
  verification: Verification
}).annotate({ identifier: "FilesResponse" })

/** File bytes; the handler answers with its own response and Content-Type. */
const RawFile = Schema.String

export class ContentsApi extends HttpApiGroup.make("contents").add(
  HttpApiEndpoint.get("getContents", "/repos/:owner/:repo/contents/*", {
    params: withPath,
    query: { ref: optional },
    success: Schema.Union([ContentsResponse, Schema.Array(ContentsResponse)])
  })
    .annotate(OpenApi.Identifier, "repoGetContents")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.post("createFiles", "/repos/:owner/:repo/contents/*", {
    params: withPath,
    payload: CreateOrChangeFiles,
    success: Schema.Union([FileResponse, FilesResponse]).pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateFile")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.put("updateFile", "/repos/:owner/:repo/contents/*", {
    params: withPath,
    payload: UpdateFileOptions,
    success: FileResponse
  })
    .annotate(OpenApi.Identifier, "repoUpdateFile")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("deleteFile", "/repos/:owner/:repo/contents/*", {
    params: withPath,
    payload: DeleteFileOptions,
    success: FileDeleteResponse
  })
    .annotate(OpenApi.Identifier, "repoDeleteFile")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getRawFile", "/repos/:owner/:repo/raw/*", {
    params: withPath,
    query: { ref: optional },
    success: RawFile
  })
    .annotate(OpenApi.Identifier, "repoGetRawFile")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getMediaFile", "/repos/:owner/:repo/media/*", {
    params: withPath,
    query: { ref: optional },
    success: RawFile
  })
    .annotate(OpenApi.Identifier, "repoGetRawFileOrLFS")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getBlob", "/repos/:owner/:repo/git/blobs/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    success: GitBlob
  })
    .annotate(OpenApi.Identifier, "GetBlob")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getTree", "/repos/:owner/:repo/git/trees/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    query: { recursive: optional, page: optional, per_page: optional },
    success: GitTreeResponse
  })
    .annotate(OpenApi.Identifier, "GetTree")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getRefs", "/repos/:owner/:repo/git/refs/*", {
    params: withPath,
    success: Schema.Array(Reference)
  })
    .annotate(OpenApi.Identifier, "repoListGitRefs")
    .annotate(Access, repoOpen)
) {}

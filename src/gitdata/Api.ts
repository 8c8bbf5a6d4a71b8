// Git data and code helpers (issue 23 item 5): batches of blobs, all refs, annotated tags, notes,
// a commit's raw diff or patch, a patch applied as a commit, a file's EditorConfig definition, the
// instance's signing keys, and the server-side git hooks Hearth keeps to itself.
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Commit, CommitUser, Verification } from "../branches/Api.ts"
import { ApplyDiffPatchFileOptions, FileCommitResponse, GitBlob } from "../contents/Api.ts"
import { Access } from "../http/Access.ts"

/** Forgejo's `reqRepoReader(unit.TypeCode)`. */
const repoOpen = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } } as const
/** Forgejo's `reqRepoWriter(unit.TypeCode)` + `mustNotBeArchived`, no pull mirror (Assignment.ts). */
const repoWrite = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "code", changes: "content" }
} as const
/** Forgejo's `reqToken()` + `reqAdmin()` of the /hooks/git group. */
const repoAdmin = { signedIn: true, scopes: ["repository"], repo: { role: "admin" } } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }
const optional = Schema.optional(Schema.String)

export const AnnotatedTag = Schema.Struct({
  tag: Schema.String,
  sha: Schema.String,
  url: Schema.String,
  message: Schema.String,
  tagger: CommitUser,
  object: Schema.Struct({ type: Schema.String, url: Schema.String, sha: Schema.String }),
  verification: Verification,
  archive_download_count: Schema.Struct({ zip: Schema.Int, tar_gz: Schema.Int })
}).annotate({ identifier: "AnnotatedTag" })

export const Note = Schema.Struct({ message: Schema.String, commit: Commit }).annotate({ identifier: "Note" })
export const NoteOptions = Schema.Struct({ message: optional }).annotate({ identifier: "NoteOptions" })

/** A diffpatch answer: no file contents (Forgejo's `FileResponse` with `content` nil). */
export const PatchResponse = Schema.Struct({
  content: Schema.Null,
  commit: FileCommitResponse,
  verification: Verification
}).annotate({ identifier: "DiffPatchResponse" })

export const GitHook = Schema.Struct({
  name: Schema.String,
  is_active: Schema.Boolean,
  content: Schema.String
}).annotate({ identifier: "GitHook" })
export const EditGitHookOption = Schema.Struct({ content: optional }).annotate({ identifier: "EditGitHookOption" })

/** Text the handler answers with its own response and Content-Type. */
const Text = Schema.String

export class GitDataApi extends HttpApiGroup.make("gitdata").add(
  HttpApiEndpoint.get("getBlobs", "/repos/:owner/:repo/git/blobs", {
    params: ownerRepo,
    query: { shas: optional },
    success: Schema.Array(GitBlob)
  })
    .annotate(OpenApi.Identifier, "GetBlobs")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getAnnotatedTag", "/repos/:owner/:repo/git/tags/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    success: AnnotatedTag
  })
    .annotate(OpenApi.Identifier, "GetAnnotatedTag")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getNote", "/repos/:owner/:repo/git/notes/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    query: { verification: optional, files: optional },
    success: Note
  })
    .annotate(OpenApi.Identifier, "repoGetNote")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.post("setNote", "/repos/:owner/:repo/git/notes/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    payload: NoteOptions,
    success: Note
  })
    .annotate(OpenApi.Identifier, "repoSetNote")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("removeNote", "/repos/:owner/:repo/git/notes/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoRemoveNote")
    .annotate(Access, repoWrite),
  // Forgejo's chi route `/commits/{sha}.{diffType:diff|patch}`: other dotted names (a tag `v1.0`)
  // stay with repoGetSingleCommit (src/branches).
  HttpApiEndpoint.get("downloadCommitDiff", "/repos/:owner/:repo/git/commits/:sha.:diffType(^(diff|patch)$)", {
    params: { ...ownerRepo, sha: Schema.String, diffType: Schema.String },
    success: Text
  })
    .annotate(OpenApi.Identifier, "repoDownloadCommitDiffOrPatch")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.post("applyDiffPatch", "/repos/:owner/:repo/diffpatch", {
    params: ownerRepo,
    payload: ApplyDiffPatchFileOptions,
    success: PatchResponse
  })
    .annotate(OpenApi.Identifier, "repoApplyDiffPatch")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getEditorConfig", "/repos/:owner/:repo/editorconfig/*", {
    params: { ...ownerRepo, "*": Schema.optional(Schema.String) },
    query: { ref: optional },
    success: Schema.Record(Schema.String, Schema.String)
  })
    .annotate(OpenApi.Identifier, "repoGetEditorConfig")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("listGitHooks", "/repos/:owner/:repo/hooks/git", {
    params: ownerRepo,
    success: Schema.Array(GitHook)
  })
    .annotate(OpenApi.Identifier, "repoListGitHooks")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.get("getGitHook", "/repos/:owner/:repo/hooks/git/:id", {
    params: { ...ownerRepo, id: Schema.String },
    success: GitHook
  })
    .annotate(OpenApi.Identifier, "repoGetGitHook")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.patch("editGitHook", "/repos/:owner/:repo/hooks/git/:id", {
    params: { ...ownerRepo, id: Schema.String },
    payload: EditGitHookOption,
    success: GitHook
  })
    .annotate(OpenApi.Identifier, "repoEditGitHook")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.delete("deleteGitHook", "/repos/:owner/:repo/hooks/git/:id", {
    params: { ...ownerRepo, id: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteGitHook")
    .annotate(Access, repoAdmin),
  HttpApiEndpoint.get("getSigningKey", "/signing-key.gpg", { success: Text }).annotate(
    OpenApi.Identifier,
    "getSigningKey"
  ),
  HttpApiEndpoint.get("getSSHSigningKey", "/signing-key.ssh", { success: Text }).annotate(
    OpenApi.Identifier,
    "getSSHSigningKey"
  ),
  HttpApiEndpoint.get("repoSigningKey", "/repos/:owner/:repo/signing-key.gpg", { params: ownerRepo, success: Text })
    .annotate(OpenApi.Identifier, "repoSigningKey")
    .annotate(Access, repoOpen)
) {}

// Commits, branches, tags and archives of a repository: Forgejo's swagger `Commit`, `Branch`,
// `Tag`. Readable by anyone who may see the repository; branches and tags are created, renamed and
// deleted by its writers (`repository` scope: read for GET, write otherwise).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { Access } from "../http/Access.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { User } from "../users/Schema.ts"

/** Reads of git data: Forgejo's `reqRepoReader(unit.TypeCode)` (Assignment.ts). */
const repoOpen = { signedIn: false, scopes: ["repository"], repo: { role: "read", unit: "code" } } as const
/** Branch and tag changes: Forgejo's `reqRepoWriter(unit.TypeCode)` and `mustNotBeArchived` (Assignment.ts). */
const repoWrite = {
  signedIn: true,
  scopes: ["repository"],
  repo: { role: "write", unit: "code", changes: "content" }
} as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }
/** Forgejo's boolean switches of the commit routes (`stat`, `verification`, `files`); absent = true. */
const CommitDetailsQuery = {
  stat: Schema.optional(Schema.String),
  verification: Schema.optional(Schema.String),
  files: Schema.optional(Schema.String)
}

// Branch and tag names may contain `/` and come either percent-encoded (`feature%2Fx`, as the Go
// SDK sends them) or as they are (`feature/x`, as Forgejo's `/*` routes take them). The router
// registers a `/*` path also without its `/*`, where it would collide with the list routes, so
// each documented `/{name}` route has an undocumented twin `/{name}/{rest}/*` for names of two or
// more segments; the handlers join the pieces back together.
const deep = { rest: Schema.String, "*": Schema.optional(Schema.String) }
const branchDeepParams = { ...ownerRepo, branch: Schema.String, ...deep }
const tagDeepParams = { ...ownerRepo, tag: Schema.String, ...deep }

export const CommitUser = Schema.Struct({ name: Schema.String, email: Schema.String, date: Timestamp })
export const CommitMeta = Schema.Struct({ url: Schema.String, sha: Schema.String, created: Timestamp })
export const PayloadUser = Schema.Struct({ name: Schema.String, email: Schema.String, username: Schema.String })
export const Verification = Schema.Struct({
  verified: Schema.Boolean,
  reason: Schema.String,
  signature: Schema.String,
  signer: Schema.NullOr(PayloadUser),
  payload: Schema.String
})

export const CommitStats = Schema.Struct({ total: Schema.Number, additions: Schema.Number, deletions: Schema.Number })
export const CommitAffectedFiles = Schema.Struct({ filename: Schema.String, status: Schema.String })

/** The verification of a commit without a signature. */
export const UNSIGNED_VERIFICATION = {
  verified: false,
  reason: "gpg.error.not_signed_commit",
  signature: "",
  signer: null,
  payload: ""
}

export const Commit = Schema.Struct({
  url: Schema.String,
  sha: Schema.String,
  created: Timestamp,
  html_url: Schema.String,
  commit: Schema.Struct({
    url: Schema.String,
    author: CommitUser,
    committer: CommitUser,
    message: Schema.String,
    tree: CommitMeta,
    // null when the caller turned it off (`verification=false`), as Forgejo's nil pointer
    verification: Schema.NullOr(Verification)
  }),
  author: Schema.NullOr(User),
  committer: Schema.NullOr(User),
  parents: Schema.Array(CommitMeta),
  files: Schema.NullOr(Schema.Array(CommitAffectedFiles)),
  stats: Schema.NullOr(CommitStats)
})
export type Commit = typeof Commit.Type

export const PayloadCommit = Schema.Struct({
  id: Schema.String,
  message: Schema.String,
  url: Schema.String,
  author: PayloadUser,
  committer: PayloadUser,
  verification: Verification,
  timestamp: Timestamp,
  added: Schema.NullOr(Schema.Array(Schema.String)),
  removed: Schema.NullOr(Schema.Array(Schema.String)),
  modified: Schema.NullOr(Schema.Array(Schema.String))
})

export const Branch = Schema.Struct({
  name: Schema.String,
  commit: PayloadCommit,
  protected: Schema.Boolean,
  required_approvals: Schema.Number,
  enable_status_check: Schema.Boolean,
  status_check_contexts: Schema.Array(Schema.String),
  user_can_push: Schema.Boolean,
  user_can_merge: Schema.Boolean,
  effective_branch_protection_name: Schema.String
})
export type Branch = typeof Branch.Type

export const Tag = Schema.Struct({
  name: Schema.String,
  message: Schema.String,
  id: Schema.String,
  commit: CommitMeta,
  zipball_url: Schema.String,
  tarball_url: Schema.String,
  archive_download_count: Schema.Struct({ zip: Schema.Number, tar_gz: Schema.Number })
})
export type Tag = typeof Tag.Type

export const CreateBranchRepoOption = Schema.Struct({
  new_branch_name: BoundedName("BranchName", NAME_MAX.branch),
  /** Deprecated by Forgejo in favour of `old_ref_name`. */
  old_branch_name: Schema.optionalKey(BoundedName("OldBranchName", NAME_MAX.branch)),
  old_ref_name: Schema.optionalKey(BoundedName("OldRefName", NAME_MAX.branch))
})
export const UpdateBranchRepoOption = Schema.Struct({ name: BoundedName("Name", NAME_MAX.branch) })
export const CreateTagOption = Schema.Struct({
  tag_name: BoundedName("TagName", NAME_MAX.tag),
  message: Schema.optionalKey(Schema.String),
  target: Schema.optionalKey(Schema.String)
})

export class BranchesApi extends HttpApiGroup.make("branches").add(
  HttpApiEndpoint.get("listCommits", "/repos/:owner/:repo/commits", {
    params: ownerRepo,
    query: {
      ...PageQuery,
      ...CommitDetailsQuery,
      sha: Schema.optional(Schema.String),
      path: Schema.optional(Schema.String),
      not: Schema.optional(Schema.String)
    },
    success: Schema.Array(Commit)
  })
    .annotate(OpenApi.Identifier, "repoGetAllCommits")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getCommitByRef", "/repos/:owner/:repo/commits/:ref", {
    params: { ...ownerRepo, ref: Schema.String },
    query: CommitDetailsQuery,
    success: Commit
  })
    .annotate(OpenApi.Identifier, "repoGetCommitByRef")
    .annotate(Access, repoOpen),
  // A ref with `/` (`feature/x`), unencoded: the twin of the route above (see `deep` below).
  HttpApiEndpoint.get("getCommitByRefDeep", "/repos/:owner/:repo/commits/:ref/:rest/*", {
    params: { ...ownerRepo, ref: Schema.String, ...deep },
    query: CommitDetailsQuery,
    success: Commit
  })
    .annotate(Access, repoOpen)
    .annotate(OpenApi.Exclude, true),
  // Forgejo's GetSingleCommit: a commit id or any ref name git would resolve (branch, tag, `refs/…`).
  HttpApiEndpoint.get("getCommit", "/repos/:owner/:repo/git/commits/:sha", {
    params: { ...ownerRepo, sha: Schema.String },
    query: CommitDetailsQuery,
    success: Commit
  })
    .annotate(OpenApi.Identifier, "repoGetSingleCommit")
    .annotate(Access, repoOpen),
  // A ref with `/` (`feature/x`), unencoded, as the SDKs send it: the twin of the route above.
  HttpApiEndpoint.get("getCommitDeep", "/repos/:owner/:repo/git/commits/:sha/:rest/*", {
    params: { ...ownerRepo, sha: Schema.String, ...deep },
    query: CommitDetailsQuery,
    success: Commit
  })
    .annotate(Access, repoOpen)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.get("listBranches", "/repos/:owner/:repo/branches", {
    params: ownerRepo,
    query: PageQuery,
    success: Schema.Array(Branch)
  })
    .annotate(OpenApi.Identifier, "repoListBranches")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.post("createBranch", "/repos/:owner/:repo/branches", {
    params: ownerRepo,
    payload: CreateBranchRepoOption,
    success: Branch.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateBranch")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getBranch", "/repos/:owner/:repo/branches/:branch", {
    params: { ...ownerRepo, branch: Schema.String },
    success: Branch
  })
    .annotate(OpenApi.Identifier, "repoGetBranch")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getBranchDeep", "/repos/:owner/:repo/branches/:branch/:rest/*", {
    params: branchDeepParams,
    success: Branch
  })
    .annotate(Access, repoOpen)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.delete("deleteBranch", "/repos/:owner/:repo/branches/:branch", {
    params: { ...ownerRepo, branch: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteBranch")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("deleteBranchDeep", "/repos/:owner/:repo/branches/:branch/:rest/*", {
    params: branchDeepParams,
    success: HttpApiSchema.NoContent
  })
    .annotate(Access, repoWrite)
    .annotate(OpenApi.Exclude, true),
  // Renames the branch (Forgejo's repoUpdateBranch).
  HttpApiEndpoint.patch("updateBranch", "/repos/:owner/:repo/branches/:branch", {
    params: { ...ownerRepo, branch: Schema.String },
    payload: UpdateBranchRepoOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoUpdateBranch")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.patch("updateBranchDeep", "/repos/:owner/:repo/branches/:branch/:rest/*", {
    params: branchDeepParams,
    payload: UpdateBranchRepoOption,
    success: HttpApiSchema.NoContent
  })
    .annotate(Access, repoWrite)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.get("listTags", "/repos/:owner/:repo/tags", {
    params: ownerRepo,
    query: PageQuery,
    success: Schema.Array(Tag)
  })
    .annotate(OpenApi.Identifier, "repoListTags")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.post("createTag", "/repos/:owner/:repo/tags", {
    params: ownerRepo,
    payload: CreateTagOption,
    success: Tag.pipe(HttpApiSchema.status(201))
  })
    .annotate(OpenApi.Identifier, "repoCreateTag")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.get("getTag", "/repos/:owner/:repo/tags/:tag", {
    params: { ...ownerRepo, tag: Schema.String },
    success: Tag
  })
    .annotate(OpenApi.Identifier, "repoGetTag")
    .annotate(Access, repoOpen),
  HttpApiEndpoint.get("getTagDeep", "/repos/:owner/:repo/tags/:tag/:rest/*", {
    params: tagDeepParams,
    success: Tag
  })
    .annotate(Access, repoOpen)
    .annotate(OpenApi.Exclude, true),
  HttpApiEndpoint.delete("deleteTag", "/repos/:owner/:repo/tags/:tag", {
    params: { ...ownerRepo, tag: Schema.String },
    success: HttpApiSchema.NoContent
  })
    .annotate(OpenApi.Identifier, "repoDeleteTag")
    .annotate(Access, repoWrite),
  HttpApiEndpoint.delete("deleteTagDeep", "/repos/:owner/:repo/tags/:tag/:rest/*", {
    params: tagDeepParams,
    success: HttpApiSchema.NoContent
  })
    .annotate(Access, repoWrite)
    .annotate(OpenApi.Exclude, true),
  // `{ref}.zip`, `{ref}.tar.gz` or `{ref}.bundle`, streamed straight from git.
  HttpApiEndpoint.get("getArchive", "/repos/:owner/:repo/archive/:archive", {
    params: { ...ownerRepo, archive: Schema.String },
    success: Schema.Uint8Array
  })
    .annotate(OpenApi.Identifier, "repoGetArchive")
    .annotate(Access, repoOpen),
  // The archive of a ref with `/` (`feature/x.zip`), unencoded, as Forgejo's `/archive/*` takes it.
  HttpApiEndpoint.get("getArchiveDeep", "/repos/:owner/:repo/archive/:archive/:rest/*", {
    params: { ...ownerRepo, archive: Schema.String, ...deep },
    success: Schema.Uint8Array
  })
    .annotate(Access, repoOpen)
    .annotate(OpenApi.Exclude, true)
) {}

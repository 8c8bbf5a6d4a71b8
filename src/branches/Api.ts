// Commits, branches and tags (reading) and archives of a repository: CONTRACT/swagger `Commit`,
// `Branch`, `Tag`. Readable by anyone who may see the repository (`repository` scope).
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Access } from "../http/Authentication.ts"
import { Timestamp } from "../http/Json.ts"
import { PageQuery } from "../http/Pagination.ts"
import { User } from "../users/Schema.ts"

const repoOpen = { signedIn: false, scopes: ["repository"] } as const
const ownerRepo = { owner: Schema.String, repo: Schema.String }

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
    verification: Verification
  }),
  author: Schema.NullOr(User),
  committer: Schema.NullOr(User),
  parents: Schema.Array(CommitMeta)
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

export class BranchesApi extends HttpApiGroup.make("branches")
  .add(
    HttpApiEndpoint.get("listCommits", "/repos/:owner/:repo/commits", {
      params: ownerRepo,
      query: { ...PageQuery, sha: Schema.optional(Schema.String), path: Schema.optional(Schema.String) },
      success: Schema.Array(Commit)
    }).annotate(Access, repoOpen),
    HttpApiEndpoint.get("getCommitByRef", "/repos/:owner/:repo/commits/:ref", {
      params: { ...ownerRepo, ref: Schema.String },
      success: Commit
    }).annotate(Access, repoOpen),
    HttpApiEndpoint.get("getCommit", "/repos/:owner/:repo/git/commits/:sha", {
      params: { ...ownerRepo, sha: Schema.String },
      success: Commit
    }).annotate(Access, repoOpen),
    HttpApiEndpoint.get("listBranches", "/repos/:owner/:repo/branches", {
      params: ownerRepo,
      query: PageQuery,
      success: Schema.Array(Branch)
    }).annotate(Access, repoOpen),
    // A `/*` path would also claim the list route in this router, so names with `/` come
    // percent-encoded (`feature%2Fx`), as Forgejo's Go SDK sends them.
    HttpApiEndpoint.get("getBranch", "/repos/:owner/:repo/branches/:branch", {
      params: { ...ownerRepo, branch: Schema.String },
      success: Branch
    }).annotate(Access, repoOpen),
    HttpApiEndpoint.get("listTags", "/repos/:owner/:repo/tags", {
      params: ownerRepo,
      query: PageQuery,
      success: Schema.Array(Tag)
    }).annotate(Access, repoOpen),
    HttpApiEndpoint.get("getTag", "/repos/:owner/:repo/tags/:tag", {
      params: { ...ownerRepo, tag: Schema.String },
      success: Tag
    }).annotate(Access, repoOpen),
    // `{ref}.zip`, `{ref}.tar.gz` or `{ref}.bundle`, streamed straight from git.
    HttpApiEndpoint.get("getArchive", "/repos/:owner/:repo/archive/:archive", {
      params: { ...ownerRepo, archive: Schema.String },
      success: Schema.Uint8Array
    }).annotate(Access, repoOpen)
  ) {}

// The Repository object of the API (Forgejo's `Repository`) and the creation options.
import { existsSync } from "node:fs"
import { join } from "node:path"
import { Schema } from "effect"
import { repoAvatarUrl } from "../avatars/Url.ts"
import type { SettingsShape } from "../config/Settings.ts"
import type { Principal } from "../http/Caller.ts"
import { formatTime, Id, Timestamp } from "../http/Json.ts"
import { atLeast } from "../lib/AccessMode.ts"
import { BoundedName, NAME_MAX } from "../lib/Names.ts"
import { Team } from "../orgs/Schema.ts"
import type { UserRow } from "../users/Repo.ts"
import { toApiUser, User } from "../users/Schema.ts"
import { wikiDir } from "../wiki/Location.ts"
import type { RepoAccess } from "./Policy.ts"
import type { RepoRow } from "./Repo.ts"

export const CreateRepoOption = Schema.Struct({
  name: BoundedName("Name", NAME_MAX.repo),
  description: Schema.optional(Schema.String),
  private: Schema.optional(Schema.Boolean),
  auto_init: Schema.optional(Schema.Boolean),
  template: Schema.optional(Schema.Boolean),
  issue_labels: Schema.optional(Schema.String),
  gitignores: Schema.optional(Schema.String),
  license: Schema.optional(Schema.String),
  readme: Schema.optional(Schema.String),
  default_branch: Schema.optional(BoundedName("DefaultBranch", NAME_MAX.branch)),
  trust_model: Schema.optional(Schema.String),
  object_format_name: Schema.optional(Schema.String)
}).annotate({ identifier: "CreateRepoOption" })
export type CreateRepoOption = typeof CreateRepoOption.Type

/** POST /repos/{template_owner}/{template_repo}/generate: the new repository and the template items to copy. */
export const GenerateRepoOption = Schema.Struct({
  owner: Schema.String,
  name: BoundedName("Name", NAME_MAX.repo),
  description: Schema.optional(Schema.String),
  default_branch: Schema.optional(Schema.String),
  private: Schema.optional(Schema.Boolean),
  git_content: Schema.optional(Schema.Boolean),
  topics: Schema.optional(Schema.Boolean),
  git_hooks: Schema.optional(Schema.Boolean),
  webhooks: Schema.optional(Schema.Boolean),
  avatar: Schema.optional(Schema.Boolean),
  labels: Schema.optional(Schema.Boolean),
  protected_branch: Schema.optional(Schema.Boolean)
}).annotate({ identifier: "GenerateRepoOption" })
export type GenerateRepoOption = typeof GenerateRepoOption.Type

export const Permission = Schema.Struct({
  admin: Schema.Boolean,
  push: Schema.Boolean,
  pull: Schema.Boolean
}).annotate({ identifier: "Permission" })

const InternalTracker = Schema.Struct({
  enable_time_tracker: Schema.Boolean,
  allow_only_contributors_to_track_time: Schema.Boolean,
  enable_issue_dependencies: Schema.Boolean
})

/** A transfer waiting for its recipient (Forgejo's RepoTransfer). */
export const RepoTransfer = Schema.Struct({
  doer: User,
  recipient: User,
  teams: Schema.NullOr(Schema.Array(Team))
}).annotate({ identifier: "RepoTransfer" })
export type RepoTransfer = typeof RepoTransfer.Type

// A fork's `parent` is its source as the viewer sees it, whose own `parent` is null (as Forgejo
// nests it); `repo_transfer` is the pending transfer, if any.
const repositoryFields = {
  id: Id,
  owner: User,
  name: Schema.String,
  full_name: Schema.String,
  description: Schema.String,
  empty: Schema.Boolean,
  private: Schema.Boolean,
  fork: Schema.Boolean,
  template: Schema.Boolean,
  mirror: Schema.Boolean,
  size: Schema.Int,
  language: Schema.String,
  languages_url: Schema.String,
  html_url: Schema.String,
  url: Schema.String,
  link: Schema.String,
  ssh_url: Schema.String,
  clone_url: Schema.String,
  original_url: Schema.String,
  website: Schema.String,
  stars_count: Schema.Int,
  forks_count: Schema.Int,
  watchers_count: Schema.Int,
  open_issues_count: Schema.Int,
  open_pr_counter: Schema.Int,
  release_counter: Schema.Int,
  default_branch: Schema.String,
  archived: Schema.Boolean,
  created_at: Timestamp,
  updated_at: Timestamp,
  archived_at: Timestamp,
  permissions: Permission,
  has_issues: Schema.Boolean,
  internal_tracker: InternalTracker,
  has_wiki: Schema.Boolean,
  has_wiki_contents: Schema.Boolean,
  wiki_branch: Schema.String,
  wiki_ssh_url: Schema.String,
  wiki_clone_url: Schema.String,
  globally_editable_wiki: Schema.Boolean,
  has_pull_requests: Schema.Boolean,
  has_projects: Schema.Boolean,
  has_releases: Schema.Boolean,
  has_packages: Schema.Boolean,
  has_actions: Schema.Boolean,
  ignore_whitespace_conflicts: Schema.Boolean,
  allow_merge_commits: Schema.Boolean,
  allow_rebase: Schema.Boolean,
  allow_rebase_explicit: Schema.Boolean,
  allow_squash_merge: Schema.Boolean,
  allow_fast_forward_only_merge: Schema.Boolean,
  allow_rebase_update: Schema.Boolean,
  default_delete_branch_after_merge: Schema.Boolean,
  default_merge_style: Schema.String,
  default_allow_maintainer_edit: Schema.Boolean,
  default_update_style: Schema.String,
  /**
   * Hearth's: this repository's own RETARGET_CHILDREN_ON_MERGE (named after that
   * `[repository.pull-request]` key, as `default_merge_style` is after DEFAULT_MERGE_STYLE).
   */
  retarget_children_on_merge: Schema.Boolean,
  avatar_url: Schema.String,
  internal: Schema.Boolean,
  mirror_interval: Schema.String,
  object_format_name: Schema.String,
  mirror_updated: Timestamp,
  repo_transfer: Schema.NullOr(RepoTransfer),
  topics: Schema.Array(Schema.String)
}

const ParentRepository = Schema.Struct({ ...repositoryFields, parent: Schema.Null })
// (A parent's pending transfer is not shown: Forgejo leaves it out of nested repositories too.)

export const Repository = Schema.Struct({ ...repositoryFields, parent: Schema.NullOr(ParentRepository) }).annotate({
  identifier: "Repository"
})
export type Repository = typeof Repository.Type

/** PATCH /repos/{o}/{r}; fields absent are left alone. Tracker and wiki settings are not kept yet. */
export const EditRepoOption = Schema.Struct({
  name: Schema.optional(BoundedName("Name", NAME_MAX.repo)),
  description: Schema.optional(Schema.String),
  website: Schema.optional(Schema.String),
  private: Schema.optional(Schema.Boolean),
  template: Schema.optional(Schema.Boolean),
  default_branch: Schema.optional(Schema.String),
  archived: Schema.optional(Schema.Boolean),
  enable_prune: Schema.optional(Schema.Boolean),
  mirror_interval: Schema.optional(Schema.String),
  has_issues: Schema.optional(Schema.Boolean),
  has_wiki: Schema.optional(Schema.Boolean),
  has_pull_requests: Schema.optional(Schema.Boolean),
  has_projects: Schema.optional(Schema.Boolean),
  has_releases: Schema.optional(Schema.Boolean),
  has_packages: Schema.optional(Schema.Boolean),
  has_actions: Schema.optional(Schema.Boolean),
  ignore_whitespace_conflicts: Schema.optional(Schema.Boolean),
  allow_merge_commits: Schema.optional(Schema.Boolean),
  allow_rebase: Schema.optional(Schema.Boolean),
  allow_rebase_explicit: Schema.optional(Schema.Boolean),
  allow_squash_merge: Schema.optional(Schema.Boolean),
  allow_fast_forward_only_merge: Schema.optional(Schema.Boolean),
  allow_manual_merge: Schema.optional(Schema.Boolean),
  autodetect_manual_merge: Schema.optional(Schema.Boolean),
  allow_rebase_update: Schema.optional(Schema.Boolean),
  default_delete_branch_after_merge: Schema.optional(Schema.Boolean),
  default_merge_style: Schema.optional(Schema.String),
  default_update_style: Schema.optional(Schema.String),
  default_allow_maintainer_edit: Schema.optional(Schema.Boolean),
  retarget_children_on_merge: Schema.optional(Schema.Boolean),
  /** Fields left out keep their value. */
  internal_tracker: Schema.optional(
    Schema.Struct({
      enable_time_tracker: Schema.optional(Schema.Boolean),
      allow_only_contributors_to_track_time: Schema.optional(Schema.Boolean),
      enable_issue_dependencies: Schema.optional(Schema.Boolean)
    })
  )
}).annotate({ identifier: "EditRepoOption" })
export type EditRepoOption = typeof EditRepoOption.Type

export const AddCollaboratorOption = Schema.Struct({
  permission: Schema.optional(Schema.String)
}).annotate({ identifier: "AddCollaboratorOption" })

export const RepoCollaboratorPermission = Schema.Struct({
  permission: Schema.String,
  role_name: Schema.String,
  user: User
}).annotate({ identifier: "RepoCollaboratorPermission" })

/** `GET /repos/search` answers `{ok, data}`; a failed search is `{ok: false, error}` with 500. */
export const SearchResults = Schema.Struct({
  ok: Schema.Boolean,
  data: Schema.Array(Repository)
}).annotate({ identifier: "SearchResults" })

const pathPart = (s: string) => encodeURIComponent(s)

/**
 * Forgejo's ComposeSSHCloneURL. Hearth has no SSH_DOMAIN / SSH_USER keys yet: the domain is
 * [server] DOMAIN and the user "git", Forgejo's usual RUN_USER.
 */
export const sshUrl = (settings: SettingsShape, owner: string, name: string) => {
  const host = settings.server.DOMAIN.includes(":") ? `[${settings.server.DOMAIN}]` : settings.server.DOMAIN
  const path = `${pathPart(owner)}/${pathPart(name)}.git`
  const user = settings.server.BUILTIN_SSH_SERVER_USER
  return settings.server.SSH_PORT === 22
    ? `${user}@${host}:${path}`
    : `ssh://${user}@${host}:${settings.server.SSH_PORT}/${path}`
}

/** The internal tracker's settings in effect: the repository's own, else the `[service]` defaults. */
export const trackerSettings = (settings: SettingsShape, repo: Pick<RepoRow, "tracker">) => ({
  enable_time_tracker: settings.service.ENABLE_TIMETRACKING
    ? (repo.tracker.enableTimeTracker ?? settings.service.DEFAULT_ENABLE_TIMETRACKING)
    : false,
  allow_only_contributors_to_track_time:
    repo.tracker.allowOnlyContributorsToTrackTime ?? settings.service.DEFAULT_ALLOW_ONLY_CONTRIBUTORS_TO_TRACK_TIME,
  enable_issue_dependencies: repo.tracker.enableIssueDependencies ?? settings.service.DEFAULT_ENABLE_DEPENDENCIES
})

/** A repository as a viewer sees it, with the viewer's permissions. */
export const toApiRepo = (
  settings: SettingsShape,
  repo: RepoRow,
  owner: UserRow,
  access: RepoAccess,
  viewer: Principal | undefined,
  extras: {
    /** A fork's source, already converted for the same viewer. */
    readonly parent?: Repository | null
    /** The transfer waiting for its recipient. */
    readonly transfer?: RepoTransfer | null
    /** A pull mirror's last successful sync. */
    readonly mirrorUpdated?: Date | null
  } = {}
): Repository => {
  const parent = extras.parent ?? null
  const root = settings.server.ROOT_URL
  const path = `${pathPart(owner.name)}/${pathPart(repo.name)}`
  const url = `${root}api/v1/repos/${path}`
  const wikiPath = `${pathPart(owner.name)}/${pathPart(repo.name)}.wiki`
  const pulls = repo.units.hasPullRequests ? repo.pulls : undefined
  return {
    id: repo.id,
    owner: toApiUser(settings, owner, viewer),
    name: repo.name,
    full_name: `${owner.name}/${repo.name}`,
    description: repo.description,
    empty: repo.isEmpty,
    private: repo.isPrivate,
    fork: repo.isFork,
    template: repo.isTemplate,
    parent: parent === null ? null : { ...parent, parent: null, repo_transfer: null },
    mirror: repo.isMirror,
    size: Math.floor(repo.size / 1024),
    language: repo.primaryLanguage,
    languages_url: `${url}/languages`,
    html_url: `${root}${path}`,
    url,
    link: "",
    ssh_url: sshUrl(settings, owner.name, repo.name),
    clone_url: `${root}${path}.git`,
    original_url: repo.originalUrl,
    website: repo.website,
    stars_count: repo.numStars,
    forks_count: repo.numForks,
    watchers_count: repo.numWatches,
    open_issues_count: repo.numIssues - repo.numClosedIssues,
    open_pr_counter: repo.numPulls - repo.numClosedPulls,
    release_counter: repo.numReleases,
    default_branch: repo.defaultBranch,
    archived: repo.isArchived,
    created_at: formatTime(repo.createdAt),
    updated_at: formatTime(repo.updatedAt),
    archived_at: formatTime(repo.archivedAt ?? new Date(0)),
    permissions: {
      admin: atLeast(access.mode, "admin"),
      push: atLeast(access.code, "write"),
      pull: atLeast(access.code, "read")
    },
    has_issues: repo.units.hasIssues,
    internal_tracker: trackerSettings(settings, repo),
    has_wiki: repo.units.hasWiki,
    // Forgejo's `HasWiki()`: the wiki repository exists (made by its first page or clone).
    has_wiki_contents: existsSync(wikiDir(join(settings.repository.ROOT, owner.lowerName, `${repo.lowerName}.git`))),
    wiki_branch: repo.defaultBranch,
    wiki_ssh_url: sshUrl(settings, owner.name, `${repo.name}.wiki`),
    wiki_clone_url: `${root}${wikiPath}.git`,
    globally_editable_wiki: false,
    has_pull_requests: repo.units.hasPullRequests,
    has_projects: repo.units.hasProjects,
    has_releases: repo.units.hasReleases,
    has_packages: repo.units.hasPackages,
    has_actions: repo.units.hasActions,
    // Without the pulls unit Forgejo shows no merge settings (convert.ToRepo): all off, style "merge".
    ignore_whitespace_conflicts: pulls?.ignoreWhitespaceConflicts ?? false,
    allow_merge_commits: pulls?.allowMerge ?? false,
    allow_rebase: pulls?.allowRebase ?? false,
    allow_rebase_explicit: pulls?.allowRebaseMerge ?? false,
    allow_squash_merge: pulls?.allowSquash ?? false,
    allow_fast_forward_only_merge: pulls?.allowFastForwardOnly ?? false,
    allow_rebase_update: pulls?.allowRebaseUpdate ?? false,
    default_delete_branch_after_merge: pulls?.defaultDeleteBranchAfterMerge ?? false,
    default_merge_style: pulls?.defaultMergeStyle ?? "merge",
    default_allow_maintainer_edit: pulls?.defaultAllowMaintainerEdit ?? false,
    default_update_style: pulls?.defaultUpdateStyle ?? "merge",
    retarget_children_on_merge: pulls?.retargetChildrenOnMerge ?? false,
    avatar_url: repoAvatarUrl(settings, repo),
    // Public, but its owner is private: only the owner's viewers reach it.
    internal: !repo.isPrivate && owner.visibility === "private",
    mirror_interval: repo.mirrorInterval,
    object_format_name: repo.objectFormatName,
    mirror_updated: formatTime(extras.mirrorUpdated ?? new Date(0)),
    repo_transfer: extras.transfer ?? null,
    topics: repo.topics
  }
}

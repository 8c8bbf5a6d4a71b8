// Every event Hearth publishes (src/events/Hub.ts): one typed event for each change that matters to
// someone else, named after Forgejo's notifier methods (services/notify/notifier.go); the
// webhook event and action each becomes (Forgejo's services/webhook/notifier.go) is noted with it.
// An event is plain data — ids and names, never a database row — so a durable consumer can keep
// it in the delivery queue and read it back after a restart; a consumer that needs more reads the
// rows by id when it runs (and finds them gone when the repository was deleted meanwhile).
//
// | event                        | when                                                  | webhook               |
// |------------------------------|-------------------------------------------------------|-----------------------|
// | CreateRepository             | a repository is made (own or an organisation's)      | repository / created  |
// | MigrateRepository            | a migration or pull mirror is made (its first fetch)   | repository / created  |
// | ForkRepository               | a fork is made (`source` is what it forks)             | fork                  |
// | DeleteRepository             | a repository is deleted                               | repository / deleted  |
// | RenameRepository             | its name changes (`oldName`)                          | (none in Forgejo)     |
// | TransferRepository           | it gets a new owner (`oldOwnerName`)                  | (none in Forgejo)     |
// | ChangeRepositoryVisibility   | it becomes private or public (`private`)              | (none in Forgejo)     |
// | ArchiveRepository            | it is archived or unarchived (`archived`)             | (none in Forgejo)     |
// | PushCommits                  | refs moved: a push over smart HTTP or SSH, the contents, branch and tag APIs, a pull mirror's sync (`via`) | push, create, delete |
//
// PushCommits carries every ref the change moved as `{ref, before, after}` (full ref names, 40-hex
// ids; all zeros for `before` when the ref was created, for `after` when it was deleted) — Forgejo's
// PushCommits, CreateRef and DeleteRef, and their Sync… forms for mirrors (`via: "mirror"`).
// | Issues                       | an issue changed (`action`; Forgejo's NewIssue, IssueChangeStatus, …Title, …Content, …Assignee, …Labels, …Milestone) | issues / opened, edited, closed, reopened; issue_assign / assigned, unassigned; issue_label / label_updated, label_cleared; issue_milestone / milestoned, demilestoned (pull_request* for a pull request) |
// | IssueComment                 | a comment was created, edited or deleted (`action`)   | issue_comment / created, edited, deleted (pull_request_comment) |
// | CommitStatus                 | a commit status was posted (`sha`, `context`, `state`, `index`) | status (Forgejo's `HookEventStatus`) |
// | Wiki                         | a wiki page was created, edited, renamed or deleted (`action`, `page`: its web path, `oldPage` when renamed, `comment`: the commit message), by the API or a git push to the wiki (`via`) | wiki / created, edited, renamed, deleted (Forgejo sends `edited` for a rename and nothing for a git push) |
// | PullRequestSynchronized      | a push moved a pull request's head (`before`, `after`) | pull_request_sync / synchronized |
// | PullRequestReview            | a review was submitted (`review.type` approved, rejected or comment; never a pending one) | pull_request_review_approved / _rejected / _comment, action reviewed |
// | PullRequestReviewRequest     | a user was requested (or no longer) to review (`requested`), each member of a requested team too | pull_request_review_request / review_requested, review_request_removed |
// | PullAutoMergeFailed          | a scheduled merge failed and was cancelled (`doer`: its scheduler, who is told) | (none) |
// | PullRequestReviewDismiss     | a review was dismissed (by an admin, or a push with `dismiss_stale_approvals`) | (none in Forgejo) |
// | Release                      | a release was published, updated or deleted (`action`; Forgejo's NewRelease, UpdateRelease, DeleteRelease; never for a draft) with the release as it then was (`release`) | release / published, updated, deleted |
// | RenameUser                   | an account (user or organization) got a new name (`user`: its id and new name, `oldName`); no repository (`repo` absent) | (none in Forgejo) |
// | Package                      | a package version was created or deleted (`action`; Forgejo's PackageCreate, PackageDelete; not for cleanup or purges) with Forgejo's Package and sender objects as the doer saw them then (`package`, `sender`); `repo` is the linked repository, or id 0 with the package's owner when unlinked (the owner's and system hooks hear it) | package / created, deleted |
//
// A pull request is an issue: its opening, edits (`changes.ref.from` when its base branch changed),
// closing, reopening, labels, milestone and assignees are `Issues` events (`issue.isPull`); its
// merge is `Issues` / `closed` with `merged: true` (Forgejo's MergePullRequest: webhook
// pull_request / closed with `pull_request.merged`).
//
// Later issues add pulls, reviews, releases, wiki and packages here.
import { Schema } from "effect"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"

/** The repository an event is about, as it was when the event happened. */
export const RepositoryRef = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  ownerId: Schema.Number,
  ownerName: Schema.String,
  private: Schema.Boolean
})
export type RepositoryRef = typeof RepositoryRef.Type

/** Who made the change (the pusher, the API caller; for a mirror sync, the repository's owner). */
export const Doer = Schema.Struct({ id: Schema.Number, name: Schema.String })
export type Doer = typeof Doer.Type

export const RefUpdate = Schema.Struct({ ref: Schema.String, before: Schema.String, after: Schema.String })
export type RefUpdate = typeof RefUpdate.Type

const about = { repo: RepositoryRef, doer: Doer }

export const CreateRepository = Schema.TaggedStruct("CreateRepository", about)
export const MigrateRepository = Schema.TaggedStruct("MigrateRepository", about)
export const ForkRepository = Schema.TaggedStruct("ForkRepository", {
  ...about,
  /** The forked repository: its id and `owner/name`. */
  source: Schema.Struct({ id: Schema.Number, fullName: Schema.String })
})
export const DeleteRepository = Schema.TaggedStruct("DeleteRepository", about)
export const RenameRepository = Schema.TaggedStruct("RenameRepository", { ...about, oldName: Schema.String })
export const TransferRepository = Schema.TaggedStruct("TransferRepository", {
  ...about,
  oldOwnerName: Schema.String
})
export const ChangeRepositoryVisibility = Schema.TaggedStruct("ChangeRepositoryVisibility", about)
export const ArchiveRepository = Schema.TaggedStruct("ArchiveRepository", { ...about, archived: Schema.Boolean })
export const PushCommits = Schema.TaggedStruct("PushCommits", {
  ...about,
  via: Schema.Literals(["http", "ssh", "api", "mirror"]),
  refs: Schema.Array(RefUpdate)
})

/** The issue (or pull request) an event is about. */
export const IssueRef = Schema.Struct({ id: Schema.Number, index: Schema.Number, isPull: Schema.Boolean })
export type IssueRef = typeof IssueRef.Type

/** What an edit changed, with the old value (Forgejo's `changes.{title,body}.from`). */
const Changes = Schema.Struct({
  title: Schema.optionalKey(Schema.Struct({ from: Schema.String })),
  body: Schema.optionalKey(Schema.Struct({ from: Schema.String })),
  /** A pull request's base branch. */
  ref: Schema.optionalKey(Schema.Struct({ from: Schema.String }))
})

export const IssueAction = Schema.Literals([
  "opened",
  "edited",
  "closed",
  "reopened",
  "assigned",
  "unassigned",
  "label_updated",
  "label_cleared",
  "milestoned",
  "demilestoned"
])
export type IssueAction = typeof IssueAction.Type

export const Issues = Schema.TaggedStruct("Issues", {
  ...about,
  issue: IssueRef,
  action: IssueAction,
  changes: Schema.optionalKey(Changes),
  /** `assigned`/`unassigned`: whom. */
  assignee: Schema.optionalKey(Doer),
  /** `milestoned`/`demilestoned`: which milestone. */
  milestoneId: Schema.optionalKey(Schema.Number),
  /** `closed`: a pull request closed by its merge. */
  merged: Schema.optionalKey(Schema.Boolean),
  /** `closed` and merged: by its schedule (Forgejo's AutoMergePullRequest, not MergePullRequest). */
  autoMerged: Schema.optionalKey(Schema.Boolean)
})

export const IssueComment = Schema.TaggedStruct("IssueComment", {
  ...about,
  issue: IssueRef,
  comment: Schema.Struct({ id: Schema.Number }),
  action: Schema.Literals(["created", "edited", "deleted"]),
  changes: Schema.optionalKey(Changes)
})

export const CommitStatus = Schema.TaggedStruct("CommitStatus", {
  ...about,
  sha: Schema.String,
  context: Schema.String,
  state: Schema.String,
  /** The status's number among the commit's statuses (the CommitStatus JSON's `id`). */
  index: Schema.Number
})

export const WikiAction = Schema.Literals(["created", "edited", "renamed", "deleted"])
export type WikiAction = typeof WikiAction.Type

export const Wiki = Schema.TaggedStruct("Wiki", {
  ...about,
  action: WikiAction,
  /** The page's web path (Forgejo's `page`: what follows `/wiki/` in its URL). */
  page: Schema.String,
  /** `renamed`: the web path it had. */
  oldPage: Schema.optionalKey(Schema.String),
  /** The commit message (Forgejo's `comment`). */
  comment: Schema.String,
  via: Schema.Literals(["api", "http", "ssh"])
})

export const PullRequestSynchronized = Schema.TaggedStruct("PullRequestSynchronized", {
  ...about,
  issue: IssueRef,
  /** The head commit before and after the push. */
  before: Schema.String,
  after: Schema.String
})

/** A submitted review: its id, Forgejo's review type name and the timeline comment it made. */
export const PullRequestReview = Schema.TaggedStruct("PullRequestReview", {
  ...about,
  issue: IssueRef,
  review: Schema.Struct({
    id: Schema.Number,
    type: Schema.Literals(["approved", "rejected", "comment"]),
    content: Schema.String
  }),
  commentId: Schema.Number,
  /** The review's inline comments (their mentions are notified each). */
  codeCommentIds: Schema.optionalKey(Schema.Array(Schema.Number))
})

export const PullRequestReviewRequest = Schema.TaggedStruct("PullRequestReviewRequest", {
  ...about,
  issue: IssueRef,
  reviewer: Doer,
  /** false when the request was taken back. */
  requested: Schema.Boolean,
  commentId: Schema.Number
})

/** A scheduled merge that failed, cancelled with the timeline entry `commentId` in its scheduler's name. */
export const PullAutoMergeFailed = Schema.TaggedStruct("PullAutoMergeFailed", {
  ...about,
  issue: IssueRef,
  commentId: Schema.Number
})

export const PullRequestReviewDismiss = Schema.TaggedStruct("PullRequestReviewDismiss", {
  ...about,
  issue: IssueRef,
  /** `reviewerId`: the account whose review it was (none for a team's request). */
  review: Schema.Struct({ id: Schema.Number, reviewerId: Schema.optionalKey(Schema.Number) }),
  commentId: Schema.Number
})

export const ReleaseAction = Schema.Literals(["published", "updated", "deleted"])
export type ReleaseAction = typeof ReleaseAction.Type

/** A release as it was when the event happened (a deleted one is described from this). */
export const ReleaseSnapshot = Schema.Struct({
  id: Schema.Number,
  tagName: Schema.String,
  target: Schema.String,
  title: Schema.String,
  note: Schema.String,
  isDraft: Schema.Boolean,
  isPrerelease: Schema.Boolean,
  hideArchiveLinks: Schema.Boolean,
  publisherId: Schema.NullOr(Schema.Number),
  /** ISO 8601. */
  createdAt: Schema.String
})
export type ReleaseSnapshot = typeof ReleaseSnapshot.Type

export const Release = Schema.TaggedStruct("Release", { ...about, action: ReleaseAction, release: ReleaseSnapshot })

export const PackageAction = Schema.Literals(["created", "deleted"])
export type PackageAction = typeof PackageAction.Type

export const Package = Schema.TaggedStruct("Package", {
  ...about,
  action: PackageAction,
  /** Forgejo's Package JSON as the doer saw it (a deleted version cannot be read back later). */
  package: Schema.Record(Schema.String, Schema.Unknown),
  sender: Schema.Record(Schema.String, Schema.Unknown)
})

/** An account renamed (Forgejo's user_service.RenameUser): about an account, so no `repo`. */
export const RenameUser = Schema.TaggedStruct("RenameUser", {
  user: Doer,
  oldName: Schema.String,
  isOrganization: Schema.Boolean,
  doer: Doer
})

export const Event = Schema.Union([
  CreateRepository,
  MigrateRepository,
  ForkRepository,
  DeleteRepository,
  RenameRepository,
  TransferRepository,
  ChangeRepositoryVisibility,
  ArchiveRepository,
  PushCommits,
  Issues,
  IssueComment,
  CommitStatus,
  Wiki,
  PullRequestSynchronized,
  PullRequestReview,
  PullRequestReviewRequest,
  PullRequestReviewDismiss,
  PullAutoMergeFailed,
  Release,
  Package,
  RenameUser
])
export type Event = typeof Event.Type
export type EventName = Event["_tag"]
/** Every event but an account's (RenameUser): those about one repository. */
export type RepositoryEvent = Exclude<Event, { readonly _tag: "RenameUser" }>

/** An event read back from the delivery queue (checked: a damaged one fails here). */
export const decodeEvent = Schema.decodeUnknownSync(Event)

export const ZERO_ID = "0000000000000000000000000000000000000000"

export const repositoryRef = (owner: Pick<UserRow, "id" | "name">, repo: RepoRow): RepositoryRef => ({
  id: repo.id,
  name: repo.name,
  ownerId: owner.id,
  ownerName: owner.name,
  private: repo.isPrivate
})

export const doerOf = (user: Pick<UserRow, "id" | "name">): Doer => ({ id: user.id, name: user.name })

/** The repository and doer fields every event has. */
export const subject = (owner: Pick<UserRow, "id" | "name">, repo: RepoRow, doer: Pick<UserRow, "id" | "name">) => ({
  repo: repositoryRef(owner, repo),
  doer: doerOf(doer)
})

/** The PushCommits event of a push log (src/git/PushLog.ts): its header and the refs it moved; none for a damaged one. */
export const pushEvent = (header: unknown, refs: ReadonlyArray<RefUpdate>): RepositoryEvent | undefined => {
  if (refs.length === 0 || header === null || typeof header !== "object") return undefined
  // A push to a wiki is no push to the code repository: its pages' events come from src/wiki.
  if ("wiki" in header && header.wiki === true) return undefined
  // `refs/pull/{n}/head` moved by an AGit push is the pull request's (src/pulls/Agit.ts publishes
  // its events); pushes can move no other ref there (receive.hideRefs).
  const moved = refs.filter((r) => !r.ref.startsWith("refs/pull/"))
  if (moved.length === 0) return undefined
  try {
    const event = decodeEvent({ ...header, _tag: "PushCommits", refs: moved })
    return event._tag === "RenameUser" ? undefined : event
  } catch {
    return undefined
  }
}

/** The PushCommits event of refs moved by Hearth itself (the APIs, a mirror's sync). */
export const pushed = (
  owner: Pick<UserRow, "id" | "name">,
  repo: RepoRow,
  doer: Pick<UserRow, "id" | "name">,
  via: "api" | "mirror" | "http" | "ssh",
  refs: ReadonlyArray<RefUpdate>
): Event => ({ _tag: "PushCommits", ...subject(owner, repo, doer), via, refs })

/** What an edit of a repository's settings changed that others care about (name, visibility, archiving). */
export const edited = (
  owner: Pick<UserRow, "id" | "name">,
  before: RepoRow,
  after: RepoRow,
  doer: Pick<UserRow, "id" | "name">
): Array<Event> => {
  const about = subject(owner, after, doer)
  const events: Array<Event> = []
  if (after.name !== before.name) events.push({ _tag: "RenameRepository", ...about, oldName: before.name })
  if (after.isPrivate !== before.isPrivate) events.push({ _tag: "ChangeRepositoryVisibility", ...about })
  if (after.isArchived !== before.isArchived)
    events.push({ _tag: "ArchiveRepository", ...about, archived: after.isArchived })
  return events
}

/** A ref made at `sha`. */
export const created = (ref: string, sha: string): RefUpdate => ({ ref, before: ZERO_ID, after: sha })
/** A ref removed from `sha`. */
export const deleted = (ref: string, sha: string): RefUpdate => ({ ref, before: sha, after: ZERO_ID })

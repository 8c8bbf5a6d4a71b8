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
  body: Schema.optionalKey(Schema.Struct({ from: Schema.String }))
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
  milestoneId: Schema.optionalKey(Schema.Number)
})

export const IssueComment = Schema.TaggedStruct("IssueComment", {
  ...about,
  issue: IssueRef,
  comment: Schema.Struct({ id: Schema.Number }),
  action: Schema.Literals(["created", "edited", "deleted"]),
  changes: Schema.optionalKey(Changes)
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
  IssueComment
])
export type Event = typeof Event.Type
export type EventName = Event["_tag"]

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
export const pushEvent = (header: unknown, refs: ReadonlyArray<RefUpdate>): Event | undefined => {
  if (refs.length === 0 || header === null || typeof header !== "object") return undefined
  try {
    return decodeEvent({ ...header, _tag: "PushCommits", refs })
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

// The one table from the event hub's events (src/events/Events.ts) to webhook events: for each
// event, the hook event types it fires, whose hooks hear it, and how its payload is built. Adding
// an event to webhooks is one line here (and its payload builder in Payloads.ts).
// Forgejo's order for a push (services/repository/push.go): a new ref fires `create` then `push`;
// a deleted branch fires `delete`; a deleted tag a zero-commit `push` then `delete`.
import type { Effect } from "effect"
import type * as Events from "../events/Events.ts"
import { packagePayload } from "../packages/Hook.ts"
import type { EventType } from "./Kinds.ts"
import type { Payloads } from "./Payloads.ts"

export interface HookEvent {
  readonly type: EventType
  /** The repository whose hooks (and whose owner's) hear it; the event's own when absent. */
  readonly repoId?: number | undefined
  /** For push, create and delete: the ref the branch filter applies to. */
  readonly ref?: string | undefined
  readonly build: (payloads: Payloads) => Effect.Effect<object>
}

type Table = {
  readonly [K in Events.EventName]?: (event: Extract<Events.Event, { _tag: K }>) => ReadonlyArray<HookEvent>
}

const ZERO = "0000000000000000000000000000000000000000"

const refEvents = (event: Extract<Events.Event, { _tag: "PushCommits" }>, u: Events.RefUpdate): Array<HookEvent> => {
  const push: HookEvent = { type: "push", ref: u.ref, build: (p) => p.push(event, u) }
  const create: HookEvent = { type: "create", ref: u.ref, build: (p) => p.refEvent(event, u, "create") }
  const remove: HookEvent = { type: "delete", ref: u.ref, build: (p) => p.refEvent(event, u, "delete") }
  if (u.before === ZERO) return [create, push]
  if (u.after === ZERO) return u.ref.startsWith("refs/tags/") ? [push, remove] : [remove]
  return [push]
}

const ISSUE_TYPES: Record<Events.IssueAction, readonly [EventType, EventType]> = {
  opened: ["issues", "pull_request"],
  edited: ["issues", "pull_request"],
  closed: ["issues", "pull_request"],
  reopened: ["issues", "pull_request"],
  assigned: ["issue_assign", "pull_request_assign"],
  unassigned: ["issue_assign", "pull_request_assign"],
  label_updated: ["issue_label", "pull_request_label"],
  label_cleared: ["issue_label", "pull_request_label"],
  milestoned: ["issue_milestone", "pull_request_milestone"],
  demilestoned: ["issue_milestone", "pull_request_milestone"]
}

export const HOOK_EVENTS: Table = {
  CreateRepository: (e) => [{ type: "repository", build: (p) => p.repositoryEvent(e, "created") }],
  MigrateRepository: (e) => [{ type: "repository", build: (p) => p.repositoryEvent(e, "created") }],
  DeleteRepository: (e) => [{ type: "repository", build: (p) => p.repositoryEvent(e, "deleted") }],
  // Sent to the forked repository's hooks (Forgejo's ForkRepository notifier).
  ForkRepository: (e) => [{ type: "fork", repoId: e.source.id, build: (p) => p.fork(e) }],
  PushCommits: (e) => e.refs.flatMap((u) => refEvents(e, u)),
  Issues: (e) => [{ type: ISSUE_TYPES[e.action][e.issue.isPull ? 1 : 0], build: (p) => p.issues(e) }],
  IssueComment: (e) => [
    { type: e.issue.isPull ? "pull_request_comment" : "issue_comment", build: (p) => p.issueComment(e) }
  ],
  PullRequestSynchronized: (e) => [{ type: "pull_request_sync", build: (p) => p.pullSync(e) }],
  PullRequestReview: (e) => [{ type: `pull_request_review_${e.review.type}`, build: (p) => p.pullReview(e) }],
  PullRequestReviewRequest: (e) => [{ type: "pull_request_review_request", build: (p) => p.pullReviewRequest(e) }],
  Wiki: (e) => [{ type: "wiki", build: (p) => p.wiki(e) }],
  Release: (e) => [{ type: "release", build: (p) => p.release(e) }],
  CommitStatus: (e) => [{ type: "status", build: (p) => p.status(e) }],
  Package: (e) => [{ type: "package", build: () => packagePayload(e) }]
}

/** The hook events of a hub event (none for events webhooks do not hear). */
export const hookEventsOf = (event: Events.Event): ReadonlyArray<HookEvent> => {
  const entry = HOOK_EVENTS[event._tag] as ((e: Events.Event) => ReadonlyArray<HookEvent>) | undefined
  return entry === undefined ? [] : entry(event)
}

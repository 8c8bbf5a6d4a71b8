// Who may do what on the tracker (CONTRACT-ISSUES §1.3, Forgejo's `CanWriteIssuesOrPulls`,
// `IsAdmin`, routers/api/v1/repo/issue.go). The repository assignment has already decided that the
// caller may read the repository and its issues unit; these are the finer rules handlers and the
// service apply on top.
import type { Principal } from "../http/Caller.ts"
import { atLeast } from "../lib/AccessMode.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import type { IssueRow } from "./Repo.ts"

/** Forgejo's `CanWriteIssuesOrPulls`: labels, milestones, assignees, deadlines, others' comments. */
export const isWriter = (opened: OpenedRepository): boolean =>
  opened.caller !== undefined && atLeast(opened.access.mode, "write")

/** Forgejo's `IsAdmin()` on the repository (owner, org owner, admin collaborator or team, site admin). */
export const isRepoAdmin = (opened: OpenedRepository): boolean =>
  opened.caller !== undefined && atLeast(opened.access.mode, "admin")

export const isPoster = (caller: Principal | undefined, issue: Pick<IssueRow, "posterId">): boolean =>
  caller !== undefined && caller.user.id === issue.posterId

/** Title, body, ref and state: the poster or a writer (others get 403 with an empty body). */
export const mayEditIssue = (opened: OpenedRepository, issue: IssueRow): boolean =>
  isWriter(opened) || isPoster(opened.caller, issue)

/** On a locked issue only writers and site admins may comment (`You cannot comment on a locked issue.`). */
export const mayComment = (opened: OpenedRepository, issue: IssueRow): boolean =>
  !issue.isLocked || isWriter(opened) || opened.caller?.user.isAdmin === true

/** Forgejo's message when someone without admin rights sends `updated_at` (§4.2). */
export const UPDATED_AT_REFUSED = "user needs to have admin or repository owner right to set an update date"
export const UPDATED_AT_OUT_OF_RANGE =
  "unallowed update date, because given date must be between issue creation date and now"
export const LOCKED_REFUSED = "You cannot comment on a locked issue."

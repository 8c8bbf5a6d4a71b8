// Finding the issue or comment a tracker route names, and the `updated_at` override every carrier
// takes (CONTRACT-ISSUES §4.2): one implementation for the core (Service.ts) and the extras
// (Extras.ts, Attachments.ts).
import { Effect, Option } from "effect"
import * as Errors from "../http/Errors.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import { isRepoAdmin, UPDATED_AT_OUT_OF_RANGE, UPDATED_AT_REFUSED } from "./Policy.ts"
import { type CommentRow, type IssueRow, IssuesRepo } from "./Repo.ts"

/** RFC 3339, as Go's `time.Parse(time.RFC3339, …)` takes it; 422 with Go's words otherwise. */
export const parseTime = (raw: string): Effect.Effect<Date, Errors.ValidationFailed> => {
  const ok = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(raw)
  const date = ok ? new Date(raw) : undefined
  return date !== undefined && !Number.isNaN(date.getTime())
    ? Effect.succeed(date)
    : Effect.fail(
        Errors.validationFailed(`parsing time "${raw}" as "2006-01-02T15:04:05Z07:00": cannot parse "${raw}" as "2006"`)
      )
}

export const wholeSeconds = (date: Date) => new Date(Math.floor(date.getTime() / 1000) * 1000)

/**
 * Forgejo's `SetIssueUpdateDate` checks (§4.2): admins only, then the bounds; `undefined` when not
 * given. Run before any change, so a refusal changes nothing.
 */
export const resolveUpdatedAt = (
  opened: OpenedRepository,
  issue: IssueRow,
  raw: string | null | undefined
): Effect.Effect<Date | undefined, Errors.Forbidden | Errors.ValidationFailed> =>
  Effect.gen(function* () {
    if (raw === undefined || raw === null) return undefined
    if (!isRepoAdmin(opened)) return yield* Errors.forbidden(UPDATED_AT_REFUSED)
    const when = wholeSeconds(yield* parseTime(raw))
    if (when.getTime() < wholeSeconds(issue.createdAt).getTime() || when.getTime() > Date.now()) {
      return yield* Errors.forbidden(UPDATED_AT_OUT_OF_RANGE)
    }
    return when
  })

/** A path's id or index: decimal digits only, else no row (0). */
const idOf = (raw: string) => (/^\d{1,15}$/.test(raw) ? Number(raw) : 0)

/** The look-ups of a route's `{index}` and comment `{id}` in the repository of its path (404 otherwise). */
export const makeLookup = Effect.gen(function* () {
  const repo = yield* IssuesRepo

  const findIssue = (opened: OpenedRepository, index: string): Effect.Effect<IssueRow, Errors.NotFound> =>
    Effect.gen(function* () {
      const n = idOf(index)
      const found = n < 1 ? Option.none<IssueRow>() : yield* repo.issueByIndex(opened.repo.id, n)
      if (Option.isNone(found)) return yield* Errors.notFound()
      return found.value
    })

  /** The comment and its issue; a comment of another repository's issue is not found. */
  const findComment = (
    opened: OpenedRepository,
    rawId: string
  ): Effect.Effect<{ readonly comment: CommentRow; readonly issue: IssueRow }, Errors.NotFound> =>
    Effect.gen(function* () {
      const id = idOf(rawId)
      const comment = id === 0 ? Option.none<CommentRow>() : yield* repo.commentById(id)
      if (Option.isNone(comment)) return yield* Errors.notFound()
      const issue = yield* repo.issueById(comment.value.issueId)
      if (Option.isNone(issue) || issue.value.repoId !== opened.repo.id) return yield* Errors.notFound()
      return { comment: comment.value, issue: issue.value }
    })

  return { findIssue, findComment }
})

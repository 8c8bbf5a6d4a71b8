// Who may do what to a pull request (Forgejo's services/pull/check.go `CheckPullMergeable`,
// `IsUserAllowedToMerge`, `IsUserAllowedToUpdate`, routers/api/v1/repo/pull.go). The repository
// assignment has already decided that the caller may read the repository and its pulls unit.
import { Effect } from "effect"
import type { Principal } from "../http/Caller.ts"
import { atLeast } from "../lib/AccessMode.ts"
import type { OpenedRepository, RepoAccess } from "../repos/Policy.ts"
import type { PullRow } from "./Repo.ts"

/** Write on the base repository's code: who may merge when no branch protection says otherwise. */
export const mayMerge = (opened: OpenedRepository): boolean =>
  opened.caller !== undefined && atLeast(opened.access.code, "write")

/** Who may push to a head repository (update the branch, delete it after a merge). */
export const mayPushTo = (access: RepoAccess): boolean => atLeast(access.code, "write")

/**
 * Why branch protection refuses `doer` merging `pull` (`undefined`: it does not). The seam the
 * branch protection rules hook into (required approvals, status checks, outdated branch, merge
 * whitelist, `apply_to_admins`); without them nothing is refused here. A refusal is answered
 * 405 "not allowed to merge [reason: …]" unless an admin forces the merge (`force_merge`).
 */
export const mergeAllowed = (
  _pull: PullRow,
  _doer: Principal,
  _opened: OpenedRepository
): Effect.Effect<string | undefined> => Effect.succeed(undefined)

/** Forgejo's `force_merge` overrides branch protection only for site admins and repository admins. */
export const mayForceMerge = (opened: OpenedRepository): boolean =>
  opened.caller !== undefined && (opened.caller.user.isAdmin || atLeast(opened.access.mode, "admin"))

// Who may do what to a pull request (Forgejo's services/pull/check.go `CheckPullMergeable`,
// `IsUserAllowedToMerge`, `IsUserAllowedToUpdate`, routers/api/v1/repo/pull.go). The repository
// assignment has already decided that the caller may read the repository and its pulls unit.
import { atLeast } from "../lib/AccessMode.ts"
import type { OpenedRepository, RepoAccess } from "../repos/Policy.ts"

/** Write on the base repository's code: who may merge when no branch protection says otherwise. */
export const mayMerge = (opened: OpenedRepository): boolean =>
  opened.caller !== undefined && atLeast(opened.access.code, "write")

/** Who may push to a head repository (update the branch, delete it after a merge). */
export const mayPushTo = (access: RepoAccess): boolean => atLeast(access.code, "write")

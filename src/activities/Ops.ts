// Forgejo's `ActionType` (models/activities/action.go): the number each action is stored with
// and the name the API answers (the swagger's `Activity.op_type`), in Forgejo's order from 1.
export const OP_TYPES = [
  "create_repo",
  "rename_repo",
  "star_repo",
  "watch_repo",
  "commit_repo",
  "create_issue",
  "create_pull_request",
  "transfer_repo",
  "push_tag",
  "comment_issue",
  "merge_pull_request",
  "close_issue",
  "reopen_issue",
  "close_pull_request",
  "reopen_pull_request",
  "delete_tag",
  "delete_branch",
  "mirror_sync_push",
  "mirror_sync_create",
  "mirror_sync_delete",
  "approve_pull_request",
  "reject_pull_request",
  "comment_pull",
  "publish_release",
  "pull_review_dismissed",
  "pull_request_ready_for_review",
  "auto_merge_pull_request"
] as const
export type OpName = (typeof OP_TYPES)[number]

/** The stored number of an action type. */
export const opNumber = (name: OpName): number => OP_TYPES.indexOf(name) + 1

/** The name of a stored number (undefined for one this version does not know). */
export const opName = (n: number): OpName | undefined => OP_TYPES[n - 1]

// Pull requests (Forgejo's models/issues/pull.go): a pull request is an issue (`issues.is_pull`,
// the shared per-repository number) plus this row. `status` is Forgejo's PullRequestStatus
// (0 conflict, 1 checking, 2 mergeable, 3 manually merged, 4 error, 5 empty, 6 ancestor); the
// mergeability job (src/pulls) writes it with the two commits it compared (`checked_base_sha`,
// `checked_head_sha`), so a result computed for commits that have moved on since is never kept.
// `flow` 0 is a branch (of the base repository or a fork), 1 the AGit flow (later).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE pull_requests (
    id bigserial PRIMARY KEY,
    issue_id bigint NOT NULL UNIQUE REFERENCES issues (id) ON DELETE CASCADE,
    base_repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    base_branch text NOT NULL,
    head_repo_id bigint REFERENCES repositories (id) ON DELETE SET NULL,
    head_branch text NOT NULL,
    flow smallint NOT NULL DEFAULT 0,
    head_sha text NOT NULL DEFAULT '',
    merge_base text NOT NULL DEFAULT '',
    status smallint NOT NULL DEFAULT 1,
    conflicted_files text NOT NULL DEFAULT '[]',
    commits_ahead integer NOT NULL DEFAULT 0,
    commits_behind integer NOT NULL DEFAULT 0,
    checked_base_sha text NOT NULL DEFAULT '',
    checked_head_sha text NOT NULL DEFAULT '',
    allow_maintainer_edit boolean NOT NULL DEFAULT false,
    has_merged boolean NOT NULL DEFAULT false,
    merged_at timestamptz,
    merged_by bigint,
    merge_commit_sha text,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX pull_requests_base ON pull_requests (base_repo_id, base_branch)`
  yield* sql`CREATE INDEX pull_requests_head ON pull_requests (head_repo_id, head_branch)`
  yield* sql`CREATE INDEX pull_requests_merge_commit ON pull_requests (base_repo_id, merge_commit_sha)
    WHERE merge_commit_sha IS NOT NULL`
})

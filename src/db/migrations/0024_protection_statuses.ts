// Commit statuses (Forgejo's `commit_status` and `commit_status_index`), branch protection rules
// (`protected_branch`) and tag protection rules (`protected_tag`).
//
// A status's `idx` is numbered from 1 per (repository, commit), as Forgejo's `index`; the
// CommitStatus JSON's `id` is that number. Whitelists keep ids (users, teams) as JSON arrays of
// numbers, so a renamed user stays listed; `status_check_contexts` is NULL until first set
// (Forgejo answers `null` then, `[]` once cleared). `priority` orders rules: lower first, within
// plain names and globs (exact names always win, as Forgejo's `GetFirstMatched`).
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE commit_statuses (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sha text NOT NULL,
    idx bigint NOT NULL,
    state text NOT NULL,
    target_url text NOT NULL DEFAULT '',
    description text NOT NULL DEFAULT '',
    context text NOT NULL DEFAULT '',
    creator_id bigint REFERENCES users (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repo_id, sha, idx)
  )`
  yield* sql`CREATE INDEX commit_statuses_context ON commit_statuses (repo_id, sha, context, idx DESC)`

  yield* sql`CREATE TABLE branch_protections (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    rule_name text NOT NULL,
    priority bigint NOT NULL DEFAULT 0,
    enable_push boolean NOT NULL DEFAULT false,
    enable_push_whitelist boolean NOT NULL DEFAULT false,
    push_whitelist_user_ids text NOT NULL DEFAULT '[]',
    push_whitelist_team_ids text NOT NULL DEFAULT '[]',
    push_whitelist_deploy_keys boolean NOT NULL DEFAULT false,
    enable_merge_whitelist boolean NOT NULL DEFAULT false,
    merge_whitelist_user_ids text NOT NULL DEFAULT '[]',
    merge_whitelist_team_ids text NOT NULL DEFAULT '[]',
    enable_status_check boolean NOT NULL DEFAULT false,
    status_check_contexts text,
    required_approvals bigint NOT NULL DEFAULT 0,
    enable_approvals_whitelist boolean NOT NULL DEFAULT false,
    approvals_whitelist_user_ids text NOT NULL DEFAULT '[]',
    approvals_whitelist_team_ids text NOT NULL DEFAULT '[]',
    block_on_rejected_reviews boolean NOT NULL DEFAULT false,
    block_on_official_review_requests boolean NOT NULL DEFAULT false,
    block_on_outdated_branch boolean NOT NULL DEFAULT false,
    dismiss_stale_approvals boolean NOT NULL DEFAULT false,
    ignore_stale_approvals boolean NOT NULL DEFAULT false,
    require_signed_commits boolean NOT NULL DEFAULT false,
    protected_file_patterns text NOT NULL DEFAULT '',
    unprotected_file_patterns text NOT NULL DEFAULT '',
    apply_to_admins boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (repo_id, rule_name)
  )`

  yield* sql`CREATE TABLE tag_protections (
    id bigserial PRIMARY KEY,
    repo_id bigint NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name_pattern text NOT NULL,
    whitelist_user_ids text NOT NULL DEFAULT '[]',
    whitelist_team_ids text NOT NULL DEFAULT '[]',
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX tag_protections_repo ON tag_protections (repo_id, id)`
})

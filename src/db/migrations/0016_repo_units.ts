// The pull request settings of a repository (Forgejo keeps them in the config of its pulls unit,
// models/repo/repo_unit.go `PullRequestsConfig`), shown in the Repository JSON and changed by
// PATCH /repos/{o}/{r}. Defaults as Forgejo's for a new repository. The unit switches themselves
// (`has_issues`, `has_wiki`, …) are columns since 0003.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`ALTER TABLE repositories
    ADD COLUMN ignore_whitespace_conflicts boolean NOT NULL DEFAULT false,
    ADD COLUMN allow_merge_commits boolean NOT NULL DEFAULT true,
    ADD COLUMN allow_rebase boolean NOT NULL DEFAULT true,
    ADD COLUMN allow_rebase_explicit boolean NOT NULL DEFAULT true,
    ADD COLUMN allow_squash_merge boolean NOT NULL DEFAULT true,
    ADD COLUMN allow_fast_forward_only_merge boolean NOT NULL DEFAULT true,
    ADD COLUMN allow_manual_merge boolean NOT NULL DEFAULT false,
    ADD COLUMN autodetect_manual_merge boolean NOT NULL DEFAULT false,
    ADD COLUMN allow_rebase_update boolean NOT NULL DEFAULT true,
    ADD COLUMN default_delete_branch_after_merge boolean NOT NULL DEFAULT false,
    ADD COLUMN default_merge_style text NOT NULL DEFAULT 'merge',
    ADD COLUMN default_update_style text NOT NULL DEFAULT 'merge',
    ADD COLUMN default_allow_maintainer_edit boolean NOT NULL DEFAULT false`
})

// Quotas (Forgejo's quota_rule, quota_group, quota_group_rule_mapping, quota_group_mapping): rules
// limit what an account stores, groups gather rules, accounts (users and organizations) are put
// in groups. Rules and groups are named and looked up by name, as Forgejo's API addresses them.
// Deleting a rule or a group removes it from every group and account; deleting an account removes
// its memberships. What an account uses is not stored: it is summed from the repositories' sizes.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export default Effect.gen(function* () {
  const sql = yield* SqlClient
  yield* sql`CREATE TABLE quota_rules (
    name text PRIMARY KEY,
    "limit" bigint NOT NULL,
    -- Comma-separated limit subjects, each one of the known names (checked by the quota service).
    subjects text NOT NULL DEFAULT ''
  )`
  yield* sql`CREATE TABLE quota_groups (
    name text PRIMARY KEY
  )`
  yield* sql`CREATE TABLE quota_group_rules (
    -- Keeps the order in which rules were added to a group.
    id bigserial PRIMARY KEY,
    group_name text NOT NULL REFERENCES quota_groups (name) ON DELETE CASCADE,
    rule_name text NOT NULL REFERENCES quota_rules (name) ON DELETE CASCADE,
    UNIQUE (group_name, rule_name)
  )`
  yield* sql`CREATE INDEX quota_group_rules_rule ON quota_group_rules (rule_name)`
  yield* sql`CREATE TABLE quota_group_users (
    group_name text NOT NULL REFERENCES quota_groups (name) ON DELETE CASCADE,
    user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
    PRIMARY KEY (group_name, user_id)
  )`
  yield* sql`CREATE INDEX quota_group_users_user ON quota_group_users (user_id)`
})

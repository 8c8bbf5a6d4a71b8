// SQL for branch and tag protection rules (migration 0024_protection_statuses). Rules live in
// Policy.ts (matching, checks) and Service.ts (CRUD).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

/** A branch protection rule as stored (Forgejo's `ProtectedBranch`). */
export interface BranchRule {
  readonly id: number
  readonly repoId: number
  readonly ruleName: string
  readonly priority: number
  readonly enablePush: boolean
  readonly enablePushWhitelist: boolean
  readonly pushWhitelistUserIds: ReadonlyArray<number>
  readonly pushWhitelistTeamIds: ReadonlyArray<number>
  readonly pushWhitelistDeployKeys: boolean
  readonly enableMergeWhitelist: boolean
  readonly mergeWhitelistUserIds: ReadonlyArray<number>
  readonly mergeWhitelistTeamIds: ReadonlyArray<number>
  readonly enableStatusCheck: boolean
  readonly statusCheckContexts: ReadonlyArray<string> | null
  readonly requiredApprovals: number
  readonly enableApprovalsWhitelist: boolean
  readonly approvalsWhitelistUserIds: ReadonlyArray<number>
  readonly approvalsWhitelistTeamIds: ReadonlyArray<number>
  readonly blockOnRejectedReviews: boolean
  readonly blockOnOfficialReviewRequests: boolean
  readonly blockOnOutdatedBranch: boolean
  readonly dismissStaleApprovals: boolean
  readonly ignoreStaleApprovals: boolean
  readonly requireSignedCommits: boolean
  readonly protectedFilePatterns: string
  readonly unprotectedFilePatterns: string
  readonly applyToAdmins: boolean
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** Everything of a rule but its identity and times: what create and edit write. */
export type BranchRuleValues = Omit<BranchRule, "id" | "repoId" | "ruleName" | "priority" | "createdAt" | "updatedAt">

/** A tag protection rule (Forgejo's `ProtectedTag`). */
export interface TagRule {
  readonly id: number
  readonly repoId: number
  readonly namePattern: string
  readonly whitelistUserIds: ReadonlyArray<number>
  readonly whitelistTeamIds: ReadonlyArray<number>
  readonly createdAt: Date
  readonly updatedAt: Date
}

export type TagRuleValues = Pick<TagRule, "namePattern" | "whitelistUserIds" | "whitelistTeamIds">

const ids = (text: unknown): ReadonlyArray<number> => (JSON.parse(String(text)) as Array<number>).map(Number)

const toBranchRule = (r: Record<string, any>): BranchRule => ({
  id: Number(r.id),
  repoId: Number(r.repo_id),
  ruleName: r.rule_name,
  priority: Number(r.priority),
  enablePush: r.enable_push,
  enablePushWhitelist: r.enable_push_whitelist,
  pushWhitelistUserIds: ids(r.push_whitelist_user_ids),
  pushWhitelistTeamIds: ids(r.push_whitelist_team_ids),
  pushWhitelistDeployKeys: r.push_whitelist_deploy_keys,
  enableMergeWhitelist: r.enable_merge_whitelist,
  mergeWhitelistUserIds: ids(r.merge_whitelist_user_ids),
  mergeWhitelistTeamIds: ids(r.merge_whitelist_team_ids),
  enableStatusCheck: r.enable_status_check,
  statusCheckContexts: r.status_check_contexts === null ? null : (JSON.parse(r.status_check_contexts) as Array<string>),
  requiredApprovals: Number(r.required_approvals),
  enableApprovalsWhitelist: r.enable_approvals_whitelist,
  approvalsWhitelistUserIds: ids(r.approvals_whitelist_user_ids),
  approvalsWhitelistTeamIds: ids(r.approvals_whitelist_team_ids),
  blockOnRejectedReviews: r.block_on_rejected_reviews,
  blockOnOfficialReviewRequests: r.block_on_official_review_requests,
  blockOnOutdatedBranch: r.block_on_outdated_branch,
  dismissStaleApprovals: r.dismiss_stale_approvals,
  ignoreStaleApprovals: r.ignore_stale_approvals,
  requireSignedCommits: r.require_signed_commits,
  protectedFilePatterns: r.protected_file_patterns,
  unprotectedFilePatterns: r.unprotected_file_patterns,
  applyToAdmins: r.apply_to_admins,
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const toTagRule = (r: Record<string, any>): TagRule => ({
  id: Number(r.id),
  repoId: Number(r.repo_id),
  namePattern: r.name_pattern,
  whitelistUserIds: ids(r.whitelist_user_ids),
  whitelistTeamIds: ids(r.whitelist_team_ids),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

/** The columns of `values`, in the table's names and storage forms. */
const columnsOf = (v: BranchRuleValues) => ({
  enable_push: v.enablePush,
  enable_push_whitelist: v.enablePushWhitelist,
  push_whitelist_user_ids: JSON.stringify(v.pushWhitelistUserIds),
  push_whitelist_team_ids: JSON.stringify(v.pushWhitelistTeamIds),
  push_whitelist_deploy_keys: v.pushWhitelistDeployKeys,
  enable_merge_whitelist: v.enableMergeWhitelist,
  merge_whitelist_user_ids: JSON.stringify(v.mergeWhitelistUserIds),
  merge_whitelist_team_ids: JSON.stringify(v.mergeWhitelistTeamIds),
  enable_status_check: v.enableStatusCheck,
  status_check_contexts: v.statusCheckContexts === null ? null : JSON.stringify(v.statusCheckContexts),
  required_approvals: v.requiredApprovals,
  enable_approvals_whitelist: v.enableApprovalsWhitelist,
  approvals_whitelist_user_ids: JSON.stringify(v.approvalsWhitelistUserIds),
  approvals_whitelist_team_ids: JSON.stringify(v.approvalsWhitelistTeamIds),
  block_on_rejected_reviews: v.blockOnRejectedReviews,
  block_on_official_review_requests: v.blockOnOfficialReviewRequests,
  block_on_outdated_branch: v.blockOnOutdatedBranch,
  dismiss_stale_approvals: v.dismissStaleApprovals,
  ignore_stale_approvals: v.ignoreStaleApprovals,
  require_signed_commits: v.requireSignedCommits,
  protected_file_patterns: v.protectedFilePatterns,
  unprotected_file_patterns: v.unprotectedFilePatterns,
  apply_to_admins: v.applyToAdmins
})

export class ProtectionRepo extends Context.Service<
  ProtectionRepo,
  {
    /** The repository's branch rules by priority, then age. */
    readonly branchRules: (repoId: number) => Effect.Effect<Array<BranchRule>>
    readonly branchRule: (repoId: number, ruleName: string) => Effect.Effect<Option.Option<BranchRule>>
    /** None when a rule of that name exists already. */
    readonly insertBranchRule: (
      repoId: number,
      ruleName: string,
      values: BranchRuleValues
    ) => Effect.Effect<Option.Option<BranchRule>>
    readonly updateBranchRule: (id: number, values: BranchRuleValues) => Effect.Effect<BranchRule>
    readonly deleteBranchRule: (repoId: number, ruleName: string) => Effect.Effect<boolean>
    /** Gives the rules `ids` priorities 1, 2, … in that order (the others keep theirs). */
    readonly setPriorities: (repoId: number, ids: ReadonlyArray<number>) => Effect.Effect<void>
    readonly tagRules: (repoId: number) => Effect.Effect<Array<TagRule>>
    readonly tagRule: (repoId: number, id: number) => Effect.Effect<Option.Option<TagRule>>
    readonly insertTagRule: (repoId: number, values: TagRuleValues) => Effect.Effect<TagRule>
    readonly updateTagRule: (id: number, values: TagRuleValues) => Effect.Effect<TagRule>
    readonly deleteTagRule: (repoId: number, id: number) => Effect.Effect<boolean>
    /** Whether the repository has any branch or tag rule (the push hook's shortcut). */
    readonly hasRules: (repoId: number) => Effect.Effect<boolean>
  }
>()("hearth/protection/ProtectionRepo") {
  static readonly layer = Layer.effect(
    ProtectionRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return ProtectionRepo.of(
        sqlBoundary({
          branchRules: (repoId) =>
            Effect.map(sql`SELECT * FROM branch_protections WHERE repo_id = ${repoId} ORDER BY priority, id`, (rows) =>
              rows.map(toBranchRule)
            ),
          branchRule: (repoId, ruleName) =>
            Effect.map(
              sql`SELECT * FROM branch_protections WHERE repo_id = ${repoId} AND rule_name = ${ruleName}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toBranchRule)
            ),
          insertBranchRule: (repoId, ruleName, values) =>
            Effect.map(
              sql`INSERT INTO branch_protections ${sql.insert({ repo_id: repoId, rule_name: ruleName, ...columnsOf(values) })}
                ON CONFLICT (repo_id, rule_name) DO NOTHING RETURNING *`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toBranchRule)
            ),
          updateBranchRule: (id, values) =>
            Effect.map(
              sql`UPDATE branch_protections SET ${sql.update(columnsOf(values))}, updated_at = now()
                WHERE id = ${id} RETURNING *`,
              (rows) => toBranchRule(rows[0]!)
            ),
          deleteBranchRule: (repoId, ruleName) =>
            Effect.map(
              sql`DELETE FROM branch_protections WHERE repo_id = ${repoId} AND rule_name = ${ruleName} RETURNING id`,
              (rows) => rows.length > 0
            ),
          setPriorities: (repoId, order) =>
            sql.withTransaction(
              Effect.forEach(
                order,
                (id, i) =>
                  sql`UPDATE branch_protections SET priority = ${i + 1}, updated_at = now()
                    WHERE repo_id = ${repoId} AND id = ${id}`,
                { discard: true }
              )
            ),
          tagRules: (repoId) =>
            Effect.map(sql`SELECT * FROM tag_protections WHERE repo_id = ${repoId} ORDER BY id`, (rows) =>
              rows.map(toTagRule)
            ),
          tagRule: (repoId, id) =>
            Effect.map(sql`SELECT * FROM tag_protections WHERE repo_id = ${repoId} AND id = ${id}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toTagRule)
            ),
          insertTagRule: (repoId, values) =>
            Effect.map(
              sql`INSERT INTO tag_protections (repo_id, name_pattern, whitelist_user_ids, whitelist_team_ids)
                VALUES (${repoId}, ${values.namePattern}, ${JSON.stringify(values.whitelistUserIds)},
                  ${JSON.stringify(values.whitelistTeamIds)}) RETURNING *`,
              (rows) => toTagRule(rows[0]!)
            ),
          updateTagRule: (id, values) =>
            Effect.map(
              sql`UPDATE tag_protections SET name_pattern = ${values.namePattern},
                whitelist_user_ids = ${JSON.stringify(values.whitelistUserIds)},
                whitelist_team_ids = ${JSON.stringify(values.whitelistTeamIds)}, updated_at = now()
                WHERE id = ${id} RETURNING *`,
              (rows) => toTagRule(rows[0]!)
            ),
          deleteTagRule: (repoId, id) =>
            Effect.map(
              sql`DELETE FROM tag_protections WHERE repo_id = ${repoId} AND id = ${id} RETURNING id`,
              (rows) => rows.length > 0
            ),
          hasRules: (repoId) =>
            Effect.map(
              sql`SELECT EXISTS (SELECT 1 FROM branch_protections WHERE repo_id = ${repoId})
                OR EXISTS (SELECT 1 FROM tag_protections WHERE repo_id = ${repoId}) AS has`,
              (rows) => rows[0]?.has === true
            )
        })
      )
    })
  )
}

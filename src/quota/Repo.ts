// SQL for quotas: rules, groups, who is in which group, and what an account uses (summed from its
// repositories' sizes, which every git change keeps current, and the attachments of their issues). Rules live in Service.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import type { Fragment } from "effect/sql/Statement"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"
import { toUserRow, type UserRow } from "../users/Repo.ts"
import { type Group, isSubject, NOTHING_USED, type Rule, type Used } from "./Evaluate.ts"

type Row = Record<string, any>

// Subjects are checked when a rule is written; anything else in the column (none expected) is dropped.
const toSubjects = (text: string) => text.split(",").filter(isSubject)

const toRule = (r: Row): Rule => ({ name: r.name, limit: Number(r.limit), subjects: toSubjects(r.subjects) })

/** Rows of (group, rule or nulls) in order, folded into groups with their rules. */
const toGroups = (rows: ReadonlyArray<Row>): Array<Group> => {
  const groups: Array<{ name: string; rules: Array<Rule> }> = []
  for (const r of rows) {
    if (r.group_name === null || r.group_name === undefined) continue
    let group = groups[groups.length - 1]
    if (group === undefined || group.name !== r.group_name) {
      group = { name: r.group_name, rules: [] }
      groups.push(group)
    }
    if (r.rule_name !== null && r.rule_name !== undefined) {
      group.rules.push({ name: r.rule_name, limit: Number(r.limit), subjects: toSubjects(r.subjects) })
    }
  }
  return groups
}

const toUsed = (r: Row | undefined): Used =>
  r === undefined
    ? NOTHING_USED
    : {
        ...NOTHING_USED,
        repos: { public: Number(r.public_size), private: Number(r.private_size) },
        attachments: { issues: Number(r.issue_attachments ?? 0), releases: Number(r.release_attachments ?? 0) },
        // Forgejo's rule: packages linked to a repository count for the repository's owner.
        packages: Number(r.packages ?? 0)
      }

/**
 * One stored file counted in an account's `size:assets:attachments:*`: an issue's or comment's
 * attachment (`issueIndex` set; `commentId` for a comment's) or a release asset (`releaseId`).
 */
export interface QuotaAttachmentRow {
  readonly id: number
  readonly name: string
  readonly size: number
  readonly repoName: string
  readonly issueIndex: number | null
  readonly isPull: boolean
  readonly commentId: number | null
  readonly releaseId: number | null
  readonly tagName: string | null
}

const toQuotaAttachment = (r: Row): QuotaAttachmentRow => ({
  id: Number(r.id),
  name: r.name,
  size: Number(r.size),
  repoName: r.repo_name,
  issueIndex: r.issue_index === null ? null : Number(r.issue_index),
  isPull: r.is_pull === true,
  commentId: r.comment_id === null ? null : Number(r.comment_id),
  releaseId: r.release_id === null ? null : Number(r.release_id),
  tagName: r.tag_name ?? null
})

export class QuotaRepo extends Context.Service<
  QuotaRepo,
  {
    readonly listRules: Effect.Effect<Array<Rule>>
    readonly findRule: (name: string) => Effect.Effect<Option.Option<Rule>>
    /** false when a rule of that name exists. */
    readonly insertRule: (rule: Rule) => Effect.Effect<boolean>
    /** The rule with the given fields changed; none when there is no such rule. */
    readonly updateRule: (
      name: string,
      changes: { readonly limit?: number | undefined; readonly subjects?: ReadonlyArray<string> | undefined }
    ) => Effect.Effect<Option.Option<Rule>>
    /** Also takes the rule out of every group; false when there was none. */
    readonly deleteRule: (name: string) => Effect.Effect<boolean>
    /** Every group with its rules, by name. */
    readonly listGroups: Effect.Effect<Array<Group>>
    readonly findGroup: (name: string) => Effect.Effect<Option.Option<Group>>
    /** false when a group of that name exists. */
    readonly insertGroup: (name: string) => Effect.Effect<boolean>
    /** Also ends its memberships; false when there was none. */
    readonly deleteGroup: (name: string) => Effect.Effect<boolean>
    /** false when the rule already is in the group. */
    readonly addRule: (group: string, rule: string) => Effect.Effect<boolean>
    /** false when the rule was not in the group. */
    readonly removeRule: (group: string, rule: string) => Effect.Effect<boolean>
    readonly usersIn: (group: string) => Effect.Effect<Array<UserRow>>
    /** false when the account already is in the group. */
    readonly addUser: (group: string, userId: number) => Effect.Effect<boolean>
    /** false when the account was not in the group. */
    readonly removeUser: (group: string, userId: number) => Effect.Effect<boolean>
    /** Takes the account out of every group. */
    readonly clearUser: (userId: number) => Effect.Effect<void>
    /**
     * The groups that apply to an account, with their rules: those it is in, else those of
     * `defaults` that exist (`[quota] DEFAULT_GROUPS`).
     */
    readonly groupsOf: (userId: number, defaults: ReadonlyArray<string>) => Effect.Effect<Array<Group>>
    /** What the account stores: its repositories' recorded sizes and their issues' attachments, summed. */
    readonly usedBy: (userId: number) => Effect.Effect<Used>
    /**
     * The files `usedBy` sums, a page of them and how many there are: the attachments of the
     * account's repositories' issues and comments and their release assets, oldest first
     * (Forgejo's `GetQuotaAttachmentsForUser`, one attachment table there).
     */
    readonly attachmentsOf: (
      userId: number,
      page: Page
    ) => Effect.Effect<{ readonly rows: Array<QuotaAttachmentRow>; readonly total: number }>
  }
>()("hearth/quota/QuotaRepo") {
  static readonly layer = Layer.effect(
    QuotaRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient

      const groupsWhere = (where: Fragment) =>
        Effect.map(
          sql`SELECT g.name AS group_name, r.name AS rule_name, r."limit", r.subjects
            FROM quota_groups g
            LEFT JOIN quota_group_rules gr ON gr.group_name = g.name
            LEFT JOIN quota_rules r ON r.name = gr.rule_name
            WHERE ${where} ORDER BY g.name, gr.id`,
          toGroups
        )

      return QuotaRepo.of(
        sqlBoundary({
          listRules: Effect.map(sql`SELECT * FROM quota_rules ORDER BY name`, (rows) => rows.map(toRule)),
          findRule: (name) =>
            Effect.map(sql`SELECT * FROM quota_rules WHERE name = ${name}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toRule)
            ),
          insertRule: (rule) =>
            Effect.map(
              sql`INSERT INTO quota_rules (name, "limit", subjects) VALUES (${rule.name}, ${rule.limit}, ${rule.subjects.join(",")})
              ON CONFLICT (name) DO NOTHING RETURNING name`,
              (rows) => rows.length > 0
            ),
          updateRule: (name, changes) => {
            const values: Record<string, unknown> = {}
            if (changes.limit !== undefined) values.limit = changes.limit
            if (changes.subjects !== undefined) values.subjects = changes.subjects.join(",")
            const statement =
              Object.keys(values).length === 0
                ? sql`SELECT * FROM quota_rules WHERE name = ${name}`
                : sql`UPDATE quota_rules SET ${sql.update(values)} WHERE name = ${name} RETURNING *`
            return Effect.map(statement, (rows) => Option.map(Option.fromNullishOr(rows[0]), toRule))
          },
          deleteRule: (name) =>
            Effect.map(sql`DELETE FROM quota_rules WHERE name = ${name} RETURNING name`, (rows) => rows.length > 0),
          listGroups: groupsWhere(sql`true`),
          findGroup: (name) =>
            Effect.map(groupsWhere(sql`g.name = ${name}`), (groups) => Option.fromNullishOr(groups[0])),
          insertGroup: (name) =>
            Effect.map(
              sql`INSERT INTO quota_groups (name) VALUES (${name}) ON CONFLICT (name) DO NOTHING RETURNING name`,
              (rows) => rows.length > 0
            ),
          deleteGroup: (name) =>
            Effect.map(sql`DELETE FROM quota_groups WHERE name = ${name} RETURNING name`, (rows) => rows.length > 0),
          addRule: (group, rule) =>
            Effect.map(
              sql`INSERT INTO quota_group_rules (group_name, rule_name) VALUES (${group}, ${rule})
              ON CONFLICT (group_name, rule_name) DO NOTHING RETURNING id`,
              (rows) => rows.length > 0
            ),
          removeRule: (group, rule) =>
            Effect.map(
              sql`DELETE FROM quota_group_rules WHERE group_name = ${group} AND rule_name = ${rule} RETURNING id`,
              (rows) => rows.length > 0
            ),
          usersIn: (group) =>
            Effect.map(
              sql`SELECT u.* FROM quota_group_users m JOIN users u ON u.id = m.user_id WHERE m.group_name = ${group} ORDER BY u.id`,
              (rows) => rows.map(toUserRow)
            ),
          addUser: (group, userId) =>
            Effect.map(
              sql`INSERT INTO quota_group_users (group_name, user_id) VALUES (${group}, ${userId})
              ON CONFLICT (group_name, user_id) DO NOTHING RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          removeUser: (group, userId) =>
            Effect.map(
              sql`DELETE FROM quota_group_users WHERE group_name = ${group} AND user_id = ${userId} RETURNING user_id`,
              (rows) => rows.length > 0
            ),
          clearUser: (userId) => Effect.asVoid(sql`DELETE FROM quota_group_users WHERE user_id = ${userId}`),
          groupsOf: (userId, defaults) => {
            const mine = sql`g.name IN (SELECT group_name FROM quota_group_users WHERE user_id = ${userId})`
            return groupsWhere(
              defaults.length === 0
                ? mine
                : sql`(${mine} OR (g.name IN ${sql.in(defaults)}
                  AND NOT EXISTS (SELECT 1 FROM quota_group_users WHERE user_id = ${userId})))`
            )
          },
          usedBy: (userId) =>
            Effect.map(
              sql`SELECT coalesce(sum(size) FILTER (WHERE NOT is_private), 0) AS public_size,
                coalesce(sum(size) FILTER (WHERE is_private), 0) AS private_size,
                (SELECT coalesce(sum(a.size), 0) FROM attachments a JOIN repositories ar ON ar.id = a.repo_id
                  WHERE ar.owner_id = ${userId}) AS issue_attachments,
                (SELECT coalesce(sum(ra.size), 0) FROM release_assets ra JOIN repositories rr ON rr.id = ra.repo_id
                  WHERE rr.owner_id = ${userId}) AS release_attachments,
                (SELECT coalesce(sum(pf.size), 0) FROM package_files pf
                  JOIN package_versions pv ON pv.id = pf.version_id JOIN packages pp ON pp.id = pv.package_id
                  WHERE (pp.owner_id = ${userId} AND pp.repo_id IS NULL)
                    OR pp.repo_id IN (SELECT id FROM repositories WHERE owner_id = ${userId})) AS packages
              FROM repositories WHERE owner_id = ${userId}`,
              (rows) => toUsed(rows[0])
            ),
          attachmentsOf: (userId, page) =>
            Effect.gen(function* () {
              const files = sql`SELECT a.id, a.name, a.size, a.created_at, 0 AS kind, r.name AS repo_name,
                  i.index AS issue_index, i.is_pull, a.comment_id, NULL::bigint AS release_id, NULL::text AS tag_name
                FROM attachments a JOIN repositories r ON r.id = a.repo_id JOIN issues i ON i.id = a.issue_id
                WHERE r.owner_id = ${userId}
                UNION ALL
                SELECT ra.id, ra.name, ra.size, ra.created_at, 1 AS kind, r.name AS repo_name,
                  NULL::bigint, NULL::boolean, NULL::bigint, ra.release_id, rel.tag_name
                FROM release_assets ra JOIN repositories r ON r.id = ra.repo_id JOIN releases rel ON rel.id = ra.release_id
                WHERE r.owner_id = ${userId}`
              const [count] = yield* sql`SELECT count(*) AS n FROM (${files}) f`
              const rows = yield* sql`SELECT * FROM (${files}) f ORDER BY created_at, kind, id
                LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toQuotaAttachment), total: Number(count!.n) }
            })
        })
      )
    })
  )
}

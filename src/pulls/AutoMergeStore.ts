// The rows of scheduled merges (migration 0029_automerge; Forgejo's models/pull/automerge.go) and
// the writes that go with them in one transaction: the timeline entry (34 `pull_scheduled_merge`,
// 35 `pull_cancel_scheduled_merge`) and the queued evaluation (topic `pulls:automerge`, one at a
// time per pull request, see AutoMerge.ts). The pull requests' service schedules through this
// module; AutoMerge.ts, which merges through that service, does everything else.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import * as Errors from "../http/Errors.ts"
import { commentType } from "../issues/Present.ts"
import { IssuesRepo } from "../issues/Repo.ts"
import { DeliveryQueue } from "../jobs/Queue.ts"
import type { MergeDo } from "./Schema.ts"

/** The queue topic of scheduled merges' evaluations. */
export const AUTOMERGE_TOPIC = "pulls:automerge"
/** Their `jobs` rows' kind (GET /admin/jobs). */
export const AUTOMERGE_KIND = "pull-automerge"

export interface AutoMergeRow {
  readonly id: number
  readonly pullId: number
  readonly doerId: number
  readonly style: MergeDo
  /** The merge commit's title as it will be used (the style's default already filled in). */
  readonly title: string
  readonly message: string
  readonly deleteBranch: boolean
  /** Set just before the base branch moves to the merge's commit (`mergingBase` → `mergingCommit`). */
  readonly mergingCommit: string | null
  readonly mergingBase: string | null
  readonly createdAt: Date
}

/** What `schedule` records. */
export interface NewAutoMerge {
  readonly pull: { readonly id: number; readonly issueId: number; readonly baseRepoId: number }
  readonly doerId: number
  readonly style: MergeDo
  readonly title: string
  readonly message: string
  readonly deleteBranch: boolean
}

type Row = Record<string, unknown>
const toRow = (r: Row): AutoMergeRow => ({
  id: Number(r.id),
  pullId: Number(r.pull_id),
  doerId: Number(r.doer_id),
  style: r.merge_style as MergeDo,
  title: String(r.title),
  message: String(r.message),
  deleteBranch: Boolean(r.delete_branch),
  mergingCommit: (r.merging_commit as string | null) ?? null,
  mergingBase: (r.merging_base as string | null) ?? null,
  createdAt: r.created_at as Date
})

const T = { scheduled: commentType("pull_scheduled_merge"), cancelled: commentType("pull_cancel_scheduled_merge") }

export class AutoMergeStore extends Context.Service<
  AutoMergeStore,
  {
    readonly find: (pullId: number) => Effect.Effect<Option.Option<AutoMergeRow>>
    /**
     * Records the schedule with its `pull_scheduled_merge` entry and queues its first evaluation
     * (it merges at once when nothing blocks it). 409 with Forgejo's message when one exists.
     */
    readonly schedule: (input: NewAutoMerge) => Effect.Effect<void, Errors.Conflict>
    /**
     * Deletes the schedule with a `pull_cancel_scheduled_merge` entry by `posterId` (its body says
     * why, when the schedule failed rather than being cancelled); the entry's id, or none when there
     * was no schedule.
     */
    readonly cancel: (
      pullId: number,
      issueId: number,
      posterId: number,
      reason?: string
    ) => Effect.Effect<Option.Option<number>>
    /** Deletes the schedule without a trace (the pull request was merged: Forgejo does the same). */
    readonly remove: (pullId: number) => Effect.Effect<void>
    readonly setIntent: (pullId: number, commit: string, base: string) => Effect.Effect<void>
    readonly clearIntent: (pullId: number) => Effect.Effect<void>
    /**
     * Queues an evaluation of the pull request's schedule, if it has one: what reviews call when
     * approvals change (this store depends on nothing of the pull requests' service, so any slice
     * may; `AutoMerge.reconsider` is the same).
     */
    readonly reconsider: (pullId: number) => Effect.Effect<void>
    /** Queues an evaluation of each pull request's schedule (on the caller's connection). */
    readonly evaluate: (
      pulls: ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>
    ) => Effect.Effect<void>
    /** The schedule of the pull request of issue `issueId`, if it has one and is unmerged. */
    readonly ofIssue: (
      issueId: number
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>>
    /** Scheduled, unmerged pull requests of the base repository whose head is at `sha`. */
    readonly withHeadSha: (
      baseRepoId: number,
      sha: string
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>>
    /** Scheduled, unmerged pull requests with `branch` of `repoId` as their head or base. */
    readonly onBranch: (
      repoId: number,
      branch: string
    ) => Effect.Effect<ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>>
    /** Every scheduled, unmerged pull request (re-evaluated at start). */
    readonly all: Effect.Effect<ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>>
  }
>()("hearth/pulls/AutoMergeStore") {
  static readonly layer = Layer.effect(
    AutoMergeStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const issues = yield* IssuesRepo
      const queue = yield* DeliveryQueue
      const pullsOf = (rows: ReadonlyArray<Row>) =>
        rows.map((r) => ({ id: Number(r.id), baseRepoId: Number(r.base_repo_id) }))

      const evaluate = (pulls: ReadonlyArray<{ readonly id: number; readonly baseRepoId: number }>) =>
        pulls.length === 0
          ? Effect.void
          : queue.enqueue(
              AUTOMERGE_TOPIC,
              pulls.map((pull) => ({
                payload: JSON.stringify({ pullId: pull.id }),
                orderingKey: `pull:${pull.id}`,
                kind: AUTOMERGE_KIND,
                repoId: pull.baseRepoId
              }))
            )

      const scheduled = sql`SELECT p.id, p.base_repo_id FROM pull_auto_merges a
        JOIN pull_requests p ON p.id = a.pull_id`

      return AutoMergeStore.of(
        sqlBoundary<AutoMergeStore["Service"]>({
          find: (pullId) =>
            Effect.map(sql`SELECT * FROM pull_auto_merges WHERE pull_id = ${pullId}`, (rows) =>
              rows.length === 0 ? Option.none() : Option.some(toRow(rows[0]!))
            ),
          schedule: (input) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const inserted = yield* sql`INSERT INTO pull_auto_merges ${sql.insert({
                  pull_id: input.pull.id,
                  doer_id: input.doerId,
                  merge_style: input.style,
                  title: input.title,
                  message: input.message,
                  delete_branch: input.deleteBranch
                })} ON CONFLICT (pull_id) DO NOTHING RETURNING id`
                if (inserted.length === 0) {
                  return yield* Errors.conflict(
                    `pull request is already scheduled to auto merge when checks succeed [pull_id: ${input.pull.id}]`
                  )
                }
                const at = new Date()
                yield* issues.insertComment({
                  issueId: input.pull.issueId,
                  type: T.scheduled,
                  posterId: input.doerId,
                  at
                })
                yield* issues.touchIssue(input.pull.issueId, at)
                yield* evaluate([input.pull])
              })
            ),
          cancel: (pullId, issueId, posterId, reason) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const deleted = yield* sql`DELETE FROM pull_auto_merges WHERE pull_id = ${pullId} RETURNING id`
                if (deleted.length === 0) return Option.none()
                const at = new Date()
                const comment = yield* issues.insertComment({
                  issueId,
                  type: T.cancelled,
                  posterId,
                  body: reason ?? "",
                  at
                })
                yield* issues.touchIssue(issueId, at)
                return Option.some(comment.id)
              })
            ),
          remove: (pullId) => Effect.asVoid(sql`DELETE FROM pull_auto_merges WHERE pull_id = ${pullId}`),
          setIntent: (pullId, commit, base) =>
            Effect.asVoid(
              sql`UPDATE pull_auto_merges SET merging_commit = ${commit}, merging_base = ${base} WHERE pull_id = ${pullId}`
            ),
          clearIntent: (pullId) =>
            Effect.asVoid(
              sql`UPDATE pull_auto_merges SET merging_commit = NULL, merging_base = NULL WHERE pull_id = ${pullId}`
            ),
          evaluate,
          reconsider: (pullId) =>
            Effect.flatMap(sql`${scheduled} WHERE p.id = ${pullId} AND NOT p.has_merged`, (rows) =>
              evaluate(pullsOf(rows))
            ),
          ofIssue: (issueId) =>
            Effect.map(sql`${scheduled} WHERE p.issue_id = ${issueId} AND NOT p.has_merged`, pullsOf),
          withHeadSha: (baseRepoId, sha) =>
            Effect.map(
              sql`${scheduled} WHERE p.base_repo_id = ${baseRepoId} AND p.head_sha = ${sha} AND NOT p.has_merged`,
              pullsOf
            ),
          onBranch: (repoId, branch) =>
            Effect.map(
              sql`${scheduled} WHERE NOT p.has_merged AND ((p.head_repo_id = ${repoId} AND p.head_branch = ${branch})
                OR (p.base_repo_id = ${repoId} AND p.base_branch = ${branch}))`,
              pullsOf
            ),
          all: Effect.map(sql`${scheduled} WHERE NOT p.has_merged ORDER BY a.id`, pullsOf)
        })
      )
    })
  )
}

// SQL for pending repository transfers (one per repository at most).
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"

export interface PendingTransfer {
  readonly repoId: number
  readonly doerId: number
  readonly recipientId: number
  readonly teamIds: ReadonlyArray<number>
  readonly createdAt: Date
}

const toPending = (r: Record<string, any>): PendingTransfer => ({
  repoId: Number(r.repo_id),
  doerId: Number(r.doer_id),
  recipientId: Number(r.recipient_id),
  teamIds: String(r.team_ids)
    .split(",")
    .filter((s) => s !== "")
    .map(Number),
  createdAt: r.created_at
})

export class TransfersRepo extends Context.Service<
  TransfersRepo,
  {
    readonly pending: (repoId: number) => Effect.Effect<Option.Option<PendingTransfer>>
    readonly pendingOf: (repoIds: ReadonlyArray<number>) => Effect.Effect<Array<PendingTransfer>>
    readonly insert: (transfer: Omit<PendingTransfer, "createdAt">) => Effect.Effect<void>
    readonly remove: (repoId: number) => Effect.Effect<void>
  }
>()("hearth/transfers/TransfersRepo") {
  static readonly layer = Layer.effect(
    TransfersRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return TransfersRepo.of(
        sqlBoundary({
          pending: (repoId) =>
            Effect.map(sql`SELECT * FROM repo_transfers WHERE repo_id = ${repoId}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toPending)
            ),
          pendingOf: (repoIds) =>
            repoIds.length === 0
              ? Effect.succeed([])
              : Effect.map(sql`SELECT * FROM repo_transfers WHERE repo_id IN ${sql.in(repoIds)}`, (rows) =>
                  rows.map(toPending)
                ),
          insert: (t) =>
            Effect.asVoid(sql`INSERT INTO repo_transfers (repo_id, doer_id, recipient_id, team_ids)
            VALUES (${t.repoId}, ${t.doerId}, ${t.recipientId}, ${t.teamIds.join(",")})`),
          remove: (repoId) => Effect.asVoid(sql`DELETE FROM repo_transfers WHERE repo_id = ${repoId}`)
        })
      )
    })
  )
}

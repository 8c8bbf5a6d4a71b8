// SQL for pull and push mirrors (migration 0005). Rules live in Service.ts and Policy.ts.
import { Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import { type RepoRow, toRepoRow } from "../repos/Repo.ts"

export interface PullMirrorRow {
  readonly repoId: number
  readonly remoteAddress: string
  /** Sealed `Authorization` header, or "". */
  readonly credentials: string
  readonly createdAt: Date
  readonly updatedAt: Date | null
  readonly lastAttemptAt: Date
  readonly lastError: string
}

export interface PushMirrorRow {
  readonly id: number
  readonly repoId: number
  readonly remoteName: string
  readonly remoteAddress: string
  readonly credentials: string
  readonly syncOnCommit: boolean
  readonly intervalSeconds: number
  readonly branchFilter: string
  readonly createdAt: Date
  readonly lastUpdate: Date | null
  readonly lastAttemptAt: Date
  readonly lastError: string
}

type Row = Record<string, any>

const toPull = (r: Row): PullMirrorRow => ({
  repoId: Number(r.repo_id),
  remoteAddress: r.remote_address,
  credentials: r.credentials,
  createdAt: r.created_at,
  updatedAt: r.updated_at ?? null,
  lastAttemptAt: r.last_attempt_at,
  lastError: r.last_error
})

const toPush = (r: Row): PushMirrorRow => ({
  id: Number(r.id),
  repoId: Number(r.repo_id),
  remoteName: r.remote_name,
  remoteAddress: r.remote_address,
  credentials: r.credentials,
  syncOnCommit: r.sync_on_commit,
  intervalSeconds: Number(r.interval_seconds),
  branchFilter: r.branch_filter,
  createdAt: r.created_at,
  lastUpdate: r.last_update ?? null,
  lastAttemptAt: r.last_attempt_at,
  lastError: r.last_error
})

export class MirrorsRepo extends Context.Service<
  MirrorsRepo,
  {
    /** Marks the repository a pull mirror of `remoteAddress` (row and repository columns). */
    readonly createPull: (
      repoId: number,
      values: {
        readonly remoteAddress: string
        readonly credentials: string
        readonly interval: string
      }
    ) => Effect.Effect<void>
    /**
     * A pull mirror becomes a normal repository (Forgejo's ConvertMirror): it is no mirror any more
     * and its mirror row, with the stored credentials, goes. The row as it is now; none when it was
     * no pull mirror.
     */
    readonly convertPull: (repoId: number) => Effect.Effect<Option.Option<RepoRow>>
    /** Records a migrated (not mirrored) repository's source address. */
    readonly setOriginalUrl: (repoId: number, url: string) => Effect.Effect<void>
    readonly findPull: (repoId: number) => Effect.Effect<Option.Option<PullMirrorRow>>
    /** Every pull mirror with its repository's interval text. */
    readonly allPull: Effect.Effect<Array<PullMirrorRow & { readonly interval: string; readonly ownerId: number }>>
    /** A scheduled sync starts: `last_attempt_at` moves to now, if it was not after `notAfter` (so two schedulers never both start one). */
    readonly claimPull: (repoId: number, notAfter: Date) => Effect.Effect<boolean>
    readonly touchPull: (repoId: number) => Effect.Effect<void>
    readonly pullSucceeded: (repoId: number) => Effect.Effect<void>
    readonly pullFailed: (repoId: number, error: string) => Effect.Effect<void>

    readonly insertPush: (values: {
      readonly repoId: number
      readonly remoteName: string
      readonly remoteAddress: string
      readonly credentials: string
      readonly syncOnCommit: boolean
      readonly intervalSeconds: number
      readonly branchFilter: string
    }) => Effect.Effect<PushMirrorRow>
    readonly listPush: (
      repoId: number,
      page: { readonly limit: number; readonly offset: number }
    ) => Effect.Effect<{ readonly rows: Array<PushMirrorRow>; readonly total: number }>
    readonly findPush: (repoId: number, remoteName: string) => Effect.Effect<Option.Option<PushMirrorRow>>
    readonly findPushById: (id: number) => Effect.Effect<Option.Option<PushMirrorRow>>
    readonly deletePush: (repoId: number, remoteName: string) => Effect.Effect<boolean>
    readonly pushOnCommit: (repoId: number) => Effect.Effect<Array<PushMirrorRow>>
    readonly allPushOf: (repoId: number) => Effect.Effect<Array<PushMirrorRow>>
    /** Push mirrors with an interval. */
    readonly allPushScheduled: Effect.Effect<Array<PushMirrorRow>>
    readonly claimPush: (id: number, notAfter: Date) => Effect.Effect<boolean>
    readonly pushSucceeded: (id: number) => Effect.Effect<void>
    readonly pushFailed: (id: number, error: string) => Effect.Effect<void>
    /**
     * Unfinished jobs of these kinds created more than `seconds` ago, with what restarting them
     * needs (a crash between recording a job and starting its workflow leaves such rows).
     */
    readonly unfinishedJobs: (
      kinds: ReadonlyArray<string>,
      seconds: number
    ) => Effect.Effect<
      Array<{
        readonly kind: string
        readonly key: string
        readonly repoId: number
        readonly remoteAddress: string
        readonly credentials: string
        readonly isMirror: boolean
      }>
    >
    /** An unfinished job of `kind` for the repository started in the last hour (a sync already queued). */
    readonly pendingJob: (repoId: number, kind: string) => Effect.Effect<boolean>
  }
>()("hearth/mirrors/MirrorsRepo") {
  static readonly layer = Layer.effect(
    MirrorsRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      return MirrorsRepo.of(
        sqlBoundary({
          createPull: (repoId, values) =>
            Effect.andThen(
              sql`INSERT INTO pull_mirrors (repo_id, remote_address, credentials)
              VALUES (${repoId}, ${values.remoteAddress}, ${values.credentials})`,
              sql`UPDATE repositories SET is_mirror = true, original_url = ${values.remoteAddress},
              mirror_interval = ${values.interval} WHERE id = ${repoId}`
            ),
          convertPull: (repoId) =>
            sql.withTransaction(
              Effect.gen(function* () {
                const converted = yield* sql`UPDATE repositories SET is_mirror = false, updated_at = now()
                  WHERE id = ${repoId} AND is_mirror RETURNING *`
                yield* sql`DELETE FROM pull_mirrors WHERE repo_id = ${repoId}`
                return Option.map(Option.fromNullishOr(converted[0]), toRepoRow)
              })
            ),
          setOriginalUrl: (repoId, url) =>
            Effect.asVoid(sql`UPDATE repositories SET original_url = ${url} WHERE id = ${repoId}`),
          findPull: (repoId) =>
            Effect.map(sql`SELECT * FROM pull_mirrors WHERE repo_id = ${repoId}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toPull)
            ),
          allPull: Effect.map(
            sql`SELECT m.*, r.mirror_interval, r.owner_id FROM pull_mirrors m JOIN repositories r ON r.id = m.repo_id
            WHERE r.is_mirror AND r.status = 'ready' ORDER BY m.repo_id`,
            (rows) =>
              rows.map((r) => ({ ...toPull(r), interval: r.mirror_interval as string, ownerId: Number(r.owner_id) }))
          ),
          claimPull: (repoId, notAfter) =>
            Effect.map(
              sql`UPDATE pull_mirrors SET last_attempt_at = now() WHERE repo_id = ${repoId} AND last_attempt_at <= ${notAfter} RETURNING repo_id`,
              (rows) => rows.length > 0
            ),
          touchPull: (repoId) =>
            Effect.asVoid(sql`UPDATE pull_mirrors SET last_attempt_at = now() WHERE repo_id = ${repoId}`),
          pullSucceeded: (repoId) =>
            Effect.asVoid(sql`UPDATE pull_mirrors SET updated_at = now(), last_error = '' WHERE repo_id = ${repoId}`),
          pullFailed: (repoId, error) =>
            Effect.asVoid(sql`UPDATE pull_mirrors SET last_error = ${error.slice(0, 2000)} WHERE repo_id = ${repoId}`),
          insertPush: (values) =>
            Effect.map(
              sql`INSERT INTO push_mirrors (repo_id, remote_name, remote_address, credentials, sync_on_commit, interval_seconds, branch_filter)
              VALUES (${values.repoId}, ${values.remoteName}, ${values.remoteAddress}, ${values.credentials},
                ${values.syncOnCommit}, ${values.intervalSeconds}, ${values.branchFilter}) RETURNING *`,
              (rows) => toPush(rows[0]!)
            ),
          listPush: (repoId, page) =>
            Effect.gen(function* () {
              const [count] = yield* sql`SELECT count(*) AS n FROM push_mirrors WHERE repo_id = ${repoId}`
              const rows = yield* sql`SELECT * FROM push_mirrors WHERE repo_id = ${repoId} ORDER BY id
              LIMIT ${page.limit} OFFSET ${page.offset}`
              return { rows: rows.map(toPush), total: Number(count!.n) }
            }),
          findPush: (repoId, remoteName) =>
            Effect.map(
              sql`SELECT * FROM push_mirrors WHERE repo_id = ${repoId} AND remote_name = ${remoteName}`,
              (rows) => Option.map(Option.fromNullishOr(rows[0]), toPush)
            ),
          findPushById: (id) =>
            Effect.map(sql`SELECT * FROM push_mirrors WHERE id = ${id}`, (rows) =>
              Option.map(Option.fromNullishOr(rows[0]), toPush)
            ),
          deletePush: (repoId, remoteName) =>
            Effect.map(
              sql`DELETE FROM push_mirrors WHERE repo_id = ${repoId} AND remote_name = ${remoteName} RETURNING id`,
              (rows) => rows.length > 0
            ),
          pushOnCommit: (repoId) =>
            Effect.map(
              sql`SELECT * FROM push_mirrors WHERE repo_id = ${repoId} AND sync_on_commit ORDER BY id`,
              (rows) => rows.map(toPush)
            ),
          allPushOf: (repoId) =>
            Effect.map(sql`SELECT * FROM push_mirrors WHERE repo_id = ${repoId} ORDER BY id`, (rows) =>
              rows.map(toPush)
            ),
          allPushScheduled: Effect.map(sql`SELECT * FROM push_mirrors WHERE interval_seconds > 0 ORDER BY id`, (rows) =>
            rows.map(toPush)
          ),
          claimPush: (id, notAfter) =>
            Effect.map(
              sql`UPDATE push_mirrors SET last_attempt_at = now() WHERE id = ${id} AND last_attempt_at <= ${notAfter} RETURNING id`,
              (rows) => rows.length > 0
            ),
          pushSucceeded: (id) =>
            Effect.asVoid(sql`UPDATE push_mirrors SET last_update = now(), last_error = '' WHERE id = ${id}`),
          pushFailed: (id, error) =>
            Effect.asVoid(
              sql`UPDATE push_mirrors SET last_update = now(), last_error = ${error.slice(0, 2000)} WHERE id = ${id}`
            ),
          unfinishedJobs: (kinds, seconds) =>
            Effect.map(
              sql`SELECT j.kind, j.idempotency_key, j.repo_id, r.is_mirror, r.original_url, m.remote_address, m.credentials
              FROM jobs j JOIN repositories r ON r.id = j.repo_id LEFT JOIN pull_mirrors m ON m.repo_id = j.repo_id
              WHERE j.state IN ('queued', 'running', 'retrying') AND j.kind IN ${sql.in(kinds)}
                AND j.created_at < now() - make_interval(secs => ${seconds}) ORDER BY j.id`,
              (rows) =>
                rows.map((r) => ({
                  kind: r.kind as string,
                  key: r.idempotency_key as string,
                  repoId: Number(r.repo_id),
                  remoteAddress: (r.remote_address ?? r.original_url) as string,
                  credentials: (r.credentials ?? "") as string,
                  isMirror: r.is_mirror as boolean
                }))
            ),
          pendingJob: (repoId, kind) =>
            Effect.map(
              sql`SELECT 1 FROM jobs WHERE repo_id = ${repoId} AND kind = ${kind} AND finished_at IS NULL
              AND created_at > now() - interval '1 hour' LIMIT 1`,
              (rows) => rows.length > 0
            )
        })
      )
    })
  )
}

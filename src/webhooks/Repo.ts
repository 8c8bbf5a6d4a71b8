// SQL of webhooks and their deliveries (migration 0025).
import { Array as Arr, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { sqlBoundary } from "../db/Boundary.ts"
import type { Page } from "../http/Pagination.ts"
import type { HookEvents } from "./Kinds.ts"

/** Where a hook belongs: a repository, a user or organization, or the site (system or default). */
export type HookLevel =
  | { readonly kind: "repo"; readonly repoId: number }
  | { readonly kind: "owner"; readonly ownerId: number }
  | { readonly kind: "admin" }

export interface HookRow {
  readonly id: number
  readonly repoId: number | null
  readonly ownerId: number | null
  readonly isSystem: boolean
  readonly type: string
  readonly url: string
  readonly httpMethod: string
  /** 1 json, 2 form. */
  readonly contentType: number
  /** Sealed. */
  readonly secret: string
  /** Sealed. */
  readonly authorizationHeader: string
  readonly events: HookEvents
  readonly branchFilter: string
  readonly meta: Record<string, unknown> | null
  readonly active: boolean
  readonly lastStatus: number
  readonly createdAt: Date
  readonly updatedAt: Date
}

export interface NewHook {
  readonly repoId: number | null
  readonly ownerId: number | null
  readonly isSystem: boolean
  readonly type: string
  readonly url: string
  readonly httpMethod: string
  readonly contentType: number
  readonly secret: string
  readonly authorizationHeader: string
  readonly events: HookEvents
  readonly branchFilter: string
  readonly meta: Record<string, unknown> | null
  readonly active: boolean
}

export interface RequestInfo {
  readonly url: string
  readonly http_method: string
  readonly headers: Record<string, string>
  readonly body: string
}

export interface ResponseInfo {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: string
}

export interface TaskRow {
  readonly id: number
  readonly hookId: number
  readonly uuid: string
  readonly eventType: string
  readonly payload: string
  readonly redeliveryOf: number | null
  readonly isDelivered: boolean
  readonly isSucceed: boolean
  readonly attempts: number
  readonly durationMs: number
  readonly request: RequestInfo | null
  readonly response: ResponseInfo | null
  readonly deliveredAt: Date | null
  readonly createdAt: Date
}

export interface Attempt {
  readonly attempt: number
  readonly succeeded: boolean
  readonly durationMs: number
  /**
   * The request as sent; without `body` when its body is the task's payload (a forgejo, gitea or
   * gogs hook's JSON): stored once, in the task, and filled in again when read (`toTask`).
   */
  readonly request: Omit<RequestInfo, "body"> & { readonly body?: string | undefined }
  readonly response: ResponseInfo
}

const parsed = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value)

/** A recorded request without a body sent the task's payload (see `Attempt`). */
const withBody = (request: Omit<RequestInfo, "body"> & { body?: string }, payload: string): RequestInfo =>
  request.body === undefined ? { ...request, body: payload } : (request as RequestInfo)

const toHook = (r: Record<string, any>): HookRow => ({
  id: Number(r.id),
  repoId: r.repo_id === null ? null : Number(r.repo_id),
  ownerId: r.owner_id === null ? null : Number(r.owner_id),
  isSystem: r.is_system,
  type: r.type,
  url: r.url,
  httpMethod: r.http_method,
  contentType: Number(r.content_type),
  secret: r.secret,
  authorizationHeader: r.authorization_header,
  events: parsed(r.events),
  branchFilter: r.branch_filter,
  meta: parsed(r.meta),
  active: r.active,
  lastStatus: Number(r.last_status),
  createdAt: r.created_at,
  updatedAt: r.updated_at
})

const TASK_COLUMNS_BUT_PAYLOAD =
  "id, hook_id, uuid, source_key, event_type, redelivery_of, is_delivered, is_succeed, attempts, duration_ms, request, response, delivered_at, created_at"

const toTask = (r: Record<string, any>): TaskRow => ({
  id: Number(r.id),
  hookId: Number(r.hook_id),
  uuid: r.uuid,
  eventType: r.event_type,
  payload: r.payload,
  redeliveryOf: r.redelivery_of === null ? null : Number(r.redelivery_of),
  isDelivered: r.is_delivered,
  isSucceed: r.is_succeed,
  attempts: Number(r.attempts),
  durationMs: Number(r.duration_ms),
  request: r.request === null ? null : withBody(parsed(r.request), r.payload),
  response: r.response === null ? null : parsed(r.response),
  deliveredAt: r.delivered_at ?? null,
  createdAt: r.created_at
})

export class WebhooksRepo extends Context.Service<
  WebhooksRepo,
  {
    readonly list: (level: HookLevel, page: Page | undefined) => Effect.Effect<{ rows: Array<HookRow>; total: number }>
    /** The hook with this id at this level (an admin hook has neither repository nor owner). */
    readonly find: (level: HookLevel, id: number) => Effect.Effect<Option.Option<HookRow>>
    readonly byId: (id: number) => Effect.Effect<Option.Option<HookRow>>
    readonly insert: (hook: NewHook) => Effect.Effect<HookRow>
    /** Updates a hook; its secret only when one is given (the web form's). */
    readonly update: (
      id: number,
      hook: Omit<NewHook, "repoId" | "ownerId" | "isSystem" | "type" | "secret"> & { readonly secret?: string }
    ) => Effect.Effect<void>
    readonly remove: (id: number) => Effect.Effect<void>
    /** The active hooks an event of this repository reaches: its own, its owner's, then the system hooks. */
    readonly firing: (repoId: number | null, ownerId: number) => Effect.Effect<Array<HookRow>>
    /** Where active hooks are: the repositories and owners that have some, and whether a system hook is. */
    readonly targets: Effect.Effect<{ system: boolean; defaults: boolean; repos: Set<number>; owners: Set<number> }>
    /** Copies the site's default hooks into the repository, each once (none if it is gone). */
    readonly copyDefaults: (repoId: number) => Effect.Effect<void>
    /** Tasks, in one statement; those whose source key exists already are left out (and not returned). */
    readonly insertTasks: (
      tasks: ReadonlyArray<{
        readonly hookId: number
        readonly uuid: string
        readonly sourceKey: string | null
        readonly eventType: string
        readonly payload: string
        readonly redeliveryOf: number | null
      }>
    ) => Effect.Effect<Array<TaskRow>>
    readonly task: (id: number) => Effect.Effect<Option.Option<TaskRow>>
    /** Tasks with their hooks (none if the hook is gone), in one statement: what deliveries read. */
    readonly tasksWithHooks: (
      ids: ReadonlyArray<number>
    ) => Effect.Effect<Map<number, { task: TaskRow; hook: Option.Option<HookRow> }>>
    readonly tasks: (hookId: number, page: Page) => Effect.Effect<{ rows: Array<TaskRow>; total: number }>
    /** Attempts of deliveries, in one statement (each task's, and its hook's last status). */
    readonly recordAttempts: (
      attempts: ReadonlyArray<{ readonly taskId: number; readonly hookId: number; readonly attempt: Attempt }>
    ) => Effect.Effect<void>
    /**
     * Forgejo's cleanup_hook_task_table: deletes delivered tasks older than `seconds`, or all but
     * the newest `keep` delivered tasks of each hook; never undelivered ones. How many went.
     */
    readonly cleanup: (
      rule:
        | { readonly type: "OlderThan"; readonly seconds: number }
        | { readonly type: "PerWebhook"; readonly keep: number }
    ) => Effect.Effect<number>
  }
>()("hearth/webhooks/WebhooksRepo") {
  static readonly layer = Layer.effect(
    WebhooksRepo,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const where = (level: HookLevel) =>
        level.kind === "repo"
          ? sql`repo_id = ${level.repoId}`
          : level.kind === "owner"
            ? sql`owner_id = ${level.ownerId} AND repo_id IS NULL`
            : sql`repo_id IS NULL AND owner_id IS NULL`
      const one = <A>(rows: ReadonlyArray<Record<string, any>>, f: (r: Record<string, any>) => A) =>
        Option.map(Option.fromNullishOr(rows[0]), f)
      return WebhooksRepo.of(
        sqlBoundary({
          list: (level, page) =>
            Effect.gen(function* () {
              // Forgejo lists only the system hooks at /admin/hooks.
              const filter = level.kind === "admin" ? sql`${where(level)} AND is_system` : where(level)
              const window = page === undefined ? sql`` : sql`LIMIT ${page.limit} OFFSET ${page.offset}`
              const rows = yield* sql`SELECT * FROM webhooks WHERE ${filter} ORDER BY id ${window}`
              const [count] = yield* sql`SELECT count(*) AS n FROM webhooks WHERE ${filter}`
              return { rows: rows.map(toHook), total: Number(count!.n) }
            }),
          find: (level, id) =>
            Effect.map(sql`SELECT * FROM webhooks WHERE id = ${id} AND ${where(level)}`, (rows) => one(rows, toHook)),
          byId: (id) => Effect.map(sql`SELECT * FROM webhooks WHERE id = ${id}`, (rows) => one(rows, toHook)),
          insert: (hook) =>
            Effect.map(
              sql`INSERT INTO webhooks (repo_id, owner_id, is_system, type, url, http_method, content_type, secret,
                authorization_header, events, branch_filter, meta, active)
              VALUES (${hook.repoId}, ${hook.ownerId}, ${hook.isSystem}, ${hook.type}, ${hook.url}, ${hook.httpMethod},
                ${hook.contentType}, ${hook.secret}, ${hook.authorizationHeader}, ${JSON.stringify(hook.events)}::jsonb,
                ${hook.branchFilter}, ${JSON.stringify(hook.meta)}::jsonb, ${hook.active})
              RETURNING *`,
              (rows) => toHook(rows[0]!)
            ),
          update: (id, hook) =>
            Effect.asVoid(sql`UPDATE webhooks SET url = ${hook.url}, http_method = ${hook.httpMethod},
              content_type = ${hook.contentType}, authorization_header = ${hook.authorizationHeader},
              events = ${JSON.stringify(hook.events)}::jsonb, branch_filter = ${hook.branchFilter},
              meta = ${JSON.stringify(hook.meta)}::jsonb, active = ${hook.active}, updated_at = now()
              ${hook.secret === undefined ? sql`` : sql`, secret = ${hook.secret}`}
              WHERE id = ${id}`),
          remove: (id) => Effect.asVoid(sql`DELETE FROM webhooks WHERE id = ${id}`),
          firing: (repoId, ownerId) =>
            Effect.map(
              sql`SELECT * FROM webhooks WHERE active AND (
                  ${repoId === null ? sql`FALSE` : sql`repo_id = ${repoId}`}
                  OR (owner_id = ${ownerId} AND repo_id IS NULL)
                  OR (repo_id IS NULL AND owner_id IS NULL AND is_system))
                ORDER BY (repo_id IS NULL), (owner_id IS NULL), id`,
              (rows) => rows.map(toHook)
            ),
          targets: Effect.map(
            sql<{
              repo_id: unknown
              owner_id: unknown
              is_system: boolean
            }>`SELECT DISTINCT repo_id, owner_id, is_system
              FROM webhooks WHERE active`,
            (rows) => {
              const found = { system: false, defaults: false, repos: new Set<number>(), owners: new Set<number>() }
              for (const row of rows) {
                if (row.repo_id !== null) found.repos.add(Number(row.repo_id))
                else if (row.owner_id !== null) found.owners.add(Number(row.owner_id))
                else if (row.is_system) found.system = true
                else found.defaults = true
              }
              return found
            }
          ),
          copyDefaults: (repoId) =>
            Effect.asVoid(sql`INSERT INTO webhooks (repo_id, owner_id, is_system, type, url, http_method, content_type,
                secret, authorization_header, events, branch_filter, meta, active, copied_from)
              SELECT ${repoId}, NULL, false, type, url, http_method, content_type, secret, authorization_header, events,
                branch_filter, meta, active, id
              FROM webhooks WHERE repo_id IS NULL AND owner_id IS NULL AND NOT is_system
                AND EXISTS (SELECT 1 FROM repositories WHERE id = ${repoId})
              ORDER BY id
              ON CONFLICT DO NOTHING`),
          insertTasks: (tasks) =>
            Arr.isReadonlyArrayNonEmpty(tasks)
              ? Effect.map(
                  sql`INSERT INTO hook_tasks ${sql.insert(
                    Arr.map(tasks, (task) => ({
                      hook_id: task.hookId,
                      uuid: task.uuid,
                      source_key: task.sourceKey,
                      event_type: task.eventType,
                      payload: task.payload,
                      redelivery_of: task.redeliveryOf
                    }))
                  )} ON CONFLICT DO NOTHING RETURNING ${sql.unsafe(TASK_COLUMNS_BUT_PAYLOAD)}`,
                  // Not read back: the payloads (a push's is KiBs, stored once per hook) are the caller's.
                  (rows) => {
                    const payloads = new Map(tasks.map((task) => [task.uuid, task.payload]))
                    return rows
                      .map((row) => toTask({ ...row, payload: payloads.get(row.uuid as string) ?? "" }))
                      .sort((a, b) => a.id - b.id)
                  }
                )
              : Effect.succeed([]),
          task: (id) => Effect.map(sql`SELECT * FROM hook_tasks WHERE id = ${id}`, (rows) => one(rows, toTask)),
          tasksWithHooks: (ids) =>
            Effect.map(
              Arr.isReadonlyArrayNonEmpty(ids)
                ? sql`SELECT t.*, to_jsonb(w.*) AS hook FROM hook_tasks t LEFT JOIN webhooks w ON w.id = t.hook_id
                    WHERE t.id = ANY(${ids}::int8[])`
                : Effect.succeed([]),
              (rows) =>
                new Map(
                  rows.map((r) => {
                    const hook = parsed(r.hook) as Record<string, any> | null
                    return [
                      Number(r.id),
                      {
                        task: toTask(r),
                        hook:
                          hook === null
                            ? Option.none<HookRow>()
                            : Option.some(
                                toHook({
                                  ...hook,
                                  created_at: new Date(hook.created_at),
                                  updated_at: new Date(hook.updated_at)
                                })
                              )
                      }
                    ] as const
                  })
                )
            ),
          tasks: (hookId, page) =>
            Effect.gen(function* () {
              const rows = yield* sql`SELECT * FROM hook_tasks WHERE hook_id = ${hookId}
                ORDER BY id DESC LIMIT ${page.limit} OFFSET ${page.offset}`
              const [count] = yield* sql`SELECT count(*) AS n FROM hook_tasks WHERE hook_id = ${hookId}`
              return { rows: rows.map(toTask), total: Number(count!.n) }
            }),
          // One statement: each task's attempt and its hook's last status (Forgejo's HookStatus:
          // 1 succeed, 2 fail; of a hook's newest task when one statement has several).
          recordAttempts: (attempts) =>
            Arr.isReadonlyArrayNonEmpty(attempts)
              ? Effect.asVoid(sql`WITH v AS (SELECT * FROM jsonb_to_recordset(${JSON.stringify(
                  attempts.map(({ taskId, hookId, attempt }) => ({
                    task_id: taskId,
                    hook_id: hookId,
                    succeeded: attempt.succeeded,
                    attempt: attempt.attempt,
                    duration_ms: attempt.durationMs,
                    request: attempt.request,
                    response: attempt.response
                  }))
                )}::jsonb) AS v(task_id bigint, hook_id bigint, succeeded boolean, attempt integer, duration_ms integer,
                  request jsonb, response jsonb)),
                task AS (UPDATE hook_tasks t SET is_delivered = true, is_succeed = v.succeeded,
                  attempts = GREATEST(t.attempts, v.attempt), duration_ms = v.duration_ms, request = v.request,
                  response = v.response, delivered_at = now() FROM v WHERE t.id = v.task_id)
                UPDATE webhooks w SET last_status = CASE WHEN l.succeeded THEN 1 ELSE 2 END
                FROM (SELECT DISTINCT ON (hook_id) hook_id, succeeded FROM v ORDER BY hook_id, task_id DESC) l
                WHERE w.id = l.hook_id`)
              : Effect.void,
          cleanup: (rule) =>
            Effect.map(
              rule.type === "OlderThan"
                ? sql`DELETE FROM hook_tasks
                    WHERE is_delivered AND delivered_at < now() - ${rule.seconds} * interval '1 second'
                    RETURNING id`
                : sql`DELETE FROM hook_tasks WHERE id IN (
                    SELECT id FROM (
                      SELECT id, row_number() OVER (PARTITION BY hook_id ORDER BY id DESC) AS n
                      FROM hook_tasks WHERE is_delivered
                    ) ranked WHERE n > ${rule.keep})
                    RETURNING id`,
              (rows) => rows.length
            )
        })
      )
    })
  )
}

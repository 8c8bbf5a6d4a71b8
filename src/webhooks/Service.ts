// Webhooks (Forgejo's services/webhook and routers/api/v1/utils/hook.go): hooks at every level,
// their validation, and their deliveries.
//
// From an event to a receiver:
// 1. The event hub hands every event webhooks hear (HookEvents.ts) to the durable subscriber
//    `webhooks` (src/events/Hub.ts: queued with the change, retried, resumed after a crash).
// 2. Its handler finds the active hooks that receive each hook event — the repository's, its
//    owner's, the system hooks (Forgejo's `PrepareWebhooks`) — with their event selection, the
//    branch filter and the zero-commit rule, builds the payload once, and in one transaction
//    stores a hook task per hook and queues its delivery under the topic `webhooks`, ordered per
//    hook. The task's source key (the event's queue key, the hook event, the hook) makes this
//    idempotent when the handler runs again after a crash.
// 3. The delivery worker (started with `start`, by `serve`) sends each task (Send.ts), records the
//    attempt in the task (the history), and on a network error or a 5xx lets the queue try again
//    after RETRY_DELAY (doubling), MAX_RETRIES times, with the same delivery id (Forgejo never
//    retries). A delivery interrupted by a crash is sent again after its lease ends; one that
//    already succeeded is not.
import { randomUUID } from "node:crypto"
import { Context, Effect, Layer, Option, Schedule } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { Settings } from "../config/Settings.ts"
import type * as Events from "../events/Events.ts"
import { EventHub } from "../events/Hub.ts"
import * as Git from "../git/Git.ts"
import type { Principal } from "../http/Caller.ts"
import * as Errors from "../http/Errors.ts"
import { formatTime } from "../http/Json.ts"
import type { Page } from "../http/Pagination.ts"
import { type Claimed, DeliveryQueue } from "../jobs/Queue.ts"
import { batcher } from "../lib/Batcher.ts"
import { cronSchedule } from "../lib/CronSchedule.ts"
import { globMatch } from "../lib/Glob.ts"
import { sealer } from "../lib/Sealer.ts"
import type { OpenedRepository } from "../repos/Policy.ts"
import { ReposService } from "../repos/Service.ts"
import type { Hook, HookDelivery } from "./Api.ts"
import { buildRequest, CannotConvert, manifestNeeded } from "./Convert.ts"
import { type HookEvent, hookEventsOf } from "./HookEvents.ts"
import { coarseEvent, eventsArray, type HookEvents, type HookType, receives } from "./Kinds.ts"
import { makePayloads, PayloadReads } from "./Payloads.ts"
import { type CreateInput, type EditInput, validateCreate, validateEdit } from "./Policy.ts"
import { type Attempt, type HookLevel, type HookRow, type TaskRow, WebhooksRepo } from "./Repo.ts"
import { send } from "./Send.ts"

export const DELIVERY_TOPIC = "webhooks"
/**
 * Whether a branch passes a hook's `branch_filter` (Forgejo compiles it with gobwas/glob, no
 * separators): "" and "*" pass everything, a filter that does not compile passes nothing.
 */
const branchMatches = (filter: string, branch: string): boolean =>
  filter === "" || filter === "*" || globMatch(filter, branch)

/** Payloads of one event built at once (each push's is a `git log`). */
const BUILD_AT_ONCE = 4
/** Hook events of one event whose tasks are queued in one transaction (bounds what is held built). */
const EVENT_CHUNK = 100

/**
 * [webhook] QUEUE_LENGTH as Hearth reads it: Forgejo's is the length of its in-memory queue of hook
 * tasks; here every delivery waits in the durable queue, and QUEUE_LENGTH bounds how many this
 * node holds claimed from it at once — up to 16 hooks' deliveries in flight (one per hook), each
 * with the next ones of its hook claimed behind it (up to 50: a hook with a backlog sends them
 * without a claim between them). 1000 (the default): 16 × 50; 1: one delivery at a time.
 */
export const claimBounds = (queueLength: number) => {
  const concurrency = Math.max(1, Math.min(16, queueLength))
  return { concurrency, run: Math.max(1, Math.min(50, Math.floor(queueLength / concurrency))) }
}

/** How often the hooks other nodes made are noticed. */
const TARGETS_REFRESH = "5 seconds"

/** The stored authorization header as the history shows it (Forgejo's redaction). */
const redact = (header: string) => {
  const space = header.indexOf(" ")
  return space > 0 ? `${header.slice(0, space)} ******` : "******"
}

const CONTENT_TYPES: Record<number, string> = { 1: "json", 2: "form" }
const PAYLOAD_TYPES: ReadonlySet<string> = new Set(["forgejo", "gitea", "gogs"])

/**
 * What the web settings form sets beyond the API's options (Forgejo's web form): the event mode as
 * chosen, a new secret (none: kept), and keeping the stored authorization header when none is sent.
 */
export interface HookForm {
  readonly events: HookEvents
  readonly secret?: string | undefined
  readonly keepAuthorization?: boolean | undefined
}

export class WebhooksService extends Context.Service<
  WebhooksService,
  {
    readonly present: (hook: HookRow) => Hook
    readonly presentDelivery: (task: TaskRow) => HookDelivery
    readonly list: (level: HookLevel, page: Page | undefined) => Effect.Effect<{ rows: Array<HookRow>; total: number }>
    readonly get: (level: HookLevel, id: string) => Effect.Effect<HookRow, Errors.NotFound>
    readonly create: (
      level: HookLevel,
      input: CreateInput,
      form?: HookForm
    ) => Effect.Effect<HookRow, Errors.ValidationFailed | Errors.BadRequest>
    readonly edit: (
      level: HookLevel,
      id: string,
      input: EditInput,
      form?: HookForm
    ) => Effect.Effect<HookRow, Errors.NotFound | Errors.ValidationFailed | Errors.BadRequest>
    readonly remove: (level: HookLevel, id: string) => Effect.Effect<void, Errors.NotFound>
    readonly deliveries: (
      level: HookLevel,
      id: string,
      page: Page
    ) => Effect.Effect<{ rows: Array<TaskRow>; total: number }, Errors.NotFound>
    readonly delivery: (level: HookLevel, id: string, delivery: string) => Effect.Effect<TaskRow, Errors.NotFound>
    /** A new delivery (new id) of a delivery's payload. */
    readonly redeliver: (level: HookLevel, id: string, delivery: string) => Effect.Effect<TaskRow, Errors.NotFound>
    /** POST /hooks/{id}/tests: a push payload of the commit `ref` names, queued for the hook. */
    readonly test: (
      opened: OpenedRepository,
      caller: Principal,
      id: string,
      ref: string | undefined
    ) => Effect.Effect<void, Errors.NotFound | Errors.Conflict>
    /**
     * Deletes old deliveries as [cron.cleanup_hook_task_table] says (CLEANUP_TYPE, OLDER_THAN,
     * NUMBER_TO_KEEP); how many went. `start` runs it on its SCHEDULE.
     */
    readonly cleanup: Effect.Effect<number>
    /** Starts sending queued deliveries, and the history's cleanup (`serve`, once it listens). */
    readonly start: Effect.Effect<void>
  }
>()("hearth/webhooks/WebhooksService") {
  static readonly layer = Layer.effect(
    WebhooksService,
    Effect.gen(function* () {
      const settings = yield* Settings
      const sql = yield* SqlClient
      const repo = yield* WebhooksRepo
      const queue = yield* DeliveryQueue
      const hub = yield* EventHub
      const reposService = yield* ReposService
      const payloads = yield* makePayloads(settings)
      const secrets = sealer(settings.security.SECRET_KEY, "webhook-secrets")
      const context = yield* Effect.context<never>()

      /** A sealed value, or `fallback` when it cannot be opened ([security] SECRET_KEY changed). */
      const openOr = <F>(sealed: string, fallback: F): string | F => {
        try {
          return secrets.open(sealed)
        } catch {
          return fallback
        }
      }

      const idOf = (id: string) => (/^\d{1,15}$/.test(id) ? Number(id) : undefined)

      const get = (level: HookLevel, id: string) =>
        Effect.gen(function* () {
          const n = idOf(id)
          const found = n === undefined ? Option.none<HookRow>() : yield* repo.find(level, n)
          if (Option.isNone(found)) return yield* Errors.notFound()
          return found.value
        })

      const present = (hook: HookRow): Hook => {
        const meta = hook.meta
        const config: Record<string, string> = {
          url: hook.url,
          content_type: CONTENT_TYPES[hook.contentType] ?? ""
        }
        if (hook.type === "slack" && meta !== null)
          for (const key of ["channel", "username", "icon_url", "color"]) config[key] = String(meta[key] ?? "")
        const authorization = hook.authorizationHeader === "" ? "" : redact(openOr(hook.authorizationHeader, "******"))
        return {
          id: hook.id,
          type: hook.type,
          branch_filter: hook.branchFilter,
          url: hook.url,
          config,
          events: eventsArray(hook.events),
          authorization_header: authorization,
          content_type: CONTENT_TYPES[hook.contentType] ?? "",
          metadata: meta,
          active: hook.active,
          updated_at: formatTime(hook.updatedAt),
          created_at: formatTime(hook.createdAt)
        }
      }

      const presentDelivery = (task: TaskRow): HookDelivery => ({
        id: task.id,
        uuid: task.uuid,
        event: coarseEvent(task.eventType),
        event_type: task.eventType,
        redelivery_of: task.redeliveryOf,
        delivered: task.isDelivered,
        success: task.isSucceed,
        attempts: task.attempts,
        duration_ms: task.durationMs,
        delivered_at: task.deliveredAt === null ? null : formatTime(task.deliveredAt),
        created_at: formatTime(task.createdAt),
        request: task.request,
        response: task.response
      })

      /**
       * Stores tasks and queues their deliveries, ordered per hook (inside the caller's transaction,
       * if any): three statements however many hooks. A task whose source key exists is skipped.
       */
      const queueTasks = (
        tasks: ReadonlyArray<{
          readonly hook: HookRow
          readonly eventType: string
          readonly payload: string
          readonly sourceKey: string | null
          readonly redeliveryOf: number | null
        }>
      ) =>
        Effect.gen(function* () {
          const inserted = yield* repo.insertTasks(
            tasks.map((task) => ({
              hookId: task.hook.id,
              uuid: randomUUID(),
              sourceKey: task.sourceKey,
              eventType: task.eventType,
              payload: task.payload,
              redeliveryOf: task.redeliveryOf
            }))
          )
          yield* queue.enqueue(
            DELIVERY_TOPIC,
            inserted.map((task) => ({
              payload: String(task.id),
              orderingKey: `hook:${task.hookId}`,
              kind: "webhook-delivery",
              key: `task-${task.id}`
            }))
          )
          return inserted
        })

      // ---------------------------------------------------------------------------------------
      // Events → tasks

      // An event's hook events (a push of 25 refs: 50) are handled together: the hooks read once
      // per repository, the rows the payloads share read once (PayloadReads), BUILD_AT_ONCE
      // payloads built side by side (each push's `git log`), then every task of up to
      // EVENT_CHUNK hook events stored and queued in one transaction, in the hook events' order.
      type Planned = {
        readonly hook: HookRow
        readonly eventType: string
        readonly payload: string
        readonly sourceKey: string
        readonly redeliveryOf: null
      }
      const buildChunk = (
        key: string,
        event: Exclude<Events.Event, { readonly _tag: "RenameUser" }>,
        all: ReadonlyArray<readonly [number, HookEvent]>,
        from: number,
        firingOf: Map<string, ReadonlyArray<HookRow>>
      ) =>
        Effect.gen(function* () {
          const planned: Array<{ n: number; hookEvent: HookEvent; hooks: ReadonlyArray<HookRow> }> = []
          for (const [n, hookEvent] of all.slice(from, from + EVENT_CHUNK)) {
            let repoId = event.repo.id
            let ownerId = event.repo.ownerId
            if (hookEvent.repoId !== undefined) {
              const target = yield* payloads.current(hookEvent.repoId)
              if (target === undefined) continue
              repoId = target.repo.id
              ownerId = target.owner.id
            }
            const where = `${repoId}:${ownerId}`
            let firing = firingOf.get(where)
            if (firing === undefined) {
              firing = yield* repo.firing(repoId, ownerId)
              firingOf.set(where, firing)
            }
            const branch = hookEvent.ref?.startsWith("refs/heads/") === true ? hookEvent.ref.slice(11) : undefined
            const hooks = firing.filter(
              (hook) =>
                receives(hook.events, hookEvent.type) &&
                (branch === undefined || branchMatches(hook.branchFilter, branch))
            )
            if (hooks.length > 0) planned.push({ n, hookEvent, hooks })
          }
          const tasks = yield* Effect.forEach(
            planned,
            ({ n, hookEvent, hooks }) =>
              Effect.map(hookEvent.build(payloads), (built) => {
                const payload = built as { readonly commits?: ReadonlyArray<unknown> }
                // Forgejo sends a push without commits (a tag's) only to the payload types.
                const zeroCommits = hookEvent.type === "push" && (payload.commits?.length ?? 0) === 0
                const text = JSON.stringify(payload, null, 2)
                return hooks
                  .filter((hook) => !zeroCommits || PAYLOAD_TYPES.has(hook.type))
                  .map(
                    (hook): Planned => ({
                      hook,
                      eventType: hookEvent.type,
                      payload: text,
                      sourceKey: `${key}:${n}:${hook.id}`,
                      redeliveryOf: null
                    })
                  )
              }),
            { concurrency: BUILD_AT_ONCE }
          )
          return tasks.flat()
        })

      const handleEvent = (event: Events.Event, key: string) =>
        Effect.gen(function* () {
          if (event._tag === "RenameUser") return // Forgejo has no webhook for a renamed account
          // Forgejo copies the default hooks before it announces a new repository: they hear it.
          // The in-process subscriber below may have copied them already; each is copied once.
          if (isNewRepository(event)) yield* copyDefaults(event.repo.id)
          const firingOf = new Map<string, ReadonlyArray<HookRow>>()
          const all = [...hookEventsOf(event).entries()]
          for (let from = 0; from < all.length; from += EVENT_CHUNK) {
            const tasks = yield* buildChunk(key, event, all, from, firingOf)
            if (tasks.length > 0) handOver(yield* sql.withTransaction(queueTasks(tasks)), tasks)
          }
        }).pipe(
          Effect.provideServiceEffect(
            PayloadReads,
            Effect.sync(() => new Map())
          ),
          Effect.catchCause((cause) =>
            Effect.andThen(
              Effect.logWarning(`could not queue the webhooks of a ${event._tag} event`, cause),
              Effect.fail(`could not queue the webhooks of a ${event._tag} event`)
            )
          )
        )

      // Where active hooks are, so that an event no hook can hear costs nothing (no queue row):
      // read at start, after every change made here, and every few seconds for other nodes' changes.
      // Until it can be read, every event is taken as heard (queued; the handler finds no hook).
      let targets = yield* repo.targets.pipe(
        Effect.catchCause(() =>
          Effect.succeed({ system: true, defaults: true, repos: new Set<number>(), owners: new Set<number>() })
        )
      )
      const refreshTargets = Effect.map(repo.targets, (found) => {
        targets = found
      })
      const isNewRepository = (event: Events.Event) =>
        event._tag === "CreateRepository" || event._tag === "MigrateRepository" || event._tag === "ForkRepository"
      const anyoneHears = (event: Events.Event) =>
        event._tag !== "RenameUser" &&
        (targets.system ||
          // The default hooks copied into a new repository hear its creation (see handleEvent).
          (targets.defaults && isNewRepository(event)) ||
          targets.repos.has(event.repo.id) ||
          targets.owners.has(event.repo.ownerId) ||
          // A fork is heard by the forked repository's hooks (and its owner's).
          (event._tag === "ForkRepository" && (targets.repos.size > 0 || targets.owners.size > 0)))
      yield* Effect.forkScoped(
        Effect.repeat(refreshTargets.pipe(Effect.ignoreCause({ log: "Warn" })), Schedule.spaced(TARGETS_REFRESH))
      )

      if (!settings.security.DISABLE_WEBHOOKS) {
        yield* hub.subscribeDurable({
          name: "webhooks",
          accepts: (event) => anyoneHears(event) && hookEventsOf(event).length > 0,
          handle: handleEvent
        })
        // Default hooks are copied into each new repository (Forgejo's CopyDefaultWebhooksToRepo),
        // here at once (they are there when the creation is answered) and by the handler above.
        yield* hub.subscribe({
          name: "webhooks-defaults",
          handle: (event) =>
            event._tag !== "RenameUser" && isNewRepository(event) ? copyDefaults(event.repo.id) : Effect.void
        })
      }

      const copyDefaults = (repoId: number) =>
        Effect.andThen(
          repo.copyDefaults(repoId),
          Effect.suspend(() => (targets.defaults ? refreshTargets : Effect.void))
        )

      // ---------------------------------------------------------------------------------------
      // Delivery

      // Tasks the event hop just stored, with the hooks it read for them, kept here for a few seconds:
      // the delivery that claims one moments later takes it from here rather than reading back what
      // was just written (issue 20: a statement less between a push and its first POST). Kept until
      // taken or KEPT_MS old, at most KEPT of them; a hook changed here drops them all (the hooks'
      // rows in them are as the hop read them); a retry reads the task afresh.
      const KEPT = 2000
      const KEPT_MS = 5000
      const justQueued = new Map<
        number,
        { readonly at: number; readonly found: { task: TaskRow; hook: Option.Option<HookRow> } }
      >()
      const handOver = (
        inserted: ReadonlyArray<TaskRow>,
        planned: ReadonlyArray<{ readonly hook: HookRow; readonly payload: string }>
      ) => {
        const now = Date.now()
        for (const [id, kept] of justQueued) {
          if (now - kept.at < KEPT_MS && justQueued.size + inserted.length <= KEPT) break
          justQueued.delete(id)
        }
        const hooks = new Map(planned.map((task) => [task.hook.id, task.hook]))
        for (const task of inserted) {
          const hook = hooks.get(task.hookId)
          if (hook !== undefined && justQueued.size < KEPT)
            justQueued.set(task.id, { at: now, found: { task, hook: Option.some(hook) } })
        }
      }
      const takeQueued = (taskId: number) => {
        const kept = justQueued.get(taskId)
        if (kept === undefined) return undefined
        justQueued.delete(taskId)
        return Date.now() - kept.at < KEPT_MS ? kept.found : undefined
      }

      // Deliveries to different hooks run side by side: their reads and their records are grouped,
      // one statement for all those waiting (src/lib/Batcher.ts), not one per delivery. A claimed
      // run of one hook's deliveries is read in one statement when its first one goes (the hook
      // as it was then: an edit reaches the rest of a run of at most `run` deliveries late).
      const loadTask = batcher((ids: ReadonlyArray<number>) =>
        Effect.runPromiseWith(context)(Effect.map(repo.tasksWithHooks(ids), (found) => ids.map((id) => found.get(id))))
      )
      const runsRead = new WeakMap<
        ReadonlyArray<Claimed>,
        Promise<Map<number, { task: TaskRow; hook: Option.Option<HookRow> }>>
      >()
      const readTask = (taskId: number, run: ReadonlyArray<Claimed>) => {
        if (run.length <= 1) return loadTask(taskId)
        let read = runsRead.get(run)
        if (read === undefined) {
          read = Effect.runPromiseWith(context)(repo.tasksWithHooks(run.map((claimed) => Number(claimed.payload))))
          runsRead.set(run, read)
        }
        return read.then((found) => found.get(taskId))
      }
      const recordAttempt = (taskId: number, hookId: number, attempt: Attempt) =>
        Effect.promise(() => recordBatch({ taskId, hookId, attempt }))
      const recordBatch = batcher(
        (attempts: ReadonlyArray<{ readonly taskId: number; readonly hookId: number; readonly attempt: Attempt }>) =>
          Effect.runPromiseWith(context)(
            Effect.as(
              repo.recordAttempts(attempts),
              attempts.map(() => undefined)
            )
          )
      )

      const deliver = (taskId: number, attempt: number, run: ReadonlyArray<Claimed>) =>
        Effect.gen(function* () {
          const kept = attempt === 1 ? takeQueued(taskId) : undefined
          const found = kept ?? (yield* Effect.promise(() => readTask(taskId, run)))
          if (found === undefined || found.task.isSucceed) return {}
          const task = found.task
          const hook = found.hook
          if (Option.isNone(hook)) return {}
          const row = hook.value
          const secret = openOr(row.secret, undefined)
          const authorization = openOr(row.authorizationHeader, undefined)
          const started = Date.now()
          const fail = (
            request: { url: string; http_method: string; headers: Record<string, string>; body: string },
            message: string
          ) =>
            Effect.as(
              recordAttempt(taskId, row.id, {
                attempt,
                succeeded: false,
                durationMs: 0,
                request,
                response: { status: 0, headers: {}, body: `Delivery: ${message}` }
              }),
              { error: message, final: true }
            )
          const unsent = { url: row.url, http_method: "POST", headers: {}, body: "" }
          if (secret === undefined || authorization === undefined)
            return yield* fail(unsent, "the hook's secret cannot be read: was [security] SECRET_KEY changed?")
          if (settings.security.DISABLE_WEBHOOKS)
            return yield* fail(unsent, "webhooks are disabled by the administrator")
          // Forgejo records a delivery to an inactive hook as failed, without sending (test deliveries).
          if (!row.active) return yield* fail(unsent, "the webhook is not active")
          const target = { ...row, type: row.type as HookType, secret }
          const needed = manifestNeeded(target, task.eventType, task.payload)
          const manifest = needed === undefined ? undefined : yield* readManifest(needed)
          let outgoing: ReturnType<typeof buildRequest>
          try {
            outgoing = buildRequest(target, task, manifest)
          } catch (error) {
            if (error instanceof CannotConvert) return yield* fail(unsent, error.message)
            throw error
          }
          const headers = { ...outgoing.headers, ...(authorization === "" ? {} : { Authorization: authorization }) }
          const recorded = {
            url: outgoing.url,
            http_method: outgoing.method,
            headers: { ...outgoing.headers, ...(authorization === "" ? {} : { Authorization: redact(authorization) }) },
            // The payload itself (JSON hooks) is in the task already: not stored again per attempt.
            ...(outgoing.body === task.payload ? {} : { body: outgoing.body })
          }
          const answer = yield* send(settings, { ...outgoing, headers })
          const succeeded = answer.error === undefined && answer.status >= 200 && answer.status < 300
          const record = recordBatch({
            taskId,
            hookId: row.id,
            attempt: {
              attempt,
              succeeded,
              durationMs: Date.now() - started,
              request: recorded,
              response: { status: answer.status, headers: answer.headers, body: answer.body }
            }
          })
          // Delivered: the hook's next delivery goes while this one's record is written; its queue
          // row goes once the record is in (a crash before then sends it again, as before).
          if (succeeded) return { settled: record }
          yield* Effect.promise(() => record)
          // A network error (no answer) or a 5xx is worth another attempt; a refusal or any other answer is not.
          const retryable =
            answer.refused !== true && (answer.status >= 500 || (answer.error !== undefined && answer.status === 0))
          return {
            error: answer.error ?? `the receiver answered ${answer.status}`,
            final: !retryable
          }
        })

      const readManifest = (needed: { repoId: number; sha: string; path: string }) =>
        Effect.gen(function* () {
          const found = yield* payloads.current(needed.repoId)
          if (found === undefined) return undefined
          const out = yield* Effect.option(
            Git.inRepo(reposService.pathOf(found.owner, found.repo), ["show", `${needed.sha}:${needed.path}`])
          )
          return Option.isNone(out) ? undefined : out.value.stdout.toString("utf8")
        })

      // ---------------------------------------------------------------------------------------
      // History cleanup (Forgejo's cron task cleanup_hook_task_table)

      const cleanupSettings = settings["cron.cleanup_hook_task_table"]
      const cleanup = repo.cleanup(
        cleanupSettings.CLEANUP_TYPE === "PerWebhook"
          ? { type: "PerWebhook", keep: cleanupSettings.NUMBER_TO_KEEP }
          : { type: "OlderThan", seconds: cleanupSettings.OLDER_THAN }
      )
      // Settings checked the schedule: it parses.
      const nextCleanup = cronSchedule(cleanupSettings.SCHEDULE)!
      const cleanupLoop = Effect.forever(
        Effect.suspend(() => Effect.sleep(nextCleanup(new Date()))).pipe(
          Effect.andThen(cleanup),
          Effect.tap((removed) =>
            removed > 0 ? Effect.logDebug(`webhooks: removed ${removed} old deliveries from the history`) : Effect.void
          ),
          Effect.catchCause((cause) =>
            Effect.logWarning("webhooks: could not clean up old deliveries (tried again at the next run)", cause)
          )
        )
      )

      let started = false
      const abort = new AbortController()
      const running: Array<Promise<void>> = []
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          abort.abort()
          return Promise.allSettled(running)
        })
      )
      const start = Effect.sync(() => {
        if (started || settings.security.DISABLE_WEBHOOKS) return
        started = true
        running.push(
          queue.listen(
            DELIVERY_TOPIC,
            (claimed, run) =>
              Effect.runPromiseWith(context)(
                deliver(Number(claimed.payload), claimed.attempt, run).pipe(
                  Effect.catchCause((cause) =>
                    Effect.as(Effect.logWarning("a webhook delivery failed", cause), { error: "internal error" })
                  )
                )
              ),
            {
              attempts: settings.webhook.MAX_RETRIES + 1,
              retryDelayMs: settings.webhook.RETRY_DELAY * 1000,
              ...claimBounds(settings.webhook.QUEUE_LENGTH),
              deadlineMs: settings.webhook.DELIVER_TIMEOUT * 1000 + 30_000,
              signal: abort.signal
            }
          )
        )
        if (cleanupSettings.ENABLED)
          running.push(Effect.runPromiseWith(context)(cleanupLoop, { signal: abort.signal }).catch(() => undefined))
      })

      // ---------------------------------------------------------------------------------------
      // CRUD

      const create = (level: HookLevel, input: CreateInput, form?: HookForm) =>
        Effect.gen(function* () {
          const valid = yield* validateCreate(level, input, form?.events)
          const created = yield* repo.insert({
            ...valid,
            secret: secrets.seal(valid.secret),
            authorizationHeader: secrets.seal(valid.authorizationHeader)
          })
          yield* refreshTargets
          return created
        })

      const edit = (level: HookLevel, id: string, input: EditInput, form?: HookForm) =>
        Effect.gen(function* () {
          const hook = yield* get(level, id)
          const valid = yield* validateEdit(hook, input, form?.events)
          const keep = form?.keepAuthorization === true && valid.authorizationHeader === ""
          yield* repo.update(hook.id, {
            ...valid,
            authorizationHeader: keep ? hook.authorizationHeader : secrets.seal(valid.authorizationHeader),
            ...(form?.secret === undefined ? {} : { secret: secrets.seal(form.secret) })
          })
          yield* refreshTargets
          justQueued.clear()
          return yield* get(level, id)
        })

      const taskOf = (level: HookLevel, id: string, delivery: string) =>
        Effect.gen(function* () {
          const hook = yield* get(level, id)
          const n = idOf(delivery)
          const task = n === undefined ? Option.none<TaskRow>() : yield* repo.task(n)
          if (Option.isNone(task) || task.value.hookId !== hook.id) return yield* Errors.notFound()
          return { hook, task: task.value }
        })

      const test = (opened: OpenedRepository, caller: Principal, id: string, ref: string | undefined) =>
        Effect.gen(function* () {
          const hook = yield* get({ kind: "repo", repoId: opened.repo.id }, id)
          if (opened.repo.isEmpty) {
            return yield* Errors.conflict("the repository is empty: there is no commit to send in a test delivery")
          }
          const wanted = ref?.trim() ?? ""
          const revision = wanted === "" ? `refs/heads/${opened.repo.defaultBranch}` : wanted
          const sha = yield* Git.revParse(opened.path, `${revision}^{commit}`).pipe(
            Effect.orElseSucceed(() => Option.none<string>())
          )
          if (Option.isNone(sha)) return yield* Errors.notFound()
          const payload = yield* payloads.testPush(
            { repo: opened.repo, owner: opened.owner },
            caller.user,
            wanted === "" ? `refs/heads/${opened.repo.defaultBranch}` : wanted,
            sha.value
          )
          // A test delivery bypasses the hook's events and branch filter (Forgejo's TestHook).
          yield* sql.withTransaction(
            queueTasks([
              {
                hook,
                eventType: "push",
                payload: JSON.stringify(payload, null, 2),
                sourceKey: null,
                redeliveryOf: null
              }
            ])
          )
        })

      return WebhooksService.of({
        present,
        presentDelivery,
        list: (level, page) => repo.list(level, page),
        get,
        create,
        edit,
        remove: (level, id) =>
          Effect.flatMap(get(level, id), (hook) =>
            Effect.andThen(
              repo.remove(hook.id),
              Effect.andThen(
                Effect.sync(() => justQueued.clear()),
                refreshTargets
              )
            )
          ),
        deliveries: (level, id, page) => Effect.flatMap(get(level, id), (hook) => repo.tasks(hook.id, page)),
        delivery: (level, id, delivery) => Effect.map(taskOf(level, id, delivery), ({ task }) => task),
        redeliver: (level, id, delivery) =>
          Effect.gen(function* () {
            const { hook, task } = yield* taskOf(level, id, delivery)
            const copy = yield* sql.withTransaction(
              queueTasks([
                { hook, eventType: task.eventType, payload: task.payload, sourceKey: null, redeliveryOf: task.id }
              ])
            )
            return copy[0]!
          }),
        test,
        cleanup,
        start
      })
    })
  )
}

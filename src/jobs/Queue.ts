// The one durable, ordered delivery queue (migration 0015, `delivery_queue`): work that must
// happen once, in order, even across a crash — federation's outbound deliveries (topic
// `federation`, through federation/Store.ts's Fedify adapter), the event hub's durable consumers
// (src/events: `events:<consumer>`), webhooks next.
//
// Why a table rather than effect/workflow jobs: a Like and its Undo to one server must arrive in
// that order, also when the first one fails and is retried; independent workflow runs cannot
// promise that, a table taken in id order per ordering key can. So:
// - a row is taken only when it is due and no earlier row of its topic has the same ordering key:
//   one at a time per key, in order; rows of different keys run side by side (`concurrency`);
// - a failed row keeps its place (the later ones of its key wait behind it) and is retried after a
//   doubling delay until `attempts` run out (or the handler says the failure is final);
// - a taken row is leased (LEASE_MS) and the lease renewed while its handler runs, so the row of
//   a node that died mid-delivery (SIGKILL) is taken again once its lease ends, not never; a row is
//   deleted only after its handler finished, so what a crash interrupts runs again (handlers are
//   written to be idempotent, or to accept that rare repeat);
// - every row is also a `jobs` row (its kind is the caller's), so attempts and the last error are
//   readable at GET /admin/jobs like every other background job.
// `enqueue` runs on the caller's connection: inside a transaction it is part of it, so work queued
// for a database change exists exactly when the change does.
//
// SQL errors are defects at this module's boundary (the database being away is not the caller's
// to handle); the listen loop survives them and tries again.
import { randomUUID } from "node:crypto"
import { Array as Arr, Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql/SqlClient"

export interface QueueItem {
  /** The work, as text (the handler reads it back). */
  readonly payload: string
  /** Rows of one topic with the same key are handled one at a time, in the order they were queued. */
  readonly orderingKey?: string | null | undefined
  /** The `jobs` row's kind (what GET /admin/jobs shows). */
  readonly kind: string
  readonly repoId?: number | undefined
  /** Not before this many milliseconds from now. */
  readonly delayMs?: number | undefined
  /**
   * Makes queueing idempotent: an item whose key was queued under the topic before (even long
   * done) is not queued again — for work that may be queued twice when a crash repeats its cause.
   */
  readonly key?: string | undefined
}

export interface Claimed {
  readonly id: string
  readonly payload: string
  readonly jobKey: string
  /** This attempt's number, from 1. */
  readonly attempt: number
}

/** What one attempt came to: nothing is success; `final` gives up at once; `delayMs` is a minimum. */
export interface Outcome {
  readonly error?: string | undefined
  readonly final?: boolean | undefined
  readonly delayMs?: number | undefined
}

export interface ListenOptions {
  readonly attempts: number
  /** The delay before the second attempt; each later one doubles. */
  readonly retryDelayMs: number
  /** Handlers running at once (different ordering keys). */
  readonly concurrency?: number | undefined
  /** A handler that has not finished by then counts as failed (default 120 s). */
  readonly deadlineMs?: number | undefined
  readonly signal?: AbortSignal | undefined
}

export type Handler = (claimed: Claimed) => Promise<Outcome>

/** How long a claimed row stays invisible to other nodes, renewed while it is handled. */
export const LEASE_MS = 30_000

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/**
 * Rings by name. A ticket taken for a name settles at the first ring of it after the ticket was
 * taken, however long its holder takes to await it — so a ring that comes while a listener is still
 * busy (claiming, working out how long to wait) is not lost, as it would be to a callback registered
 * only once the listener waits. `drop` a ticket when done with it.
 */
export const doorbell = () => {
  const waiting = new Map<string, Set<() => void>>()
  return {
    ticket: (name: string): { readonly rung: Promise<void>; readonly drop: () => void } => {
      const { promise, resolve } = Promise.withResolvers<void>()
      let set = waiting.get(name)
      if (set === undefined) waiting.set(name, (set = new Set()))
      const holders = set
      holders.add(resolve)
      return {
        rung: promise,
        drop: () => {
          holders.delete(resolve)
          if (holders.size === 0 && waiting.get(name) === holders) waiting.delete(name)
        }
      }
    },
    ring: (name: string): void => {
      const holders = waiting.get(name)
      waiting.delete(name)
      for (const resolve of holders ?? []) resolve()
    }
  }
}

export class DeliveryQueue extends Context.Service<
  DeliveryQueue,
  {
    /** Queues `items` under `topic` on the caller's connection (inside its transaction, if any). */
    readonly enqueue: (topic: string, items: ReadonlyArray<QueueItem>) => Effect.Effect<void>
    /** Handles the topic's rows until `signal` aborts (see the top of this file). */
    readonly listen: (topic: string, handler: Handler, options: ListenOptions) => Promise<void>
    /** Whether the topic has rows left (an earlier run's, to resume). */
    readonly pending: (topic: string) => Effect.Effect<boolean>
    readonly depth: (topic: string) => Effect.Effect<{ readonly queued: number; readonly ready: number }>
  }
>()("hearth/jobs/DeliveryQueue") {
  static readonly layer = Layer.effect(
    DeliveryQueue,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const context = yield* Effect.context<never>()
      const run = <A>(effect: Effect.Effect<A, unknown>) => Effect.runPromiseWith(context)(effect)

      // The listeners of each topic in this process are rung when something queued is committed
      // (`afterCommit`: a row queued inside a transaction is invisible until then, and a listener
      // rung before would find nothing and wait for its next look). Polling stays as the fallback
      // for rows other nodes queue and rows that become due later: after a ring a listener that
      // finds nothing looks again soon for a few seconds before its long wait.
      const bell = doorbell()
      const rungAt = new Map<string, number>()
      const wake = (topic: string) => {
        rungAt.set(topic, Date.now())
        bell.ring(topic)
      }

      // Two statements however many items: their `jobs` rows at once (a key queued before is
      // skipped: ON CONFLICT leaves it out of RETURNING), then the queue rows of those inserted.
      const enqueue = (topic: string, items: ReadonlyArray<QueueItem>) =>
        Effect.gen(function* () {
          if (!Arr.isReadonlyArrayNonEmpty(items)) return
          const now = Date.now()
          const keyed = Arr.map(items, (item) => ({ item, key: `${topic}:${item.key ?? randomUUID()}` }))
          const inserted = yield* sql<{ idempotency_key: string }>`INSERT INTO jobs ${sql.insert(
            Arr.map(keyed, ({ item, key }) => ({
              kind: item.kind,
              idempotency_key: key,
              repo_id: item.repoId ?? null,
              doer_id: null
            }))
          )} ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key`
          const fresh = new Set(inserted.map((row) => row.idempotency_key))
          // A key given twice in one call is queued once (the first).
          const rows = keyed
            .filter(({ key }) => fresh.delete(key))
            .map(({ item, key }) => ({
              topic,
              payload: item.payload,
              ordering_key: item.orderingKey ?? null,
              job_key: key,
              deliver_at: new Date(now + Math.max(0, item.delayMs ?? 0))
            }))
          if (!Arr.isArrayNonEmpty(rows)) return
          yield* sql`INSERT INTO delivery_queue ${sql.insert(rows)}`
          yield* sql.afterCommit(Effect.sync(() => wake(topic)))
        }).pipe(Effect.orDie)

      /**
       * Up to `limit` due rows, each the earliest left of its ordering key (so never two of one key),
       * leased to this node, their `jobs` rows marked running in the same statement (JobsRepo's
       * `started`, folded in: one round trip per claim, not one per row).
       */
      const claim = (topic: string, limit: number) =>
        run(sql<{
          id: string
          payload: string
          job_key: string
          attempts: number
        }>`WITH claimed AS (UPDATE delivery_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)}, attempts = attempts + 1
            WHERE id IN (SELECT q.id FROM delivery_queue q
              WHERE q.topic = ${topic} AND q.deliver_at <= now() AND (q.locked_until IS NULL OR q.locked_until < now())
                AND (q.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM delivery_queue p
                  WHERE p.topic = q.topic AND p.ordering_key = q.ordering_key AND p.id < q.id))
              ORDER BY q.deliver_at, q.id LIMIT ${limit} FOR UPDATE SKIP LOCKED)
            RETURNING id, payload, job_key, attempts, deliver_at),
          started AS (UPDATE jobs SET state = 'running', attempts = GREATEST(jobs.attempts, claimed.attempts), updated_at = now()
            FROM claimed WHERE jobs.idempotency_key = claimed.job_key)
          SELECT * FROM claimed ORDER BY deliver_at, id`).then((rows) =>
          rows.map(
            (row): Claimed => ({
              id: String(row.id),
              payload: row.payload,
              jobKey: row.job_key,
              attempt: Number(row.attempts)
            })
          )
        )

      /** Milliseconds until the topic's next row is due (capped: other nodes may queue too). */
      const idle = async (topic: string): Promise<number> => {
        if (Date.now() - (rungAt.get(topic) ?? 0) < 5_000) return 250
        // A row leased by a node that died is due again when its lease ends.
        const rows = await run(sql`SELECT
            EXTRACT(EPOCH FROM (min(GREATEST(deliver_at, COALESCE(locked_until, deliver_at))) - now())) * 1000 AS wait
          FROM delivery_queue WHERE topic = ${topic}`)
        const wait = rows[0]?.wait === null || rows[0]?.wait === undefined ? Infinity : Number(rows[0].wait)
        return Math.min(30_000, Math.max(50, wait))
      }

      const handle = async (claimed: Claimed, handler: Handler, options: ListenOptions): Promise<void> => {
        const deadline = options.deadlineMs ?? 120_000
        let timer: NodeJS.Timeout | undefined
        // The lease is renewed while the handler runs; the last renewal is awaited before the outcome is written.
        let renewing: Promise<unknown> = Promise.resolve()
        const renewal = setInterval(() => {
          renewing = run(sql`UPDATE delivery_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)}
            WHERE id = ${claimed.id} AND locked_until IS NOT NULL`).catch(() => undefined)
        }, LEASE_MS / 3)
        let outcome: Outcome
        try {
          outcome = await Promise.race([
            Promise.resolve().then(() => handler(claimed)),
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`the job did not finish within ${deadline / 1000} s`)),
                deadline
              )
            })
          ])
        } catch (error) {
          outcome = { error: messageOf(error) }
        } finally {
          clearTimeout(timer)
          clearInterval(renewal)
        }
        await renewing
        // The row goes (or waits for its retry) and the `jobs` row records the outcome in one
        // statement (JobsRepo's `succeeded` / `attemptFailed`, folded in).
        if (outcome.error === undefined) {
          await run(sql`WITH gone AS (DELETE FROM delivery_queue WHERE id = ${claimed.id})
            UPDATE jobs SET state = 'succeeded', updated_at = now(), finished_at = now()
            WHERE idempotency_key = ${claimed.jobKey}`)
          return
        }
        const last = outcome.final === true || claimed.attempt >= options.attempts
        const delay = Math.max(options.retryDelayMs * 2 ** (claimed.attempt - 1), outcome.delayMs ?? 0)
        const row = last
          ? sql`DELETE FROM delivery_queue WHERE id = ${claimed.id}`
          : sql`UPDATE delivery_queue SET deliver_at = ${new Date(Date.now() + delay)}, locked_until = NULL
              WHERE id = ${claimed.id}`
        await run(sql`WITH moved AS (${row})
          UPDATE jobs SET state = ${last ? "failed" : "retrying"}, last_error = ${outcome.error.slice(0, 2000)},
            updated_at = now(), finished_at = ${last ? sql`now()` : null} WHERE idempotency_key = ${claimed.jobKey}`)
      }

      const listen = async (topic: string, handler: Handler, options: ListenOptions): Promise<void> => {
        const signal = options.signal
        const limit = options.concurrency ?? 4
        const running = new Set<Promise<void>>()
        // A handler finishing frees a slot (and may let the next row of its key go).
        const finished = doorbell()
        while (signal?.aborted !== true) {
          // Taken before the claim: a row committed while this claim runs, or while the wait below is
          // worked out, ends that wait at once (CI once saw a ring lost in that gap, and a 30 s wait).
          const tickets = [bell.ticket(topic), finished.ticket("")]
          let timer: NodeJS.Timeout | undefined
          let stopWaiting = () => {}
          try {
            let claimed: ReadonlyArray<Claimed> = []
            if (running.size < limit) {
              claimed = await claim(topic, limit - running.size).catch(() => []) // the database may be closing, or briefly away
            }
            if (claimed.length > 0) {
              for (const one of claimed) {
                const handled: Promise<void> = handle(one, handler, options)
                  .catch(() => undefined)
                  .finally(() => {
                    running.delete(handled)
                    finished.ring("")
                  })
                running.add(handled)
              }
              continue
            }
            const wait = running.size >= limit ? 30_000 : await idle(topic).catch(() => 1000)
            await new Promise<void>((resolve) => {
              stopWaiting = () => resolve()
              timer = setTimeout(stopWaiting, wait)
              timer.unref?.()
              for (const ticket of tickets) void ticket.rung.then(stopWaiting)
              signal?.addEventListener("abort", stopWaiting)
            })
          } finally {
            for (const ticket of tickets) ticket.drop()
            clearTimeout(timer)
            signal?.removeEventListener("abort", stopWaiting)
          }
        }
        await Promise.allSettled(running)
      }

      const pending = (topic: string) =>
        Effect.orDie(Effect.map(sql`SELECT 1 FROM delivery_queue WHERE topic = ${topic} LIMIT 1`, (r) => r.length > 0))

      const depth = (topic: string) =>
        Effect.orDie(
          Effect.map(
            sql`SELECT count(*) AS queued, count(*) FILTER (WHERE deliver_at <= now()) AS ready
              FROM delivery_queue WHERE topic = ${topic}`,
            (rows) => ({ queued: Number(rows[0]!.queued), ready: Number(rows[0]!.ready) })
          )
        )

      return DeliveryQueue.of({ enqueue, listen, pending, depth })
    })
  )
}

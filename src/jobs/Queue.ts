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
// - a listener may take a run of a key's next rows at once (`run`) and handle them one after
//   another, handing back untried the rest of a run whose row failed (the key's backlog then costs
//   one claim per run, not per row); rows done are removed together, one statement for many;
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
import { batcher } from "../lib/Batcher.ts"

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
  /**
   * A success whose bookkeeping the handler still writes (a delivery's record): the row is removed
   * once this settles, while the next row of the run already goes. If it rejects, the row stays
   * until its lease ends and is then taken again, as after a crash.
   */
  readonly settled?: Promise<unknown> | undefined
}

export interface ListenOptions {
  readonly attempts: number
  /** The delay before the second attempt; each later one doubles. */
  readonly retryDelayMs: number
  /** Handlers running at once (different ordering keys). */
  readonly concurrency?: number | undefined
  /**
   * Rows of one ordering key taken in one claim and handled one after another (default 1): fewer
   * claims when a key has a backlog, and the next row goes without waiting for a claim.
   */
  readonly run?: number | undefined
  /** A handler that has not finished by then counts as failed (default 120 s). */
  readonly deadlineMs?: number | undefined
  readonly signal?: AbortSignal | undefined
  /** Told after each claim how many runs it took (tests and benchmarks count the claims). */
  readonly onClaim?: ((runs: number) => void) | undefined
}

/** `run` is the claimed run `claimed` belongs to (the same array for each of its rows): what a handler may read ahead. */
export type Handler = (claimed: Claimed, run: ReadonlyArray<Claimed>) => Promise<Outcome>

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
      // for rows other processes queue (a command) and rows that become due later (a retry, a
      // lease that ended): a listener that finds nothing waits until the topic's next row is due.
      // It does not look again on the off chance: every row queued here rings, and each ring
      // (counted, `rings`) is either claimed for or, when its key was busy or the listener full,
      // makes the run that was in the way claim again when it ends (`listen`).
      const bell = doorbell()
      const rings = new Map<string, number>()
      const wake = (topic: string) => {
        rings.set(topic, (rings.get(topic) ?? 0) + 1)
        bell.ring(topic)
      }

      // One statement however many items, with one parameter: the items as a JSON array (a
      // multi-row VALUES of 200 checks was 1,800 parameters, each bound, typed and serialized on
      // its own: ~11 ms of the embedded database's time on the server's thread). Their `jobs` rows
      // at once (a key queued before, or earlier in the same call, is skipped: ON CONFLICT leaves it
      // out of RETURNING), then the queue rows of those inserted, in the items' order (a key's rows
      // run in id order).
      const enqueue = (topic: string, items: ReadonlyArray<QueueItem>) =>
        Effect.gen(function* () {
          if (!Arr.isReadonlyArrayNonEmpty(items)) return
          const now = Date.now()
          const input = JSON.stringify(
            items.map((item) => ({
              kind: item.kind,
              key: `${topic}:${item.key ?? randomUUID()}`,
              repo: item.repoId ?? null,
              payload: item.payload,
              ordering: item.orderingKey ?? null,
              at: new Date(now + Math.max(0, item.delayMs ?? 0)).toISOString()
            }))
          )
          const queued = yield* sql<{ queued: number }>`WITH input AS (
              SELECT e.n, e.v->>'kind' AS kind, e.v->>'key' AS key, (e.v->>'repo')::int8 AS repo_id,
                e.v->>'payload' AS payload, e.v->>'ordering' AS ordering_key, (e.v->>'at')::timestamptz AS deliver_at
              FROM json_array_elements(${input}::json) WITH ORDINALITY AS e(v, n)
            ), fresh AS (
              INSERT INTO jobs (kind, idempotency_key, repo_id, doer_id)
              SELECT kind, key, repo_id, NULL FROM input ORDER BY n
              ON CONFLICT (idempotency_key) DO NOTHING RETURNING idempotency_key
            ), firsts AS (
              SELECT DISTINCT ON (key) * FROM input WHERE key IN (SELECT idempotency_key FROM fresh) ORDER BY key, n
            ), rows AS (
              INSERT INTO delivery_queue (topic, payload, ordering_key, job_key, deliver_at)
              SELECT ${topic}, payload, ordering_key, key, deliver_at FROM firsts ORDER BY n RETURNING 1
            )
            SELECT count(*)::int AS queued FROM rows`
          if (Number(queued[0]?.queued ?? 0) === 0) return
          yield* sql.afterCommit(Effect.sync(() => wake(topic)))
        }).pipe(Effect.orDie)

      /** Each ordering key of `topic` once, skipping through the `(topic, ordering_key, id)` index. */
      const keysOf = (topic: string) => sql`keys AS (
            (SELECT ordering_key AS k FROM delivery_queue
              WHERE topic = ${topic} AND ordering_key IS NOT NULL ORDER BY ordering_key LIMIT 1)
            UNION ALL
            SELECT (SELECT q.ordering_key FROM delivery_queue q
                WHERE q.topic = ${topic} AND q.ordering_key > keys.k ORDER BY q.ordering_key LIMIT 1)
              FROM keys WHERE keys.k IS NOT NULL)`

      /**
       * Runs of due rows for up to `keys` ordering keys: each run the earliest `run` rows left of its
       * key, none of them nor any earlier row of the key leased or not yet due (so a key is never in
       * two runs at once, and its rows stay in order); a row without a key is a run of one. Leased to
       * this node, their `jobs` rows marked running in the same statement (JobsRepo's `started`,
       * folded in: one round trip per claim, not one per row). A run whose head another node locked
       * meanwhile is left out from its first row so locked on (SKIP LOCKED must not leave a gap in a
       * key's order): `gaps` is each key's first candidate not locked here.
       * Only each key's first `run` rows are read (the keys found by skipping through the
       * `(topic, ordering_key, id)` index, one probe per key): a hook with 10,000 deliveries queued
       * costs a claim its 50 next rows, not a sort of all 10,000. Rows without a key are read
       * through `(topic, deliver_at)`, only the due and unleased ones, `keys` at most.
       */
      const claim = (topic: string, keys: number, run_: number) =>
        run(sql<{
          id: string
          payload: string
          job_key: string
          attempts: number
          k: string
          more: boolean
        }>`WITH RECURSIVE ${keysOf(topic)},
          firsts AS (
            SELECT f.id, f.deliver_at, f.locked_until, keys.k FROM keys CROSS JOIN LATERAL (
                SELECT q.id, q.deliver_at, q.locked_until FROM delivery_queue q
                WHERE q.topic = ${topic} AND q.ordering_key = keys.k ORDER BY q.id LIMIT ${run_ + 1}) f
            UNION ALL
            (SELECT q.id, q.deliver_at, q.locked_until, 'row:' || q.id FROM delivery_queue q
              WHERE q.topic = ${topic} AND q.ordering_key IS NULL AND q.deliver_at <= now()
                AND (q.locked_until IS NULL OR q.locked_until < now())
              ORDER BY q.deliver_at, q.id LIMIT ${keys})),
          ranked AS (SELECT id, deliver_at, k, row_number() OVER w AS n,
              count(*) FILTER (WHERE deliver_at > now() OR locked_until >= now()) OVER w AS blocked
            FROM firsts WINDOW w AS (PARTITION BY k ORDER BY id)),
          heads AS (SELECT k FROM ranked WHERE n = 1 AND blocked = 0 ORDER BY deliver_at, id LIMIT ${keys}),
          candidates AS (SELECT r.id, r.k FROM ranked r JOIN heads h ON h.k = r.k WHERE r.n <= ${run_} AND r.blocked = 0),
          locked AS (SELECT q.id, COALESCE(q.ordering_key, 'row:' || q.id) AS k FROM delivery_queue q
            WHERE q.id IN (SELECT id FROM candidates) FOR UPDATE SKIP LOCKED),
          gaps AS (SELECT k, min(id) AS id FROM candidates WHERE id NOT IN (SELECT id FROM locked) GROUP BY k),
          claimed AS (UPDATE delivery_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)}, attempts = attempts + 1
            WHERE id IN (SELECT l.id FROM locked l WHERE NOT EXISTS (SELECT 1 FROM gaps g WHERE g.k = l.k AND g.id < l.id))
            RETURNING id, payload, job_key, attempts, COALESCE(ordering_key, 'row:' || id) AS k),
          started AS (UPDATE jobs SET state = 'running', attempts = GREATEST(jobs.attempts, claimed.attempts), updated_at = now()
            FROM claimed WHERE jobs.idempotency_key = claimed.job_key),
          behind AS (SELECT DISTINCT k FROM ranked WHERE n > ${run_})
          SELECT c.*, b.k IS NOT NULL AS more FROM claimed c LEFT JOIN behind b ON b.k = c.k ORDER BY c.id`).then(
          (rows) => {
            // In id order: each key's run in its order, the runs by their first row.
            const runs = new Map<string, Array<Claimed>>()
            const more = new Set<string>()
            for (const row of rows) {
              if (row.more === true) more.add(row.k)
              const one: Claimed = {
                id: String(row.id),
                payload: row.payload,
                jobKey: row.job_key,
                attempt: Number(row.attempts)
              }
              const list = runs.get(row.k)
              if (list === undefined) runs.set(row.k, [one])
              else list.push(one)
            }
            return [...runs].map(([k, run]) => ({ run, more: more.has(k) }))
          }
        )

      /** Milliseconds until the topic's next row is due (capped: other nodes may queue too). */
      const idle = async (topic: string): Promise<number> => {
        // A row leased by a node that died is due again when its lease ends. Only each key's first
        // row counts (found as the claim finds them): the rows behind it wait for it, and when it
        // goes here its run rings if they may be claimable (`listen`); counting them made a
        // listener whose keys were all busy look every 50 ms.
        const rows = await run(sql`WITH RECURSIVE ${keysOf(topic)},
          heads AS (
            SELECT (SELECT GREATEST(q.deliver_at, COALESCE(q.locked_until, q.deliver_at)) FROM delivery_queue q
                WHERE q.topic = ${topic} AND q.ordering_key = keys.k ORDER BY q.id LIMIT 1) AS due
              FROM keys WHERE keys.k IS NOT NULL
            UNION ALL
            SELECT GREATEST(deliver_at, COALESCE(locked_until, deliver_at)) FROM delivery_queue
              WHERE topic = ${topic} AND ordering_key IS NULL)
          SELECT EXTRACT(EPOCH FROM (min(due) - now())) * 1000 AS wait FROM heads`)
        const wait = rows[0]?.wait === null || rows[0]?.wait === undefined ? Infinity : Number(rows[0].wait)
        return Math.min(30_000, Math.max(50, wait))
      }

      // Done rows go (and their `jobs` rows say so) together: one statement for every row finished
      // while the previous one ran, not one per row.
      const succeeded = batcher<Claimed, void>(async (rows) => {
        await run(sql`WITH gone AS (DELETE FROM delivery_queue WHERE id = ANY(${rows.map((r) => r.id)}::int8[]))
          UPDATE jobs SET state = 'succeeded', updated_at = now(), finished_at = now()
          WHERE idempotency_key = ANY(${rows.map((r) => r.jobKey)}::text[])`)
        return rows.map(() => undefined)
      })

      /** One row: its handler, bounded by the deadline; what it came to. */
      const attempt = async (
        claimed: Claimed,
        run_: ReadonlyArray<Claimed>,
        handler: Handler,
        options: ListenOptions
      ): Promise<Outcome> => {
        const deadline = options.deadlineMs ?? 120_000
        let timer: NodeJS.Timeout | undefined
        try {
          return await Promise.race([
            Promise.resolve().then(() => handler(claimed, run_)),
            new Promise<never>((_, reject) => {
              timer = setTimeout(
                () => reject(new Error(`the job did not finish within ${deadline / 1000} s`)),
                deadline
              )
            })
          ])
        } catch (error) {
          return { error: messageOf(error) }
        } finally {
          clearTimeout(timer)
        }
      }

      /**
       * A claimed run, one row after another. A row that did not succeed keeps its place (retried
       * later, or gone when final) and the rest of the run is handed back untried, as it was (the
       * key's later rows wait behind it); so is the rest when the listener stops. The rows still
       * held have their lease renewed while the run lasts; a done row's removal is not waited for
       * before the next row goes (grouped with other runs' in one statement), only before the run ends.
       */
      const handleRun = async (
        rows: ReadonlyArray<Claimed>,
        handler: Handler,
        options: ListenOptions
      ): Promise<boolean> => {
        let next = 0
        // Whether every row of the run is done for good (none retried later, handed back or left leased).
        let whole = true
        // The last renewal is awaited before any outcome is written.
        let renewing: Promise<unknown> = Promise.resolve()
        const renewal = setInterval(() => {
          const held = rows.slice(next).map((row) => row.id)
          renewing = run(sql`UPDATE delivery_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)}
            WHERE id = ANY(${held}::int8[]) AND locked_until IS NOT NULL`).catch(() => undefined)
        }, LEASE_MS / 3)
        const done: Array<Promise<void>> = []
        try {
          for (; next < rows.length && options.signal?.aborted !== true; next++) {
            const claimed = rows[next]!
            const outcome = await attempt(claimed, rows, handler, options)
            await renewing
            if (outcome.error === undefined) {
              done.push(
                outcome.settled === undefined
                  ? succeeded(claimed)
                  : outcome.settled.then(
                      () => succeeded(claimed),
                      () => {
                        whole = false // left leased: taken again when the lease ends
                      }
                    )
              )
              continue
            }
            // The row goes (or waits for its retry) and the `jobs` row records the outcome in one
            // statement (JobsRepo's `attemptFailed`, folded in).
            const last = outcome.final === true || claimed.attempt >= options.attempts
            const delay = Math.max(options.retryDelayMs * 2 ** (claimed.attempt - 1), outcome.delayMs ?? 0)
            const row = last
              ? sql`DELETE FROM delivery_queue WHERE id = ${claimed.id}`
              : sql`UPDATE delivery_queue SET deliver_at = ${new Date(Date.now() + delay)}, locked_until = NULL
                WHERE id = ${claimed.id}`
            await run(sql`WITH moved AS (${row})
              UPDATE jobs SET state = ${last ? "failed" : "retrying"}, last_error = ${outcome.error.slice(0, 2000)},
                updated_at = now(), finished_at = ${last ? sql`now()` : null} WHERE idempotency_key = ${claimed.jobKey}`)
            // A row given up on no longer holds back the next one; a retried one does.
            if (!last) {
              next++
              whole = false
              break
            }
          }
        } finally {
          clearInterval(renewal)
          await renewing
          const untried = rows.slice(next)
          if (untried.length > 0) {
            whole = false
            await run(sql`WITH back AS (UPDATE delivery_queue SET locked_until = NULL, attempts = attempts - 1
                WHERE id = ANY(${untried.map((row) => row.id)}::int8[]))
              UPDATE jobs SET state = 'queued', updated_at = now() WHERE idempotency_key = ANY(${untried.map((row) => row.jobKey)}::text[])`).catch(
              () => undefined // the database may be closing: the lease ends and they are taken again
            )
          }
          await Promise.allSettled(done)
        }
        return whole
      }

      const listen = async (topic: string, handler: Handler, options: ListenOptions): Promise<void> => {
        const signal = options.signal
        const limit = options.concurrency ?? 4
        const runLength = Math.max(1, options.run ?? 1)
        const running = new Set<Promise<void>>()
        // A run that ends rings for another claim only when something may be claimable that was not
        // when the last claim ran: its key's later rows (queued behind the run when it was claimed,
        // `more`, or a run that did not end whole: a retry's wait, rows handed back), rows rung for
        // while it held its key or a slot (that claim skipped them), keys a full claim had no slot for. Otherwise every row queued
        // since has rung a claim of its own, and an empty claim per ended run would be the
        // busiest statement of a quiet queue (issue 20: one per delivery).
        const finished = doorbell()
        let full = false
        while (signal?.aborted !== true) {
          // Taken before the claim: a row committed while this claim runs, or while the wait below is
          // worked out, ends that wait at once (CI once saw a ring lost in that gap, and a 30 s wait).
          const tickets = [bell.ticket(topic), finished.ticket("")]
          // The rings so far, also taken before the claim: a row rung for while the claim runs may
          // be one it skipped (its key's head was leased), so a run from this claim that ends
          // claims again for it. Counted after the claim, such a ring was missed and the listener
          // waited out the head's lease: 30 s (CI saw it on PostgreSQL, events.test.ts).
          const ringsThen = rings.get(topic) ?? 0
          let timer: NodeJS.Timeout | undefined
          let stopWaiting = () => {}
          try {
            let claimed: ReadonlyArray<{ readonly run: ReadonlyArray<Claimed>; readonly more: boolean }> = []
            const room = limit - running.size
            if (room > 0) {
              claimed = await claim(topic, room, runLength).catch(() => []) // the database may be closing, or briefly away
              full = claimed.length >= room
              options.onClaim?.(claimed.length)
            }
            for (const { run: one, more } of claimed) {
              const handled: Promise<void> = handleRun(one, handler, options)
                .catch(() => false)
                .then((whole) => {
                  running.delete(handled)
                  if (!whole || more || full || (rings.get(topic) ?? 0) !== ringsThen) finished.ring("")
                })
              running.add(handled)
            }
            // A claim that filled every slot it had may have left keys out: look again at once.
            if (claimed.length > 0 && full) continue
            const wait = running.size >= limit ? 30_000 : await idle(topic).catch(() => 1000)
            await new Promise<void>((resolve) => {
              stopWaiting = () => resolve()
              timer = setTimeout(stopWaiting, wait)
              timer.unref?.()
              for (const ticket of tickets) void ticket.rung.then(stopWaiting)
              signal?.addEventListener("abort", stopWaiting)
              // Told to stop while it claimed or worked out the wait: that abort has fired already
              // (CI saw a stop wait out a 30 s wait).
              if (signal?.aborted === true) stopWaiting()
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

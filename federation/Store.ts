// Fedify's key-value store and message queue on Hearth's database (embedded or PostgreSQL, one
// SqlClient), so that both survive a restart and several nodes on one PostgreSQL share them.
//
// The queue carries outbound deliveries. Unlike effect/workflow jobs, whose runs are independent,
// deliveries to one inbox must arrive in the order they were sent (a Like, then its Undo), so the
// queue is a table taken in id order, one message at a time per ordering key. Retries are the
// queue's own (`nativeRetrial`): a failed delivery keeps its place, and the later ones of its key
// wait behind it, doubling its delay until [federation] DELIVERY_ATTEMPTS run out. Each message is
// also a row of `jobs` (kind `federation-…`), so deliveries, their attempts and last errors are
// readable at GET /admin/jobs like every other background job.
//
// Fedify settles some deliveries without throwing: a 429/503 with Retry-After it sends again by
// enqueueing the same message anew, a 404/410 it drops after reporting it (onOutboxError). Taken
// as they come, the first would let the messages behind it overtake it and show the job as
// succeeded, the second would show an undelivered activity as succeeded. So each delivery runs
// in an AsyncLocalStorage context (`Attempt`) that catches both: the same message enqueued again
// becomes a retry in place (at the later of its backoff and the remote's Retry-After), a reported
// error without a throw a final failure. The same context routes Fedify's `fetch` (a global it
// calls directly) through Remote.ts's policy for the deliveries' requests, and only for those.
//
// A claimed message is leased for LEASE_MS and the lease renewed while its delivery runs, so
// the message of a node that died mid-delivery (SIGKILL) is taken again soon after, not never.

import { AsyncLocalStorage } from "node:async_hooks"
import { randomUUID } from "node:crypto"
import { isDeepStrictEqual } from "node:util"
import type {
  KvKey,
  KvStore,
  KvStoreListEntry,
  KvStoreSetOptions,
  MessageQueue,
  MessageQueueEnqueueOptions,
  MessageQueueListenOptions
} from "@fedify/fedify"
import { Effect } from "effect"
import type { SqlClient } from "effect/sql/SqlClient"
import type { JobsRepo } from "../src/jobs/Repo.ts"
import { DeliveryRefused } from "./Remote.ts"

/** Runs a database effect from Fedify's promise-based callbacks. */
export type Run = <A>(effect: Effect.Effect<A, unknown>) => Promise<A>

/** Fedify's durations are Temporal.Duration objects. */
const millis = (duration: unknown): number | undefined =>
  duration === undefined || duration === null
    ? undefined
    : (duration as { total: (unit: string) => number }).total("millisecond")

const encodeKey = (key: KvKey) => JSON.stringify(key)

export class SqlKvStore implements KvStore {
  readonly #sql: SqlClient
  readonly #run: Run
  constructor(sql: SqlClient, run: Run) {
    this.#sql = sql
    this.#run = run
  }
  #expiry(options?: KvStoreSetOptions) {
    const ttl = millis(options?.ttl)
    return ttl === undefined ? null : new Date(Date.now() + ttl)
  }
  #live() {
    return this.#sql`(expires_at IS NULL OR expires_at > now())`
  }
  async get<T = unknown>(key: KvKey): Promise<T | undefined> {
    const sql = this.#sql
    const rows = await this.#run(sql`SELECT value FROM federation_kv WHERE key = ${encodeKey(key)} AND ${this.#live()}`)
    return rows.length === 0 ? undefined : (rows[0]!.value as T)
  }
  async set(key: KvKey, value: unknown, options?: KvStoreSetOptions): Promise<void> {
    await this.#run(this.#sql`INSERT INTO federation_kv (key, value, expires_at)
      VALUES (${encodeKey(key)}, ${JSON.stringify(value)}::jsonb, ${this.#expiry(options)})
      ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`)
  }
  async delete(key: KvKey): Promise<void> {
    await this.#run(this.#sql`DELETE FROM federation_kv WHERE key = ${encodeKey(key)}`)
  }
  async cas(key: KvKey, expected: unknown, value: unknown, options?: KvStoreSetOptions): Promise<boolean> {
    const sql = this.#sql
    const k = encodeKey(key)
    const expiry = this.#expiry(options)
    const live = this.#live()
    // What the database gives back for `expected` (jsonb normalises), to compare like with like.
    const wanted = expected === undefined ? undefined : JSON.parse(JSON.stringify(expected))
    return this.#run(
      sql.withTransaction(
        Effect.gen(function* () {
          const rows = yield* sql`SELECT value, ${live} AS alive FROM federation_kv WHERE key = ${k} FOR UPDATE`
          const current = rows.length === 0 || rows[0]!.alive !== true ? undefined : rows[0]!.value
          if (!isDeepStrictEqual(current, wanted)) return false
          if (rows.length === 0) {
            // No row to lock: a concurrent insert of the same key settles the race by its conflict.
            const inserted = yield* sql`INSERT INTO federation_kv (key, value, expires_at)
          VALUES (${k}, ${JSON.stringify(value)}::jsonb, ${expiry}) ON CONFLICT (key) DO NOTHING RETURNING key`
            return inserted.length > 0
          }
          yield* sql`UPDATE federation_kv SET value = ${JSON.stringify(value)}::jsonb, expires_at = ${expiry} WHERE key = ${k}`
          return true
        })
      )
    )
  }
  async *list(prefix?: KvKey): AsyncIterable<KvStoreListEntry> {
    const sql = this.#sql
    const rows =
      prefix === undefined || prefix.length === 0
        ? await this.#run(sql`SELECT key, value FROM federation_kv WHERE ${this.#live()} ORDER BY key`)
        : await this.#run(sql`SELECT key, value FROM federation_kv
          WHERE (key = ${encodeKey(prefix)} OR starts_with(key, ${`${encodeKey(prefix).slice(0, -1)},`})) AND ${this.#live()}
          ORDER BY key`)
    for (const row of rows) yield { key: JSON.parse(row.key as string) as KvKey, value: row.value }
  }
}

export interface QueueOptions {
  readonly attempts: number
  /** The delay before the second attempt; each later one doubles. */
  readonly retryDelayMs: number
  /** Seals and opens message texts (they carry the sender's private key). */
  readonly seal: (plain: string) => string
  readonly open: (sealed: string) => string
  /** Deliveries running at once (different ordering keys). */
  readonly concurrency?: number
  /** A delivery that has not finished by then counts as failed. */
  readonly deadlineMs?: number
  /** The `fetch` of the deliveries' requests (Remote.ts's deliveryFetch). */
  readonly fetch?: (input: string | URL | Request, init?: RequestInit) => Promise<Response>
}

/** What one delivery learned while Fedify ran it (see the top of this file). */
interface Attempt {
  readonly messageId: unknown
  readonly fetch: QueueOptions["fetch"]
  /** Fedify enqueued this same message again, to be sent after this long. */
  retryAfterMs?: number
  /** The last failure Fedify reported (onOutboxError). */
  error?: unknown
  /** The place is one this server may not deliver to: no retry. */
  refused?: string
}

const attempts = new AsyncLocalStorage<Attempt>()

/** For Fedify's onOutboxError: the failure of the delivery running. */
export const reportDeliveryError = (error: unknown) => {
  const attempt = attempts.getStore()
  if (attempt !== undefined) attempt.error = error
}

const HOOK = Symbol.for("hearth.federation.deliveryFetch")
/** Routes `fetch` calls made inside a delivery to the delivery's own fetch; others pass untouched. */
const installFetchHook = () => {
  const global = globalThis as unknown as Record<symbol, boolean>
  if (global[HOOK] === true) return
  global[HOOK] = true
  const previous = globalThis.fetch
  globalThis.fetch = (input: string | URL | Request, init?: RequestInit) => {
    const attempt = attempts.getStore()
    if (attempt?.fetch === undefined) return previous(input, init)
    return attempt.fetch(input, init).catch((error: unknown) => {
      if (error instanceof DeliveryRefused) attempt.refused = error.message
      throw error
    })
  }
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** How long a claimed message stays invisible to other nodes, renewed while it is delivered. */
const LEASE_MS = 30_000

type Claimed = { readonly id: string; readonly message: string; readonly job_key: string; readonly attempts: number }

/** The outbound delivery queue (see the top of this file). */
export class SqlMessageQueue implements MessageQueue {
  readonly nativeRetrial = true
  readonly #sql: SqlClient
  readonly #jobs: (typeof JobsRepo)["Service"]
  readonly #run: Run
  readonly #options: QueueOptions
  readonly #waiters = new Set<() => void>()
  constructor(sql: SqlClient, jobs: (typeof JobsRepo)["Service"], run: Run, options: QueueOptions) {
    this.#sql = sql
    this.#jobs = jobs
    this.#run = run
    this.#options = options
    if (options.fetch !== undefined) installFetchHook()
  }

  #wake() {
    for (const waiter of [...this.#waiters]) waiter()
  }

  async enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    await this.enqueueMany([message], options)
  }

  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
    const sql = this.#sql
    const jobs = this.#jobs
    const delay = Math.max(0, millis(options?.delay) ?? 0)
    // Fedify sending the message being delivered again: a retry in place, not a new message.
    const attempt = attempts.getStore()
    if (
      attempt !== undefined &&
      messages.length === 1 &&
      messages[0]?.id !== undefined &&
      messages[0].id === attempt.messageId
    ) {
      attempt.retryAfterMs = delay
      return
    }
    const at = new Date(Date.now() + delay)
    const seal = this.#options.seal
    await this.#run(
      Effect.forEach(
        messages,
        (message) =>
          Effect.gen(function* () {
            const key = `federation:${randomUUID()}`
            yield* jobs.enqueue({ kind: `federation-${String(message?.type ?? "message")}`, key })
            yield* sql`INSERT INTO federation_queue (message, ordering_key, job_key, deliver_at)
          VALUES (${seal(JSON.stringify(message))}, ${options?.orderingKey ?? null}, ${key}, ${at})`
          }),
        { discard: true }
      )
    )
    this.#wake()
  }

  /** One due message whose ordering key has no earlier message left, leased to this node. */
  #claim(): Promise<ReadonlyArray<Claimed>> {
    const sql = this.#sql
    return this.#run(sql<Claimed>`UPDATE federation_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)},
        attempts = attempts + 1
      WHERE id = (SELECT q.id FROM federation_queue q
        WHERE q.deliver_at <= now() AND (q.locked_until IS NULL OR q.locked_until < now())
          AND (q.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM federation_queue p
            WHERE p.ordering_key = q.ordering_key AND p.id < q.id))
        ORDER BY q.deliver_at, q.id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, message, job_key, attempts`)
  }

  /** Milliseconds until the next message is due (capped: other nodes may enqueue too). */
  async #idle(): Promise<number> {
    // A message leased by a node that died is due again when its lease ends.
    const rows = await this.#run(this.#sql`SELECT
        EXTRACT(EPOCH FROM (min(GREATEST(deliver_at, COALESCE(locked_until, deliver_at))) - now())) * 1000 AS wait
      FROM federation_queue`)
    const wait = rows[0]?.wait === null || rows[0]?.wait === undefined ? Infinity : Number(rows[0].wait)
    return Math.min(30_000, Math.max(50, wait))
  }

  async #deliver(claimed: Claimed, handler: (message: any) => Promise<void> | void): Promise<void> {
    const sql = this.#sql
    const jobs = this.#jobs
    const attemptNo = Number(claimed.attempts)
    await this.#run(jobs.started(claimed.job_key, attemptNo))
    const deadline = this.#options.deadlineMs ?? 120_000
    let timer: NodeJS.Timeout | undefined
    // The lease is renewed while the delivery runs; the last renewal is awaited before the outcome is written.
    let renewing: Promise<unknown> = Promise.resolve()
    const renewal = setInterval(() => {
      renewing = this.#run(sql`UPDATE federation_queue SET locked_until = ${new Date(Date.now() + LEASE_MS)}
        WHERE id = ${claimed.id} AND locked_until IS NOT NULL`).catch(() => undefined)
    }, LEASE_MS / 3)
    let message: any
    try {
      message = JSON.parse(this.#options.open(claimed.message))
    } catch {
      message = undefined // sealed with another SECRET_KEY, or damaged
    }
    const attempt: Attempt = { messageId: message?.id, fetch: this.#options.fetch }
    let outcome: { readonly error?: string; readonly final?: boolean; readonly delayMs?: number } = {}
    try {
      if (message === undefined)
        throw new DeliveryRefused("the queued message could not be read (was [security] SECRET_KEY changed?)")
      await Promise.race([
        attempts.run(attempt, () => Promise.resolve().then(() => handler(message))),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the delivery did not finish within ${deadline / 1000} s`)),
            deadline
          )
        })
      ])
      if (attempt.retryAfterMs !== undefined) {
        outcome = {
          error:
            attempt.error === undefined ? "the remote asked to be sent this again later" : messageOf(attempt.error),
          delayMs: attempt.retryAfterMs
        }
      } else if (attempt.error !== undefined) {
        // Reported and not thrown: a failure Fedify does not retry (the inbox is gone: 404, 410).
        outcome = { error: messageOf(attempt.error), final: true }
      }
    } catch (error) {
      const refused = attempt.refused ?? (error instanceof DeliveryRefused ? error.message : undefined)
      outcome = refused !== undefined ? { error: refused, final: true } : { error: messageOf(error) }
    } finally {
      clearTimeout(timer)
      clearInterval(renewal)
    }
    await renewing
    if (outcome.error === undefined) {
      await this.#run(
        Effect.andThen(sql`DELETE FROM federation_queue WHERE id = ${claimed.id}`, jobs.succeeded(claimed.job_key))
      )
      return
    }
    const last = outcome.final === true || attemptNo >= this.#options.attempts
    const delay = Math.max(this.#options.retryDelayMs * 2 ** (attemptNo - 1), outcome.delayMs ?? 0)
    await this.#run(
      Effect.andThen(
        last
          ? sql`DELETE FROM federation_queue WHERE id = ${claimed.id}`
          : sql`UPDATE federation_queue SET deliver_at = ${new Date(Date.now() + delay)}, locked_until = NULL WHERE id = ${claimed.id}`,
        jobs.attemptFailed(claimed.job_key, outcome.error, last)
      )
    )
  }

  async getDepth() {
    const rows = await this.#run(this
      .#sql`SELECT count(*) AS queued, count(*) FILTER (WHERE deliver_at <= now()) AS ready
      FROM federation_queue`)
    const queued = Number(rows[0]!.queued)
    const ready = Number(rows[0]!.ready)
    return { queued, ready, delayed: queued - ready }
  }

  async listen(handler: (message: any) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    const signal = options?.signal
    const limit = this.#options.concurrency ?? 4
    const running = new Set<Promise<void>>()
    while (signal?.aborted !== true) {
      let claimed: ReadonlyArray<Claimed> = []
      if (running.size < limit) {
        claimed = await this.#claim().catch(() => []) // the database may be closing, or briefly away
      }
      if (claimed.length > 0) {
        const delivery: Promise<void> = this.#deliver(claimed[0]!, handler)
          .catch(() => undefined)
          .finally(() => {
            running.delete(delivery)
            this.#wake()
          })
        running.add(delivery)
        continue
      }
      const wait = running.size >= limit ? 30_000 : await this.#idle().catch(() => 1000)
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer)
          this.#waiters.delete(done)
          signal?.removeEventListener("abort", done)
          resolve()
        }
        const timer = setTimeout(done, wait)
        timer.unref?.()
        this.#waiters.add(done)
        signal?.addEventListener("abort", done)
      })
    }
    await Promise.allSettled(running)
  }
}

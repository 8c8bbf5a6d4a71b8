// Fedify's key-value store and message queue on Hearth's database (embedded or PostgreSQL, one
// SqlClient), so that both survive a restart and several nodes on one PostgreSQL share them.
//
// The queue carries outbound deliveries: the `federation` topic of the one durable, ordered
// delivery queue (src/jobs/Queue.ts), which keeps deliveries to one inbox in the order they were
// sent (a Like, then its Undo), retries a failed one in place with doubling delays until
// [federation] DELIVERY_ATTEMPTS run out, leases what it runs (SIGKILL-safe) and shows each message
// as a `jobs` row (kind `federation-…`). Fedify's own retries are off (`nativeRetrial`).
//
// Fedify settles some deliveries without throwing: a 429/503 with Retry-After it sends again by
// enqueueing the same message anew, a 404/410 it drops after reporting it (onOutboxError). Taken
// as they come, the first would let the messages behind it overtake it and show the job as
// succeeded, the second would show an undelivered activity as succeeded. So each delivery runs
// in an AsyncLocalStorage context (`Attempt`) that catches both: the same message enqueued again
// becomes a retry in place (at the later of its backoff and the remote's Retry-After), a reported
// error without a throw a final failure. The same context routes Fedify's `fetch` (a global it
// calls directly) through Remote.ts's policy for the deliveries' requests, and only for those.

import { AsyncLocalStorage } from "node:async_hooks"
import { createHash } from "node:crypto"
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
import type { Claimed, DeliveryQueue, Outcome } from "../src/jobs/Queue.ts"
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

/** The topic of federation's deliveries in the delivery queue. */
export const FEDERATION_TOPIC = "federation"

/** Fedify's MessageQueue over the delivery queue (see the top of this file). */
export class SqlMessageQueue implements MessageQueue {
  readonly nativeRetrial = true
  readonly #queue: (typeof DeliveryQueue)["Service"]
  readonly #run: Run
  readonly #options: QueueOptions
  constructor(queue: (typeof DeliveryQueue)["Service"], run: Run, options: QueueOptions) {
    this.#queue = queue
    this.#run = run
    this.#options = options
    if (options.fetch !== undefined) installFetchHook()
  }

  async enqueue(message: any, options?: MessageQueueEnqueueOptions): Promise<void> {
    await this.enqueueMany([message], options)
  }

  async enqueueMany(messages: readonly any[], options?: MessageQueueEnqueueOptions): Promise<void> {
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
    const seal = this.#options.seal
    await this.#run(
      this.#queue.enqueue(
        FEDERATION_TOPIC,
        messages.map((message) => ({
          payload: seal(JSON.stringify(message)),
          // One activity once to one inbox, also when a crash makes its sender queue it again.
          key:
            typeof message?.activityId === "string" && typeof message?.inbox === "string"
              ? createHash("sha256").update(`${message.activityId} ${message.inbox}`).digest("hex")
              : undefined,
          orderingKey: options?.orderingKey ?? null,
          kind: `federation-${String(message?.type ?? "message")}`,
          delayMs: delay
        }))
      )
    )
  }

  /** One delivery: Fedify's handler in its `Attempt` context, and what came of it. */
  async #deliver(claimed: Claimed, handler: (message: any) => Promise<void> | void): Promise<Outcome> {
    let message: any
    try {
      message = JSON.parse(this.#options.open(claimed.payload))
    } catch {
      message = undefined // sealed with another SECRET_KEY, or damaged
    }
    const attempt: Attempt = { messageId: message?.id, fetch: this.#options.fetch }
    try {
      if (message === undefined)
        throw new DeliveryRefused("the queued message could not be read (was [security] SECRET_KEY changed?)")
      await attempts.run(attempt, () => Promise.resolve().then(() => handler(message)))
      if (attempt.retryAfterMs !== undefined) {
        return {
          error:
            attempt.error === undefined ? "the remote asked to be sent this again later" : messageOf(attempt.error),
          delayMs: attempt.retryAfterMs
        }
      }
      // Reported and not thrown: a failure Fedify does not retry (the inbox is gone: 404, 410).
      if (attempt.error !== undefined) return { error: messageOf(attempt.error), final: true }
      return {}
    } catch (error) {
      const refused = attempt.refused ?? (error instanceof DeliveryRefused ? error.message : undefined)
      return refused !== undefined ? { error: refused, final: true } : { error: messageOf(error) }
    }
  }

  async getDepth() {
    const { queued, ready } = await this.#run(this.#queue.depth(FEDERATION_TOPIC))
    return { queued, ready, delayed: queued - ready }
  }

  listen(handler: (message: any) => Promise<void> | void, options?: MessageQueueListenOptions): Promise<void> {
    return this.#queue.listen(FEDERATION_TOPIC, (claimed) => this.#deliver(claimed, handler), {
      attempts: this.#options.attempts,
      retryDelayMs: this.#options.retryDelayMs,
      concurrency: this.#options.concurrency,
      deadlineMs: this.#options.deadlineMs,
      signal: options?.signal
    })
  }
}

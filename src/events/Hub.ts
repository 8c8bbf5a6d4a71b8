// The event hub (Forgejo's services/notify): every change that matters to someone else is published
// here as one typed event (Events.ts lists them), and whoever acts on it subscribes. Producers
// never call consumers directly.
//
// Delivery semantics:
// - Producers publish after their change is done and committed, never inside a transaction; the
//   producer waits for `publish`, which never fails (a consumer's trouble is logged, not returned).
// - In-process subscribers (`subscribe`) run inside `publish`, one after another in the order they
//   subscribed, so what they record is in place when the producer answers (a push's size and
//   default branch shown right after the push). Slow work they fork themselves. Those marked
//   `afterAnswer` wait, in a change run by `answerFirst` (a merge), until its answer is written.
//   A failing or dying subscriber is logged; the others still run. They run for concurrent changes side by
//   side, so they act on the state as it is now rather than on the order of events (the size
//   and branches of the repository, its push mirrors): 50 commits at once do not wait for each
//   other's subscribers.
// - Order per repository: the events of one repository are queued for the durable subscribers one
//   at a time, in the order they were published, under the ordering key `repo:<id>`; the queue
//   hands them over in that order, one at a time (a later push never overtakes an earlier one).
// - Durable subscribers (`subscribeDurable`) are for consumers that must not miss an event
//   (federation now, webhooks next): `publish` first writes one row per durable subscriber that
//   accepts the event into the one durable, ordered delivery queue (src/jobs/Queue.ts, topic
//   `events:<name>`, ordered per repository), all in one transaction, and the subscriber handles it
//   from there — retried with doubling delays, leased while it runs, each a `jobs` row
//   (kind `events-<name>`), resumed after a crash or SIGKILL. Their listeners start with `start`,
//   which `serve` calls once it listens; commands only queue.
//
// Where the record that must not be lost comes from: the queue rows are written by `publish` right
// after the change, before anything is answered or anything else runs — for a database change
// right after its commit, for git pushes right after receive-pack exits (the refs each moved come
// from receive-pack's own post-receive report, see src/git/PushLog.ts; a push whose server died
// before it was published is published at the next start from that report, kept on disk until
// then). Not inside the change's own transaction: most changes that matter are not one
// transaction (a repository is its row, then its git data, and the row goes again when the git
// part fails; a transfer is its rows, then a directory move), so the event is true only once the
// whole change is; and a publish inside a transaction could not run the in-process subscribers
// after the commit. What can be lost is a database change whose process died between its last
// commit and the next statement (no I/O lies between them). The rows of one repository are
// written one at a time in this process: a row numbered earlier but committed later would
// otherwise be overtaken in the queue.
import { Context, Effect, Layer, Semaphore } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { leftoverPushLogs, parsePushLog, pushLogDir } from "../git/PushLog.ts"
import type { IssueRow } from "../issues/Repo.ts"
import { type Claimed, DeliveryQueue } from "../jobs/Queue.ts"
import { whenAnswered } from "../lib/AfterAnswer.ts"
import type { RepoRow } from "../repos/Repo.ts"
import type { UserRow } from "../users/Repo.ts"
import { decodeEvent, type Event, pushEvent } from "./Events.ts"

/**
 * Rows the producer holds as they are right after its change (the issue, its repository and the
 * repository's owner), handed to the in-process subscribers so that they need not read them again;
 * never queued (the durable subscribers get the event alone).
 */
export interface Known {
  readonly issue?: IssueRow | undefined
  readonly repo?: RepoRow | undefined
  readonly owner?: UserRow | undefined
}

export interface Subscriber {
  /** For the log, when it fails. */
  readonly name: string
  readonly handle: (event: Event, known: Known) => Effect.Effect<void, unknown>
  /**
   * What it records no producer's caller needs to see in the answer (a feed's row, a
   * notification): in a change run by `answerFirst` (src/lib/AfterAnswer.ts) it runs once the
   * answer is written, else in its place as the others.
   */
  readonly afterAnswer?: boolean
}

export interface DurableSubscriber {
  /** Its queue topic is `events:<name>`, its jobs' kind `events-<name>`. */
  readonly name: string
  /** Which events it wants queued (the others cost it nothing). */
  readonly accepts: (event: Event) => boolean
  /**
   * Fails with a message a person can read; the event is then retried. `key` is the same on every
   * attempt at this event (and unique to it): what the handler makes of it can be named by it, so
   * that an attempt repeated after a crash finds its earlier work done.
   */
  readonly handle: (event: Event, key: string) => Effect.Effect<void, string>
  readonly attempts?: number
  readonly retryDelayMs?: number
}

export class EventHub extends Context.Service<
  EventHub,
  {
    readonly publish: (event: Event) => Effect.Effect<void>
    /** `publish`, with the rows the producer holds for the in-process subscribers (`Known`). */
    readonly publishKnown: (event: Event, known: Known) => Effect.Effect<void>
    readonly subscribe: (subscriber: Subscriber) => Effect.Effect<void>
    readonly subscribeDurable: (subscriber: DurableSubscriber) => Effect.Effect<void>
    /** Starts handling the durable subscribers' queued events (`serve`, once it listens). */
    readonly start: Effect.Effect<void>
  }
>()("hearth/events/EventHub") {
  static readonly layer = Layer.effect(
    EventHub,
    Effect.gen(function* () {
      const sql = yield* SqlClient
      const queue = yield* DeliveryQueue
      const context = yield* Effect.context<never>()
      const subscribers: Array<Subscriber> = []
      const durable: Array<DurableSubscriber> = []

      // One record at a time per repository (counted, so that idle repositories hold nothing).
      const locks = new Map<number, { readonly semaphore: Semaphore.Semaphore; users: number }>()
      const oneAtATime = (repoId: number, effect: Effect.Effect<void>) =>
        Effect.suspend(() => {
          let lock = locks.get(repoId)
          if (lock === undefined) {
            lock = { semaphore: Semaphore.makeUnsafe(1), users: 0 }
            locks.set(repoId, lock)
          }
          const held = lock
          held.users++
          return held.semaphore
            .withPermits(1)(effect)
            .pipe(
              Effect.ensuring(
                Effect.sync(() => {
                  if (--held.users === 0) locks.delete(repoId)
                })
              )
            )
        })

      // An account's event (RenameUser) has no repository: it is ordered per account instead.
      const orderOf = (event: Event) => ("repo" in event ? `repo:${event.repo.id}` : `user:${event.user.id}`)
      const about = (event: Event) =>
        "repo" in event ? `${event.repo.ownerName}/${event.repo.name}` : `${event.oldName} (now ${event.user.name})`

      const record = (event: Event) => {
        const wanting = durable.filter((subscriber) => subscriber.accepts(event))
        if (wanting.length === 0) return Effect.void
        const payload = JSON.stringify(event)
        return sql
          .withTransaction(
            Effect.forEach(
              wanting,
              (subscriber) =>
                queue.enqueue(`events:${subscriber.name}`, [
                  { payload, orderingKey: orderOf(event), kind: `events-${subscriber.name}` }
                ]),
              { discard: true }
            )
          )
          .pipe(
            Effect.catchCause((cause) =>
              Effect.logError(
                `could not queue the ${event._tag} event of ${about(event)} for ${wanting.map((s) => s.name).join(", ")}`,
                cause
              )
            )
          )
      }

      const dispatch = (event: Event, known: Known) =>
        Effect.forEach(
          subscribers,
          (subscriber) => {
            const handled = Effect.suspend(() => subscriber.handle(event, known)).pipe(
              Effect.catchCause((cause) =>
                Effect.logWarning(`${subscriber.name} failed on the ${event._tag} event of ${about(event)}`, cause)
              )
            )
            return subscriber.afterAnswer === true ? whenAnswered(handled, subscriber.name) : handled
          },
          { discard: true }
        )

      const publish = (event: Event, known: Known = {}) =>
        Effect.andThen(
          "repo" in event ? oneAtATime(event.repo.id, record(event)) : record(event),
          dispatch(event, known)
        ).pipe(Effect.uninterruptible)

      const abort = new AbortController()
      const listening: Array<Promise<void>> = []
      let started = false
      yield* Effect.addFinalizer(() =>
        Effect.promise(() => {
          abort.abort()
          return Promise.allSettled(listening)
        })
      )

      const keyOf = (claimed: Claimed) => claimed.jobKey.slice(claimed.jobKey.lastIndexOf(":") + 1)
      const listen = (subscriber: DurableSubscriber) =>
        queue.listen(
          `events:${subscriber.name}`,
          async (claimed) => {
            let event: Event
            try {
              event = decodeEvent(JSON.parse(claimed.payload))
            } catch (error) {
              return { error: `the queued event could not be read: ${String(error)}`, final: true }
            }
            return Effect.runPromiseWith(context)(
              subscriber.handle(event, keyOf(claimed)).pipe(
                Effect.catchDefect((defect) => Effect.fail(defect instanceof Error ? defect.message : String(defect))),
                Effect.match({ onFailure: (error) => ({ error }), onSuccess: () => ({}) })
              )
            )
          },
          {
            attempts: subscriber.attempts ?? 8,
            retryDelayMs: subscriber.retryDelayMs ?? 10_000,
            // A repository's queued events go one after another without a claim between them.
            run: 20,
            signal: abort.signal
          }
        )

      return EventHub.of({
        publish: (event) => publish(event),
        publishKnown: publish,
        subscribe: (subscriber) => Effect.sync(() => void subscribers.push(subscriber)),
        subscribeDurable: (subscriber) =>
          Effect.sync(() => {
            durable.push(subscriber)
            if (started) listening.push(listen(subscriber))
          }),
        start: Effect.sync(() => {
          if (started) return
          started = true
          for (const subscriber of durable) listening.push(listen(subscriber))
        })
      })
    })
  )
}

/**
 * At start: the pushes a server that died left unpublished (their push logs, src/git/PushLog.ts),
 * published now, oldest first, then removed.
 */
export const publishLeftoverPushes = (appDataPath: string, startedAt: number) =>
  Effect.gen(function* () {
    const hub = yield* EventHub
    const leftovers = yield* Effect.promise(() => leftoverPushLogs(pushLogDir(appDataPath), startedAt))
    for (const leftover of leftovers) {
      const log = parsePushLog(leftover.text)
      const event = log === undefined ? undefined : pushEvent(log.header, log.refs)
      if (event !== undefined) {
        yield* Effect.logInfo(
          `publishing a push to ${event.repo.ownerName}/${event.repo.name} that an earlier run left unpublished`
        )
        yield* hub.publish(event)
      }
      yield* Effect.promise(leftover.remove)
    }
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("could not publish the pushes an earlier run left", cause)))

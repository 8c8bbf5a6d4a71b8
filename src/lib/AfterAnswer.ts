// Work a change causes that its caller need not see in the answer (an activity feed's row, a
// notification, the languages counted again): a route that wants its answer first runs its change
// in `answerFirst`, and such work waits until the request's fiber is done — the response written —
// then runs, in the order it was asked for. Outside such a route (commands, workflows, tests calling
// services, every other route) nothing changes: `whenAnswered` runs the work in place, `afterAnswer`
// forks it at once.
import { Context, Effect, Fiber } from "effect"

/** Each piece: run in order, or forked (`afterAnswer`: it never held anything up before either). */
type Pending = Array<{ readonly work: Effect.Effect<void>; readonly fork: boolean }>

/** The work waiting for the current request's answer; none outside `answerFirst`. */
const Waiting = Context.Reference<Pending | undefined>("hearth/lib/AfterAnswer", {
  defaultValue: () => undefined
})

const logged = (work: Effect.Effect<void, unknown>, what: string) =>
  work.pipe(Effect.ignoreCause({ log: "Warn", message: `could not ${what} after the answer` }))

/**
 * Runs `change`, then, once the fiber it runs in (the request's) has ended, the work it left for
 * after the answer, in a fiber of its own: what `whenAnswered` left one piece after another, in
 * the order it was left, what `afterAnswer` left forked as it comes.
 */
export const answerFirst = <A, E, R>(change: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber<A, E, R>((fiber) => {
    const pending: Pending = []
    return change.pipe(
      Effect.provideService(Waiting, pending),
      Effect.ensuring(
        Effect.suspend(() =>
          pending.length === 0
            ? Effect.void
            : Effect.asVoid(
                Effect.forkDetach(
                  Effect.andThen(
                    Fiber.await(fiber),
                    Effect.forEach(pending, (p) => (p.fork ? Effect.forkDetach(p.work) : p.work), { discard: true })
                  )
                )
              )
        )
      )
    )
  })

/** `work` once the answer is written inside `answerFirst`, else now, waited for. */
export const whenAnswered = (work: Effect.Effect<void, unknown>, what: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const pending = fiber.getRef(Waiting)
    return pending === undefined
      ? logged(work, what)
      : Effect.sync(() => void pending.push({ work: logged(work, what), fork: false }))
  })

/** `work` once the answer is written inside `answerFirst`, else forked now (never waited for). */
export const afterAnswer = (work: Effect.Effect<void, unknown>, what: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const pending = fiber.getRef(Waiting)
    return pending === undefined
      ? Effect.asVoid(Effect.forkDetach(logged(work, what)))
      : Effect.sync(() => void pending.push({ work: logged(work, what), fork: true }))
  })

// The periodic tasks under Forgejo's cron task names (`GET /admin/cron`, `POST /admin/cron/{task}`,
// `hearth admin cron`): each runs the existing job — the mirror schedule's `startDueSyncs`, the
// package cleanup's rules, the webhook history's cleanup — never a second implementation.
// `prev` and `exec_times` count the runs asked here (in this process, since it started); the
// tasks' own periodic rounds are not counted yet (their loops live in their slices).
import { Context, Effect, Layer } from "effect"
import { Settings } from "../config/Settings.ts"
import * as Errors from "../http/Errors.ts"
import { cronSchedule } from "../lib/CronSchedule.ts"
import { startDueSyncs } from "../mirrors/Workflow.ts"
import { PackageCleanup } from "../packages/Cleanup.ts"
import { WebhooksService } from "../webhooks/Service.ts"

export interface CronTaskInfo {
  /** Forgejo's task name. */
  readonly name: string
  /** Forgejo's schedule syntax (`@every 1m`, `@midnight`, a cron expression). */
  readonly schedule: string
  readonly next: Date
  readonly prev: Date | undefined
  readonly execTimes: number
}

interface Task {
  readonly name: string
  readonly schedule: string
  readonly run: Effect.Effect<void>
  prev: Date | undefined
  execTimes: number
}

export class CronTasks extends Context.Service<
  CronTasks,
  {
    /** Every task, by name. */
    readonly list: Effect.Effect<Array<CronTaskInfo>>
    /** Runs the task now and waits for it (404 for an unknown name). */
    readonly run: (name: string) => Effect.Effect<void, Errors.NotFound>
  }
>()("hearth/jobs/CronTasks") {
  static readonly layer = Layer.effect(
    CronTasks,
    Effect.gen(function* () {
      const settings = yield* Settings
      const packages = yield* PackageCleanup
      const webhooks = yield* WebhooksService
      // What the mirror schedule's round needs, as the schedule itself has it.
      const context = yield* Effect.context<Effect.Services<typeof startDueSyncs>>()
      const logged = (name: string, effect: Effect.Effect<unknown, unknown, never>) =>
        Effect.asVoid(effect).pipe(Effect.catchCause((cause) => Effect.logWarning(`cron task ${name} failed`, cause)))

      const tasks: Array<Task> = [
        {
          name: "cleanup_hook_task_table",
          schedule: settings["cron.cleanup_hook_task_table"].SCHEDULE,
          run: logged("cleanup_hook_task_table", webhooks.cleanup),
          prev: undefined,
          execTimes: 0
        },
        {
          name: "cleanup_packages",
          // src/packages/Cleanup.ts runs the rules every 24 hours from the start.
          schedule: "@every 24h",
          run: logged("cleanup_packages", packages.run),
          prev: undefined,
          execTimes: 0
        },
        {
          name: "update_mirrors",
          // The mirror schedule's round (src/mirrors/Workflow.ts `MirrorScheduleLive`).
          schedule: settings.mirror.MIN_INTERVAL >= 60 ? "@every 1m" : "@every 5s",
          run: logged("update_mirrors", Effect.provide(startDueSyncs, context)),
          prev: undefined,
          execTimes: 0
        }
      ]

      const nextOf = (task: Task, now: Date) => {
        const wait = cronSchedule(task.schedule)?.(now) ?? 0
        // `@every`: counted from the last run when there was one.
        if (/^@every/i.test(task.schedule) && task.prev !== undefined) {
          return new Date(Math.max(now.getTime(), task.prev.getTime() + wait))
        }
        return new Date(now.getTime() + wait)
      }

      return CronTasks.of({
        list: Effect.sync(() => {
          const now = new Date()
          return tasks.map((task) => ({
            name: task.name,
            schedule: task.schedule,
            next: nextOf(task, now),
            prev: task.prev,
            execTimes: task.execTimes
          }))
        }),
        run: (name) =>
          Effect.gen(function* () {
            const task = tasks.find((t) => t.name === name)
            if (task === undefined) return yield* Errors.notFound()
            yield* Effect.sync(() => {
              task.prev = new Date()
              task.execTimes++
            })
            yield* task.run
          })
      })
    })
  )
}

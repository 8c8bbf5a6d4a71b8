// Forgejo's `[cron.*] SCHEDULE` values (robfig/cron as modules/setting/cron.go reads them):
// `@every <duration>`, the descriptors `@yearly`/`@annually`, `@monthly`, `@weekly`, `@daily`/
// `@midnight`, `@hourly`, or a cron expression (5 fields, or 6 with seconds first), in the
// server's time zone.
import { Cron, Result } from "effect"
import { parseGoDuration } from "./Duration.ts"

const DESCRIPTORS: Record<string, string> = {
  "@yearly": "0 0 1 1 *",
  "@annually": "0 0 1 1 *",
  "@monthly": "0 0 1 * *",
  "@weekly": "0 0 * * 0",
  "@daily": "0 0 * * *",
  "@midnight": "0 0 * * *",
  "@hourly": "0 * * * *"
}

/** Milliseconds from `now` to the schedule's next run, or `undefined` when `text` is not a schedule. */
export const cronSchedule = (text: string): ((now: Date) => number) | undefined => {
  const value = text.trim()
  const every = /^@every\s+(\S+)$/i.exec(value)
  if (every !== null) {
    const seconds = parseGoDuration(every[1]!)
    return seconds === undefined || seconds <= 0 ? undefined : () => seconds * 1000
  }
  const parsed = Cron.parse(DESCRIPTORS[value.toLowerCase()] ?? value)
  if (Result.isFailure(parsed)) return undefined
  const cron = parsed.success
  return (now) => Math.max(0, Cron.next(cron, now).getTime() - now.getTime())
}

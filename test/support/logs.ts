// What the server under test logs: Effect's logger writes through `console`, so the lines are
// collected from there (the server runs in the test's own process).
import { vi } from "vitest"

export interface CapturedLogs {
  /** Every entry written since the capture started (or was last cleared), one string each. */
  readonly lines: Array<string>
  readonly restore: () => void
}

const describe = (value: unknown): string =>
  value instanceof Error ? `${value.name}: ${value.message}\n${value.stack ?? ""}` : String(value)

/** Collects what is written to console.log/info/warn/error/debug until `restore`. */
export const captureLogs = (): CapturedLogs => {
  const lines: Array<string> = []
  const capture = (...args: Array<unknown>) => void lines.push(args.map(describe).join(" "))
  const spies = (["log", "info", "warn", "error", "debug"] as const).map((method) =>
    vi.spyOn(console, method).mockImplementation(capture)
  )
  const restore = () => {
    for (const spy of spies) spy.mockRestore()
  }
  return { lines, restore }
}

/** A stack trace's frames ("    at f (file.ts:1:2)"), as a defect's log entry carries them. */
export const hasStackTrace = (text: string): boolean => /\n\s+at \S/.test(text) || /\.ts:\d+:\d+/.test(text)

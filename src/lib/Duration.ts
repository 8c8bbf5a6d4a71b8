// Go durations ("8h", "10m0s", "1.5h"), the format of Forgejo's app.ini durations (e.g. [mirror]
// MIN_INTERVAL) and of a repository's mirror_interval: parsed as Go's time.ParseDuration, written as
// Go's Duration.String.

const GO_UNITS: Record<string, number> = {
  ns: 1e-9,
  us: 1e-6,
  µs: 1e-6,
  μs: 1e-6,
  ms: 1e-3,
  s: 1,
  m: 60,
  h: 3600
}

/** Go's time.ParseDuration, in seconds; `undefined` when the text is not a Go duration. */
export const parseGoDuration = (text: string): number | undefined => {
  if (text === "0" || text === "+0" || text === "-0") return 0
  const match = /^([-+]?)((?:(?:\d+\.?\d*|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+)$/.exec(text)
  if (match === null) return undefined
  let total = 0
  for (const part of match[2]!.matchAll(/(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g)) {
    total += Number(part[1]) * GO_UNITS[part[2]!]!
  }
  return match[1] === "-" ? -total : total
}

/** Go's Duration.String for whole or fractional seconds ≥ 1s (and 0): "8h0m0s", "10m0s", "1m30.5s". */
export const formatGoDuration = (seconds: number): string => {
  if (seconds === 0) return "0s"
  const sign = seconds < 0 ? "-" : ""
  let rest = Math.abs(seconds)
  const h = Math.floor(rest / 3600)
  rest -= h * 3600
  const m = Math.floor(rest / 60)
  rest -= m * 60
  const s = `${Number(rest.toFixed(9))}s`
  return h > 0 ? `${sign}${h}h${m}m${s}` : m > 0 ? `${sign}${m}m${s}` : `${sign}${s}`
}

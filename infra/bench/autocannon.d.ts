// The part of autocannon 9's programmatic API the benchmark uses (the package ships no types).
declare module "autocannon" {
  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p97_5: number
    readonly p99: number
  }
  export interface Request {
    readonly method?: string
    readonly path?: string
    readonly headers?: Record<string, string>
    readonly body?: string
  }
  export interface Options {
    readonly url: string
    readonly connections?: number
    readonly duration?: number
    readonly amount?: number
    readonly pipelining?: number
    readonly timeout?: number
    readonly method?: string
    readonly headers?: Record<string, string>
    readonly requests?: ReadonlyArray<Request>
    readonly expectBody?: string
  }
  export interface Result {
    readonly requests: Histogram & { readonly sent: number }
    readonly latency: Histogram
    readonly throughput: Histogram
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly statusCodeStats: Record<string, { readonly count: number }>
  }
  export interface Instance {
    stop(): void
    /** Every completed response; responseTime is in ms with sub-millisecond precision. */
    on(
      event: "response",
      listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void
    ): this
  }
  function autocannon(options: Options, callback: (error: Error | null, result: Result) => void): Instance
  export default autocannon
}

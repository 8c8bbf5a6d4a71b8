// Group commit: many callers' small writes (or reads) made as one statement. A caller adds its item
// and waits for the flush that takes it; a flush takes everything added while the previous flush
// ran, so under load one statement serves many callers and when idle each item goes at once (on
// the next turn of the event loop, with whatever else was added in the same turn). Used by the
// delivery queue (src/jobs/Queue.ts) and the webhook deliveries, where one statement per delivery
// was what bounded deliveries per second, and the pull requests' mergeability results.

/**
 * `flush` gets the items waiting (at most `max`) and answers one result per item, in order; a
 * failed flush fails every caller of it. With `gatherMs`, an item that finds no flush running waits
 * that long for others (callers that come one at a time, a little apart, share a statement too).
 */
export const batcher = <I, O>(
  flush: (items: ReadonlyArray<I>) => Promise<ReadonlyArray<O>>,
  max = 500,
  gatherMs = 0
) => {
  let waiting: Array<{ item: I; resolve: (o: O) => void; reject: (e: unknown) => void }> = []
  let flushing = false
  const drain = async () => {
    flushing = true
    try {
      while (waiting.length > 0) {
        const taken = waiting.slice(0, max)
        waiting = waiting.slice(taken.length)
        try {
          const results = await flush(taken.map((w) => w.item))
          for (const [i, w] of taken.entries()) w.resolve(results[i]!)
        } catch (error) {
          for (const w of taken) w.reject(error)
        }
      }
    } finally {
      flushing = false
    }
  }
  return (item: I): Promise<O> =>
    new Promise<O>((resolve, reject) => {
      waiting.push({ item, resolve, reject })
      if (!flushing) {
        flushing = true
        if (gatherMs > 0) setTimeout(() => void drain(), gatherMs)
        else setImmediate(() => void drain())
      }
    })
}

// The one durable, ordered delivery queue (src/jobs/Queue.ts) on a real server's database: rows of
// one ordering key are handled one at a time in order (a failing one holds the later ones back),
// failures are retried with a doubling delay and shown as `jobs` rows, and a row leased by a node
// that died is taken again once its lease ends.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Claimed, DeliveryQueue, doorbell, type Handler, type Outcome } from "../src/jobs/Queue.ts"
import { JobsRepo } from "../src/jobs/Repo.ts"
import { eventually } from "./support/federation.ts"
import { type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
beforeAll(async () => {
  hearth = await startHearth()
}, 120_000)
afterAll(async () => {
  await hearth?.close()
})

const queue = () => hearth.run(Effect.service(DeliveryQueue))
const enqueue = (topic: string, payloads: ReadonlyArray<string>, orderingKey: string | null = "k") =>
  hearth.run(
    Effect.flatMap(Effect.service(DeliveryQueue), (q) =>
      q.enqueue(
        topic,
        payloads.map((payload) => ({ payload, orderingKey, kind: `test-${topic}` }))
      )
    )
  )
const jobsOf = (kind: string) =>
  hearth.run(
    Effect.map(
      Effect.flatMap(Effect.service(JobsRepo), (jobs) =>
        Effect.orDie(jobs.list(undefined, { page: 1, limit: 50, offset: 0 }))
      ),
      ({ rows }) => rows.filter((row) => row.kind === kind).reverse()
    )
  )
const rowsLeft = (topic: string) =>
  hearth.run(
    Effect.flatMap(Effect.service(SqlClient), (sql) =>
      Effect.map(Effect.orDie(sql`SELECT count(*) AS n FROM delivery_queue WHERE topic = ${topic}`), (r) =>
        Number(r[0]!.n)
      )
    )
  )

/** Listens on `topic` with `handler` until the returned stop is called. */
const listening = async (
  topic: string,
  handler: Handler,
  options: { attempts?: number; concurrency?: number; run?: number; onClaim?: (runs: number) => void } = {}
) => {
  const q = await queue()
  const abort = new AbortController()
  const done = q.listen(topic, handler, {
    attempts: options.attempts ?? 5,
    retryDelayMs: 100,
    concurrency: options.concurrency ?? 4,
    run: options.run,
    onClaim: options.onClaim,
    signal: abort.signal
  })
  return async () => {
    abort.abort()
    await done
  }
}

describe("the delivery queue", () => {
  it("queues a call's items as given, in order: payloads byte for byte, ordering keys, delays; a key queued before or twice in the call once", async () => {
    const odd = ['{"a":"q\\"uote"}', "back\\slash, {braces} & commas", "NULL", "", "ünï — 𝄞", "null"]
    const q = await queue()
    await hearth.run(q.enqueue("asgiven", [{ payload: "before", key: "dup-a", kind: "test-asgiven" }]))
    const before = Date.now()
    await hearth.run(
      q.enqueue("asgiven", [
        ...odd.map((payload, i) => ({ payload, orderingKey: i % 2 === 0 ? "even" : null, kind: "test-asgiven" })),
        { payload: "late", key: "later", kind: "test-asgiven", delayMs: 60_000 },
        { payload: "again", key: "dup-a", kind: "test-asgiven" },
        { payload: "first", key: "dup-b", kind: "test-asgiven" },
        { payload: "second", key: "dup-b", kind: "test-asgiven" }
      ])
    )
    const rows = await hearth.run(
      Effect.flatMap(Effect.service(SqlClient), (sql) =>
        Effect.orDie(
          sql<{ payload: string; ordering_key: string | null; job_key: string; deliver_at: Date }>`SELECT payload,
            ordering_key, job_key, deliver_at FROM delivery_queue WHERE topic = 'asgiven' ORDER BY id`
        )
      )
    )
    expect(rows.map((r) => r.payload)).toEqual(["before", ...odd, "late", "first"])
    expect(rows.slice(1, 7).map((r) => r.ordering_key)).toEqual(["even", null, "even", null, "even", null])
    expect(rows.map((r) => r.job_key).slice(-2)).toEqual(["asgiven:later", "asgiven:dup-b"])
    const late = new Date(rows.at(-2)!.deliver_at).getTime()
    expect(late).toBeGreaterThanOrEqual(before + 60_000 - 1000)
    expect(late).toBeLessThan(Date.now() + 61_000)
    expect(new Date(rows.at(-1)!.deliver_at).getTime()).toBeLessThan(before + 5_000)
    const jobs = await jobsOf("test-asgiven")
    expect(jobs).toHaveLength(rows.length)
    await hearth.run(
      Effect.flatMap(Effect.service(SqlClient), (sql) =>
        Effect.orDie(sql`DELETE FROM delivery_queue WHERE topic = 'asgiven'`)
      )
    )
  })

  it("handles the rows of one key one at a time, in order, a failing one holding the later ones back", async () => {
    const seen: Array<string> = []
    let running = 0
    let most = 0
    let failuresLeft = 2
    const stop = await listening("order", async (claimed: Claimed): Promise<Outcome> => {
      running++
      most = Math.max(most, running)
      seen.push(`${claimed.payload}#${claimed.attempt}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
      running--
      if (claimed.payload === "b" && failuresLeft > 0) {
        failuresLeft--
        return { error: "b is not ready yet" }
      }
      return {}
    })
    try {
      await enqueue("order", ["a", "b", "c", "d"])
      await eventually(async () => ((await rowsLeft("order")) === 0 ? true : undefined), 30_000, "the rows handled")
      expect(seen).toEqual(["a#1", "b#1", "b#2", "b#3", "c#1", "d#1"])
      expect(most).toBe(1)
      const jobs = await jobsOf("test-order")
      expect(jobs.map((job) => [job.state, job.attempts])).toEqual([
        ["succeeded", 1],
        ["succeeded", 3],
        ["succeeded", 1],
        ["succeeded", 1]
      ])
      expect(jobs[1]!.lastError).toBe("b is not ready yet")
    } finally {
      await stop()
    }
  })

  it("takes runs of a key's rows (`run`) in order; a failing row hands the rest of its run back untried", async () => {
    const seen: Array<string> = []
    const running = new Map<string, number>()
    let most = 0
    let failuresLeft = 2
    const stop = await listening(
      "runs",
      async (claimed: Claimed): Promise<Outcome> => {
        const key = claimed.payload.slice(0, 1)
        running.set(key, (running.get(key) ?? 0) + 1)
        most = Math.max(most, running.get(key)!)
        seen.push(`${claimed.payload}#${claimed.attempt}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
        running.set(key, running.get(key)! - 1)
        if (claimed.payload === "x2" && failuresLeft > 0) {
          failuresLeft--
          return { error: "x2 is not ready yet" }
        }
        return {}
      },
      { run: 3 }
    )
    try {
      // Queued before the listener's first claim can see them: one transaction.
      await hearth.run(
        Effect.flatMap(Effect.service(SqlClient), (sql) =>
          sql.withTransaction(
            Effect.flatMap(Effect.service(DeliveryQueue), (q) =>
              q.enqueue("runs", [
                ...["x1", "x2", "x3", "x4", "x5"].map((payload) => ({ payload, orderingKey: "x", kind: "test-runs" })),
                ...["y1", "y2", "y3", "y4"].map((payload) => ({ payload, orderingKey: "y", kind: "test-runs" }))
              ])
            )
          )
        )
      )
      await eventually(async () => ((await rowsLeft("runs")) === 0 ? true : undefined), 30_000, "the rows handled")
      // Each key in its order, one at a time; x3 was handed back after x2 failed, and not counted as tried.
      expect(seen.filter((s) => s.startsWith("x"))).toEqual(["x1#1", "x2#1", "x2#2", "x2#3", "x3#1", "x4#1", "x5#1"])
      expect(seen.filter((s) => s.startsWith("y"))).toEqual(["y1#1", "y2#1", "y3#1", "y4#1"])
      expect(most).toBe(1)
      const jobs = await jobsOf("test-runs")
      expect(jobs.map((job) => [job.state, job.attempts])).toEqual([
        ["succeeded", 1],
        ["succeeded", 3],
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1],
        ["succeeded", 1]
      ])
    } finally {
      await stop()
    }
  })

  it("a success with `settled` lets the key's next row go at once, and removes its row only once it settles", async () => {
    const seen: Array<string> = []
    const records = new Map<string, () => void>()
    const stop = await listening(
      "settling",
      async (claimed: Claimed): Promise<Outcome> => {
        seen.push(claimed.payload)
        const { promise, resolve } = Promise.withResolvers<void>()
        records.set(claimed.payload, resolve)
        return { settled: promise }
      },
      { run: 3 }
    )
    try {
      await enqueue("settling", ["s1", "s2"])
      // Both handled while neither has settled: the second did not wait for the first's record.
      await eventually(async () => (seen.length === 2 ? true : undefined), 30_000, "both rows handled")
      expect(seen).toEqual(["s1", "s2"])
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(await rowsLeft("settling")).toBe(2)
      records.get("s1")!()
      await eventually(async () => ((await rowsLeft("settling")) === 1 ? true : undefined), 30_000, "s1 removed")
      records.get("s2")!()
      await eventually(async () => ((await rowsLeft("settling")) === 0 ? true : undefined), 30_000, "s2 removed")
      expect(seen).toEqual(["s1", "s2"])
    } finally {
      for (const resolve of records.values()) resolve()
      await stop()
    }
  })

  it("runs rows of different keys side by side", async () => {
    const release: Array<() => void> = []
    const started: Array<string> = []
    const stop = await listening("parallel", async (claimed) => {
      started.push(claimed.payload)
      await new Promise<void>((resolve) => release.push(resolve))
      return {}
    })
    try {
      await hearth.run(
        Effect.flatMap(Effect.service(DeliveryQueue), (q) =>
          q.enqueue("parallel", [
            { payload: "x", orderingKey: "one", kind: "test-parallel" },
            { payload: "y", orderingKey: "two", kind: "test-parallel" }
          ])
        )
      )
      await eventually(async () => (started.length === 2 ? true : undefined), 30_000, "both rows started")
      expect([...started].sort()).toEqual(["x", "y"])
    } finally {
      for (const r of release) r()
      await stop()
    }
  })

  it("runs rows without a key each on its own, beside keyed runs; a held one holds back no other", async () => {
    const release: Array<() => void> = []
    const started: Array<string> = []
    const stop = await listening(
      "keyless",
      async (claimed) => {
        started.push(claimed.payload)
        if (claimed.payload === "a") await new Promise<void>((resolve) => release.push(resolve))
        return {}
      },
      { concurrency: 3, run: 5 }
    )
    try {
      await enqueue("keyless", ["a", "b", "c"], null)
      await enqueue("keyless", ["k1", "k2"], "k")
      await eventually(
        async () => ((await rowsLeft("keyless")) === 1 ? true : undefined),
        30_000,
        "all but the held row handled"
      )
      expect(started.filter((p) => p.startsWith("k"))).toEqual(["k1", "k2"])
      expect([...started].sort()).toEqual(["a", "b", "c", "k1", "k2"])
    } finally {
      for (const r of release) r()
      await stop()
    }
    expect(await rowsLeft("keyless")).toBe(0)
  })

  it("gives up after the last attempt, or at once on a final failure, and says why in the job", async () => {
    const stop = await listening(
      "failing",
      async (claimed) => (claimed.payload === "final" ? { error: "gone for good", final: true } : { error: "down" }),
      { attempts: 3 }
    )
    try {
      await enqueue("failing", ["retried"], "r")
      await enqueue("failing", ["final"], "f")
      await eventually(async () => ((await rowsLeft("failing")) === 0 ? true : undefined), 30_000, "the rows settled")
      const jobs = await jobsOf("test-failing")
      expect(jobs.map((job) => [job.state, job.attempts, job.lastError])).toEqual([
        ["failed", 3, "down"],
        ["failed", 1, "gone for good"]
      ])
    } finally {
      await stop()
    }
  })

  it("retries with a doubling delay", async () => {
    const times: Array<number> = []
    const stop = await listening("backoff", async () => {
      times.push(Date.now())
      return times.length < 4 ? { error: "again" } : {}
    })
    try {
      await enqueue("backoff", ["p"])
      await eventually(async () => ((await rowsLeft("backoff")) === 0 ? true : undefined), 30_000, "the row handled")
      // 100 ms, then 200, then 400: each wait at least the doubled delay.
      const gaps = times.slice(1).map((t, i) => t - times[i]!)
      expect(gaps[0]).toBeGreaterThanOrEqual(100)
      expect(gaps[1]).toBeGreaterThanOrEqual(200)
      expect(gaps[2]).toBeGreaterThanOrEqual(400)
    } finally {
      await stop()
    }
  })

  it("wakes its listener when a transaction that queued a row commits, not before (and not at a later poll)", async () => {
    const seen: Array<string> = []
    const stop = await listening("commit", async (claimed) => {
      seen.push(claimed.payload)
      return {}
    })
    try {
      // Queued inside a transaction that stays open past the listener's few seconds of quick looks
      // after a wake: woken before the commit, it would find nothing and settle into its long
      // (30 s) wait; woken by the commit, it takes the row at once.
      await hearth.run(
        Effect.flatMap(Effect.service(SqlClient), (sql) =>
          Effect.orDie(
            sql.withTransaction(
              Effect.andThen(
                Effect.flatMap(Effect.service(DeliveryQueue), (q) =>
                  q.enqueue("commit", [{ payload: "late", orderingKey: "k", kind: "test-commit" }])
                ),
                Effect.sleep("5500 millis")
              )
            )
          )
        )
      )
      await eventually(async () => (seen.length === 1 ? true : undefined), 10_000, "the committed row handled")
    } finally {
      await stop()
    }
  }, 30_000)

  it("claims once per queued batch: not again when a run ends whole, nor on the off chance after a ring", async () => {
    const seen: Array<string> = []
    const claims: Array<number> = []
    const stop = await listening(
      "quiet",
      async (claimed) => {
        seen.push(claimed.payload)
        return {}
      },
      { concurrency: 4, run: 5, onClaim: (runs) => claims.push(runs) }
    )
    try {
      await eventually(async () => (claims.length === 1 ? true : undefined), 10_000, "the listener's first claim")
      // Three keys in one transaction (one ring), then a key's two rows one after another.
      await hearth.run(
        Effect.flatMap(Effect.service(DeliveryQueue), (q) =>
          q.enqueue(
            "quiet",
            ["a", "b", "c"].map((key) => ({ payload: key, orderingKey: key, kind: "test-quiet" }))
          )
        )
      )
      await eventually(async () => (seen.length === 3 ? true : undefined), 10_000, "the three rows handled")
      await enqueue("quiet", ["d1", "d2"], "d")
      await eventually(async () => (seen.length === 5 ? true : undefined), 10_000, "the key's two rows handled")
      // Quiet for a while: nothing queued, nothing due, so nothing claimed. (It was: an empty claim
      // after each ended run, and one every 250 ms for 5 s after each ring.)
      await new Promise((resolve) => setTimeout(resolve, 1500))
      expect(claims).toEqual([0, 3, 1])
      expect(await rowsLeft("quiet")).toBe(0)
    } finally {
      await stop()
    }
  })

  it("a run that ends claims again for its key's rows queued while it ran, and for those a full claim left out", async () => {
    const seen: Array<string> = []
    const release: Array<() => void> = []
    const claims: Array<number> = []
    const stop = await listening(
      "behind",
      async (claimed) => {
        seen.push(claimed.payload)
        if (claimed.payload === "h1") await new Promise<void>((resolve) => release.push(resolve))
        return {}
      },
      { concurrency: 1, run: 5, onClaim: (runs) => claims.push(runs) }
    )
    try {
      await enqueue("behind", ["h1"], "h")
      await eventually(async () => (seen.length === 1 ? true : undefined), 10_000, "h1 started")
      // Queued while h's run holds the key and the listener's only slot: no claim can take them now.
      await enqueue("behind", ["h2"], "h")
      await enqueue("behind", ["o1"], "o")
      release.shift()!()
      // Both at once, not after the listener's longest wait (30 s).
      await eventually(async () => ((await rowsLeft("behind")) === 0 ? true : undefined), 10_000, "all handled")
      expect(seen.filter((p) => p.startsWith("h"))).toEqual(["h1", "h2"])
      expect([...seen].sort()).toEqual(["h1", "h2", "o1"])
    } finally {
      for (const r of release) r()
      await stop()
    }
  })

  // Needs a second connection holding a lock while the claim runs: PostgreSQL only (the embedded
  // database runs one statement at a time, so the claim could not be held up this way).
  it.skipIf((process.env.TEST_DATABASE_URL ?? "") === "")(
    "a row rung for while a claim runs (and skipped by it: its key's head taken) is claimed when that run ends, not after the lease",
    async () => {
      await enqueue("racing", ["r1"], "r")
      const seen: Array<string> = []
      const gate = Promise.withResolvers<void>()
      const locked = Promise.withResolvers<void>()
      // r1's `jobs` row locked: the listener's claim, which marks it running, waits on it.
      const holding = hearth.run(
        Effect.flatMap(Effect.service(SqlClient), (sql) =>
          Effect.orDie(
            sql.withTransaction(
              Effect.andThen(
                sql`SELECT 1 FROM jobs WHERE idempotency_key LIKE 'racing:%' FOR UPDATE`,
                Effect.andThen(
                  Effect.sync(() => locked.resolve()),
                  Effect.promise(() => gate.promise)
                )
              )
            )
          )
        )
      )
      await locked.promise
      const stop = await listening("racing", async (claimed) => {
        seen.push(claimed.payload)
        // r1 still running when the listener looks again after the ring: that claim skips r2.
        if (claimed.payload === "r1") await new Promise((resolve) => setTimeout(resolve, 500))
        return {}
      })
      try {
        const waiting = () =>
          hearth.run(
            Effect.flatMap(Effect.service(SqlClient), (sql) =>
              Effect.orDie(
                sql`SELECT /* test */ count(*) AS n FROM pg_stat_activity
                  WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'WITH RECURSIVE keys%'`
              )
            )
          )
        await eventually(async () => (Number((await waiting())[0]!.n) > 0 ? true : undefined), 10_000, "the claim held")
        // Queued and rung while the claim runs: the claim's snapshot does not see it.
        await enqueue("racing", ["r2"], "r")
        gate.resolve()
        await holding
        await eventually(async () => (seen.length === 2 ? true : undefined), 10_000, "r2 handled")
        expect(seen).toEqual(["r1", "r2"])
      } finally {
        gate.resolve()
        await stop()
      }
    }
  )

  it("stops at once when told to while it claims (not after its next wait, up to 30 s)", async () => {
    const q = await queue()
    const abort = new AbortController()
    // Told to stop while its claim is out (here: as the claim returns, before it works out its wait).
    const done = q.listen("stopping", async () => ({}), {
      attempts: 5,
      retryDelayMs: 100,
      onClaim: () => abort.abort(),
      signal: abort.signal
    })
    const stopped = await Promise.race([
      done.then(() => true),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 10_000))
    ])
    expect(stopped, "the listener still waiting 10 s after the stop").toBe(true)
  })

  it("takes a row leased by a node that died once its lease ends, and not before", async () => {
    await enqueue("lease", ["orphan"])
    // As a node that claimed the row and was killed would leave it: leased, one attempt counted.
    await hearth.run(
      Effect.flatMap(Effect.service(SqlClient), (sql) =>
        Effect.orDie(
          sql`UPDATE delivery_queue SET locked_until = now() + interval '2 seconds', attempts = 1 WHERE topic = 'lease'`
        )
      )
    )
    const seen: Array<Claimed> = []
    const stop = await listening("lease", async (claimed) => {
      seen.push(claimed)
      return {}
    })
    try {
      const leasedAt = Date.now()
      await eventually(async () => (seen.length === 1 ? true : undefined), 30_000, "the orphaned row handled")
      expect(Date.now() - leasedAt).toBeGreaterThanOrEqual(1000)
      expect(seen[0]!.attempt).toBe(2)
      // The row goes once its handler has finished (just after it).
      await eventually(async () => ((await rowsLeft("lease")) === 0 ? true : undefined), 10_000, "the row deleted")
    } finally {
      await stop()
    }
  })
})

describe("the doorbell that wakes a topic's listeners", () => {
  const settled = (promise: Promise<void>) =>
    Promise.race([promise.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20))])

  it("keeps a ring that comes after the ticket was taken but before it is awaited (a listener still claiming)", async () => {
    const bell = doorbell()
    const ticket = bell.ticket("t")
    bell.ring("t")
    await new Promise((resolve) => setTimeout(resolve, 5)) // the listener is busy elsewhere
    expect(await settled(ticket.rung)).toBe(true)
    ticket.drop()
  })

  it("does not count a ring from before the ticket, nor one of another name", async () => {
    const bell = doorbell()
    bell.ring("t")
    const ticket = bell.ticket("t")
    bell.ring("other")
    expect(await settled(ticket.rung)).toBe(false)
    bell.ring("t")
    expect(await settled(ticket.rung)).toBe(true)
  })

  it("rings every holder of the name, and a dropped ticket no more", async () => {
    const bell = doorbell()
    const [first, second, dropped] = [bell.ticket("t"), bell.ticket("t"), bell.ticket("t")]
    dropped.drop()
    bell.ring("t")
    expect(await Promise.all([settled(first.rung), settled(second.rung), settled(dropped.rung)])).toEqual([
      true,
      true,
      false
    ])
  })
})

// The event hop of issue 20 alone (`npm run bench:webhooks-hop`): hook tasks queued per second by
// the `webhooks` durable subscriber (src/webhooks/Service.ts `handleEvent`) from a backlog of push
// events. In bench:webhooks the hop runs while the pushes come in and keeps pace with them, so its
// rate there is the pushes'; here the test harness's in-process server takes every push first —
// BENCH_HOP_REFS new branches (default 1,000) to a repository with BENCH_HOP_HOOKS push hooks
// (default 10), BENCH_HOP_REFS_PER_PUSH (25) per `git push`, 4 pushers — while a row the benchmark
// put first in the repository's order of the durable queue (leased, as by a node at work on it)
// holds back its events; then it removes that row and times the hop until every task exists. Deliveries are not started (no receiver is needed). The embedded
// database by default; TEST_DATABASE_URL for PostgreSQL, as the tests. The hop then reads every
// push's commits with git (the feed's reads of them, kept for a while, are long gone by the end of
// a backlog this large).
import { mkdtempSync, rmSync } from "node:fs"
import { type AddressInfo, createServer, type Socket } from "node:net"
import os, { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { describe, it } from "vitest"
import { DeliveryQueue } from "../../src/jobs/Queue.ts"
import { gitIn, remoteAs } from "../../test/support/git.ts"
import { basic, createUser, startHearth } from "../../test/support/hearth.ts"

const count = (name: string, fallback: number) => {
  const n = Number(process.env[name] ?? fallback)
  return Number.isInteger(n) && n > 0 ? n : fallback
}
const REFS = count("BENCH_HOP_REFS", 1000)
const HOOKS = count("BENCH_HOP_HOOKS", 10)
const PER_PUSH = count("BENCH_HOP_REFS_PER_PUSH", 25)
const PUSHERS = 4

describe("bench: the webhooks event hop", () => {
  it("queues the hook tasks of a backlog of push events", async () => {
    // Holds every connection open, unanswered, until the end.
    const held: Array<Socket> = []
    const holder = createServer((socket) => void held.push(socket))
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve))
    const port = (holder.address() as AddressInfo).port
    const hearth = await startHearth({ webhook: { ALLOWED_HOST_LIST: "loopback", DELIVER_TIMEOUT: "3600" } })
    const work = mkdtempSync(join(tmpdir(), "hearth-bench-hop-"))
    try {
      await createUser(hearth, { username: "bench" })
      const call = (method: string, path: string, body: unknown) =>
        fetch(hearth.api(path), {
          method,
          headers: { authorization: basic("bench"), "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const created = await call("POST", "/user/repos", { name: "hooked", auto_init: true })
      if (created.status !== 201) throw new Error("could not create the repository")
      const repoId = ((await created.json()) as { id: number }).id
      for (let i = 0; i < HOOKS; i++) {
        const res = await call("POST", "/repos/bench/hooked/hooks", {
          type: "forgejo",
          config: { url: `http://127.0.0.1:${port}/hook/${i}`, content_type: "json" },
          events: ["push"],
          active: true
        })
        if (res.status !== 201) throw new Error(`hook ${i}: ${res.status} ${await res.text()}`)
      }
      // Let the repository's earlier events (its creation, …) through, then hold the rest back.
      const pending = async () =>
        Number(
          (await hearth.sql((sql) => sql`SELECT count(*) AS n FROM delivery_queue WHERE topic = 'events:webhooks'`))[0]!
            .n
        )
      while ((await pending()) > 0) await new Promise((r) => setTimeout(r, 50))
      await hearth.sql(
        (sql) => sql`INSERT INTO delivery_queue (topic, payload, ordering_key, job_key, locked_until)
          VALUES ('events:webhooks', '{}', ${`repo:${repoId}`}, 'bench-hold', now() + interval '1 hour')`
      )
      const pushers = Array.from({ length: PUSHERS }, (_, j) => j)
      await Promise.all(
        pushers.map(async (j) => {
          const cwd = join(work, `c${j}`)
          await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "bench", "bench/hooked"), cwd])
          const mine = Array.from({ length: REFS }, (_, i) => i).filter((i) => i % PUSHERS === j)
          const specs: Array<string> = []
          for (const i of mine) {
            await gitIn(cwd, ["commit", "-q", "--allow-empty", "-m", `change ${i}`])
            specs.push(`${await gitIn(cwd, ["rev-parse", "HEAD"])}:refs/heads/b${i}`)
          }
          for (let k = 0; k < specs.length; k += PER_PUSH)
            await gitIn(cwd, ["push", "-q", "origin", ...specs.slice(k, k + PER_PUSH)])
        })
      )
      const tasks = async () => Number((await hearth.sql((sql) => sql`SELECT count(*) AS n FROM hook_tasks`))[0]!.n)
      const events = (await pending()) - 1
      const expected = REFS * HOOKS
      const load = os.loadavg()
      const started = performance.now()
      await hearth.sql((sql) => sql`DELETE FROM delivery_queue WHERE job_key = 'bench-hold'`)
      // Rings the listener (an item it cannot read, given up on at once) rather than waiting for its next look.
      await hearth.run(
        Effect.flatMap(Effect.service(DeliveryQueue), (queue) =>
          queue.enqueue("events:webhooks", [{ payload: "{}", orderingKey: "bench:ring", kind: "events-webhooks" }])
        )
      )
      let n = 0
      while ((n = await tasks()) < expected && performance.now() - started < 1_200_000)
        await new Promise((r) => setTimeout(r, 20))
      const seconds = (performance.now() - started) / 1000
      process.stdout.write(
        `hop: ${events} push events (${REFS} ref updates, ${PER_PUSH} per push) × ${HOOKS} hooks: ${n} of ${expected} tasks queued in ${seconds.toFixed(2)} s = ${(n / seconds).toFixed(0)} tasks/s; ${process.env.TEST_DATABASE_URL ? "postgres" : "embedded"}; load ${load.map((l) => l.toFixed(2)).join(" ")} at start, ${os
          .loadavg()
          .map((l) => l.toFixed(2))
          .join(" ")} at end\n`
      )
    } finally {
      for (const socket of held) socket.destroy()
      holder.close()
      await hearth.close()
      rmSync(work, { recursive: true, force: true })
    }
  })
})

// The delivery history's cleanup (Forgejo's cron task cleanup_hook_task_table, CONTRACT-WEBHOOKS
// §1.13): on its SCHEDULE (here every second), CLEANUP_TYPE PerWebhook keeps the newest
// NUMBER_TO_KEEP delivered deliveries of each hook; OlderThan deletes the delivered ones older than
// OLDER_THAN; deliveries not yet made are never deleted.
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhooksRepo } from "../src/webhooks/Repo.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

let hearth: Hearth
let receiver: Receiver
const call = (method: string, path: string, body?: unknown) => request(hearth, method, path, basic("alice"), body)

const addHook = async (path: string) => {
  const res = await call("POST", "/repos/alice/code/hooks", {
    type: "forgejo",
    config: { url: receiver.url(path), content_type: "json" },
    events: ["push"],
    active: true
  })
  expect(res.status).toBe(201)
  return ((await json(res)) as { id: number }).id
}

const history = async (hook: number) =>
  (
    (await json(await call("GET", `/repos/alice/code/hooks/${hook}/deliveries?limit=50`))) as Array<{
      id: number
      delivered: boolean
    }>
  ).map((d) => d.id)

/** Sends `n` test deliveries to the hook and waits until the receiver has them all. */
const deliverTests = async (hook: number, path: string, n: number) => {
  for (let i = 0; i < n; i++) expect((await call("POST", `/repos/alice/code/hooks/${hook}/tests`)).status).toBe(204)
  await receiver.wait(path, n)
}

beforeAll(async () => {
  receiver = await startReceiver()
  hearth = await startHearth({
    webhook: { ALLOWED_HOST_LIST: "loopback" },
    "cron.cleanup_hook_task_table": { CLEANUP_TYPE: "PerWebhook", NUMBER_TO_KEEP: "3", SCHEDULE: "@every 1s" }
  })
  await createUser(hearth, { username: "alice" })
  expect((await call("POST", "/user/repos", { name: "code", auto_init: true })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
})

describe("the history's cleanup", () => {
  it("PerWebhook on its schedule: each hook keeps its newest NUMBER_TO_KEEP deliveries", async () => {
    const busy = await addHook("/busy")
    const quiet = await addHook("/quiet")
    await deliverTests(busy, "/busy", 6)
    await deliverTests(quiet, "/quiet", 2)
    // Bounded wait for the schedule (every second) to run once the six were delivered.
    const deadline = Date.now() + 20_000
    let kept = await history(busy)
    while (kept.length > 3 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 100))
      kept = await history(busy)
    }
    expect(kept).toHaveLength(3)
    const all = receiver.at("/busy").map((r) => String(r.headers["x-forgejo-delivery"]))
    const uuids = (
      (await json(await call("GET", `/repos/alice/code/hooks/${busy}/deliveries?limit=50`))) as Array<{ uuid: string }>
    ).map((d) => d.uuid)
    // The newest three (newest first), by what the receiver heard last.
    expect(uuids).toEqual(all.slice(-3).reverse())
    expect(await history(quiet)).toHaveLength(2)
  })

  it("OlderThan deletes delivered deliveries older than OLDER_THAN; undelivered ones stay either way", async () => {
    const hook = await addHook("/aging")
    await deliverTests(hook, "/aging", 2)
    const deadline = Date.now() + 20_000
    while (
      (await json(await call("GET", `/repos/alice/code/hooks/${hook}/deliveries`))).some((d: any) => !d.delivered)
    ) {
      if (Date.now() > deadline) throw new Error("the deliveries were not recorded")
      await new Promise((r) => setTimeout(r, 100))
    }
    const [newer, older] = await history(hook)
    const { pending } = await hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const repo = yield* WebhooksRepo
        yield* sql`UPDATE hook_tasks SET delivered_at = now() - interval '2 hours' WHERE id = ${older!}`
        // A delivery not made yet (never queued, so it stays so).
        const [inserted] = yield* repo.insertTasks([
          {
            hookId: hook,
            uuid: "cleanup-pending",
            sourceKey: null,
            eventType: "push",
            payload: "{}",
            redeliveryOf: null
          }
        ])
        yield* sql`UPDATE hook_tasks SET created_at = now() - interval '30 days' WHERE uuid = 'cleanup-pending'`
        return { pending: inserted!.id }
      })
    )
    const cleanup = (rule: Parameters<WebhooksRepo["Service"]["cleanup"]>[0]) =>
      hearth.run(Effect.flatMap(WebhooksRepo, (repo) => repo.cleanup(rule)))
    const removed = await cleanup({ type: "OlderThan", seconds: 3600 })
    expect(removed).toBe(1)
    expect(await history(hook)).toEqual([pending, newer])
    // PerWebhook with nothing to keep leaves the undelivered one too.
    await cleanup({ type: "PerWebhook", keep: 0 })
    expect(await history(hook)).toEqual([pending])
  })
})

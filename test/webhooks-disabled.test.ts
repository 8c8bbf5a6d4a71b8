// [security] DISABLE_WEBHOOKS (Forgejo's `reqWebhooksEnabled`, CONTRACT-WEBHOOKS §1.2): the hook
// routes answer 403 at the repository, organization and user levels, /admin/hooks still works
// (Forgejo's quirk), and nothing is ever sent.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { type Receiver, startReceiver } from "./support/receiver.ts"

let hearth: Hearth
let receiver: Receiver
const call = (user: string, method: string, path: string, body?: unknown) =>
  request(hearth, method, path, basic(user), body)

beforeAll(async () => {
  receiver = await startReceiver()
  hearth = await startHearth({ security: { DISABLE_WEBHOOKS: "true" }, webhook: { ALLOWED_HOST_LIST: "loopback" } })
  await createUser(hearth, { username: "root", isAdmin: true })
  await createUser(hearth, { username: "alice" })
  expect((await call("alice", "POST", "/user/repos", { name: "code" })).status).toBe(201)
  expect((await call("alice", "POST", "/orgs", { username: "guild" })).status).toBe(201)
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  await receiver?.close()
})

describe("DISABLE_WEBHOOKS", () => {
  it("refuses the hook routes but /admin/hooks, and sends nothing", async () => {
    for (const path of ["/repos/alice/code/hooks", "/orgs/guild/hooks", "/user/hooks"]) {
      const res = await call("alice", "GET", path)
      expect(res.status, path).toBe(403)
      expect((await json(res)).message).toBe("webhooks disabled by administrator")
    }
    const system = await call("root", "POST", "/admin/hooks", {
      type: "forgejo",
      config: { url: receiver.url("/ok/system"), content_type: "json", is_system_webhook: "true" },
      events: ["repository"],
      active: true
    })
    expect(system.status).toBe(201)
    expect((await call("alice", "POST", "/user/repos", { name: "more" })).status).toBe(201)
    // Nothing was queued for webhooks (the hub queues an event before the change is answered).
    const jobs = await json(await call("root", "GET", "/admin/jobs?limit=50"))
    expect(jobs.map((j: any) => j.kind)).not.toContain("events-webhooks")
    // The system hook would have heard this; its history stays empty.
    const id = (await json(system)).id
    expect(await json(await call("root", "GET", `/admin/hooks/${id}/deliveries`))).toEqual([])
    expect(receiver.received).toEqual([])
  })
})

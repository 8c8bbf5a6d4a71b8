// A webhook delivery survives a SIGKILL (src/webhooks/Service.ts, src/jobs/Queue.ts): a real
// `hearth serve` whose user has a hook on a receiver that answers 500 creates a repository; the
// server is SIGKILLed (with the event still queued, or with its delivery waiting for a retry) and
// started again on the same data; the receiver recovers; the delivery arrives — once, with the
// same delivery id on every attempt.

import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./support/federation.ts"
import { createAliceWithCli, killAll, onTestDatabase, restartableHearth } from "./support/spawn.ts"

interface Hit {
  readonly delivery: string
  readonly repo: string
  readonly status: number
}

const scope = Effect.runSync(Scope.make())
const dataDir = mkdtempSync(join(tmpdir(), "hearth-webhooks-kill-"))
let env: Record<string, string> = {}
let receiver: Server
let receiverUrl = ""
let failing = true
const hits: Array<Hit> = []
const hearth = restartableHearth(() => env, `Basic ${Buffer.from("alice:password123").toString("base64")}`)

/** The successful deliveries about a repository, and every attempt's delivery id. */
const about = (name: string) => hits.filter((h) => h.repo === `alice/${name}`)
const deliveredOnce = async (name: string) => {
  await eventually(
    async () => (about(name).some((h) => h.status === 200) ? true : undefined),
    150_000,
    `the delivery about ${name}`
  )
  await eventually(
    async () => {
      const jobs = (await hearth.api("GET", "/admin/jobs?limit=50")).body as Array<{ kind: string; state: string }>
      return jobs
        .filter((j) => j.kind === "webhook-delivery" || j.kind === "events-webhooks")
        .every((j) => j.state === "succeeded")
        ? true
        : undefined
    },
    60_000,
    "the deliveries to settle"
  )
  expect(about(name).filter((h) => h.status === 200)).toHaveLength(1)
  expect(new Set(about(name).map((h) => h.delivery)).size).toBe(1)
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const payload = JSON.parse(Buffer.concat(chunks).toString("utf8"))
      const status = failing ? 500 : 200
      hits.push({ delivery: String(req.headers["x-forgejo-delivery"]), repo: payload.repository?.full_name, status })
      res.writeHead(status)
      res.end()
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`
  env = {
    HEARTH__server__APP_DATA_PATH: dataDir,
    HEARTH__log__LEVEL: "Error",
    HEARTH__federation__ENABLED: "false",
    HEARTH__webhook__ALLOWED_HOST_LIST: "loopback",
    HEARTH__webhook__RETRY_DELAY: "1s",
    HEARTH__webhook__MAX_RETRIES: "12"
  }
  env = await onTestDatabase(env, scope)
  await createAliceWithCli(env)
  await hearth.start()
  const created = await hearth.api("POST", "/user/hooks", {
    type: "forgejo",
    config: { url: receiverUrl, content_type: "json" },
    events: ["repository"],
    active: true
  })
  expect(created.status).toBe(201)
}, 120_000)
afterAll(async () => {
  killAll()
  await new Promise<void>((resolve) => {
    receiver?.closeAllConnections()
    receiver?.close(() => resolve())
  })
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dataDir, { recursive: true, force: true })
})

describe("a webhook delivery pending when the server is SIGKILLed", () => {
  it("killed right after the change was answered: delivered exactly once after the restart", async () => {
    failing = true
    expect((await hearth.api("POST", "/user/repos", { name: "early" })).status).toBe(201)
    expect((await hearth.kill()).signal).toBe("SIGKILL")
    failing = false
    await hearth.start()
    await deliveredOnce("early")
  }, 300_000)

  it("killed while the delivery waits for its retry: delivered exactly once, same delivery id", async () => {
    failing = true
    expect((await hearth.api("POST", "/user/repos", { name: "kept" })).status).toBe(201)
    await eventually(async () => (about("kept").length >= 2 ? true : undefined), 150_000, "two failed attempts")
    expect((await hearth.kill()).signal).toBe("SIGKILL")
    failing = false
    await hearth.start()
    await deliveredOnce("kept")
    expect(about("early").filter((h) => h.status === 200)).toHaveLength(1)
  }, 300_000)
})

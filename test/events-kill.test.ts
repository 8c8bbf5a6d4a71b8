// What must not be lost survives a SIGKILL between the change and its delivery (src/events,
// src/jobs/Queue.ts): a real `hearth serve` whose user has a follower on a Fedify peer creates a
// repository; the peer's inbox fails, so the note about it waits in the delivery queue; the server
// is SIGKILLed and started again on the same data; the note arrives — once.
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as V from "@fedify/fedify/vocab"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually } from "./support/federation.ts"
import { type Peer, startPeer } from "./support/fedify-peer.ts"
import { freePort } from "./support/hearth.ts"
import {
  createAliceWithCli,
  type HearthProcess,
  killAll,
  onTestDatabase,
  sleep,
  spawnHearth,
  within
} from "./support/spawn.ts"

interface Job {
  readonly kind: string
  readonly state: string
  readonly attempts: number
}

const scope = Effect.runSync(Scope.make())
const dataDir = mkdtempSync(join(tmpdir(), "hearth-events-kill-"))
let env: Record<string, string> = {}
let port = 0
let server: HearthProcess | undefined
let peer: Peer
const base = () => `http://127.0.0.1:${port}`
const auth = `Basic ${Buffer.from("alice:password123").toString("base64")}`
const api = (method: string, path: string, body?: unknown) =>
  fetch(`${base()}/api/v1${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

const start = async () => {
  server = spawnHearth(env, ["serve"], port)
  for (let i = 0; i < 600; i++) {
    if (
      await fetch(`${base()}/api/v1/version`).then(
        (r) => r.ok,
        () => false
      )
    )
      return
    await sleep(50)
  }
  throw new Error(`hearth did not start: ${server.output().stderr}`)
}
const jobs = async (kind: string): Promise<Array<Job>> =>
  ((await (await api("GET", "/admin/jobs?limit=50")).json()) as Array<Job>).filter((job) => job.kind === kind)
/** The notes about the repository the peer took (verified by Fedify). */
const notes = (name: string) =>
  peer.verified.filter(
    (a) => a.type === "Create" && String(a.json?.object?.content ?? "").includes(`created the repository alice/${name}`)
  )
const kill = async () => {
  const running = server!
  running.child.kill("SIGKILL")
  expect((await within(running.exited, 15_000, "exit after SIGKILL")).signal).toBe("SIGKILL")
}
/** Waits until every delivery settled, then checks that the note arrived once. */
const deliveredOnce = async (name: string) => {
  await eventually(async () => (notes(name).length > 0 ? true : undefined), 150_000, `the note about ${name}`)
  await eventually(
    async () => {
      const all = [...(await jobs("federation-outbox")), ...(await jobs("events-federation"))]
      return all.every((job) => job.state === "succeeded") ? true : undefined
    },
    60_000,
    "the deliveries to settle"
  )
  expect(notes(name)).toHaveLength(1)
}

beforeAll(async () => {
  port = await freePort()
  env = {
    HEARTH__server__APP_DATA_PATH: dataDir,
    HEARTH__server__ROOT_URL: `http://127.0.0.1:${port}/`,
    HEARTH__log__LEVEL: "Error",
    HEARTH__federation__ENABLED: "true",
    HEARTH__federation__USE_INSECURE_HTTP: "true",
    HEARTH__federation__ALLOW_LOCALNETWORKS: "true",
    HEARTH__federation__DELIVERY_RETRY_DELAY: "1s",
    HEARTH__federation__DELIVERY_ATTEMPTS: "10"
  }
  env = await onTestDatabase(env, scope, { migrated: true })
  peer = await startPeer()
  await createAliceWithCli(env)
  await start()
}, 120_000)
afterAll(async () => {
  killAll()
  await peer?.close()
  await Effect.runPromise(Scope.close(scope, Exit.void))
  rmSync(dataDir, { recursive: true, force: true })
})

describe("a repository's note pending when the server is SIGKILLed", () => {
  it("the peer follows alice", async () => {
    const alice = `${base()}/api/v1/activitypub/user/alice`
    await peer.send(new V.Follow({ id: peer.newId("follow"), actor: new URL(peer.actor()), object: new URL(alice) }), {
      id: alice,
      inbox: `${alice}/inbox`
    })
    await eventually(
      async () => (peer.verified.some((a) => a.type === "Accept") ? true : undefined),
      30_000,
      "the Accept of the follow"
    )
  })

  it("killed right after the change was answered: delivered exactly once after the restart", async () => {
    // Wherever the kill lands — the event still queued for federation, its note being made, the
    // note queued for the peer — the note arrives after the restart, and once.
    peer.inbox = { kind: "status", status: 500 }
    expect((await api("POST", "/user/repos", { name: "early" })).status).toBe(201)
    await kill()
    peer.inbox = { kind: "normal" }
    await start()
    await deliveredOnce("early")
  }, 300_000)

  it("killed while the note's delivery waits for its retry: delivered exactly once after the restart", async () => {
    peer.inbox = { kind: "status", status: 500 }
    expect((await api("POST", "/user/repos", { name: "kept" })).status).toBe(201)
    await eventually(
      async () => ((await jobs("federation-outbox")).some((job) => job.state === "retrying") ? true : undefined),
      60_000,
      "the note's delivery to be retrying"
    )
    await kill()
    peer.inbox = { kind: "normal" }
    expect(notes("kept")).toEqual([])
    await start()
    await deliveredOnce("kept")
    expect(notes("early")).toHaveLength(1)
  }, 300_000)
})

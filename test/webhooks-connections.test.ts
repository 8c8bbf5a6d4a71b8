// How deliveries reach receivers (src/webhooks/Send.ts, Service.ts): a hook's deliveries reuse one
// kept-open connection; [webhook] QUEUE_LENGTH bounds the deliveries in flight at once (1 here: one
// at a time, across hooks); a push of several refs reaches each hook in the refs' order, and pushes
// whose events wait in the hub's queue (handled in one claimed run) in the pushes' order; a push's
// deliveries take the tasks the event hop just stored from it rather than reading them back
// (statements counted by a tracer of the test's own: every statement is a span carrying its text).
import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeliveryQueue } from "../src/jobs/Queue.ts"
import { gitIn, remoteAs } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request, startHearth } from "./support/hearth.ts"
import { recordStatements } from "./support/statements.ts"

let hearth: Hearth
let work: string
let receiver: Server
let port: number
const call = (method: string, path: string, body?: unknown) => request(hearth, method, path, basic("alice"), body)

const { statements, layer: statementsLayer } = recordStatements()

// The receiver: every request with the connection it came on; answers after 150 ms, counting how
// many requests were waiting for their answer at once.
const seen: Array<{ path: string; socket: number; event: string; ref: string }> = []
const sockets = new WeakMap<Socket, number>()
let opened = 0
let inFlight = 0
let most = 0

const addHook = async (path: string, events: Array<string>) => {
  const res = await call("POST", "/repos/alice/code/hooks", {
    type: "forgejo",
    config: { url: `http://127.0.0.1:${port}${path}`, content_type: "json" },
    events,
    active: true
  })
  expect(res.status).toBe(201)
  return (await json(res)) as { id: number }
}
const removeHook = async (id: number) =>
  expect((await call("DELETE", `/repos/alice/code/hooks/${id}`)).status).toBe(204)

const waitFor = async (path: string, count: number) => {
  const deadline = Date.now() + 30_000
  while (seen.filter((s) => s.path === path).length < count) {
    if (Date.now() > deadline) throw new Error(`${path}: ${seen.filter((s) => s.path === path).length} of ${count}`)
    await new Promise((r) => setTimeout(r, 50))
  }
  return seen.filter((s) => s.path === path)
}

const git = (args: ReadonlyArray<string>) => gitIn(join(work, "code"), args)
let pushes = 0
/** One `git push` creating the branches `names`, each at a commit of its own. */
const pushBranches = async (names: ReadonlyArray<string>) => {
  const specs: Array<string> = []
  for (const name of names) {
    await git(["commit", "-q", "--allow-empty", "-m", `commit for ${name} (${++pushes})`])
    specs.push(`HEAD:refs/heads/${name}`)
  }
  await git(["push", "-q", "origin", ...specs])
}

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let socket = sockets.get(req.socket)
    if (socket === undefined) sockets.set(req.socket, (socket = ++opened))
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      inFlight++
      most = Math.max(most, inFlight)
      const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { ref?: string }
      seen.push({ path: req.url ?? "", socket, event: String(req.headers["x-forgejo-event"]), ref: body.ref ?? "" })
      setTimeout(() => {
        inFlight--
        res.writeHead(200).end("ok")
      }, 150)
    })
  })
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
  port = (receiver.address() as AddressInfo).port
  hearth = await startHearth(
    { webhook: { ALLOWED_HOST_LIST: "loopback", QUEUE_LENGTH: "1" } },
    { layer: statementsLayer }
  )
  work = mkdtempSync(join(tmpdir(), "hearth-webhooks-connections-"))
  await createUser(hearth, { username: "alice" })
  expect((await call("POST", "/user/repos", { name: "code", auto_init: true })).status).toBe(201)
  await gitIn(work, ["clone", "-q", remoteAs(hearth.base, "alice", "alice/code"), "code"])
}, 120_000)
afterAll(async () => {
  await hearth?.close()
  receiver?.closeAllConnections()
  receiver?.close()
  if (work !== undefined) rmSync(work, { recursive: true, force: true })
})

describe("connections to receivers", () => {
  it("a hook's deliveries one after another reuse one kept-open connection", async () => {
    const hook = await addHook("/keep", ["push"])
    try {
      await pushBranches(["keep-1", "keep-2", "keep-3"])
      const got = await waitFor("/keep", 3)
      expect(got.map((s) => s.ref)).toEqual(["refs/heads/keep-1", "refs/heads/keep-2", "refs/heads/keep-3"])
      expect(new Set(got.map((s) => s.socket)).size).toBe(1)
    } finally {
      await removeHook(hook.id)
    }
  })
})

describe("from the event hop to the receiver", () => {
  it("a push's deliveries take the tasks the hop just stored, not read back from the database", async () => {
    const hooks = [await addHook("/fresh/a", ["push"]), await addHook("/fresh/b", ["push"])]
    try {
      const from = statements.length
      await pushBranches(["fresh-1"])
      for (const path of ["/fresh/a", "/fresh/b"]) await waitFor(path, 1)
      const reads = statements.slice(from).filter((text) => /FROM hook_tasks t LEFT JOIN webhooks/.test(text))
      expect(reads).toEqual([])
      // A redelivery has no task just stored: it reads its task (and is sent as before).
      const [task] = (await json(await call("GET", `/repos/alice/code/hooks/${hooks[0]!.id}/deliveries`))) as Array<{
        id: number
      }>
      const again = statements.length
      expect(
        (await call("POST", `/repos/alice/code/hooks/${hooks[0]!.id}/deliveries/${task!.id}/attempts`)).status
      ).toBeLessThan(300)
      await waitFor("/fresh/a", 2)
      expect(statements.slice(again).filter((text) => /FROM hook_tasks t LEFT JOIN webhooks/.test(text))).toHaveLength(
        1
      )
    } finally {
      for (const hook of hooks) await removeHook(hook.id)
    }
  })
})

describe("[webhook] QUEUE_LENGTH", () => {
  it("bounds the deliveries in flight at once: 1 sends one at a time, also to different hooks", async () => {
    const hooks = [
      await addHook("/one/a", ["push"]),
      await addHook("/one/b", ["push"]),
      await addHook("/one/c", ["push"])
    ]
    try {
      most = 0
      await pushBranches(["one-1", "one-2"])
      for (const path of ["/one/a", "/one/b", "/one/c"]) await waitFor(path, 2)
      expect(most).toBe(1)
    } finally {
      for (const hook of hooks) await removeHook(hook.id)
    }
  })
})

describe("a push of several refs", () => {
  it("reaches every hook in the refs' order, create before push for each new branch", async () => {
    const hooks = [await addHook("/order/a", ["push", "create"]), await addHook("/order/b", ["push", "create"])]
    try {
      const names = ["order-1", "order-2", "order-3", "order-4"]
      await pushBranches(names)
      const expected = names.flatMap((name) => [`create ${name}`, `push ${name}`])
      for (const path of ["/order/a", "/order/b"]) {
        const got = await waitFor(path, expected.length)
        expect(got.map((s) => `${s.event} ${s.ref.replace("refs/heads/", "")}`)).toEqual(expected)
      }
    } finally {
      for (const hook of hooks) await removeHook(hook.id)
    }
  })
})

describe("pushes whose events wait behind each other", () => {
  it("reach every hook in the pushes' order (one claimed run of events)", async () => {
    const hooks = [await addHook("/ahead/a", ["push"]), await addHook("/ahead/b", ["push"])]
    const repoId = ((await json(await call("GET", "/repos/alice/code"))) as { id: number }).id
    const pendingEvents = async () =>
      Number(
        (await hearth.sql((sql) => sql`SELECT count(*) AS n FROM delivery_queue WHERE topic = 'events:webhooks'`))[0]!.n
      )
    try {
      const deadline = Date.now() + 30_000
      while ((await pendingEvents()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50))
      // A row first in the repository's order, leased (as by a node at work on it), holds the pushes'
      // events back until it goes: then they are claimed together, as one run.
      await hearth.sql(
        (sql) => sql`INSERT INTO delivery_queue (topic, payload, ordering_key, job_key, locked_until)
          VALUES ('events:webhooks', '{}', ${`repo:${repoId}`}, 'test-hold', now() + interval '1 hour')`
      )
      const pushed = [["ahead-1a", "ahead-1b"], ["ahead-2a"], ["ahead-3a", "ahead-3b"], ["ahead-4a"]]
      for (const names of pushed) await pushBranches(names)
      expect(await pendingEvents()).toBe(1 + pushed.length)
      await hearth.sql((sql) => sql`DELETE FROM delivery_queue WHERE job_key = 'test-hold'`)
      // Rings the hub's listener (with an item it cannot read, given up on at once) rather than waiting for its next look.
      await hearth.run(
        Effect.flatMap(Effect.service(DeliveryQueue), (queue) =>
          queue.enqueue("events:webhooks", [{ payload: "{}", orderingKey: "test:ring", kind: "events-webhooks" }])
        )
      )
      const expected = pushed.flat()
      for (const path of ["/ahead/a", "/ahead/b"]) {
        const got = await waitFor(path, expected.length)
        expect(got.map((s) => s.ref.replace("refs/heads/", ""))).toEqual(expected)
      }
    } finally {
      await hearth.sql((sql) => sql`DELETE FROM delivery_queue WHERE job_key = 'test-hold'`)
      for (const hook of hooks) await removeHook(hook.id)
    }
  })
})

// Outbound delivery is durable, ordered and bounded (issue 8 item 5, Store.ts): a Hearth user stars
// and unstars repositories of a Fedify peer (with ForgeFed repositories) whose inbox
// fails in the ways a remote does. A failed delivery keeps its place and is retried with doubling
// delay, readable as a `federation-outbox` job at /admin/jobs; later deliveries to that server wait
// behind it (a Like, then its Undo, arrive in that order) and go on once it is delivered or has
// failed DELIVERY_ATTEMPTS times; a delivery pending when the process is SIGKILLed is delivered
// after a restart. The host policy (BLOCKED_HOSTS, ALLOWED_HOSTS, ALLOW_LOCALNETWORKS) refuses
// follows and stars there (403) and deliveries there, redirects included; an account that is not
// public cannot act remotely; with federation off, remote follows and stars answer 422 and the
// federation routes 404.

import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as V from "@fedify/fedify/vocab"
import { Effect, Exit, Option, Scope } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FederationRepo } from "../federation/Repo.ts"
import { UsersRepo } from "../src/users/Repo.ts"
import { eventually, startFederated } from "./support/federation.ts"
import { type Peer, type Received, startPeer } from "./support/fedify-peer.ts"
import { basic, createUser, freePort, type Hearth, json, request } from "./support/hearth.ts"
import {
  createAliceWithCli,
  type HearthProcess,
  killAll,
  onTestDatabase,
  spawnHearth,
  within
} from "./support/spawn.ts"

let hearth: Hearth
let peer: Peer
const repositories = ["failing", "later", "doomed", "after-doomed", "down", "busy", "slow", "knock"]

beforeAll(async () => {
  ;[hearth, peer] = await Promise.all([
    startFederated({ federation: { DELIVERY_ATTEMPTS: "4", DELIVERY_RETRY_DELAY: "1s" } }),
    startPeer({ names: ["peer"], repositories })
  ])
  await createUser(hearth, { username: "Alice", isAdmin: true })
})
afterAll(async () => {
  await Promise.all([hearth?.close(), peer?.close()])
})

interface Job {
  readonly id: number
  readonly kind: string
  readonly state: string
  readonly attempts: number
  readonly last_error: string
}

/** The delivery jobs, oldest first (the API lists newest first). */
const deliveries = async (): Promise<Array<Job>> => {
  const res = await request(hearth, "GET", "/admin/jobs?limit=50", basic("Alice"))
  expect(res.status).toBe(200)
  return ((await json(res)) as Array<Job>).filter((job) => job.kind === "federation-outbox").reverse()
}

const starPath = (name: string) => `/user/starred/${peer.handle()}/${name}`
const star = async (name: string) => {
  const res = await request(hearth, "PUT", starPath(name), basic("Alice"))
  expect(res.status, await res.clone().text()).toBe(204)
}
const unstar = async (name: string) =>
  expect((await request(hearth, "DELETE", starPath(name), basic("Alice"))).status).toBe(204)

/** What the peer's inbox got about one of its repositories: "Like" or "Undo", with the answer. */
const about = (name: string) => (post: Received) =>
  post.body?.object === peer.repository(name) || post.body?.object?.object === peer.repository(name)
const postsAbout = (name: string) => peer.posts.filter(about(name)).map((post) => `${post.type} ${post.status}`)
const verifiedAbout = (name: string) =>
  peer.verified
    .filter((a) => a.json?.object === peer.repository(name) || a.json?.object?.object === peer.repository(name))
    .map((a) => a.type)

/** The jobs enqueued after `before` of them, once `done` holds for them. */
const jobsAfter = (before: number, count: number, done: (jobs: Array<Job>) => boolean, what: string) =>
  eventually(
    async () => {
      const jobs = (await deliveries()).slice(before)
      return jobs.length === count && done(jobs) ? jobs : undefined
    },
    30_000,
    what
  )

describe("a failing inbox", () => {
  it("an inbox that refuses RFC 9421 (401) gets the same delivery signed draft-cavage, in the same attempt", async () => {
    const before = (await deliveries()).length
    peer.inbox = (post) => (post.spec === "rfc9421" ? { kind: "status", status: 401 } : { kind: "normal" })
    try {
      await star("knock")
      const [job] = await jobsAfter(before, 1, ([j]) => j!.state === "succeeded", "the Like to be delivered")
      expect(job!.attempts).toBe(1)
      expect(peer.posts.filter(about("knock")).map((post) => `${post.spec} ${post.status}`)).toEqual([
        "rfc9421 401",
        "draft-cavage-http-signatures-12 202"
      ])
      expect(verifiedAbout("knock")).toEqual(["Like"])
    } finally {
      peer.inbox = { kind: "normal" }
    }
  })

  it("the job shows retrying with attempts and the last error; the Undo waits behind the Like; both arrive, in order", async () => {
    const before = (await deliveries()).length
    peer.inbox = { kind: "status", status: 500 }
    await star("failing")
    const [like] = await jobsAfter(
      before,
      1,
      ([j]) => j!.state === "retrying" && j!.attempts >= 1,
      "the Like to be retrying"
    )
    expect(like!.last_error).toMatch(/500/)

    await unstar("failing")
    // The Like is tried again while the Undo, behind it, is not tried at all.
    const waiting = await jobsAfter(before, 2, ([j]) => j!.attempts >= 2, "a second attempt of the Like")
    expect(waiting[1]).toMatchObject({ state: "queued", attempts: 0 })
    expect(postsAbout("failing").every((post) => post === "Like 500")).toBe(true)

    peer.inbox = { kind: "normal" }
    const done = await jobsAfter(
      before,
      2,
      (jobs) => jobs.every((j) => j.state === "succeeded"),
      "both to be delivered"
    )
    expect(done[0]!.attempts).toBeGreaterThanOrEqual(2)
    expect(done[1]!.attempts).toBe(1)
    expect(verifiedAbout("failing")).toEqual(["Like", "Undo"])
    expect(postsAbout("failing").slice(-2)).toEqual(["Like 202", "Undo 202"])
  })

  it("a 503 with Retry-After keeps the Like's place: its Undo does not overtake it, and the attempt counts", async () => {
    const before = (await deliveries()).length
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    // The Like's first attempt is answered 503 (both of Fedify's knocks, one signature format each),
    // and only once its Undo is queued behind it.
    let busy = 2
    peer.inbox = (post) => {
      if (post.type === "Like" && about("busy")(post) && busy > 0) {
        busy--
        return { kind: "status", status: 503, headers: { "retry-after": "1" }, after: held }
      }
      return { kind: "normal" }
    }
    await star("busy")
    await eventually(
      async () => (peer.posts.some(about("busy")) ? true : undefined),
      15_000,
      "the Like to reach the peer"
    )
    await unstar("busy")
    await jobsAfter(before, 2, () => true, "the Undo to be queued")
    release()

    const done = await jobsAfter(
      before,
      2,
      (jobs) => jobs.every((j) => j.state === "succeeded"),
      "both to be delivered"
    )
    expect(verifiedAbout("busy")).toEqual(["Like", "Undo"])
    expect(postsAbout("busy")).toEqual(["Like 503", "Like 503", "Like 202", "Undo 202"])
    expect(done.map((j) => j.attempts)).toEqual([2, 1])
    peer.inbox = { kind: "normal" }
  })

  it(`after DELIVERY_ATTEMPTS the job is failed, and the deliveries behind it go on`, async () => {
    const before = (await deliveries()).length
    peer.inbox = (post) => (about("doomed")(post) ? { kind: "status", status: 500 } : { kind: "normal" })
    await star("doomed")
    await star("after-doomed")
    const jobs = await jobsAfter(
      before,
      2,
      ([a, b]) => a!.state === "failed" && b!.state === "succeeded",
      "the first to fail, the second to go"
    )
    expect(jobs[0]).toMatchObject({ state: "failed", attempts: 4 })
    expect(jobs[0]!.last_error).toMatch(/500/)
    // Four attempts of two knocks each.
    expect(postsAbout("doomed")).toEqual(Array(8).fill("Like 500"))
    expect(verifiedAbout("after-doomed")).toEqual(["Like"])
    // The second waited for the first's last attempt.
    const order = peer.posts.map((post) => post.body?.object)
    expect(order.indexOf(peer.repository("after-doomed"))).toBeGreaterThan(order.lastIndexOf(peer.repository("doomed")))
    peer.inbox = { kind: "normal" }
  })

  it("a 410 (the inbox is gone) fails the job at once, with the reason", async () => {
    const before = (await deliveries()).length
    peer.inbox = { kind: "status", status: 410 }
    await star("later")
    const [job] = await jobsAfter(before, 1, ([j]) => j!.state === "failed", "the job to fail")
    expect(job!.attempts).toBe(1)
    expect(job!.last_error).toMatch(/410/)
    peer.inbox = { kind: "normal" }
    await unstar("later")
  })

  it("an inbox that never answers: the attempt ends at the fetch time-out, and deliveries to other servers go on meanwhile", async () => {
    const other = await startPeer({ names: ["other"], repositories: ["code"] })
    try {
      const before = (await deliveries()).length
      peer.inbox = { kind: "hang" }
      await star("slow")
      await eventually(
        async () => (peer.posts.some(about("slow")) ? true : undefined),
        15_000,
        "the Like to reach the peer"
      )
      // Another server is not kept waiting by this one.
      expect((await request(hearth, "PUT", `/user/starred/${other.handle()}/code`, basic("Alice"))).status).toBe(204)
      await eventually(
        async () => (other.verified.some((a) => a.type === "Like") ? true : undefined),
        15_000,
        "the other server's Like"
      )
      expect(peer.posts.filter(about("slow")).map((post) => post.status)).toEqual([0])

      const [job] = await jobsAfter(before, 2, ([j]) => j!.state === "retrying", "the hanging attempt to end")
      expect(job!.last_error).toMatch(/did not answer within 10 s/)
      peer.inbox = { kind: "normal" }
      await jobsAfter(before, 2, (jobs) => jobs.every((j) => j.state === "succeeded"), "the Like to be delivered")
      expect(verifiedAbout("slow")).toEqual(["Like"])
    } finally {
      peer.inbox = { kind: "normal" }
      await other.close()
    }
  }, 60_000)

  it("the peer down: the job is retrying with the connection's error, and delivered when the peer is back", async () => {
    const before = (await deliveries()).length
    await star("down")
    await jobsAfter(before, 1, ([j]) => j!.state === "succeeded", "the Like to be delivered")
    await peer.stop()
    try {
      await unstar("down") // the repository is known: nothing to look up
      const [, job] = await jobsAfter(before, 2, ([, j]) => j!.state === "retrying", "the Undo to be retrying")
      expect(job!.last_error).toMatch(/ECONNREFUSED|connect/i)
    } finally {
      await peer.start()
    }
    await jobsAfter(before, 2, ([, j]) => j!.state === "succeeded", "the Undo to be delivered")
    expect(verifiedAbout("down")).toEqual(["Like", "Undo"])
  })
})

describe("a delivery pending when the process is SIGKILLed", () => {
  // A real `hearth serve` on one port and one data dir, killed and started again: the queued
  // activities name its actors and keys by URL, so it must come back where it was.
  const scope = Effect.runSync(Scope.make())
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-delivery-kill-"))
  let env: Record<string, string> = {}
  let port = 0
  let server: HearthProcess | undefined
  let waiting: Peer
  let hanging: Peer
  const base = () => `http://127.0.0.1:${port}`
  const api = (method: string, path: string) =>
    fetch(`${base()}/api/v1${path}`, { method, headers: { authorization: basic("alice") } })

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
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    throw new Error(`hearth did not start: ${server.output().stderr}`)
  }
  const jobs = async (): Promise<Array<Job>> =>
    ((await (await api("GET", "/admin/jobs?limit=50")).json()) as Array<Job>)
      .filter((job) => job.kind === "federation-outbox")
      .reverse()

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
    ;[waiting, hanging] = await Promise.all([
      startPeer({ repositories: ["waiting"] }),
      startPeer({ repositories: ["hanging"] })
    ])
    await createAliceWithCli(env)
    await start()
  }, 120_000)
  afterAll(async () => {
    killAll()
    await Promise.all([waiting?.close(), hanging?.close()])
    await Effect.runPromise(Scope.close(scope, Exit.void))
    rmSync(dataDir, { recursive: true, force: true })
  })

  it("one waiting to be retried, and one in flight, are both delivered after a restart", async () => {
    // To one peer the Like fails and waits for its retry; the other peer's inbox holds the Like unanswered.
    waiting.inbox = { kind: "status", status: 500 }
    hanging.inbox = { kind: "hang" }
    expect((await api("PUT", `/user/starred/${waiting.handle()}/waiting`)).status).toBe(204)
    await eventually(
      async () => ((await jobs())[0]?.state === "retrying" ? true : undefined),
      30_000,
      "the first Like to be retrying"
    )
    expect((await api("PUT", `/user/starred/${hanging.handle()}/hanging`)).status).toBe(204)
    await eventually(
      async () => (hanging.posts.some((post) => post.type === "Like") ? true : undefined),
      30_000,
      "the second Like in flight"
    )

    const running = server!
    running.child.kill("SIGKILL")
    expect((await within(running.exited, 15_000, "exit after SIGKILL")).signal).toBe("SIGKILL")
    waiting.inbox = { kind: "normal" }
    hanging.inbox = { kind: "normal" }
    // A command run meanwhile sends nothing: the waiting Like's retry is due by now (a few failures,
    // 1 s doubling), but only a serving node delivers (the remote fetches the sender's key from it).
    await new Promise((resolve) => setTimeout(resolve, 5_000))
    const postsBefore = waiting.posts.length + hanging.posts.length
    const command = spawnHearth(env, ["admin", "user", "list"])
    expect((await within(command.exited, 60_000, "admin user list")).code).toBe(0)
    expect(waiting.posts.length + hanging.posts.length).toBe(postsBefore)
    await start()

    // The in-flight one's lease (30 s) has to run out first: another node might still be sending it.
    // The waiting one comes at its next retry, whose delay doubled with each failure before the kill
    // (more of them on a busy machine, where the second Like takes longer to be in flight).
    await eventually(
      async () => (waiting.verified.some((a) => a.type === "Like") ? true : undefined),
      150_000,
      "the waiting Like after the restart"
    ).catch(async (error: Error) => {
      // What to look at when it does not come: the jobs, what the peer saw, what the server said.
      const seen = waiting.posts.map((post) => `${post.type} ${post.status}`).join(", ")
      const said = server?.output().stderr.slice(-2000) ?? ""
      throw new Error(
        `${error.message}; jobs: ${JSON.stringify(await jobs().catch(() => "?"))}; waiting peer got: ${seen}; server stderr: ${said}`
      )
    })
    await eventually(
      async () => (hanging.verified.some((a) => a.type === "Like") ? true : undefined),
      90_000,
      "the in-flight Like after the restart"
    )
    const done = await eventually(
      async () => {
        const list = await jobs()
        return list.length === 2 && list.every((job) => job.state === "succeeded") ? list : undefined
      },
      30_000,
      "both jobs to succeed"
    )
    expect(done.every((job) => job.attempts >= 2)).toBe(true)
    // Each was delivered once: no copy was sent by a run that no longer exists.
    expect(waiting.posts.filter((post) => post.type === "Like" && post.status === 202)).toHaveLength(1)
    expect(hanging.posts.filter((post) => post.type === "Like" && post.status === 202)).toHaveLength(1)
  }, 300_000)
})

describe("the host policy", () => {
  // B blocks 127.0.0.2; C federates only with 127.0.0.2 and not with local networks otherwise; D
  // federates with no local network at all. Peers: `near` on 127.0.0.1, `far` on 127.0.0.2.
  let blocking: Hearth
  let allowing: Hearth
  let remoteOnly: Hearth
  let near: Peer
  let far: Peer
  beforeAll(async () => {
    ;[blocking, allowing, remoteOnly, near, far] = await Promise.all([
      startFederated({ federation: { BLOCKED_HOSTS: "127.0.0.2" } }),
      startFederated({ federation: { ALLOW_LOCALNETWORKS: "false", ALLOWED_HOSTS: "127.0.0.2" } }),
      startFederated({ federation: { ALLOW_LOCALNETWORKS: "false" } }),
      startPeer({ names: ["near"], repositories: ["code"] }),
      startPeer({ names: ["far"], repositories: ["code"], address: "127.0.0.2" })
    ])
    for (const instance of [blocking, allowing, remoteOnly]) {
      await createUser(instance, { username: "Alice", isAdmin: true })
      await createUser(instance, { username: "Hidden", visibility: "private" })
    }
  })
  afterAll(async () => {
    await Promise.all([blocking?.close(), allowing?.close(), remoteOnly?.close(), near?.close(), far?.close()])
  })

  const jobsOf = async (instance: Hearth): Promise<Array<Job>> =>
    (await json(await request(instance, "GET", "/admin/jobs?limit=50", basic("Alice"))))
      .filter((job: Job) => job.kind === "federation-outbox")
      .reverse()
  const tables = (instance: Hearth) =>
    instance.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const count = (table: string) =>
          Effect.map(sql`SELECT count(*) AS n FROM ${sql(table)}`, (rows) => Number(rows[0]!.n))
        return {
          actors: yield* count("federation_actors"),
          following: yield* count("federation_following"),
          stars: yield* count("federation_remote_stars"),
          queued: yield* count("federation_queue")
        }
      })
    )
  /** A follower recorded before the policy changed (as after a restart with new settings). */
  const recordFollower = (instance: Hearth, inbox: string, uri: string) =>
    instance.run(
      Effect.gen(function* () {
        const repo = yield* FederationRepo
        const alice = yield* UsersRepo.use((users) => users.findByName("Alice"))
        const actor = yield* repo.upsertActor({
          uri,
          host: new URL(uri).host,
          type: "Person",
          preferredUsername: "someone",
          name: "",
          inbox,
          sharedInbox: "",
          url: ""
        })
        yield* repo.addFollower(Option.getOrThrow(alice).id, actor.id, `${uri}#follow-1`)
      })
    )

  it("BLOCKED_HOSTS: following or starring there is refused (403) and nothing is recorded or fetched", async () => {
    const before = await tables(blocking)
    const seen = far.requests.length
    const follow = await request(blocking, "PUT", `/user/following/${far.handle()}`, basic("Alice"))
    expect(follow.status).toBe(403)
    expect((await json(follow)).message).toMatch(/does not federate with that host/)
    expect((await request(blocking, "PUT", `/user/starred/${far.handle()}/code`, basic("Alice"))).status).toBe(403)
    expect(await tables(blocking)).toEqual(before)
    expect(far.requests.length).toBe(seen)
    // A host not on the list is followed as ever.
    expect((await request(blocking, "PUT", `/user/following/${near.handle()}`, basic("Alice"))).status).toBe(204)
  })

  it("BLOCKED_HOSTS: an actor elsewhere whose inbox is there cannot be followed or starred (403), nothing recorded", async () => {
    const misdirected = await startPeer({ names: ["misdirected"], repositories: ["code"], inboxAt: far.base })
    try {
      const before = await tables(blocking)
      const follow = await request(blocking, "PUT", `/user/following/${misdirected.handle()}`, basic("Alice"))
      expect(follow.status).toBe(403)
      expect((await json(follow)).message).toMatch(
        /cannot be delivered to: This server does not federate with that host/
      )
      expect(
        (await request(blocking, "PUT", `/user/starred/${misdirected.handle()}/code`, basic("Alice"))).status
      ).toBe(403)
      // (The actor itself is known now: that is a cache, not a follow.)
      const after = await tables(blocking)
      expect([after.following, after.stars]).toEqual([before.following, before.stars])
      expect(await json(await request(blocking, "GET", "/user/federation/starred", basic("Alice")))).toEqual([])
      expect(far.requests).toEqual([])
    } finally {
      await misdirected.close()
    }
  })

  it("BLOCKED_HOSTS: a follower there gets no deliveries, nor does a redirect lead there", async () => {
    await recordFollower(blocking, `${far.base}/inbox`, far.actor())
    const alice = `${blocking.base}/api/v1/activitypub/user/Alice`
    await near.send(new V.Follow({ id: near.newId("follow"), actor: new URL(near.actor()), object: new URL(alice) }), {
      id: alice,
      inbox: `${alice}/inbox`
    })
    const before = (await jobsOf(blocking)).length

    expect((await request(blocking, "POST", "/user/repos", basic("Alice"), { name: "first" })).status).toBe(201)
    await eventually(
      async () => (near.verified.some((a) => a.type === "Create") ? true : undefined),
      15_000,
      "the Create at the allowed follower"
    )
    // One delivery was made, to the allowed follower: none was even queued for the blocked one.
    const jobs = await jobsOf(blocking)
    expect(jobs.slice(before).filter((job) => job.state === "succeeded")).toHaveLength(jobs.length - before)
    expect(far.posts).toHaveLength(0)

    // The allowed follower's inbox now redirects to the blocked host: the delivery fails at once.
    near.inbox = (post) =>
      post.type === "Create"
        ? { kind: "status", status: 307, headers: { location: `${far.base}/inbox` } }
        : { kind: "normal" }
    const count = (await jobsOf(blocking)).length
    expect((await request(blocking, "POST", "/user/repos", basic("Alice"), { name: "second" })).status).toBe(201)
    const [job] = await eventually(
      async () => {
        const list = (await jobsOf(blocking)).slice(count)
        return list.length === 1 && list[0]!.state !== "queued" && list[0]!.state !== "running" ? list : undefined
      },
      15_000,
      "the redirected delivery to end"
    )
    expect(job).toMatchObject({ state: "failed", attempts: 1 })
    expect(job!.last_error).toMatch(/does not federate with that host/)
    expect(far.posts).toHaveLength(0)
    near.inbox = { kind: "normal" }
  })

  it("ALLOWED_HOSTS: a host not on it is refused (403), one on it is followed", async () => {
    const before = await tables(allowing)
    const refused = await request(allowing, "PUT", `/user/following/${near.handle()}`, basic("Alice"))
    expect(refused.status).toBe(403)
    expect((await json(refused)).message).toMatch(/does not federate with that host/)
    expect((await request(allowing, "PUT", `/user/starred/${near.handle()}/code`, basic("Alice"))).status).toBe(403)
    expect(await tables(allowing)).toEqual(before)

    expect((await request(allowing, "PUT", `/user/following/${far.handle()}`, basic("Alice"))).status).toBe(204)
    await eventually(
      async () => (far.verified.some((a) => a.type === "Follow") ? true : undefined),
      15_000,
      "the Follow at the allowed host"
    )
  })

  it("ALLOW_LOCALNETWORKS off: an actor whose declared inbox is a local address gets no delivery", async () => {
    // A remote-looking actor whose inbox points into the local network (at `near`).
    await recordFollower(remoteOnly, `${near.base}/users/near/inbox`, "https://remote.example/users/someone")
    const seen = near.posts.length
    expect((await request(remoteOnly, "POST", "/user/repos", basic("Alice"), { name: "public" })).status).toBe(201)
    // The note was published (in the outbox), and not sent anywhere.
    const outbox = `${remoteOnly.base}/api/v1/activitypub/user/Alice/outbox`
    await eventually(
      async () => ((await json(await fetch(outbox))).totalItems === 1 ? true : undefined),
      15_000,
      "the outbox to hold the note"
    )
    await new Promise((resolve) => setTimeout(resolve, 1000))
    expect(await jobsOf(remoteOnly)).toEqual([])
    expect((await tables(remoteOnly)).queued).toBe(0)
    expect(near.posts.length).toBe(seen)
    // And following at a local address is refused, with the setting that would allow it named.
    const res = await request(remoteOnly, "PUT", `/user/following/${near.handle()}`, basic("Alice"))
    expect(res.status).toBe(403)
    expect((await json(res)).message).toMatch(/ALLOW_LOCALNETWORKS/)
  })

  it("an account that is not public cannot follow or star remotely (403), and nothing is fetched", async () => {
    const seen = near.requests.length
    const follow = await request(blocking, "PUT", `/user/following/${near.handle()}`, basic("Hidden"))
    expect(follow.status).toBe(403)
    expect((await json(follow)).message).toMatch(/only public accounts/)
    expect((await request(blocking, "PUT", `/user/starred/${near.handle()}/code`, basic("Hidden"))).status).toBe(403)
    expect(near.requests.length).toBe(seen)
    expect(await json(await request(blocking, "GET", "/user/federation/following", basic("Hidden")))).toEqual([])
  })
})

describe("federation off", () => {
  let off: Hearth
  let peerOff: Peer
  beforeAll(async () => {
    ;[off, peerOff] = await Promise.all([
      startFederated({ federation: { ENABLED: "false" } }),
      startPeer({ repositories: ["code"] })
    ])
    await createUser(off, { username: "Alice" })
  })
  afterAll(async () => {
    await Promise.all([off?.close(), peerOff?.close()])
  })

  it("remote follows and stars answer 422 with a message; nothing is fetched", async () => {
    for (const [method, path] of [
      ["PUT", `/user/following/${peerOff.handle()}`],
      ["DELETE", `/user/following/${peerOff.handle()}`],
      ["GET", `/user/following/${peerOff.handle()}`],
      ["PUT", `/user/starred/${peerOff.handle()}/code`],
      ["DELETE", `/user/starred/${peerOff.handle()}/code`],
      ["GET", `/user/starred/${peerOff.handle()}/code`]
    ] as const) {
      const res = await request(off, method, path, basic("Alice"))
      expect(res.status, `${method} ${path}`).toBe(422)
      expect((await json(res)).message).toMatch(/federation is not enabled/)
    }
    expect(peerOff.requests).toEqual([])
  })

  it("the federation routes are 404", async () => {
    const host = new URL(off.base).host
    const alice = `${off.base}/api/v1/activitypub/user/Alice`
    for (const [method, url] of [
      ["GET", `${off.base}/.well-known/webfinger?resource=acct:Alice@${host}`],
      ["GET", `${off.base}/.well-known/nodeinfo`],
      ["GET", `${off.base}/api/v1/nodeinfo`],
      ["GET", alice],
      ["GET", `${alice}/outbox`],
      ["POST", `${alice}/inbox`],
      ["POST", `${off.base}/api/v1/activitypub/inbox`],
      ["GET", `${off.base}/api/v1/activitypub/actor`],
      ["GET", `${off.base}/api/v1/activitypub/repository-id/1`]
    ] as const) {
      const res = await fetch(url, {
        method,
        headers: { accept: "application/activity+json", "content-type": "application/activity+json" },
        ...(method === "POST"
          ? { body: JSON.stringify({ type: "Follow", actor: peerOff.actor(), object: alice }) }
          : {})
      })
      expect(res.status, `${method} ${url}`).toBe(404)
    }
  })
})

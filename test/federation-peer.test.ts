// Hearth and a real Fedify 2.3.6 peer over loopback, issue 8 items 5 and 6: the
// peer reads a Hearth Person through WebFinger and follows it with both signature formats (RFC
// 9421 from one peer, draft-cavage from another), each accepted with an Accept the peer verifies;
// a Hearth user follows the peer by handle; the peer stars and unstars a Hearth repository
// (ForgeFed Like / Undo); Hearth users' public activity reaches the peer as a Create of a Note.
// And the bad input of a remote (the Bad input paragraph): a server that hangs or answers garbage
// costs a local request at most the fetch time-out, answered 502 or 4xx, and records nothing.

import { mkdtempSync, rmSync } from "node:fs"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as V from "@fedify/fedify/vocab"
import { Effect } from "effect"
import { SqlClient } from "effect/sql/SqlClient"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { eventually, startFederated } from "./support/federation.ts"
import { type Peer, startPeer } from "./support/fedify-peer.ts"
import { gitIn } from "./support/git.ts"
import { basic, createUser, type Hearth, json, request } from "./support/hearth.ts"

const PUBLIC = "https://www.w3.org/ns/activitystreams#Public"
/** Addressing as sent: JSON-LD compaction writes a list of one as that one. */
const addressed = (object: any) => ({ to: [object.to].flat(), cc: [object.cc].flat() })

let hearth: Hearth
let rfc: Peer
let cavage: Peer
const work = mkdtempSync(join(tmpdir(), "hearth-peer-"))

beforeAll(async () => {
  ;[hearth, rfc, cavage] = await Promise.all([
    startFederated(),
    startPeer({ names: ["rfc"], firstKnock: "rfc9421" }),
    startPeer({ names: ["cavage"], firstKnock: "draft-cavage-http-signatures-12" })
  ])
  await createUser(hearth, { username: "Alice" })
  await createUser(hearth, { username: "Carol" })
})
afterAll(async () => {
  await Promise.all([hearth?.close(), rfc?.close(), cavage?.close()])
  rmSync(work, { recursive: true, force: true })
})

const alice = () => `${hearth.base}/api/v1/activitypub/user/Alice`
const followers = async (name: string) => json(await request(hearth, "GET", "/user/federation/followers", basic(name)))

describe("the peer reads Hearth's people", () => {
  it("finds a Person through WebFinger over http and reads it with its key", async () => {
    const res = await fetch(`${hearth.base}/.well-known/webfinger?resource=acct:alice@${new URL(hearth.base).host}`)
    expect(res.status).toBe(200)
    const jrd = (await res.json()) as { subject: string; links: Array<{ rel: string; type?: string; href?: string }> }
    expect(jrd.subject).toBe(`acct:Alice@${new URL(hearth.base).host}`)
    const self = jrd.links.find((link) => link.rel === "self")
    expect(self).toMatchObject({ type: "application/activity+json", href: alice() })

    // Fedify asks for activity+json and reads the document as a Person with its key.
    const person = await rfc.lookup(self!.href!)
    expect(person).toBeInstanceOf(V.Person)
    const actor = person as V.Person
    expect(actor.id?.href).toBe(alice())
    expect(actor.preferredUsername).toBe("Alice")
    expect(actor.inboxId?.href).toBe(`${alice()}/inbox`)
    const key = await actor.getPublicKey()
    expect(key?.id?.href).toBe(`${alice()}#main-key`)
    expect(key?.ownerId?.href).toBe(alice())
  })
})

describe("the peer follows a Hearth user", () => {
  for (const spec of ["rfc9421", "draft-cavage-http-signatures-12"] as const) {
    it(`signed with ${spec}: Hearth lists the follower and its Accept reaches the peer, verified`, async () => {
      const peer = spec === "rfc9421" ? rfc : cavage
      const follow = new V.Follow({ id: peer.newId("follow"), actor: new URL(peer.actor()), object: new URL(alice()) })
      await peer.send(follow, { id: alice(), inbox: `${alice()}/inbox` })

      // The one signed POST to Hearth carried this format and was taken at the first knock.
      const posts = peer.sent.filter((s) => s.method === "POST")
      expect(posts).toEqual([{ url: `${alice()}/inbox`, method: "POST", spec, status: 202 }])

      const list = await eventually(
        async () => {
          const rows = await followers("Alice")
          return rows.some((row: { id: string }) => row.id === peer.actor()) ? rows : undefined
        },
        15_000,
        "Hearth to list the follower"
      )
      expect(list.find((row: { id: string }) => row.id === peer.actor())).toMatchObject({
        type: "Person",
        username: peer.actor().split("/").pop()
      })

      // Hearth's Accept: delivered to the peer, its signature verified by Fedify, naming the Follow.
      const accept = await eventually(
        async () => peer.verified.find((a) => a.type === "Accept"),
        15_000,
        "the Accept at the peer"
      )
      expect(accept.json.actor).toBe(alice())
      expect(accept.json.object.id ?? accept.json.object).toBe(follow.id!.href)
      expect(peer.posts.find((p) => p.type === "Accept")?.status).toBe(202)
    })
  }

  it("a follow of a Hearth user unknown there is refused and records nothing", async () => {
    const ghost = `${hearth.base}/api/v1/activitypub/user/nobody`
    const follow = new V.Follow({ id: rfc.newId("follow"), actor: new URL(rfc.actor()), object: new URL(ghost) })
    await expect(rfc.send(follow, { id: alice(), inbox: `${alice()}/inbox` })).rejects.toThrow(/40\d/)
    expect((await followers("Alice")).filter((row: { id: string }) => row.id === rfc.actor())).toHaveLength(1)
  })
})

describe("a Hearth user follows the peer", () => {
  it("by handle (WebFinger over http): the peer receives a verified Follow, and its Accept is recorded", async () => {
    const handle = rfc.handle()
    const res = await request(hearth, "PUT", `/user/following/${handle}`, basic("Carol"))
    expect(res.status, await res.clone().text()).toBe(204)

    const follow = await eventually(
      async () => rfc.verified.find((a) => a.type === "Follow"),
      15_000,
      "the Follow at the peer"
    )
    expect(follow.json).toMatchObject({ actor: `${hearth.base}/api/v1/activitypub/user/Carol`, object: rfc.actor() })
    const following = await eventually(
      async () => {
        const rows = await json(await request(hearth, "GET", "/user/federation/following", basic("Carol")))
        return rows[0]?.accepted === true ? rows : undefined
      },
      15_000,
      "Hearth to record the peer's Accept"
    )
    expect(following).toHaveLength(1)
    expect(following[0]).toMatchObject({ id: rfc.actor(), handle, username: "rfc", type: "Person" })
    expect((await request(hearth, "GET", `/user/following/${handle}`, basic("Carol"))).status).toBe(204)
    // Hearth signs RFC 9421 first, and the peer took it at once.
    expect(rfc.posts.filter((p) => p.type === "Follow")).toMatchObject([{ spec: "rfc9421", status: 202 }])
  })
})

describe("the peer stars a Hearth repository", () => {
  it("a Like raises stars_count and its Undo lowers it", async () => {
    expect((await request(hearth, "POST", "/user/repos", basic("Alice"), { name: "liked" })).status).toBe(201)
    const repo = await json(await request(hearth, "GET", "/repos/Alice/liked"))
    const stars = async () => (await json(await request(hearth, "GET", "/repos/Alice/liked"))).stars_count as number
    expect(repo.stars_count).toBe(0)

    // The ForgeFed Repository actor, as a peer reads it to find its inbox.
    const actorUrl = `${hearth.base}/api/v1/activitypub/repository-id/${repo.id}`
    const document = (await (await fetch(actorUrl, { headers: { accept: "application/activity+json" } })).json()) as {
      type: string
      inbox: string
    }
    expect(document.type).toBe("Repository")

    const like = new V.Like({ id: cavage.newId("like"), actor: new URL(cavage.actor()), object: new URL(actorUrl) })
    await cavage.send(like, { id: actorUrl, inbox: document.inbox })
    expect(await stars()).toBe(1)

    const undo = new V.Undo({ id: cavage.newId("undo"), actor: new URL(cavage.actor()), object: like })
    await cavage.send(undo, { id: actorUrl, inbox: document.inbox })
    expect(await stars()).toBe(0)
    expect(cavage.sent.filter((s) => s.url === document.inbox).map((s) => [s.spec, s.status])).toEqual([
      ["draft-cavage-http-signatures-12", 202],
      ["draft-cavage-http-signatures-12", 202]
    ])
  })
})

describe("Hearth users' public activity reaches the peer", () => {
  it("a repository created and a git push arrive as a Create of a Note to Public and the followers", async () => {
    const carol = `${hearth.base}/api/v1/activitypub/user/Carol`
    await rfc.send(new V.Follow({ id: rfc.newId("follow"), actor: new URL(rfc.actor()), object: new URL(carol) }), {
      id: carol,
      inbox: `${carol}/inbox`
    })
    await eventually(
      async () => ((await followers("Carol")).length === 1 ? true : undefined),
      15_000,
      "Carol's follower"
    )

    const creates = () => rfc.verified.filter((a) => a.type === "Create" && a.json.actor === carol)
    expect(
      (await request(hearth, "POST", "/user/repos", basic("Carol"), { name: "notes", auto_init: true })).status
    ).toBe(201)
    const created = await eventually(async () => creates()[0], 15_000, "the Create of the new repository")
    const page = `${hearth.base}/Carol/notes`
    const audience = { to: [PUBLIC], cc: [`${carol}/followers`] }
    expect(created.json).toMatchObject({ type: "Create", actor: carol })
    expect(created.json.object).toMatchObject({ type: "Note", attributedTo: carol, url: page })
    expect(addressed(created.json)).toEqual(audience)
    expect(addressed(created.json.object)).toEqual(audience)
    expect(created.json.object.content).toContain("created the repository Carol/notes")
    // Sent to the peer's shared inbox, signed RFC 9421, taken.
    expect(rfc.posts.find((p) => p.id === created.id)).toMatchObject({ path: "/inbox", spec: "rfc9421", status: 202 })

    const dir = join(work, "notes")
    const remote = `http://Carol:password123@${new URL(hearth.base).host}/Carol/notes.git`
    await gitIn(work, ["clone", "-q", remote, dir])
    await gitIn(dir, ["commit", "-q", "--allow-empty", "-m", "second"])
    await gitIn(dir, ["push", "-q", "origin", "HEAD"])
    const pushed = await eventually(async () => creates()[1], 15_000, "the Create of the push")
    expect(pushed.json).toMatchObject({ type: "Create", actor: carol })
    expect(pushed.json.object).toMatchObject({ type: "Note", url: page })
    expect(addressed(pushed.json)).toEqual(audience)
    expect(addressed(pushed.json.object)).toEqual(audience)
    expect(pushed.json.object.content).toContain("pushed to Carol/notes")

    // A private repository makes no note.
    expect(
      (await request(hearth, "POST", "/user/repos", basic("Carol"), { name: "secret", private: true })).status
    ).toBe(201)
    expect((await request(hearth, "POST", "/user/repos", basic("Carol"), { name: "after" })).status).toBe(201)
    const after = await eventually(async () => creates()[2], 15_000, "the Create of the next repository")
    expect(after.json.object.content).toContain("Carol/after")
    expect(creates().some((a) => String(a.json.object.content).includes("secret"))).toBe(false)
  })
})

/**
 * A server that is not a fediverse server: WebFinger and actor documents that go wrong in one way
 * per account name, and connections it accepts and never answers.
 */
const startBadServer = async () => {
  const sockets = new Set<Socket>()
  const server: Server = createServer()
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const requests: Array<string> = []
  const actor = (name: string, fields: Record<string, unknown> = {}) => ({
    "@context": "https://www.w3.org/ns/activitystreams",
    id: `${base}/actors/${name}`,
    type: "Person",
    preferredUsername: name,
    inbox: `${base}/actors/${name}/inbox`,
    ...fields
  })
  const send = (res: ServerResponse, type: string, body: string | object) =>
    res.writeHead(200, { "content-type": type }).end(typeof body === "string" ? body : JSON.stringify(body))
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", base)
    requests.push(url.pathname)
    const name =
      url.pathname === "/.well-known/webfinger"
        ? (/^acct:([^@]+)@/.exec(url.searchParams.get("resource") ?? "")?.[1] ?? "")
        : (/^\/actors\/([^/]+)$/.exec(url.pathname)?.[1] ?? "")
    if (url.pathname === "/.well-known/webfinger") {
      if (name === "hang") return // the connection stays open, unanswered
      if (name === "stall")
        return void res.writeHead(200, { "content-type": "application/jrd+json" }).write('{"links": [')
      if (name === "garbage") return send(res, "application/jrd+json", '{"links": [{"rel": "self",')
      if (name === "html") return send(res, "text/html", "<html><body>Welcome to nginx!</body></html>")
      return send(res, "application/jrd+json", {
        subject: `acct:${name}@${new URL(base).host}`,
        links: [{ rel: "self", type: "application/activity+json", href: `${base}/actors/${name}` }]
      })
    }
    switch (name) {
      case "huge": {
        // No Content-Length: the cap has to count what arrives.
        res.writeHead(200, { "content-type": "application/activity+json" })
        const chunk = Buffer.alloc(1 << 20, " ")
        res.write(`{"id": "${base}/actors/huge", "type": "Person", "inbox": "${base}/inbox", "padding": "`)
        for (let i = 0; i < 5; i++) res.write(chunk)
        return void res.end('"}')
      }
      case "declared":
        return void res
          .writeHead(200, { "content-type": "application/activity+json", "content-length": String(5 << 20) })
          .write("{")
      case "elsewhere":
        // Claims to be an actor of another server.
        return send(res, "application/activity+json", actor(name, { id: "http://127.0.0.2:9/actors/elsewhere" }))
      case "noinbox":
        return send(res, "application/activity+json", actor(name, { inbox: undefined }))
      case "note":
        return send(res, "application/activity+json", actor(name, { type: "Note" }))
      case "array":
        return send(res, "application/activity+json", [actor(name)])
      default:
        return void res.writeHead(404).end()
    }
  })
  return {
    base,
    host: new URL(base).host,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
  }
}

describe("a remote that hangs or answers garbage", () => {
  let bad: Awaited<ReturnType<typeof startBadServer>>
  beforeAll(async () => {
    bad = await startBadServer()
  })
  afterAll(async () => {
    await bad?.close()
  })

  /** What Hearth recorded of the bad server: actors, and Alice's follows. */
  const recorded = () =>
    hearth.run(
      Effect.gen(function* () {
        const sql = yield* SqlClient
        const actors = yield* sql`SELECT count(*) AS n FROM federation_actors WHERE host = ${bad.host}`
        const follows =
          yield* sql`SELECT count(*) AS n FROM federation_following f JOIN federation_actors a ON a.id = f.actor_id
        WHERE a.host = ${bad.host}`
        const queued = yield* sql`SELECT count(*) AS n FROM federation_queue`
        return { actors: Number(actors[0]!.n), follows: Number(follows[0]!.n), queued: Number(queued[0]!.n) }
      })
    )

  it("a server that never answers: the follow answers 502 within the time-out, other requests at once meanwhile", async () => {
    const seen = bad.requests.length
    let settled = false
    const started = Date.now()
    const follows = Promise.all(
      ["hang", "stall"].map((name) =>
        request(hearth, "PUT", `/user/following/${name}@${bad.host}`, basic("Alice")).then(async (res) => ({
          status: res.status,
          body: await json(res)
        }))
      )
    ).finally(() => (settled = true))
    await eventually(
      async () => (bad.requests.length >= seen + 2 ? true : undefined),
      15_000,
      "both requests at the bad server"
    )

    // Meanwhile Hearth answers everything else, its own federation routes included.
    for (let i = 0; i < 3; i++) {
      expect((await request(hearth, "GET", "/version")).status).toBe(200)
      expect((await request(hearth, "GET", "/user", basic("Carol"))).status).toBe(200)
      expect(
        (await fetch(`${hearth.base}/.well-known/webfinger?resource=acct:Carol@${new URL(hearth.base).host}`)).status
      ).toBe(200)
      expect((await request(hearth, "PUT", `/user/following/${rfc.handle()}`, basic("Alice"))).status).toBe(204)
    }
    expect(settled).toBe(false)

    const answers = await follows
    expect(Date.now() - started).toBeLessThan(25_000)
    for (const answer of answers) {
      expect(answer.status).toBe(502)
      expect(answer.body.message).toMatch(/did not answer within 10 s/)
    }
    expect(await recorded()).toMatchObject({ actors: 0, follows: 0 })
  }, 60_000)

  it("a handle whose host part would change the URL made of it is refused (422) before anything is fetched", async () => {
    const seen = bad.requests.length
    for (const handle of [
      `html@${bad.host}?x`,
      `html@${bad.host}#x`,
      `html@${bad.host}\\x`,
      `html@user:pw@${bad.host}`
    ]) {
      const res = await request(hearth, "PUT", `/user/following/${encodeURIComponent(handle)}`, basic("Alice"))
      expect(res.status, handle).toBe(422)
      expect((await json(res)).message).toMatch(/neither a handle/)
    }
    expect(bad.requests.length).toBe(seen)
  })

  const refusals: Array<[string, number, RegExp]> = [
    ["garbage", 502, /did not answer JSON/],
    ["html", 502, /did not answer JSON/],
    ["huge", 502, /more than 4194304 bytes/],
    ["declared", 502, /more than 4194304 bytes/],
    ["elsewhere", 502, /another server/],
    ["noinbox", 502, /no inbox/],
    ["array", 502, /not an ActivityPub object/],
    ["note", 422, /not an actor/]
  ]
  for (const [name, status, message] of refusals) {
    it(`an answer that is not a usable actor (${name}) is refused with ${status} and changes nothing`, async () => {
      const before = await recorded()
      const res = await request(hearth, "PUT", `/user/following/${name}@${bad.host}`, basic("Alice"))
      expect(res.status).toBe(status)
      expect((await json(res)).message).toMatch(message)
      expect(await recorded()).toEqual(before)
      expect(before).toMatchObject({ actors: 0, follows: 0 })
      // Starring a repository of such an owner fails the same way.
      const star = await request(hearth, "PUT", `/user/starred/${name}@${bad.host}/repo`, basic("Alice"))
      expect(star.status).toBe(status)
      expect(await recorded()).toEqual(before)
    })
  }
})

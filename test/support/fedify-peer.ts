// A real fediverse peer for tests: a Fedify 2.3.6 federation in the test process on
// its own node:http server on 127.0.0.1 (a free port), with MemoryKvStore and no queue (what it
// sends goes at once, so a refusal surfaces in the test), private addresses allowed. It serves
// Person actors at /users/{name} (RSA keys), WebFinger and NodeInfo, and inbox listeners for
// Follow (answered with an Accept), Accept, Like, Undo and Create; every activity a listener got
// has had its HTTP signature verified by Fedify.
//
// Beyond Fedify: a ForgeFed Repository actor per name in `repositories` (Fedify has no such type;
// its inbox is the peer's shared inbox, so Likes of it are verified like the rest), a record of
// every POST the peer received and of every signed request it sent (with the signature format on
// the wire), and switches to make its inboxes fail (an HTTP status, a redirect, or no answer) and
// the whole peer go down and come back on the same port.

import { randomUUID, webcrypto } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { createFederation, type Federation, MemoryKvStore } from "@fedify/fedify"
import * as V from "@fedify/fedify/vocab"

export type Spec = "rfc9421" | "draft-cavage-http-signatures-12" | "none"

/** A POST the peer's server received, and what it answered. */
export interface Received {
  readonly path: string
  readonly spec: Spec
  readonly type: string | undefined
  readonly id: string | undefined
  readonly body: any
  status: number
}

/** A request the peer signed and sent, as it went on the wire. */
export interface Sent {
  readonly url: string
  readonly method: string
  readonly spec: Spec
  status: number | undefined
}

/** What the peer's inboxes do with a POST: pass it to Fedify, or fail it (once `after` settles, if given). */
export type InboxMode =
  | { readonly kind: "normal" }
  | {
      readonly kind: "status"
      readonly status: number
      readonly headers?: Record<string, string>
      readonly after?: Promise<unknown>
    }
  | { readonly kind: "hang" }

export interface PeerOptions {
  /** Person actors (default: one named "peer"). */
  readonly names?: ReadonlyArray<string>
  /** ForgeFed repositories of the first person, by name. */
  readonly repositories?: ReadonlyArray<string>
  /** The signature format Fedify tries first with servers it has not met (its default: RFC 9421). */
  readonly firstKnock?: "rfc9421" | "draft-cavage-http-signatures-12"
  /** The address to listen on (any of 127.0.0.0/8). */
  readonly address?: string
  /** Another server's base URL whose /inbox the actors declare as theirs (a misdirecting peer). */
  readonly inboxAt?: string
}

export interface Peer {
  readonly base: string
  /** host:port, as handles name it. */
  readonly host: string
  readonly federation: Federation<void>
  readonly actor: (name?: string) => string
  readonly handle: (name?: string) => string
  readonly repository: (name: string) => string
  /** Activities a listener got, so verified by Fedify, in the order they were handled. */
  readonly verified: Array<{ readonly type: string; readonly id: string; readonly json: any }>
  /** Every POST received (verified or not), in order. */
  readonly posts: Array<Received>
  /** Every request received, as "METHOD /path". */
  readonly requests: Array<string>
  /** Every request the peer signed, in order. */
  readonly sent: Array<Sent>
  /** Errors of the peer's own sends (e.g. an Accept Hearth refused). */
  readonly errors: Array<unknown>
  /** What the inboxes do: one mode for every POST, or a choice per POST. */
  inbox: InboxMode | ((post: Received) => InboxMode)
  /** Sends an activity of one of the peer's persons to an actor (Fedify looks its inbox up). */
  readonly send: (
    activity: V.Activity,
    to: { readonly id: string; readonly inbox: string },
    name?: string
  ) => Promise<void>
  readonly lookup: (url: string) => Promise<V.Object | null>
  readonly newId: (kind: string, name?: string) => URL
  /** Closes the port (open connections cut); `start` listens on it again. */
  readonly stop: () => Promise<void>
  readonly start: () => Promise<void>
  readonly close: () => Promise<void>
}

const signedWith = (headers: Headers): Spec =>
  headers.has("signature-input") ? "rfc9421" : headers.has("signature") ? "draft-cavage-http-signatures-12" : "none"

const keyIdOf = (headers: Headers): string | undefined =>
  /keyid="([^"]+)"/i.exec(headers.get("signature-input") ?? headers.get("signature") ?? "")?.[1]

// Every request a peer signs goes through the process's fetch: one wrapper, installed once, hands
// each one to the peer whose key signed it (other requests pass untouched).
const peersByOrigin = new Map<string, Peer>()
const installed = Symbol.for("hearth.test.fedify-peer.fetch")
if ((globalThis as any)[installed] !== true) {
  ;(globalThis as any)[installed] = true
  const previous = globalThis.fetch
  globalThis.fetch = async (input: any, init?: any) => {
    const request = input instanceof Request ? input : undefined
    const headers = new Headers(init?.headers ?? request?.headers)
    const keyId = keyIdOf(headers)
    const peer = keyId !== undefined && URL.canParse(keyId) ? peersByOrigin.get(new URL(keyId).origin) : undefined
    if (peer === undefined) return previous(input, init)
    const entry: Sent = {
      url: request?.url ?? String(input),
      method: init?.method ?? request?.method ?? "GET",
      spec: signedWith(headers),
      status: undefined
    }
    peer.sent.push(entry)
    const response = await previous(input, init)
    entry.status = response.status
    return response
  }
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const parse = (body: Buffer): any => {
  try {
    return JSON.parse(body.toString("utf8"))
  } catch {
    return undefined
  }
}

/** An RSA key pair of 2048 bits (Fedify's own generator makes slow 4096-bit ones). */
const rsaPair = () =>
  webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"]
  ) as Promise<webcrypto.CryptoKeyPair>

const listen = (server: Server, port: number, address: string) =>
  new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(port, address, () => {
      server.off("error", reject)
      resolve((server.address() as AddressInfo).port)
    })
  })

export const startPeer = async (options: PeerOptions = {}): Promise<Peer> => {
  const names = options.names ?? ["peer"]
  const address = options.address ?? "127.0.0.1"
  const keys = new Map<string, webcrypto.CryptoKeyPair>()
  for (const name of names) keys.set(name, await rsaPair())
  const repositories = new Set(options.repositories ?? [])

  const server = createServer()
  const sockets = new Set<Socket>()
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await listen(server, 0, address)
  const base = `http://${address}:${port}`

  const federation = createFederation<void>({
    kv: new MemoryKvStore(),
    origin: base,
    allowPrivateAddress: true,
    ...(options.firstKnock === undefined ? {} : { firstKnock: options.firstKnock })
  })
  const actor = (name = names[0]!) => `${base}/users/${name}`
  const repository = (name: string) => `${base}/repos/${names[0]}/${name}`
  let counter = 0
  const newId = (kind: string, name = names[0]!) => new URL(`${actor(name)}/${kind}/${++counter}-${randomUUID()}`)

  const verified: Peer["verified"] = []
  const posts: Array<Received> = []
  const errors: Array<unknown> = []
  const bodies = new Map<string, any>()

  federation
    .setActorDispatcher("/users/{identifier}", async (ctx, identifier) => {
      if (!keys.has(identifier)) return null
      const [pair] = await ctx.getActorKeyPairs(identifier)
      return new V.Person({
        id: ctx.getActorUri(identifier),
        preferredUsername: identifier,
        name: `Peer ${identifier}`,
        url: new URL(`${base}/profile/${identifier}`),
        inbox: options.inboxAt === undefined ? ctx.getInboxUri(identifier) : new URL(`${options.inboxAt}/inbox`),
        endpoints: new V.Endpoints({
          sharedInbox: options.inboxAt === undefined ? ctx.getInboxUri() : new URL(`${options.inboxAt}/inbox`)
        }),
        followers: new URL(`${actor(identifier)}/followers`),
        publicKey: pair?.cryptographicKey ?? null
      })
    })
    .setKeyPairsDispatcher((_ctx, identifier) => {
      const pair = keys.get(identifier)
      return pair === undefined ? [] : [pair]
    })

  const note = async (_ctx: unknown, activity: V.Activity) => {
    const id = activity.id?.href ?? ""
    const json = bodies.get(id)
    verified.push({ type: typeof json?.type === "string" ? json.type : activity.constructor.name, id, json })
  }
  federation
    .setInboxListeners("/users/{identifier}/inbox", "/inbox")
    .on(V.Follow, async (ctx, follow) => {
      await note(ctx, follow)
      const object = follow.objectId === null ? null : ctx.parseUri(follow.objectId)
      if (object?.type !== "actor" || !keys.has(object.identifier)) return
      const follower = await follow.getActor(ctx)
      if (follower === null) return
      // Answered after the Follow's own answer, as a busy server would.
      setTimeout(() => {
        ctx
          .sendActivity(
            { identifier: object.identifier },
            follower,
            new V.Accept({ id: newId("accept", object.identifier), actor: follow.objectId, object: follow })
          )
          .catch((error) => errors.push(error))
      }, 0)
    })
    .on(V.Accept, note)
    .on(V.Like, note)
    .on(V.Undo, note)
    .on(V.Create, note)
    .on(V.Activity, note)

  federation.setNodeInfoDispatcher("/nodeinfo/2.1", () => ({
    software: { name: "fedify-peer", version: "2.3.6" },
    protocols: ["activitypub"],
    usage: { users: {}, localPosts: 0, localComments: 0 }
  }))

  /** A ForgeFed Repository and its WebFinger (Hearth finds it by its page: the owner's url + name). */
  const repositoryRoutes = (url: URL): object | undefined => {
    const match = /^\/repos\/([^/]+)\/([^/]+)$/.exec(url.pathname)
    if (match !== null && match[1] === names[0] && repositories.has(match[2]!)) {
      return {
        "@context": "https://www.w3.org/ns/activitystreams",
        id: repository(match[2]!),
        type: "Repository",
        name: match[2],
        attributedTo: actor(),
        url: `${base}/profile/${names[0]}/${match[2]}`,
        inbox: `${options.inboxAt ?? base}/inbox`
      }
    }
    const resource = url.pathname === "/.well-known/webfinger" ? (url.searchParams.get("resource") ?? "") : ""
    const page = new RegExp(`^${base}/profile/${names[0]}/([^/]+)$`).exec(resource)
    if (page !== null && repositories.has(page[1]!)) {
      return {
        subject: resource,
        links: [{ rel: "self", type: "application/activity+json", href: repository(page[1]!) }]
      }
    }
    return undefined
  }

  const hanging = new Set<ServerResponse>()
  const peer: Peer = {
    base,
    host: `${address}:${port}`,
    federation,
    actor,
    handle: (name = names[0]!) => `${name}@${address}:${port}`,
    repository,
    verified,
    posts,
    requests: [],
    sent: [],
    errors,
    inbox: { kind: "normal" },
    send: async (activity, to, name = names[0]!) => {
      const ctx = federation.createContext(new URL(base), undefined)
      await ctx.sendActivity({ identifier: name }, { id: new URL(to.id), inboxId: new URL(to.inbox) }, activity, {
        immediate: true
      })
    },
    lookup: (url) => federation.createContext(new URL(base), undefined).lookupObject(url),
    newId,
    stop: async () => {
      for (const response of hanging) response.destroy()
      hanging.clear()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
    },
    start: async () => {
      await listen(server, port, address)
    },
    close: async () => {
      peersByOrigin.delete(base)
      if (server.listening) await peer.stop()
    }
  }
  peersByOrigin.set(base, peer)

  server.on("request", async (req: IncomingMessage, res: ServerResponse) => {
    try {
      const url = new URL(req.url ?? "/", base)
      peer.requests.push(`${req.method} ${url.pathname}`)
      const body = await readBody(req)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value)
        else if (Array.isArray(value)) for (const v of value) headers.append(name, v)
      }
      if (req.method === "POST") {
        const json = parse(body)
        const received: Received = {
          path: url.pathname,
          spec: signedWith(headers),
          type: typeof json?.type === "string" ? json.type : undefined,
          id: typeof json?.id === "string" ? json.id : undefined,
          body: json,
          status: 0
        }
        posts.push(received)
        if (received.id !== undefined) bodies.set(received.id, json)
        const mode = typeof peer.inbox === "function" ? peer.inbox(received) : peer.inbox
        if (mode.kind === "hang") {
          hanging.add(res)
          return
        }
        if (mode.kind === "status") {
          await mode.after
          received.status = mode.status
          res.writeHead(mode.status, mode.headers ?? {}).end()
          return
        }
        const answer = await federation.fetch(new Request(url, { method: "POST", headers, body }), {
          contextData: undefined
        })
        received.status = answer.status
        res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
        return
      }
      const own = repositoryRoutes(url)
      if (own !== undefined) {
        const type = url.pathname.startsWith("/.well-known/") ? "application/jrd+json" : "application/activity+json"
        res.writeHead(200, { "content-type": type }).end(JSON.stringify(own))
        return
      }
      const answer = await federation.fetch(new Request(url, { method: req.method ?? "GET", headers }), {
        contextData: undefined,
        onNotFound: () => new Response("not found", { status: 404 }),
        onNotAcceptable: () => new Response("not acceptable", { status: 406 })
      })
      res.writeHead(answer.status, Object.fromEntries(answer.headers)).end(Buffer.from(await answer.arrayBuffer()))
    } catch (error) {
      errors.push(error)
      if (!res.headersSent) res.writeHead(500).end(String(error))
    }
  })
  return peer
}

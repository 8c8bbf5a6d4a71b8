// A remote ActivityPub server for inbox tests, under the test's full control: a plain node:http
// server on 127.0.0.1 serving Person actors (RSA or Ed25519 keys as `publicKeyPem`) and their
// WebFinger, recording every request it gets, each actor able to misbehave (hang, answer garbage,
// be gone). Its actors sign their own requests: with Fedify's `signRequest` as a real sender does,
// or by hand for what Fedify never sends (a chosen date, chosen signed headers or components, no
// or another algorithm name, a key nobody published), so that each inbox rule can be broken alone.

import { createHash, randomUUID, webcrypto } from "node:crypto"
import { createServer, request as httpRequest, type ServerResponse } from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { signRequest, verifyRequest } from "@fedify/fedify"

export const AS = "https://www.w3.org/ns/activitystreams"
export const ACTIVITY_JSON = "application/activity+json"

type CryptoKey = webcrypto.CryptoKey
type CryptoKeyPair = webcrypto.CryptoKeyPair

export type Spec = "rfc9421" | "draft-cavage-http-signatures-12"
export type Activity = Record<string, unknown>

/** How an actor's document is answered. */
export type Mode = "normal" | "hang" | "garbage" | "not-an-actor" | "gone"

export interface SignOptions {
  /** The signature format, or none at all (default RFC 9421, as Fedify knocks first). */
  readonly spec?: Spec | "none"
  /** When it was signed (`Date` and RFC 9421 `created`); signed by hand. */
  readonly at?: Date
  /** RFC 9421 covered components (default Fedify's set); signed by hand. */
  readonly components?: ReadonlyArray<string>
  /** draft-cavage signed headers (default `(request-target) host date digest`); signed by hand. */
  readonly headers?: ReadonlyArray<string>
  /** The `alg` / `algorithm` parameter written, or null for none; signed by hand. */
  readonly algorithm?: string | null
  /** RFC 9421: false leaves out the `created` parameter; signed by hand. */
  readonly created?: boolean
  /** RFC 9421 signature label (default sig1); signed by hand. */
  readonly label?: string
  /** Sign with these keys instead of the published ones (under the same key id). */
  readonly keys?: webcrypto.CryptoKeyPair
  /** Headers removed after signing. */
  readonly drop?: ReadonlyArray<string>
}

/** A request ready to go: the body sent may be changed after signing (tampering). */
export interface Signed {
  readonly url: string
  readonly headers: Headers
  body: string
}

export interface Answer {
  readonly status: number
  readonly body: string
}

export interface RemoteActor {
  readonly id: string
  readonly keyId: string
  readonly inbox: string
  /** name@host:port, as Hearth's API takes remote people. */
  readonly handle: string
  /** The display name its document shows. */
  name: string
  mode: Mode
  /** The published key pair. */
  keys: webcrypto.CryptoKeyPair
  /** Publishes a new key pair under the same key id; the old one is returned. */
  readonly rotateKey: () => Promise<webcrypto.CryptoKeyPair>
  /** An activity of this actor with a fresh id on its server. */
  readonly activity: (type: string, object: unknown, extra?: Activity) => Activity
  readonly sign: (url: string, body: unknown, options?: SignOptions) => Promise<Signed>
  /** Signs (per options) and POSTs an activity or a raw body. */
  readonly post: (url: string, body: unknown, options?: SignOptions) => Promise<Answer>
}

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: Headers
  readonly body: string
}

export interface RemoteServer {
  readonly base: string
  /** Every request received, in order. */
  readonly requests: Array<Received>
  readonly actor: (
    name: string,
    options?: { readonly ed25519?: boolean; readonly owner?: string }
  ) => Promise<RemoteActor>
  /** The activities POSTed to an actor's inbox. */
  readonly deliveries: (actor: RemoteActor) => Array<Received>
  readonly close: () => Promise<void>
}

const b64 = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes as ArrayBuffer).toString("base64")
const sha256 = (text: string) => createHash("sha256").update(text).digest("base64")

const rsaPair = () =>
  webcrypto.subtle.generateKey(
    { name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" },
    true,
    ["sign", "verify"]
  ) as Promise<CryptoKeyPair>
const ed25519Pair = () =>
  webcrypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"]) as unknown as Promise<CryptoKeyPair>

const pem = async (key: CryptoKey) => {
  const lines = b64(await webcrypto.subtle.exportKey("spki", key))
    .match(/.{1,64}/g)!
    .join("\n")
  return `-----BEGIN PUBLIC KEY-----\n${lines}\n-----END PUBLIC KEY-----\n`
}

const isRsa = (key: CryptoKey) => key.algorithm.name === "RSASSA-PKCS1-v1_5"
const rawSign = async (key: CryptoKey, text: string) =>
  b64(await webcrypto.subtle.sign(isRsa(key) ? "RSASSA-PKCS1-v1_5" : "Ed25519", key, new TextEncoder().encode(text)))

/** Signs by hand, every part chosen: what Fedify's signer cannot be told to do. */
const signByHand = async (
  spec: Spec,
  url: URL,
  body: string,
  key: CryptoKey,
  keyId: string,
  options: SignOptions
): Promise<Headers> => {
  const at = options.at ?? new Date()
  const headers = new Headers({ "content-type": ACTIVITY_JSON, host: url.host, date: at.toUTCString() })
  if (spec === "rfc9421") {
    headers.set("content-digest", `sha-256=:${sha256(body)}:`)
    const components = options.components ?? ["@method", "@target-uri", "@authority", "host", "date", "content-digest"]
    const value = (name: string) =>
      name === "@method"
        ? "POST"
        : name === "@target-uri"
          ? url.href
          : name === "@authority"
            ? url.host
            : name === "@path"
              ? url.pathname
              : name === "@request-target"
                ? `post ${url.pathname}${url.search}`
                : (headers.get(name) ?? "")
    const algorithm = options.algorithm === undefined ? (isRsa(key) ? "rsa-v1_5-sha256" : "ed25519") : options.algorithm
    const created = options.created === false ? "" : `;created=${Math.floor(at.getTime() / 1000)}`
    const params = `${algorithm === null ? "" : `alg="${algorithm}";`}keyid="${keyId}"${created}`
    const list = `(${components.map((c) => `"${c}"`).join(" ")})`
    const base = [...components.map((c) => `"${c}": ${value(c)}`), `"@signature-params": ${list};${params}`].join("\n")
    const label = options.label ?? "sig1"
    headers.set("signature-input", `${label}=${list};${params}`)
    headers.set("signature", `${label}=:${await rawSign(key, base)}:`)
  } else {
    headers.set("digest", `SHA-256=${sha256(body)}`)
    const names = options.headers ?? ["(request-target)", "host", "date", "digest"]
    const message = names
      .map((n) => `${n}: ${n === "(request-target)" ? `post ${url.pathname}` : (headers.get(n) ?? "")}`)
      .join("\n")
    const algorithm = options.algorithm === undefined ? (isRsa(key) ? "rsa-sha256" : "hs2019") : options.algorithm
    headers.set(
      "signature",
      `keyId="${keyId}",${algorithm === null ? "" : `algorithm="${algorithm}",`}headers="${names.join(" ")}",signature="${await rawSign(key, message)}"`
    )
  }
  return headers
}

/** POSTs over node:http: the headers exactly as given, the body with its length, or chunked. */
export const postRaw = (
  url: string,
  headers: Headers,
  body: string | undefined,
  options: { readonly chunked?: boolean } = {}
) =>
  new Promise<Answer>((resolve, reject) => {
    const outgoing: Record<string, string> = Object.fromEntries(headers)
    if (body !== undefined && options.chunked !== true) outgoing["content-length"] = String(Buffer.byteLength(body))
    const req = httpRequest(url, { method: "POST", headers: outgoing }, (res) => {
      const chunks: Array<Buffer> = []
      res.on("data", (chunk: Buffer) => chunks.push(chunk))
      res.on("end", () => {
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") })
        // The body held back is never coming.
        if (body === undefined) req.destroy()
      })
      res.on("error", reject)
    })
    // A server that answers before reading everything may cut the upload: the answer still counts.
    req.on("error", reject)
    if (body === undefined) {
      req.flushHeaders()
      return
    }
    if (options.chunked === true) {
      for (let at = 0; at < body.length; at += 64 * 1024) req.write(body.slice(at, at + 64 * 1024))
    } else {
      req.write(body)
    }
    req.end()
  })

/** The signed request as sent. */
export const send = (signed: Signed) => postRaw(signed.url, signed.headers, signed.body)

export const startRemote = async (options: { readonly hostname?: string } = {}): Promise<RemoteServer> => {
  const server = createServer()
  const sockets = new Set<Socket>()
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const host = `${options.hostname ?? "127.0.0.1"}:${port}`
  const base = `http://${host}`
  const requests: Array<Received> = []
  const actors = new Map<string, { actor: RemoteActor; document: () => Promise<unknown> }>()
  const hanging = new Set<ServerResponse>()

  server.on("request", (req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", base)
      const headers = new Headers()
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === "string") headers.set(name, value)
      requests.push({
        method: req.method ?? "GET",
        path: url.pathname,
        headers,
        body: Buffer.concat(chunks).toString("utf8")
      })
      if (req.method === "POST") return void res.writeHead(202).end()
      if (url.pathname === "/.well-known/webfinger") {
        const name = /^acct:([^@]+)@/.exec(url.searchParams.get("resource") ?? "")?.[1]
        const found = name === undefined ? undefined : actors.get(name)
        if (found === undefined) return void res.writeHead(404).end()
        return void res.writeHead(200, { "content-type": "application/jrd+json" }).end(
          JSON.stringify({
            subject: `acct:${name}@${host}`,
            links: [{ rel: "self", type: ACTIVITY_JSON, href: found.actor.id }]
          })
        )
      }
      const found = actors.get(/^\/users\/([^/]+)$/.exec(url.pathname)?.[1] ?? "")
      if (found === undefined) return void res.writeHead(404).end()
      switch (found.actor.mode) {
        case "hang":
          hanging.add(res)
          return
        case "garbage":
          return void res.writeHead(200, { "content-type": ACTIVITY_JSON }).end("<html>surely not JSON")
        case "not-an-actor":
          return void res
            .writeHead(200, { "content-type": ACTIVITY_JSON })
            .end(JSON.stringify({ "@context": AS, id: found.actor.id, type: "Note" }))
        case "gone":
          return void res.writeHead(410).end()
        case "normal":
          return void res.writeHead(200, { "content-type": ACTIVITY_JSON }).end(JSON.stringify(await found.document()))
      }
    })
  })

  const actor: RemoteServer["actor"] = async (name, actorOptions = {}) => {
    const pair = () => (actorOptions.ed25519 === true ? ed25519Pair() : rsaPair())
    const id = `${base}/users/${name}`
    const keyId = `${id}#main-key`
    const made: RemoteActor = {
      id,
      keyId,
      inbox: `${id}/inbox`,
      handle: `${name}@${host}`,
      name: `Remote ${name}`,
      mode: "normal",
      keys: await pair(),
      rotateKey: async () => {
        const old = made.keys
        made.keys = await pair()
        return old
      },
      activity: (type, object, extra = {}) => ({
        "@context": AS,
        id: `${id}/activities/${randomUUID()}`,
        type,
        actor: id,
        object,
        ...extra
      }),
      sign: async (url, body, signOptions = {}) => {
        const text = typeof body === "string" ? body : JSON.stringify(body)
        const spec = signOptions.spec ?? "rfc9421"
        const key = (signOptions.keys ?? made.keys).privateKey
        let headers: Headers
        if (spec === "none") {
          headers = new Headers({ "content-type": ACTIVITY_JSON, date: new Date().toUTCString() })
        } else if (
          isRsa(key) &&
          signOptions.at === undefined &&
          signOptions.components === undefined &&
          signOptions.headers === undefined &&
          signOptions.algorithm === undefined &&
          signOptions.label === undefined &&
          signOptions.created === undefined
        ) {
          const request = new Request(url, { method: "POST", headers: { "content-type": ACTIVITY_JSON }, body: text })
          headers = new Headers((await signRequest(request, key, new URL(keyId), { spec })).headers)
        } else {
          headers = await signByHand(spec, new URL(url), text, key, keyId, signOptions)
        }
        for (const name of signOptions.drop ?? []) headers.delete(name)
        return { url, headers, body: text }
      },
      post: async (url, body, signOptions) => send(await made.sign(url, body, signOptions))
    }
    const document = async () => ({
      "@context": [AS, "https://w3id.org/security/v1"],
      id,
      type: "Person",
      preferredUsername: name,
      name: made.name,
      url: `${base}/@${name}`,
      inbox: made.inbox,
      outbox: `${id}/outbox`,
      publicKey: { id: keyId, owner: actorOptions.owner ?? id, publicKeyPem: await pem(made.keys.publicKey) }
    })
    actors.set(name, { actor: made, document })
    return made
  }

  return {
    base,
    requests,
    actor,
    deliveries: (to) => requests.filter((r) => r.method === "POST" && `${base}${r.path}` === to.inbox),
    close: async () => {
      for (const res of hanging) res.destroy()
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        for (const socket of sockets) socket.destroy()
      })
    }
  }
}

/**
 * Verifies the HTTP signature of a request a remote server received (either format), fetching
 * the signer's key over plain http; the key's owner when it verifies, undefined otherwise.
 */
export const verifyReceived = async (server: RemoteServer, received: Received): Promise<string | undefined> => {
  const request = new Request(`${server.base}${received.path}`, {
    method: received.method,
    headers: received.headers,
    body: received.body
  })
  const key = await verifyRequest(request, {
    documentLoader: async (url: string) => ({
      contextUrl: null,
      documentUrl: url,
      document: await (await fetch(url, { headers: { accept: ACTIVITY_JSON } })).json()
    })
  } as never)
  return key?.ownerId?.href
}

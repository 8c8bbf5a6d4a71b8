// Talking to other servers. Which hosts may be reached is [federation]'s policy (ALLOWED_HOSTS,
// BLOCKED_HOSTS; loopback and private addresses only with ALLOW_LOCALNETWORKS; plain http only
// with USE_INSECURE_HTTP), checked on every address the host resolves to, and the connection is
// pinned to the checked addresses, so neither a DNS change nor a redirect leads elsewhere. Every
// fetch has a deadline and reads at most MAX_SIZE, so a remote that hangs or answers garbage costs
// a bounded wait and never more.

import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { Data, Effect } from "effect"
import type { SettingsShape } from "../src/config/Settings.ts"
import { checkHost, type HostPolicy, hostNameRefused } from "../src/lib/HostPolicy.ts"

export const ACTIVITY_JSON = "application/activity+json"
export const LD_JSON = 'application/ld+json; profile="https://www.w3.org/ns/activitystreams"'
/** What Hearth asks for when it fetches an ActivityPub object (Forgejo's client sends the same). */
export const ACCEPT_ACTIVITY = `${ACTIVITY_JSON}, ${LD_JSON}`
/** A fetch gives up after this long, answer included. */
export const FETCH_TIMEOUT_MS = 10_000
const MAX_REDIRECTS = 3

/** Why a remote could not be used; `status` is what a local request answers because of it. */
export class RemoteError extends Data.TaggedError("RemoteError")<{
  readonly message: string
  /** Why, as Errors.REASON_STATUS knows it: the local request's answer (`toApiError`). */
  readonly reason: "invalid" | "forbidden" | "not-found" | "remote-failed"
}> {}

export const federationPolicy = (settings: SettingsShape): HostPolicy => ({
  allowLocalNetworks: settings.federation.ALLOW_LOCALNETWORKS,
  allowed: settings.federation.ALLOWED_HOSTS,
  blocked: settings.federation.BLOCKED_HOSTS,
  refusal: "This server does not federate with that host.",
  hints: {
    local: " (it is on a local network; an administrator may allow that with [federation] ALLOW_LOCALNETWORKS = true)",
    lists: " (see [federation] ALLOWED_HOSTS and BLOCKED_HOSTS)"
  }
})

/** The byte cap of requests and responses ([federation] MAX_SIZE is in MiB). */
export const maxBytes = (settings: SettingsShape) => settings.federation.MAX_SIZE * 1024 * 1024

/**
 * Whether a URL may be reached: http(s) only (http only with USE_INSECURE_HTTP), and every
 * address of its host allowed. The answer is the checked addresses.
 */
export const checkUrl = (settings: SettingsShape, raw: string): Effect.Effect<Array<string>, RemoteError> =>
  Effect.gen(function* () {
    const url = URL.canParse(raw) ? new URL(raw) : undefined
    if (url === undefined || (url.protocol !== "https:" && url.protocol !== "http:")) {
      return yield* new RemoteError({ message: `${raw} is not an http(s) URL`, reason: "invalid" })
    }
    if (url.protocol === "http:" && !settings.federation.USE_INSECURE_HTTP) {
      return yield* new RemoteError({
        message: `${url.origin} is plain http, which this server does not federate over ([federation] USE_INSECURE_HTTP)`,
        reason: "invalid"
      })
    }
    return yield* Effect.mapError(
      checkHost(federationPolicy(settings), url.href),
      (e) => new RemoteError({ message: e.message, reason: "forbidden" })
    )
  })

/**
 * True when the host's name is refused by BLOCKED_HOSTS, or by an ALLOWED_HOSTS that lists only
 * names: the cheap check of an inbound activity's actor, before anything is fetched (a fetch
 * checks the addresses too).
 */
export const hostRefused = (settings: SettingsShape, host: string): boolean =>
  hostNameRefused(federationPolicy(settings), host)

interface Answer {
  readonly status: number
  readonly location: string | undefined
  readonly headers: Record<string, string | Array<string> | undefined>
  readonly body: Buffer
}

interface Outgoing {
  readonly method: string
  readonly headers: Record<string, string>
  readonly body?: Uint8Array | undefined
}

/** One request on addresses already checked (no redirect followed); the answer's body up to `max` bytes, all within `deadline`. */
const requestPinned = (url: URL, addresses: ReadonlyArray<string>, outgoing: Outgoing, max: number, deadline: number) =>
  Effect.callback<Answer, RemoteError>((resume) => {
    const fail = (message: string, reason: RemoteError["reason"] = "remote-failed") =>
      resume(Effect.fail(new RemoteError({ message, reason })))
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, {
      method: outgoing.method,
      headers: outgoing.headers,
      // The host resolves to what was checked, and only that.
      lookup: (_host, options, callback) => {
        const all = addresses.map((address) => ({ address, family: isIP(address) }))
        if ((options as { all?: boolean }).all === true) (callback as any)(null, all)
        else (callback as any)(null, all[0]!.address, all[0]!.family)
      }
    })
    const timer = setTimeout(
      () => {
        request.destroy()
        fail(`${url.origin} did not answer within ${FETCH_TIMEOUT_MS / 1000} s`)
      },
      Math.max(0, deadline - Date.now())
    )
    request.on("error", (error) => {
      clearTimeout(timer)
      fail(`could not reach ${url.href}: ${error.message}`)
    })
    request.on("response", (response) => {
      const declared = Number(response.headers["content-length"] ?? "")
      if (Number.isFinite(declared) && declared > max) {
        clearTimeout(timer)
        request.destroy()
        return fail(`${url.href} answered more than ${max} bytes`)
      }
      const chunks: Array<Buffer> = []
      let size = 0
      response.on("data", (chunk: Buffer) => {
        size += chunk.length
        if (size > max) {
          clearTimeout(timer)
          request.destroy()
          return fail(`${url.href} answered more than ${max} bytes`)
        }
        chunks.push(chunk)
      })
      response.on("end", () => {
        clearTimeout(timer)
        resume(
          Effect.succeed({
            status: response.statusCode ?? 0,
            location: response.headers.location,
            headers: response.headers,
            body: Buffer.concat(chunks)
          })
        )
      })
      response.on("error", (error) => {
        clearTimeout(timer)
        fail(`could not read ${url.href}: ${error.message}`)
      })
    })
    request.end(outgoing.body === undefined ? undefined : Buffer.from(outgoing.body))
    return Effect.sync(() => {
      clearTimeout(timer)
      request.destroy()
    })
  })

/**
 * GETs a JSON document from another server: the host policy for it and for each redirect (at
 * most three), one deadline for the whole of it, at most MAX_SIZE bytes; a RemoteError otherwise
 * (a 404 or 410 of the remote is a 404 here).
 */
export const fetchJson = (
  settings: SettingsShape,
  raw: string,
  accept = ACCEPT_ACTIVITY
): Effect.Effect<unknown, RemoteError> =>
  Effect.gen(function* () {
    const deadline = Date.now() + FETCH_TIMEOUT_MS
    const userAgent = `Hearth (+${settings.server.ROOT_URL})`
    let url = raw
    for (let hop = 0; ; hop++) {
      const addresses = yield* checkUrl(settings, url)
      const outgoing = { method: "GET", headers: { accept, "user-agent": userAgent } }
      const answer = yield* requestPinned(new URL(url), addresses, outgoing, maxBytes(settings), deadline)
      if (answer.status >= 300 && answer.status < 400 && answer.location !== undefined && hop < MAX_REDIRECTS) {
        url = new URL(answer.location, url).href
        continue
      }
      if (answer.status === 404 || answer.status === 410)
        return yield* new RemoteError({ message: `${url} does not exist`, reason: "not-found" })
      if (answer.status < 200 || answer.status >= 300) {
        return yield* new RemoteError({ message: `${url} answered ${answer.status}`, reason: "remote-failed" })
      }
      try {
        return JSON.parse(answer.body.toString("utf8")) as unknown
      } catch {
        return yield* new RemoteError({ message: `${url} did not answer JSON`, reason: "remote-failed" })
      }
    }
  })

/** Why a delivery was not even attempted: the place is one this server may not reach. */
export class DeliveryRefused extends Error {}

/**
 * The `fetch` that Fedify's deliveries go through (Store.ts runs them inside it): the same rules as
 * `fetchJson` — the host policy checked on every request, redirects included (Fedify follows
 * them itself, a request at a time), the connection pinned to the checked addresses, one time-out
 * per request, at most MAX_SIZE of answer. A refused place throws DeliveryRefused.
 */
export const deliveryFetch =
  (settings: SettingsShape) =>
  async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const request = new Request(input, init)
    const checked = await Effect.runPromise(Effect.result(checkUrl(settings, request.url)))
    if (checked._tag === "Failure")
      throw new DeliveryRefused(`not delivering to ${request.url}: ${checked.failure.message}`)
    const body = request.body === null ? undefined : new Uint8Array(await request.arrayBuffer())
    const outgoing = { method: request.method, headers: Object.fromEntries(request.headers), body }
    const result = await Effect.runPromise(
      Effect.result(
        requestPinned(
          new URL(request.url),
          checked.success,
          outgoing,
          maxBytes(settings),
          Date.now() + FETCH_TIMEOUT_MS
        )
      )
    )
    if (result._tag === "Failure") throw new Error(result.failure.message)
    const answer = result.success
    if (answer.status < 200 || answer.status > 599) throw new Error(`${request.url} answered ${answer.status}`)
    const headers = new Headers()
    for (const [name, value] of Object.entries(answer.headers)) {
      for (const one of [value ?? []].flat()) headers.append(name, one)
    }
    // A Response cannot carry a body with these statuses.
    const empty = answer.status === 204 || answer.status === 205 || answer.status === 304
    return new Response(empty ? null : new Uint8Array(answer.body), { status: answer.status, headers })
  }

/** The id of a JSON-LD node given as a string or as an object with `id`. */
export const idOf = (value: unknown): string | undefined => {
  if (typeof value === "string") return value
  if (typeof value === "object" && value !== null && typeof (value as { id?: unknown }).id === "string") {
    return (value as { id: string }).id
  }
  return undefined
}

/** A JSON object (not an array, not null), or undefined. */
export const asObject = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined

/** `type` of an object, the first one when it lists several. */
export const typeOf = (value: unknown): string | undefined => {
  const type = asObject(value)?.type
  if (typeof type === "string") return type
  if (Array.isArray(type) && typeof type[0] === "string") return type[0]
  return undefined
}

/**
 * Remote documents as Hearth reads them: fetched with `fetchJson` and kept a minute, so that the
 * key fetch of a signature check and the actor look-up right after it cost one request.
 */
export const makeDocuments = (settings: SettingsShape) => {
  const entries = new Map<string, { readonly expires: number; readonly document: unknown }>()
  const keyOf = (url: string) => url.replace(/#.*$/, "")
  return {
    fetch: (url: string, options: { readonly fresh?: boolean } = {}): Effect.Effect<unknown, RemoteError> =>
      Effect.suspend(() => {
        const key = keyOf(url)
        const hit = options.fresh === true ? undefined : entries.get(key)
        if (hit !== undefined && hit.expires > Date.now()) return Effect.succeed(hit.document)
        return Effect.tap(fetchJson(settings, key), (document) =>
          Effect.sync(() => {
            if (entries.size >= 5_000) entries.delete(entries.keys().next().value!)
            entries.set(key, { expires: Date.now() + 60_000, document })
          })
        )
      }),
    forget: (url: string) => void entries.delete(keyOf(url))
  }
}

export type Documents = ReturnType<typeof makeDocuments>

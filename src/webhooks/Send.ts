// Sending one webhook request (Forgejo's services/webhook/deliver.go and its HTTP client): where
// it may go is [webhook] ALLOWED_HOST_LIST through the outbound host policy (src/lib/HostPolicy.ts),
// checked on every address the host resolves to and again on every redirect, the connection pinned
// to the checked addresses; the whole exchange is bounded by DELIVER_TIMEOUT, and the answer's
// body by MAX_RESPONSE (a receiver answering more is cut off and the delivery counts as failed).
// The history keeps the first HISTORY_BODY bytes of it. Receivers PROXY_HOSTS names go through
// PROXY_URL (an http proxy): plain http as an absolute-URL request, https through a CONNECT tunnel
// (as Go's http.Transport); the receiver is checked against the policy all the same.
// Direct connections are kept open between deliveries (a backlog of one hook otherwise opens one
// connection per delivery), pooled per host and the addresses its check allowed: a socket is
// reused only by a request whose own check gave the same addresses, so it is always to an address
// the policy allowed for that request. Bounded: KEEP_ALIVE.maxSockets per receiver and address
// set, maxTotalSockets in all, idle ones closed after KEEP_ALIVE.idleMs.
import { type ClientRequest, type ClientRequestArgs, Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import { isIP } from "node:net"
import { connect as tlsConnect } from "node:tls"
import { Effect } from "effect"
import type { SettingsShape } from "../config/Settings.ts"
import { globMatch } from "../lib/Glob.ts"
import { checkHost, type HostPolicy } from "../lib/HostPolicy.ts"

/** Bytes of a receiver's answer read at most. */
export const MAX_RESPONSE = 1024 * 1024
/** Bytes of a receiver's answer kept in the delivery history. */
export const HISTORY_BODY = 64 * 1024
const MAX_REDIRECTS = 5

/**
 * The receivers' connection pool: a hook's deliveries go one at a time and at most 16 hooks'
 * at once (QUEUE_LENGTH), so 16 sockets per receiver serve every delivery in flight; idle ones
 * close before the usual server keep-alive (Node's 5 s) would.
 */
export const KEEP_ALIVE = { maxSockets: 16, maxTotalSockets: 256, maxFreeSockets: 16, idleMs: 4_000 } as const

/** The pool's key: the host and port (and TLS options) as Node's, plus the addresses checked. */
const checkedName = (name: string, options?: ClientRequestArgs) =>
  `${name}|${String((options as { checked?: string } | undefined)?.checked ?? "")}`
const agentOptions = {
  keepAlive: true,
  maxSockets: KEEP_ALIVE.maxSockets,
  maxTotalSockets: KEEP_ALIVE.maxTotalSockets,
  maxFreeSockets: KEEP_ALIVE.maxFreeSockets,
  // A free socket idle this long is closed (an active one is bounded by the delivery's deadline).
  timeout: KEEP_ALIVE.idleMs
}
class CheckedHttpAgent extends HttpAgent {
  override getName(options?: ClientRequestArgs) {
    return checkedName(super.getName(options), options)
  }
}
class CheckedHttpsAgent extends HttpsAgent {
  override getName(options?: ClientRequestArgs) {
    return checkedName(super.getName(options as never), options)
  }
}
const httpAgent = new CheckedHttpAgent(agentOptions)
// Kept per TLS setting: Node's key has rejectUnauthorized in it as well.
const httpsAgent = new CheckedHttpsAgent(agentOptions)

export const webhookPolicy = (settings: SettingsShape): HostPolicy => ({
  allowLocalNetworks: false,
  allowed: settings.webhook.ALLOWED_HOST_LIST,
  blocked: "",
  refusal: "webhook can only call allowed HTTP servers (check your webhook.ALLOWED_HOST_LIST setting)",
  hints: { local: "", lists: "" }
})

export interface Answer {
  /** 0 when there was no answer. */
  readonly status: number
  readonly headers: Record<string, string>
  /** The first HISTORY_BODY bytes, or what went wrong (`Delivery: …`). */
  readonly body: string
  /** A network failure, refusal, time-out or oversized answer (retryable unless `refused`). */
  readonly error?: string | undefined
  readonly refused?: boolean | undefined
}

const flatHeaders = (headers: Record<string, string | Array<string> | undefined>) =>
  Object.fromEntries(
    Object.entries(headers).flatMap(([k, v]) => (v === undefined ? [] : [[k, Array.isArray(v) ? v.join(", ") : v]]))
  )

/**
 * Whether the receiver goes through [webhook] PROXY_URL: a PROXY_HOSTS glob (comma-separated, no
 * separators) matches its host as the URL writes it, port included (Forgejo matches `req.URL.Host`),
 * or its bare host name (Hearth's: `example.com` then covers every port).
 */
const proxied = (settings: SettingsShape, url: URL) =>
  settings.webhook.PROXY_URL !== "" &&
  settings.webhook.PROXY_HOSTS.split(",").some((glob) => {
    const g = glob.trim().toLowerCase()
    if (g === "") return false
    if (g === "**") return true
    return globMatch(g, url.host) || globMatch(g, url.hostname.replace(/^\[|\]$/g, ""))
  })

interface Step {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
  readonly location?: string | undefined
  readonly error?: string | undefined
}

/** `Proxy-Authorization` from the proxy URL's user and password (as Go's `http.ProxyURL`), if any. */
const proxyAuthorization = (proxy: URL): Record<string, string> =>
  proxy.username === ""
    ? {}
    : {
        "Proxy-Authorization": `Basic ${Buffer.from(
          `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
        ).toString("base64")}`
      }

/**
 * One exchange on checked addresses, or through the proxy: an http receiver gets the absolute URL
 * as the request target; an https one a CONNECT tunnel with TLS to the receiver inside it (the
 * proxy sees only host and port). Never rejects.
 */
const exchange = (
  settings: SettingsShape,
  url: URL,
  addresses: ReadonlyArray<string> | undefined,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  deadline: number
): Promise<Step> =>
  new Promise((resolve) => {
    let done = false
    const opened: Array<{ destroy: () => void }> = []
    /** `keep`: a complete answer on a pooled connection, which goes back to the pool. */
    const finish = (step: Step, keep = false) => {
      if (done) return
      done = true
      clearTimeout(timer)
      if (!keep) for (const one of opened) one.destroy()
      resolve(step)
    }
    const failed = (error: Error) => finish({ status: 0, headers: {}, body: Buffer.alloc(0), error: error.message })
    const timer = setTimeout(
      () =>
        finish({
          status: 0,
          headers: {},
          body: Buffer.alloc(0),
          error: `timed out after ${settings.webhook.DELIVER_TIMEOUT} s`
        }),
      Math.max(0, deadline - Date.now())
    )
    const options = {
      method,
      headers: { ...headers, ...(body === undefined ? {} : { "Content-Length": String(Buffer.byteLength(body)) }) },
      rejectUnauthorized: !settings.webhook.SKIP_TLS_VERIFY,
      ...(addresses === undefined
        ? {}
        : {
            // The host resolves to what was checked, and only that.
            lookup: (_host: string, opts: { all?: boolean | undefined }, callback: (...args: Array<any>) => void) => {
              const all = addresses.map((address) => ({ address, family: isIP(address) }))
              if (opts.all === true) callback(null, all)
              else callback(null, all[0]!.address, all[0]!.family)
            },
            agent: url.protocol === "https:" ? httpsAgent : httpAgent,
            checked: addresses.join(",")
          })
    }
    const pooled = addresses !== undefined
    const exchangeOn = (request: ClientRequest, retry?: () => ClientRequest) => {
      opened.push(request)
      let gotAnswer = false
      request.on("error", (error: NodeJS.ErrnoException) => {
        // A kept connection the receiver closed while idle: once more, on a new connection.
        if (retry !== undefined && !gotAnswer && request.reusedSocket && error.code === "ECONNRESET") {
          exchangeOn(retry())
          return
        }
        failed(error)
      })
      request.on("response", (response) => {
        gotAnswer = true
        const chunks: Array<Buffer> = []
        let size = 0
        const answered = { status: response.statusCode ?? 0, headers: flatHeaders(response.headers) }
        response.on("data", (chunk: Buffer) => {
          size += chunk.length
          if (size > MAX_RESPONSE) {
            return finish({
              ...answered,
              body: Buffer.concat(chunks),
              error: `the receiver answered more than ${MAX_RESPONSE / 1024} KiB`
            })
          }
          if (size - chunk.length < HISTORY_BODY) chunks.push(chunk)
        })
        response.on("end", () =>
          finish({ ...answered, body: Buffer.concat(chunks), location: response.headers.location }, pooled)
        )
        response.on("error", (error) => finish({ ...answered, body: Buffer.concat(chunks), error: error.message }))
      })
      request.end(body)
    }
    if (pooled) {
      const direct = (agent?: false) =>
        (url.protocol === "https:" ? httpsRequest : httpRequest)(url, agent === false ? { ...options, agent } : options)
      exchangeOn(direct(), () => direct(false))
      return
    }
    const proxy = new URL(settings.webhook.PROXY_URL)
    const toProxy = {
      host: proxy.hostname.replace(/^\[|\]$/g, ""),
      port: proxy.port === "" ? 80 : Number(proxy.port)
    }
    if (url.protocol === "http:") {
      exchangeOn(
        httpRequest({
          ...toProxy,
          path: url.href,
          ...options,
          agent: false,
          headers: { ...options.headers, Host: url.host, ...proxyAuthorization(proxy) }
        })
      )
      return
    }
    const authority = `${url.hostname}:${url.port === "" ? 443 : url.port}`
    const tunnel = httpRequest({
      ...toProxy,
      agent: false,
      method: "CONNECT",
      path: authority,
      headers: { Host: authority, ...proxyAuthorization(proxy) }
    })
    opened.push(tunnel)
    tunnel.on("error", failed)
    tunnel.on("connect", (answer, socket) => {
      opened.push(socket)
      if (answer.statusCode !== 200) {
        return finish({
          status: 0,
          headers: {},
          body: Buffer.alloc(0),
          error: `the proxy ${proxy.host} did not open a tunnel to ${authority} (it answered ${answer.statusCode})`
        })
      }
      const name = url.hostname.replace(/^\[|\]$/g, "")
      exchangeOn(
        httpsRequest(url, {
          ...options,
          createConnection: () =>
            tlsConnect({
              socket,
              ...(isIP(name) === 0 ? { servername: name } : {}),
              rejectUnauthorized: options.rejectUnauthorized
            })
        })
      )
    })
    tunnel.end()
  })

/** Sends the request, following redirects that pass the policy; the answer as the history keeps it. */
export const send = (
  settings: SettingsShape,
  target: {
    readonly url: string
    readonly method: string
    readonly headers: Record<string, string>
    readonly body: string
  }
): Effect.Effect<Answer> =>
  Effect.gen(function* () {
    const deadline = Date.now() + settings.webhook.DELIVER_TIMEOUT * 1000
    let url = new URL(target.url)
    let method = target.method
    let body: string | undefined = target.body
    for (let hop = 0; ; hop++) {
      if (url.protocol !== "http:" && url.protocol !== "https:") {
        return {
          status: 0,
          headers: {},
          body: `Delivery: ${url.protocol} is not http(s)`,
          error: "not http(s)",
          refused: true
        }
      }
      const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase()
      const viaProxy = proxied(settings, url)
      // Checked whether or not it goes through the proxy: the proxy never widens where hooks may go.
      const checked = yield* Effect.result(checkHost(webhookPolicy(settings), url.href))
      if (checked._tag === "Failure") {
        const message = `${checked.failure.message}, deny '${host}'`
        return { status: 0, headers: {}, body: `Delivery: ${message}`, error: message, refused: true }
      }
      const addresses = viaProxy ? undefined : checked.success
      const step = yield* Effect.promise(() =>
        exchange(settings, url, addresses, method, target.headers, body, deadline)
      )
      const text = step.body.subarray(0, HISTORY_BODY).toString("utf8")
      if (step.error !== undefined) {
        return { status: step.status, headers: step.headers, body: `Delivery: ${step.error}`, error: step.error }
      }
      if ([301, 302, 303, 307, 308].includes(step.status) && step.location !== undefined && hop < MAX_REDIRECTS) {
        url = new URL(step.location, url)
        // As Go's client: 307/308 repeat the request, the others become a GET without a body.
        if (step.status !== 307 && step.status !== 308) {
          method = "GET"
          body = undefined
        }
        continue
      }
      return { status: step.status, headers: step.headers, body: text }
    }
  })

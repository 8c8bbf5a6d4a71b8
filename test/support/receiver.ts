// A real webhook receiver for tests: a node:http server on 127.0.0.1 that records every request
// (path, headers, raw body) and answers as the path asks: `/ok` 200, `/fail/<n>` 500 for the first
// n requests then 200, `/hang` never, `/huge` 5 MiB of body, `/redirect?to=<url>` 302.
import { createServer, type IncomingHttpHeaders, type Server } from "node:http"
import type { AddressInfo } from "node:net"

export interface Received {
  readonly method: string
  readonly path: string
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface Receiver {
  readonly url: (path: string) => string
  readonly received: Array<Received>
  /** Requests whose path starts with `prefix`. */
  readonly at: (prefix: string) => Array<Received>
  /** Waits (bounded) until `count` requests reached `prefix`. */
  readonly wait: (prefix: string, count?: number, timeoutMs?: number) => Promise<Array<Received>>
  readonly close: () => Promise<void>
}

export const startReceiver = async (): Promise<Receiver> => {
  const received: Array<Received> = []
  const failures = new Map<string, number>()
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const path = req.url ?? "/"
      received.push({
        method: req.method ?? "",
        path,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8")
      })
      const url = new URL(path, "http://receiver")
      if (url.pathname.startsWith("/hang")) return // never answers
      if (url.pathname.startsWith("/huge")) {
        res.writeHead(200, { "content-type": "text/plain" })
        const block = Buffer.alloc(64 * 1024, "x")
        let sent = 0
        const more = () => {
          while (sent < 5 * 1024 * 1024) {
            sent += block.length
            if (!res.write(block)) return void res.once("drain", more)
          }
          res.end()
        }
        res.on("error", () => {})
        return more()
      }
      if (url.pathname.startsWith("/redirect")) {
        res.writeHead(302, { location: url.searchParams.get("to") ?? "/ok" })
        return res.end()
      }
      const fail = /^\/fail\/(\d+)/.exec(url.pathname)
      if (fail !== null) {
        const seen = (failures.get(url.pathname) ?? 0) + 1
        failures.set(url.pathname, seen)
        if (seen <= Number(fail[1])) {
          res.writeHead(500, { "content-type": "text/plain" })
          return res.end("not now")
        }
      }
      res.writeHead(200, { "content-type": "text/plain", "x-receiver": "yes" })
      res.end("thanks")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const at = (prefix: string) => received.filter((r) => r.path.startsWith(prefix))
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    received,
    at,
    wait: async (prefix, count = 1, timeoutMs = 20_000) => {
      const deadline = Date.now() + timeoutMs
      while (at(prefix).length < count) {
        if (Date.now() > deadline)
          throw new Error(`timed out waiting for ${count} request(s) at ${prefix}; got ${at(prefix).length}`)
        await new Promise((r) => setTimeout(r, 50))
      }
      return at(prefix)
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

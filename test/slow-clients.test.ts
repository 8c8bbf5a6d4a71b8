// Slow, idle and numerous clients are bounded (issue 15 item 4): [server] READ_HEADER_TIMEOUT,
// BODY_IDLE_TIMEOUT, KEEP_ALIVE_TIMEOUT, KEEP_ALIVE_MAX_REQUESTS and MAX_CONNECTIONS, on a server
// started with 1 s limits, over raw sockets; a slow but steady push (through a throttling proxy)
// still completes; an SSH client that stops answering is disconnected. The waits here are bounded
// waits on the time-outs under test.
import { execFileSync } from "node:child_process"
import { randomBytes } from "node:crypto"
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { get } from "node:http"
import { connect, createServer, type Server, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import ssh2 from "ssh2"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { resolveSettings } from "../src/config/Settings.ts"
import { gitEnv } from "../src/git/Git.ts"
import { clientLimits } from "../src/Server.ts"
import { generateEd25519 } from "../src/ssh/HostKey.ts"
import { gitIn, gitRun } from "./support/git.ts"
import { basic, createToken, createUser, freePort, type Hearth, request, startHearth } from "./support/hearth.ts"
import { sleep } from "./support/spawn.ts"

const LIMIT_MS = 1000
const MAX_CONNECTIONS = 12
let hearth: Hearth
let port: number
let sshPort: number
let token: string
const dir = mkdtempSync(join(tmpdir(), "hearth-slow-"))

beforeAll(async () => {
  sshPort = await freePort()
  hearth = await startHearth({
    server: {
      READ_HEADER_TIMEOUT: "1s",
      BODY_IDLE_TIMEOUT: "1s",
      KEEP_ALIVE_TIMEOUT: "1s",
      KEEP_ALIVE_MAX_REQUESTS: "3",
      MAX_CONNECTIONS: String(MAX_CONNECTIONS),
      START_SSH_SERVER: "true",
      SSH_LISTEN_HOST: "127.0.0.1",
      SSH_LISTEN_PORT: String(sshPort)
    }
  })
  port = Number(new URL(hearth.base).port)
  await createUser(hearth, { username: "alice" })
  token = await createToken(hearth, "alice")
  for (const name of ["slow", "large"]) {
    expect((await request(hearth, "POST", "/user/repos", basic("alice"), { name })).status).toBe(201)
  }
})
afterAll(async () => {
  await hearth?.close()
  rmSync(dir, { recursive: true, force: true })
})

/** A raw connection that records what the server sent and when it closed (ms after opening). */
interface Raw {
  readonly socket: Socket
  readonly received: () => string
  readonly closed: Promise<number>
}
const raw = (): Promise<Raw> =>
  new Promise((resolve, reject) => {
    const opened = Date.now()
    const socket = connect(port, "127.0.0.1")
    let received = ""
    socket.on("data", (d) => (received += d))
    socket.on("error", () => {})
    const closed = new Promise<number>((done) => socket.on("close", () => done(Date.now() - opened)))
    socket.once("connect", () => resolve({ socket, received: () => received, closed }))
    socket.once("error", reject)
  })

/** Resolves with the close time, or rejects when the connection is still open after `ms`. */
const closedWithin = (connection: Raw, ms: number) =>
  Promise.race([connection.closed, sleep(ms).then(() => Promise.reject(new Error(`still open after ${ms} ms`)))])

/** GET /api/v1/version on a connection of its own (no keep-alive pool counting against the cap). */
const version = (): Promise<number | string> =>
  new Promise((resolve) => {
    const req = get({ host: "127.0.0.1", port, path: "/api/v1/version", agent: false, timeout: 5000 }, (res) => {
      res.resume()
      res.on("end", () => resolve(res.statusCode!))
    })
    req.on("timeout", () => req.destroy(new Error("timeout")))
    req.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message))
  })

/** Writes `chunk` every `everyMs` until stopped. */
const trickle = (socket: Socket, chunk: string, everyMs: number) => {
  const timer = setInterval(() => socket.writable && socket.write(chunk), everyMs)
  return () => clearInterval(timer)
}

/** Sends a `length`-byte body one byte every `everyMs`; `finish` sends the rest at once. */
const slowBody = (socket: Socket, length: number, everyMs: number) => {
  let sent = 0
  const timer = setInterval(() => {
    if (sent < length - 1 && socket.writable) {
      socket.write("x")
      sent++
    }
  }, everyMs)
  return {
    finish: () => {
      clearInterval(timer)
      socket.write("x".repeat(length - sent))
    }
  }
}

const markdownHead = (length: number, auth = `token ${token}`) =>
  `POST /api/v1/markdown/raw HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\nContent-Type: text/plain\r\n` +
  `Content-Length: ${length}\r\n\r\n`

it("reads the [server] durations as milliseconds", () => {
  const server = resolveSettings({
    server: { READ_HEADER_TIMEOUT: "1m30s", BODY_IDLE_TIMEOUT: "500ms", KEEP_ALIVE_TIMEOUT: "2s" }
  }).server
  expect(clientLimits(server)).toEqual({
    headerTimeoutMs: 90_000,
    idleTimeoutMs: 500,
    keepAliveTimeoutMs: 2000,
    keepAliveMaxRequests: 0,
    maxConnections: 1000
  })
})

describe("READ_HEADER_TIMEOUT", () => {
  it("closes connections whose headers do not complete in time, while other requests are answered", async () => {
    const slow = await Promise.all(Array.from({ length: 6 }, raw))
    const stops = slow.map((c) => {
      c.socket.write("GET /api/v1/version HTTP/1.1\r\nHost: x\r\n")
      // Steady, but the headers never end: the limit is on the whole header block.
      return trickle(c.socket, "X-Slow: 1\r\n", 200)
    })
    // And connections that say nothing at all.
    const silent = await Promise.all(Array.from({ length: 3 }, raw))
    expect(await version()).toBe(200)
    try {
      for (const c of [...slow, ...silent])
        expect(await closedWithin(c, LIMIT_MS * 4)).toBeGreaterThanOrEqual(LIMIT_MS - 100)
    } finally {
      for (const stop of stops) stop()
    }
    expect(slow[0]!.received()).toMatch(/^HTTP\/1\.1 408 /)
    expect(await version()).toBe(200)
  })
})

describe("BODY_IDLE_TIMEOUT", () => {
  it("closes connections whose body stops arriving (any route, signed in or not), while other requests are answered", async () => {
    const stalled = await Promise.all(Array.from({ length: 6 }, raw))
    const heads = [
      markdownHead(1000), // read by the route
      markdownHead(1000, "token nope"), // refused (401) before the body is read
      markdownHead(1000).replace("/markdown/raw", "/version") // no such method (405)
    ]
    for (const [i, c] of stalled.entries()) {
      // Headers, the start of the body, then nothing.
      c.socket.write(heads[i % heads.length]!)
      c.socket.write("# a title")
    }
    expect(await version()).toBe(200)
    for (const c of stalled) expect(await closedWithin(c, LIMIT_MS * 4)).toBeGreaterThanOrEqual(LIMIT_MS - 100)
    expect(await version()).toBe(200)
  })

  it("does not cut a body that keeps arriving, however long it takes", async () => {
    const chunks = 12 // one every 250 ms: 3 s in all, three times the limit
    const c = await raw()
    c.socket.write(markdownHead(chunks * 2))
    for (let i = 0; i < chunks; i++) {
      c.socket.write("a\n")
      await sleep(250)
    }
    await sleep(300)
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(c.received()).toContain("<p>a\na")
    c.socket.destroy()
  })

  it("closes the connection of a client that stops reading the response, not of one that reads slowly", async () => {
    // 16 MiB: far more than the socket buffers take while nobody reads.
    const size = 16 * 1024 * 1024
    const work = join(dir, "large")
    await gitIn(dir, ["init", "-q", "-b", "main", work])
    writeFileSync(join(work, "large.bin"), randomBytes(size))
    await gitIn(work, ["add", "."])
    await gitIn(work, ["commit", "-q", "-m", "large"])
    const pushed = await gitRun(work, ["push", `http://alice:${token}@127.0.0.1:${port}/alice/large.git`, "main"])
    expect(pushed.code, pushed.stderr).toBe(0)
    const get = `GET /api/v1/repos/alice/large/raw/large.bin HTTP/1.1\r\nHost: x\r\nAuthorization: token ${token}\r\n\r\n`

    const stalled = await raw()
    let bytes = 0
    // Reads the first piece, then nothing.
    stalled.socket.on("data", (d: Buffer) => (bytes += d.length))
    stalled.socket.once("data", () => stalled.socket.pause())
    stalled.socket.write(get)
    await sleep(LIMIT_MS * 3)
    stalled.socket.resume()
    await closedWithin(stalled, LIMIT_MS * 2)
    expect(stalled.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(bytes).toBeLessThan(size)

    // Reading 2 MiB at a time with pauses of 0.3 s (never idle for the limit, but longer in all):
    // the whole file arrives. (The server sees a reader move when its system's send buffer drains,
    // in bursts of up to half the buffer: pauses must stay well below the limit for that.)
    const slow = await raw()
    let slowBytes = 0
    let upTo = 0
    slow.socket.on("data", (d: Buffer) => {
      slowBytes += d.length
      if (slowBytes >= upTo) slow.socket.pause()
    })
    slow.socket.write(get)
    const started = Date.now()
    while (slowBytes < size && !slow.socket.destroyed && Date.now() - started < 60_000) {
      await sleep(300)
      upTo = slowBytes + 2 * 1024 * 1024
      slow.socket.resume()
      while (!slow.socket.isPaused() && slowBytes < size && !slow.socket.destroyed) await sleep(5)
    }
    slow.socket.destroy()
    expect(slowBytes).toBeGreaterThan(size)
    expect(Date.now() - started).toBeGreaterThan(LIMIT_MS)
  }, 90_000)

  it("lets a slow but steady git push complete, and cuts one that stalls without changing the repository", async () => {
    const work = join(dir, "work")
    await gitIn(dir, ["init", "-q", "-b", "main", work])
    // Incompressible, so that the pack is as large as the file: ~12 s of throttled sending would
    // be too slow; 192 KiB at 16 KiB per 250 ms is ~3 s, three times the limit.
    writeFileSync(join(work, "blob.bin"), randomBytes(192 * 1024))
    await gitIn(work, ["add", "."])
    await gitIn(work, ["commit", "-q", "-m", "big"])
    const proxy = await throttlingProxy(16 * 1024, 250)
    try {
      const remote = `http://alice:${token}@127.0.0.1:${proxy.port}/alice/slow.git`
      const started = Date.now()
      const pushed = await gitRun(work, ["push", remote, "main"])
      expect(pushed.code, pushed.stderr).toBe(0)
      expect(Date.now() - started).toBeGreaterThan(LIMIT_MS * 2)
    } finally {
      proxy.server.close()
    }
    const head = await gitIn(work, ["rev-parse", "HEAD"])

    // A second push whose body stops half-way: the connection is closed, git is stopped, and the
    // branch does not appear.
    await gitIn(work, ["commit", "-q", "--allow-empty", "-m", "second"])
    const pack = execFileSync("git", ["pack-objects", "--stdout", "--revs"], {
      cwd: work,
      env: gitEnv(),
      input: `${await gitIn(work, ["rev-parse", "HEAD"])}\n^${head}\n`
    })
    const commands = `${"0".repeat(40)} ${await gitIn(work, ["rev-parse", "HEAD"])} refs/heads/stalled\0 report-status\n`
    const body = Buffer.concat([
      Buffer.from(`${(commands.length + 4).toString(16).padStart(4, "0")}${commands}0000`),
      pack
    ])
    const c = await raw()
    c.socket.write(
      `POST /alice/slow.git/git-receive-pack HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic("alice", token)}\r\n` +
        `Content-Type: application/x-git-receive-pack-request\r\nContent-Length: ${body.length}\r\n\r\n`
    )
    c.socket.write(body.subarray(0, body.length >> 1))
    expect(await closedWithin(c, LIMIT_MS * 4)).toBeGreaterThanOrEqual(LIMIT_MS - 100)
    const branches = await request(hearth, "GET", "/repos/alice/slow/branches", basic("alice"))
    expect(((await branches.json()) as Array<{ name: string }>).map((b) => b.name)).toEqual(["main"])
  })
})

/**
 * A TCP proxy to Hearth that passes what the client sends on in `chunk`-byte pieces, one every
 * `everyMs` (a slow uplink); answers pass through at full speed.
 */
const throttlingProxy = async (chunk: number, everyMs: number) => {
  const server: Server = createServer((client) => {
    const upstream = connect(port, "127.0.0.1")
    let pending = Buffer.alloc(0)
    let ended = false
    const timer = setInterval(() => {
      if (pending.length > 0) {
        upstream.write(pending.subarray(0, chunk))
        pending = pending.subarray(chunk)
      } else if (ended) {
        clearInterval(timer)
        upstream.end()
      }
    }, everyMs)
    client.on("data", (d) => (pending = Buffer.concat([pending, d])))
    client.on("end", () => (ended = true))
    upstream.pipe(client)
    const close = () => {
      clearInterval(timer)
      client.destroy()
      upstream.destroy()
    }
    client.on("error", close)
    upstream.on("error", close)
    upstream.on("close", close)
  })
  const proxyPort = await freePort()
  await new Promise<void>((r) => server.listen(proxyPort, "127.0.0.1", () => r()))
  return { server, port: proxyPort }
}

describe("keep-alive", () => {
  it("closes a keep-alive connection idle past KEEP_ALIVE_TIMEOUT", async () => {
    const c = await raw()
    c.socket.write("GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
    await sleep(300)
    expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    expect(c.received().toLowerCase()).toContain("keep-alive: timeout=1")
    // Node adds a second to the advertised time-out before it closes (keepAliveTimeoutBuffer).
    expect(await closedWithin(c, LIMIT_MS * 4)).toBeGreaterThanOrEqual(LIMIT_MS)
  })

  it("serves at most KEEP_ALIVE_MAX_REQUESTS requests on one connection", async () => {
    const c = await raw()
    for (let i = 1; i <= 4; i++) {
      c.socket.write("GET /api/v1/version HTTP/1.1\r\nHost: x\r\n\r\n")
      await sleep(150)
    }
    const responses = c.received().split(/(?=HTTP\/1\.1 )/)
    // The third says the connection ends; one more request on it is not served (Node's 503).
    expect(responses.map((r) => r.slice(0, 12))).toEqual([
      "HTTP/1.1 200",
      "HTTP/1.1 200",
      "HTTP/1.1 200",
      "HTTP/1.1 503"
    ])
    expect(responses[1]!.toLowerCase()).toContain("connection: keep-alive")
    expect(responses[2]!.toLowerCase()).toContain("connection: close")
    await closedWithin(c, LIMIT_MS * 4)
  })
})

describe("MAX_CONNECTIONS", () => {
  it("closes connections over the cap at once, while the open ones are served", async () => {
    expect(await version()).toBe(200)
    // Busy connections: each sends a body a byte at a time (never idle long enough to be cut).
    const busy = await Promise.all(Array.from({ length: MAX_CONNECTIONS }, raw))
    const bodies = busy.map((c) => {
      c.socket.write(markdownHead(100))
      return slowBody(c.socket, 100, 100)
    })
    await sleep(300)
    const refused = await version()
    expect(refused).toMatch(/^(ECONNRESET|EPIPE|socket hang up)$/)
    const extra = await raw()
    await closedWithin(extra, LIMIT_MS)
    expect(extra.received()).toBe("")
    // The open ones finish their request and are answered.
    for (const body of bodies) body.finish()
    await sleep(500)
    for (const c of busy) expect(c.received()).toMatch(/^HTTP\/1\.1 200 /)
    for (const c of busy) c.socket.destroy()
    // Below the cap again: new connections are served.
    await sleep(200)
    expect(await version()).toBe(200)
  })
})

describe("SSH", () => {
  it("disconnects an authenticated client that stops answering (BODY_IDLE_TIMEOUT)", async () => {
    const keys = generateEd25519()
    expect(
      (await request(hearth, "POST", "/user/keys", basic("alice"), { title: "idle", key: keys.public })).status
    ).toBe(201)
    const socket = connect(sshPort, "127.0.0.1")
    const client = new ssh2.Client()
    const closed = new Promise<void>((done) => client.on("close", () => done()))
    client.on("error", () => {})
    await new Promise<void>((ready, fail) => {
      client.once("ready", () => ready())
      client.once("error", fail)
      client.connect({ sock: socket, username: "git", privateKey: keys.private })
    })
    // The client's side goes silent: it reads nothing, so it answers no keepalive ping.
    socket.pause()
    await sleep(LIMIT_MS * 3)
    socket.resume()
    await Promise.race([closed, sleep(LIMIT_MS).then(() => Promise.reject(new Error("still connected")))])
  })
})

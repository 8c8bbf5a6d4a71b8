// Sending stored files (src/storage/Send.ts through Serve.ts's blobBody): a download is read into
// a few buffers that are read into again only once the socket has sent them. Proved here over
// real sockets with a generic package of many chunks: the bytes arrive intact when the client
// reads slowly (the server's writes wait, its buffers are in flight) and quickly; byte ranges
// across chunks; HEAD; Content-Length; a client going away leaves no file open.
import { createHash, randomBytes } from "node:crypto"
import { readdirSync, readlinkSync } from "node:fs"
import { Agent, get } from "node:http"
import { connect } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ChunkPool, SEND_CHUNK } from "../src/storage/Send.ts"
import { createToken, createUser, type Hearth, startHearth } from "./support/hearth.ts"

let hearth: Hearth
let token: string
// More chunks than a download's pool has buffers, and not a whole number of chunks.
const file = randomBytes(20 * SEND_CHUNK + 12_345)
const sha256 = createHash("sha256").update(file).digest("hex")
const path = "/api/packages/alice/generic/big/1.0.0/big.bin"

interface Raw {
  readonly status: number
  readonly headers: Record<string, string>
  readonly body: Buffer
}

/**
 * One request over a raw socket, the response read whole once the server has closed it; with
 * `stall`, the client reads nothing until the server has had to wait for the socket.
 */
const raw = (method: string, headers: Record<string, string> = {}, stall = false) =>
  new Promise<Raw>((resolve, reject) => {
    const url = new URL(hearth.base)
    const socket = connect(Number(url.port), url.hostname, () => {
      const lines = Object.entries({ host: url.host, authorization: `token ${token}`, connection: "close", ...headers })
      socket.write(`${method} ${path} HTTP/1.1\r\n${lines.map(([k, v]) => `${k}: ${v}\r\n`).join("")}\r\n`)
      if (stall) {
        socket.pause()
        // Bounded wait (not a measure): long enough for the socket buffers to fill.
        setTimeout(() => socket.resume(), 500)
      }
    })
    const chunks: Array<Buffer> = []
    let reads = 0
    socket.on("data", (chunk: Buffer) => {
      chunks.push(chunk)
      // A slow reader: every few reads, a pause, so that the server's writes complete out of step.
      if (stall && ++reads % 7 === 0) {
        socket.pause()
        setTimeout(() => socket.resume(), 5)
      }
    })
    socket.on("error", reject)
    socket.on("close", () => {
      const all = Buffer.concat(chunks)
      const cut = all.indexOf("\r\n\r\n")
      const [statusLine, ...rest] = all.subarray(0, cut).toString("latin1").split("\r\n")
      const parsed: Record<string, string> = {}
      for (const line of rest) {
        const i = line.indexOf(":")
        parsed[line.slice(0, i).toLowerCase()] = line.slice(i + 1).trim()
      }
      resolve({ status: Number(statusLine!.split(" ")[1]), headers: parsed, body: all.subarray(cut + 4) })
    })
  })

/** The process's open descriptors that name the stored file. */
const openBlobFiles = () =>
  readdirSync("/proc/self/fd").filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).includes(sha256)
    } catch {
      return false
    }
  })

const waitForNoOpenBlob = async () => {
  // Bounded wait for the server to notice the closed connection.
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline && openBlobFiles().length > 0) await new Promise((r) => setTimeout(r, 20))
  return openBlobFiles()
}

beforeAll(async () => {
  hearth = await startHearth()
  await createUser(hearth, { username: "alice" })
  token = await createToken(hearth, "alice", ["write:package"])
  const put = await fetch(`${hearth.base}${path}`, {
    method: "PUT",
    headers: { authorization: `token ${token}` },
    body: file
  })
  expect(put.status).toBe(201)
}, 60_000)
afterAll(() => hearth?.close())

describe("a download read into reused buffers", () => {
  it("arrives intact to a client that reads slowly, and to one that reads at once", async () => {
    for (const stall of [true, false]) {
      const got = await raw("GET", {}, stall)
      expect(got.status).toBe(200)
      expect(got.headers["content-length"]).toBe(String(file.length))
      expect(got.body.length).toBe(file.length)
      expect(createHash("sha256").update(got.body).digest("hex")).toBe(sha256)
    }
    expect(await waitForNoOpenBlob()).toEqual([])
  })

  it("arrives intact twice over one kept-alive connection (the socket watched, then let go, then again)", async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    const sockets = new Set<unknown>()
    const once = () =>
      new Promise<Buffer>((resolve, reject) => {
        get(`${hearth.base}${path}`, { agent, headers: { authorization: `token ${token}` } }, (res) => {
          sockets.add(res.socket)
          const chunks: Array<Buffer> = []
          res.on("data", (c: Buffer) => chunks.push(c))
          res.on("end", () => resolve(Buffer.concat(chunks)))
          res.on("error", reject)
        }).on("error", reject)
      })
    for (let i = 0; i < 2; i++)
      expect(
        createHash("sha256")
          .update(await once())
          .digest("hex")
      ).toBe(sha256)
    expect(sockets.size).toBe(1)
    agent.destroy()
  })

  it("serves byte ranges across chunks with their Content-Range and Content-Length", async () => {
    const start = SEND_CHUNK - 100
    const end = 5 * SEND_CHUNK + 99
    const middle = await raw("GET", { range: `bytes=${start}-${end}` }, true)
    expect(middle.status).toBe(206)
    expect(middle.headers["content-range"]).toBe(`bytes ${start}-${end}/${file.length}`)
    expect(middle.headers["content-length"]).toBe(String(end - start + 1))
    expect(middle.body.equals(file.subarray(start, end + 1))).toBe(true)
    const tail = await raw("GET", { range: "bytes=-1000" })
    expect(tail.status).toBe(206)
    expect(tail.body.equals(file.subarray(file.length - 1000))).toBe(true)
    const past = await raw("GET", { range: `bytes=${file.length}-` })
    expect(past.status).toBe(416)
    expect(past.headers["content-range"]).toBe(`bytes */${file.length}`)
  })

  it("HEAD: the length, no body, no file left open", async () => {
    const head = await raw("HEAD")
    expect(head.status).toBe(200)
    expect(head.headers["content-length"]).toBe(String(file.length))
    expect(head.body.length).toBe(0)
    expect(await waitForNoOpenBlob()).toEqual([])
  })

  it("a client that goes away part-way leaves no file open", async () => {
    const url = new URL(hearth.base)
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () =>
        socket.write(`GET ${path} HTTP/1.1\r\nhost: ${url.host}\r\nauthorization: token ${token}\r\n\r\n`)
      )
      socket.once("data", () => {
        socket.destroy()
        resolve()
      })
      socket.on("error", reject)
    })
    expect(await waitForNoOpenBlob()).toEqual([])
    // The server still serves it whole afterwards.
    const again = await raw("GET")
    expect(createHash("sha256").update(again.body).digest("hex")).toBe(sha256)
  })
})

describe("ChunkPool", () => {
  it("lends a few buffers, takes one back only once it was sent, then one-offs it never reuses", () => {
    const pool = new ChunkPool()
    const lent = Array.from({ length: 8 }, () => pool.take())
    expect(new Set(lent.map((b) => b.buffer)).size).toBe(8)
    expect(lent.every((b) => pool.lends(b.subarray(0, 10)))).toBe(true)
    const extra = pool.take()
    expect(pool.lends(extra)).toBe(false)
    expect(lent.includes(pool.take())).toBe(false)
    pool.sent(lent[3]!.subarray(0, 10))
    expect(pool.lends(lent[3])).toBe(false)
    expect(pool.take()).toBe(lent[3])
    pool.sent(extra)
    expect(lent.includes(pool.take())).toBe(false)
  })
})

// Sending a stored file to an HTTP client without a new buffer per chunk.
//
// A file read stream allocates a new buffer for every chunk. To V8 each is external memory, and
// every ~64 MB of it starts a full mark-compact of the server's heap: on a forge's heap that was
// most of a download's CPU (7.7 s per GiB against 1.2 s for a bare node:http server; see
// infra/bench/README.md, "Issue 21: CPU per GiB, session 30"). Here a download reads into a few
// buffers of its own and reads into one again only once the socket has handed it to the kernel:
// the socket's write callback for that very buffer says so. A buffer whose callback never comes
// (another writer, a copy on the way) is simply never reused — a new one is allocated instead —
// so a buffer is never overwritten while something may still send it.
import { close, open, read } from "node:fs"
import type { IncomingMessage } from "node:http"
import { Socket } from "node:net"
import { Readable } from "node:stream"

/** Bytes per chunk read (and written to the socket). */
export const SEND_CHUNK = 256 * 1024
/** Reused buffers per download, at most (more in flight at once are allocated anew). */
const SEND_BUFFERS = 8

/** The buffers one download reads into, lent to the socket and returned by its write callbacks. */
export class ChunkPool {
  private readonly free: Array<Buffer> = []
  private readonly lent = new Map<ArrayBufferLike, Buffer>()
  private created = 0

  /** A buffer to read the next chunk into: a returned one, a new pooled one, or a one-off. */
  take(): Buffer {
    let buffer = this.free.pop()
    if (buffer === undefined) {
      // Its own ArrayBuffer (allocUnsafeSlow): a chunk is recognised by it.
      buffer = Buffer.allocUnsafeSlow(SEND_CHUNK)
      if (this.created === SEND_BUFFERS) return buffer
      this.created++
    }
    this.lent.set(buffer.buffer, buffer)
    return buffer
  }

  /** Whether `chunk` is (a part of) a buffer this pool lent. */
  lends(chunk: unknown): chunk is Uint8Array {
    return chunk instanceof Uint8Array && this.lent.has(chunk.buffer)
  }

  /** The socket is done with `chunk`: its buffer may be read into again. */
  sent(chunk: Uint8Array): void {
    const buffer = this.lent.get(chunk.buffer)
    if (buffer === undefined) return
    this.lent.delete(chunk.buffer)
    this.free.push(buffer)
  }
}

/** The pools of the downloads being sent on each socket (pipelined requests share one). */
const watched = new WeakMap<Socket, Set<ChunkPool>>()
/** How each watched socket's `write` is put back. */
const unwrap = new WeakMap<Socket, () => void>()

/**
 * Wraps `socket.write` so that the write callback of a chunk of `pool` returns its buffer; the
 * returned function stops that (the wrapper goes with the socket's last pool).
 */
const watch = (socket: Socket, pool: ChunkPool): (() => void) => {
  let pools = watched.get(socket)
  if (pools === undefined) {
    const set = new Set<ChunkPool>()
    pools = set
    watched.set(socket, set)
    // What `write` is now (another wrapper of the socket's own, or the prototype's): put back after.
    const own = Object.hasOwn(socket, "write") ? socket.write : undefined
    const write = socket.write
    const wrapper = function (this: Socket, chunk: unknown, ...rest: Array<unknown>) {
      const owner = [...set].find((p) => p.lends(chunk))
      if (owner === undefined) return (write as (...args: Array<unknown>) => boolean).call(this, chunk, ...rest)
      const callback = typeof rest[0] === "function" ? rest[0] : rest[1]
      const encoding = typeof rest[0] === "function" ? undefined : rest[0]
      return (write as (...args: Array<unknown>) => boolean).call(this, chunk, encoding, (error?: Error | null) => {
        owner.sent(chunk as Uint8Array)
        if (typeof callback === "function") callback(error)
      })
    }
    socket.write = wrapper as typeof socket.write
    unwrap.set(socket, () => {
      if (socket.write !== wrapper) return // wrapped again since: left as it is (ours only returns buffers)
      if (own !== undefined) socket.write = own
      else delete (socket as { write?: unknown }).write
    })
  }
  pools.add(pool)
  return () => {
    const set = watched.get(socket)
    if (set === undefined) return
    set.delete(pool)
    if (set.size > 0) return
    watched.delete(socket)
    unwrap.get(socket)?.()
    unwrap.delete(socket)
  }
}

/**
 * Bytes `start`…`end` (inclusive) of the file at `path` as a Node stream of SEND_CHUNK chunks,
 * read into `pool`'s buffers when there is a pool. The file is opened at the first read and
 * closed when the stream ends or is destroyed (a client going away), after a read in progress.
 */
export const fileChunks = (path: string, start: number, end: number, pool?: ChunkPool): Readable => {
  let fd: number | undefined
  let position = start
  let reading = false
  let closing: (() => void) | undefined
  const closeFd = (done: () => void) => {
    if (fd === undefined) return done()
    const handle = fd
    fd = undefined
    close(handle, () => done())
  }
  return new Readable({
    highWaterMark: SEND_CHUNK,
    construct(callback) {
      open(path, "r", (error, opened) => {
        if (error !== null) return callback(error)
        fd = opened
        callback()
      })
    },
    read() {
      const left = end + 1 - position
      if (left <= 0 || fd === undefined) {
        this.push(null)
        return
      }
      const buffer = pool?.take() ?? Buffer.allocUnsafeSlow(SEND_CHUNK)
      reading = true
      read(fd, buffer, 0, Math.min(left, buffer.length), position, (error, bytesRead) => {
        reading = false
        if (closing !== undefined) return closeFd(closing)
        if (error !== null) return this.destroy(error)
        if (bytesRead === 0) return this.destroy(new Error(`${path} ended before byte ${end}`))
        position += bytesRead
        this.push(bytesRead === buffer.length ? buffer : buffer.subarray(0, bytesRead))
      })
    },
    destroy(error, callback) {
      const done = () => callback(error)
      // Never closed under a read in progress: the number could name another file by then.
      if (reading) closing = done
      else closeFd(done)
    }
  })
}

/**
 * A pool whose buffers `request`'s socket returns once sent, and the function that stops
 * watching; undefined when the request has no HTTP/1 socket of its own to watch.
 */
export const poolFor = (request: unknown): { pool: ChunkPool; stop: () => void } | undefined => {
  const message = request as Partial<IncomingMessage> | undefined
  const socket = message?.socket
  if (message?.httpVersionMajor !== 1 || !(socket instanceof Socket) || socket.destroyed) return undefined
  const pool = new ChunkPool()
  return { pool, stop: watch(socket, pool) }
}

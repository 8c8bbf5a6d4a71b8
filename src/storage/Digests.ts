// The digests Forgejo records for every stored blob (`package_blob`: hash_md5, hash_sha1,
// hash_sha256, hash_sha512, hash_blake2b — BLAKE2b-512), computed in one pass over the bytes as
// they stream by.
//
// The five together cost several seconds of CPU per GiB on one core, several times what writing
// the bytes costs. So a large body is hashed on two threads: the main thread computes sha1 and
// sha256 (fast with the CPU's SHA instructions) and blake2b on each block before writing it, and a
// worker thread, once the block is written, md5 and sha512 (about the same cost) — the block is
// handed over, not copied. Small bodies (under one block) are hashed on the main thread alone.
import { createHash, type Hash } from "node:crypto"
import { Worker } from "node:worker_threads"

export interface Digests {
  /** Lower-case hex, as Forgejo stores and serves them. */
  readonly md5: string
  readonly sha1: string
  readonly sha256: string
  readonly sha512: string
  /** BLAKE2b-512 (Node's and OpenSSL's `blake2b512`). */
  readonly blake2b: string
}

export const ALGORITHMS = ["md5", "sha1", "sha256", "sha512", "blake2b512"] as const

/** Feeds every chunk to the five hashes on this thread; `digest` once at the end. */
export class Hasher {
  private readonly hashes: ReadonlyArray<Hash> = ALGORITHMS.map((algorithm) => createHash(algorithm))

  update(chunk: Uint8Array): void {
    for (const hash of this.hashes) hash.update(chunk)
  }

  digest(): Digests {
    const [md5, sha1, sha256, sha512, blake2b] = this.hashes.map((hash) => hash.digest("hex"))
    return { md5: md5!, sha1: sha1!, sha256: sha256!, sha512: sha512!, blake2b: blake2b! }
  }
}

/** A blob's name: 64 lower-case hex digits (anything else names no blob, and never a path). */
export const isSha256 = (value: string): boolean => /^[0-9a-f]{64}$/.test(value)

/**
 * The worker thread's code: md5 and sha512 of the blocks it is handed, each block handed back
 * once hashed. Plain CommonJS evaluated as is (a .ts file would load the type stripper into the
 * worker too: 38 MB of RSS instead of 21).
 * In: ["begin", id] · ["data", id, ArrayBuffer, length] (transferred) · ["end", id] · ["drop", id].
 * Out: ["ack", id, ArrayBuffer] (transferred back) · ["done", id, md5, sha512].
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads")
const { createHash } = require("node:crypto")
const jobs = new Map()
parentPort.on("message", (message) => {
  const [kind, id] = message
  if (kind === "begin") {
    jobs.set(id, [createHash("md5"), createHash("sha512")])
  } else if (kind === "data") {
    const buffer = message[2]
    const hashes = jobs.get(id)
    if (hashes !== undefined) {
      const block = new Uint8Array(buffer, 0, message[3])
      for (const hash of hashes) hash.update(block)
    }
    parentPort.postMessage(["ack", id, buffer], [buffer])
  } else if (kind === "end") {
    const hashes = jobs.get(id)
    jobs.delete(id)
    if (hashes !== undefined) parentPort.postMessage(["done", id, hashes[0].digest("hex"), hashes[1].digest("hex")])
  } else {
    jobs.delete(id)
  }
})
`

/** An idle worker is stopped after this long (ms), so that a server storing nothing carries none. */
const WORKER_IDLE_MS = 60_000

/** Bytes of one block: what is hashed, written and handed over at once. */
export const BLOCK_BYTES = 1 << 20
/** Blocks handed to the worker and not yet hashed, per body: bounds the memory a body holds. */
const MAX_IN_FLIGHT = 4
/** Blocks kept for reuse once a body is done with them (so storing makes no garbage of its own). */
const MAX_FREE_BLOCKS = 8

interface Job {
  /** The worker hashing it (a stopping worker fails its own jobs only). */
  readonly worker: Worker
  inFlight: number
  readonly waiting: Array<() => void>
  readonly done: (digests: { md5: string; sha512: string }) => void
  readonly fail: (error: Error) => void
}

/** One body hashed on two threads. */
export interface SplitHasher {
  /** sha1, sha256 and blake2b of the next `length` bytes of `block`, here and now. */
  readonly update: (block: Buffer, length: number) => void
  /**
   * Hands the block (the same, once written) to the worker for md5 and sha512; it comes back to
   * the free blocks once hashed. Waits while too many blocks are in flight.
   */
  readonly send: (block: Buffer, length: number) => Promise<void>
  /** All five digests, once the worker has hashed every block sent. */
  readonly digest: () => Promise<Digests>
  /** Gives the job up (the body was refused or failed). */
  readonly drop: () => void
}

/**
 * The blocks bodies are gathered in, and the digest worker thread: started on first use, shared
 * by every body being stored, stopped after a minute without work and by `close` (it never keeps
 * the process alive). If it dies, the bodies it was hashing fail and the next one starts a new
 * worker.
 */
export class DigestThreads {
  private worker: Worker | undefined
  private readonly jobs = new Map<number, Job>()
  private readonly free: Array<Buffer> = []
  private nextId = 1
  private idle: ReturnType<typeof setTimeout> | undefined
  private readonly idleMs: number

  constructor(options: { readonly idleMs?: number } = {}) {
    this.idleMs = options.idleMs ?? WORKER_IDLE_MS
  }

  /** Whether the worker thread is running. */
  get running(): boolean {
    return this.worker !== undefined
  }

  /** No body is being hashed: the worker is stopped if none starts meanwhile. */
  private finished(id: number): void {
    this.jobs.delete(id)
    if (this.jobs.size > 0 || this.worker === undefined) return
    clearTimeout(this.idle)
    this.idle = setTimeout(() => {
      if (this.jobs.size > 0) return
      const worker = this.worker
      this.worker = undefined
      this.free.length = 0
      void worker?.terminate()
    }, this.idleMs)
    this.idle.unref()
  }

  /** A block of BLOCK_BYTES with an ArrayBuffer of its own (it may be handed to the worker). */
  takeBlock(): Buffer {
    return this.free.pop() ?? Buffer.allocUnsafeSlow(BLOCK_BYTES)
  }

  giveBlock(block: Buffer): void {
    if (this.free.length < MAX_FREE_BLOCKS && block.byteLength === BLOCK_BYTES) this.free.push(block)
  }

  private start(): Worker {
    clearTimeout(this.idle)
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: "hearth-digests" })
    worker.unref()
    worker.on("message", (message: readonly [string, number, unknown?, string?]) => {
      if (message[0] === "ack") this.giveBlock(Buffer.from(message[2] as ArrayBuffer))
      const job = this.jobs.get(message[1])
      if (job === undefined) return
      if (message[0] === "ack") {
        job.inFlight--
        job.waiting.shift()?.()
      } else if (message[0] === "done") {
        this.finished(message[1])
        job.done({ md5: message[2] as string, sha512: message[3]! })
      }
    })
    const failAll = (error: Error) => {
      if (this.worker === worker) this.worker = undefined
      for (const [id, job] of this.jobs) {
        if (job.worker !== worker) continue
        this.jobs.delete(id)
        job.fail(error)
      }
    }
    worker.on("error", failAll)
    worker.on("exit", (code) => failAll(new Error(`the digest worker thread exited (${code})`)))
    this.worker = worker
    return worker
  }

  begin(): SplitHasher {
    const worker = this.start()
    const id = this.nextId++
    let done!: Job["done"]
    let fail!: Job["fail"]
    const result = new Promise<{ md5: string; sha512: string }>((resolve, reject) => {
      done = resolve
      fail = reject
    })
    const job: Job = { worker, inFlight: 0, waiting: [], done, fail }
    this.jobs.set(id, job)
    worker.postMessage(["begin", id])
    const sha1 = createHash("sha1")
    const sha256 = createHash("sha256")
    const blake2b = createHash("blake2b512")
    let failed: Error | undefined
    /** No more blocks: a `send` waiting for room fails instead of waiting forever. */
    const stop = (error: Error) => {
      failed ??= error
      for (const wake of job.waiting.splice(0)) wake()
    }
    // Read by `digest`, or not at all when the body fails.
    result.catch(stop)
    return {
      update: (block, length) => {
        const bytes = block.subarray(0, length)
        sha1.update(bytes)
        sha256.update(bytes)
        blake2b.update(bytes)
      },
      send: async (block, length) => {
        while (job.inFlight >= MAX_IN_FLIGHT && failed === undefined)
          await new Promise<void>((wake) => job.waiting.push(wake))
        if (failed !== undefined) throw failed
        job.inFlight++
        const buffer = block.buffer as ArrayBuffer
        worker.postMessage(["data", id, buffer, length], [buffer])
      },
      digest: async () => {
        worker.postMessage(["end", id])
        const { md5, sha512 } = await result
        return { md5, sha1: sha1.digest("hex"), sha256: sha256.digest("hex"), sha512, blake2b: blake2b.digest("hex") }
      },
      drop: () => {
        stop(new Error("the body was given up"))
        if (!this.jobs.has(id)) return
        this.finished(id)
        worker.postMessage(["drop", id])
      }
    }
  }

  async close(): Promise<void> {
    clearTimeout(this.idle)
    const worker = this.worker
    this.worker = undefined
    this.free.length = 0
    if (worker !== undefined) await worker.terminate()
  }
}

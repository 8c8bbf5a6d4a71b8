// The digests Forgejo records for every stored blob (`package_blob`: hash_md5, hash_sha1,
// hash_sha256, hash_sha512, hash_blake2b — BLAKE2b-512).
//
// Only sha256 is computed while a body streams in: it names the blob and deduplicates it, and it
// is cheap (the CPU's SHA instructions). The four others cost about 6 s of CPU per GiB together,
// several times what receiving and writing the bytes cost, so they are computed from the stored
// file once the upload is answered (src/storage/Local.ts), on a worker thread that reads the file
// itself: the main thread neither hashes nor copies those bytes.
import { createHash } from "node:crypto"
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

/** The digests computed after the upload, by their Digests name, and Node's algorithm for each. */
export const LATER = { md5: "md5", sha1: "sha1", sha512: "sha512", blake2b: "blake2b512" } as const
export type LaterDigest = keyof typeof LATER

/** A blob's name: 64 lower-case hex digits (anything else names no blob, and never a path). */
export const isSha256 = (value: string): boolean => /^[0-9a-f]{64}$/.test(value)

/** Hashes every chunk with the given digests (of LATER) on this thread. */
export class Hasher<K extends LaterDigest | "sha256"> {
  private readonly hashes: ReadonlyArray<readonly [K, ReturnType<typeof createHash>]>

  constructor(names: ReadonlyArray<K>) {
    this.hashes = names.map((name) => [name, createHash(name === "sha256" ? "sha256" : LATER[name as LaterDigest])])
  }

  update(chunk: Uint8Array): void {
    for (const [, hash] of this.hashes) hash.update(chunk)
  }

  digest(): Record<K, string> {
    return Object.fromEntries(this.hashes.map(([name, hash]) => [name, hash.digest("hex")])) as Record<K, string>
  }
}

/**
 * The worker thread's code: the digests of a file it reads itself. Plain CommonJS evaluated as is
 * (a .ts file would load the type stripper into the worker too: 38 MB of RSS instead of 21).
 * In: [id, path, [[name, algorithm], …]]. Out: [id, {name: hex, …}] or [id, null, message].
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads")
const { createHash } = require("node:crypto")
const { createReadStream } = require("node:fs")
parentPort.on("message", async ([id, path, algorithms]) => {
  try {
    const hashes = algorithms.map(([name, algorithm]) => [name, createHash(algorithm)])
    for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 }))
      for (const [, hash] of hashes) hash.update(chunk)
    parentPort.postMessage([id, Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest("hex")]))])
  } catch (error) {
    parentPort.postMessage([id, null, String(error && error.message || error)])
  }
})
`

/** An idle worker is stopped after this long (ms), so that a server storing nothing carries none. */
const WORKER_IDLE_MS = 60_000

/**
 * The digest worker thread: started on first use, one file at a time (what it is given waits in
 * its message queue), stopped after a minute without work and by `close` (it never keeps the
 * process alive). If it dies, the files it was given fail and the next one starts a new worker.
 */
export class FileDigester {
  private worker: Worker | undefined
  private readonly jobs = new Map<
    number,
    { readonly worker: Worker; readonly done: (r: Record<string, string>) => void; readonly fail: (e: Error) => void }
  >()
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

  private finished(id: number): void {
    this.jobs.delete(id)
    if (this.jobs.size > 0 || this.worker === undefined) return
    clearTimeout(this.idle)
    this.idle = setTimeout(() => {
      if (this.jobs.size > 0) return
      const worker = this.worker
      this.worker = undefined
      void worker?.terminate()
    }, this.idleMs)
    this.idle.unref()
  }

  private start(): Worker {
    clearTimeout(this.idle)
    if (this.worker !== undefined) return this.worker
    const worker = new Worker(WORKER_SOURCE, { eval: true, name: "hearth-digests" })
    worker.unref()
    worker.on("message", ([id, result, message]: readonly [number, Record<string, string> | null, string?]) => {
      const job = this.jobs.get(id)
      if (job === undefined) return
      this.finished(id)
      if (result === null) job.fail(new Error(message))
      else job.done(result)
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

  /** The digests `names` of the file at `path`. */
  digest<K extends LaterDigest>(path: string, names: ReadonlyArray<K>): Promise<Record<K, string>> {
    const worker = this.start()
    const id = this.nextId++
    return new Promise<Record<K, string>>((resolve, reject) => {
      this.jobs.set(id, { worker, done: resolve as (r: Record<string, string>) => void, fail: reject })
      worker.postMessage([id, path, names.map((name) => [name, LATER[name]])])
    })
  }

  async close(): Promise<void> {
    clearTimeout(this.idle)
    const worker = this.worker
    this.worker = undefined
    if (worker !== undefined) await worker.terminate()
  }
}

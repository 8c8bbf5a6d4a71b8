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
 * The worker thread's code: the digests of files it reads itself, one file at a time in the order
 * given. Plain CommonJS evaluated as is (a .ts file would load the type stripper into the worker
 * too: 38 MB of RSS instead of 21). A background worker lowers its own thread's priority (nice
 * 10, Linux's nice being per thread: the server's other threads keep theirs), so that it takes
 * about a tenth of a core the requests being served need, and still gets on when the machine is
 * busy (at 19 it would all but stop on a loaded machine). In: [id, path, [[name, algorithm], …]], or ["cancel", id]
 * for a file given earlier (no answer for it then). Out: [id, {name: hex, …}] or [id, null, message].
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads")
const { createHash } = require("node:crypto")
const { createReadStream } = require("node:fs")
if (workerData.background) {
  try { require("node:os").setPriority(10) } catch {}
}
const waiting = new Set()
const cancelled = new Set()
const run = async ([id, path, algorithms]) => {
  try {
    const hashes = algorithms.map(([name, algorithm]) => [name, createHash(algorithm)])
    if (!cancelled.has(id)) {
      for await (const chunk of createReadStream(path, { highWaterMark: 256 * 1024 })) {
        if (cancelled.has(id)) break
        for (const [, hash] of hashes) hash.update(chunk)
      }
    }
    if (!cancelled.has(id))
      parentPort.postMessage([id, Object.fromEntries(hashes.map(([name, hash]) => [name, hash.digest("hex")]))])
  } catch (error) {
    if (!cancelled.has(id)) parentPort.postMessage([id, null, String(error && error.message || error)])
  }
  waiting.delete(id)
  cancelled.delete(id)
}
let queue = Promise.resolve()
parentPort.on("message", (message) => {
  if (message[0] === "cancel") {
    if (waiting.has(message[1])) cancelled.add(message[1])
    return
  }
  waiting.add(message[0])
  queue = queue.then(() => run(message))
})
`

/** An idle worker is stopped after this long (ms), so that a server storing nothing carries none. */
const WORKER_IDLE_MS = 60_000

/** When a file's digests are wanted: by a reader waiting for them, or whenever the CPU is free. */
export type DigestPriority = "now" | "background"

interface Job {
  readonly priority: DigestPriority
  readonly worker: Worker
  readonly path: string
  readonly algorithms: ReadonlyArray<readonly [string, string]>
  readonly done: (r: Record<string, string>) => void
  readonly fail: (e: Error) => void
}

/**
 * The digest worker threads: one for files a reader waits for, one at a low priority for
 * those computed after an upload's answer (so that they do not slow the requests that follow it:
 * the rest of a `skopeo copy`, the download of what was just uploaded). Each is started on first
 * use, stopped after a minute without work and by `close` (neither keeps the process alive). If
 * one dies, the files it was given fail and the next one starts a new worker. `hurry` moves a
 * file from the background to the other worker once a reader waits for it.
 */
export class FileDigester {
  private readonly workers: Partial<Record<DigestPriority, Worker>> = {}
  private readonly idle: Partial<Record<DigestPriority, ReturnType<typeof setTimeout>>> = {}
  private readonly jobs = new Map<number, Job>()
  private nextId = 1
  private readonly idleMs: number

  constructor(options: { readonly idleMs?: number } = {}) {
    this.idleMs = options.idleMs ?? WORKER_IDLE_MS
  }

  /** Whether a worker thread is running (of that priority). */
  get running(): boolean {
    return this.workers.now !== undefined || this.workers.background !== undefined
  }
  runningFor(priority: DigestPriority): boolean {
    return this.workers[priority] !== undefined
  }

  private finished(id: number): void {
    const job = this.jobs.get(id)
    this.jobs.delete(id)
    if (job === undefined) return
    const priority = job.priority
    if ([...this.jobs.values()].some((j) => j.priority === priority) || this.workers[priority] === undefined) return
    clearTimeout(this.idle[priority])
    const timer = setTimeout(() => {
      if ([...this.jobs.values()].some((j) => j.priority === priority)) return
      const worker = this.workers[priority]
      delete this.workers[priority]
      void worker?.terminate()
    }, this.idleMs)
    timer.unref()
    this.idle[priority] = timer
  }

  private start(priority: DigestPriority): Worker {
    clearTimeout(this.idle[priority])
    const running = this.workers[priority]
    if (running !== undefined) return running
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      // Thread names as /proc shows them (15 characters at most).
      name: priority === "now" ? "hearth-digests" : "hearth-bgdigest",
      workerData: { background: priority === "background" }
    })
    worker.unref()
    worker.on("message", ([id, result, message]: readonly [number, Record<string, string> | null, string?]) => {
      const job = this.jobs.get(id)
      if (job === undefined) return
      this.finished(id)
      if (result === null) job.fail(new Error(message))
      else job.done(result)
    })
    const failAll = (error: Error) => {
      if (this.workers[priority] === worker) delete this.workers[priority]
      for (const [id, job] of this.jobs) {
        if (job.worker !== worker) continue
        this.jobs.delete(id)
        job.fail(error)
      }
    }
    worker.on("error", failAll)
    worker.on("exit", (code) => failAll(new Error(`the digest worker thread exited (${code})`)))
    this.workers[priority] = worker
    return worker
  }

  private post(job: Omit<Job, "worker">): void {
    const worker = this.start(job.priority)
    const id = this.nextId++
    this.jobs.set(id, { ...job, worker })
    worker.postMessage([id, job.path, job.algorithms])
  }

  /** The digests `names` of the file at `path`. */
  digest<K extends LaterDigest>(
    path: string,
    names: ReadonlyArray<K>,
    priority: DigestPriority = "now"
  ): Promise<Record<K, string>> {
    return new Promise<Record<K, string>>((resolve, reject) => {
      this.post({
        priority,
        path,
        algorithms: names.map((name) => [name, LATER[name]] as const),
        done: resolve as (r: Record<string, string>) => void,
        fail: reject
      })
    })
  }

  /** A file given with the background priority that a reader now waits for: computed at once. */
  hurry(path: string): void {
    for (const [id, job] of this.jobs) {
      if (job.priority !== "background" || job.path !== path) continue
      this.finished(id)
      job.worker.postMessage(["cancel", id])
      this.post({ ...job, priority: "now" })
    }
  }

  async close(): Promise<void> {
    for (const priority of ["now", "background"] as const) {
      clearTimeout(this.idle[priority])
      const worker = this.workers[priority]
      delete this.workers[priority]
      if (worker !== undefined) await worker.terminate()
    }
  }
}

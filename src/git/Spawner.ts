// Git's run-to-completion processes, started by a small process of Hearth's own instead of the
// server. Starting a process copies the starter's page tables, and Node does it on its event loop:
// from the server a spawn holds every request for a time that grows with its resident memory
// (measured on this project's machine: 1 ms at 53 MB, 12 ms at 317 MB, 53 ms at 1.1 GB). The
// spawner is ~45 MB and has nothing else to do: its spawns take ~1 ms of its own loop, none of
// the server's. Only what `Git.run` starts goes through it (a request in, the outputs back in one
// message); the streaming processes (smart HTTP, SSH, `cat-file --batch`, `update-ref --stdin`)
// still start in the server, one per clone, push or long-lived reader.
//
// This module runs in both processes: `SpawnerMain.ts` is the spawner's entry, and it is loaded
// from the sources also when the server runs from the bundle. So it imports only `node:` modules.

import { type ChildProcess, fork, spawn } from "node:child_process"
import { setPriority } from "node:os"

/** One git process to run to its end. */
export interface ProcessRequest {
  readonly args: ReadonlyArray<string>
  readonly cwd?: string | undefined
  readonly env: NodeJS.ProcessEnv
  readonly input?: string | Uint8Array | undefined
  /** Standard output kept at most (bytes): past it git is stopped and `truncated` set. */
  readonly maxOutput?: number | undefined
  /** Raised niceness (0: the spawner's own, which is the server's). */
  readonly niceness: number
}

export interface ProcessOutcome {
  readonly stdout: Buffer
  readonly stderr: Buffer
  /** The exit code; null when git was stopped by a signal or did not start. */
  readonly code: number | null
  readonly truncated: boolean
  /** Why git did not start (or the spawner stopped under it). */
  readonly error?: string | undefined
}

/** Runs `request` from this process; `signal` stops git. */
export const runHere = (request: ProcessRequest, signal?: AbortSignal): Promise<ProcessOutcome> =>
  new Promise((resolve) => {
    const child = spawn("git", request.args as Array<string>, {
      cwd: request.cwd,
      env: request.env,
      stdio: ["pipe", "pipe", "pipe"],
      signal
    })
    if (request.niceness > 0 && child.pid !== undefined) {
      try {
        setPriority(child.pid, request.niceness)
      } catch {
        // Already gone, or not allowed: it runs at the starter's priority.
      }
    }
    const stdout: Array<Buffer> = []
    const stderr: Array<Buffer> = []
    const max = request.maxOutput ?? Number.POSITIVE_INFINITY
    let received = 0
    let truncated = false
    let error: string | undefined
    child.stdout.on("data", (chunk: Buffer) => {
      if (truncated) return
      received += chunk.length
      stdout.push(received > max ? chunk.subarray(0, chunk.length - (received - max)) : chunk)
      if (received > max) {
        truncated = true
        child.kill()
      }
    })
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk))
    child.on("error", (e) => {
      error = String(e)
    })
    child.on("close", (code) =>
      resolve({ stdout: Buffer.concat(stdout), stderr: Buffer.concat(stderr), code, truncated, error })
    )
    child.stdin.on("error", () => {}) // git may exit before reading all input
    child.stdin.end(request.input)
  })

type ToSpawner = { readonly run: number; readonly request: ProcessRequest } | { readonly stop: number }

type FromSpawner = { readonly ready: true } | { readonly done: number; readonly outcome: ProcessOutcome }

/** The spawner's side: runs what the server sends until the server goes. */
export const serve = (): void => {
  const running = new Map<number, AbortController>()
  process.on("message", (message: ToSpawner) => {
    if ("stop" in message) return running.get(message.stop)?.abort()
    const stopper = new AbortController()
    running.set(message.run, stopper)
    void runHere(message.request, stopper.signal).then((outcome) => {
      running.delete(message.run)
      process.send?.({ done: message.run, outcome } satisfies FromSpawner)
    })
  })
  process.send?.({ ready: true } satisfies FromSpawner)
  // The server ended (or closed the channel): its processes with it.
  process.on("disconnect", () => {
    for (const stopper of running.values()) stopper.abort()
    process.exit(0)
  })
}

interface Pending {
  readonly request: ProcessRequest
  readonly signal: AbortSignal | undefined
  readonly resolve: (outcome: ProcessOutcome) => void
}

/**
 * The server's side: one spawner, started at the first run and again after it stops (killed,
 * say); when it cannot start at all, git starts from the server as before.
 */
export class Spawner {
  private child: ChildProcess | undefined
  private failed = false
  private nextId = 1
  private readonly pending = new Map<number, Pending>()
  private readonly entry: string

  constructor(entry: string) {
    this.entry = entry
  }

  /** The spawner's process id (starting it), or undefined when it cannot run. */
  pid(): number | undefined {
    return this.start()?.pid
  }

  run(request: ProcessRequest, signal?: AbortSignal): Promise<ProcessOutcome> {
    const child = this.start()
    if (child === undefined) return runHere(request, signal)
    const id = this.nextId++
    return new Promise<ProcessOutcome>((resolve) => {
      this.pending.set(id, { request, signal, resolve })
      // Only while something runs does the channel keep the server's event loop alive (a CLI
      // command that ran git must still exit).
      if (this.pending.size === 1) child.channel?.ref()
      child.send({ run: id, request } satisfies ToSpawner)
      signal?.addEventListener("abort", () => child.connected && child.send({ stop: id } satisfies ToSpawner), {
        once: true
      })
    })
  }

  private settle(id: number, outcome: ProcessOutcome) {
    const pending = this.pending.get(id)
    if (pending === undefined) return
    this.pending.delete(id)
    if (this.pending.size === 0) this.child?.channel?.unref()
    pending.resolve(outcome)
  }

  private start(): ChildProcess | undefined {
    if (this.child !== undefined || this.failed) return this.child
    let child: ChildProcess
    try {
      child = fork(this.entry, [], {
        serialization: "advanced", // Buffers cross as bytes, not as JSON arrays
        stdio: ["ignore", "inherit", "inherit", "ipc"],
        execArgv: [] // not the server's flags (heap sizes, inspectors, loaders)
      })
    } catch {
      this.failed = true
      return undefined
    }
    child.unref()
    child.channel?.unref()
    let ready = false
    child.on("message", (message: FromSpawner) => {
      if ("ready" in message) ready = true
      else this.settle(message.done, message.outcome)
    })
    child.on("error", () => {}) // "exit" follows
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = undefined
      const stranded = [...this.pending.entries()]
      this.pending.clear()
      if (!ready) {
        // It never ran anything (it cannot start here): git starts from the server from now on.
        this.failed = true
        for (const [, p] of stranded) void runHere(p.request, p.signal).then(p.resolve)
        return
      }
      // Its git processes went with it: what they did is unknown, so they fail rather than run again.
      const error = `the process that starts git for Hearth stopped (${signal ?? `exit ${code}`})`
      for (const [, p] of stranded)
        p.resolve({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), code: null, truncated: false, error })
    })
    this.child = child
    return child
  }
}

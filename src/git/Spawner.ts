// Git's run-to-completion processes, started by a small process of Hearth's own instead of the
// server. Starting a process copies the starter's page tables, and Node does it on its event loop:
// from the server a spawn holds every request for a time that grows with its resident memory
// (measured on this project's machine: 1 ms at 53 MB, 12 ms at 317 MB, 53 ms at 1.1 GB). The
// spawner is ~45 MB and has nothing else to do: its spawns take ~1 ms of its own loop, none of
// the server's. What `Git.run` starts goes through it as a request in and the outputs back in one
// message. A streaming process (`Git.spawnStream`: smart HTTP, SSH, archives, diffs, the long-lived
// `cat-file --batch` readers and `update-ref --stdin` transactions) gets its standard input, output
// and error as Unix sockets the spawner connects to the server and hands to git: the bytes go
// between git and the server directly, the spawner only starts and stops it.
//
// This module runs in both processes: `SpawnerMain.ts` is the spawner's entry, and it is loaded
// from the sources also when the server runs from the bundle. So it imports only `node:` modules.

import { type ChildProcess, type ChildProcessWithoutNullStreams, fork, spawn } from "node:child_process"
import { randomBytes } from "node:crypto"
import { EventEmitter } from "node:events"
import { mkdtempSync, rmSync } from "node:fs"
import { connect, createServer, type Server, type Socket } from "node:net"
import { setPriority, tmpdir } from "node:os"
import { join } from "node:path"
import { type Readable, Writable } from "node:stream"

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

/** One git process whose input and output stream (the request is the process's, not a buffer). */
export interface StreamRequest {
  readonly args: ReadonlyArray<string>
  readonly cwd?: string | undefined
  readonly env: NodeJS.ProcessEnv
  /** Whether git reads standard input (otherwise it gets none, as `stdio: "ignore"`). */
  readonly stdin: boolean
}

/** What the streaming callers use of a child process; a started-here `ChildProcess` is one too. */
export interface GitChild {
  readonly stdin: Writable
  readonly stdout: Readable
  readonly stderr: Readable
  readonly exitCode: number | null
  kill(signal?: NodeJS.Signals): boolean
  on(event: "error", listener: (error: Error) => void): this
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this
}

/** Starts `request` from this process: the child once it runs, or why it could not start. */
export const spawnHere = (request: StreamRequest): Promise<GitChild> =>
  new Promise((resolve, reject) => {
    const child = spawn("git", request.args as Array<string>, {
      cwd: request.cwd,
      env: request.env,
      stdio: [request.stdin ? "pipe" : "ignore", "pipe", "pipe"]
    })
    child.once("error", reject)
    child.once("spawn", () => {
      child.off("error", reject)
      resolve(child as ChildProcessWithoutNullStreams)
    })
  })

/** What a run stopped before git started answers (`spawn`'s `error` event for an aborted signal). */
const abortedOutcome = (): ProcessOutcome => ({
  stdout: Buffer.alloc(0),
  stderr: Buffer.alloc(0),
  code: null,
  truncated: false,
  error: "AbortError: The operation was aborted"
})

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

type ToSpawner =
  | { readonly run: number; readonly request: ProcessRequest }
  | { readonly stop: number }
  | { readonly stream: string; readonly request: StreamRequest; readonly socket: string }
  | { readonly stopStream: string; readonly signal: NodeJS.Signals }

type FromSpawner =
  | { readonly ready: true }
  | { readonly done: number; readonly outcome: ProcessOutcome }
  | { readonly spawned: string }
  | { readonly unstarted: string; readonly error: string }
  | { readonly exited: string; readonly code: number | null; readonly signal: NodeJS.Signals | null }

/** Which of git's standard streams a connection to the server's socket is, after its token. */
const STREAM_KINDS = ["i", "o", "e"] as const
/** A stream's token: 32 hex characters, then its kind. */
const TOKEN_LENGTH = 33

/** The spawner's side: runs what the server sends until the server goes. */
export const serve = (): void => {
  const running = new Map<number, AbortController>()
  const streaming = new Map<string, ChildProcess>()
  process.on("message", (message: ToSpawner) => {
    if ("stop" in message) return running.get(message.stop)?.abort()
    if ("stopStream" in message) return streaming.get(message.stopStream)?.kill(message.signal)
    if ("stream" in message) return startStream(message.stream, message.request, message.socket, streaming)
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
    for (const child of streaming.values()) child.kill()
    process.exit(0)
  })
}

interface Pending {
  readonly request: ProcessRequest
  readonly signal: AbortSignal | undefined
  readonly resolve: (outcome: ProcessOutcome) => void
}

/**
 * Connects one socket per standard stream to the server (each says its token and kind first),
 * starts git on them and closes the spawner's own ends at once: from then on the sockets are
 * git's and the server's. The server writes nothing before `spawned`, so nothing meant for git
 * is read here.
 */
const startStream = (token: string, request: StreamRequest, path: string, streaming: Map<string, ChildProcess>) => {
  const send = (message: FromSpawner) => process.send?.(message)
  const kinds = request.stdin ? STREAM_KINDS : STREAM_KINDS.slice(1)
  const opened = kinds.map(
    (kind) =>
      new Promise<Socket>((resolve, reject) => {
        const socket = connect(path)
        socket.once("error", reject)
        socket.once("connect", () => socket.write(`${token}${kind}`, () => resolve(socket)))
      })
  )
  void Promise.all(opened).then(
    (sockets) => {
      const [input, output, error] = request.stdin ? sockets : [undefined, ...sockets]
      let child: ChildProcess
      try {
        child = spawn("git", request.args as Array<string>, {
          cwd: request.cwd,
          env: request.env,
          stdio: [input ?? "ignore", output!, error!]
        })
      } catch (e) {
        for (const socket of sockets) socket.destroy()
        return send({ unstarted: token, error: String(e) })
      }
      for (const socket of sockets) socket.destroy()
      // Not started (a missing directory): Node says why in an "error" to come.
      if (child.pid === undefined) return void child.once("error", (e) => send({ unstarted: token, error: String(e) }))
      streaming.set(token, child)
      child.on("exit", (code, signal) => {
        streaming.delete(token)
        send({ exited: token, code, signal })
      })
      send({ spawned: token })
    },
    (e) => {
      for (const socket of opened)
        void socket.then(
          (s) => s.destroy(),
          () => {}
        )
      send({ unstarted: token, error: `could not connect to the server: ${e}` })
    }
  )
}

/** A git process the spawner started, seen from the server: its three sockets and its exit (exported for its test). */
export class RemoteChild extends EventEmitter implements GitChild {
  readonly stdin: Writable
  readonly stdout: Readable
  readonly stderr: Readable
  exitCode: number | null = null
  private exited = false
  private openOutputs = 2
  private readonly stop: (signal: NodeJS.Signals) => void

  constructor(sockets: Sockets, stop: (signal: NodeJS.Signals) => void) {
    super()
    this.stop = stop
    this.stdout = sockets.o
    this.stderr = sockets.e
    // Without a standard input (`stdin: false`) writes go nowhere, as to an ignored one.
    this.stdin = sockets.i ?? new Writable({ write: (_chunk, _encoding, done) => done() })
    // git's input socket: nothing comes back on it, but its end must be read to close.
    sockets.i?.resume()
    for (const output of [sockets.o, sockets.e]) {
      // An output git left empty may have ended and closed already, while the stream waited for
      // its other sockets or for `spawned`: its "close" is gone, so it is counted here.
      if (output.closed) this.outputClosed()
      else output.once("close", () => this.outputClosed())
    }
  }

  kill(signal: NodeJS.Signals = "SIGTERM"): boolean {
    if (this.exited) return false
    this.stop(signal)
    return true
  }

  exit(code: number | null, signal: NodeJS.Signals | null) {
    this.exited = true
    this.exitCode = code
    this.emit("exit", code, signal)
    this.closeWhenDone = () => this.emit("close", code, signal)
    if (this.openOutputs === 0) this.closeWhenDone()
  }

  private closeWhenDone: (() => void) | undefined

  private outputClosed() {
    this.openOutputs -= 1
    if (this.openOutputs === 0) this.closeWhenDone?.()
  }
}

type Sockets = { i?: Socket | undefined; o: Socket; e: Socket }

interface Starting {
  readonly request: StreamRequest
  readonly sockets: Partial<Sockets>
  spawned: boolean
  /** Its exit, when that came before all of its sockets did. */
  exit?: { readonly code: number | null; readonly signal: NodeJS.Signals | null }
  readonly resolve: (child: GitChild) => void
  readonly reject: (error: Error) => void
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
  private readonly starting = new Map<string, Starting>()
  private readonly streams = new Map<string, RemoteChild>()
  /** Runs and streams in flight: only while there are any does the channel hold the event loop. */
  private busy = 0
  private listening: Promise<string> | undefined
  private readonly entry: string

  constructor(entry: string) {
    this.entry = entry
  }

  /** The spawner's process id (starting it), or undefined when it cannot run. */
  pid(): number | undefined {
    return this.start()?.pid
  }

  run(request: ProcessRequest, signal?: AbortSignal): Promise<ProcessOutcome> {
    // Stopped before it started: no git, as `spawn` does with a signal already aborted.
    if (signal?.aborted === true) return Promise.resolve(abortedOutcome())
    const child = this.start()
    if (child === undefined) return runHere(request, signal)
    const id = this.nextId++
    return new Promise<ProcessOutcome>((resolve) => {
      this.pending.set(id, { request, signal, resolve })
      this.hold()
      child.send({ run: id, request } satisfies ToSpawner)
      signal?.addEventListener("abort", () => child.connected && child.send({ stop: id } satisfies ToSpawner), {
        once: true
      })
    })
  }

  /**
   * Starts a streaming git process (from this process when the spawner cannot run): the child
   * once git runs, or why it could not start.
   */
  async stream(request: StreamRequest): Promise<GitChild> {
    const child = this.start()
    if (child === undefined) return spawnHere(request)
    const socket = await this.listen()
    if (this.child !== child) return spawnHere(request) // it stopped meanwhile
    const token = randomBytes(16).toString("hex")
    return new Promise<GitChild>((resolve, reject) => {
      this.starting.set(token, { request, sockets: {}, spawned: false, resolve, reject })
      this.hold()
      child.send({ stream: token, request, socket } satisfies ToSpawner)
    })
  }

  private hold() {
    if (this.busy++ === 0) this.child?.channel?.ref()
  }

  private release() {
    if (--this.busy === 0) this.child?.channel?.unref()
  }

  private settle(id: number, outcome: ProcessOutcome) {
    const pending = this.pending.get(id)
    if (pending === undefined) return
    this.pending.delete(id)
    this.release()
    pending.resolve(outcome)
  }

  /**
   * The Unix socket the spawner connects git's streams to, in a directory only this user can
   * enter; a connection names its stream with a token nobody else has seen.
   */
  private listen(): Promise<string> {
    this.listening ??= new Promise((resolve, reject) => {
      const dir = mkdtempSync(join(tmpdir(), "hearth-git-"))
      process.once("exit", () => rmSync(dir, { recursive: true, force: true }))
      const path = join(dir, "streams")
      const server: Server = createServer((socket) => this.identify(socket))
      server.once("error", reject)
      server.listen(path, () => resolve(path))
      server.unref()
    })
    return this.listening
  }

  /** Reads a connection's token and kind, then gives it to its stream. */
  private identify(socket: Socket) {
    socket.setTimeout(10_000, () => socket.destroy())
    socket.on("error", () => {}) // its stream's user listens too, once it has it
    const onReadable = () => {
      const head: Buffer | null = socket.read(TOKEN_LENGTH)
      if (head === null) return
      socket.off("readable", onReadable)
      socket.setTimeout(0)
      const text = head.toString("latin1")
      const starting = this.starting.get(text.slice(0, -1))
      const kind = text.at(-1) as (typeof STREAM_KINDS)[number]
      if (starting === undefined || !STREAM_KINDS.includes(kind) || starting.sockets[kind] !== undefined)
        return socket.destroy()
      starting.sockets[kind] = socket
      this.started(text.slice(0, -1))
    }
    socket.on("readable", onReadable)
  }

  /** A stream is ready once git runs and all of its sockets are here. */
  private started(token: string) {
    const starting = this.starting.get(token)
    if (starting === undefined || !starting.spawned) return
    const { i, o, e } = starting.sockets
    if (o === undefined || e === undefined || (starting.request.stdin && i === undefined)) return
    this.starting.delete(token)
    const child = this.child
    const remote = new RemoteChild({ i, o, e }, (signal) => {
      if (child?.connected === true) child.send({ stopStream: token, signal } satisfies ToSpawner)
    })
    this.streams.set(token, remote)
    starting.resolve(remote)
    if (starting.exit !== undefined) this.exited(token, starting.exit.code, starting.exit.signal)
  }

  /** git did not start there (`error`: why), or the spawner stopped first (it starts here then). */
  private unstarted(token: string, error?: string) {
    const starting = this.starting.get(token)
    if (starting === undefined) return
    this.starting.delete(token)
    this.release()
    for (const socket of Object.values(starting.sockets)) socket?.destroy()
    if (error !== undefined) starting.reject(new Error(error))
    else spawnHere(starting.request).then(starting.resolve, starting.reject)
  }

  private exited(token: string, code: number | null, signal: NodeJS.Signals | null) {
    const remote = this.streams.get(token)
    const starting = this.starting.get(token)
    if (remote === undefined && starting !== undefined) starting.exit = { code, signal }
    if (remote === undefined) return
    this.streams.delete(token)
    this.release()
    remote.exit(code, signal)
  }

  private received(message: FromSpawner) {
    if ("done" in message) return this.settle(message.done, message.outcome)
    if ("unstarted" in message) return this.unstarted(message.unstarted, message.error)
    if ("exited" in message) return this.exited(message.exited, message.code, message.signal)
    if ("spawned" in message) {
      const starting = this.starting.get(message.spawned)
      if (starting === undefined) return
      starting.spawned = true
      this.started(message.spawned)
    }
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
      else this.received(message)
    })
    child.on("error", () => {}) // "exit" follows
    child.on("exit", (code, signal) => this.stopped(child, ready, `${signal ?? `exit ${code}`}`))
    // Its channel closes first: with nothing else to do, the server would not wait for "exit".
    child.on("disconnect", () => this.stopped(child, ready, "its channel closed"))
    this.child = child
    return child
  }

  /** The spawner ended under what it was doing. */
  private stopped(child: ChildProcess, ready: boolean, how: string) {
    if (this.child !== child) return
    this.child = undefined
    const stranded = [...this.pending.values()]
    const starting = [...this.starting.keys()]
    const streams = [...this.streams.keys()]
    this.pending.clear()
    // Not started yet: started here instead.
    for (const token of starting) this.unstarted(token)
    // Running: git goes on (its sockets are the server's), but its exit code is lost.
    for (const token of streams) this.exited(token, null, null)
    this.busy = 0
    if (!ready) {
      // It never ran anything (it cannot start here): git starts from the server from now on.
      this.failed = true
      for (const p of stranded) void runHere(p.request, p.signal).then(p.resolve)
      return
    }
    // Its git processes went with it: what they did is unknown, so they fail rather than run again.
    const error = `the process that starts git for Hearth stopped (${how})`
    for (const p of stranded)
      p.resolve({ stdout: Buffer.alloc(0), stderr: Buffer.alloc(0), code: null, truncated: false, error })
  }
}

// `Git.run` starts git from a small process of its own (src/git/Spawner.ts), not from the server:
// a spawn from the server holds its event loop for a time that grows with its memory. What a run
// answers is what it answered when the server started git itself: output, input, exit codes,
// `answerCodes`, `maxOutput`, a git that cannot start; an interrupted run stops its git; a
// spawner that dies fails the runs it had and the next run starts another. A streaming git
// (`Git.spawnStream`: clones, pushes, archives) starts there too, its standard streams sockets
// between it and this process: input, output and error apart, its exit code, `kill`.

import { once } from "node:events"
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs"
import { connect, createServer, type Socket } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Readable } from "node:stream"
import { Effect, Exit } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as Git from "../src/git/Git.ts"
import { type GitChild, RemoteChild, Spawner } from "../src/git/Spawner.ts"

let work: string

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), "hearth-spawner-"))
})
afterAll(() => rmSync(work, { recursive: true, force: true }))

const run = (args: ReadonlyArray<string>, options?: Git.RunOptions) => Effect.runPromise(Git.run(args, options))
const exitOf = (args: ReadonlyArray<string>, options?: Git.RunOptions) =>
  Effect.runPromise(Effect.exit(Git.run(args, options)))

/** git's parent process id, as git's own child (a shell alias) reads it from /proc. */
const gitsParent = async () =>
  Number((await run(["-c", "alias.parent=!awk '/^PPid/{print $2}' /proc/$PPID/status", "parent"])).stdout)

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

const until = async (what: () => boolean, ms = 5000) => {
  const end = Date.now() + ms
  while (!what() && Date.now() < end) await new Promise((r) => setTimeout(r, 20))
  return what()
}

describe("git's processes", () => {
  it("start from the spawner, not from this process", async () => {
    const spawner = Git.spawnerPid()
    expect(spawner).not.toBe(process.pid)
    expect(await gitsParent()).toBe(spawner)
  })

  it("answer as before: output, input, exit codes, answerCodes, maxOutput, a git that cannot start", async () => {
    expect((await run(["hash-object", "--stdin"], { input: "hello\n" })).stdout.toString()).toBe(
      "ce013625030ba8dba906f756967f9e9ca394464a\n"
    )
    const bytes = Uint8Array.from([0, 1, 2, 255])
    const blob = (await run(["hash-object", "--stdin"], { input: bytes })).stdout.toString().trim()
    expect(blob).toMatch(/^[0-9a-f]{40}$/)

    const failed = await exitOf(["rev-parse", "--verify", "no-such-thing"], { cwd: work })
    expect(Exit.isFailure(failed)).toBe(true)
    const error = Exit.isFailure(failed) ? failed.cause.toString() : ""
    expect(error).toContain("GitError")
    expect(error).toContain("not a git repository")

    // A non-zero code the caller expects is an answer, with what git printed.
    const answered = await run(["-c", "alias.seven=!echo out; echo err >&2; exit 7", "seven"], { answerCodes: [7] })
    expect(answered.exitCode).toBe(7)
    expect(answered.stdout.toString()).toBe("out\n")
    expect(answered.stderr).toBe("err\n")

    const cut = await run(["help", "-a"], { maxOutput: 10 })
    expect(cut.truncated).toBe(true)
    expect(cut.stdout.length).toBe(10)

    // A large answer crosses whole.
    const big = await run(["-c", "alias.big=!head -c 5000000 /dev/zero", "big"])
    expect(big.stdout.length).toBe(5_000_000)

    const unstartable = await exitOf(["status"], { cwd: join(work, "missing") })
    expect(Exit.isFailure(unstartable) && unstartable.cause.toString()).toContain("ENOENT")
  })

  it("stop when the run is interrupted", async () => {
    const pidFile = join(work, "sleeper.pid")
    const sleeping = await Effect.runPromise(
      Effect.exit(
        Effect.timeout(Git.run(["-c", `alias.sleeper=!echo $$ > ${pidFile}; exec sleep 30`, "sleeper"]), "1500 millis")
      )
    )
    expect(Exit.isFailure(sleeping)).toBe(true)
    expect(existsSync(pidFile)).toBe(true)
    const pid = Number(readFileSync(pidFile, "utf8"))
    // git passes its stop on to the alias's process.
    expect(await until(() => !alive(pid))).toBe(true)
  })

  it("do not start git when stopped before they start, from the spawner or from this process", async () => {
    const marker = join(work, "ran-anyway")
    const request = { args: ["-c", `alias.mark=!touch ${marker}`, "mark"], env: Git.gitEnv(), niceness: 0 }
    const spawner = new Spawner(join(import.meta.dirname, "../src/git/SpawnerMain.ts"))
    const broken = new Spawner(join(work, "no-such-entry.ts"))
    try {
      for (const runner of [spawner, broken]) {
        const outcome = await runner.run(request, AbortSignal.abort())
        expect(outcome.code).toBeNull()
        expect(outcome.error).toContain("AbortError")
      }
      // And a run not stopped does run: the marker is this test's own.
      expect(existsSync(marker)).toBe(false)
      expect((await spawner.run(request)).code).toBe(0)
      expect(existsSync(marker)).toBe(true)
    } finally {
      const pid = spawner.pid()
      if (pid !== undefined) process.kill(pid, "SIGTERM")
    }
  })

  it("fail when the spawner dies under them, and the next run starts another", async () => {
    const first = Git.spawnerPid()
    const inFlight = exitOf(["-c", "alias.slow=!sleep 2", "slow"])
    await new Promise((r) => setTimeout(r, 200))
    process.kill(first, "SIGKILL")
    const lost = await inFlight
    expect(Exit.isFailure(lost) && lost.cause.toString()).toContain("stopped")
    expect(await gitsParent()).not.toBe(first)
    expect(Git.spawnerPid()).not.toBe(first)
    expect(await gitsParent()).toBe(Git.spawnerPid())
  })
})

/** Everything a streamed git writes, and how it ended. */
const finished = (child: GitChild) =>
  new Promise<{ out: Buffer; err: string; code: number | null; signal: string | null; error: string | undefined }>(
    (resolve) => {
      const out: Array<Buffer> = []
      const err: Array<Buffer> = []
      let error: string | undefined
      child.stdout.on("data", (c: Buffer) => out.push(c))
      child.stderr.on("data", (c: Buffer) => err.push(c))
      child.on("error", (e) => {
        error = e.message
      })
      child.on("close", (code, signal) =>
        resolve({ out: Buffer.concat(out), err: Buffer.concat(err).toString(), code, signal, error })
      )
    }
  )

const stream = (args: ReadonlyArray<string>, options?: Git.StreamOptions) =>
  Effect.runPromise(Git.spawnStream(args, options))

describe("a spawner that cannot start", () => {
  it("leaves git to start from the server, for the runs waiting and those after", async () => {
    const broken = new Spawner(join(work, "no-such-entry.ts"))
    const request = { args: ["hash-object", "--stdin"], env: Git.gitEnv(), input: "hello\n", niceness: 0 }
    const waiting = await Promise.all([broken.run(request), broken.run(request)])
    for (const outcome of waiting) expect(outcome.stdout.toString()).toBe("ce013625030ba8dba906f756967f9e9ca394464a\n")
    expect(broken.pid()).toBeUndefined()
    const after = await broken.run(request)
    expect(after.code).toBe(0)
    const streamed = await broken.stream({ args: ["--version"], env: Git.gitEnv(), stdin: false })
    expect((await finished(streamed)).out.toString()).toContain("git version")
  })
})

describe("a streaming git", () => {
  it("starts from the spawner, its input, output and error apart, with its exit code", async () => {
    const parent = await stream(["-c", "alias.parent=!awk '/^PPid/{print $2}' /proc/$PPID/status", "parent"])
    expect(Number((await finished(parent)).out)).toBe(Git.spawnerPid())

    // 8 MB through git and back (backpressure both ways), error apart, then exit 3.
    const sent = Buffer.alloc(8_000_000, "x")
    const child = await stream(["-c", "alias.echoes=!cat; echo done >&2; exit 3", "echoes"])
    const ended = finished(child)
    Readable.from([sent.subarray(0, 3_000_000), sent.subarray(3_000_000)]).pipe(child.stdin)
    const { out, err, code } = await ended
    expect(out.length).toBe(sent.length)
    expect(out.equals(sent)).toBe(true)
    expect(err).toBe("done\n")
    expect(code).toBe(3)
    expect(child.exitCode).toBe(3)
  })

  it("reads nothing when it has no input, and stops when killed", async () => {
    const none = await stream(["-c", "alias.reads=!wc -c", "reads"], { stdin: false })
    const read = await finished(none)
    expect(read.out.toString().trim()).toBe("0")
    expect(read.code).toBe(0)

    // git's own process is the one killed (the alias's sleep holds none of its streams, and is
    // stopped here after: git stops what it started only once it has noted it, a race).
    const pidFile = join(work, "streamed-sleeper.pid")
    const sleeper = await stream([
      "-c",
      `alias.sleeper=!echo $PPID $$ > ${pidFile}; exec sleep 30 >/dev/null 2>&1`,
      "sleeper"
    ])
    const ended = finished(sleeper)
    expect(await until(() => existsSync(pidFile) && readFileSync(pidFile, "utf8").endsWith("\n"))).toBe(true)
    const [git, sleep] = readFileSync(pidFile, "utf8").trim().split(" ").map(Number)
    expect(sleeper.kill("SIGTERM")).toBe(true)
    const { code, signal } = await ended
    expect(code).toBeNull()
    expect(signal).toBe("SIGTERM")
    expect(alive(git!)).toBe(false)
    if (alive(sleep!)) process.kill(sleep!)
  })

  it("that cannot start fails with git's reason", async () => {
    const failed = await Effect.runPromise(Effect.exit(Git.spawnStream(["status"], { cwd: join(work, "missing") })))
    expect(Exit.isFailure(failed) && failed.cause.toString()).toContain("ENOENT")
  })

  it("closes when an output git left empty had closed before the stream was handed over", async () => {
    // An archive hung this way now and then (CI, session 35): git wrote nothing on its error
    // stream and exited, that socket ended and closed while the stream waited for its others,
    // and the stream waited for a "close" that had already gone.
    const server = createServer()
    const path = join(work, "closed-outputs")
    await new Promise<void>((resolve) => server.listen(path, resolve))
    const closedSocket = async () => {
      const accepted = new Promise<Socket>((resolve) => server.once("connection", resolve))
      connect(path).end()
      const socket = await accepted
      socket.resume()
      await once(socket, "close")
      return socket
    }
    const o = await closedSocket()
    const e = await closedSocket()
    server.close()
    const child = new RemoteChild({ o, e }, () => {})
    const closed = new Promise((resolve) => child.once("close", resolve))
    child.exit(0, null)
    const hung = new Promise((resolve) => setTimeout(() => resolve("still open after 2 s"), 2000).unref())
    expect(await Promise.race([closed, hung])).toBe(0)
  })
})

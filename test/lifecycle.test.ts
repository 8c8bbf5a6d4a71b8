// `hearth serve` as a real process (node_modules/.bin/node <the run's bundle> serve): start-up, the
// data-dir lock, start-up failures, and graceful shutdown on SIGTERM.
import { spawn } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { get } from "node:http"
import { connect, createServer, type Server } from "node:net"
import { hostname, tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeNodeServer } from "../src/Server.ts"
import { VERSION } from "../src/version.ts"
import { freePort, freshPostgresDatabase } from "./support/hearth.ts"
import { type HearthProcess, killAll, sleep, spawnHearth, within } from "./support/spawn.ts"

type Hearth = HearthProcess
afterAll(killAll)

type Probe = { readonly status: number; readonly body: string } | { readonly error: string }

/** One GET on a fresh connection; a connection that gets no answer within 2 s counts as "hung". */
const probe = (port: number, path = "/api/v1/version"): Promise<Probe> =>
  new Promise((resolve) => {
    const req = get({ host: "127.0.0.1", port, path, agent: false, timeout: 2000 }, (res) => {
      let body = ""
      res.on("data", (c) => (body += c))
      res.on("end", () => resolve({ status: res.statusCode!, body }))
      res.on("error", (e) => resolve({ error: `response: ${e.message}` }))
    })
    req.on("timeout", () => {
      req.destroy()
      resolve({ error: "hung" })
    })
    req.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }))
  })

interface Hammered {
  readonly probes: ReadonlyArray<Probe>
  /** ms from spawn to the first 200 */
  readonly firstOk: number
}

/**
 * Requests from spawn time (4 loops, a new connection each, 5 ms apart) until 30 answers came
 * back or the process ended: every connection that was accepted must be answered by the app.
 */
const hammer = async (hearth: Hearth, started: number, timeoutMs = 60_000): Promise<Hammered> => {
  const probes: Array<Probe> = []
  let firstOk = -1
  let ended = false
  void hearth.exited.then(() => (ended = true))
  const answered = () => probes.filter((p) => "status" in p).length
  const loop = async () => {
    while (!ended && answered() < 30 && Date.now() - started < timeoutMs) {
      const result = await probe(hearth.port)
      probes.push(result)
      if ("status" in result && result.status === 200 && firstOk < 0) firstOk = Date.now() - started
      await sleep(5)
    }
  }
  await Promise.all([loop(), loop(), loop(), loop()])
  return { probes, firstOk }
}

const expectCleanStart = (result: Hammered, hearth: Hearth) => {
  const problems = result.probes.filter((p) => "error" in p && p.error !== "ECONNREFUSED")
  expect(problems, hearth.output().stderr).toEqual([])
  const answers = result.probes.filter((p): p is { status: number; body: string } => "status" in p)
  expect(answers.length).toBeGreaterThan(0)
  for (const answer of answers) {
    expect(answer.status).toBe(200)
    expect(JSON.parse(answer.body)).toEqual({ version: VERSION, Version: VERSION })
  }
}

/** A process's resident memory now (VmRSS) or at its peak so far (VmHWM), in MB. */
const rssMb = (pid: number, field: "VmRSS" | "VmHWM" = "VmRSS"): number => {
  const line =
    readFileSync(`/proc/${pid}/status`, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${field}:`)) ?? ""
  return Math.round(Number(/(\d+)/.exec(line)?.[1] ?? 0) / 1024)
}

const lockFile = (dir: string) => join(dir, "hearth.lock")

/** Pids of the initdb child processes (src/db/PgliteInitdb.ts) creating `<dir>/db`'s database. */
const initdbProcesses = (dir: string): Array<number> =>
  readdirSync("/proc")
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")
        return argv.some((arg) => arg.endsWith("PgliteInitdb.ts")) && argv.includes(join(dir, "db.initdb"))
      } catch {
        return false // gone meanwhile
      }
    })
    .map(Number)

/** Running (a zombie nobody has reaped yet counts as gone). */
const isRunning = (pid: number): boolean => {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return false
  }
}

const noStackTrace = (text: string) => expect(text).not.toMatch(/^\s+at /m)

describe("hearth serve on the embedded database", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-lifecycle-"))
  const env = { HEARTH__server__APP_DATA_PATH: dataDir }
  let first: Hearth
  let freshStart: Hammered
  let freshPeakMb: number
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  beforeAll(async () => {
    const started = Date.now()
    first = spawnHearth(env, ["serve"], await freePort())
    freshStart = await hammer(first, started)
    freshPeakMb = rssMb(first.pid, "VmHWM")
    console.log(
      `[lifecycle] fresh data dir: first 200 after ${freshStart.firstOk} ms, RSS ${rssMb(first.pid)} MB, ` +
        `peak ${freshPeakMb} MB, ${freshStart.probes.length} probes`
    )
  })

  it("starts on a fresh data dir, answers /api/v1/version, and answers no request before its routes are built", () => {
    expect(freshStart.firstOk).toBeGreaterThan(0)
    expectCleanStart(freshStart, first)
  })

  it("runs with a small young generation, no allocation-site pretenuring and WebAssembly by Liftoff only, in the process it was started as (no child)", () => {
    const argv = readFileSync(`/proc/${first.pid}/cmdline`, "utf8")
      .split("\0")
      .filter((arg) => arg !== "")
    expect(argv).toContain("--max-semi-space-size=8")
    expect(argv).toContain("--no-allocation-site-pretenuring")
    expect(argv).toContain("--liftoff-only")
    expect(argv.at(-1)).toBe("serve")
  })

  it("creates its database without ever holding what that takes (initdb runs in a child, no optimized WASM)", () => {
    // Measured: ≈ 245 MB; 600–620 MB with initdb in this process, 830 MB with V8's optimizing
    // compiler for the WASM (src/db/Pglite.ts, src/cli.ts).
    expect(freshPeakMb).toBeLessThan(400)
  })

  it("holds the data-dir lock with its pid", () => {
    const [pid, host] = readFileSync(lockFile(dataDir), "utf8").split("\n")
    expect(Number(pid)).toBe(first.pid)
    expect(host).toBe(hostname())
  })

  it("refuses a second process on the same data dir, fast, naming the holder's pid", async () => {
    const started = Date.now()
    const second = spawnHearth(env, ["serve"], await freePort())
    const { code } = await within(second.exited, 15_000, "second process exit")
    const { stderr } = second.output()
    expect(code).not.toBe(0)
    expect(stderr).toContain(`pid ${first.pid}`)
    expect(stderr).toContain(dataDir)
    expect(stderr.trim().split("\n")).toHaveLength(1)
    noStackTrace(stderr)
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(await probe(second.port)).toEqual({ error: "ECONNREFUSED" })
    // The first one is untouched: still serving, still holding its lock.
    expect(await probe(first.port)).toMatchObject({ status: 200 })
    expect(Number(readFileSync(lockFile(dataDir), "utf8").split("\n")[0])).toBe(first.pid)
  })

  it("on SIGTERM finishes an in-flight request, stops accepting, exits 0 and removes the lock", async () => {
    // A request whose headers are still arriving when the signal comes.
    const socket = connect(first.port, "127.0.0.1")
    await new Promise<void>((r) => socket.once("connect", () => r()))
    let response = ""
    socket.on("data", (c) => (response += c))
    const closed = new Promise<void>((r) => socket.once("close", () => r()))
    socket.write("GET /api/v1/version HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    await sleep(200)
    const signalled = Date.now()
    first.child.kill("SIGTERM")
    await sleep(500)
    expect(first.child.exitCode).toBeNull() // waiting for the open request
    expect(await probe(first.port)).toEqual({ error: "ECONNREFUSED" }) // no new connections
    socket.write("Accept: application/json\r\n\r\n")
    const completed = Date.now()
    // Answered, and the connection closed right after (not kept alive until its idle timeout).
    await within(closed, 2_000, "in-flight response and close")
    expect(response).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    expect(response).toContain(`"version":"${VERSION}"`)
    const { code, signal } = await within(first.exited, 5_000, "exit after SIGTERM")
    expect({ code, signal }).toEqual({ code: 0, signal: null })
    expect(Date.now() - completed).toBeLessThan(3_000)
    expect(Date.now() - signalled).toBeLessThan(9_000) // not the 10 s forced-close timeout
    expect(existsSync(lockFile(dataDir))).toBe(false)
    expect(first.output().stderr).toBe("")
  })

  it("restarts on the existing data dir (schema and data kept) and stops again cleanly", async () => {
    const started = Date.now()
    const again = spawnHearth(env, ["serve"], await freePort())
    const result = await hammer(again, started)
    console.log(`[lifecycle] existing data dir: first 200 after ${result.firstOk} ms, RSS ${rssMb(again.pid)} MB`)
    expectCleanStart(result, again)
    again.child.kill("SIGTERM")
    expect(await within(again.exited, 15_000, "exit")).toEqual({ code: 0, signal: null })
    expect(existsSync(lockFile(dataDir))).toBe(false)
  })

  it("keeps a heap setting the operator gave and still adds the other ones", async () => {
    const started = Date.now()
    const tuned = spawnHearth({ ...env, NODE_OPTIONS: "--max-semi-space-size=4" }, ["serve"], await freePort())
    expectCleanStart(await hammer(tuned, started), tuned)
    const argv = readFileSync(`/proc/${tuned.pid}/cmdline`, "utf8")
      .split("\0")
      .filter((arg) => arg !== "")
    expect(argv).toContain("--no-allocation-site-pretenuring")
    expect(argv).toContain("--liftoff-only")
    expect(argv).not.toContain("--max-semi-space-size=8")
    tuned.child.kill("SIGTERM")
    expect(await within(tuned.exited, 15_000, "exit")).toEqual({ code: 0, signal: null })
  })

  it("takes over a stale lock left by a process that no longer runs", async () => {
    const gone = spawn(process.execPath, ["-e", ""], { stdio: "ignore" })
    await new Promise((r) => gone.on("exit", r))
    writeFileSync(lockFile(dataDir), `${gone.pid}\n${hostname()}\n`)
    const started = Date.now()
    const next = spawnHearth(env, ["serve"], await freePort())
    const result = await hammer(next, started)
    expectCleanStart(result, next)
    expect(Number(readFileSync(lockFile(dataDir), "utf8").split("\n")[0])).toBe(next.pid)
    next.child.kill("SIGTERM")
    expect(await within(next.exited, 15_000, "exit")).toEqual({ code: 0, signal: null })
    expect(existsSync(lockFile(dataDir))).toBe(false)
  })

  it("reports a port already in use in one line (on the existing data dir)", async () => {
    const port = await freePort()
    const blocker = await new Promise<Server>((resolve) => {
      const server = createServer()
      server.listen(port, "127.0.0.1", () => resolve(server))
    })
    try {
      const hearth = spawnHearth(env, ["serve"], port)
      const { code } = await within(hearth.exited, 30_000, "exit")
      const { stderr } = hearth.output()
      expect(code).toBe(1)
      expect(stderr).toContain("cannot listen for HTTP")
      expect(stderr).toContain("EADDRINUSE")
      expect(stderr.trim().split("\n")).toHaveLength(1)
      expect(existsSync(lockFile(dataDir))).toBe(false)
    } finally {
      blocker.close()
    }
  })

  it("killed while creating its database, leaves no initdb running, and the next start creates the database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-lifecycle-killed-"))
    try {
      const killed = spawnHearth({ HEARTH__server__APP_DATA_PATH: dir }, ["serve"], await freePort())
      let initdb: number | undefined
      const deadline = Date.now() + 30_000
      while ((initdb = initdbProcesses(dir)[0]) === undefined && Date.now() < deadline) await sleep(10)
      expect(initdb, "no initdb child process seen").toBeDefined()
      killed.child.kill("SIGKILL")
      await within(killed.exited, 5_000, "exit after SIGKILL")
      // It notices at once (its stdin, held by the server, ends); initdb itself takes seconds.
      const gone = Date.now() + 2_000
      while (isRunning(initdb!) && Date.now() < gone) await sleep(50)
      expect(isRunning(initdb!)).toBe(false)
      const started = Date.now()
      const next = spawnHearth({ HEARTH__server__APP_DATA_PATH: dir }, ["serve"], await freePort())
      expectCleanStart(await hammer(next, started), next)
      expect(existsSync(join(dir, "db", "PG_VERSION"))).toBe(true)
      expect(existsSync(join(dir, "db.initdb"))).toBe(false)
      next.child.kill("SIGTERM")
      expect(await within(next.exited, 15_000, "exit")).toEqual({ code: 0, signal: null })
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })

  it("stops cleanly when SIGTERM arrives during start-up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hearth-lifecycle-early-"))
    try {
      const early = spawnHearth({ HEARTH__server__APP_DATA_PATH: dir }, ["serve"], await freePort())
      // Wait until the lock is taken (the database is being created), then stop it.
      const deadline = Date.now() + 15_000
      while (!existsSync(lockFile(dir)) && Date.now() < deadline) await sleep(10)
      early.child.kill("SIGTERM")
      const { code } = await within(early.exited, 20_000, "exit")
      expect(code).toBe(0)
      expect(existsSync(lockFile(dir))).toBe(false)
      noStackTrace(early.output().stderr)
    } finally {
      rmSync(dir, { recursive: true, force: true })
    }
  })
})

describe("the HTTP server's Node adapter", () => {
  it("answers a request that arrived before the app's handler was attached", async () => {
    const server = makeNodeServer()
    const port = await freePort()
    await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()))
    try {
      const pending = probe(port, "/early")
      await sleep(300) // the request has arrived; nothing handles it yet
      server.on("request", (req, res) => res.end(`handled ${req.url}`))
      expect(await pending).toEqual({ status: 200, body: "handled /early" })
      expect(await probe(port, "/later")).toEqual({ status: 200, body: "handled /later" })
    } finally {
      server.closeAllConnections()
      server.close()
    }
  })
})

describe("hearth serve start-up failures", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "hearth-lifecycle-bad-"))
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

  const cases: ReadonlyArray<readonly [string, Record<string, string>, string]> = [
    ["a port that is not a number", { HEARTH__server__HTTP_PORT: "abc" }, "[server] HTTP_PORT"],
    [
      "a boolean that is not one",
      { HEARTH__security__DISABLE_QUERY_AUTH_TOKEN: "maybe" },
      "[security] DISABLE_QUERY_AUTH_TOKEN"
    ],
    ["an unsupported database type", { HEARTH__database__DB_TYPE: "mysql" }, "[database] DB_TYPE"],
    [
      "an embedded shared_buffers that is no size",
      { HEARTH__database__EMBEDDED_SHARED_BUFFERS: "16" },
      "[database] EMBEDDED_SHARED_BUFFERS"
    ],
    ["a ROOT_URL that is not http(s)", { HEARTH__server__ROOT_URL: "ftp://x" }, "[server] ROOT_URL"],
    [
      "an unreachable PostgreSQL",
      { HEARTH__database__DB_TYPE: "postgres", HEARTH__database__HOST: "127.0.0.1:1" },
      "database"
    ]
  ]

  it.each(cases)("%s: exits non-zero with one line naming it, no stack trace", async (_name, bad, key) => {
    const hearth = spawnHearth({ HEARTH__server__APP_DATA_PATH: dataDir, ...bad })
    const { code } = await within(hearth.exited, 20_000, "exit")
    const { stderr, stdout } = hearth.output()
    expect(code).toBe(1)
    expect(stderr).toContain(key)
    expect(stderr.trim().split("\n"), stderr).toHaveLength(1)
    expect(stderr).toMatch(/^hearth: /)
    noStackTrace(stderr + stdout)
    expect(existsSync(lockFile(dataDir))).toBe(false)
  })

  it("reports a bad value in the --config file the same way, and a missing file", async () => {
    const ini = join(dataDir, "app.ini")
    writeFileSync(ini, "; test\n[security]\nDISABLE_QUERY_AUTH_TOKEN = maybe\n")
    const bad = spawnHearth({ HEARTH__server__APP_DATA_PATH: dataDir }, ["--config", ini, "serve"])
    const missing = spawnHearth({ HEARTH__server__APP_DATA_PATH: dataDir }, [
      "--config",
      join(dataDir, "nope.ini"),
      "serve"
    ])
    expect((await within(bad.exited, 20_000, "exit")).code).toBe(1)
    expect(bad.output().stderr.trim()).toBe(
      `hearth: invalid setting [security] DISABLE_QUERY_AUTH_TOKEN = "maybe": expected true or false`
    )
    expect((await within(missing.exited, 20_000, "exit")).code).toBe(1)
    expect(missing.output().stderr.trim()).toBe(`hearth: config file not found: ${join(dataDir, "nope.ini")}`)
  })
})

describe.runIf(process.env.TEST_DATABASE_URL)("hearth serve on PostgreSQL", () => {
  const scope = Effect.runSync(Scope.make())
  afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

  it("starts, answers, takes no data-dir lock, and exits 0 on SIGTERM", async () => {
    const url = await Effect.runPromise(Scope.provide(freshPostgresDatabase(process.env.TEST_DATABASE_URL!), scope))
    const dataDir = mkdtempSync(join(tmpdir(), "hearth-lifecycle-pg-"))
    try {
      const started = Date.now()
      const hearth = spawnHearth(
        {
          HEARTH__server__APP_DATA_PATH: dataDir,
          HEARTH__database__DB_TYPE: "postgres",
          HEARTH__database__DATABASE_URL: url
        },
        ["serve"],
        await freePort()
      )
      const result = await hammer(hearth, started)
      console.log(`[lifecycle] PostgreSQL: first 200 after ${result.firstOk} ms, RSS ${rssMb(hearth.pid)} MB`)
      expectCleanStart(result, hearth)
      expect(existsSync(lockFile(dataDir))).toBe(false)
      hearth.child.kill("SIGTERM")
      expect(await within(hearth.exited, 15_000, "exit")).toEqual({ code: 0, signal: null })
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  })
})

// CPU per request of one server and its client in one process (`npx node infra/bench/request-cpu.ts
// <server>…`): a measure that the other core's load barely moves, for comparing checkouts on a busy
// machine, where `bench:floor`'s rates (two processes, one per core) swing with the neighbours.
// Each server runs in turn in a fresh process: the bare node:http ceiling (`ceiling`), Effect's
// HttpApi floor (`floor`, floor-server.ts), or Hearth from a checkout (`label=dir`, started as the
// tests start it: embedded database, the account `bench` and a `read:user` token). A minimal
// keep-alive client sends the token `GET /api/v1/users/bench` (or `GET /api/v1/version` with
// BENCH_CASE=version) over loopback; the process's CPU time (user + system, all threads: GC
// included) per request is server + client + the kernel's loopback, the same client for all.
// Settings: BENCH_REQUESTS (per run, 20,000), BENCH_ROUNDS (runs per server, 5, alternating the
// servers' order), BENCH_CONNECTIONS (4), BENCH_NODE_FLAGS (default Hearth's server flags).
// Run pinned (`taskset -c 1 npx node …`) so that the one process stays on one core.
import { execFile } from "node:child_process"
import { randomBytes } from "node:crypto"
import { createServer } from "node:http"
import { connect } from "node:net"
import { resolve } from "node:path"
import { promisify } from "node:util"

const requests = Number(process.env.BENCH_REQUESTS ?? 20_000)
const rounds = Number(process.env.BENCH_ROUNDS ?? 5)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 4)
const version = process.env.BENCH_CASE === "version"
const path = version ? "/api/v1/version" : "/api/v1/users/bench"
const nodeFlags = (
  process.env.BENCH_NODE_FLAGS ?? "--max-semi-space-size=8 --no-allocation-site-pretenuring --liftoff-only"
)
  .split(" ")
  .filter((f) => f !== "")

/** Starts the server named `which` in this process; its port and the token to send. */
const start = async (which: string): Promise<{ port: number; token: string }> => {
  if (which === "floor" || which === "ceiling") {
    const token = randomBytes(20).toString("hex")
    process.env.FLOOR_TOKEN = token
    // floor-server.ts says its port on stdout.
    const write = process.stdout.write.bind(process.stdout)
    const said = new Promise<number>((ok) => {
      ;(process.stdout as { write: unknown }).write = (chunk: unknown, ...rest: Array<never>) => {
        if (/^\d+\n$/.test(String(chunk))) {
          process.stdout.write = write
          ok(Number(chunk))
          return true
        }
        return write(chunk as string, ...rest)
      }
    })
    await import(new URL("./floor-server.ts", import.meta.url).href)
    const port = await said
    if (which === "floor") return { port, token }
    // The ceiling answers the floor's bytes with bare node:http.
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `token ${token}` } })
    const body = Buffer.from(await res.arrayBuffer())
    const headers: Record<string, string> = {}
    res.headers.forEach((value, name) => {
      if (!["date", "connection", "keep-alive", "content-length"].includes(name)) headers[name] = value
    })
    const bare = createServer((_request, response) => {
      response.writeHead(200, { ...headers, "content-length": body.length })
      response.end(body)
    })
    await new Promise<void>((ok) => bare.listen(0, "127.0.0.1", ok))
    return { port: (bare.address() as { port: number }).port, token }
  }
  const tree = resolve(which.slice(which.indexOf("=") + 1))
  const { startHearth } = await import(`${tree}/test/support/hearth.ts`)
  const hearth = await startHearth({ log: { LEVEL: "Warn" } })
  const { UsersService } = await import(`${tree}/src/users/Service.ts`)
  const { Effect } = await import("effect")
  await hearth.run(
    Effect.flatMap(UsersService, (users: any) =>
      users.create({ username: "bench", email: "bench@example.com", password: "bench-password-123" })
    )
  )
  const res = await fetch(`${hearth.base}/api/v1/users/bench/tokens`, {
    method: "POST",
    headers: {
      authorization: `Basic ${Buffer.from("bench:bench-password-123").toString("base64")}`,
      "content-type": "application/json"
    },
    body: JSON.stringify({ name: "bench", scopes: ["read:user"] })
  })
  if (res.status !== 201) throw new Error(`token creation failed: ${res.status} ${await res.text()}`)
  return { port: Number(new URL(hearth.base).port), token: ((await res.json()) as { sha1: string }).sha1 }
}

/** `count` requests over `connections` keep-alive connections, each waiting for its answer. */
const drive = (port: number, token: string, count: number) =>
  new Promise<void>((done, fail) => {
    const request = Buffer.from(
      `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n${version ? "" : `Authorization: token ${token}\r\n`}\r\n`
    )
    let left = count
    let open = connections
    for (let i = 0; i < connections; i++) {
      const socket = connect(port, "127.0.0.1")
      socket.setNoDelay(true)
      let pending: Buffer = Buffer.alloc(0)
      const next = () => {
        if (left-- > 0) socket.write(request)
        else {
          socket.end()
          if (--open === 0) done()
        }
      }
      socket.on("connect", next)
      socket.on("error", fail)
      socket.on("data", (chunk: Buffer) => {
        pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
        for (;;) {
          const end = pending.indexOf("\r\n\r\n")
          if (end < 0) return
          const head = pending.subarray(0, end).toString("latin1")
          if (!head.startsWith("HTTP/1.1 200")) return fail(new Error(`answered ${head.split("\r\n")[0]}`))
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0)
          if (pending.length < end + 4 + length) return
          pending = pending.subarray(end + 4 + length)
          next()
        }
      })
    }
  })

/** In a child process: one server, its runs; prints the µs of CPU per request of each run. */
const measure = async (which: string) => {
  const { port, token } = await start(which)
  // Warm-up: the first 10,000 requests or so still run partly unoptimised code.
  await drive(port, token, 2 * requests)
  const runs: Array<number> = []
  for (let r = 0; r < rounds; r++) {
    const before = process.cpuUsage()
    await drive(port, token, requests)
    const used = process.cpuUsage(before)
    runs.push((used.user + used.system) / requests)
  }
  process.stdout.write(`${JSON.stringify(runs)}\n`)
  process.exit(0)
}

const median = (values: ReadonlyArray<number>) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[sorted.length >> 1]!
}

if (process.env.BENCH_REQUEST_CPU_CHILD !== undefined) {
  await measure(process.env.BENCH_REQUEST_CPU_CHILD)
} else {
  const servers = process.argv.slice(2)
  if (servers.length === 0) servers.push("ceiling", "floor", "hearth=.")
  const results = new Map<string, Array<number>>(servers.map((s) => [s, []]))
  // Rounds of one run per server, in alternating order: each run a fresh process.
  const run = promisify(execFile)
  for (let round = 0; round < 3; round++) {
    for (const which of round % 2 === 0 ? servers : [...servers].reverse()) {
      const { stdout } = await run(process.execPath, [...nodeFlags, new URL(import.meta.url).pathname], {
        env: { ...process.env, BENCH_REQUEST_CPU_CHILD: which },
        maxBuffer: 1 << 24
      })
      const runs = JSON.parse(stdout.trim().split("\n").at(-1)!) as Array<number>
      results.get(which)!.push(...runs)
      process.stderr.write(`[bench] ${which}: ${runs.map((us) => us.toFixed(1)).join(", ")} µs\n`)
    }
  }
  process.stdout.write(
    `\n| server | CPU µs per ${version ? "GET /api/v1/version" : "token GET /api/v1/users/bench"} (median) | min – max |\n|---|---:|---:|\n`
  )
  for (const [which, runs] of results) {
    process.stdout.write(
      `| ${which} | ${median(runs).toFixed(1)} | ${Math.min(...runs).toFixed(1)} – ${Math.max(...runs).toFixed(1)} |\n`
    )
  }
}

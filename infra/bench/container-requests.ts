// The requests of a `skopeo copy` push, one by one (issue 21: the push's ratio to a disk copy is
// the dozen round trips more than the bytes). Debian's skopeo pushes an image (one layer of
// BENCH_CONTAINER_MIB, default 1 MiB, new each round) through a proxy in this process that
// forwards one request at a time and records, per request: its time through Hearth (from the
// proxy forwarding it to the answer's last byte), Hearth's CPU (all threads) meanwhile, and —
// with BENCH_PG_LOG, the log of the PostgreSQL server at BENCH_DATABASE_URL running with
// `log_statement = all` and `log_line_prefix = '%m [%p] %d '` — the statements and the commits
// (an explicit COMMIT, or a statement outside a transaction) Hearth's database saw for it. With
// the log the proxy holds each request until the previous one's statements have stopped (the
// log quiet for 150 ms), so that work after an answer counts for the request that caused it.
//
//   BENCH_DATABASE_URL=postgres://postgres@127.0.0.1:PORT/postgres BENCH_PG_LOG=…/server.log \
//   BENCH_BEFORE=../wt-before BENCH_ROUNDS=5 node infra/bench/container-requests.ts
//
// Servers as in packages/container.ts (BENCH_BEFORE: another checkout, measured in the same
// rounds, the order alternating). Medians over the rounds. BENCH_NODE_ARGS: Node flags for Hearth
// (`--cpu-prof --cpu-prof-dir=…`).
import { execFile } from "node:child_process"
import { readFileSync, statSync, writeFileSync } from "node:fs"
import http from "node:http"
import os from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { writeImage, writeLayout, writeRandomLayer } from "../../test/support/oci.ts"
import {
  type Backend,
  cpuSeconds,
  createAccount,
  createToken,
  fmt,
  log,
  machineLine,
  median,
  positive,
  preparePostgres,
  runMain,
  startHearth,
  tempDir
} from "./support.ts"

const run = promisify(execFile)
const config = {
  mib: positive("BENCH_CONTAINER_MIB", 1),
  rounds: Math.max(1, Math.round(positive("BENCH_ROUNDS", 5))),
  pgLog: process.env.BENCH_PG_LOG,
  output: process.env.BENCH_OUTPUT
}
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Statements and commits of one database in the log lines after `offset`. */
const readLog = (file: string, offset: number, database: string) => {
  const size = statSync(file).size
  const text = size > offset ? readFileSync(file).subarray(offset, size).toString("utf8") : ""
  let statements = 0
  let commits = 0
  const inTransaction = new Map<string, boolean>()
  const line = /^\S+ \S+ \S+ \[(\d+)\] (\S*) LOG: {2}(?:statement|execute [^:]*): (.*)$/
  for (const l of text.split("\n")) {
    const m = line.exec(l)
    if (m === null || m[2] !== database) continue
    const pid = m[1]!
    const sql = m[3]!.trim().toUpperCase()
    statements++
    if (sql.startsWith("BEGIN") || sql.startsWith("START TRANSACTION")) inTransaction.set(pid, true)
    else if (sql.startsWith("COMMIT")) {
      inTransaction.set(pid, false)
      commits++
    } else if (sql.startsWith("ROLLBACK") && !sql.startsWith("ROLLBACK TO")) inTransaction.set(pid, false)
    else if (inTransaction.get(pid) !== true) commits++
  }
  return { size, statements, commits }
}

/** Waits until the log has not grown for `quietMs`. */
const quiet = async (file: string, quietMs: number) => {
  let size = statSync(file).size
  let since = performance.now()
  while (performance.now() - since < quietMs) {
    await sleep(25)
    const now = statSync(file).size
    if (now !== size) {
      size = now
      since = performance.now()
    }
  }
}

interface Sample {
  readonly name: string
  readonly ms: number
  readonly cpu: number
  readonly statements: number
  readonly commits: number
}

/** A request's name without the image, the upload's id or the digest. */
const nameOf = (method: string, url: string, status: number) => {
  const path = url
    .replace(/\?.*$/, "")
    .replace(/^\/v2\/[^/]+\/[^/]+\//, "/v2/o/i/")
    .replace(/uploads\/[0-9a-f-]{36}/, "uploads/{uuid}")
    .replace(/sha256:[0-9a-f]{64}/, "{digest}")
  return `${method} ${path} → ${status}`
}

/** A proxy to `target` that forwards one request at a time and records each. */
const startProxy = (target: URL, pid: number, database: string | undefined) => {
  const samples: Array<Sample> = []
  let previous: Promise<void> = Promise.resolve()
  const server = http.createServer((req, res) => {
    const turn = previous.then(async () => {
      const logStart = config.pgLog === undefined ? 0 : statSync(config.pgLog).size
      const cpu0 = cpuSeconds(pid).self
      const started = performance.now()
      const status = await new Promise<number>((done, fail) => {
        const upstream = http.request(
          { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            // The token's realm through the proxy too (it names Hearth's own address).
            const challenge = answer.headers["www-authenticate"]
            if (challenge !== undefined)
              answer.headers["www-authenticate"] = challenge.replace(
                `//${target.host}/`,
                `//127.0.0.1:${(server.address() as { port: number }).port}/`
              )
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
            answer.on("end", () => done(answer.statusCode ?? 502))
            answer.on("error", fail)
          }
        )
        upstream.on("error", fail)
        req.pipe(upstream)
      })
      const ms = performance.now() - started
      let counts = { statements: 0, commits: 0 }
      if (config.pgLog !== undefined && database !== undefined) {
        await quiet(config.pgLog, 150)
        counts = readLog(config.pgLog, logStart, database)
      }
      samples.push({
        name: nameOf(req.method ?? "?", req.url ?? "", status),
        ms,
        cpu: cpuSeconds(pid).self - cpu0,
        ...counts
      })
    })
    previous = turn.catch((error) => {
      log(`proxy: ${String(error)}`)
      res.destroy()
    })
  })
  return new Promise<{ port: number; samples: Array<Sample>; close: () => void }>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address() as { port: number }
      resolve({ port: address.port, samples, close: () => server.close() })
    })
  )
}

const main = async () => {
  const load0 = os.loadavg()
  const trees: Array<{ label: string; tree?: string }> = [{ label: "this" }]
  if (process.env.BENCH_BEFORE !== undefined && process.env.BENCH_BEFORE !== "")
    trees.unshift({ label: "before", tree: process.env.BENCH_BEFORE })
  const account = { username: "bench", password: "bench-password-1" }
  const servers: Array<{ label: string; pid: number; base: URL; database: string; creds: string }> = []
  for (const { label, tree } of trees) {
    const pg = await preparePostgres()
    const backend: Backend = {
      name: "postgres",
      dataDir: tempDir(`hearth-bench-requests-${label}-`),
      logFile: join(tempDir("hearth-bench-requests-log-"), "hearth.log"),
      databaseUrl: pg.url,
      ...(process.env.BENCH_NODE_ARGS ? { nodeArgs: process.env.BENCH_NODE_ARGS.split(" ") } : {}),
      ...(tree === undefined ? {} : { tree })
    }
    await createAccount(backend, account)
    const hearth = await startHearth(backend)
    const token = await createToken(hearth.base, account, ["write:package"])
    servers.push({
      label,
      pid: hearth.child.pid!,
      base: new URL(hearth.base),
      database: new URL(pg.url).pathname.slice(1),
      creds: `${account.username}:${token}`
    })
  }
  const pushes: Record<string, Array<Array<Sample>>> = {}
  const loads: Array<number> = []
  for (let round = 0; round < config.rounds; round++) {
    const src = tempDir("hearth-bench-requests-src-")
    const layer = await writeRandomLayer(src, Math.round(config.mib * 1024 * 1024))
    writeLayout(src, { v1: writeImage(src, { arch: "amd64", layers: [layer] }) })
    loads.push(os.loadavg()[0]!)
    const order = round % 2 === 0 ? servers : [...servers].reverse()
    for (const server of order) {
      // Nothing from start-up or the previous push still running.
      if (config.pgLog !== undefined) await quiet(config.pgLog, 300)
      const proxy = await startProxy(server.base, server.pid, server.database)
      const home = tempDir("hearth-bench-skopeo-home-")
      const started = performance.now()
      await run(
        "skopeo",
        [
          "copy",
          "--quiet",
          "--dest-creds",
          server.creds,
          "--dest-tls-verify=false",
          `oci:${src}:v1`,
          `docker://127.0.0.1:${proxy.port}/bench/req${round}:v1`
        ],
        { env: { ...process.env, HOME: home, XDG_RUNTIME_DIR: home, REGISTRY_AUTH_FILE: join(home, "auth.json") } }
      )
      const total = performance.now() - started
      // The last request's statements are read once the log is quiet.
      while (proxy.samples.length === 0 || !proxy.samples.at(-1)!.name.startsWith("PUT /v2/o/i/manifests"))
        await sleep(25)
      proxy.close()
      ;(pushes[server.label] ??= []).push(proxy.samples)
      log(
        `round ${round + 1} ${server.label}: ${proxy.samples.length} requests, skopeo ${fmt(total, 0)} ms, ` +
          `through Hearth ${fmt(
            proxy.samples.reduce((s, x) => s + x.ms, 0),
            0
          )} ms (${proxy.samples.map((x) => fmt(x.ms, 0)).join(" ")}), ${proxy.samples.reduce((s, x) => s + x.statements, 0)} statements`
      )
    }
  }

  const lines = [
    `## skopeo push, request by request (${config.mib} MiB layer, ${config.rounds} rounds, PostgreSQL)`,
    "",
    "Per request: median time through Hearth (ms), Hearth's CPU (ms, median), statements and commits (median)" +
      (config.pgLog === undefined ? " (not counted: no BENCH_PG_LOG)" : ""),
    ""
  ]
  for (const { label } of servers) {
    const runs = pushes[label]!
    // Requests by position (every push makes the same sequence).
    const count = Math.min(...runs.map((r) => r.length))
    lines.push(
      `### ${label}`,
      "",
      "| # | request | ms | CPU ms | statements | commits |",
      "|---:|---|---:|---:|---:|---:|"
    )
    for (let i = 0; i < count; i++) {
      const at = runs.map((r) => r[i]!)
      lines.push(
        `| ${i + 1} | ${at[0]!.name} | ${fmt(median(at.map((s) => s.ms)), 1)} | ${fmt(median(at.map((s) => s.cpu * 1000)), 0)} | ${median(at.map((s) => s.statements))} | ${median(at.map((s) => s.commits))} |`
      )
    }
    const sum = (f: (s: Sample) => number) => median(runs.map((r) => r.reduce((t, s) => t + f(s), 0)))
    lines.push(
      `| | **all** (median of the sums) | ${fmt(
        sum((s) => s.ms),
        1
      )} | ${fmt(
        sum((s) => s.cpu * 1000),
        0
      )} | ${sum((s) => s.statements)} | ${sum((s) => s.commits)} |`,
      ""
    )
  }
  lines.push(
    `Load average (1 min) at each round's start: ${loads.map((l) => fmt(l, 2)).join(", ")}`,
    machineLine(load0)
  )
  const report = lines.join("\n")
  process.stdout.write(`${report}\n`)
  if (config.output !== undefined) writeFileSync(config.output, `${report}\n`)
  return 0
}

await runMain(main)
